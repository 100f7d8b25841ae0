"""Soft-binned calibration decision loss (SCDL, Definition 1.1 of Bairaktari et al.)."""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, overload

import numpy as np

from .._grouped import group, sketch_error_bound
from .._input import (
    binary_rows,
    canonical_weights,
    plain_binary_rows,
    plain_weights_on_scale,
)
from .._kernels._binning import checked_soft_bin, coarsen, scdl_level, soft_bin
from .._specs import MeasureSpec, register

if TYPE_CHECKING:
    from typing import Literal

    from numpy.typing import ArrayLike
    from sklearn.utils import Bunch

    from .._typing import BinaryLabels, Multiclass, PosLabel, Value

__all__ = ["MAX_LEVEL", "scdl_core", "soft_binned_cdl"]

# The search for m* stops at m = 2**40: 1/m = 9.1e-13 is below what the
# double-precision inputs resolve, and every level up to it stays exact in
# float64 (m p is exact for dyadic m).
MAX_LEVEL = _MAX_LEVEL = 40
# Dense passes. The first has about 32 sqrt(n) soft bins, at most 2**15 so
# that its sums (512 kB) stay in a typical L2 cache: on samples of calibrated
# predictors (uniform, skewed or tied p) m* came out between 4 sqrt(n) and
# 16 sqrt(n), and the search reads level 2 m*. Data calibrated more closely
# get a second pass with about n bins (at most 2**20), still O(n) work; past
# that most bins would be empty and the levels are built sparsely instead.
_FIRST_DENSE_LEVELS = (4, 15)
_MAX_DENSE_LEVEL = 20


@overload
def soft_binned_cdl(
    y_true: BinaryLabels,
    y_prob: ArrayLike | None = None,
    *,
    sample_weight: ArrayLike | None = None,
    pos_label: PosLabel = None,
    multiclass: Multiclass = "top-label",
    labels: ArrayLike | None = None,
    m: int | None = None,
    return_details: Literal[False] = False,
) -> float: ...


@overload
def soft_binned_cdl(
    y_true: BinaryLabels,
    y_prob: ArrayLike | None = None,
    *,
    sample_weight: ArrayLike | None = None,
    pos_label: PosLabel = None,
    multiclass: Multiclass = "top-label",
    labels: ArrayLike | None = None,
    m: int | None = None,
    return_details: Literal[True],
) -> tuple[float, Bunch]: ...


def soft_binned_cdl(
    y_true: BinaryLabels,
    y_prob: ArrayLike | None = None,
    *,
    sample_weight: ArrayLike | None = None,
    pos_label: PosLabel = None,
    multiclass: Multiclass = "top-label",
    labels: ArrayLike | None = None,
    m: int | None = None,
    return_details: bool = False,
) -> Value:
    """Soft-binned calibration decision loss (SCDL), actionable and testable.

    Definition 1.1 of Bairaktari, Hu, Nguyen and Ullman, on the
    weighted empirical distribution ``D`` of ``(p, y)``. With the triangular
    soft bins of Lemma 3.1, ``pi_j = E[w_j(p)]`` and ``pi_j q_j = E[w_j(p) y]``
    where ``w_j(p) = (1 - |m p - j|)_+``, ``j = 0, ..., m``::

        SCDL_m = max_{i=0..m} sum_{j<=i} pi_j (q_j - (i+1)/m)_+
                            + sum_{j>i}  pi_j (i/m - q_j)_+,
        SCDL   = inf_{m = 2, 4, 8, ...} max(SCDL_m, 1/m).

    ``SCDL_m`` does not decrease along dyadic ``m`` (Lemma 3.2), so by
    Lemma 3.3 the infimum is ``max(SCDL_{m*}, 1/m*)``, in ``[1/m*, 2/m*)``,
    where ``m*`` is the smallest dyadic ``m`` with ``SCDL_{2m} >= 1/m``
    (Definition 3.2), and ``0`` when there is none. A decision maker who
    rounds ``p`` at random to the grid ``1/m*`` (keeping its mean) and best
    responds has swap regret at most ``2 SCDL + 2/m*`` on every decision task
    with utilities in ``[0, 1]`` (Theorem 4.2, eq. (4)).

    Computation: one O(n) pass puts the data into the ``K + 1`` soft bins of
    a dense finest level ``K = 2**k`` (``K`` about ``32 sqrt(n)``, between
    ``2**4`` and ``2**15``); every coarser level follows exactly by the
    identity in the proof of Lemma 3.2, and each ``SCDL_m`` takes O(m),
    evaluated from ``m = 2`` up until ``m*`` is found: O(n + K) in all.
    Data calibrated to within about ``1/K`` get a second pass with about
    ``n`` bins (at most ``2**20``). Only past that (SCDL below about
    ``2/n``) are the predictions sorted once and the finer levels built
    sparsely from the ``k`` distinct predictions, O(k log k) per level, with
    ``m*`` located by bisection on the level, which Lemma 3.2 makes valid.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Observed labels (binary), or class labels for multiclass ``y_prob``.
    y_prob : array-like of shape (n_samples,) or (n_samples, n_classes)
        Predicted probability of the positive class, or ``predict_proba``
        output (see ``multiclass``).
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights; integer weights equal repeating rows.
    pos_label : int, float, bool or str, default=None
        The positive class; 1 for labels in {0, 1} or {-1, 1}.
    multiclass : {"top-label", "raise"}, default="top-label"
        For ``(n_samples, K)`` input with ``K > 2``: measure the top-label
        confidence ``max_k p_k`` against ``1{argmax_k p_k = y}`` (ties to the
        lowest column), or raise.
    labels : array-like of shape (n_classes,), default=None
        The class of each column of a ``predict_proba`` ``y_prob`` (the
        estimator's ``classes_``). Needed when ``y_true`` does not show
        every class, unless the labels are {0, 1} or {-1, 1}.
    m : int, default=None
        None for the self-balancing SCDL. A positive integer (at most
        ``2**40``, not necessarily a power of two) returns ``SCDL_m`` instead.
    return_details : bool, default=False
        Also return a :class:`~sklearn.utils.Bunch` of details.

    Returns
    -------
    value : float
        SCDL, in ``[0, 1/2]`` (or ``SCDL_m``, in ``[0, 1 - 1/m]``). ``m*``
        is searched up to ``2**40``; if it is not found by then (data
        calibrated to within about ``1e-12``), the value returned is
        ``SCDL_{2**40}`` and the exact SCDL lies in ``[value, 2**-40]``: a
        lower bound by Lemma 3.2, an upper one by taking ``m = 2**40`` in the
        infimum. Exactly calibrated data thus give ``0.0``.
    details : Bunch
        Only with ``return_details=True``:

        - ``m`` : int, ``m*`` (``2**40`` when not found; the given ``m``
          otherwise), the grid for the rounding response.
        - ``levels`` : ndarray of int, the ``m`` at which ``SCDL_m`` was
          evaluated, ascending.
        - ``scdl_m`` : ndarray of float, ``SCDL_m`` at those levels.
        - ``swap_regret_bound`` : float, ``2 SCDL + 2/m*`` (Theorem 4.2);
          ``2 SCDL_m + 2/m`` for a given ``m`` (Lemmas 4.1 and 4.3).
        - ``exact`` : bool, False only when ``m*`` was not found up to
          ``2**40`` (see ``value``).
        - ``upper_bound`` : float, ``value`` when exact, else ``2**-40``.
        - ``error_bound`` : float, only when ``y_true`` is a compacted
          ``CalibrationSketch`` (see ``skcal.sketch.CalibrationSketch``).

    Examples
    --------
    >>> from skcal import soft_binned_cdl
    >>> y_true = [0, 0, 1, 1, 1, 0]
    >>> y_prob = [0.1, 0.3, 0.4, 0.6, 0.8, 0.9]
    >>> round(soft_binned_cdl(y_true, y_prob), 6)
    0.145833
    >>> value, details = soft_binned_cdl(y_true, y_prob, return_details=True)
    >>> int(details.m), details.levels.tolist()
    (8, [2, 4, 8, 16])
    >>> details.scdl_m.round(6).tolist()
    [0.0, 0.066667, 0.145833, 0.208333]
    >>> round(details.swap_regret_bound, 6)
    0.541667
    >>> round(soft_binned_cdl(y_true, y_prob, m=4), 6)
    0.066667

    Exactly calibrated predictions have SCDL zero:

    >>> soft_binned_cdl([0, 1, 0, 1], [0.5, 0.5, 0.5, 0.5])
    0.0
    """
    m = _check_m(m)
    statistic = getattr(y_true, "grouped_statistic", None)
    dask = any(type(a).__module__.startswith("dask") for a in (y_true, y_prob, sample_weight))
    if dask or callable(statistic):  # a sketch: the grouped statistic, no rows
        # (Dask input: binary_statistic merges one exact sketch per partition)
        from .._grouped import binary_statistic

        source = _GroupedSource(
            binary_statistic(
                y_true, y_prob, sample_weight, pos_label=pos_label,
                multiclass=multiclass, labels=labels, rescale=True,
            )
        )
    else:
        # rows: the finest soft bins in one pass, no sort; plain input is
        # validated within that pass, anything else by the full validator
        source = _checked_row_source(
            y_true, y_prob, sample_weight, pos_label, multiclass, m
        )
        if source is None:
            source = _RowSource(
                *binary_rows(
                    y_true,
                    y_prob,
                    sample_weight,
                    pos_label=pos_label,
                    multiclass=multiclass,
                    labels=labels,
                )
            )
    details = _scdl(source, m)
    value = details.pop("value")
    # a compacted sketch: exact up to its grid, bounded past it (or refused)
    bound = sketch_error_bound(
        y_true, "soft_binned_cdl", m=m, levels=details["levels"]
    )
    if bound is not None:
        details["error_bound"] = bound
    if not return_details:
        return value
    from sklearn.utils import Bunch

    return value, Bunch(**details)


class _Details(dict):
    """SCDL's details within skcal: a dict read by attribute, as a Bunch is.

    Users get scikit-learn's ``Bunch`` (made at the public function's
    return); the cores do without it because importing scikit-learn costs
    about 1.2 s, more than ``python -m skcal report`` at 1e5 rows computes.
    """

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None


def scdl_core(statistic, m=None, details=False):
    """SCDL (``m=None``) or ``SCDL_m`` of a grouped statistic; no validation."""
    result = _scdl(_GroupedSource(statistic), m)
    value = result.pop("value")
    return (value, result) if details else value


def _scdl(source, m):
    if m is None:
        return _self_balancing_scdl(source, _dense_levels(source.n))
    value = float(_scdl_m(source, m))
    return _Details(
        value=value,
        m=m,
        levels=np.array([m]),
        scdl_m=np.array([value]),
        swap_regret_bound=2.0 * value + 2.0 / m,
        exact=True,
        upper_bound=value,
    )


class _RowSource:
    """Validated rows: dense soft bins in one pass, grouped on demand.

    ``w`` None (or the stride-0 ones of the compact validator) means unit
    weights. ``first`` is ``(m, bins)`` of a pass already made (the one
    that validated plain input), handed out once by ``bins(m)``.
    """

    def __init__(self, y, p, w, total=None, first=None):
        if w is not None and w.strides == (0,) and w.shape[0] and w[0] == 1.0:
            w = None
        elif w is not None:
            # the measures' weight scale (exact; see canonical_weights)
            w = canonical_weights(np.ascontiguousarray(w, dtype=np.float64))
        if y.dtype == np.bool_:
            y = y.view(np.uint8)
        if y.dtype not in (np.uint8, np.intc, np.int64, np.float64):
            y = y.astype(np.float64)
        self.y, self.p, self.w = np.ascontiguousarray(y), np.ascontiguousarray(p), w
        self.n = p.shape[0]
        self.total = (float(self.n) if w is None else w.sum()) if total is None else total
        self._first = first
        self._grouped = None

    def bins(self, m):
        if self._first is not None and self._first[0] == m:
            bins, self._first = self._first[1], None
            return bins
        bins = _dense_bins(self.y, self.p, self.w, m)
        if bins is None:  # validated rows always pass the kernel's checks
            raise ValueError("soft-bin rows must be validated: labels 0/1, "
                             "predictions in [0, 1], weights finite and >= 0.")
        return bins

    def _weights(self):
        return np.broadcast_to(1.0, self.n) if self.w is None else self.w

    def grouped(self):
        if self._grouped is None:
            self._grouped = group(self.y, self.p, self._weights())
        return self._grouped


def _checked_row_source(y_true, y_prob, sample_weight, pos_label, multiclass, m):
    """A ``_RowSource`` of plain input validated within its first dense pass.

    None when the input is not plain (see ``plain_binary_rows``), a row
    fails the kernel's checks or the total weight is not positive and
    finite: the caller then validates in full, with its usual errors.
    """
    rows = plain_binary_rows(
        y_true, y_prob, sample_weight, pos_label=pos_label, multiclass=multiclass
    )
    if rows is None:
        return None
    y, p, w = rows
    w = plain_weights_on_scale(w)
    if w is False:
        return None
    n = p.shape[0]
    levels = _dense_levels(n)
    level = 2 ** levels[0] if m is None else m
    if level > 2 ** levels[-1]:  # a given m on the sparse path: no dense pass
        return None
    # as check_sample_weight: the sum of the weights, positive and finite
    # (NaN or negative weights make the kernel fail below)
    if w is None:
        total = float(n)
    else:
        with np.errstate(over="ignore"):
            total = w.sum()
    if not 0.0 < total < np.inf:
        return None
    bins = _dense_bins(y, p, w, level)
    if bins is None:
        return None
    return _RowSource(y, p, w, total=total, first=(level, bins))


class _GroupedSource:
    """A grouped statistic: its soft bins weigh each distinct value once."""

    def __init__(self, statistic):
        self.statistic = statistic
        self.n = len(statistic)
        self.total = statistic.total

    def bins(self, m):
        s = self.statistic
        ones = np.ones(self.n, dtype=np.uint8)
        bins = np.zeros((m + 1, 2))
        soft_bin(s.values, ones, s.weights, bins)
        positive = np.zeros((m + 1, 2))
        soft_bin(s.values, ones, s.positives, positive)
        bins[:, 1] = positive[:, 0]
        return bins

    def grouped(self):
        return self.statistic


def _check_m(m):
    if m is None:
        return None
    if isinstance(m, bool) or not isinstance(m, numbers.Integral):
        raise TypeError(f"m must be None or a positive integer, got {m!r}.")
    if not 1 <= m <= 2**_MAX_LEVEL:
        raise ValueError(f"m must be in [1, 2**{_MAX_LEVEL}], got {m}.")
    return int(m)


def _dense_levels(n):
    """Exponents of the finest levels of the dense passes for n samples."""
    lo, hi = _FIRST_DENSE_LEVELS
    first = min(hi, max(lo, int(np.ceil(np.log2(32 * np.sqrt(n))))))
    second = min(_MAX_DENSE_LEVEL, max(first, int(np.ceil(np.log2(n)))))
    return (first,) if second == first else (first, second)


def _dense_bins(y, p, w, m):
    """Soft-bin sums (pi_j, pi_j q_j) at level m, in weight units, one pass.

    The rows are checked as they are read (``checked_soft_bin``): None when
    one is not plain. ``w`` None means unit weights.
    """
    tables = np.zeros((2, m + 1))  # per grid point: negatives, positives
    if not checked_soft_bin(p, y, w, tables):
        return None
    bins = np.empty((m + 1, 2))
    np.add(tables[0], tables[1], out=bins[:, 0])
    bins[:, 1] = tables[1]
    return bins


def _scdl_m(source, m):
    """SCDL_m for one m: dense up to the finest dense size for n, else sparse."""
    if m <= 2 ** _dense_levels(source.n)[-1]:
        return scdl_level(source.bins(m), np.empty((3, m + 2))) / source.total
    return _sparse_level(source.grouped(), m) / source.total


def _sparse_level(statistic, m):
    return _sparse_scdl_level(
        statistic.values, statistic.weights, statistic.positives, m
    )


def _self_balancing_scdl(source, dense_levels):
    """SCDL with m* of Bairaktari et al., Definition 3.2 / Lemma 3.3; returns the details.

    ``scdl[k]`` holds SCDL_{2**k}. The condition of Definition 3.2 at
    m = 2**k, SCDL_{2m} >= 1/m, is monotone in k (Lemma 3.2): the dense
    levels are scanned upwards and the sparse ones bisected.
    """
    total = source.total
    scdl = {}
    bottom = 1
    for finest in dense_levels:
        # one pass at the finest level, the coarser ones by the exact identity
        pyramid = [source.bins(2**finest)]
        for k in range(finest - 1, bottom - 1, -1):
            pyramid.append(np.empty((2**k + 1, 2)))
            coarsen(pyramid[-2], pyramid[-1])
        work = np.empty(3 * (2**finest + 2))  # scratch shared by the levels
        for k, bins in enumerate(reversed(pyramid), start=bottom):
            scdl[k] = scdl_level(bins, work[: 3 * (2**k + 2)].reshape(3, -1)) / total
            if k > 1 and scdl[k] >= 2.0 ** (1 - k):  # the condition at m = 2**(k-1)
                return _search_result(scdl, k - 1, exact=True)
        bottom = finest + 1

    def level(k):
        if k not in scdl:
            scdl[k] = _sparse_level(source.grouped(), 2**k) / total
        return scdl[k]

    def found(k):
        return level(k + 1) >= 2.0**-k

    lo, hi = bottom - 1, _MAX_LEVEL - 1  # the condition fails below lo
    if found(hi):
        while lo < hi:
            mid = (lo + hi) // 2
            if found(mid):
                hi = mid
            else:
                lo = mid + 1
        level(lo)
        return _search_result(scdl, lo, exact=True)
    # SCDL_{2m} >= SCDL_m >= 1/m at m = 2**40 would make m* the cap itself
    return _search_result(scdl, _MAX_LEVEL, exact=scdl[_MAX_LEVEL] >= 2.0**-_MAX_LEVEL)


def _search_result(scdl, star, exact):
    """The ``soft_binned_cdl`` details, with ``value`` still in it."""
    m_star = 2**star
    value = float(max(scdl[star], 1.0 / m_star) if exact else scdl[star])
    levels = sorted(scdl)
    return _Details(
        value=value,
        m=m_star,
        levels=np.array([2**k for k in levels], dtype=np.int64),
        scdl_m=np.array([scdl[k] for k in levels]),
        swap_regret_bound=2.0 * value + 2.0 / m_star,
        exact=exact,
        upper_bound=value if exact else 1.0 / m_star,
    )


def _sparse_scdl_level(values, wsum, wysum, m):
    """SCDL_m (in weight units) touching only the non-empty bins.

    The same sweep as the dense kernel ``scdl_level``, over the sorted
    positions where some bin's left or right term starts or stops. Between
    two such positions the set of positive terms is fixed, so F(i) is linear
    there and its maximum over the run is at one of the run's two ends.
    Costs O(k log k) for k distinct predictions, independent of m.
    """
    x = values * m
    j = np.minimum(np.floor(x), m - 1)
    f = x - j
    bins, inverse = np.unique(
        np.concatenate([j, j + 1]).astype(np.int64), return_inverse=True
    )
    b = np.bincount(inverse, np.concatenate([wsum * (1.0 - f), wsum * f]))
    a = np.bincount(inverse, np.concatenate([wysum * (1.0 - f), wysum * f]))
    keep = b > 0
    bins, a, b = bins[keep], a[keep], b[keep]
    mq = m * a / b
    # left term on bins <= i <= ceil(m q) - 2, right term on floor(m q) + 1 <= i < bins
    hi = np.minimum(np.ceil(mq) - 2, m - 1).astype(np.int64)
    lo = np.maximum(np.floor(mq) + 1, 0).astype(np.int64)
    left, right = hi >= bins, lo <= bins - 1
    zl, zr = np.zeros(left.sum()), np.zeros(right.sum())
    pos = np.concatenate([bins[left], hi[left] + 1, lo[right], bins[right], [0, m]])
    d_a = np.concatenate([a[left], -a[left], -a[right], a[right], [0.0, 0.0]])
    d_bl = np.concatenate([b[left], -b[left], zr, zr, [0.0, 0.0]])
    d_br = np.concatenate([zl, zl, b[right], -b[right], [0.0, 0.0]])
    order = np.argsort(pos, kind="stable")
    pos = pos[order]
    # state after every event at a position: the last event of each run
    last = np.append(pos[1:] != pos[:-1], True)
    s_a = np.cumsum(d_a[order])[last]
    s_bl = np.cumsum(d_bl[order])[last]
    s_br = np.cumsum(d_br[order])[last]
    start = pos[last]
    end = np.append(start[1:] - 1, start[-1])

    def objective(i):
        return s_a - ((i + 1) * s_bl - i * s_br) / m

    return float(max(objective(start).max(), objective(end).max(), 0.0))


register(
    MeasureSpec(
        name="soft_binned_cdl",
        class_name="SoftBinnedCDL",
        # the public function reads the boundary's canonical form as y_true
        core=soft_binned_cdl,
        function=soft_binned_cdl,
        options={"m": None},
        label="soft-binned decision loss",
        docs="cost of acting on the scores, for a decision maker",
        grouped_core=lambda statistic, m=None, **options: scdl_core(statistic, m),
        tester_name="scdl",
        interval="analytic",
        max_value=float("inf"),
        rank=3,
    )
)
