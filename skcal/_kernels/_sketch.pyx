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

from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_RawFree, PyMem_RawMalloc
from libc.math cimport signbit
from libc.stdint cimport int64_t, uint64_t
from libc.string cimport memset

from ._prefix cimport prefix_run
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


cdef inline void _emit(
    double* values, double* neg, double* pos, Py_ssize_t k, uint64_t u,
    Py_ssize_t count, double first,
) noexcept nogil:
    """Write group ``k``: value bits ``u`` and ``count`` rows.

    One row: its signed weight ``first`` in ``neg`` or ``pos`` by its sign.
    Several: ``neg[k] = -count`` and ``pos[k] = first`` (0.0 from
    ``group_rows_exact``, whose rows all go to ``rows``; the first row's
    signed weight from ``group_keys_exact``).
    """
    cdef _Bits bits
    bits.u = u
    values[k] = bits.d
    if count > 1:
        neg[k] = <double> -count
        pos[k] = first
    elif signbit(first):
        neg[k] = 0.0
        pos[k] = -first
    else:
        neg[k] = first
        pos[k] = 0.0


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
                else:
                    for j in range(s, e):
                        rows[m] = src_w[j]
                        m += 1
                    x = 0.0
                _emit(&values[0], &neg[0], &pos[0], k, u, e - s, x)
                k += 1
                s = e
    finally:
        PyMem_Free(counts)
    return k, m


# --- the same grouping from one np.sort of prefix keys (numpy's SIMD sort)
#
# Where numpy sorts 64-bit integers with AVX-512 or AVX2, the rows are
# ordered as the measures' weighted grouping orders them
# (``_kernels/_interval.pyx``: ``prefix_keys``, one ``np.sort``, the rows of
# one prefix sorted by full prediction in a buffer), and grouped as above.
# Read through the index, the weights cannot share memory with an output,
# so the repeated values' rows go to the tail of ``pos`` instead of a fourth
# array: a value of c >= 2 rows keeps its first row's signed weight in its
# own ``pos`` entry and the other c - 1 at the tail, from the end down. After
# r rows, k groups and m tail rows have k + m <= r (each group of c rows
# adds 1 + (c - 1)), so the two never meet: 24 bytes per row in all.

cdef Py_ssize_t _SORT_MAX = 4096        # rows of one prefix sorted in a buffer
cdef Py_ssize_t _AHEAD = 64             # rows read ahead (as _interval.pyx)

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define skcal_sketch_prefetch(p) __builtin_prefetch(p)
    #else
    #define skcal_sketch_prefetch(p) ((void)0)
    #endif
    """
    void skcal_sketch_prefetch(const void* p) noexcept nogil


def group_keys_exact(
    const uint64_t[::1] keys,           # IN  (n,) sorted keys of prefix_keys (may be values)
    const double[::1] p,                # IN  predictions in [0, 1], any order
    const label_t[::1] y,               # IN  outcomes (non-zero is positive)
    const double[::1] w,                # IN  non-negative weights
    double[::1] values,                 # OUT distinct sorted p (first k)
    double[::1] neg,                    # OUT per value, see below (first k)
    double[::1] pos,                    # OUT per value (first k); repeated rows (last m)
    int b,                              # IN  index bits of the keys
):
    """``group_rows_exact`` from sorted prefix keys; return ``(k, m)``, or ``(-1, 0)``.

    ``values``, ``neg`` and ``pos[:k]`` as there, except that a value of
    ``c >= 2`` rows has its first row's signed weight in ``pos[j]`` (not
    0.0) and its other ``c - 1`` rows' signed weights in ``pos[n - m:]``,
    the values' runs from the end down (so ``pos[n - m:][::-1]`` holds them
    in the order of the values). Which row of a value is first is not
    fixed: exact sums do not depend on the order. A prefix of more than
    4096 rows out of order, or more than 8 insertion moves per row in all,
    makes it stop and return ``(-1, 0)`` (the caller then radix-sorts).
    """
    cdef Py_ssize_t n = keys.shape[0], j = 0, e, t, s, r, k = 0, m = 0, count = 0
    cdef Py_ssize_t c, budget = 8 * n + 64
    cdef uint64_t mask = (<uint64_t> 1 << b) - 1, u, cur = 0
    cdef _Bits bits
    cdef double x, first = 0.0
    cdef bint ordered
    cdef double* buf = NULL             # (bits of p, signed weight) of one prefix's rows
    _need(p.shape[0] == n and y.shape[0] == n and w.shape[0] == n,
          "keys, p, y and w must have one length")
    _need(values.shape[0] >= n and neg.shape[0] >= n and pos.shape[0] >= n,
          "values, neg and pos need len(keys) entries")
    _need(1 <= b <= 40, "b must be 1 to 40")
    if n == 0:
        return 0, 0
    try:
        with nogil:
            while j < n:
                e = prefix_run(&keys[0], j, n, b, &p[0], &ordered)
                c = e - j
                if not ordered:
                    if c > _SORT_MAX:
                        k = -1
                        break
                    if buf == NULL:
                        buf = <double*> PyMem_RawMalloc(2 * _SORT_MAX * sizeof(double))
                        if buf == NULL:
                            k = -2
                            break
                    for t in range(c):
                        r = <Py_ssize_t> (keys[j + t] & mask)
                        x = p[r] + 0.0
                        s = t
                        while s > 0 and buf[2 * s - 2] > x:
                            buf[2 * s] = buf[2 * s - 2]
                            buf[2 * s + 1] = buf[2 * s - 1]
                            s -= 1
                        budget -= t - s
                        buf[2 * s] = x
                        buf[2 * s + 1] = -w[r] if y[r] != 0 else w[r]
                    if budget < 0:
                        k = -1
                        break
                for t in range(c):
                    if ordered:
                        # the row read 64 ahead asked for now: the gathers
                        # jump about memory
                        if j + t + _AHEAD < n:
                            r = <Py_ssize_t> (keys[j + t + _AHEAD] & mask)
                            skcal_sketch_prefetch(&p[r])
                            skcal_sketch_prefetch(&w[r])
                            skcal_sketch_prefetch(&y[r])
                        r = <Py_ssize_t> (keys[j + t] & mask)
                        bits.d = p[r] + 0.0     # -0.0 and 0.0 group as +0.0
                        x = -w[r] if y[r] != 0 else w[r]
                    else:
                        bits.d = buf[2 * t]
                        x = buf[2 * t + 1]
                    u = bits.u
                    if count > 0 and u == cur:
                        # a repeat of the open value: to the tail
                        pos[n - 1 - m] = x
                        m += 1
                        count += 1
                    else:
                        if count > 0:
                            _emit(&values[0], &neg[0], &pos[0], k, cur, count, first)
                            k += 1
                        cur = u
                        count = 1
                        first = x
                j = e
            if k >= 0 and count > 0:
                _emit(&values[0], &neg[0], &pos[0], k, cur, count, first)
                k += 1
    finally:
        PyMem_RawFree(buf)
    if k == -2:
        raise MemoryError()
    if k < 0:
        return -1, 0
    return k, m
