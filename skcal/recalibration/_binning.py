"""Binning recalibrators: isotonic regression, histogram binning, scaling-binning.

Every class here subclasses :class:`BaseRecalibrator` and is a one-vs-rest
reduction: for each class ``k`` a binary map ``q_k`` from the column
``P[:, k]`` to the probability of ``y == k`` is fitted, and the calibrated
row is ``q / sum(q)``. For two classes only the second column is mapped and
the output is ``[1 - q, q]`` (no normalisation needed), as in scikit-learn's
``CalibratedClassifierCV``.

Smoothing (why these maps never emit exact 0 or 1): a bin or isotonic block
of total weight ``W`` holding a weighted count ``S`` of positives gets the
posterior mean of its frequency under a Beta prior of strength one
pseudo-observation centred on the class's smoothed base rate
``m = (S_tot + 1/2) / (W_tot + 1)``::

    q = (S + m) / (W + 1).

Both ``m`` and ``q`` are strictly inside (0, 1) for any data, so the output
is never exactly 0 or 1 and the log-loss of new data is always finite; with
``W`` large the prior is negligible. Sample weights are frequency weights
(integer weights give exactly the fit of repeated rows).

The helpers below are shared with the Venn-ABERS and spline modules.
"""

from __future__ import annotations

import numbers

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import expit
from sklearn.model_selection import KFold
from sklearn.utils import check_random_state

from .._compat import Interval, StrOptions, isotonic_regression
from ._base import BaseRecalibrator

__all__ = ["HistogramBinning", "IsotonicCalibration", "ScalingBinning"]

# The floor inside the logarithms of input probabilities (logits of the
# scaling and spline maps, the log-loss of inner cross-validation):
# log(2.2e-16) = -36.04. The caller's data are never changed.
FLOOR = np.finfo(np.float64).eps


# --- shared helpers ---------------------------------------------------------------


def binary_columns(P):
    """The columns mapped one-vs-rest: ``[1]`` for two classes, else all."""
    return [1] if P.shape[1] == 2 else list(range(P.shape[1]))


def assemble(Q, n_classes):
    """Calibrated rows from the one-vs-rest columns ``Q`` (``(n, K)``)."""
    if n_classes == 2:
        q = Q[:, 0]
        return np.column_stack([1.0 - q, q])
    return Q / Q.sum(axis=1, keepdims=True)


def logit_column(P, k):
    """``log P[:, k] - log(1 - P[:, k])``, the complement as the other columns' sum.

    Summing the other columns avoids the cancellation of ``1 - p`` near 1;
    both logarithms see the floor ``FLOOR`` (an exact 0 or 1 maps to -36.04
    or +36.04 on its side).
    """
    rest = P.sum(axis=1) - P[:, k] if P.shape[1] > 2 else P[:, 1 - k]
    return np.log(np.maximum(P[:, k], FLOOR)) - np.log(np.maximum(rest, FLOOR))


def binary_log_loss(t, q, w):
    """Weighted mean log-loss of ``q`` against targets ``t`` in [0, 1] (floored logs)."""
    q = np.asarray(q, dtype=np.float64)
    loss = -(t * np.log(np.maximum(q, FLOOR)) + (1.0 - t) * np.log(np.maximum(1.0 - q, FLOOR)))
    return float(dot(w, loss) / w.sum())


def smoothed_base_rate(t, w):
    """The prior mean ``(S_tot + 1/2) / (W_tot + 1)``: strictly inside (0, 1)."""
    return (dot(w, t) + 0.5) / (float(w.sum()) + 1.0)


def dot(a, b):
    """``sum(a * b)`` of two vectors.

    Not ``a @ b``: a multithreaded BLAS ``ddot`` costs 8 ms of CPU on 80,000
    rows on a loaded two-core machine, against 0.05 ms for this.
    """
    return float(np.multiply(a, b).sum())


def sorted_order(x, rows=None, order=None):
    """The rows (all, or ``rows``, a boolean mask) in increasing order of ``x``.

    ``order``, the sorting permutation of all of ``x`` when known, turns the
    sort of a subset into one pass.
    """
    if order is None:
        order = np.argsort(x)
    return order if rows is None else order[rows[order]]


def group_sorted(x, t, w, order=None):
    """Distinct sorted values of ``x`` with their total weight and positive weight.

    Rows of zero weight are dropped (they do not change any fit); ``order``
    (optional) lists the rows to use in increasing order of ``x``. Returns
    ``(values, W, S)``.
    """
    if order is None:
        order = np.argsort(x)
    order = order[w[order] > 0]
    xs = x[order]
    if xs.shape[0] == 0:
        return xs, xs.copy(), xs.copy()
    start = np.flatnonzero(np.r_[True, xs[1:] != xs[:-1]])
    W = np.add.reduceat(w[order], start)
    S = np.add.reduceat(w[order] * t[order], start)
    return xs[start], W, S


def inner_folds(n, n_splits, random_state):
    """Shuffled K-fold splits of ``n`` rows, or ``None`` when ``n`` is too small."""
    if n < 2 * n_splits:
        return None
    return list(KFold(n_splits, shuffle=True, random_state=random_state).split(np.empty(n)))


def fit_platt(z, t, w):
    """Platt's ``sigmoid(a z + b)`` with his smoothed targets; returns ``(a, b)``.

    Targets ``(N+ + 1) / (N+ + 2)`` and ``1 / (N- + 2)`` (Platt, "Probabilistic
    outputs for support vector machines", 1999) keep the fit finite on
    separable data. Newton's method on the weighted log-loss (two
    parameters: the 2 x 2 system is solved in closed form), with step
    halving; it starts from the identity ``a = 1, b = 0``.
    """
    n_pos = dot(w, t)
    n_neg = float(w.sum()) - n_pos
    T = np.where(t > 0.5, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    scale = float(w.sum())

    def objective(a, b):
        s = a * z + b
        return dot(w, np.logaddexp(0.0, s) - T * s) / scale

    a, b = 1.0, 0.0
    value = objective(a, b)
    for _ in range(100):
        s = expit(a * z + b)
        g = w * (s - T)
        h = w * s * (1.0 - s)
        ga, gb = dot(g, z), float(g.sum())
        haa, hab, hbb = dot(h, z * z), dot(h, z), float(h.sum())
        det = haa * hbb - hab * hab
        if not det > 1e-300 * max(haa * hbb, 1e-300):
            break
        da, db = (hbb * ga - hab * gb) / det, (haa * gb - hab * ga) / det
        step = 1.0
        while True:
            new = objective(a - step * da, b - step * db)
            if new <= value or step < 1e-10:
                break
            step /= 2.0
        if new > value:
            break
        a, b = a - step * da, b - step * db
        done = value - new <= 1e-13 * max(1.0, abs(value))
        value = new
        if done:
            break
    return a, b


# --- isotonic ---------------------------------------------------------------------


def isotonic_blocks(x, t, w, order=None):
    """Weighted isotonic regression of ``t`` on ``x``, as blocks.

    ``order`` as in :func:`group_sorted`. Returns ``(lo, hi, centre, W, S)``
    per block: the smallest and largest ``x`` of the block, its weighted mean
    ``x``, total weight and positive weight. The unsmoothed fit of the block is ``S / W``.
    """
    values, Wg, Sg = group_sorted(x, t, w, order)
    fit = isotonic_regression(Sg / Wg, Wg)
    # blocks are the level sets of the fit (adjacent pools of equal value are
    # one block, whatever the tie convention of the solver)
    start = np.flatnonzero(np.r_[True, fit[1:] != fit[:-1]])
    W = np.add.reduceat(Wg, start)
    S = np.add.reduceat(Sg, start)
    centre = np.add.reduceat(values * Wg, start) / W
    lo = values[start]
    hi = values[np.r_[start[1:], values.shape[0]] - 1]
    return lo, hi, centre, W, S


def smooth_blocks(W, S, m):
    """Beta-smoothed block frequencies, made monotone again.

    ``(S + m) / (W + 1)`` can break the order of two adjacent blocks (a light
    block's estimate moves more towards ``m``); a weighted isotonic pass with
    weights ``W + 1`` restores it, and its values stay inside (0, 1) since
    they are weighted means of values inside (0, 1).
    """
    q = (S + m) / (W + 1.0)
    return isotonic_regression(q, W + 1.0)


class _IsotonicMap:
    """One fitted binary isotonic map (picklable: plain arrays)."""

    def __init__(self, x, t, w, interpolation, order=None):
        lo, hi, centre, W, S = isotonic_blocks(x, t, w, order)
        used = order if order is not None else slice(None)
        self.value = smooth_blocks(W, S, smoothed_base_rate(t[used], w[used]))
        self.interpolation = interpolation
        self.centre = centre
        # a new x between two blocks goes to the nearer one
        self.middle = (hi[:-1] + lo[1:]) / 2.0

    def __call__(self, x, interpolation=None):
        if (interpolation or self.interpolation) == "linear":
            return np.interp(x, self.centre, self.value)
        return self.value[np.searchsorted(self.middle, x, side="right")]


class IsotonicCalibration(BaseRecalibrator):
    """Isotonic regression of the outcome on each class's probability, never 0 or 1.

    The map of Zadrozny and Elkan ("Transforming classifier scores into
    accurate multiclass probability estimates", 2002): the weighted isotonic
    (pool-adjacent-violators) regression of ``1{y = k}`` on ``P[:, k]``,
    one-vs-rest, rows normalised (for two classes, the second column only).

    Unlike scikit-learn's isotonic calibration it never emits an exact 0 or
    1: each fitted block of weight ``W`` with positive weight ``S`` gets the
    posterior mean ``(S + m) / (W + 1)`` under a Beta prior of one
    pseudo-observation centred on the smoothed base rate
    ``m = (S_tot + 1/2) / (W_tot + 1)``, then a weighted isotonic pass
    restores monotonicity. No data force 0 or 1 under this prior: an
    estimate of 0 from a finite block is a sampling accident, and its
    log-loss on new data is infinite. The fit before smoothing is the exact
    isotonic regression (tested against scikit-learn's).

    Between blocks the map is a step (a new value goes to the nearer block)
    or linear between the blocks' weighted centres (constant beyond the
    outer centres); ``interpolation="auto"`` chooses between the two by the
    out-of-fold log-loss of an inner K-fold cross-validation (ties: step).

    Inputs equal to 0 or 1 are ordinary values of ``P[:, k]``: no logarithm
    is taken of them.

    Parameters
    ----------
    labels : array-like of shape (n_classes,), default=None
        The class of each column of ``X``; by default the sorted distinct
        labels of ``y`` (all columns must then occur).
    interpolation : {"auto", "step", "linear"}, default="auto"
        The map between fitted blocks (see above).
    cv : int, default=5
        Number of inner folds for ``interpolation="auto"``; below ``2 * cv``
        rows the step map is used.
    random_state : int, RandomState instance or None, default=None
        Shuffling of the inner folds.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class of each column.
    n_classes_ : int
        Number of columns.
    interpolation_ : str
        The interpolation used ("step" or "linear").
    maps_ : list
        The fitted binary map of each mapped column.

    References
    ----------
    B. Zadrozny and C. Elkan, "Transforming classifier scores into accurate
    multiclass probability estimates", KDD 2002.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.recalibration import IsotonicCalibration
    >>> p = np.array([0.1, 0.2, 0.3, 0.6, 0.7, 0.9])
    >>> y = np.array([0, 0, 1, 0, 1, 1])
    >>> cal = IsotonicCalibration(interpolation="step").fit(p, y)
    >>> q = cal.predict_proba(p)[:, 1]
    >>> bool(q.min() > 0 and q.max() < 1 and np.all(np.diff(q) >= 0))
    True
    """

    _parameter_constraints = {
        "labels": ["array-like", None],
        "interpolation": [StrOptions({"auto", "step", "linear"})],
        "cv": [Interval(numbers.Integral, 2, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        labels: ArrayLike | None = None,
        interpolation: str = "auto",
        cv: int = 5,
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        self.labels = labels
        self.interpolation = interpolation
        self.cv = cv
        self.random_state = random_state

    def _choose_interpolation(self, P, y, w):
        folds = inner_folds(P.shape[0], self.cv, check_random_state(self.random_state))
        if folds is None:
            return "step"
        columns = binary_columns(P)
        n = P.shape[0]
        modes = ("step", "linear")
        Q = {mode: np.empty((n, len(columns))) for mode in modes}
        for j, k in enumerate(columns):
            x, t = P[:, k], (y == k).astype(np.float64)
            order = np.argsort(x)
            for train, test in folds:
                mask = np.zeros(n, dtype=bool)
                mask[train] = True
                f = _IsotonicMap(x, t, w, "step", sorted_order(x, mask, order))
                for mode in modes:
                    Q[mode][test, j] = f(x[test], mode)
        scores = {}
        for mode in modes:
            R = assemble(Q[mode], P.shape[1])
            scores[mode] = -dot(w, np.log(np.maximum(R[np.arange(n), y], FLOOR)))
        return "linear" if scores["linear"] < scores["step"] else "step"

    def _fit(self, P, y, w):
        if self.interpolation == "auto":
            self.interpolation_ = self._choose_interpolation(P, y, w)
        else:
            self.interpolation_ = self.interpolation
        self.maps_ = [
            _IsotonicMap(P[:, k], (y == k).astype(np.float64), w, self.interpolation_)
            for k in binary_columns(P)
        ]

    def _predict_proba(self, P):
        columns = binary_columns(P)
        Q = np.column_stack([f(P[:, k]) for f, k in zip(self.maps_, columns)])
        return assemble(Q, P.shape[1])


# --- histogram binning --------------------------------------------------------------


class _Bins:
    """Equal-mass bins of sorted values with cumulative weights (one binary problem)."""

    def __init__(self, x, t, w, target=None, order=None):
        if order is None:
            order = np.argsort(x)
        order = order[w[order] > 0]
        self.x = x[order]
        self.w = w[order]
        values = t if target is None else target
        self.s = self.w * values[order]
        self.cw = np.r_[0.0, np.cumsum(self.w)]
        self.cs = np.r_[0.0, np.cumsum(self.s)]

    def thresholds(self, n_bins):
        """Thresholds between ``n_bins`` equal-weight bins (midpoints of neighbours).

        The bin boundary goes midway between the value at which the cumulative
        weight reaches ``j / n_bins`` of the total and the next larger value,
        so ties are never split: a value ``v`` is in bin ``#{thresholds <= v}``.
        Thresholds that would leave a bin empty are dropped, so every bin
        holds calibration weight (ties can make fewer bins than asked).
        """
        n = self.x.shape[0]
        if n < 2 or n_bins < 2:
            return np.empty(0)
        total = self.cw[-1]
        position = np.searchsorted(self.cw[1:], total * np.arange(1, n_bins) / n_bins,
                                   side="left") + 1
        below = self.x[np.clip(position, 1, n) - 1]
        # midway between the value reached and the next larger value, so
        # that weights and repeated rows give the same thresholds
        above = np.searchsorted(self.x, below, side="right")
        inside = above < n
        thresholds = np.unique((below[inside] + self.x[above[inside]]) / 2.0)
        cut = np.searchsorted(self.x, thresholds, side="left")
        # np.concatenate, not np.r_: this runs thousands of times per fit
        # and np.r_'s parsing cost more than the arithmetic
        keep = (cut > 0) & (cut < n) & np.concatenate(([True], cut[1:] > cut[:-1]))
        return thresholds[keep]

    def sums(self, thresholds):
        """Weight and target sums per bin for the given thresholds."""
        cut = np.concatenate(
            ([0], np.searchsorted(self.x, thresholds, side="left"), [self.x.shape[0]]))
        cw, cs = self.cw[cut], self.cs[cut]
        return cw[1:] - cw[:-1], cs[1:] - cs[:-1]

    def bin_sums(self, thresholds):
        """The same sums, each added up within its bin (for a fitted map's values).

        Differences of cumulative sums (:meth:`sums`, fast while the
        number of bins is chosen) can put a bin's mean of targets in
        [0, 1] outside it by rounding (1 + 4e-16 was seen: a probability
        of -4e-16 for the other class). Added up within the bin, each term
        ``w v <= w`` and both sums in the same order, the target sum never
        exceeds the weight sum (rounding is monotone), so the mean stays
        in [0, 1].
        """
        if self.x.shape[0] == 0:
            return self.sums(thresholds)
        cut = np.concatenate(([0], np.searchsorted(self.x, thresholds, side="left")))
        return np.add.reduceat(self.w, cut), np.add.reduceat(self.s, cut)


def _histogram_candidates(n):
    """The numbers of bins tried: 1 and a geometric grid up to ``2 n^(1/3)``.

    The mean-squared-error-optimal number of bins of a histogram estimate
    of a smooth regression grows as ``n^(1/3)``; the grid covers it with a
    factor of two to spare.
    """
    upper = max(1, int(np.ceil(2.0 * n ** (1.0 / 3.0))))
    return np.unique(np.round(np.geomspace(1, upper, 12)).astype(int))


class _BinMap:
    """A fitted binned map: value per bin, chosen by thresholds (picklable)."""

    def __init__(self, thresholds, value):
        self.thresholds = thresholds
        self.value = value

    def __call__(self, x):
        return self.value[np.searchsorted(self.thresholds, x, side="right")]


def _bin_values(W, S, m):
    return (S + m) / (W + 1.0)


def _choose_n_bins(x, t, w, folds):
    """The number of equal-mass bins of least out-of-fold binary log-loss."""
    candidates = _histogram_candidates(int(np.count_nonzero(w > 0)))
    if folds is None or candidates.shape[0] == 1:
        return int(candidates[-1] if folds is None else candidates[0])
    loss = np.zeros(candidates.shape[0])
    order = np.argsort(x)
    for train, _ in folds:
        mask = np.zeros(x.shape[0], dtype=bool)
        mask[train] = True
        fit = _Bins(x, t, w, order=sorted_order(x, mask, order))
        held = _Bins(x, t, w, order=sorted_order(x, ~mask, order))
        m = smoothed_base_rate(t[train], w[train])
        for i, b in enumerate(candidates):
            thresholds = fit.thresholds(b)
            q = _bin_values(*fit.sums(thresholds), m)
            Wv, Sv = held.sums(thresholds)
            loss[i] -= dot(Sv, np.log(q)) + dot(Wv - Sv, np.log1p(-q))
    return int(candidates[np.argmin(loss)])


class HistogramBinning(BaseRecalibrator):
    """Histogram binning: the smoothed frequency of the outcome in equal-mass bins.

    Zadrozny and Elkan ("Obtaining calibrated probability estimates from
    decision trees and naive Bayesian classifiers", 2001): the range of
    ``P[:, k]`` is cut into bins of equal calibration weight and each bin
    predicts the frequency of ``y == k`` in it; one-vs-rest, rows
    normalised (two classes: the second column only). Thresholds sit
    midway between neighbouring values and never split ties.

    Bin frequencies are smoothed as posterior means under a Beta prior of
    one pseudo-observation centred on the smoothed base rate ``m``:
    ``(S + m) / (W + 1)``, so no bin predicts exactly 0 or 1. With
    ``n_bins="auto"`` the number of bins of each class is chosen among 1
    and a geometric grid up to ``2 n^(1/3)`` (the order of the
    mean-squared-error-optimal number of bins) by the out-of-fold log-loss
    of an inner K-fold cross-validation (below ``2 * cv`` rows: the largest
    candidate).

    Parameters
    ----------
    labels : array-like of shape (n_classes,), default=None
        The class of each column of ``X``.
    n_bins : int or "auto", default="auto"
        Number of equal-mass bins per class, or chosen by inner CV.
    cv : int, default=5
        Number of inner folds for ``n_bins="auto"``.
    random_state : int, RandomState instance or None, default=None
        Shuffling of the inner folds.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_classes_ : int
    n_bins_ : ndarray of shape (n_mapped,)
        Number of bins used for each mapped column (ties of the data can
        make the realised number of distinct bins smaller).
    maps_ : list
        The fitted map of each mapped column.

    References
    ----------
    B. Zadrozny and C. Elkan, "Obtaining calibrated probability estimates
    from decision trees and naive Bayesian classifiers", ICML 2001.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.recalibration import HistogramBinning
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=400)
    >>> y = (rng.uniform(size=400) < p ** 2).astype(int)
    >>> cal = HistogramBinning(n_bins=4).fit(p, y)
    >>> q = cal.predict_proba(np.sort(p))[:, 1]
    >>> np.unique(q).shape
    (4,)
    >>> bool(q.min() > 0 and q.max() < 1)
    True
    """

    _parameter_constraints = {
        "labels": ["array-like", None],
        "n_bins": [Interval(numbers.Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "cv": [Interval(numbers.Integral, 2, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        labels: ArrayLike | None = None,
        n_bins: int | str = "auto",
        cv: int = 5,
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        self.labels = labels
        self.n_bins = n_bins
        self.cv = cv
        self.random_state = random_state

    def _fit(self, P, y, w):
        folds = None
        if self.n_bins == "auto":
            folds = inner_folds(P.shape[0], self.cv, check_random_state(self.random_state))
        self.maps_, n_bins = [], []
        for k in binary_columns(P):
            x, t = P[:, k], (y == k).astype(np.float64)
            b = _choose_n_bins(x, t, w, folds) if self.n_bins == "auto" else self.n_bins
            bins = _Bins(x, t, w)
            thresholds = bins.thresholds(b)
            value = _bin_values(*bins.bin_sums(thresholds), smoothed_base_rate(t, w))
            self.maps_.append(_BinMap(thresholds, value))
            n_bins.append(b)
        self.n_bins_ = np.asarray(n_bins)

    def _predict_proba(self, P):
        columns = binary_columns(P)
        Q = np.column_stack([f(P[:, k]) for f, k in zip(self.maps_, columns)])
        return assemble(Q, P.shape[1])


# --- scaling-binning ------------------------------------------------------------------


class _ScaledBinMap:
    """Platt scaling followed by the bin mean of the scaled values (picklable)."""

    def __init__(self, a, b, thresholds, value):
        self.a, self.b = a, b
        self.thresholds = thresholds
        self.value = value

    def scale(self, z):
        return expit(self.a * z + self.b)

    def __call__(self, z):
        return self.value[np.searchsorted(self.thresholds, self.scale(z), side="right")]


class ScalingBinning(BaseRecalibrator):
    """Scaling-binning: Platt scaling, then the mean scaled value of equal-mass bins.

    The scaling-binning calibrator of Kumar, Liang and Ma ("Verified
    Uncertainty Calibration", 2019), marginal (one-vs-rest) form: the
    calibration rows are split at random into two halves. On the first, a
    Platt map ``g(p) = sigmoid(a logit(p) + b)`` is fitted for each class
    (with Platt's target smoothing); on the second, the scaled values
    ``g(P[:, k])`` are cut into ``n_bins`` bins of equal weight and each bin
    outputs the weighted mean of the scaled values in it (not the outcome
    frequency: that is what makes its calibration error measurable with
    few samples). Rows are normalised (two classes: second column only).
    Outputs are means of sigmoid values, hence inside (0, 1).

    The logit takes logarithms of ``p`` and of the sum of the other columns
    with the floor ``2.2e-16`` inside the logarithm (an exact 0 or 1 input
    becomes a logit of -36.04 or +36.04); the data are not changed.

    Parameters
    ----------
    labels : array-like of shape (n_classes,), default=None
        The class of each column of ``X``.
    n_bins : int or "auto", default="auto"
        Number of bins. ``"auto"``: ``ceil(sqrt(n2))`` for ``n2`` rows of
        positive weight in the binning half, at most 100 -- the bound of
        Kumar et al. (Theorem 4.1) needs ``n2 >= B log B``-many samples,
        which holds for ``B = sqrt(n2)``.
    random_state : int, RandomState instance or None, default=None
        The random split into halves.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_classes_ : int
    maps_ : list
        The fitted map of each mapped column.

    References
    ----------
    A. Kumar, P. Liang and T. Ma, "Verified Uncertainty Calibration",
    NeurIPS 2019.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.recalibration import ScalingBinning
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(0.01, 0.99, size=1000)
    >>> y = (rng.uniform(size=1000) < p).astype(int)
    >>> cal = ScalingBinning(n_bins=5, random_state=0).fit(p, y)
    >>> np.unique(cal.predict_proba(p)[:, 1]).shape
    (5,)
    """

    _parameter_constraints = {
        "labels": ["array-like", None],
        "n_bins": [Interval(numbers.Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        labels: ArrayLike | None = None,
        n_bins: int | str = "auto",
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        self.labels = labels
        self.n_bins = n_bins
        self.random_state = random_state

    def _fit(self, P, y, w):
        rng = check_random_state(self.random_state)
        n = P.shape[0]
        first = np.zeros(n, dtype=bool)
        first[rng.permutation(n)[: n // 2]] = True
        if n < 2 or w[first].sum() == 0 or w[~first].sum() == 0:
            first[:] = True  # too few rows to split: both steps on all rows
            second = first
        else:
            second = ~first
        n2 = int(np.count_nonzero(w[second] > 0))
        b = min(100, int(np.ceil(np.sqrt(n2)))) if self.n_bins == "auto" else self.n_bins
        self.maps_ = []
        for k in binary_columns(P):
            z = logit_column(P, k)
            t = (y == k).astype(np.float64)
            a, c = fit_platt(z[first], t[first], w[first])
            g = expit(a * z[second] + c)
            bins = _Bins(g, t[second], w[second], target=g)
            thresholds = bins.thresholds(b)
            W, S = bins.bin_sums(thresholds)
            self.maps_.append(_ScaledBinMap(a, c, thresholds, S / W))

    def _predict_proba(self, P):
        columns = binary_columns(P)
        Q = np.column_stack([f(logit_column(P, k)) for f, k in zip(self.maps_, columns)])
        return assemble(Q, P.shape[1])
