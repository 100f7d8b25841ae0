# The rows of an exact calibration sketch, grouped by one radix sort.
#
# An exact sketch keeps, per distinct prediction, the exact sums of the
# negative and of the positive rows' weights. A value held by one row takes
# that row's weight as its exact sum; only the rows of repeated values need
# the multi-limb sums (skcal/_exact_sums.py), so they are handed back, in
# sorted order, instead of being summed in float.
#
# A prediction p >= 0 (+0.0 for -0.0) orders as the unsigned integer of its
# bits: a least-significant-digit radix sort of those integers, carrying the
# weight, sorts the rows in passes over contiguous memory (the argsort it
# replaces and its gathers jump about memory). The outcome rides in the sign
# bit of the carried weight (w >= 0, so -w, or -0.0 for w = 0, marks a
# positive row). Digits of 11 bits, six passes at most; a pass whose digit is
# the same on every row is skipped. The kernel checks its argument shapes;
# the caller validates the contents (p in [0, 1], w >= 0 and finite).

from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.math cimport signbit
from libc.stdint cimport int64_t, uint64_t
from libc.string cimport memset

from ._radix cimport RADIX, RADIX_PASSES, radix_count, radix_sort


cdef union _Bits:
    double d
    uint64_t u


ctypedef fused label_t:
    unsigned char
    int64_t


cdef inline void _need(bint ok, str what) except *:
    if not ok:
        raise ValueError(f"kernel argument shapes do not match: {what}")


def group_rows_exact(
    const double[::1] p,                # IN  predictions in [0, 1], any order
    const label_t[::1] y,               # IN  outcomes (non-zero is positive)
    const double[::1] w,                # IN  non-negative weights (may be pos itself)
    double[::1] values,                 # OUT distinct sorted p (first k); work
    double[::1] neg,                    # OUT per value, see below (first k); work
    double[::1] pos,                    # OUT per value, see below (first k); work
    double[::1] rows,                   # OUT repeated values' rows (first m); work
):
    """Sort ``(p, y, w)`` by ``p`` and group equal predictions; return ``(k, m)``.

    For each of the ``k`` distinct predictions ``values[j]`` (increasing):
    a value held by one row has that row's weight in ``neg[j]`` (negative
    row) or ``pos[j]`` (positive row) and 0.0 in the other; a value held by
    ``c >= 2`` rows has ``neg[j] = -c`` and ``pos[j] = 0.0``, and its rows'
    weights are the next ``c`` entries of ``rows[:m]`` (values in increasing
    order), a positive row's as ``-w`` (``-0.0`` for ``w = 0``: read the
    class off the sign bit). The four outputs are the sort's buffers, and
    the grouping pass writes them in place (no entry is written before it
    is read): 32 bytes of memory per row in all. ``w`` may be the same array
    as ``pos`` (each weight is read before that entry is written), which the
    caller then gives up: 24 bytes per row beside it.
    """
    cdef Py_ssize_t n = p.shape[0]
    cdef Py_ssize_t i, s, e, j, k = 0, m = 0
    cdef uint64_t u
    cdef _Bits bits
    cdef double x
    cdef uint64_t* counts = NULL
    cdef uint64_t* src_key
    cdef uint64_t* dst_key
    cdef double* src_w
    cdef double* dst_w
    _need(y.shape[0] == n and w.shape[0] == n, "p, y and w must have one length")
    _need(values.shape[0] >= n and neg.shape[0] >= n and pos.shape[0] >= n
          and rows.shape[0] >= n, "values, neg, pos and rows need len(p) entries")
    if n == 0:
        return 0, 0
    counts = <uint64_t*> PyMem_Malloc(RADIX_PASSES * RADIX * sizeof(uint64_t))
    if counts == NULL:
        raise MemoryError()
    try:
        with nogil:
            memset(counts, 0, RADIX_PASSES * RADIX * sizeof(uint64_t))
            src_key = <uint64_t*> &neg[0]
            src_w = &pos[0]
            dst_key = <uint64_t*> &values[0]
            dst_w = &rows[0]
            for i in range(n):
                bits.d = p[i] + 0.0     # -0.0 and 0.0 group as +0.0
                u = bits.u
                src_key[i] = u
                src_w[i] = -w[i] if y[i] != 0 else w[i]
                radix_count(u, counts)
            radix_sort(&src_key, &src_w, &dst_key, &dst_w, n, counts)
            # group in place: (src_key, src_w) is (neg, pos) or (values,
            # rows); group k and the m-th repeated row land at or before the
            # first row of their group, which is read before they are written
            s = 0
            while s < n:
                u = src_key[s]
                e = s + 1
                while e < n and src_key[e] == u:
                    e += 1
                if e - s == 1:
                    x = src_w[s]
                    bits.u = u
                    values[k] = bits.d
                    if signbit(x):
                        neg[k] = 0.0
                        pos[k] = -x
                    else:
                        neg[k] = x
                        pos[k] = 0.0
                else:
                    for j in range(s, e):
                        rows[m] = src_w[j]
                        m += 1
                    bits.u = u
                    values[k] = bits.d
                    neg[k] = <double> (s - e)
                    pos[k] = 0.0
                k += 1
                s = e
    finally:
        PyMem_Free(counts)
    return k, m
