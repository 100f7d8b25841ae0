"""The grouped sufficient statistic of binary calibration data.

Every binary measure of skcal is a functional of the weighted empirical
distribution ``D = sum_i w_i delta(p_i, y_i) / sum_i w_i``, and so of

    G = (v_1 < ... < v_K;  W_k = sum_{p_i = v_k} w_i;  P_k = sum_{p_i = v_k} w_i y_i),

the distinct predictions in increasing order with, per value, the total
weight and the total weight of positive outcomes. Public measures validate
once, build ``G`` with one sort (:func:`group`), and hand it to a private
core that does no validation. The calibration tester redraws ``P`` given
``(v, W)`` under its null, and sketches merge ``G`` by a sorted merge.

Conventions, documented once:

* ``values`` is float64, strictly increasing, in ``[0, 1]``;
* ``weights`` and ``positives`` are float64, ``0 <= positives <= weights``
  (groups of weight zero are kept: they carry no mass and every core
  ignores them);
* ``total`` is ``weights.sum()``, positive.
"""

import numpy as np

from ._input import (
    check_binary_calibration_input,
    no_second_input,
    power_of_two_scale,
)
from ._kernels._interval import (
    group_label_keys,
    group_label_keys32,
    group_prefix_keys,
    group_radix,
    group_sorted,
    index_bits,
    label_keys,
    label_keys32,
    prefix_keys,
)

__all__ = [
    "MAX_LEVEL",
    "CompactSums",
    "ExactSums",
    "cells_of",
    "group_exact",
    "sums_overflow",
    "unique_inverse",
    "GroupedStatistic",
    "binary_statistic",
    "canonical_statistic",
    "group",
    "key_sort",
    "sketch_error_bound",
    "sorted_label_keys",
]


class GroupedStatistic:
    """Distinct predictions with their weight and positive-weight sums.

    Parameters
    ----------
    values : ndarray of shape (K,)
        Distinct predictions, strictly increasing, in ``[0, 1]``.
    weights : ndarray of shape (K,)
        Total weight at each value.
    positives : ndarray of shape (K,)
        Total weight of positive outcomes at each value.

    Attributes
    ----------
    work : ndarray of shape (rows, n) or None
        Spare float64 rows allocated with the arrays by ``group(..., work=rows)``
        for a measure's kernel (see ``_one_block``); None otherwise, and not
        kept by a copy, a pickle or ``with_positives``.
    """

    __slots__ = ("values", "weights", "positives", "total", "work")

    def __init__(self, values, weights, positives):
        self.values = values
        self.weights = weights
        self.positives = positives
        self.total = float(weights.sum())
        self.work = None

    def __len__(self):
        return self.values.shape[0]

    def __repr__(self):
        return f"GroupedStatistic(n_values={len(self)}, total={self.total!r})"

    def __getstate__(self):
        return (self.values, self.weights, self.positives)

    def __setstate__(self, state):
        self.__init__(*state)

    def residuals(self):
        """``b_k = (P_k - v_k W_k) / total``: the bias each value contributes."""
        return (self.positives - self.values * self.weights) / self.total

    def with_positives(self, positives):
        """The same values and weights with other positive sums (a resample).

        The total weight is the same too: it is not summed again (the tester
        calls this once per null draw).
        """
        new = GroupedStatistic.__new__(GroupedStatistic)
        new.values = self.values
        new.weights = self.weights
        new.positives = positives
        new.total = self.total
        new.work = None
        return new


def _numpy_simd_sort(version=None, features=None):
    """Whether ``np.sort`` of 64-bit numbers runs numpy's SIMD sort (x86-simd-sort) here.

    numpy >= 1.25 dispatches its AVX-512 version where the CPU has
    AVX512_SKX, and numpy >= 2.0 its AVX2 version too (numpy 2.4 names that
    group X86_V3; ``NPY_DISABLE_CPU_FEATURES`` switches either off). With
    either, grouping by one ``np.sort`` of integer keys (``label_keys``,
    ``prefix_keys``) beats the radix sort of ``group``: at 10**7 rows here
    95 ms against 360 ms with AVX-512, and with numpy's AVX2 sort (its
    AVX-512 switched off) 150 against 370 ms, weighted 220 against 360 ms
    (``benchmarks/bench_grouping.py [--weighted]``,
    ``results/bench_grouping_avx2.txt``).
    Without a SIMD sort (numpy's scalar sort: 0.78 s for 10**7 doubles, as on
    the AVX2 hosts measured before, whose numpy did not sort with AVX2) the
    radix sort was 0.85x one ``np.sort``, faster than any way through it.
    ``version`` and ``features`` (numpy's ``__cpu_features__``) are for tests.
    """
    if features is None:
        try:
            from numpy._core._multiarray_umath import __cpu_features__ as features
        except ImportError:  # numpy < 2
            from numpy.core._multiarray_umath import __cpu_features__ as features
    if version is None:
        version = tuple(int(part) for part in np.__version__.split(".")[:2])
    avx2 = features.get("X86_V3", features.get("AVX2"))
    return bool(
        (version >= (1, 25) and features.get("AVX512_SKX"))
        or (version >= (2, 0) and avx2)
    )


# Unit-weight 0/1 rows: group by one np.sort of integer keys (True), by the
# radix sort (False); None: the first where numpy has a SIMD sort. The
# statistic is the same either way (counts are exact in any order).
_KEY_SORT = None
_KEY_SORT_AUTO = _numpy_simd_sort()


def key_sort():
    """Whether 0/1 rows are grouped by one ``np.sort`` of integer keys here (see above)."""
    return _KEY_SORT_AUTO if _KEY_SORT is None else _KEY_SORT


def group(y, p, w, work=0):
    """Sort by ``p`` and merge equal predictions into a :class:`GroupedStatistic`.

    Parameters
    ----------
    y, p, w : ndarray of shape (n,)
        Validated outcomes in {0, 1}, predictions in [0, 1] and weights (the
        compact forms of ``check_binary_calibration_input``, uint8 or int64
        outcomes and stride-0 unit weights, are converted here).
    work : int, default=0
        Rows of ``n`` float64 numbers to allocate with the outputs, in one
        block (``_one_block``), for the measure's kernel: the statistic's
        ``work`` attribute (None without).

    Notes
    -----
    0/1 outcomes (every binary input) are grouped by one least-significant-
    digit radix sort of the predictions' bits carrying the weights and the
    outcome (``group_radix`` in ``_kernels/_interval.pyx``): linear passes
    over contiguous memory, where an argsort and the gathers it needs jump
    about memory. Measured at n = 10**7: 0.85x one ``np.sort`` of the
    predictions with unit weights (two value sorts and a merge took 1.4 to
    1.8x), 0.3x an ``np.argsort`` with weights (the argsort path: 1.4x).
    Equal predictions are summed in input order (the sort is stable), so
    unit weights give the exact counts, bit for bit as before. Where numpy
    has a SIMD sort (``_numpy_simd_sort``: AVX-512, or AVX2 from numpy 2.0
    on) its sort is 4 to 5 times faster than the radix sort, and
    unit-weight rows are grouped instead by
    one ``np.sort`` of integer keys, twice the prediction's bits plus the
    outcome (``label_keys``; a finite prediction >= 0 has bits below 2**63),
    written into ``values`` and grouped there in place
    (``group_label_keys``): the same counts, and about 25 bytes per sample.
    Where every prediction is a float32 value (the output of most
    deep-learning and boosting libraries, a float32 or float16 array) the
    keys are of 32 bits (``label_keys32``, in the upper half of ``values``),
    which numpy sorts about twice as fast: at 10**7 rows of float32-rounded
    predictions the grouping took 71 instead of 100 ms, the same statistic
    bit for bit; on float64 data ``label_keys32`` gives up within the first
    256 rows.
    Weighted rows there are grouped by one ``np.sort`` of keys holding a
    prefix of the prediction's bits above the row index (``prefix_keys``;
    on [0.5, 1] the bits of ``1 - p``, mirrored, so that predictions piled
    up just below 1 are told apart as well as those just above 0),
    then read in that order through the index (prefetched gathers) and the
    few rows of one prefix sorted by full prediction (``group_prefix_keys``):
    the radix sort's statistic bit for bit (stable: equal predictions summed
    in input order), at half its time at 10**7 and 25 bytes per sample. A
    prefix crowded with distinct predictions out of order (more than 8
    insertion moves per row in all) makes it decline, and the radix sort
    groups instead. (With the plain bits of p a confident model's
    predictions crowded the prefixes near 1: at 10**7 weighted rows
    ``p = sigmoid(3 logit(q))`` declined, and every sorting measure took
    1.3 to 1.4 times an ``np.argsort``; mirrored, 0.55 to 0.7 times.)
    Peak extra memory of the radix sort is about 33 bytes per sample (three
    output arrays, which the sort uses as buffers, one work array and the
    labels as bytes), plus a contiguous copy of stride-0 or strided
    weights; other outcomes go through ``np.argsort`` (56 bytes per sample).
    """
    n = p.shape[0]
    # one block for the three outputs and the caller's work rows: see _one_block
    block = _one_block(n, work)
    values, weights, positives = block[0], block[1], block[2]
    if y.dtype in (np.uint8, np.int64, np.bool_) or _zero_one(y):
        # 0/1 labels: a radix sort carrying the weights (no argsort, no
        # random gathers); the label rides in the weight's sign
        labels = y.view(np.uint8) if y.dtype in (np.uint8, np.bool_) else (
            (y != 0).view(np.uint8)
        )
        p = np.ascontiguousarray(p, dtype=np.float64)
        if _unit_weights(w):
            if key_sort():
                # one np.sort (numpy's SIMD sort) of keys that carry the
                # outcome in their lowest bit, in the memory of ``values``
                keys = sorted_label_keys(p, labels, values)
                if keys is not None:
                    grouping = group_label_keys32 if keys.dtype == np.uint32 else group_label_keys
                    k = grouping(keys, values, weights, positives)
                    return _statistic(block, k, work)
            w = np.empty(0)
        else:
            w = np.ascontiguousarray(np.broadcast_to(w, p.shape), dtype=np.float64)
            if key_sort() and n < 2**40:
                # one np.sort of keys holding a prefix of p and the row index,
                # then the rows gathered in that order (they carry no payload)
                b = index_bits(n)
                keys = values.view(np.uint64)
                if prefix_keys(p, keys, b):
                    keys.sort()
                    k = group_prefix_keys(keys, p, labels, w, values, weights, positives, b)
                    if k >= 0:
                        return _statistic(block, k, work)
                # many distinct predictions share a prefix (or a prediction is
                # negative or not finite): the radix sort
        k = group_radix(p, labels, w, values, weights, positives, np.empty(n))
    else:
        y = np.ascontiguousarray(y, dtype=np.float64)
        w = np.ascontiguousarray(w, dtype=np.float64)
        order = np.argsort(p)
        k = group_sorted(p, y, w, order, values, weights, positives)
    return _statistic(block, k, work)


def sorted_label_keys(p, labels, row):
    """The sorted keys of unit-weight rows ``(p, labels)``, in the memory of ``row``; or None.

    ``row`` holds n 8-byte numbers (the grouping's ``values``, or any work
    row). Keys of 32 bits (``label_keys32``, in its upper half) where every
    prediction is a float32 value, which numpy sorts about twice as fast;
    else of 64 bits (``label_keys``, all of it); None if a prediction is
    negative, infinite or NaN. ``label_keys32`` gives up within the first
    256 rows of float64 data. Either key orders the rows by prediction,
    outcome 0 first, so ``group_label_keys(32)`` and ``cutoff_label_keys``
    read them alike.
    """
    keys = row.view(np.uint32)[p.shape[0]:]
    if label_keys32(p, labels, keys):
        keys.sort()
        return keys
    keys = row.view(np.uint64)
    if label_keys(p, labels, keys):
        keys.sort()
        return keys
    return None


def _statistic(block, k, work):
    """The statistic of the first ``k`` columns of ``group``'s block, with its work rows."""
    statistic = GroupedStatistic(block[0, :k], block[1, :k], block[2, :k])
    if work:
        statistic.work = block[3:]
    return statistic


def canonical_statistic(statistic, return_scale=False):
    """``statistic`` with weights and positives scaled by a power of two.

    The largest group weight is brought into ``[1, 2)`` (see
    ``skcal._input.power_of_two_scale``): exact, so every measure of the
    result equals the measure of ``statistic`` in exact arithmetic, and the
    value no longer depends on the scale of the weights (subnormal weights,
    totals that underflow or overflow). A new statistic is returned; the
    caller's (a sketch's cached one) is left as it is. With
    ``return_scale=True`` also the exponent ``e`` of the factor ``2**e``.
    """
    weights = statistic.weights
    if weights.shape[0] and not np.all(np.isfinite(weights)):
        raise ValueError(
            "The weights held by y_true are infinite: their sum overflows "
            "float64. Scale sample_weight down (every measure depends on the "
            "weights only through w / sum(w)) and summarise the rows again."
        )
    e = power_of_two_scale(weights.max()) if weights.shape[0] else 0
    if e != 0:
        statistic = GroupedStatistic(
            statistic.values, np.ldexp(weights, e), np.ldexp(statistic.positives, e)
        )
    return (statistic, e) if return_scale else statistic


def _one_block(n, work=0):
    """A (3 + work, n) float64 array: the three outputs of ``group``, then work rows.

    One block for everything a measure's call allocates in proportion to
    ``n``, rather than an array each: glibc's malloc raises its mmap
    threshold to the size of the largest block it has unmapped (up to
    32 MiB) and its trim threshold to twice that, so after a first call the
    block is served from the heap, and the heap is no longer given back to
    the system at the end of each call only to be faulted in again by the
    next. With three arrays, a measure at 10**5 rows called in a loop paid
    about 550 page faults a call (2.2 MB), 0.9 ms of a cutoff error's
    1.55 ms (``benchmarks/bench_faults.py``). ``work`` rows are for the
    measure's kernel (``GroupedStatistic.work``).
    """
    return np.empty((3 + work, n))


def _zero_one(y):
    """True for float outcomes that are all 0 or 1 (a binary y of the full validator)."""
    return y.dtype == np.float64 and bool(np.all((y == 0.0) | (y == 1.0)))


def _unit_weights(w):
    """True for the stride-0 unit weights of the compact validator."""
    return w.ndim == 1 and w.strides == (0,) and w.shape[0] > 0 and w[0] == 1.0


def sketch_error_bound(y_true, name, **options):
    """The error bound of a measure computed from a compacted calibration sketch.

    None unless ``y_true`` is a compacted ``CalibrationSketch``; the measure
    functions then add it to their details as ``error_bound``. It raises
    ``ValueError`` for options a compacted sketch cannot bound.
    """
    bound = getattr(y_true, "_error_bound", None)
    if callable(bound) and getattr(y_true, "exact", True) is False:
        return bound(name, **options)
    return None


def binary_statistic(
    y_true,
    y_prob,
    sample_weight=None,
    *,
    pos_label=None,
    multiclass="top-label",
    labels=None,
    rescale=False,
    return_scale=False,
    work=0,
):
    """Validate binary (or top-label) input and group it: the one entry of every measure.

    With ``rescale=True`` (what every measure core asks for) the statistic's
    weights are the caller's multiplied by a power of two ``2**e`` (see
    :func:`canonical_statistic`); otherwise they are the caller's sums, as
    a sketch stores them. ``return_scale=True`` returns ``(statistic, e)``,
    for the few outputs in units of weight. ``work`` rows of work memory
    come with a statistic grouped here (``GroupedStatistic.work``; see
    ``group``); one held, summarised or from Dask has none.

    ``y_true`` may be the boundary's canonical form (``skcal._input.BinaryInput``),
    which is not checked again. It may also be an object that already holds the statistic (it
    has a ``grouped_statistic()`` method, as a calibration sketch does);
    ``y_prob`` and ``sample_weight`` must then be None. Dask input (arrays,
    dataframe columns) is grouped partition by partition by
    ``skcal.dask_sketch`` into the exact sketch, whose statistic is
    returned.
    """
    held = getattr(y_true, "canonical_statistic", None)
    if callable(held):
        # the boundary's canonical form (skcal._input.BinaryInput): checked once
        # already; its statistic is built as below, and cached on it
        no_second_input(y_true, y_prob, sample_weight)
        return held(rescale, return_scale)
    statistic = getattr(y_true, "grouped_statistic", None)
    if callable(statistic):
        if y_prob is not None or sample_weight is not None:
            raise ValueError(
                f"y_true is a {type(y_true).__name__}, which already holds the "
                "predictions and weights: pass y_prob=None and sample_weight=None."
            )
        if not rescale or getattr(y_true, "canonical", False):
            # as held (the tester's is already on the measures' weight scale)
            return (statistic(), 0) if return_scale else statistic()
        return canonical_statistic(statistic(), return_scale)
    if any(type(a).__module__.startswith("dask") for a in (y_true, y_prob, sample_weight)):
        # Dask input: a sketch per partition, merged in a tree (Dask is imported
        # only here); the exact sketch, so the measure equals the in-memory one.
        from .sketch._dask import dask_sketch

        statistic = dask_sketch(
            y_true, y_prob, sample_weight, pos_label=pos_label, multiclass=multiclass,
            labels=labels,
        ).grouped_statistic()
        if not rescale:
            return (statistic, 0) if return_scale else statistic
        return canonical_statistic(statistic, return_scale)
    if y_prob is None:
        raise ValueError("y_prob is required (the predicted probabilities).")
    y, p, w = check_binary_calibration_input(
        y_true,
        y_prob,
        sample_weight,
        pos_label=pos_label,
        multiclass=multiclass,
        labels=labels,
        compact=True,
    )
    if not rescale:
        e = 0
    elif w.strides == (0,):
        e = power_of_two_scale(w[0])
    else:
        largest = w.max()
        e = power_of_two_scale(largest)
        if _one_power_of_two(w, largest):
            # every weight one power of two (np.ones, np.full(n, 2.0)): 1.0
            # each on the measures' scale, the unit weights' key sort, the
            # same sums (counts, exact either way) as the weighted grouping,
            # which took twice as long (10**7 rows: 0.25 against 0.11 s)
            statistic = group(y, p, np.broadcast_to(1.0, w.shape), work)
            return (statistic, e) if return_scale else statistic
    statistic = group(y, p, np.ldexp(w, e) if e else w, work)
    return (statistic, e) if return_scale else statistic


def _one_power_of_two(w, largest):
    """Whether every weight of ``w`` is ``largest``, a power of two (two reductions)."""
    largest = float(largest)
    return (
        largest > 0.0
        and np.isfinite(largest)
        and np.frexp(largest)[0] == 0.5
        and float(w.min()) == largest
    )


# The exact-sum arithmetic lives in ._exact_sums; re-exported here for the
# sketch, which reads it with the grouped statistic (sketch/_state.py also
# reads aligned from here).
from ._exact_sums import (  # noqa: E402
    MAX_LEVEL,
    CompactSums,
    ExactSums,
    aligned,  # noqa: F401
    cells_of,
    group_exact,
    sums_overflow,
    unique_inverse,
)
