"""Binned expected calibration error (ECE) and its l2 and max variants."""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, overload

import numpy as np

from .._grouped import binary_statistic, group, sketch_error_bound
from .._input import (
    binary_rows,
    canonical_weights,
    check_size,
    plain_binary_rows,
    plain_weights_on_scale,
)
from .._kernels._binning import checked_uniform_bin_sums, uniform_bin_sums
from .._specs import MeasureSpec, register

if TYPE_CHECKING:
    from typing import Literal

    from numpy.typing import ArrayLike
    from sklearn.utils import Bunch

    from .._typing import BinaryLabels, Multiclass, PosLabel, Value

__all__ = ["binned_ece", "ece_core"]

_STRATEGIES = ("uniform", "quantile")
_NORMS = ("l1", "l2", "max")


@overload
def binned_ece(
    y_true: BinaryLabels,
    y_prob: ArrayLike | None = None,
    *,
    sample_weight: ArrayLike | None = None,
    pos_label: PosLabel = None,
    multiclass: Multiclass = "top-label",
    labels: ArrayLike | None = None,
    n_bins: int = 15,
    strategy: Literal["uniform", "quantile"] = "uniform",
    norm: Literal["l1", "l2", "max"] = "l1",
    return_details: Literal[False] = False,
) -> float: ...


@overload
def binned_ece(
    y_true: BinaryLabels,
    y_prob: ArrayLike | None = None,
    *,
    sample_weight: ArrayLike | None = None,
    pos_label: PosLabel = None,
    multiclass: Multiclass = "top-label",
    labels: ArrayLike | None = None,
    n_bins: int = 15,
    strategy: Literal["uniform", "quantile"] = "uniform",
    norm: Literal["l1", "l2", "max"] = "l1",
    return_details: Literal[True],
) -> tuple[float, Bunch]: ...


def binned_ece(
    y_true: BinaryLabels,
    y_prob: ArrayLike | None = None,
    *,
    sample_weight: ArrayLike | None = None,
    pos_label: PosLabel = None,
    multiclass: Multiclass = "top-label",
    labels: ArrayLike | None = None,
    n_bins: int = 15,
    strategy: Literal["uniform", "quantile"] = "uniform",
    norm: Literal["l1", "l2", "max"] = "l1",
    return_details: bool = False,
) -> Value:
    """Binned expected calibration error, with l1, l2 or max norm.

    On the weighted empirical distribution, with bins ``B_1, ..., B_K`` of
    the predictions, bin masses ``pi_k = P(p in B_k)`` and biases
    ``g_k = E[y - p | p in B_k]``::

        l1  (ECE): sum_k pi_k |g_k|  =  sum_k |sum_{p_i in B_k} b_i|,
        l2       : sqrt(sum_k pi_k g_k**2),
        max (MCE): max_{k : pi_k > 0} |g_k|,

    with ``b_i = w_i (y_i - p_i) / sum_j w_j``; empty bins are skipped. By
    Jensen's inequality ``l1 <= l2 <= max``. This is the ECE of the
    literature, which compares each bin's mean outcome with its mean
    prediction; it is not continuous in the predictions (it jumps when one
    crosses a bin edge). Bairaktari et al. (Section 1) analyses a variant that
    rounds predictions down to the bin's left edge, ``2 ECE(D_m)``, which
    bounds swap regret; use :func:`soft_binned_cdl` for such guarantees.

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
    n_bins : int, default=15
        Number of bins ``K``; the bin structure always has exactly this many
        bins, some possibly empty.
    strategy : {"uniform", "quantile"}, default="uniform"
        ``"uniform"``: bins ``[k/K, (k+1)/K)``, the last one closed at 1, with
        the doubles ``k/K`` as edges; one O(n) pass. ``"quantile"``: bins of
        equal weight as far as ties allow. Equal predictions are never split:
        a distinct prediction whose smaller predictions hold a fraction ``c``
        of the total weight goes to bin ``min(floor(K c), K - 1)`` (with
        ``K c`` within the rounding of its sums of an integer taken as that
        integer, so that scaling the weights does not move a bin edge). A
        prediction holding more than ``1/K`` of the weight thus covers
        several bins' share and leaves the bins after it empty (all of them
        when every prediction is equal). O(n log n).
    norm : {"l1", "l2", "max"}, default="l1"
        How the bin biases are combined (see above).
    return_details : bool, default=False
        Also return a :class:`~sklearn.utils.Bunch` of per-bin statistics.

    Returns
    -------
    value : float
        The binned calibration error, in ``[0, 1]``.
    details : Bunch
        Only with ``return_details=True``, arrays of shape ``(n_bins,)``:
        ``bin_count`` (rows of positive weight; distinct predictions of
        positive weight when ``y_true`` is a sketch), ``bin_weight`` (``pi_k``),
        ``bin_confidence`` (mean prediction ``E[p | B_k]``),
        ``bin_accuracy`` (``E[y | B_k]``), ``bin_lower`` and ``bin_upper``
        (smallest and largest prediction of positive weight in the bin);
        NaN for empty bins. For a compacted ``CalibrationSketch`` also
        ``error_bound`` (0.0 when ``n_bins`` is a power of two at most the
        sketch's ``2**level``; see ``skcal.sketch.CalibrationSketch``).

    Examples
    --------
    >>> from skcal import binned_ece
    >>> y_true = [0, 1, 1, 1]
    >>> y_prob = [0.2, 0.4, 0.7, 0.9]
    >>> round(binned_ece(y_true, y_prob, n_bins=2), 6)
    0.2
    >>> round(binned_ece(y_true, y_prob, n_bins=2, norm="max"), 6)
    0.2
    >>> value, details = binned_ece(
    ...     y_true, y_prob, n_bins=2, strategy="quantile", return_details=True)
    >>> details.bin_count.tolist(), details.bin_accuracy.tolist()
    ([2, 2], [0.5, 1.0])
    """
    if isinstance(n_bins, bool) or not isinstance(n_bins, numbers.Integral):
        raise TypeError(f"n_bins must be a positive integer, got {n_bins!r}.")
    if n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer, got {n_bins}.")
    check_size(n_bins, "n_bins", what="bins")
    if strategy not in _STRATEGIES:
        raise ValueError(f"strategy must be one of {_STRATEGIES}, got {strategy!r}.")
    if norm not in _NORMS:
        raise ValueError(f"norm must be one of {_NORMS}, got {norm!r}.")
    n_bins = int(n_bins)
    dask = any(type(a).__module__.startswith("dask") for a in (y_true, y_prob, sample_weight))
    if dask or callable(getattr(y_true, "grouped_statistic", None)):  # a sketch
        # Dask input: binary_statistic merges one exact sketch per partition
        statistic = binary_statistic(
            y_true, y_prob, sample_weight, pos_label=pos_label, multiclass=multiclass,
            labels=labels,
            rescale=True,
        )
        # a compacted sketch: bounded (or refused) before anything is computed
        bound = sketch_error_bound(
            y_true, "binned_ece", n_bins=n_bins, strategy=strategy, norm=norm
        )
        value, bin_of_value, wsum = _ece_grouped(statistic, n_bins, strategy, norm)
        if not return_details:
            return value
        y, p, w = _rows_of(statistic)
        details = _bin_details(y, p, w, bin_of_value, wsum)
        if bound is not None:
            details["error_bound"] = bound
        return value, details
    if strategy == "uniform" and not return_details:
        # plain input: validated within the one pass over the rows
        value = _checked_uniform_ece(
            y_true, y_prob, sample_weight, pos_label, multiclass, n_bins, norm
        )
        if value is not None:
            return value
    y, p, w = binary_rows(
        y_true,
        y_prob,
        sample_weight,
        pos_label=pos_label,
        multiclass=multiclass,
        labels=labels,
    )
    w = canonical_weights(w)
    if strategy == "uniform":
        # one pass over the rows, no sort
        edges = _uniform_edges(n_bins)
        sums = np.zeros((n_bins, 2))
        uniform_bin_sums(p, y, w, edges, sums)
        wsum, residual = sums[:, 0], sums[:, 1]  # residual: sum of w (y - p)
        value = _combine(wsum, residual, norm)
        if not return_details:
            return value
        # the kernel's bins: the last edge at or below p
        row_bin = np.searchsorted(edges[1:-1], p, side="right")
        return value, _bin_details(y, p, w, row_bin, wsum)
    statistic = group(y, p, w)
    value, bin_of_value, wsum = _ece_grouped(statistic, n_bins, strategy, norm)
    if not return_details:
        return value
    row_bin = bin_of_value[np.searchsorted(statistic.values, p)]
    return value, _bin_details(y, p, w, row_bin, wsum)


def ece_core(statistic, n_bins=15, strategy="uniform", norm="l1"):
    """Binned ECE of a grouped statistic (options already checked); no validation."""
    return _ece_grouped(statistic, n_bins, strategy, norm)[0]


def _checked_uniform_ece(y_true, y_prob, sample_weight, pos_label, multiclass, n_bins, norm):
    """Uniform-bin ECE of plain input, checked row by row in its one pass.

    None when the input is not plain (see ``plain_binary_rows``), a row
    fails the kernel's checks, or the total weight is not positive or is
    too large to sum safely: the caller then validates in full, with its
    usual errors. The sums are those of ``uniform_bin_sums`` bit for bit.
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
    sums = np.zeros((n_bins, 2))
    if not checked_uniform_bin_sums(p, y, w, _uniform_edges(n_bins), sums):
        return None
    # as check_sample_weight: a positive sum; far below overflow, where that
    # function would rescale the weights (1e300 leaves room for the rounding
    # of any summation order)
    if w is not None:
        with np.errstate(over="ignore", invalid="ignore"):
            if not 0.0 < sums[:, 0].sum() <= 1e300:
                return None
    return _combine(sums[:, 0], sums[:, 1], norm)


def _uniform_edges(n_bins):
    return np.arange(n_bins + 1) / n_bins


def _ece_grouped(statistic, n_bins, strategy, norm):
    """``(value, bin of each distinct value, weight per bin)``."""
    values, gsum = statistic.values, statistic.weights
    if strategy == "uniform":
        # the bins of uniform_bin_sums: the last edge at or below the value
        group_bin = np.searchsorted(_uniform_edges(n_bins)[1:-1], values, side="right")
    else:
        before = np.concatenate([[0.0], np.cumsum(gsum)[:-1]])
        share = n_bins * before / statistic.total
        # a share within the rounding of its sums of a bin edge k is on the
        # edge: the bins then do not change when every weight is scaled
        nearest = np.round(share)
        slack = (gsum.shape[0] + 2) * np.finfo(np.float64).eps * share
        share = np.where(np.abs(share - nearest) <= slack, nearest, share)
        group_bin = np.minimum(np.floor(share).astype(np.intp), n_bins - 1)
    wsum = np.bincount(group_bin, gsum, n_bins)
    residual = np.bincount(group_bin, statistic.positives - gsum * values, n_bins)
    return _combine(wsum, residual, norm), group_bin, wsum


def _combine(wsum, residual, norm):
    """The l1, l2 or max combination of the bin biases ``|sum w (y - p)|``."""
    total = wsum.sum()
    bias = np.abs(residual)
    full = wsum > 0
    if norm == "l1":
        value = bias.sum() / total
    elif norm == "l2":
        value = np.sqrt((bias[full] ** 2 / wsum[full]).sum() / total)
    else:
        value = (bias[full] / wsum[full]).max()
    return float(value)


def _rows_of(statistic):
    """One row per distinct value, outcome the positive fraction (for details)."""
    w = statistic.weights
    with np.errstate(invalid="ignore", divide="ignore"):
        y = np.where(w > 0, statistic.positives / w, 0.0)
    return y, statistic.values, w


def _bin_details(y, p, w, row_bin, wsum):
    """Per-bin statistics for ``return_details`` (not on the fast path)."""
    n_bins = wsum.shape[0]
    wysum = np.bincount(row_bin, w * y, n_bins)
    wpsum = np.bincount(row_bin, w * p, n_bins)
    positive = w > 0
    count = np.bincount(row_bin[positive], minlength=n_bins)
    lower = np.full(n_bins, np.inf)
    upper = np.full(n_bins, -np.inf)
    np.minimum.at(lower, row_bin[positive], p[positive])
    np.maximum.at(upper, row_bin[positive], p[positive])
    full = wsum > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        confidence = np.where(full, wpsum / wsum, np.nan)
        accuracy = np.where(full, wysum / wsum, np.nan)
    from sklearn.utils import Bunch
    return Bunch(
        bin_count=count,
        bin_weight=wsum / wsum.sum(),
        bin_confidence=confidence,
        bin_accuracy=accuracy,
        bin_lower=np.where(full, lower, np.nan),
        bin_upper=np.where(full, upper, np.nan),
    )


register(
    MeasureSpec(
        name="binned_ece",
        class_name="BinnedECE",
        # the public function reads the boundary's canonical form as y_true
        core=binned_ece,
        function=binned_ece,
        options={"n_bins": 15, "strategy": "uniform", "norm": "l1"},
        label="binned ECE (15 bins)",
        docs="classic error on 15 equal-width bins (bin-dependent)",
        grouped_core=lambda statistic, n_bins=15, strategy="uniform", norm="l1", **_: (
            ece_core(statistic, n_bins, strategy, norm)
        ),
        tester_name="binned_ece",
        rank=5,
    )
)
