"""Scaling recalibrators: parametric maps fitted by penalised log-loss.

This module holds sigmoid (Platt), beta and temperature scaling and the
pieces every scaling fit shares (the floored logarithms, the softmax and
binary log-losses with their gradients, the L-BFGS-B driver); the affine maps
of the log-probabilities (vector, matrix and Dirichlet calibration) are in
``_affine.py`` and use the same pieces.

Every class here subclasses :class:`BaseRecalibrator` and works on the
canonical form it hands over: ``P`` of shape ``(n, C)``, rows summing to 1,
``y`` column indices, ``w`` non-negative weights. The maps act on logarithms
of probabilities; a probability below ``2.2e-16`` (``np.finfo(float).eps``,
exact zeros included) enters a logarithm as ``2.2e-16``. That floor lives only
inside the logarithms: the caller's data are neither clipped nor changed, and a
row ``P`` with no entry below the floor is mapped exactly to itself by the
identity parameters (``W = I``, ``b = 0``, ``T = 1``, ``a = 1``, ...), which is
where every fit starts, so that a weak signal leaves the map near the identity.

Outputs are computed in log space (``logsumexp``, ``log(sigmoid)`` as
``-logaddexp(0, -s)``) and exponentiated once, so they never contain NaN. An
output is never exactly 0: one that underflows (a map so steep that
``exp`` of its log-probability is below ``2.2e-308``, e.g. Dirichlet
calibration on inputs with exact zeros) is returned as the smallest positive
normal double ``2.2e-308``, so that its log-loss stays finite; the other
entries of its row may then round to exactly 1.0, as ``1 - 2.2e-308`` does.

Each fit minimises a weighted log-loss (a sum over rows of ``w_i`` times the
row's loss, divided by the total weight) plus a penalty with L-BFGS-B on the
analytic gradient; one loss-and-gradient evaluation is one pass of matrix
products over ``P``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import minimize
from scipy.special import expit, logsumexp
from threadpoolctl import ThreadpoolController

from ._base import BaseRecalibrator

__all__ = [
    "BetaCalibration",
    "SigmoidCalibration",
    "TemperatureScaling",
]

# The floor inside every logarithm of an input probability (see the module
# docstring): log(2.2e-16) = -36.04.
_FLOOR = np.finfo(np.float64).eps
# The smallest positive normal double: what an output probability that
# underflows becomes (see ``_normalise_log``).
_TINY = np.finfo(np.float64).tiny


def _log_floor(P):
    return np.log(np.maximum(P, _FLOOR))


def _log_rest(P):
    """``log(1 - P[:, k])`` for every ``k``, as the log of the other columns' sum.

    Summing the other columns (prefix plus suffix sums) avoids the
    cancellation of ``1 - p`` when ``p`` is close to 1.
    """
    n, C = P.shape
    prefix = np.zeros((n, C))
    np.cumsum(P[:, :-1], axis=1, out=prefix[:, 1:])
    suffix = np.zeros((n, C))
    suffix[:, :-1] = np.cumsum(P[:, :0:-1], axis=1)[:, ::-1]
    return np.log(np.maximum(prefix + suffix, _FLOOR))


_BLAS = []  # the process's ThreadpoolController, made on first use


def _one_blas_thread():
    """A context running BLAS on one thread.

    ``threadpool_limits`` scans the loaded libraries on every call (about
    3 ms: more than a whole L-BFGS fit of a small fold, and AutoRecalibrator
    makes hundreds of such fits); the scan is done once per process here
    and each call only sets and restores the thread counts (about 15 us).
    A BLAS library loaded after the first call is not limited.
    """
    if not _BLAS:
        _BLAS.append(ThreadpoolController())
    return _BLAS[0].limit(limits=1, user_api="blas")


def _lbfgs(fun, x0, bounds=None, max_iter=1000):
    """Minimise ``fun`` (returning value and gradient) from ``x0`` with L-BFGS-B.

    Matrix products here are thin (``n x C`` by ``C x C``): one BLAS thread
    is fastest, and several threads on a busy machine are many times slower.
    """
    with _one_blas_thread():
        result = minimize(
            fun,
            x0,
            jac=True,
            method="L-BFGS-B",
            bounds=bounds,
            options={"maxiter": max_iter, "gtol": 1e-7, "ftol": 1e-10},
        )
    return result.x


def _observed_flat(y, n):
    """Flat positions ``y_i * n + i`` of the observed classes in a ``(C, n)`` array."""
    return np.asarray(y, dtype=np.intp) * n + np.arange(n)


def _softmax_loss(ST, y, w, flat=None, overwrite=False):
    """Weighted sum of ``-log softmax(S)[i, y_i]`` and its gradient in ``S``.

    Works on the transpose ``ST`` of shape ``(C, n)``, C-contiguous (and
    returns the gradient transposed): reductions over the classes are then
    reductions over a few long contiguous rows, several times faster than
    over short rows. ``flat`` (``_observed_flat(y, n)``, optional) is
    computed once by the callers that evaluate the loss many times: a
    gather by flat position is several times faster than ``ST[y, rows]``
    and reads the same entries. ``overwrite``: ``ST`` is a temporary of the
    caller, reused for the gradient (one ``(C, n)`` allocation less per
    pass; the same values bit for bit).
    """
    if flat is None:
        flat = _observed_flat(y, ST.shape[1])
    observed = ST.ravel().take(flat)
    m = ST.max(axis=0)
    if overwrite:
        E = ST
        E -= m
    else:
        E = ST - m
    np.exp(E, out=E)
    s = E.sum(axis=0)
    loss = w @ (m + np.log(s) - observed)
    E *= w / s
    E_flat = E.ravel()
    E_flat[flat] = E_flat.take(flat) - w
    return loss, E


def _softmax(S):
    return _normalise_log(S)


def _softplus(S, E):
    """``log(1 + exp(S))`` from ``E = exp(-|S|)``: ``max(S, 0) + log1p(E)``.

    ``np.logaddexp(0, S)`` to rounding, without overflow; with ``_expit``
    on the same ``E``, one exponential per entry (``np.logaddexp`` and
    ``scipy.special.expit`` each cost several times an ``np.exp``). Used by
    the spline's Newton steps; the L-BFGS fits keep ``expit``, whose last
    bits their paths (and stopping points) depend on.
    """
    out = np.log1p(E)
    out += np.maximum(S, 0.0)
    return out


def _expit(S, E):
    """``1 / (1 + exp(-S))`` from ``E = exp(-|S|)``: ``1 / (1 + E)``, times ``E`` if ``S < 0``."""
    out = E + 1.0
    np.reciprocal(out, out=out)
    np.multiply(out, E, out=out, where=S < 0.0)
    return out


def _binary_loss(S, T, w):
    """Weighted log-loss of ``sigmoid(S)`` against targets ``T`` in [0, 1], and gradient.

    ``S`` and ``T`` are ``(n, K)``: ``K`` independent binary problems.
    """
    # log(1 + e^s) = max(s, 0) + log1p(exp(-|s|)): no overflow; einsum for
    # the weighted sums (several times faster than reducing short rows)
    M = np.log1p(np.exp(-np.abs(S)))
    M += np.maximum(S, 0.0)
    M -= T * S
    loss = np.einsum("i,ij->", w, M)
    G = expit(S)
    G -= T
    G *= w[:, None]
    return loss, G


def _fit_one_vs_rest(features, T, w, slopes0, nonnegative):
    """Fit ``sigmoid(sum_j a_j * F_j + c)`` per column against targets ``T``.

    ``features`` is a list of ``(n, K)`` arrays, ``slopes0`` the starting
    slopes (one ``(K,)`` array per feature; the intercepts start at 0);
    ``nonnegative`` bounds the slopes below by 0. The ``K`` problems are
    independent and solved jointly (one pass over the data per iteration).
    Returns the slopes (list) and the intercepts.
    """
    K = T.shape[1]
    J = len(features)
    x0 = np.concatenate(list(slopes0) + [np.zeros(K)])
    bounds = None
    if nonnegative:
        bounds = [(0.0, None)] * (J * K) + [(None, None)] * K
    n = T.shape[0]
    fun = _one_vs_rest_objective(features, T, w)
    if n >= 4 * _WARM_ROWS:
        # start from the fit on every (n // _WARM_ROWS)-th row, then Newton
        # steps on all the rows: from there a few converge
        step = n // _WARM_ROWS
        sub = [F[::step] for F in features]
        warm = _lbfgs(_one_vs_rest_objective(sub, T[::step], w[::step]), x0, bounds)
        theta = _newton_one_vs_rest(features, T, w, fun, warm, nonnegative)
        if theta is not None:
            return [theta[j * K:(j + 1) * K] for j in range(J)], theta[J * K:]
    theta = _lbfgs(fun, x0, bounds)
    return [theta[j * K:(j + 1) * K] for j in range(J)], theta[J * K:]


# Above 4 times this many rows, the one-vs-rest fits start from the fit on a
# systematic subsample of about this many rows (every k-th row: no
# randomness) and finish with Newton steps on all the rows.
_WARM_ROWS = 10_000


def _newton_one_vs_rest(features, T, w, fun, theta, nonnegative, max_steps=20):
    """Newton steps for the one-vs-rest fits from ``theta``, or None.

    Each class's problem has ``J + 1`` parameters (its slopes and
    intercept) and its own ``(J + 1) x (J + 1)`` Hessian, so a step costs
    about two passes over the data. The step is halved until the mean loss
    does not increase; the iteration stops, as L-BFGS-B's ``gtol`` does,
    when no gradient entry exceeds ``1e-7``. None (and the caller runs
    L-BFGS-B from the start it has) when a Hessian is singular, a step
    would make a bounded slope negative or the steps do not converge: the
    caller then runs L-BFGS-B from the identity, as on small data (not from
    the subsample's fit, which can be far off, e.g. steep on a separable
    subsample, where L-BFGS-B would stall).
    """
    K = T.shape[1]
    J = len(features)
    total = w.sum()
    X = list(features) + [None]  # None: the intercept's feature, 1
    value, grad = fun(theta)
    for _ in range(max_steps):
        if np.max(np.abs(grad)) <= 1e-7:
            return theta
        S = np.broadcast_to(theta[J * K:], T.shape).copy()
        for j in range(J):
            S += features[j] * theta[j * K:(j + 1) * K]
        R = expit(S)
        R *= 1.0 - R
        R *= w[:, None]
        H = np.empty((K, J + 1, J + 1))
        for a in range(J + 1):
            for b in range(a, J + 1):
                if X[a] is None:
                    h = R.sum(axis=0)
                elif X[b] is None:
                    h = np.einsum("ij,ij->j", R, X[a])
                else:
                    h = np.einsum("ij,ij->j", R * X[a], X[b])
                H[:, a, b] = H[:, b, a] = h / total
        g = grad.reshape(J + 1, K).T  # (K, J + 1): class k's slopes, intercept
        try:
            d = np.linalg.solve(H, g[:, :, None])[:, :, 0]
        except np.linalg.LinAlgError:
            return None
        if not np.all(np.isfinite(d)):
            return None
        d = d.T.ravel()  # back to theta's layout
        t = 1.0
        while True:
            candidate = theta - t * d
            if nonnegative and np.any(candidate[:J * K] < 0.0):
                return None
            new_value, new_grad = fun(candidate)
            if new_value <= value:
                break
            t /= 2.0
            if t < 1e-10:
                return None
        theta, value, grad = candidate, new_value, new_grad
    return theta if np.max(np.abs(grad)) <= 1e-7 else None


def _one_vs_rest_objective(features, T, w):
    """The mean log-loss of the one-vs-rest maps and its gradient in ``theta``."""
    K = T.shape[1]
    J = len(features)
    total = w.sum()

    def fun(theta):
        S = np.broadcast_to(theta[J * K:], T.shape).copy()
        for j in range(J):
            S += features[j] * theta[j * K:(j + 1) * K]
        loss, G = _binary_loss(S, T, w)
        grads = [np.einsum("ij,ij->j", G, F) for F in features] + [G.sum(axis=0)]
        return loss / total, np.concatenate(grads) / total

    return fun


def _normalise_log(logQ):
    """Rows of ``exp(logQ)`` divided by their sum, computed in log space.

    For finite ``logQ`` every output is positive mathematically; one whose
    ``exp`` underflows (below ``2.2e-308``) is returned as the smallest
    positive normal double ``2.2e-308`` instead of 0, which changes the row
    sum by at most ``C * 2.2e-308`` (nothing, in rounding). A large entry may
    still round to exactly 1.0 (``1 - 1e-300`` is 1.0 in floating point).
    """
    Q = np.exp(logQ - logsumexp(logQ, axis=1, keepdims=True))
    return np.maximum(Q, _TINY, out=Q)


def _one_vs_rest_output(S, C):
    """Probabilities from one-vs-rest scores: ``sigmoid`` for 2 classes, else normalised."""
    if C == 2:
        # one problem (class 1 against class 0): no normalisation needed
        s = S[:, 0]
        Q = np.column_stack([expit(-s), expit(s)])
        return np.maximum(Q, _TINY, out=Q)
    return _normalise_log(-np.logaddexp(0.0, -S))


def _one_vs_rest_targets(y, w, C, smoothing):
    """Targets of the one-vs-rest problems (columns), Platt-smoothed or hard."""
    Y = np.zeros((y.shape[0], C))
    Y[np.arange(y.shape[0]), y] = 1.0
    if not smoothing:
        return Y
    n_pos = w @ Y
    n_neg = w.sum() - n_pos
    t_pos = (n_pos + 1.0) / (n_pos + 2.0)
    t_neg = 1.0 / (n_neg + 2.0)
    return np.where(Y > 0, t_pos, t_neg)


class SigmoidCalibration(BaseRecalibrator):
    """Platt scaling on the logit of each class's probability, with target smoothing.

    Platt, J. C. (1999), "Probabilistic outputs for support vector machines
    and comparisons to regularized likelihood methods". For two classes, the
    calibrated probability of the second class is
    ``sigmoid(a * logit(p) + b)`` with ``logit(p) = log p - log(1 - p)``; the
    fit minimises the log-loss against Platt's smoothed targets
    ``(N+ + 1) / (N+ + 2)`` for positives and ``1 / (N- + 2)`` for negatives
    (``N+``, ``N-`` are the weighted class counts, so integer weights act as
    repeated rows). The smoothing is a prior that keeps ``a`` and ``b`` finite
    on separable data, with one class only, or with one sample.

    For ``C > 2`` classes, one such map per class (class ``k`` against the
    rest, on ``logit(P[:, k])``), then each row divided by its sum, as
    scikit-learn's ``CalibratedClassifierCV(method="sigmoid")`` does.

    The logit's logarithms use the floor of the module (``2.2e-16``), so
    ``p = 0`` and ``p = 1`` give a logit of about -36 and +36. The fit starts
    at the identity ``a = 1, b = 0``.

    Parameters
    ----------
    labels : array-like of shape (n_classes,), default=None
        The class of each column of ``X``, sorted; by default the classes
        of ``y`` (all must then occur).
    target_smoothing : bool, default=True
        Platt's smoothed targets; ``False`` fits the plain log-loss.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_classes_ : int
    coef_ : ndarray of shape (n_problems,)
        Slope ``a`` of each map (one for two classes, else one per class).
    intercept_ : ndarray of shape (n_problems,)
        Intercept ``b`` of each map.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.recalibration import SigmoidCalibration
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(0.01, 0.99, 2000)
    >>> y = (rng.uniform(size=2000) < p ** 2).astype(int)  # overconfident p
    >>> cal = SigmoidCalibration().fit(p, y)
    >>> q = cal.predict_proba([0.5])[0, 1]  # the truth is 0.5 ** 2 = 0.25
    >>> bool(abs(q - 0.25) < 0.05)
    True
    """

    _parameter_constraints = {
        "labels": ["array-like", None],
        "target_smoothing": ["boolean"],
    }

    def __init__(self, labels: ArrayLike | None = None, target_smoothing: bool = True) -> None:
        self.labels = labels
        self.target_smoothing = target_smoothing

    @staticmethod
    def _features(P):
        if P.shape[1] == 2:
            return (_log_floor(P[:, 1]) - _log_floor(P[:, 0]))[:, None]
        return _log_floor(P) - _log_rest(P)

    def _fit(self, P, y, w):
        C = P.shape[1]
        F = self._features(P)
        T = _one_vs_rest_targets(y, w, C, self.target_smoothing)
        if C == 2:
            T = T[:, 1:]
        (a,), b = _fit_one_vs_rest([F], T, w, [np.ones(F.shape[1])], False)
        self.coef_, self.intercept_ = a, b

    def _predict_proba(self, P):
        return _one_vs_rest_output(
            self._features(P) * self.coef_ + self.intercept_, P.shape[1]
        )


class BetaCalibration(BaseRecalibrator):
    """Beta calibration, the three-parameter ``abm`` model with ``a, b >= 0``.

    Kull, M., Silva Filho, T. M. and Flach, P. (2017), "Beta calibration: a
    well-founded and easily implemented improvement on logistic calibration
    for binary classifiers" (AISTATS 2017). The calibrated probability of the
    second of two classes is ``sigmoid(a * log p - b * log(1 - p) + c)``,
    with ``a >= 0`` and ``b >= 0`` so that the map is monotone; the
    weighted log-loss is minimised under these bounds by L-BFGS-B. (The
    reference implementation ``betacal`` fits an unconstrained logistic
    regression and, when a slope comes out negative, refits without that
    feature; the bounded fit here reaches the constrained optimum directly.)

    For ``C > 2`` classes, one map per class (``P[:, k]`` against the sum of
    the other columns), then rows divided by their sums (one-vs-rest, as
    scikit-learn's ``CalibratedClassifierCV`` does).

    ``log p`` and ``log(1 - p)`` use the module's floor ``2.2e-16``, so exact
    0 and 1 are accepted. Without smoothing the maximum-likelihood map is
    unbounded on separable data (or one class only); the fit then stops at
    its iteration limit with a steep but finite map. The fit starts at the
    identity ``a = b = 1, c = 0``.

    Parameters
    ----------
    labels : array-like of shape (n_classes,), default=None
        The class of each column of ``X``, sorted; by default the classes
        of ``y`` (all must then occur).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_classes_ : int
    a_, b_, c_ : ndarray of shape (n_problems,)
        The parameters of each map (one for two classes, else one per class).

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.recalibration import BetaCalibration
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(0.01, 0.99, 2000)
    >>> y = (rng.uniform(size=2000) < p ** 2).astype(int)
    >>> cal = BetaCalibration().fit(p, y)
    >>> q = cal.predict_proba([0.5])[0, 1]  # the truth is 0.5 ** 2 = 0.25
    >>> bool(abs(q - 0.25) < 0.05)
    True
    """

    _parameter_constraints = {"labels": ["array-like", None]}

    def __init__(self, labels: ArrayLike | None = None) -> None:
        self.labels = labels

    @staticmethod
    def _features(P):
        if P.shape[1] == 2:
            return _log_floor(P[:, 1:]), _log_floor(P[:, :1])
        return _log_floor(P), _log_rest(P)

    def _fit(self, P, y, w):
        C = P.shape[1]
        L1, L0 = self._features(P)
        T = _one_vs_rest_targets(y, w, C, smoothing=False)
        if C == 2:
            T = T[:, 1:]
        K = L1.shape[1]
        (a, b), c = _fit_one_vs_rest([L1, -L0], T, w, [np.ones(K), np.ones(K)], True)
        self.a_, self.b_, self.c_ = a, b, c

    def _predict_proba(self, P):
        L1, L0 = self._features(P)
        return _one_vs_rest_output(L1 * self.a_ - L0 * self.b_ + self.c_, P.shape[1])


class TemperatureScaling(BaseRecalibrator):
    """Temperature scaling: ``softmax(log(P) / T)`` with one temperature ``T``.

    Guo, C., Pleiss, G., Sun, Y. and Weinberger, K. Q. (2017), "On
    calibration of modern neural networks" (ICML 2017). The logits are the
    logarithms of the input probabilities (logits up to a per-row constant,
    which softmax ignores); ``T`` minimises the weighted log-loss. The fit is
    on the inverse temperature ``1 / T >= 0`` (``T = inf``, the uniform
    prediction, is allowed) and starts at ``T = 1``, the identity.

    Logarithms use the module's floor ``2.2e-16`` (an exact 0 enters as
    ``log(2.2e-16)``). With one class only, or a calibration set whose every
    top class is right, the likelihood grows without bound as ``T -> 0``: the
    fit stops at its iteration limit with a small, finite ``T``.

    Parameters
    ----------
    labels : array-like of shape (n_classes,), default=None
        The class of each column of ``X``, sorted; by default the classes
        of ``y`` (all must then occur).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_classes_ : int
    temperature_ : float
        The fitted ``T`` (``inf`` when the uniform prediction is best).

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.recalibration import TemperatureScaling
    >>> rng = np.random.default_rng(0)
    >>> logits = rng.normal(size=(3000, 3)) * 3
    >>> y = np.array([rng.choice(3, p=q) for q in np.exp(logits / 3) /
    ...               np.exp(logits / 3).sum(1, keepdims=True)])
    >>> P = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    >>> round(TemperatureScaling().fit(P, y).temperature_, 1)
    3.0
    """

    _parameter_constraints = {"labels": ["array-like", None]}

    def __init__(self, labels: ArrayLike | None = None) -> None:
        self.labels = labels

    def _fit(self, P, y, w):
        LT = np.ascontiguousarray(_log_floor(P).T)
        total = w.sum()

        flat = _observed_flat(y, P.shape[0])

        def fun(theta):
            loss, GT = _softmax_loss(LT * theta[0], y, w, flat, overwrite=True)
            grad = np.einsum("ij,ij->", GT, LT)
            return loss / total, np.array([grad / total])

        beta = _lbfgs(fun, np.ones(1), bounds=[(0.0, None)])[0]
        self.temperature_ = float(np.inf) if beta == 0 else float(1.0 / beta)

    def _predict_proba(self, P):
        return _softmax(_log_floor(P) / self.temperature_)
