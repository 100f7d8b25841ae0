"""UC of the utilities whose realised utility is 0 or 1, on the cutoff path.

The top-class, class-wise and top-K utilities realise 1 or 0: the event
``Y = argmax``, ``Y = c`` or ``rank(p, Y) <= K``. Their utility calibration
error is the cutoff calibration error of ``(v_u(p), event)`` (Hegazy et al.,
Example 3.4), so each member is measured exactly as
:func:`skcal.cutoff_calibration_error` measures binary data: the grouped
statistic of ``(event, v)`` and the cutoff core, and the number is that
measure's, bit for bit. With equal weights the statistic comes from two
value sorts (one LSD radix sort of the values' bits with the event as their
top bit, which leaves the two sorted runs side by side) and a linear merge;
with unequal weights from the radix grouping that
carries the weights (``skcal._grouped.group``).

What the members of a family share is computed once: for the top-K members
the rows of ``y_prob`` are sorted in chunks of rows into one matrix of the
``k``-th largest probabilities, column by column, and ``v_K`` is a running
sum of its rows, which is ``np.cumsum`` of the sorted rows bit for bit; the
rank of the observed class takes one read of ``y_prob``. Class-wise members
read their columns in blocks.
"""

import numpy as np

from .._grouped import group, key_sort, sorted_label_keys
from .._input import canonical_weights
from .._kernels._interval import cutoff_label_keys
from .._kernels._members import (
    cutoff_bounds,
    cutoff_two_sorted,
    cutoff_unit,
    gather_top,
    rank_of_label,
    sort_rows,
    split_by_event,
    top_k_mass_bound,
)
from ..utilities import ClassWise, TopClass, TopK
from ._cutoff import cutoff_core

__all__ = ["is_binary_member", "binary_member_errors"]

# Rows of y_prob sorted or transposed at once: a chunk of 256 rows (2 MB at
# 1000 classes) is transposed in cache (measured at 5e4 x 1000: a block of 83
# columns in 10 ms, against 66 ms for one strided copy of them).
_ROW_CHUNK = 256
# Rows narrower than this are sorted by np.sort (sort_rows clears and scans a
# table of up to 2048 buckets per row).
_SORT_ROWS_MIN = 128
# Columns read at once by the class-wise members: about 2^22 values (32 MB).
_BLOCK_ELEMENTS = 1 << 22


def is_binary_member(utility):
    """True for the utilities measured here (0/1 realised utility, known form)."""
    return type(utility) in (TopClass, TopK, ClassWise)


class _Cutoff:
    """The cutoff error of ``(event, v)`` for many ``v`` of one set of rows.

    Weights are brought to the measures' scale (``canonical_weights``, a
    power of two) as :func:`skcal.cutoff_calibration_error` does; when they
    are then all 1 the sums are counts and the unit-weight kernel gives the
    same statistic, so the numbers are that measure's bit for bit.
    """

    def __init__(self, w):
        n = w.shape[0]
        self.n = n
        self.w = canonical_weights(w)
        if np.all(self.w == 1.0):
            self.w = None
            self.work = np.empty(2 * n, dtype=np.uint64)  # reused by every member

    def __call__(self, v, event):
        """``(value, lower, upper, sign)`` of the cutoff error of ``(event, v)``."""
        if self.w is not None:
            value, (lower, upper), sign = cutoff_core(
                group(event, np.ascontiguousarray(v), self.w)
            )
            return value, lower, upper, sign
        event = event.view(np.uint8)
        if key_sort():
            # where numpy sorts with AVX-512, as the top-label cutoff error's
            # grouping: one np.sort of keys carrying the event in their lowest
            # bit (label_keys), then group and scan in one pass; at 5e4 rows
            # 0.33 against 0.64 ms for the radix sort below, at 1e6 8.5
            # against 19 ms (``key_sort``)
            # (32-bit keys for float32 values, as from a float32 predict_proba)
            keys = sorted_label_keys(
                np.ascontiguousarray(v, dtype=np.float64), event, self.work[: self.n]
            )
            if keys is not None:
                return cutoff_label_keys(keys, float(self.n))
        # equal weights: one radix sort of the values' bits with the event as
        # their top bit (measured at n = 5e4, numpy without AVX-512: 0.55 of
        # an np.sort of v), then merge, group and scan in one pass
        result = cutoff_unit(v, event, self.work)
        if result is None:  # a value outside [0, 2): sort the two runs by value
            work = self.work[: self.n].view(np.float64)
            n0 = split_by_event(v, event, work)
            negatives, positives = work[:n0], work[n0:]
            negatives.sort()
            positives.sort()
            result = cutoff_two_sorted(negatives, positives)
        return result


def _sorted_columns_and_rank(P, y, n_top):
    """The ``n_top`` largest probabilities of each row, as rows, and rank(p, y).

    Returns ``S`` of shape ``(n_top, n)``, ``S[k - 1, i]`` the ``k``-th
    largest entry of row ``i``, computed over chunks of rows so that no
    temporary has the size of ``P``, and the rank of the observed class
    (``1 + #{j: p_j > p_y} + #{j < y: p_j = p_y}``) in one read of ``P``.
    """
    return _sorted_columns(P, n_top), _rank(P, y)


def _sorted_columns(P, n_top):
    """``S`` of ``_sorted_columns_and_rank``: whole rows sorted, chunk by chunk.

    A C-ordered float64 ``P`` of at least 128 columns goes through
    ``sort_rows`` (two counting passes on the values' bits and an insertion
    pass: at 5e4 x 1000 about half of ``np.sort``'s time, flat or peaked
    rows), which leaves the rows whose insertion pass runs too long to
    ``np.sort``; the values are the same either way. Narrower rows: its
    bucket tables (up to 2048 entries a row) would cost more than the sort.
    """
    n, C = P.shape
    S = np.empty((n_top, n))
    if not (P.dtype == np.float64 and P.flags.c_contiguous and n > 0 and C >= _SORT_ROWS_MIN):
        for lo in range(0, n, _ROW_CHUNK):
            ordered = np.sort(P[lo : lo + _ROW_CHUNK], axis=1)
            S[:, lo : lo + _ROW_CHUNK] = ordered[:, ::-1][:, :n_top].T
        return S
    buffer = np.empty((min(_ROW_CHUNK, n), C))
    failed = np.empty(buffer.shape[0], dtype=np.uint8)
    bucketed = True
    for lo in range(0, n, _ROW_CHUNK):
        rows = min(_ROW_CHUNK, n - lo)
        if not bucketed:
            ordered = np.sort(P[lo : lo + rows], axis=1)
            S[:, lo : lo + rows] = ordered[:, ::-1][:, :n_top].T
            continue
        block = buffer[:rows]
        left = sort_rows(P, lo, block, failed[:rows])
        if left:
            left = np.flatnonzero(failed[:rows])
            block[left] = np.sort(P[lo + left], axis=1)[:, ::-1]
            # rows like these (peaked: most entries far below the largest) go to np.sort
            bucketed = 2 * left.shape[0] <= rows
        S[:, lo : lo + rows] = block[:, :n_top].T
    return S


def _rank(P, y):
    """rank(p, y) of every row, in one read of ``P``."""
    rank = np.empty(P.shape[0], dtype=np.intp)
    rank_of_label(np.ascontiguousarray(P), np.ascontiguousarray(y, dtype=np.intp), rank)
    return rank


def _top_columns(P, m):
    """``S`` of ``_sorted_columns_and_rank(P, y, m)``, the same values, sorting fewer.

    Each chunk of rows keeps the entries of the levels (binades) that hold
    its ``m`` largest (``gather_top``) and sorts only those: at 5e4 x 1000
    (Dirichlet rows) about 0.23 s for m = 72 against 0.72 s for whole rows.
    """
    n, C = P.shape
    if 2 * m > C:  # most of each row: sort it whole
        return _sorted_columns(P, m)
    P = np.ascontiguousarray(P)
    S = np.empty((m, n))
    buffer = np.empty((min(_ROW_CHUNK, n), C))
    widths = np.empty(buffer.shape[0], dtype=np.intp)
    for lo in range(0, n, _ROW_CHUNK):
        rows = min(_ROW_CHUNK, n - lo)
        width = gather_top(P, lo, m, buffer[:rows], widths[:rows])
        block = buffer[:rows, :width]
        block.sort(axis=1)
        S[:, lo : lo + rows] = block[:, ::-1][:, :m].T
    return S


def _columns(P, columns):
    """``P[:, columns].T`` as a C-ordered array, transposed chunk by chunk of rows."""
    n = P.shape[0]
    V = np.empty((columns.shape[0], n))
    if np.all(np.diff(columns) == 1):
        columns = slice(int(columns[0]), int(columns[-1]) + 1)
    for lo in range(0, n, _ROW_CHUNK):
        V[:, lo : lo + _ROW_CHUNK] = P[lo : lo + _ROW_CHUNK, columns].T
    return V


def _slack(absolute, n):
    """How far rounding may move a bound or an exact value, times the total weight.

    ``16 (n + 4200) u`` times ``sum |r_i|`` (``u = 2^-53``): either side sums
    ``n`` rows and at most 4096 buckets in its own order, off by at most
    ``(n + 4096) u sum |r|`` each; a generous margin, which costs at most an
    extra exact evaluation.
    """
    return absolute * ((n + 4200) * 2.0**-49)


def binary_member_errors(utilities, data, w, floor=None):
    """UC of each utility (all ``is_binary_member``), its worst interval and sign.

    Returns the arrays of ``worst_intervals`` in ``skcal.metrics._multiclass``:
    ``value``, ``lower``, ``upper`` and ``sign``, one entry per utility.

    With ``floor`` (a value the caller's maximum reaches, ``-inf`` if none)
    only the members that may hold the maximum are computed, exactly as
    without it; the others get ``value = -inf`` (``_BranchAndBound``).
    """
    if floor is not None:
        return _BranchAndBound(utilities, data, w, floor).run()
    m = len(utilities)
    value = np.empty(m)
    lower = np.empty(m)
    upper = np.empty(m)
    sign = np.empty(m, dtype=np.int8)
    cutoff = _Cutoff(w)
    P, y, C = data.P, data.y, data.n_classes

    def put(i, result):
        value[i], lower[i], upper[i], sign[i] = result

    top_class = [i for i, u in enumerate(utilities) if type(u) is TopClass]
    if top_class:
        confidence, predicted = data.top
        result = cutoff(np.ascontiguousarray(confidence), predicted == y)
        for i in top_class:
            put(i, result)

    class_wise = [(i, u._column(C)) for i, u in enumerate(utilities) if type(u) is ClassWise]
    block = max(1, _BLOCK_ELEMENTS // data.n_samples)
    for lo in range(0, len(class_wise), block):
        part = class_wise[lo : lo + block]
        columns = np.array([c for _, c in part], dtype=np.intp)
        V = _columns(P, columns)
        for (i, c), v in zip(part, V):
            put(i, cutoff(v, y == c))

    top_k = [(i, u._top(C)) for i, u in enumerate(utilities) if type(u) is TopK]
    if top_k:
        n_top = max(k for _, k in top_k)
        S, rank = _sorted_columns_and_rank(P, y, n_top)
        wanted = {}
        for i, k in top_k:
            wanted.setdefault(k, []).append(i)
        for k, v in _top_sums(S, n_top):
            if k in wanted:
                result = cutoff(v, rank <= k)
                for i in wanted[k]:
                    put(i, result)
    return value, lower, upper, sign


# Top-K members bounded from the first few entries of each row before the others.
_FIRST_TOP = 16
_BUCKETS = 4096.0
# v_k kept every 32 k while bounding, so an exact top-K member adds at most 31 rows of S.
_CHECKPOINT = 32


class _BranchAndBound:
    """The largest UC of 0/1 members, computing exactly only those that may hold it.

    ``level`` is a value the maximum is known to reach: the caller's floor,
    exact values, and lower bounds. A member is ruled out when an upper
    bound of its error stays below the level by more than the rounding of
    either side (``_slack``, a relative 1e-9, and each bound's own margin):
    it can then neither be the maximum nor tie with it, so the maximum, the
    first member attaining it, its interval and sign are those of the full
    computation. In order:

    * top-class members exactly (one cutoff error of the confidence);
    * the top-K member ``k = 1``: lower and upper bounds (``bound``: one
      or two passes of ``cutoff_bounds`` into value buckets, no sort) of
      the confidence, each row's largest entry;
    * class-wise members: ``sum_i w_i |1{y_i = c} - p_ic|`` for every ``c``
      at once (one product of the weights and ``P``) rules out most; the
      others get the bounds of their column;
    * the other top-K members: ``top_k_mass_bound`` (one read of ``P``, no
      sort) rules out most; those with ``k <= 16`` get the bounds of their
      sums first (their lower bounds raise the level), from the 16 largest
      entries of each row (``_top_columns``), then, ruled out again, the
      rest from the ``m`` largest entries, ``m`` the largest such ``k``;
      when ``m`` is more than half the row before the first step (flat
      rows, whose errors are all alike), whole rows are sorted once for
      both steps (``sort_rows``);
    * the members left are computed exactly, the largest upper bound
      first, raising the level as they go.
    """

    def __init__(self, utilities, data, w, floor):
        m = len(utilities)
        self.value = np.full(m, -np.inf)
        self.lower = np.full(m, np.nan)
        self.upper = np.full(m, np.nan)
        self.sign = np.zeros(m, dtype=np.int8)
        self.utilities, self.data = utilities, data
        self.cutoff = _Cutoff(w)
        self.n = data.n_samples
        self.weights = np.empty(0) if self.cutoff.w is None else self.cutoff.w
        self.total = float(self.n) if self.cutoff.w is None else float(self.weights.sum())
        self.level = float(floor)
        self.candidates = []  # (upper bound with its margins, member, kind, argument)

    def put(self, i, result):
        self.value[i], self.lower[i], self.upper[i], self.sign[i] = result

    def below_level(self, bound):
        """True if a sum bounding a member's error times the total weight rules it out."""
        return (bound * (1.0 + 1e-9) + _slack(bound, self.n)) / self.total < self.level

    def bound(self, i, v, key, lo, hi, kind, arg):
        """Bound member ``i`` (``v``, event ``lo <= key <= hi``); keep it if it may be the maximum.

        Two maps of values to buckets (``cutoff_bounds``): 64 buckets per
        binade, which spreads values over many scales (a column of a peaked
        model), and 4096 equal buckets over ``[min v, max v]``, which spreads
        values packed in a short range (the top-K sums of flat rows, all
        near one level: in one binade they share a few buckets and the
        bounds are loose). The map finer at the mean (bucket width ``mean /
        64`` against ``span / 4096``) goes first, the other only if the
        member is still not ruled out; each pair of bounds holds, so the
        larger lower and the smaller upper do.
        """
        weights = self.weights
        origin, top = float(v.min()), float(v.max())
        scale = _BUCKETS / (top - origin) if top > origin else 0.0
        if not scale < np.inf:
            scale = 0.0  # a subnormal range: the binade map only
        maps = [(0.0, 0.0)]  # scale 0: the binade map
        if scale > 0.0:
            mean = float(v.mean())
            if top - origin < 64.0 * min(mean, 1.0 - mean):
                maps.insert(0, (origin, scale))
            else:
                maps.append((origin, scale))
        low, high = -np.inf, np.inf
        for origin, scale in maps:
            low2, high2, absolute = cutoff_bounds(v, key, lo, hi, weights, origin, scale)
            low, high = max(low, low2), min(high, high2)
            slack = _slack(absolute, self.n)
            self.level = max(self.level, (low * (1.0 - 1e-9) - slack) / self.total)
            if (high * (1.0 + 1e-9) + slack) / self.total < self.level:
                return
        self.candidates.append(((high * (1.0 + 1e-9) + slack) / self.total, i, kind, arg))

    def run(self):
        data, utilities = self.data, self.utilities
        P, y, C = np.ascontiguousarray(data.P, dtype=np.float64), data.y, data.n_classes
        top_class = [i for i, u in enumerate(utilities) if type(u) is TopClass]
        if top_class:
            confidence, predicted = data.top
            result = self.cutoff(np.ascontiguousarray(confidence), predicted == y)
            for i in top_class:
                self.put(i, result)
            self.level = max(self.level, result[0])

        wanted = {}
        for i, u in enumerate(utilities):
            if type(u) is TopK:
                wanted.setdefault(u._top(C), []).append(i)
        self.S = self.rank = None
        self.checkpoints = {}
        class_wise = [(i, u._column(C)) for i, u in enumerate(utilities) if type(u) is ClassWise]
        if not wanted:
            if class_wise:
                self._bound_classes(class_wise)
            self._exact()
            return self.value, self.lower, self.upper, self.sign

        self.rank = _rank(P, y)
        first = min(max(wanted), _FIRST_TOP)
        ks = range(1, first + 1)
        if 1 in wanted:
            # v_1 is each row's largest entry (the confidence), known before any sort
            confidence = np.ascontiguousarray(data.top[0], dtype=np.float64)
            for i in wanted[1]:
                self.bound(i, confidence, self.rank, 1, 1, "top", 1)
            ks = range(2, first + 1)
        if class_wise:
            self._bound_classes(class_wise)
        rest = sorted(k for k in wanted if k > first)
        if rest:
            mass = np.empty(C + 1)
            top_k_mass_bound(P, self.rank, self.weights, mass)
            # the difference array's rounding: at most 136 n terms of at most 4 w_i each
            mass += (136.0 * self.n + C) * 544.0 * 2.0**-53 * self.total
            rest = self._kept(rest, mass)
        # the first k bounded first (their lower bounds raise the level), from
        # each row's largest entries; or, when whole rows must be sorted for the
        # others all the same, from one sort for every k
        self.S = _top_columns(P, rest[-1] if rest and 2 * rest[-1] > C else first)
        self._bound_tops(wanted, ks)
        if rest:
            rest = self._kept(rest, mass)
        if rest:
            if self.S.shape[0] < rest[-1]:
                self.S = _top_columns(P, rest[-1])
            self._bound_tops(wanted, rest)
        self._exact()
        return self.value, self.lower, self.upper, self.sign

    def _kept(self, ks, bound):
        """The ``ks`` that ``bound[k]`` (a sum, as ``below_level`` reads) does not rule out."""
        return [k for k in ks if not self.below_level(bound[k])]

    def _bound_tops(self, wanted, ks):
        ks = set(ks)
        for k, v in _top_sums(self.S, max(ks, default=1)):
            if k % _CHECKPOINT == 1 and k not in self.checkpoints:
                self.checkpoints[k] = v.copy()
            if k in ks:
                for i in wanted.get(k, ()):
                    self.bound(i, v, self.rank, 1, k, "top", k)

    def _bound_classes(self, class_wise):
        P, y = self.data.P, self.data.y
        C = self.data.n_classes
        w = np.ones(self.n) if self.cutoff.w is None else self.cutoff.w
        # sum_i w_i |e_i - p_ic| = sum_{y_i != c} w_i p_ic + sum_{y_i = c} w_i |1 - p_ic|
        p_y = P[np.arange(self.n), y]
        column = w @ P
        mass = (column - np.bincount(y, w * p_y, minlength=C)
                + np.bincount(y, w * np.abs(1.0 - p_y), minlength=C))
        # column and the subtraction round by at most n u times the column's sum
        kept = [(i, c) for i, c in class_wise
                if not self.below_level(mass[c] + 2.0 * _slack(column[c], self.n))]
        y_key = np.ascontiguousarray(y, dtype=np.intp)
        block = max(1, _BLOCK_ELEMENTS // self.n)
        for lo in range(0, len(kept), block):
            part = kept[lo : lo + block]
            V = _columns(P, np.array([c for _, c in part], dtype=np.intp))
            for (i, c), v in zip(part, V):
                self.bound(i, v, y_key, c, c, "class", c)

    def _top_sum(self, k):
        """``v_k`` from the nearest checkpoint below it: the running sum, bit for bit."""
        start = k - (k - 1) % _CHECKPOINT
        if start not in self.checkpoints:
            start = 1
            self.checkpoints[1] = self.S[0].copy()
        v = self.checkpoints[start].copy()
        for j in range(start, k):
            np.add(v, self.S[j], out=v)
        return v

    def _exact(self):
        P, y = self.data.P, self.data.y
        # the largest upper bound first: its exact value may rule out the rest
        for high, i, kind, arg in sorted(self.candidates, key=lambda c: -c[0]):
            if high < self.level:
                break
            if kind == "class":
                result = self.cutoff(np.ascontiguousarray(P[:, arg]), y == arg)
            else:
                result = self.cutoff(self._top_sum(arg), self.rank <= arg)
            self.put(i, result)
            self.level = max(self.level, result[0])


def _top_sums(S, n_top):
    """``(k, v_k)`` for ``k = 1..n_top``: ``v_k = v_{k-1} + S[k - 1]``, one array reused.

    ``np.cumsum`` of the sorted rows, bit for bit.
    """
    v = S[0].copy()
    yield 1, v
    for k in range(2, n_top + 1):
        np.add(v, S[k - 1], out=v)
        yield k, v
