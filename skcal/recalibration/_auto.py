"""The choice of a recalibrator by a cross-fitted proper score.

:class:`AutoRecalibrator` compares a table of candidate recalibrators,
simplest first and always starting with the identity map (the model left
alone), by the out-of-fold value of a proper score on the calibration data,
and keeps the best one (ties, equal within ``1e-12`` relative, going to the
simplest). The identity is a candidate, so the choice is never worse than
the identity out of fold. The one-standard-error rule of Breiman, Friedman,
Olshen and Stone used before lost to the best single method on log-loss in
11 of the 32 cases of ``benchmarks/compare_recalibrators.py`` (5 splits
each); the argmin, with structured matrix scaling as a candidate, tied or
won in 31 of 32 (see ``doc/recalibration.md``). Every candidate's output
is mixed with the uniform distribution at weight ``1 / (n + 1)`` for the
``n`` rows it was fitted on: never more certain than ``n`` calibration rows
allow.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import clone
from sklearn.utils import check_random_state
from sklearn.utils.parallel import Parallel, delayed

from .._compat import Interval
from ._affine import DirichletCalibration, StructuredMatrixScaling, VectorScaling
from ._base import BaseRecalibrator
from ._binning import HistogramBinning, IsotonicCalibration, ScalingBinning
from ._common import (
    ProbabilityPassthrough,
    cross_fit_folds,
    draw_seed,
    fit_recalibrator,
    predict_recalibrator,
    seed_random_states,
    smoothed_targets,
    uniform_weight,
    with_column_labels,
)
from ._patching import UtilityPatchingRecalibrator
from ._scaling import BetaCalibration, SigmoidCalibration, TemperatureScaling
from ._sigmoid_probability import ProbabilitySigmoidCalibration
from ._spline import SplineCalibration
from ._top_label import apply_top_label, fit_top_label
from ._venn_abers import VennAbersCalibration

__all__ = ["AutoRecalibrator"]


class IdentityRecalibrator(BaseRecalibrator):
    """The identity map: the probabilities of the model, unchanged.

    The first candidate of :class:`AutoRecalibrator` ("the model left
    alone"); kept private to skcal.

    Parameters
    ----------
    labels : array-like of shape (n_classes,), default=None
        The class of each column of ``X``.
    """

    _parameter_constraints = {"labels": ["array-like", None]}

    def __init__(self, labels=None):
        self.labels = labels

    def _fit(self, P, y, w):
        return self

    def _predict_proba(self, P):
        return P.copy()


def _patched(start):
    """Utility patching fitted on the cross-fitted output of ``start``."""
    return UtilityPatchingRecalibrator(init=start, init_cv=5, random_state=0)


# name -> factory of the unfitted candidate, simplest first: the identity,
# one-parameter temperature, the per-class scalings by the number of their
# parameters, then the non-parametric maps by their flexibility, then utility
# patching alone and after the simplest of each kind.
_CANDIDATES = {
    "identity": IdentityRecalibrator,
    "temperature": TemperatureScaling,
    "sigmoid": SigmoidCalibration,
    "sigmoid-probability": ProbabilitySigmoidCalibration,
    "beta": BetaCalibration,
    "vector": VectorScaling,
    "dirichlet": DirichletCalibration,
    "structured-matrix": StructuredMatrixScaling,
    "histogram": HistogramBinning,
    "isotonic": IsotonicCalibration,
    "scaling-binning": ScalingBinning,
    "spline": SplineCalibration,
    "venn-abers": VennAbersCalibration,
    "patching": UtilityPatchingRecalibrator,
    "temperature+patching": lambda: _patched(TemperatureScaling()),
    "isotonic+patching": lambda: _patched(IsotonicCalibration()),
}
_PATCHING = ("patching", "temperature+patching", "isotonic+patching")
# in the default table only when the probabilities take the value 0 or 1
# exactly, where the logit of "sigmoid" is undefined (see _sigmoid_probability)
_ON_EXACT_ZERO_ONE = ("sigmoid-probability",)
_ROW_SCORES = {"neg_log_loss": "log-loss", "neg_brier_score": "Brier score"}


def candidate_names():
    """The names of the candidates of ``AutoRecalibrator``, simplest first.

    Returns
    -------
    names : list of str
        Every name ``candidates=`` accepts.
    """
    return list(_CANDIDATES)


def _row_losses(kind, Q, y):
    """Per-row loss of the out-of-fold predictions ``Q`` (lower is better).

    ``log-loss``: ``-log q_y``, infinite where ``q_y = 0`` exactly (no floor:
    a method that puts probability 0 on an observed class out of fold loses).
    ``Brier score``: ``sum_k (q_k - 1{k = y})^2``.
    """
    rows = np.arange(y.shape[0])
    if kind == "log-loss":
        with np.errstate(divide="ignore"):
            return -np.log(Q[rows, y])
    R = Q.copy()
    R[rows, y] -= 1.0
    return np.einsum("ij,ij->i", R, R)


def _mix(Q, a):
    """``(1 - a) Q + a / K``: ``Q`` mixed with the uniform distribution at weight ``a``.

    ``a`` is one weight, or one per row (the out-of-fold rows of each fold
    mixed at that fold's weight).
    """
    a = np.asarray(a, dtype=np.float64)
    if a.ndim == 1:
        a = a[:, None]
    return (1.0 - a) * np.asarray(Q, dtype=np.float64) + a / Q.shape[1]


def _mean_loss(kind, Q, y, w):
    """The weighted mean of :func:`_row_losses`."""
    return float(np.dot(w, _row_losses(kind, Q, y)) / w.sum())


def _paired_se(d, w):
    """Standard error of the weighted mean of the paired differences ``d``.

    ``sqrt(sum w_i^2 (d_i - dbar)^2) / W``, times ``sqrt(m / (m - 1))`` for the
    effective number ``m = W^2 / sum w_i^2`` of rows (the usual ``n - 1``
    with unit weights); 0 when ``d`` is constant, infinite for ``m <= 1``.
    """
    W = w.sum()
    dbar = float(np.dot(w, d) / W)
    m = W * W / float(np.dot(w, w))
    if m <= 1.0:
        return np.inf if np.any(d != dbar) else 0.0
    return float(np.sqrt(np.dot(w * w, (d - dbar) ** 2) * m / (m - 1.0)) / W)


def choose(names, losses, w):
    """The choice among the candidates by the smallest mean loss (lower better).

    ``losses`` has one row per candidate (in ``names``' order, simplest
    first, the identity first) and one column per unit (a row of the data,
    or a fold for scores that are not sums over rows), ``w`` the weights of
    the units. The chosen candidate is the first, in order, whose weighted
    mean loss is finite and equal to the smallest within ``1e-12`` relative
    (ties go to the simplest); the identity is a candidate, so the choice is
    never worse than it. ``ses`` are the standard errors of the paired
    differences to the chosen one (informative only). Returns ``(index,
    means, ses)``.
    """
    with np.errstate(invalid="ignore"):
        means = np.array([
            np.inf if np.any(~np.isfinite(row)) else float(np.dot(w, row) / w.sum())
            for row in losses
        ])
    ses = np.full(len(names), np.nan)
    if not np.isfinite(means).any():
        return 0, means, ses
    low = means.min()
    best = int(np.flatnonzero(means <= low + 1e-12 * abs(low))[0])
    for k, row in enumerate(losses):
        if np.isfinite(means[k]):
            ses[k] = 0.0 if k == best else _paired_se(row - losses[best], w)
    return best, means, ses


def _simplex_minimise(fun, m):
    """The minimiser over the simplex of a smooth convex ``fun(v) -> (f, grad)``.

    SciPy's SLSQP from the uniform start; the result is clipped at 0 (SLSQP
    may step below a bound by rounding) and divided by its sum, a change of
    the order of the solver's tolerance.
    """
    from scipy.optimize import minimize

    result = minimize(
        fun, np.full(m, 1.0 / m), jac=True, method="SLSQP",
        bounds=[(0.0, 1.0)] * m,
        constraints=[{"type": "eq", "fun": lambda v: v.sum() - 1.0,
                      "jac": lambda v: np.ones_like(v)}],
        options={"ftol": 1e-13, "maxiter": 1000},
    )
    v = np.clip(result.x, 0.0, None)
    return v / v.sum()


def _stack_log_loss(L, w):
    """Simplex weights ``v`` minimising ``-sum_i w_i log(sum_k v_k L[k, i]) / sum w``.

    ``L[k, i] > 0`` is candidate ``k``'s out-of-fold probability of row
    ``i``'s class; the objective is convex in ``v``.
    """
    W = w / w.sum()

    def fun(v):
        q = v @ L
        return -float(W @ np.log(q)), -(L @ (W / q))

    return _simplex_minimise(fun, L.shape[0])


def _stack_brier(Qs, y, w):
    """Simplex weights ``v`` minimising the weighted Brier score of ``sum_k v_k Q_k``.

    A convex quadratic programme on the simplex (``Qs`` of shape
    ``(m, n, K)``).
    """
    m = Qs.shape[0]
    E = np.zeros(Qs.shape[1:])
    E[np.arange(y.shape[0]), y] = 1.0
    D = (Qs - E[None]).reshape(m, -1)
    Wr = np.repeat(w / w.sum(), Qs.shape[2])
    G = (D * Wr) @ D.T  # the objective is v' G v

    def fun(v):
        return float(v @ G @ v), 2.0 * (G @ v)

    return _simplex_minimise(fun, m)


def stack(kind, Qs, y, w, prune=1e-3):
    """Stacking weights of the candidates' out-of-fold predictions ``Qs``.

    ``Qs`` has shape ``(m, n, K)`` (finite candidates only, simplest
    first), ``kind`` the row score ("log-loss" or "Brier score"). The
    weights on the simplex minimise the weighted mean score of the mixture
    ``sum_k v_k Q_k`` (stacking of predictive distributions, Yao et al.
    2018); a candidate whose out-of-fold predictions equal a simpler one's
    gets none (ties to the simplest), and weights below ``prune`` are set
    to 0 and the rest re-optimised, so that few candidates are refitted.
    Returns ``v`` of shape ``(m,)``, summing to 1.
    """
    m = Qs.shape[0]
    keep = []
    for k in range(m):
        if not any(np.array_equal(Qs[k], Qs[j]) for j in keep):
            keep.append(k)
    support = np.array(keep)
    while True:
        if kind == "log-loss":
            L = Qs[support][:, np.arange(y.shape[0]), y]
            v = _stack_log_loss(L, w)
        else:
            v = _stack_brier(Qs[support], y, w)
        small = v < prune
        if not small.any() or small.all():
            break
        support = support[~small]
    out = np.zeros(m)
    out[support] = v
    return out


def _power(Q, tau):
    """Rows of ``Q`` raised to the power ``tau`` and divided by their sums.

    ``q_k^tau / sum_j q_j^tau``, computed as a softmax of ``tau log q``
    (so that no row underflows to all zeros at large ``tau``); an exact 0
    stays 0. ``tau = 1`` returns ``Q`` itself.
    """
    if tau == 1.0:
        return Q
    with np.errstate(divide="ignore"):
        return _power_of_log(np.log(Q), tau)


def _power_of_log(L, tau):
    """:func:`_power` of the rows whose logarithms are ``L`` (for repeated powers)."""
    Z = tau * L
    Z -= Z.max(axis=1, keepdims=True)
    E = np.exp(Z, out=Z)
    return E / E.sum(axis=1, keepdims=True)


# the search interval of log(tau): tau from about 1/150 to 150, far beyond
# any temperature a pool of calibrated candidates needs (the fitted tau is
# reported; one at a bound would show in ``tau_``)
_LOG_TAU_BOUND = 5.0


def _target_losses(kind, S, T):
    """Per-row loss of predictions ``S`` against target rows ``T`` (lower is better).

    ``log-loss``: the cross-entropy ``-sum_k t_k log s_k``; ``Brier score``:
    ``sum_k (s_k - t_k)^2``. One-hot targets give :func:`_row_losses`.
    """
    if kind == "log-loss":
        with np.errstate(divide="ignore", invalid="ignore"):
            L = np.where(T > 0, T * np.log(S), 0.0)
        return -L.sum(axis=1)
    D = S - T
    return np.einsum("ij,ij->i", D, D)


def _entropy(Q, w):
    """Weighted mean Shannon entropy of the rows of ``Q`` (``0 log 0 = 0``)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        H = -np.where(Q > 0, Q * np.log(Q), 0.0).sum(axis=1)
    return float(np.dot(w, H) / w.sum())


def _sharpness_bound(R, parts, w):
    """The largest power of the pool ``R`` that the pooling argument supports.

    The entropy is concave, so the pool ``R = sum_j v_j Q_j`` is never
    sharper (of lower mean entropy) than its candidates on average:
    ``H(R) >= sum_j v_j H(Q_j)``, the sharpness lost by pooling (Ranjan and
    Gneiting 2010). A power ``tau > 1`` restores sharpness; beyond the
    ``tau`` at which ``H(R^tau)`` (decreasing in ``tau``) reaches
    ``sum_j v_j H(Q_j)`` it would make the pool sharper than its
    candidates, which no out-of-fold evidence on the candidates supports
    (where the out-of-fold rows are separable the score keeps falling as
    ``tau`` grows). Found by bisection on ``log tau`` to ``1e-6``, within
    the search interval of :func:`_fit_tau`.
    """
    target = sum(v * _entropy(Q, w) for v, Q in parts)
    if _entropy(R, w) <= target:
        return 1.0
    with np.errstate(divide="ignore"):
        L = np.log(R)
    lo, hi = 0.0, _LOG_TAU_BOUND
    if _entropy(_power_of_log(L, float(np.exp(hi))), w) >= target:
        return float(np.exp(hi))
    while hi - lo > 1e-6:
        mid = 0.5 * (lo + hi)
        if _entropy(_power_of_log(L, float(np.exp(mid))), w) > target:
            lo = mid
        else:
            hi = mid
    return float(np.exp(lo))


def _fit_tau(kind, R, a, w, targets, upper=None):
    """The power ``tau`` of the pool ``R`` (unmixed) that scores best out of fold.

    The score is the weighted mean row score of ``_mix(_power(R, tau), a)``
    (``a`` the per-row mixture weight of its fold) against the target rows
    ``targets`` (:func:`smoothed_targets`; one-hot rows give the score
    against the observed classes), minimised over
    ``log tau``: on a grid of step ``1/4`` over the search interval, then
    by Brent's bounded method to ``1e-10`` between the neighbours of the
    best grid point. Without the mixture the log-loss is convex in ``tau``
    (``-tau log r_y`` plus a log-sum-exp of functions linear in ``tau``),
    but the mixture with the uniform, and the Brier score, which flattens
    as the rows saturate, can make it multimodal (seen on pools of a few
    rows): hence the grid first. ``upper`` (at least 1) caps the search
    interval (:func:`_sharpness_bound`). ``tau = 1`` (no transform) is
    kept unless the score improves by more than ``1e-12`` relative.
    Returns ``(tau, score, score at tau = 1)``.
    """
    from scipy.optimize import minimize_scalar

    W = w / w.sum()
    with np.errstate(divide="ignore"):
        L = np.log(R)

    def score(t):
        S = _mix(R if t == 0.0 else _power_of_log(L, float(np.exp(t))), a)
        return float(W @ _target_losses(kind, S, targets))

    at_one = score(0.0)
    grid = np.linspace(-_LOG_TAU_BOUND, _LOG_TAU_BOUND, int(8 * _LOG_TAU_BOUND) + 1)
    if upper is not None and np.log(upper) < _LOG_TAU_BOUND:
        top = max(float(np.log(upper)), 0.0)
        grid = np.append(grid[grid < top], top)
    values = np.array([score(t) for t in grid])
    if not np.isfinite(values).any():
        return 1.0, at_one, at_one
    i = int(np.nanargmin(np.where(np.isfinite(values), values, np.nan)))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.shape[0] - 1)]
    result = minimize_scalar(score, bounds=(lo, hi), method="bounded",
                             options={"xatol": 1e-10})
    t, best = (float(result.x), float(result.fun)) if result.fun <= values[i] else (
        float(grid[i]), float(values[i]))
    if np.isfinite(best) and best < at_one - 1e-12 * abs(at_one):
        return float(np.exp(t)), best, at_one
    return 1.0, at_one, at_one


def _sharpen(kind, parts, a, y, w):
    """``(tau, score)`` of the sharpened pool, or None when it is not sharpened.

    ``parts`` are the pool's ``(weight, unmixed out-of-fold predictions)``,
    ``a`` the per-row mixture weight. ``tau`` is fitted to Platt's smoothed
    targets (finite where the out-of-fold rows are separable) within the
    cap of :func:`_sharpness_bound`, and kept only if the mean score
    against the observed classes (``score``) improves too, so the
    sharpened pool is never worse than the pool out of fold.
    """
    R = sum(v * Q for v, Q in parts)
    targets = smoothed_targets(y, w, R.shape[1])
    tau, _, _ = _fit_tau(kind, R, a, w, targets, _sharpness_bound(R, parts, w))
    if tau == 1.0:
        return None
    sharp, pool = (_mean_loss(kind, _mix(Q, a), y, w) for Q in (_power(R, tau), R))
    return (tau, sharp) if sharp < pool else None


def _top_label_stage(kind, S, a, y, w, splits):
    """``(map, score)`` of the cross-fitted top-label map of ``S``, or None.

    ``S`` are the unmixed out-of-fold outputs (the stack, sharpened), ``a``
    the weight of the uniform in the final output. The map's input is the
    output as it is without the map, ``_mix(S, a)``, and its output is mixed
    at ``a`` again (the floor ``a / K`` holds). The input is mixed at the
    final weight, not at each fold's: where a candidate puts (almost) all
    the mass on one class (a random forest's votes), ``1 - c`` is set by
    the mixture alone, and a map of ``log(1 - c)`` fitted at the folds'
    weights would read it off a different scale than the final output's.
    The map (:func:`fit_top_label`) is fitted on the rows of all folds but
    one and applied to the remaining fold, on the folds ``splits`` of the
    first level; it is kept only if the mean score of these out-of-fold
    maps beats the unmapped output's, and then refitted on all the rows.
    """
    M = _mix(S, a)
    T = np.empty_like(S)
    for tr, te in splits:
        model = fit_top_label(M[tr], y[tr], w[tr])
        if model is None:
            return None
        T[te] = apply_top_label(M[te], model)
    score = _mean_loss(kind, _mix(T, a), y, w)
    if not score < _mean_loss(kind, M, y, w):
        return None
    model = fit_top_label(M, y, w)
    return None if model is None else (model, score)


def _fold_predict(estimator, P, y, w, P_test):
    """Out-of-fold predictions of one candidate, unmixed, or the error it raised.

    The caller mixes the prediction with the uniform distribution at the
    weight ``uniform_weight(w)`` of the rows the candidate was fitted on, as the
    final fit's output is (the unmixed predictions are what ``sharpen``
    transforms).
    """
    try:
        with warnings.catch_warnings():
            # an inner fit's "no patch" warning is the candidate's business:
            # its out-of-fold score says what the patches were worth
            warnings.filterwarnings("ignore", "UtilityPatchingRecalibrator made no patch")
            model = fit_recalibrator(clone(estimator), P, y, w)
        return predict_recalibrator(model, P_test, check=False)
    except Exception as error:  # noqa: BLE001 -- a candidate that fails loses
        return error


def _subsample(y, size, rng):
    """``size`` row indices drawn without replacement, stratified by class.

    Each class keeps its share, rounded, and at least one row (when it has
    one), so rare classes stay represented in the selection.
    """
    n = y.shape[0]
    counts = np.bincount(y)
    take = np.maximum(np.round(counts * size / n).astype(np.intp), counts > 0)
    rows = [
        rng.choice(np.flatnonzero(y == k), size=int(take[k]), replace=False)
        for k in range(counts.shape[0])
        if take[k] > 0
    ]
    return np.sort(np.concatenate(rows))


class AutoRecalibrator(BaseRecalibrator):
    """The recalibrator that scores best out of fold, never worse than none.

    Every candidate of a table (the identity map first, then the others
    simplest first) is fitted on ``cv - 1`` folds of the calibration data
    and predicts the remaining fold; its out-of-fold predictions of all the
    rows are scored by a proper score (the weighted log-loss by default).

    By default (``ensemble=True``, with the log-loss or the Brier score)
    the output is a mixture of the candidates, ``sum_k v_k Q_k``, with the
    weights ``v`` on the simplex that give the mixture of their out-of-fold
    predictions the best score: stacking of predictive distributions
    (Wolpert 1992; Yao, Vehtari, Simpson and Gelman 2018), a convex problem
    solved exactly. A candidate whose out-of-fold predictions equal a
    simpler one's gets no weight (ties to the simplest), weights below
    ``1e-3`` are set to 0 and the others re-fitted, and every candidate of
    positive weight is refitted on all the rows. Each candidate is a vertex
    of the simplex, so the mixture's out-of-fold score is never worse than
    the best single candidate's, nor than the identity's (if pruning ever
    made it worse, the best single candidate is used). Where candidates
    are close, picking one of them by its out-of-fold score picks partly by
    chance; the mixture averages over that chance instead of betting on it.
    A mixture of calibrated forecasts is under-confident, so it is then
    raised to a power fitted out of fold (``sharpen``, below), and its
    confidence (largest probability) is recalibrated out of fold
    (``top_label``, below).
    With ``ensemble=False``, or with any other ``selection_scoring`` (scores
    that are not means over rows, where the weights would not be a convex
    problem), the chosen candidate is the one with the best out-of-fold
    score (ties, equal within ``1e-12`` relative, going to the simplest),
    refitted on all the rows. (Earlier development builds chose the
    simplest candidate within one standard error of the best; on the
    benchmark of ``doc/recalibration.md`` that rule lost to the best peer on
    log-loss in 11 of 32 cases.)

    Sample weights enter every candidate's fit and the weighted means of
    the out-of-fold losses; rows of weight 0 are dropped first. The folds
    and the subsample are drawn over rows, whatever their weights, so a row
    of integer weight ``k`` and ``k`` repeated rows agree only given the
    same folds (every copy in its original row's fold): then the
    out-of-fold scores are equal for every candidate whose own fit treats
    integer weights as repeated rows (all of skcal's, given their inner
    folds likewise). The standard error reported in ``scores_``
    differs on purpose: it counts the effective number of rows ``W^2 /
    sum w_i^2`` (Kish), unchanged when every weight is scaled, where ``k``
    repeated rows count as ``k`` independent ones; ``k`` copies of one
    observation are not ``k`` observations, and counting them so would
    shrink the standard error below what the data support.

    Never more certain than ``n`` calibration rows allow: the output of
    every candidate, the identity included, is mixed with the uniform
    distribution, ``(1 - a) Q + a / K`` for ``K`` classes, at the weight
    ``a = 1 / (n + 1)`` of the ``n`` rows the candidate was fitted on (in
    the cross-fitting, the rows of the other folds; in the final fit, all
    the rows; ``n`` is the effective number ``(sum w)^2 / sum w^2`` of rows,
    Kish's, the number of rows for unit weights). ``n`` rows cannot support
    a probability below about ``1 / (K (n + 1))`` (Laplace's rule of
    succession), so no class gets less than ``a / K``: one row's log-loss is
    at most ``log(K (n + 1))`` -- a model that emits an exact 0 or 1 (a
    random forest's vote fractions) or a map that extrapolates to one costs
    that row a bounded amount instead of an infinite one -- and a row's
    Brier score moves by at most ``2a``. The same mixture is what
    :class:`StructuredMatrixScaling` applies inside (as its authors do). It
    is no floor inside the logarithm: the output itself is a probability
    vector that sums to 1, and the out-of-fold scores are those of the
    outputs as they are predicted. The weight is ``mixture_``.

    Parameters
    ----------
    labels : array-like of shape (n_classes,), default=None
        The class of each column of ``X`` (an estimator's ``classes_``); by
        default the distinct labels of ``y``, which must then all occur.
    candidates : list of str, dict or None, default=None
        None: every method of the table (see ``candidate_names()`` in
        this module): "identity", "temperature", "sigmoid",
        "sigmoid-probability" (Platt's map on the probability itself,
        ``sigmoid(a p + b)``; only when some calibration probability is
        exactly 0 or 1, where the logit that "sigmoid" maps is undefined:
        a random forest's vote fractions), "beta", "vector", "dirichlet",
        "structured-matrix", "histogram", "isotonic",
        "scaling-binning", "spline", "venn-abers", and, unless the selection
        score is the log-loss, "patching", "temperature+patching" and
        "isotonic+patching" (utility patching targets utility calibration:
        it projects onto the simplex and puts exact zeros, which even mixed
        cost ``log(K (n + 1))`` per row under the log-loss, so under it these
        slowest candidates are not fitted). A list of those
        names, in order of simplicity, or a dict ``name -> recalibrator``
        (objects with ``fit(P, y[, sample_weight])`` and
        ``predict_proba(P)``), simplest first; the identity is always added
        first.
    selection_scoring : str or callable, default="neg_log_loss"
        The score of the out-of-fold predictions, greater is better:
        ``"neg_log_loss"`` or ``"neg_brier_score"`` (both summed over rows,
        so the standard error is that of per-row differences), or any name
        :func:`skcal.get_scorer` knows (skcal's and scikit-learn's, e.g.
        ``"neg_utility_calibration_error"``) or a scorer callable
        ``scorer(estimator, X, y, sample_weight=None)``; these are computed
        on each fold's out-of-fold predictions and the standard error is
        that of the per-fold differences. The log-loss rewards sharp and
        calibrated probabilities and punishes confident mistakes without
        bound: use it when the probabilities are used as such (expected
        costs, thresholds chosen later, stacking). The Brier score is
        bounded: use it when a few confident mistakes should not decide the
        choice (small calibration sets, label noise). A utility calibration
        score (with the utilities of the decisions taken) when the
        probabilities feed those decisions.
    cv : int, default=5
        Number of folds of the cross-fitting (stratified when every class
        has at least ``cv`` rows, else plain shuffled folds).
    max_selection_samples : int or None, default=10000
        The choice is made on a class-stratified subsample of this many rows
        when there are more (the chosen candidate is refitted on all the
        rows): at 10,000 rows the standard error of a difference of
        log-losses is a few thousandths, below the differences that matter.
        None: always all the rows.
    ensemble : bool, default=True
        Whether the output is the out-of-fold-optimal mixture of the
        candidates (stacking, above) rather than the single best candidate.
        It applies to the row scores (``"neg_log_loss"``,
        ``"neg_brier_score"``); other scores always choose one candidate.
    sharpen : bool, default=True
        Whether the stacked mixture (when it has more than one candidate)
        is sharpened: a linear pool of calibrated forecasts is not itself
        calibrated but under-confident (Ranjan and Gneiting 2010), so the
        output becomes ``q_k ∝ (sum_j v_j Q_jk)^tau``, a power ``tau > 0``
        of the pool (a temperature on its log-probabilities; the
        one-parameter multiclass analogue of their beta-transformed linear
        pool), fitted on the same out-of-fold predictions as the weights
        ``v`` (a grid on ``log tau``, then Brent's method to ``1e-10``),
        then mixed with the uniform as every output is. Two rules keep the
        fit from running away where the out-of-fold rows are separable (a
        small calibration set and an over-fitted model, where the score
        keeps falling as ``tau`` grows): ``tau`` is fitted to Platt's
        smoothed targets (a row of class ``k`` puts ``(N_k + 1) / (N_k +
        2)`` on its class, ``N_k`` the effective count of class ``k``)
        rather than to the bare classes, and ``tau`` is at most the power at
        which the pool's mean entropy falls to its candidates' weighted mean
        entropy: the entropy is concave, so pooling can only lose sharpness,
        and the power restores what pooling lost, never more. ``tau`` is
        kept only if it also improves the out-of-fold score against the
        observed classes, so that score is never worse than the pool's.
        ``tau_`` is the fitted power; no effect with one candidate.
    top_label : bool, default=True
        Whether the confidence of the output (with ``ensemble=True`` and the
        log-loss or the Brier score) is recalibrated: a map fitted for a
        proper score within a parametric family (matrix scaling, Dirichlet
        calibration, a stack of such maps) is calibrated along the
        statistics of its family, and its largest probability can stay
        miscalibrated where per-class binning maps are not (top-label
        calibration, Gupta and Ramdas 2022). The map ``c -> g(c)`` of the
        largest probability ``c`` of each row is beta calibration (Kull,
        Silva Filho and Flach 2017: monotone, three parameters, the identity
        among its maps) fitted on whether the top class was right, and the
        other classes share ``1 - g(c)`` in their proportions (evenly where
        they all have probability 0); the top class keeps its place (where
        ``g(c)`` would fall below the runner-up, the two tie). Under the
        log-loss this changes each row's score by exactly the change of the
        binary log-loss of "the top class is right": fitting the map is a
        binary calibration problem. It is fitted to Platt's smoothed
        targets (a right row targets ``(N1 + 1) / (N1 + 2)``, a wrong one
        ``1 / (N0 + 2)``, effective counts): a
        confident model makes few mistakes, and a map fitted to a handful of
        them as certain outcomes follows their noise. Its input is the
        output without the map (the stack, sharpened, mixed with the
        uniform at ``mixture_``; out of fold mixed at that same weight, so
        that a ``1 - c`` set by the mixture alone reads the same in the fit
        and in the final output), and its output is mixed with the uniform
        at ``mixture_`` again (the floor holds). It is fitted on the
        out-of-fold outputs, cross-fitted on the same folds (fitted on all
        folds but one, applied to the remaining one), kept only if that
        improves the out-of-fold score, and then refitted on all the
        out-of-fold rows. Not when the output is the identity alone (the
        model left alone stays alone).
        ``top_label_map_`` is the fitted map, or None.
    n_jobs : int, default=None
        Parallel jobs over the (candidate, fold) fits.
    random_state : int, RandomState instance or None, default=None
        Folds and subsample; one integer seed drawn from it per fit is also
        set as the ``random_state`` of every candidate (and of the
        estimators inside it) whose ``random_state`` is None, so that an
        integer here makes the whole fit reproducible (the inner folds of
        Dirichlet, histogram, spline, ... included).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_classes_ : int
    chosen_ : str
        The name of the chosen candidate: the one of largest weight in the
        mixture (the only one when ``weights_`` has one entry).
    weights_ : dict
        ``name -> weight`` of the candidates in the output (weights > 0,
        summing to 1); ``{chosen_: 1.0}`` when one candidate is used.
    recalibrators_ : dict
        ``name -> recalibrator`` for the candidates of ``weights_``, each
        fitted on all the rows.
    recalibrator_ : object
        ``recalibrators_[chosen_]``.
    stack_score_ : float or None
        The out-of-fold score of the mixture (same sign as ``scores_``;
        sharpened by ``tau_``), or None when one candidate is used.
    tau_ : float
        The power of the sharpened mixture; 1.0 when there is no transform
        (``sharpen=False``, one candidate, or no better score).
    top_label_map_ : BetaCalibration or None
        The map of the output's largest probability (``top_label``), fitted
        on the two columns ``(1 - c, c)``; None when it is not used (no
        better out-of-fold score, ``top_label=False``, ``ensemble=False``
        or another score).
    top_label_score_ : float or None
        The cross-fitted out-of-fold score with the map (same sign as
        ``scores_``), or None.
    scores_ : dict
        For every candidate, ``{"score": s, "se": e}``: its out-of-fold
        score (the selection score, in its own sign: greater is better;
        ``-inf`` when some out-of-fold prediction made it infinite or the
        candidate failed to fit, with ``"error"`` then giving the reason) and
        the standard error of its paired difference to the chosen candidate
        (informative: the choice is the best score).
    n_selection_samples_ : int
        The number of rows the choice was made on.
    mixture_ : float
        ``a = 1 / (n + 1)``: the weight of the uniform distribution in the
        output (``n`` the effective number of calibration rows).

    See Also
    --------
    RecalibratedClassifier : The classifier meta-estimator; its default
        ``recalibrator="auto"`` is this.

    References
    ----------
    L. Breiman, J. H. Friedman, R. A. Olshen and C. J. Stone,
    *Classification and Regression Trees*, 1984 (the one-standard-error
    rule, used before). E. Berta, D. Holzmüller, M. I. Jordan and F. Bach,
    "Structured matrix scaling for multi-class calibration", AISTATS 2026.
    T. Gneiting and A. E. Raftery, *Strictly Proper Scoring Rules,
    Prediction, and Estimation*, 2007. C. Gupta and A. Ramdas, "Top-label
    calibration and multiclass-to-binary reductions", ICLR 2022
    (``top_label``). M. Kull, T. Silva Filho and P. Flach, "Beta
    calibration: a well-founded and easily implemented improvement on
    logistic calibration for binary classifiers", AISTATS 2017. J. Platt, "Probabilistic outputs for
    support vector machines and comparisons to regularized likelihood
    methods", 1999 (smoothed targets). R. Ranjan and T. Gneiting,
    "Combining probability forecasts", *Journal of the Royal Statistical
    Society B*, 2010 (a linear pool of calibrated forecasts lacks
    sharpness; ``sharpen``). D. H. Wolpert, "Stacked
    generalization", *Neural Networks*, 1992. Y. Yao, A. Vehtari, D. Simpson
    and A. Gelman, "Using stacking to average Bayesian predictive
    distributions", *Bayesian Analysis*, 2018.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.recalibration import AutoRecalibrator
    >>> rng = np.random.default_rng(0)
    >>> logits = rng.normal(size=(2000, 3))
    >>> truth = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    >>> y = (truth.cumsum(axis=1) > rng.uniform(size=(2000, 1))).argmax(axis=1)
    >>> P = np.exp(3 * logits) / np.exp(3 * logits).sum(axis=1, keepdims=True)
    >>> auto = AutoRecalibrator(random_state=0).fit(P, y)
    >>> auto.chosen_ != "identity"  # over-confident: some map beats none
    True
    >>> auto.scores_["identity"]["score"] < auto.scores_[auto.chosen_]["score"]
    True
    >>> bool(np.isclose(sum(auto.weights_.values()), 1.0))
    True
    >>> auto.predict_proba(P[:2]).shape
    (2, 3)
    """

    _parameter_constraints = {
        "labels": ["array-like", None],
        "candidates": [list, tuple, dict, None],
        "selection_scoring": [str, callable],
        "cv": [Interval(numbers.Integral, 2, None, closed="left")],
        "max_selection_samples": [Interval(numbers.Integral, 2, None, closed="left"), None],
        "ensemble": ["boolean"],
        "sharpen": ["boolean"],
        "top_label": ["boolean"],
        "n_jobs": [numbers.Integral, None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        labels: ArrayLike | None = None,
        *,
        candidates: list[str] | dict | None = None,
        selection_scoring: str | Callable = "neg_log_loss",
        cv: int = 5,
        max_selection_samples: int | None = 10000,
        ensemble: bool = True,
        sharpen: bool = True,
        top_label: bool = True,
        n_jobs: int | None = None,
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        self.labels = labels
        self.candidates = candidates
        self.selection_scoring = selection_scoring
        self.cv = cv
        self.max_selection_samples = max_selection_samples
        self.ensemble = ensemble
        self.sharpen = sharpen
        self.top_label = top_label
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _candidate_table(self, exact_zero_one=False):
        """``[(name, unfitted recalibrator)]``, the identity first.

        ``exact_zero_one``: whether the calibration probabilities contain an
        exact 0 or 1 (the default table then holds "sigmoid-probability").
        """
        log_loss = self.selection_scoring == "neg_log_loss"
        if isinstance(self.candidates, dict):
            table = [("identity", IdentityRecalibrator())]
            for name, estimator in self.candidates.items():
                for method in ("fit", "predict_proba"):
                    if not callable(getattr(estimator, method, None)):
                        raise TypeError(
                            f"candidates[{name!r}] must have fit(P, y) and "
                            f"predict_proba(P); {type(estimator).__name__} has no "
                            f"{method}."
                        )
                if name != "identity":
                    table.append((str(name), estimator))
            return table
        if self.candidates is None:
            names = [
                n for n in _CANDIDATES
                if not (log_loss and n in _PATCHING)
                and (exact_zero_one or n not in _ON_EXACT_ZERO_ONE)
            ]
        else:
            names = ["identity"] + [n for n in self.candidates if n != "identity"]
        table = []
        for name in names:
            if name not in _CANDIDATES:
                raise ValueError(
                    f"candidates has an unknown name {name!r}; the names are "
                    f"{candidate_names()}."
                )
            table.append((name, _CANDIDATES[name]()))
        return table

    def _scorer(self):
        """``(kind, scorer)``: a row score's name, or None and a scorer callable."""
        scoring = self.selection_scoring
        if isinstance(scoring, str):
            if scoring in _ROW_SCORES:
                return _ROW_SCORES[scoring], None
            from ..scorers import get_scorer

            return None, get_scorer(scoring)
        return None, scoring

    def _fit(self, P, y, w):
        rng = check_random_state(self.random_state)
        # one seed for the inner randomness of every candidate (its inner
        # folds, subsamples): drawn from random_state, never the global state
        seed = draw_seed(rng)
        C = P.shape[1]
        weighted = P[w > 0]
        exact_zero_one = bool(np.any((weighted == 0.0) | (weighted == 1.0)))
        table = [
            (name, seed_random_states(with_column_labels(clone(est), C), seed))
            for name, est in self._candidate_table(exact_zero_one)
        ]
        kind, scorer = self._scorer()
        rows = np.flatnonzero(w > 0)
        size = self.max_selection_samples
        if size is not None and rows.shape[0] > size:
            rows = rows[_subsample(y[rows], size, rng)]
        self.n_selection_samples_ = int(rows.shape[0])
        Ps, ys, ws = P[rows], y[rows], w[rows]
        names = [name for name, _ in table]
        errors = {}
        oof = {}  # name -> out-of-fold predictions (row scores only)
        raw = {}  # the same, unmixed (with sharpen or top_label)
        keep_raw = kind is not None and self.ensemble and (self.sharpen or self.top_label)
        if rows.shape[0] < 2:
            # nothing to cross-fit on: the model is left alone, unscored
            index = 0
            means = ses = np.full(len(table), np.nan)
        else:
            splits = cross_fit_folds(ys, self.cv, rng)
            outputs = Parallel(n_jobs=self.n_jobs)(
                delayed(_fold_predict)(est, Ps[tr], ys[tr], ws[tr], Ps[te])
                for _, est in table
                for tr, te in splits
            )
            n_folds = len(splits)
            if kind is not None:
                losses = np.empty((len(table), rows.shape[0]))
                unit_w = ws
            else:
                losses = np.empty((len(table), n_folds))
                unit_w = np.array([ws[te].sum() for _, te in splits])
            fold_a = [uniform_weight(ws[tr]) for tr, _ in splits]
            row_a = np.empty(rows.shape[0])
            for f, (_, te) in enumerate(splits):
                row_a[te] = fold_a[f]
            for k, name in enumerate(names):
                Q = np.empty_like(Ps)
                for f, (_, te) in enumerate(splits):
                    out = outputs[k * n_folds + f]
                    if isinstance(out, Exception):
                        errors[name] = f"{type(out).__name__}: {out}"
                        losses[k] = np.inf
                        break
                    if keep_raw:
                        raw.setdefault(name, np.empty_like(Ps))[te] = out
                    out = _mix(out, fold_a[f])
                    if kind is None:
                        losses[k, f] = -float(scorer(
                            ProbabilityPassthrough().fit(out), out, ys[te],
                            sample_weight=ws[te],
                        ))
                    else:
                        Q[te] = out
                else:
                    if kind is not None:
                        losses[k] = _row_losses(kind, Q, ys)
                        oof[name] = Q
                # nan (a failed or invalid prediction) loses, as inf does
                losses[k][np.isnan(losses[k])] = np.inf
            index, means, ses = choose(names, losses, unit_w)
        weights = {names[index]: 1.0}
        self.stack_score_ = None
        self.tau_ = 1.0
        self.top_label_map_ = None
        self.top_label_score_ = None
        if self.ensemble and kind is not None and rows.shape[0] >= 2:
            finite = [n for k, n in enumerate(names) if np.isfinite(means[k]) and n in oof]
            if finite:
                v = stack(kind, np.stack([oof[n] for n in finite]), ys, ws)
                mixed = {n: float(x) for n, x in zip(finite, v) if x > 0}
                Q = sum(x * oof[n] for n, x in mixed.items())
                score = _mean_loss(kind, Q, ys, ws)
                # the mixture's out-of-fold score is never worse than the
                # best single candidate's (a vertex of the simplex; pruning
                # could in principle lose it): else the single candidate
                if score <= means[index]:
                    weights = mixed
                    self.stack_score_ = -score if len(mixed) > 1 else None
                    index = names.index(max(weights, key=weights.get))
                    if self.sharpen and len(mixed) > 1:
                        # a linear pool of calibrated forecasts lacks
                        # sharpness (Ranjan and Gneiting 2010): its power
                        # tau, fitted out of fold
                        parts = [(x, raw[n]) for n, x in mixed.items()]
                        sharpened = _sharpen(kind, parts, row_a, ys, ws)
                        if sharpened is not None:
                            self.tau_, sharp = sharpened
                            self.stack_score_ = -sharp
            if (
                self.top_label
                and np.isfinite(means[index])
                and all(n in raw for n in weights)
                and list(weights) != ["identity"]  # the model left alone stays alone
            ):
                # the confidence of the (sharpened) output, recalibrated
                # out of fold (_top_label)
                S = _power(sum(x * raw[n] for n, x in weights.items()), self.tau_)
                stage = _top_label_stage(kind, S, uniform_weight(w), ys, ws, splits)
                if stage is not None:
                    self.top_label_map_, score = stage
                    self.top_label_score_ = -score
        self.weights_ = weights
        self.chosen_ = names[index]
        self.scores_ = {}
        for k, name in enumerate(names):
            entry = {"score": -float(means[k]), "se": float(ses[k])}
            if name in errors:
                entry["error"] = errors[name]
            self.scores_[name] = entry
        fitted = dict(table)
        self.recalibrators_ = {
            name: fit_recalibrator(clone(fitted[name]), P, y, w) for name in weights
        }
        self.recalibrator_ = self.recalibrators_[self.chosen_]
        self.mixture_ = uniform_weight(w)
        return self

    def _predict_proba(self, P):
        Q = sum(
            self.weights_[name] * predict_recalibrator(model, P, check=False)
            for name, model in self.recalibrators_.items()
        )
        Q = _mix(_power(Q, self.tau_), self.mixture_)
        if self.top_label_map_ is not None:
            Q = _mix(apply_top_label(Q, self.top_label_map_), self.mixture_)
        return Q

    def summary(self) -> str:
        """The candidates' out-of-fold scores and the choice, as a text table.

        Returns
        -------
        text : str
            One line per candidate: name, score, standard error of its
            difference to the best, and a mark on the chosen one.
        """
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self)
        scoring = self.selection_scoring
        title = scoring if isinstance(scoring, str) else getattr(
            scoring, "__name__", type(scoring).__name__
        )
        if len(self.weights_) > 1:
            mixture = " + ".join(f"{w:.3g} {n}" for n, w in self.weights_.items())
            head = (
                f"AutoRecalibrator: stacked {mixture} by the out-of-fold {title} "
                f"on {self.n_selection_samples_} rows (mixture score "
                f"{self.stack_score_:.6g}), "
                + (f"raised to the power tau = {self.tau_:.4g}, " if self.tau_ != 1.0 else "")
                + f"mixed with the uniform at {self.mixture_:.3g}"
            )
        else:
            head = (
                f"AutoRecalibrator: chose {self.chosen_!r} by the out-of-fold {title} "
                f"on {self.n_selection_samples_} rows (best score, ties to the simplest), "
                f"mixed with the uniform at {self.mixture_:.3g}"
            )
        lines = [head]
        if self.top_label_map_ is not None:
            m = self.top_label_map_
            lines.append(
                f"  its largest probability c recalibrated to sigmoid({m.a_[0]:.4g} log c "
                f"- {m.b_[0]:.4g} log(1 - c) + {m.c_[0]:.4g}) (top-label map, out-of-fold "
                f"score {self.top_label_score_:.6g})"
            )
        lines.append(f"  {'candidate':<22} {'score':>12} {'s.e. of diff.':>14}")
        for name, entry in self.scores_.items():
            mark = "  <- chosen" if name == self.chosen_ else ""
            if name in self.weights_ and len(self.weights_) > 1:
                mark = f"  <- weight {self.weights_[name]:.3g}"
            note = f"  ({entry['error']})" if "error" in entry else ""
            lines.append(
                f"  {name:<22} {entry['score']:>12.6g} {entry['se']:>14.3g}{mark}{note}"
            )
        return "\n".join(lines)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None
        return tags
