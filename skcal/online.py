"""Online forecasting with low maximum swap regret, and its contextual use.

:class:`OnlineMSRForecaster` is Algorithm 1 of Hu and Wu, *Predict to
Minimize Swap Regret for All Payoff-Bounded Tasks* (Section 5): an online
binary forecaster whose forecasts keep the maximum swap regret (MSR) over all
payoff-bounded decision tasks at ``O(sqrt(T) log T)`` in expectation against
any adaptive adversary (their Theorem 5.1). Its expert oracle is the
multi-scale multiplicative weights with correction of Chen, Luo and Wei,
*Impossible Tuning Made Possible: A New Expert Algorithm and Its
Applications* (COLT 2021), see :class:`_ExpertOracle`.

:class:`OnlineRecalibratedClassifier` runs one such forecaster per bucket of
a deployed binary classifier's score, so that the classifier's probabilities
are corrected as outcomes arrive (``partial_fit`` / ``predict_proba``).
"""

import math
import numbers

import numpy as np
from scipy.special import logsumexp
from sklearn.base import BaseEstimator
from sklearn.frozen import FrozenEstimator
from sklearn.utils import check_random_state, column_or_1d
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, indexable

from ._compat import Interval, StrOptions, _fit_context
from ._meta import _HeldOutProbaMetaEstimator

__all__ = ["OnlineMSRForecaster", "OnlineRecalibratedClassifier"]


# --- the expert oracle ------------------------------------------------------------


class _ExpertOracle:
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
        """The distribution ``w_t`` over the experts for the coming round."""
        self._base = np.exp(self.log_base)
        self._master = np.exp(self.log_master)
        return self._master @ self._base

    def update(self, loss):
        """Take the round's losses (``-`` gains), each in ``[-1, 1]``."""
        if self._base is None:
            self.weights()
        eta = self.eta[:, None]
        x = self._base @ loss
        self.log_base -= eta * (loss + 32.0 * eta * loss * loss)
        self.log_base -= _logsumexp_rows(self.log_base)
        mu = self.mu
        a = self.log_master - mu * (x + 32.0 * mu * x * x)
        lam = _normaliser(a, mu)
        log_master = a - mu * lam
        self.log_master = log_master - _logsumexp_rows(log_master)
        self._base = None

    def regret_bound(self, sum_sq_loss):
        """The guaranteed regret against an expert with ``sum_t l_{t,i}^2``."""
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


def _logsumexp_rows(z):
    """``log(sum(exp(z)))`` along the last axis, kept as a column."""
    top = z.max(axis=-1, keepdims=True)
    return top + np.log(np.exp(z - top).sum(axis=-1, keepdims=True))


def _normaliser(a, mu):
    """``lam`` with ``sum_j exp(a_j - mu_j lam) = 1`` (the simplex's multiplier).

    ``f(lam) = logsumexp(a - mu lam)`` is convex and decreasing, so Newton's
    method converges monotonically after its first step.
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


def _tents(p_tilde, m):
    """The two grid points around ``p_tilde`` and their tent weights.

    ``tent_k(p) = max(0, 1 - |m p - k|)`` for ``k = 0..m`` (the triangular
    weights of the soft-binned calibration error): non-zero at ``k =
    floor(m p)`` and ``k + 1`` only, summing to 1, and ``sum_k tent_k(p) k/m
    = p``. Returns ``(k, 1 - frac), (k + 1, frac)`` with ``k <= m - 1``.
    """
    x = p_tilde * m
    k = min(int(math.floor(x)), m - 1)
    frac = x - k
    return k, frac


def _step3(v):
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


def _auto_buckets(horizon):
    """``m = round(sqrt(T) / ln T)``, at least 2 (Theorem 5.1 of Hu and Wu)."""
    return max(2, int(round(math.sqrt(horizon) / math.log(horizon))))


def _check_outcome(y, name="y"):
    """A binary outcome as 0 or 1, or a ValueError naming ``name``."""
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


class OnlineMSRForecaster(BaseEstimator):
    """Online binary forecasts with low maximum swap regret against any adversary.

    Algorithm 1 of Hu and Wu, *Predict to Minimize Swap Regret for All
    Payoff-Bounded Tasks* (Section 5), with soft buckets and unbiased
    rounding (below). In each round it forecasts the probability of outcome
    1 on the grid ``k/m``, ``k = 0..m``, then sees the outcome.

    **The guarantee and its assumption.** For any adversary that picks each
    outcome knowing the forecaster and the history *but not the round's
    random draw* (the outcome is chosen before, or independently of, the
    coin that rounds the forecast), the expected maximum swap regret of
    ``T`` forecasts, the worst total regret any decision maker with payoffs
    in ``[0, 1]`` suffers by best-responding to them
    (:func:`~skcal.maximum_swap_regret`), is ``O(sqrt(T) log T)`` (Theorem
    5.1 of Hu and Wu). Outcomes that react to the drawn forecast itself are
    not covered: no forecaster can be calibrated against them (answer 0 to a
    forecast above 1/2 and 1 otherwise). The mean of the draw,
    :meth:`predict_mean`, is a function of the past alone; it is covered
    whatever the outcomes do, in the weaker soft-binned sense below.

    Each round:

    1. an expert oracle (:class:`_ExpertOracle`, the algorithm of Chen, Luo
       and Wei, *Impossible Tuning Made Possible*) gives weights
       ``w_{t,k,sigma}`` to ``2(m + 1)`` experts ``(k, sigma)``, one per grid
       point and sign, and an auxiliary expert;
    2. step 3 is solved exactly: ``p~_t`` is the root of the interpolated
       weighted gain (see ``_step3``), a deterministic point;
    3. the forecast is ``p~_t`` rounded at random to one of its two
       neighbouring grid points, ``(k+1)/m`` with probability ``m p~_t - k``
       (``k = floor(m p~_t)``), so ``E[p_t] = p~_t``;
    4. the outcome ``theta_t`` gives expert ``(k, sigma)`` the gain
       ``sigma tent_k(p~_t) (p~_t - theta_t)``, with the triangular weights
       ``tent_k(p) = max(0, 1 - |m p - k|)``.

    **Why the theorem carries over (derived here; the paper's own rule
    differs).** The paper buckets ``p~_t`` into ``I_i = ((i-1)/m, i/m]``
    and serves the bucket's right end ``i/m``, an upward rounding of up to
    ``1/m`` in every round (after 1,000 rounds of a 2% event it served 0.25).
    Here the buckets are the tents. For grid point ``k``, with ``n_k`` rounds
    served there, its bias is ``G_k = |sum_t 1[p_t = k/m] (k/m - theta_t)| <=
    |sum_t tent_k(p~_t) (p~_t - theta_t)| + |M_k| + n'_k / m``, where the
    first term is expert ``(k, sigma)``'s gain (bounded by the oracle's
    regret, (27) with ``sum_t tent_k(p~_t)^2`` in place of ``n_i``, since
    step 3 makes the weighted gain ``<= 0`` every round), ``M_k = sum_t
    (1[p_t = k/m] - tent_k(p~_t)) (k/m - theta_t)`` is a martingale with
    increments in ``[-1, 1]`` (the coin is independent of ``theta_t``: the
    assumption above), hence ``O(sqrt(n_k log(mT)))`` for all ``k`` at once
    in expectation, and ``n'_k = sum_t tent_k(p~_t)`` (within ``|M|``-type
    fluctuations of ``n_k``) pays the ``beta n_i`` term of Lemma 5.2 with
    ``beta = 1/m``. Lemma 5.2 holds on the grid ``0, 1/m, ..., 1`` (its proof
    uses only the spacing), so ``E[MSR] = O(sqrt(T) log T)`` as in Theorem
    5.1, with other constants. The coins never enter the experts' gains, so
    the state is a function of the outcomes alone. Deterministically, for
    any outcomes, ``|sum_t tent_k(p~_t)(p~_t - theta_t)|`` is at most the
    oracle's regret bound for every ``k``: the means :meth:`predict_mean`
    have a small soft-binned bias (:func:`~skcal.soft_binned_cdl`'s
    weights) even against outcomes that see them.

    Parameters
    ----------
    horizon : int or None, default=None
        The number of rounds ``T`` the guarantee is tuned for; it sets
        ``m = round(sqrt(T) / ln T)`` (at least 2).
        Play continues past it in epochs of twice the previous length, each
        a fresh run of Algorithm 1 (the doubling trick). With ``None`` the
        epochs have lengths 2, 4, 8, ... from the start. Because the swap
        regret of a concatenated sequence is at most the sum of the epochs'
        swap regrets (one remapping for all epochs is a special case of one
        per epoch), the guarantee survives with a larger constant: the
        epochs up to ``T`` sum to ``O(sqrt(T) log T)``.
    n_buckets : int or "auto", default="auto"
        ``m``: the forecasts take the values ``0, 1/m, ..., 1``; "auto"
        chooses it from each epoch's length as above.
    random_state : int, RandomState instance or None, default=None
        Draws the rounding coins. A fixed seed reproduces a game bit for
        bit.

    Attributes
    ----------
    n_rounds_ : int
        Rounds completed (outcomes received).
    n_buckets_ : int
        ``m`` of the current epoch.
    epoch_ : int
        Index of the current epoch (0 for the first).
    forecasts_ : ndarray of shape (`n_rounds_`,)
        The forecasts ``p_t`` of the completed rounds.
    outcomes_ : ndarray of shape (`n_rounds_`,)
        The outcomes of the completed rounds.

    See Also
    --------
    maximum_swap_regret : the measure whose growth the forecaster controls.
    OnlineRecalibratedClassifier : one forecaster per bucket of a model's score.

    References
    ----------
    Lunjia Hu and Yifan Wu. *Predict to Minimize Swap Regret for All
    Payoff-Bounded Tasks*. FOCS 2024, pages 244-263. Section 5, Algorithm 1,
    Theorem 5.1, Lemmas 5.2-5.6.

    Liyu Chen, Haipeng Luo and Chen-Yu Wei. *Impossible Tuning Made
    Possible: A New Expert Algorithm and Its Applications*. COLT 2021, PMLR
    134:1216-1259 (arXiv:2102.01046).

    Examples
    --------
    An adaptive adversary: outcome 1 exactly when the previous forecast was
    below one half.

    >>> import math
    >>> from skcal import maximum_swap_regret
    >>> from skcal.online import OnlineMSRForecaster
    >>> def adversary(forecasts, outcomes):
    ...     return int(len(forecasts) == 0 or forecasts[-1] < 0.5)
    >>> forecaster = OnlineMSRForecaster(horizon=2000, random_state=0)
    >>> p, y = forecaster.run(adversary, n_rounds=2000)
    >>> forecaster.n_buckets_
    6
    >>> msr = maximum_swap_regret(y, p)
    >>> msr / (math.sqrt(2000) * math.log(2000)) < 1.0
    True

    Forecasting the last outcome against the same adversary has a ratio
    near 3, and its MSR grows linearly in ``T``:

    >>> f_last, y_last = [], []
    >>> for t in range(2000):
    ...     outcome = adversary(f_last, y_last)
    ...     f_last.append(float(y_last[-1]) if y_last else 0.5)
    ...     y_last.append(outcome)
    >>> msr_last = maximum_swap_regret(y_last, f_last)
    >>> round(msr_last / (math.sqrt(2000) * math.log(2000)), 2)
    2.94

    The round-by-round protocol:

    >>> forecaster = OnlineMSRForecaster(horizon=100, random_state=0)
    >>> p = forecaster.predict()
    >>> forecaster = forecaster.update(1)
    >>> forecaster.n_rounds_
    1
    """

    def __init__(
        self, horizon=None, *, n_buckets="auto", random_state=None
    ):
        self.horizon = horizon
        self.n_buckets = n_buckets
        self.random_state = random_state

    # -- set-up ---------------------------------------------------------------------

    def _validate_params(self):
        h = self.horizon
        if h is not None and (
            not isinstance(h, numbers.Integral) or isinstance(h, bool) or h < 2
        ):
            raise ValueError(f"horizon must be None or an integer >= 2, got {h!r}.")
        m = self.n_buckets
        if not (isinstance(m, str) and m == "auto") and (
            not isinstance(m, numbers.Integral) or isinstance(m, bool) or m < 2
        ):
            raise ValueError(f"n_buckets must be 'auto' or an integer >= 2, got {m!r}.")

    def _start(self):
        self._validate_params()
        self._rng = check_random_state(self.random_state)
        self.n_rounds_ = 0
        self.epoch_ = -1
        self._epoch_end = 0
        self._epoch_len = 0
        self._p = np.empty(64)
        self._y = np.empty(64, dtype=np.int8)
        self._pending = None

    def _new_epoch(self):
        if self.epoch_ < 0:
            length = 2 if self.horizon is None else int(self.horizon)
        else:
            length = 2 * self._epoch_len
        self.epoch_ += 1
        self._epoch_len = length
        self._epoch_end = self.n_rounds_ + length
        m = _auto_buckets(length) if self.n_buckets == "auto" else int(self.n_buckets)
        self.n_buckets_ = m
        self._oracle = _ExpertOracle(2 * m + 3, length)

    # -- the protocol ---------------------------------------------------------------

    def _prepare(self):
        if not hasattr(self, "_rng"):
            self._start()
        if self._pending is None:
            if self.n_rounds_ >= self._epoch_end:
                self._new_epoch()
            m = self.n_buckets_
            w = self._oracle.weights()
            p_tilde = _step3(w[: m + 1] - w[m + 1 : 2 * m + 2])
            k, frac = _tents(p_tilde, m)
            # one coin per round, drawn whatever p~ is, so seeds replay exactly
            up = self._rng.random_sample() < frac
            self._pending = (p_tilde, k + 1 if up else k)
        return self._pending

    def predict(self):
        """The forecast for the coming round (a probability of outcome 1).

        Rounds the round's ``p~_t`` at random to a neighbouring grid point on
        the first call after an update; calling again before :meth:`update`
        returns the same forecast. The guarantee needs the outcome to be
        chosen without seeing it (see the class docstring).

        Returns
        -------
        p : float
            One of ``0, 1/m, ..., 1``, with mean :meth:`predict_mean`.
        """
        return self._prepare()[1] / self.n_buckets_

    def predict_mean(self):
        """The mean ``p~_t`` of the coming round's forecast.

        A function of the history alone (no coin): showing it does not
        reveal the round's draw.

        Returns
        -------
        p_tilde : float
            In ``[0, 1]``.
        """
        return self._prepare()[0]

    def update(self, y):
        """Receive the outcome of the round just forecast.

        Parameters
        ----------
        y : {0, 1}
            The outcome (``True``/``False`` and ``0.0``/``1.0`` accepted).

        Returns
        -------
        self : OnlineMSRForecaster
        """
        y = _check_outcome(y)
        if getattr(self, "_pending", None) is None:
            raise RuntimeError(
                "update(y) called before predict(): ask for the round's "
                "forecast with predict() first, then report its outcome."
            )
        p_tilde, i = self._pending
        m = self.n_buckets_
        k, frac = _tents(p_tilde, m)
        gain = p_tilde - y
        loss = np.zeros(2 * m + 3)
        for point, tent in ((k, 1.0 - frac), (k + 1, frac)):
            loss[point] -= tent * gain
            loss[m + 1 + point] += tent * gain
        self._oracle.update(loss)
        t = self.n_rounds_
        if t == self._p.shape[0]:
            self._p = np.concatenate([self._p, np.empty(t)])
            self._y = np.concatenate([self._y, np.empty(t, dtype=np.int8)])
        self._p[t] = i / m
        self._y[t] = y
        self.n_rounds_ = t + 1
        self._pending = None
        return self

    def run(self, outcomes, n_rounds=None):
        """Play a whole game against a fixed sequence or an adaptive adversary.

        Parameters
        ----------
        outcomes : array-like of shape (n_rounds,) or callable
            The outcomes (0 or 1), or an adversary
            ``adversary(forecasts, outcomes) -> 0 or 1`` called at the start
            of each round with read-only arrays of this game's past forecasts
            and outcomes, before the round's random draw.
        n_rounds : int, default=None
            The number of rounds; required with an adversary, and at most
            ``len(outcomes)`` with a sequence (default: all of it).

        Returns
        -------
        forecasts : ndarray of shape (n_rounds,)
            The forecasts of this game's rounds.
        outcomes : ndarray of shape (n_rounds,)
            Their outcomes.
        """
        if callable(outcomes):
            if n_rounds is None:
                raise ValueError("n_rounds is required when outcomes is an adversary.")
            adversary, seq = outcomes, None
        else:
            seq = np.asarray(outcomes)
            if seq.ndim != 1:
                raise ValueError(
                    f"outcomes must be 1-d or a callable, got shape {seq.shape}."
                )
            if seq.dtype.kind not in "biuf" or not np.all((seq == 0) | (seq == 1)):
                bad = seq[:5]
                if seq.dtype.kind in "biuf":
                    bad = seq[~((seq == 0) | (seq == 1))][:5]
                raise ValueError(
                    f"outcomes must contain only 0 and 1, got {bad.tolist()}."
                )
            if n_rounds is None:
                n_rounds = seq.shape[0]
            adversary = None
        if (
            not isinstance(n_rounds, numbers.Integral)
            or isinstance(n_rounds, bool)
            or n_rounds < 0
        ):
            raise ValueError(f"n_rounds must be a non-negative integer, got {n_rounds!r}.")
        if seq is not None and n_rounds > seq.shape[0]:
            raise ValueError(
                f"n_rounds={n_rounds} exceeds the {seq.shape[0]} outcomes given."
            )
        if not hasattr(self, "_rng"):
            self._start()
        start = self.n_rounds_
        for t in range(n_rounds):
            if adversary is not None:
                past_p = self._p[start : start + t]
                past_y = self._y[start : start + t]
                past_p.flags.writeable = False
                past_y.flags.writeable = False
                y = _check_outcome(adversary(past_p, past_y), "the adversary's outcome")
            else:
                y = int(seq[t])
            self.predict()
            self.update(y)
        end = self.n_rounds_
        return self._p[start:end].copy(), self._y[start:end].astype(np.intp)

    @property
    def forecasts_(self):
        return self._p[: self.n_rounds_].copy()

    @property
    def outcomes_(self):
        return self._y[: self.n_rounds_].astype(np.intp)


# --- the contextual use: an online recalibrator ---------------------------------------


class OnlineRecalibratedClassifier(_HeldOutProbaMetaEstimator):
    """A binary classifier whose probabilities are corrected online, bucket by bucket.

    The contextual use of the forecaster of Hu and Wu (Algorithm 1): the
    base classifier's probability of the positive class, ``s(x)``, picks one
    of ``n_bins`` equal-width buckets of ``[0, 1]``, and each bucket runs its
    own :class:`OnlineMSRForecaster`. In bucket ``k`` the forecasts issued
    for the samples whose score falls there, in the order the outcomes
    arrive, keep the maximum swap regret of Theorem 5.1 (``O(sqrt(n_k)
    log n_k)`` in expectation, for the ``n_k`` samples of that bucket)
    even if the data drift or an adversary picks the outcomes, provided no
    outcome depends on the random draw of its own forecast (the assumption
    of Theorem 5.1; no distributional assumption on the data).

    The protocol, for a stream: :meth:`predict_proba` serves forecasts;
    :meth:`partial_fit` then reports outcomes, which are played in order,
    one round each of the sample's bucket.

    **What is guaranteed as served.** Each bucket's state is a function of
    its past outcomes only. :meth:`predict_proba` serves, for every row, a
    fresh random rounding (to the grid ``0, 1/m, ..., 1``) of the row's
    bucket's current mean :meth:`predict_mean`, with its own coins: the
    forecasters' internal draws are never shown. Served one row at a time
    (``predict_proba`` for a row, then its outcome with ``partial_fit``),
    the served forecasts have the same law as the forecasters' own and
    Theorem 5.1 holds for them, under its assumption: *the outcome does not
    depend on the served draw* (it may depend on the features, the history
    and the mean). An outcome that reacts to the draw itself is not covered
    (it can drive the calibration decision loss of what was served towards
    1). Served in batches (``predict_proba`` on many rows, then their
    outcomes), all the rows of a bucket get draws of the same mean, while
    ``partial_fit`` plays them one at a time with a mean that moves after
    each: the theorem then covers the forecasters' own sequence
    (``forecasters_[k].forecasts_``), not what was served, which is measured
    in the user guide (``doc/online.md``). :meth:`predict_mean` serves the
    means themselves: deterministic, visible to anyone, with the
    soft-binned guarantee of :class:`OnlineMSRForecaster` instead.

    Parameters
    ----------
    estimator : classifier, default=None
        A binary classifier with ``predict_proba``;
        :class:`~sklearn.linear_model.LogisticRegression` when None. Wrap a
        deployed, fitted model in :class:`~sklearn.frozen.FrozenEstimator`:
        it is used as is. An unfrozen estimator is fitted by :meth:`fit` (or
        by the first :meth:`partial_fit`) on that data, and the forecasters
        start from its cross-validated probabilities on the same data;
        later batches only update the forecasters, never the estimator.
    n_bins : int, default=10
        The number of equal-width buckets of the base score.
    horizon : int or None, default=None
        ``horizon`` of each bucket's :class:`OnlineMSRForecaster` (None: the
        doubling schedule, for a stream of unknown length).
    n_buckets : int or "auto", default="auto"
        ``n_buckets`` of each forecaster: the number of forecast values
        ``1/m, ..., 1``.
    cv : int, cross-validation generator or iterable, default=5
        Folds for the held-out probabilities of an unfrozen estimator, as in
        :func:`sklearn.model_selection.cross_val_predict`.
    n_jobs : int, default=None
        Parallel jobs for that cross-validation.
    random_state : int, RandomState instance or None, default=None
        Seeds the forecasters' draws.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    estimator_ : classifier
        The base classifier (fitted, or the frozen one).
    forecasters_ : list of OnlineMSRForecaster
        One per bucket of the score.
    n_samples_seen_ : int
        Outcomes received so far.
    n_features_in_ : int
        Forwarded from ``estimator_`` when it has it.

    See Also
    --------
    OnlineMSRForecaster : the forecaster each bucket runs.
    RecalibratedClassifier : batch recalibration on held-out probabilities.

    References
    ----------
    Lunjia Hu and Yifan Wu. *Predict to Minimize Swap Regret for All
    Payoff-Bounded Tasks*. FOCS 2024, pages 244-263. Section 5, Algorithm 1,
    Theorem 5.1.

    Examples
    --------
    A deployed model whose scores are too high, corrected as outcomes arrive:

    >>> import numpy as np
    >>> from sklearn.frozen import FrozenEstimator
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skcal.online import OnlineRecalibratedClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(6000, 2))
    >>> y = (rng.uniform(size=6000) < 1 / (1 + np.exp(-X[:, 0]))).astype(int)
    >>> model = LogisticRegression().fit(X[:1000], y[:1000])
    >>> model.intercept_ += 1.5  # drift: every score is now too high
    >>> online = OnlineRecalibratedClassifier(FrozenEstimator(model), random_state=0)
    >>> for start in range(1000, 6000, 500):
    ...     online = online.partial_fit(X[start:start + 500], y[start:start + 500])
    >>> online.n_samples_seen_
    5000
    >>> online.predict_proba(X[:2]).shape
    (2, 2)
    """

    def __init__(
        self,
        estimator=None,
        *,
        n_bins=10,
        horizon=None,
        n_buckets="auto",
        cv=5,
        n_jobs=None,
        random_state=None,
    ):
        self.estimator = estimator
        self.n_bins = n_bins
        self.horizon = horizon
        self.n_buckets = n_buckets
        self.cv = cv
        self.n_jobs = n_jobs
        self.random_state = random_state

    # scikit-learn's declarative parameter validation, checked by _fit_context at
    # the start of fit and of the first partial_fit; the estimator is checked
    # with a message of its own (the missing predict_proba named), cv by the
    # cross-validation, and booleans, which the integer intervals would take,
    # by _check_params
    _parameter_constraints = {
        "estimator": "no_validation",
        "n_bins": [Interval(numbers.Integral, 1, None, closed="left")],
        "horizon": [Interval(numbers.Integral, 2, None, closed="left"), None],
        "n_buckets": [
            StrOptions({"auto"}),
            Interval(numbers.Integral, 2, None, closed="left"),
        ],
        "cv": "no_validation",
        "n_jobs": [numbers.Integral, None],
        "random_state": ["random_state"],
    }

    def _base(self):
        if self.estimator is None:
            from sklearn.linear_model import LogisticRegression

            return LogisticRegression()
        return self.estimator

    def _check_params(self):
        n = self.n_bins
        if not isinstance(n, numbers.Integral) or isinstance(n, bool) or n < 1:
            raise ValueError(f"n_bins must be a positive integer, got {n!r}.")
        # the forecasters' own parameters, checked once here
        OnlineMSRForecaster(self.horizon, n_buckets=self.n_buckets)._validate_params()

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Start over: fit (or take) the base classifier, then play ``(X, y)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Binary labels, played in this order.

        Returns
        -------
        self : OnlineRecalibratedClassifier
        """
        for name in ("estimator_", "classes_", "forecasters_", "n_samples_seen_"):
            self.__dict__.pop(name, None)
        return self.partial_fit(X, y)

    @_fit_context(prefer_skip_nested_validation=False)
    def partial_fit(self, X, y, classes=None):
        """Report the outcomes ``y`` of the samples ``X``, in order.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Binary labels.
        classes : array-like of shape (2,), default=None
            The two classes; taken from a frozen estimator, else from ``y``
            on the first call. Later calls must keep to them.

        Returns
        -------
        self : OnlineRecalibratedClassifier
        """
        first = not hasattr(self, "forecasters_")
        y = column_or_1d(y, warn=True)
        check_classification_targets(y)
        X, y = indexable(X, y)
        if first:
            scores = self._start(X, y, classes)
        else:
            scores = self.estimator_.predict_proba(X)[:, 1]
        index = self._encode(y)
        bins = self._bins(scores)
        for k, outcome in zip(bins.tolist(), index.tolist()):
            forecaster = self.forecasters_[k]
            forecaster.predict()
            forecaster.update(outcome)
        self.n_samples_seen_ += index.shape[0]
        return self

    def _start(self, X, y, classes):
        self._check_params()
        base = self._base()
        self._check_predict_proba(base)
        self._frozen = isinstance(base, FrozenEstimator)
        if self._frozen:
            self.estimator_ = base
            self.classes_ = np.asarray(base.classes_)
            scores = None
        else:
            labels = np.unique(y) if classes is None else np.unique(classes)
            if classes is not None and not np.all(np.isin(y, labels)):
                raise ValueError(
                    f"y has labels {np.setdiff1d(y, labels).tolist()} not in "
                    f"classes {labels.tolist()}."
                )
            y_type = type_of_target(y, input_name="y", raise_unknown=True)
            if y_type not in ("binary", "unknown") or labels.shape[0] > 2:
                raise ValueError(
                    "Only binary classification is supported. The type of the "
                    f"target is {y_type}."
                )
            if labels.shape[0] < 2:
                raise ValueError(
                    "OnlineRecalibratedClassifier needs the two classes: pass "
                    f"classes=, or a y with both (got one class, {labels.tolist()})."
                )
            self.estimator_, held_out = self._held_out_proba(
                base, X, y, {}, False, self.cv
            )
            scores = held_out[:, 1]
            self.classes_ = np.asarray(self.estimator_.classes_)
        if self.classes_.shape[0] != 2:
            raise ValueError(
                "Only binary classification is supported. The estimator has "
                f"{self.classes_.shape[0]} classes."
            )
        self._forward_attributes()
        rng = check_random_state(self.random_state)
        seeds = rng.randint(np.iinfo(np.int32).max, size=self.n_bins)
        self._serve_rng = np.random.RandomState(
            rng.randint(np.iinfo(np.int32).max)
        )
        self.forecasters_ = []
        for seed in seeds:
            f = OnlineMSRForecaster(
                self.horizon, n_buckets=self.n_buckets, random_state=int(seed)
            )
            f.predict_mean()  # start it: its epoch and grid exist from the outset
            self.forecasters_.append(f)
        self.n_samples_seen_ = 0
        if scores is None:
            scores = self.estimator_.predict_proba(X)[:, 1]
        return scores

    def _encode(self, y):
        classes = self.classes_
        index = np.searchsorted(classes, y)
        index = np.minimum(index, classes.shape[0] - 1)
        if not np.all(classes[index] == y):
            raise ValueError(
                f"y has labels {np.setdiff1d(y, classes).tolist()} that are not "
                f"in classes_ {classes.tolist()}."
            )
        return index

    def _bins(self, scores):
        return np.minimum((scores * self.n_bins).astype(np.intp), self.n_bins - 1)

    def predict_mean(self, X):
        """The mean forecast of each sample's bucket (no random draw).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, 2)
            Column 1 is the bucket's mean forecast ``p~`` of ``classes_[1]``.
        """
        check_is_fitted(self)
        scores = self.estimator_.predict_proba(X)[:, 1]
        current = np.array([f.predict_mean() for f in self.forecasters_])
        p = current[self._bins(scores)]
        return np.column_stack([1.0 - p, p])

    def predict_proba(self, X):
        """Forecasts for the samples ``X``: a fresh random rounding per row.

        Row ``i`` gets its bucket's mean :meth:`predict_mean` rounded at
        random to a neighbouring grid point ``k/m`` (mean preserved), with
        coins of its own (seeded by ``random_state``), never the
        forecasters' internal draws. See the class docstring for what this
        guarantees.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, 2)
            Column 1 is the forecast probability of ``classes_[1]``.
        """
        mean = self.predict_mean(X)[:, 1]
        scores_bins = self._bins(self.estimator_.predict_proba(X)[:, 1])
        m = np.array([f.n_buckets_ for f in self.forecasters_])[scores_bins]
        x = mean * m
        k = np.minimum(np.floor(x), m - 1)
        up = self._serve_rng.random_sample(mean.shape[0]) < x - k
        p = (k + up) / m
        return np.column_stack([1.0 - p, p])

    def predict(self, X):
        """The class with the larger forecast probability (ties: ``classes_[0]``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        proba = self.predict_proba(X)
        return self.classes_[(proba[:, 1] > proba[:, 0]).astype(np.intp)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags
