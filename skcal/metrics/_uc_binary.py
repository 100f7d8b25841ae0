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
    cutoff_two_sorted,
    cutoff_unit,
    rank_of_label,
    split_by_event,
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
    n = P.shape[0]
    S = np.empty((n_top, n))
    rank = np.empty(n, dtype=np.intp)
    rank_of_label(np.ascontiguousarray(P), np.ascontiguousarray(y, dtype=np.intp), rank)
    for lo in range(0, n, _ROW_CHUNK):
        ordered = np.sort(P[lo : lo + _ROW_CHUNK], axis=1)
        S[:, lo : lo + _ROW_CHUNK] = ordered[:, ::-1][:, :n_top].T
    return S, rank


def _columns(P, columns):
    """``P[:, columns].T`` as a C-ordered array, transposed chunk by chunk of rows."""
    n = P.shape[0]
    V = np.empty((columns.shape[0], n))
    if np.all(np.diff(columns) == 1):
        columns = slice(int(columns[0]), int(columns[-1]) + 1)
    for lo in range(0, n, _ROW_CHUNK):
        V[:, lo : lo + _ROW_CHUNK] = P[lo : lo + _ROW_CHUNK, columns].T
    return V


def binary_member_errors(utilities, data, w):
    """UC of each utility (all ``is_binary_member``), its worst interval and sign.

    Returns the arrays of ``worst_intervals`` in ``skcal.metrics._multiclass``:
    ``value``, ``lower``, ``upper`` and ``sign``, one entry per utility.
    """
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
        v = np.zeros(data.n_samples)
        for k in range(1, n_top + 1):
            # v_k = v_{k-1} + S[k - 1]: np.cumsum of the sorted rows, bit for bit
            v = S[0].copy() if k == 1 else np.add(v, S[k - 1], out=v)
            if k in wanted:
                result = cutoff(v, rank <= k)
                for i in wanted[k]:
                    put(i, result)
    return value, lower, upper, sign
