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

from .._grouped import group
from .._input import canonical_weights
from .._kernels._members import (
    cutoff_bounds,
    cutoff_two_sorted,
    cutoff_unit,
    gather_top,
    rank_of_label,
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
        # equal weights: one radix sort of the values' bits with the event as
        # their top bit (measured here at n = 5e4: 0.55 of an np.sort of v),
        # then merge, group and scan in one pass
        event = event.view(np.uint8)
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
    """``S`` of ``_sorted_columns_and_rank``: whole rows sorted, chunk by chunk."""
    n = P.shape[0]
    S = np.empty((n_top, n))
    for lo in range(0, n, _ROW_CHUNK):
        ordered = np.sort(P[lo : lo + _ROW_CHUNK], axis=1)
        S[:, lo : lo + _ROW_CHUNK] = ordered[:, ::-1][:, :n_top].T
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
    """How far rounding may move a bound or an exact value: ``16 (n + 1100) u`` times
    ``sum |r_i|``, with ``u = 2^-53`` (two orders of recursive summation of
    ``n`` rows and 1024 buckets, each off by at most ``(n + 1024) u sum |r|``),
    a generous margin that costs at most an extra exact evaluation."""
    return absolute * ((n + 1100) * 2.0**-49)


def binary_member_errors(utilities, data, w, floor=None):
    """UC of each utility (all ``is_binary_member``), its worst interval and sign.

    Returns the arrays of ``worst_intervals`` in ``skcal.metrics._multiclass``:
    ``value``, ``lower``, ``upper`` and ``sign``, one entry per utility.

    With ``floor`` (a value the caller's maximum reaches, ``-inf`` if none)
    only the members that may hold the maximum are computed, exactly as
    without it; the others get ``value = -inf`` (branch and bound). Every
    class-wise and top-K member first gets a lower and an upper bound from
    one pass without a sort (``cutoff_bounds``); the largest lower bound
    (and any exact value) is a level the maximum reaches, and a member
    whose upper bound stays below it, by more than the rounding of either
    side (``_slack``, and a relative 1e-9), cannot be the maximum nor tie
    with it. The survivors are then computed exactly, the most promising
    first, raising the level as they go. So the maximum, the first member
    attaining it, its interval and sign are those of the full computation.
    """
    m = len(utilities)
    value = np.empty(m)
    lower = np.empty(m)
    upper = np.empty(m)
    sign = np.empty(m, dtype=np.int8)
    cutoff = _Cutoff(w)
    P, y, C = data.P, data.y, data.n_classes
    n = data.n_samples
    prune = floor is not None
    if prune:
        value.fill(-np.inf)
        lower.fill(np.nan)
        upper.fill(np.nan)
        sign.fill(0)
        weights = np.empty(0) if cutoff.w is None else cutoff.w
        total = float(n) if cutoff.w is None else float(weights.sum())
        y_key = np.ascontiguousarray(y, dtype=np.intp)
        level = float(floor)
        # per member: (upper bound with its margins, kind, argument)
        candidates = []

        def bound(i, v, key, lo, hi, kind, arg):
            nonlocal level
            low, high, absolute = cutoff_bounds(v, key, lo, hi, weights)
            slack = _slack(absolute, n)
            level = max(level, (low * (1.0 - 1e-9) - slack) / total)
            candidates.append(((high * (1.0 + 1e-9) + slack) / total, i, kind, arg))

    def put(i, result):
        value[i], lower[i], upper[i], sign[i] = result

    top_class = [i for i, u in enumerate(utilities) if type(u) is TopClass]
    if top_class:
        confidence, predicted = data.top
        result = cutoff(np.ascontiguousarray(confidence), predicted == y)
        for i in top_class:
            put(i, result)
        if prune:
            level = max(level, result[0])

    class_wise = [(i, u._column(C)) for i, u in enumerate(utilities) if type(u) is ClassWise]
    block = max(1, _BLOCK_ELEMENTS // n)
    for lo in range(0, len(class_wise), block):
        part = class_wise[lo : lo + block]
        columns = np.array([c for _, c in part], dtype=np.intp)
        V = _columns(P, columns)
        for (i, c), v in zip(part, V):
            if prune:
                bound(i, v, y_key, c, c, "class", c)
            else:
                put(i, cutoff(v, y == c))

    top_k = [(i, u._top(C)) for i, u in enumerate(utilities) if type(u) is TopK]
    S = rank = None
    if top_k:
        n_top = max(k for _, k in top_k)
        wanted = {}
        for i, k in top_k:
            wanted.setdefault(k, []).append(i)
        if not prune:
            S, rank = _sorted_columns_and_rank(P, y, n_top)
            for k, v in _top_sums(S, n_top):
                if k in wanted:
                    result = cutoff(v, rank <= k)
                    for i in wanted[k]:
                        put(i, result)
        else:
            S, rank = _top_k_bounds(P, y, wanted, n_top, weights, total, bound, lambda: level)
    if not prune:
        return value, lower, upper, sign

    survivors = [c for c in candidates if c[0] >= level]
    classes = sorted((c for c in survivors if c[2] == "class"), key=lambda c: -c[0])
    tops = sorted((c for c in survivors if c[2] == "top"), key=lambda c: c[3])

    def exact_classes():
        for high, i, _, c in classes:
            if high >= level:
                yield i, cutoff(np.ascontiguousarray(P[:, c]), y == c)

    def exact_tops():
        if not tops:
            return
        sums = _top_sums(S, tops[-1][3])
        k, v = next(sums)
        for high, i, _, k_member in tops:
            while k < k_member:
                k, v = next(sums)
            if high >= level:
                yield i, cutoff(v, rank <= k)

    # the part whose best member looks largest first: its exact value may rule out the rest
    parts = [exact_classes, exact_tops]
    if tops and (not classes or max(c[0] for c in tops) >= classes[0][0]):
        parts.reverse()
    for exact in parts:
        for i, result in exact():
            put(i, result)
            level = max(level, result[0])
    return value, lower, upper, sign


def _top_k_bounds(P, y, wanted, n_top, weights, total, bound, level_of):
    """Bounds of the top-K members ``wanted`` (k -> member indices) not ruled out at once.

    The members with ``k <= 16`` get their bounds from the 16 largest
    entries of each row (``_top_columns``), which raises the level; then
    ``top_k_mass_bound`` bounds every ``k`` from one read of ``P`` without a
    sort, and the members whose bound stays below the level (with a margin
    for its rounding) are ruled out; the rest get their bounds from the
    ``m`` largest entries of each row, ``m`` the largest such ``k``.
    Returns the sorted columns (for the survivors' exact values) and the
    ranks.
    """
    n, C = P.shape
    rank = _rank(P, y)
    first = min(n_top, 16)
    S = _top_columns(P, first)
    for k, v in _top_sums(S, first):
        for i in wanted.get(k, ()):
            bound(i, v, rank, 1, k, "top", k)
    rest = sorted(k for k in wanted if k > first)
    if not rest:
        return S, rank
    mass = np.empty(C + 1)
    top_k_mass_bound(P, rank, weights, mass)
    # the difference array's rounding: at most 136 n terms of at most 4 w_i each
    margin = (136.0 * n + C) * 544.0 * 2.0**-53 * total
    kept = [
        k for k in rest
        if (mass[k] * (1.0 + 1e-9) + _slack(mass[k], n) + margin) / total >= level_of()
    ]
    if not kept:
        return S, rank
    S = _top_columns(P, kept[-1])
    kept = set(kept)
    for k, v in _top_sums(S, S.shape[0]):
        if k in kept:
            for i in wanted[k]:
                bound(i, v, rank, 1, k, "top", k)
    return S, rank


def _top_sums(S, n_top):
    """``(k, v_k)`` for ``k = 1..n_top``: ``v_k = v_{k-1} + S[k - 1]``, one array reused.

    ``np.cumsum`` of the sorted rows, bit for bit.
    """
    v = S[0].copy()
    yield 1, v
    for k in range(2, n_top + 1):
        np.add(v, S[k - 1], out=v)
        yield k, v
