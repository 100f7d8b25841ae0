"""The expert oracle of the online forecaster and the steps of its rounds.

The multi-scale multiplicative weights with correction of Chen, Luo and Wei,
*Impossible Tuning Made Possible* (COLT 2021), and the exact step 3 and tent
rounding of Algorithm 1 of Hu and Wu (Section 5).
"""

import math
import numbers

import numpy as np
from scipy.special import logsumexp

__all__ = [
    "ExpertOracle",
    "auto_buckets",
    "check_outcome",
    "logsumexp_rows",
    "normaliser",
    "step3",
    "tents",
]


# --- the expert oracle ------------------------------------------------------------


class ExpertOracle:
    """Experts with a ``sqrt(sum of squared losses)`` regret for every expert.

    The two-layer construction of Chen, Luo and Wei, *Impossible Tuning Made
    Possible* (2021): mirror descent on the simplex with the weighted entropy
    regularizer ``psi(w) = sum_i w_i ln(w_i) / eta_i`` and the correction
    term ``a_{t,i} = 32 eta_i l_{t,i}^2`` added to the loss (their MsMwC,
    "multi-scale multiplicative weights with correction", here with no
    optimistic hint, ``m_t = 0``), used twice:

    * ``K`` *bases*, base ``j`` over the ``d`` experts with one learning rate
      ``eta_j = 2^-j / 32`` (``j = 1..K``), uniform prior;
    * a *master* over the ``K`` bases, with per-base learning rate
      ``mu_j = eta_j / 2`` and prior ``pi_j`` proportional to ``mu_j^2``,
      whose loss for base ``j`` is that base's expected loss
      ``x_{t,j} = <p_t^j, l_t>``.

    The oracle plays ``w_t = sum_j q_{t,j} p_t^j``. ``K = ceil(log2(T) / 2)``
    for a horizon ``T``, so that ``eta_K <= 1 / (32 sqrt(T))``.

    Provenance: only the paper's abstract and bibliographic record were
    available when this was written (mirror descent with a correction term
    and a weighted entropy regularizer, and a master algorithm combining
    base algorithms with little overhead). The construction follows that
    description; the constants above (the factor 32, the grid ``2^-j / 32``,
    ``mu_j = eta_j / 2``, the prior ``pi_j ~ mu_j^2``) are chosen and the
    bound below is proven here, and they may differ from the paper's own.
    The tests check the bound against a replay on small games.

    **Guarantee (derived here; it is what Lemma 5.4 of Hu and Wu needs).**
    For losses in ``[-1, 1]``, one step of this mirror descent satisfies,
    for every ``u`` in the simplex (using ``e^-y <= 1 - y + y^2`` for
    ``y >= -1``, and ``|l + a| <= 2|l|`` since ``32 eta |l| <= 1``),
    ``<w_t - u, l_t> <= D(u, w_t) - D(u, w_{t+1}) + 32 sum_i eta_i u_i
    l_{t,i}^2 - 28 sum_i eta_i w_{t,i} l_{t,i}^2``. Summed over the rounds,
    for base ``j`` against expert ``i`` this is ``ln(d)/eta_j + 32 eta_j L_i
    - 28 eta_j sum_t <p_t^j, l_t^2>`` with ``L_i = sum_t l_{t,i}^2``; for
    the master against base ``j`` it is ``D(e_j, pi) + 32 mu_j sum_t
    x_{t,j}^2``, and ``32 mu_j x_{t,j}^2 <= 16 eta_j <p_t^j, l_t^2>`` by
    Jensen's inequality, so the master's variance term is paid by the base's
    negative term. Hence for every expert ``i`` and every scale ``j``::

        R_T(i) <= ln(d) / eta_j + 32 eta_j L_i
                  + (ln(1 / pi_j) - 1) / mu_j + sum_k pi_k / mu_k.

    With ``eta_j`` within a factor 2 of ``sqrt(ln(dT) / L_i)`` (or ``j = 1``
    when ``L_i <= ln(dT)``) the right side is
    ``O(ln(dT) + sqrt(L_i ln(dT)))``; in Algorithm 1 the gains of expert
    ``(i, sigma)`` are non-zero only in the ``n_i`` rounds that fall in
    bucket ``i``, so ``L_i <= n_i``: that is (27), and (26) is the case of the
    auxiliary expert, whose loss is always 0. :meth:`regret_bound` evaluates
    the minimum over ``j`` of the bound above.

    Parameters
    ----------
    n_experts : int
        ``d``; in Algorithm 1 ``d = 2m + 1``.
    horizon : int
        ``T``, which fixes the number of scales ``K``.
    """

    def __init__(self, n_experts, horizon):
        self.n_experts = int(n_experts)
        self.n_scales = max(1, math.ceil(math.log2(max(horizon, 2)) / 2))
        j = np.arange(1, self.n_scales + 1, dtype=np.float64)
        self.eta = 1.0 / (32.0 * 2.0**j)
        self.mu = self.eta / 2.0
        log_prior = 2.0 * np.log(self.mu)
        self.log_prior = log_prior - logsumexp(log_prior)
        self.log_master = self.log_prior.copy()
        self.log_base = np.full(
            (self.n_scales, self.n_experts), -math.log(self.n_experts)
        )
        self._base = None

    def weights(self):
        """The distribution ``w_t`` over the experts for the coming round.

        Returns
        -------
        weights : ndarray of shape (n_experts,)
            Non-negative, summing to 1.
        """
        self._base = np.exp(self.log_base)
        self._master = np.exp(self.log_master)
        return self._master @ self._base

    def update(self, loss):
        """Take the round's losses (``-`` gains), each in ``[-1, 1]``.

        Parameters
        ----------
        loss : ndarray of shape (n_experts,)
            The loss of each expert in this round.
        """
        if self._base is None:
            self.weights()
        eta = self.eta[:, None]
        x = self._base @ loss
        self.log_base -= eta * (loss + 32.0 * eta * loss * loss)
        self.log_base -= logsumexp_rows(self.log_base)
        mu = self.mu
        a = self.log_master - mu * (x + 32.0 * mu * x * x)
        lam = normaliser(a, mu)
        log_master = a - mu * lam
        self.log_master = log_master - logsumexp_rows(log_master)
        self._base = None

    def regret_bound(self, sum_sq_loss):
        """The guaranteed regret against an expert with ``sum_t l_{t,i}^2``.

        Parameters
        ----------
        sum_sq_loss : float or array-like
            ``sum_t l_{t,i}^2`` of the expert compared with.

        Returns
        -------
        bound : float or ndarray
            The regret bound, of the shape of ``sum_sq_loss``.
        """
        L = np.asarray(sum_sq_loss, dtype=np.float64)[..., None]
        eta, mu, log_pi = self.eta, self.mu, self.log_prior
        const = np.sum(np.exp(log_pi) / mu)
        bound = (
            math.log(self.n_experts) / eta
            + 32.0 * eta * L
            + (-log_pi - 1.0) / mu
            + const
        )
        return bound.min(axis=-1)


def logsumexp_rows(z):
    """``log(sum(exp(z)))`` along the last axis, kept as a column.

    Parameters
    ----------
    z : ndarray
        Finite values.

    Returns
    -------
    lse : ndarray
        Of the shape of ``z`` with a last axis of length 1.
    """
    top = z.max(axis=-1, keepdims=True)
    return top + np.log(np.exp(z - top).sum(axis=-1, keepdims=True))


def normaliser(a, mu):
    """``lam`` with ``sum_j exp(a_j - mu_j lam) = 1`` (the simplex's multiplier).

    ``f(lam) = logsumexp(a - mu lam)`` is convex and decreasing, so Newton's
    method converges monotonically after its first step.

    Parameters
    ----------
    a : ndarray of shape (n,)
        The unnormalised log weights.
    mu : ndarray of shape (n,)
        Positive learning rates.

    Returns
    -------
    lam : float
        The multiplier.
    """
    lam = 0.0
    for _ in range(60):
        z = a - mu * lam
        top = z.max()
        e = np.exp(z - top)
        s = e.sum()
        f = top + math.log(s)
        if abs(f) <= 1e-14:
            break
        lam += f * s / np.dot(e, mu)
    return lam


# --- step 3 of Algorithm 1, with soft buckets ----------------------------------------


def tents(p_tilde, m):
    """The two grid points around ``p_tilde`` and their tent weights.

    ``tent_k(p) = max(0, 1 - |m p - k|)`` for ``k = 0..m`` (the triangular
    weights of the soft-binned calibration error): non-zero at ``k =
    floor(m p)`` and ``k + 1`` only, summing to 1, and ``sum_k tent_k(p) k/m
    = p``.

    Parameters
    ----------
    p_tilde : float
        A prediction in ``[0, 1]``.
    m : int
        The grid size.

    Returns
    -------
    k : int
        The lower grid point, ``k <= m - 1``: ``tent_k = 1 - frac``.
    frac : float
        The weight ``tent_{k+1}`` of the upper grid point ``k + 1``.
    """
    x = p_tilde * m
    k = min(int(math.floor(x)), m - 1)
    frac = x - k
    return k, frac


def step3(v):
    """A point ``p~`` in ``[0, 1]`` with ``h_t(p~) <= 0`` for the soft buckets.

    ``v[k] = w_{t,k,+1} - w_{t,k,-1}`` for the grid points ``k/m``, ``k =
    0..m``; the weighted gain (28) at a prediction ``p`` and state ``theta``
    is ``g(p) (p - theta)`` with ``g(p) = sum_k v_k tent_k(p)``, the
    piecewise-linear interpolation of ``v`` on the grid. So
    ``h_t(p) = max(g(p) p, g(p) (p - 1))``:

    * if ``v_0 >= 0``, ``p~ = 0``: ``h = max(0, -v_0) = 0``;
    * else if ``v_m <= 0``, ``p~ = 1``: ``h = max(v_m, 0) = 0``;
    * else ``g`` changes sign on the grid: with ``j`` the first index with
      ``v_j >= 0`` (``v_{j-1} < 0``), ``p~`` is the root of ``g`` on
      ``[(j-1)/m, j/m]``, where ``g(p~) = 0`` and ``h = 0``.

    So step 3 is solved exactly by one deterministic point (``epsilon = 0``
    in Lemma 5.6 of Hu and Wu, up to floating-point rounding), in ``O(m)``.

    Parameters
    ----------
    v : ndarray of shape (m + 1,)
        The weight differences at the grid points.

    Returns
    -------
    p_tilde : float
        The point, in ``[0, 1]``.
    """
    m = v.shape[0] - 1
    if v[0] >= 0:
        return 0.0
    if v[m] <= 0:
        return 1.0
    j = int(np.flatnonzero(v >= 0)[0])
    a, c = float(v[j - 1]), float(v[j])
    r = -a / (c - a)  # in (0, 1]
    return min(1.0, ((j - 1) + r) / m)


# --- the forecaster ----------------------------------------------------------------


def auto_buckets(horizon):
    """``m = round(sqrt(T) / ln T)``, at least 2 (Theorem 5.1 of Hu and Wu).

    Parameters
    ----------
    horizon : int
        The number of rounds ``T``, at least 2.

    Returns
    -------
    m : int
        The number of buckets.
    """
    return max(2, int(round(math.sqrt(horizon) / math.log(horizon))))


def check_outcome(y, name="y"):
    """A binary outcome as 0 or 1, or a ValueError naming ``name``.

    Parameters
    ----------
    y : bool, int or float
        The outcome.
    name : str, default="y"
        What ``y`` is, for the messages.

    Returns
    -------
    y : int
        0 or 1.
    """
    if isinstance(y, (bool, np.bool_)):
        return int(y)
    if isinstance(y, numbers.Real) and not isinstance(y, numbers.Integral):
        if y == 0 or y == 1:
            return int(y)
        raise ValueError(f"{name} must be 0 or 1, got {y!r}.")
    if isinstance(y, numbers.Integral):
        if y in (0, 1):
            return int(y)
        raise ValueError(f"{name} must be 0 or 1, got {y!r}.")
    raise TypeError(
        f"{name} must be a single outcome, 0 or 1, got {type(y).__name__} {y!r}."
    )
