# The cutoff calibration error of unit-weight 0/1 data, for the members of a
# utility family with 0/1 realised utility (skcal/metrics/_uc_binary.py):
# one LSD radix sort of 8-byte keys (the value's bits with the outcome in bit
# 62, so the sort leaves the two sorted runs side by side) and one pass that
# merges the runs, groups equal values and takes the worst interval, without
# writing the grouped statistic; and the rank of the observed class.
# Every kernel checks its argument shapes at entry (O(1)).

from libc.stdint cimport uint64_t
from libc.math cimport fabs
from libc.string cimport memset
from cpython.mem cimport PyMem_Free, PyMem_Malloc

from ._entry cimport _all_in
from ._scan cimport WorstScan, scan_add, scan_init, scan_result
from ._radix cimport RADIX, RADIX_PASSES, radix_count, radix_sort


cdef union _Bits:
    double d
    uint64_t u


cdef inline void _need(bint ok, str what) except *:
    if not ok:
        raise ValueError(f"kernel argument shapes do not match: {what}")


def split_by_event(
    const double[::1] v,                # IN  (n,) values
    const unsigned char[::1] event,     # IN  (n,) 0 or 1 (any non-zero is 1)
    double[::1] out,                    # OUT (n,) values without the event, then with it
):
    """Copy ``v`` into ``out``: rows without the event first, in order; return their count."""
    cdef Py_ssize_t n = v.shape[0]
    cdef Py_ssize_t i, n0 = 0, n1 = 0, count0 = 0
    _need(event.shape[0] == n and out.shape[0] == n, "v, event and out must have one length")
    with nogil:
        for i in range(n):
            count0 += event[i] == 0
        for i in range(n):
            if event[i]:
                out[count0 + n1] = v[i]
                n1 += 1
            else:
                out[n0] = v[i]
                n0 += 1
    return count0


def cutoff_two_sorted(
    const double[::1] p0,               # IN  values of the rows without the event, sorted
    const double[::1] p1,               # IN  values of the rows with the event, sorted
):
    """``(value, lower, upper, sign)`` of the cutoff error of unit-weight rows.

    The same numbers, bit for bit, as ``group_two_sorted`` followed by
    ``max_abs_interval_grouped`` with ``total = len(p0) + len(p1)`` and the
    interval's ends read off the grouped values (``cutoff_core``): each
    group adds ``(P_k - v_k W_k) / total`` to the prefix sum, with the
    counts ``W_k`` and ``P_k`` as doubles. The ends of the best prefixes
    are tracked as values, so nothing of size n is written.
    """
    _need(p0.shape[0] + p1.shape[0] > 0, "p0 and p1 must not both be empty")
    return _cutoff_runs(&p0[0] if p0.shape[0] else NULL, p0.shape[0],
                        &p1[0] if p1.shape[0] else NULL, p1.shape[0])


cdef tuple _cutoff_runs(const double* p0, Py_ssize_t n0, const double* p1, Py_ssize_t n1):
    cdef Py_ssize_t i = 0, j = 0
    cdef double total = <double> (n0 + n1)
    cdef double v, cur = 0.0, wk = 0.0, pk = 0.0
    cdef bint positive, started = False
    cdef WorstScan scan
    scan_init(&scan)
    with nogil:
        while i < n0 or j < n1:
            positive = i >= n0 or (j < n1 and p1[j] < p0[i])
            if positive:
                v = p1[j]
                j += 1
            else:
                v = p0[i]
                i += 1
            if not started or v != cur:
                if started:
                    scan_add(&scan, cur, (pk - cur * wk) / total)  # close the group
                started = True
                cur = v + 0.0       # -0.0 and 0.0 group as +0.0
                wk = 0.0
                pk = 0.0
            wk += 1.0
            if positive:
                pk += 1.0
        scan_add(&scan, cur, (pk - cur * wk) / total)
    return scan_result(&scan)


def cutoff_unit(
    const double[::1] v,                # IN  (n,) values in [0, 2)
    const unsigned char[::1] event,     # IN  (n,) 0 or 1 (any non-zero is 1)
    uint64_t[::1] work,                 # OUT (2 n,) work
):
    """``cutoff_two_sorted`` of the rows split by ``event``, sorted by one radix sort.

    Returns ``(value, lower, upper, sign)``, or None if a value is outside
    ``[0, 2)`` (the caller takes another path). Keys are the values' bits
    (-0.0 read as +0.0), which order non-negative doubles, with the event in
    bit 62 (zero for every double in ``[0, 2)``); six passes of 11-bit
    digits at most, a digit shared by every row skipped.
    """
    cdef Py_ssize_t n = v.shape[0]
    cdef Py_ssize_t i, n0 = 0
    cdef uint64_t u, flag = (<uint64_t> 1) << 62
    cdef uint64_t* counts = NULL
    cdef uint64_t* src
    cdef uint64_t* dst
    cdef double* no_payload = NULL       # the keys carry the event: no payload
    cdef double* no_payload_work = NULL
    cdef bint bad = False
    cdef _Bits bits
    _need(event.shape[0] == n and work.shape[0] >= 2 * n and n > 0,
          "v and event must have one length n > 0 and work 2 n entries")
    counts = <uint64_t*> PyMem_Malloc(RADIX_PASSES * RADIX * sizeof(uint64_t))
    if counts == NULL:
        raise MemoryError()
    try:
        with nogil:
            memset(counts, 0, RADIX_PASSES * RADIX * sizeof(uint64_t))
            src = &work[0]
            dst = &work[n]
            for i in range(n):
                bits.d = v[i] + 0.0
                u = bits.u
                if u >> 62:
                    bad = True
                    break
                if event[i]:
                    u |= flag
                else:
                    n0 += 1
                src[i] = u
                radix_count(u, counts)
            if not bad:
                radix_sort(&src, &no_payload, &dst, &no_payload_work, n, counts)
                # the values back, in place: negatives, then positives
                for i in range(n):
                    src[i] &= ~flag
    finally:
        PyMem_Free(counts)
    if bad:
        return None
    return _cutoff_runs(<double*> src, n0, (<double*> src) + n0, n - n0)


def rank_of_label(
    const double[:, ::1] P,             # IN  (n, C) probabilities
    const Py_ssize_t[::1] y,            # IN  (n,) observed columns in [0, C)
    Py_ssize_t[::1] out,                # OUT (n,) rank(p, y), from 1
):
    """``1 + #{j: p_j > p_y} + #{j < y: p_j = p_y}`` of each row, in one read of ``P``."""
    cdef Py_ssize_t n = P.shape[0], C = P.shape[1]
    cdef Py_ssize_t i, j, r, yi
    cdef double py
    _need(y.shape[0] == n and out.shape[0] == n, "P, y and out must have n rows")
    _need(_all_in(y, 0, C), "y must be in [0, n_classes)")
    with nogil:
        for i in range(n):
            yi = y[i]
            py = P[i, yi]
            r = 1
            for j in range(yi):
                r += P[i, j] >= py
            for j in range(yi + 1, C):
                r += P[i, j] > py
            out[i] = r


# Buckets of the bounds: 2^12. The first half holds v < 0.5 by the top bits
# of v's double (exponent and BOUND_MANTISSA mantissa bits: 64 buckets per
# binade, 32 binades down to 2^-33, smaller values in bucket 0); the second
# half mirrors it on 1 - v for v >= 0.5 (exact there by Sterbenz's lemma), so
# values near 0 and near 1 (the predicted utilities of a class column and of
# a top-K sum) both spread. 2^12 rather than 2^10: on calibrated 5e4 x 1000
# Dirichlet data 747 instead of 828 of the 2000 comb members stay to be
# computed exactly, at the same cost per pass.
cdef enum:
    BOUND_BUCKETS = 4096
    BOUND_HALF = 2048
    BOUND_MANTISSA = 6


cdef inline Py_ssize_t _half_bucket(double x) noexcept nogil:
    # a non-decreasing index in [0, BOUND_HALF) of x in [0, 0.5]; x <= 0 -> 0;
    # selects rather than branches (random values would mispredict them)
    cdef _Bits bits
    cdef long long b
    bits.d = x if x > 0.0 else 0.0
    b = <long long> (bits.u >> (52 - BOUND_MANTISSA))
    b -= (<long long> 1022 << BOUND_MANTISSA) - BOUND_HALF
    b = b if b > 0 else 0
    b = b if b < BOUND_HALF - 1 else BOUND_HALF - 1
    return <Py_ssize_t> b


cdef inline Py_ssize_t _bucket(double v) noexcept nogil:
    # non-decreasing in v on all doubles (not NaN): equal values share a bucket
    cdef bint low = v < 0.5
    cdef Py_ssize_t h = _half_bucket(v if low else 1.0 - v)
    return h if low else BOUND_BUCKETS - 1 - h


cdef inline Py_ssize_t _linear_bucket(double v, double origin, double scale) noexcept nogil:
    # (v - origin) * scale truncated and clamped to [0, BOUND_BUCKETS): each
    # step is a correctly rounded non-decreasing function of v (scale > 0),
    # so the map is non-decreasing and equal values share a bucket
    cdef double x = (v - origin) * scale
    x = x if x > 0.0 else 0.0
    x = x if x < BOUND_BUCKETS - 1 else BOUND_BUCKETS - 1
    return <Py_ssize_t> x


cdef inline Py_ssize_t _map(double v, double origin, double scale) noexcept nogil:
    # the linear map when scale > 0, else the binade map
    if scale > 0.0:
        return _linear_bucket(v, origin, scale)
    return _bucket(v)


def bucket_of(
    const double[::1] v,                # IN  (n,) values
    Py_ssize_t[::1] out,                # OUT (n,) buckets
    double origin=0.0,                  # IN  the linear map's origin
    double scale=0.0,                   # IN  its scale; 0: the binade map
):
    """The bound's bucket of every value, in ``[0, 4096)`` (for the tests)."""
    cdef Py_ssize_t i
    _need(out.shape[0] == v.shape[0], "v and out must have one length")
    _need(scale >= 0.0, "scale must be >= 0")
    with nogil:
        for i in range(v.shape[0]):
            out[i] = _map(v[i], origin, scale)


def cutoff_bounds(
    const double[::1] v,                # IN  (n,) values
    const Py_ssize_t[::1] key,          # IN  (n,) the event is lo <= key[i] <= hi
    Py_ssize_t lo,                      # IN
    Py_ssize_t hi,                      # IN
    const double[::1] w,                # IN  (n,) weights, or empty for unit weights
    double origin=0.0,                  # IN  the linear map's origin
    double scale=0.0,                   # IN  its scale; 0: the binade map
):
    """``(lower, upper, absolute)`` bounds of the cutoff error of ``(event, v)``.

    Sums, not divided by the total weight: with ``r_i = w_i (e_i - v_i)``,
    the cutoff error times the total weight is ``max |sum_{v_i in I} r_i|``
    over intervals ``I`` of values, and ``lower <= that <= upper``;
    ``absolute = sum |r_i|`` (the scale of the rounding of either side).
    One pass, no sort: rows go to fixed buckets by a map of ``v`` that is
    non-decreasing (``_bucket``: 64 buckets per binade of ``v`` below 0.5
    and of ``1 - v`` above; or, with ``scale > 0``, ``_linear_bucket``:
    ``(v - origin) * scale`` truncated, for values packed in a short range,
    as the top-K sums are), accumulating ``P_b`` (the positive ``r``)
    and ``N_b`` (the negative ones) of each bucket ``b``; ``R_b = P_b + N_b``.

    Lower: the rows of buckets ``a..b`` are exactly the rows with ``v`` in
    ``[least v of them, largest v of them]`` (the map is non-decreasing), a
    feasible interval; so ``max |R_a + ... + R_b|`` over bucket ranges,
    the largest minus the smallest prefix sum of ``R``, is at most the error.

    Upper: the rows of any interval ``I`` lie in buckets ``a <= b`` (those of
    its least and largest ``v``): some rows of ``a``, all rows of the
    buckets strictly between, some rows of ``b``. A subset of a bucket sums
    to at most its ``P`` and at least its ``N``, so the sum over ``I`` is at
    most ``P_a + R_{a+1} + ... + R_{b-1} + P_b`` (``P_a`` if ``a = b``) and
    at least the same with ``N``. The largest of these over ``a <= b`` is one
    scan: ``T_b = max_{a<b} (P_a + R_{a+1} + ... + R_{b-1})`` obeys
    ``T_{b+1} = max(T_b + R_b, P_b)``, and the best pair ending at ``b`` is
    ``max(P_b, T_b + P_b)``; the same with ``N`` and min for the negative
    side. ``upper`` is the larger of the two magnitudes.
    """
    cdef Py_ssize_t n = v.shape[0]
    cdef Py_ssize_t i, b
    cdef bint unit = w.shape[0] == 0
    # two interleaved tables of (negative, positive) sums per bucket, for even
    # and odd rows (a run of rows in one bucket adds to two chains, not one),
    # then the sums of each bucket
    cdef double* table = NULL
    cdef double* pos
    cdef double* neg
    cdef double r, r2, s = 0.0, smax = 0.0, smin = 0.0, absolute = 0.0
    cdef double tp = -1.0, tn = 1.0, best_p = 0.0, best_n = 0.0, rb
    cdef bint started = False
    _need(key.shape[0] == n and (unit or w.shape[0] == n),
          "v, key and w (unless empty) must have one length")
    _need(scale >= 0.0, "scale must be >= 0")
    table = <double*> PyMem_Malloc(6 * BOUND_BUCKETS * sizeof(double))
    if table == NULL:
        raise MemoryError()
    pos = table + 4 * BOUND_BUCKETS
    neg = pos + BOUND_BUCKETS
    try:
        with nogil:
            memset(table, 0, 4 * BOUND_BUCKETS * sizeof(double))
            for i in range(0, n - 1, 2):
                r = <double> ((key[i] >= lo) & (key[i] <= hi)) - v[i]
                r2 = <double> ((key[i + 1] >= lo) & (key[i + 1] <= hi)) - v[i + 1]
                if not unit:
                    r = w[i] * r
                    r2 = w[i + 1] * r2
                table[2 * _map(v[i], origin, scale) + (r > 0.0)] += r
                table[2 * BOUND_BUCKETS + 2 * _map(v[i + 1], origin, scale) + (r2 > 0.0)] += r2
            if n % 2:
                i = n - 1
                r = <double> ((key[i] >= lo) & (key[i] <= hi)) - v[i]
                if not unit:
                    r = w[i] * r
                table[2 * _map(v[i], origin, scale) + (r > 0.0)] += r
            for b in range(BOUND_BUCKETS):
                neg[b] = table[2 * b] + table[2 * BOUND_BUCKETS + 2 * b]
                pos[b] = table[2 * b + 1] + table[2 * BOUND_BUCKETS + 2 * b + 1]
            for b in range(BOUND_BUCKETS):
                rb = pos[b] + neg[b]
                absolute += pos[b] - neg[b]
                s += rb
                if s > smax:
                    smax = s
                if s < smin:
                    smin = s
                # pairs (a, b): tp, tn hold T_b (no a < b before the first bucket)
                if pos[b] > best_p:
                    best_p = pos[b]
                if neg[b] < best_n:
                    best_n = neg[b]
                if started:
                    if tp + pos[b] > best_p:
                        best_p = tp + pos[b]
                    if tn + neg[b] < best_n:
                        best_n = tn + neg[b]
                    tp = tp + rb if tp + rb > pos[b] else pos[b]
                    tn = tn + rb if tn + rb < neg[b] else neg[b]
                else:
                    tp = pos[b]
                    tn = neg[b]
                    started = True
    finally:
        PyMem_Free(table)
    return smax - smin, (best_p if best_p > -best_n else -best_n), absolute


# Levels of a probability for the top-K bounds: level l in [0, TOP_LEVELS - 1)
# holds p in [2^-l, 2^-l+1) (level 0: p >= 1), the last level every p below
# 2^-(TOP_LEVELS - 2), zeros included. Levels are non-decreasing as p falls.
cdef enum:
    TOP_LEVELS = 66


cdef inline Py_ssize_t _level(double p) noexcept nogil:
    cdef _Bits bits
    cdef long long e
    if not (p > 0.0):
        return TOP_LEVELS - 1
    bits.d = p
    e = 1023 - <long long> ((bits.u >> 52) & 0x7FF)
    if e < 0:
        return 0
    if e > TOP_LEVELS - 1:
        return TOP_LEVELS - 1
    return <Py_ssize_t> e


def top_k_mass_bound(
    const double[:, ::1] P,             # IN  (n, C) probabilities (non-negative)
    const Py_ssize_t[::1] rank,         # IN  (n,) rank(p, y), from 1
    const double[::1] w,                # IN  (n,) weights, or empty for unit weights
    double[::1] out,                    # OUT (C + 1,) out[K] for K = 1..C
):
    """Upper bounds of ``sum_i w_i |e_iK - v_iK|`` for every ``K``, without a sort.

    ``v_iK`` is the sum of the ``K`` largest entries of row ``i`` (as the
    running sum of the sorted row computes it) and ``e_iK = 1{rank_i <= K}``;
    the sum bounds the cutoff error of TopK(K) times the total weight. Per
    row, with ``t`` its sum and ``c_l``, ``b_l`` the count and the sum of its
    entries at levels ``<= l`` and ``> l`` (``_level``): for ``K >= c_l`` the
    top ``K`` hold every entry at levels ``<= l``, so the rest sums to at
    most ``b_l``. Hence ``|e - v| <= t`` if ``rank > K`` and
    ``<= |1 - t| + min_{l: c_l <= K} b_l`` otherwise, each plus
    ``4 (C + 70) u (t + 1)`` (``u = 2^-53``) for the rounding of ``t``,
    ``b_l`` and the running sum. The per-row step functions of ``K`` are
    added through a difference array (its rounding is the caller's margin).
    """
    cdef Py_ssize_t n = P.shape[0], C = P.shape[1]
    cdef Py_ssize_t i, j, lv, K, start, stop
    cdef bint unit = w.shape[0] == 0
    cdef Py_ssize_t count[TOP_LEVELS]
    cdef double mass[TOP_LEVELS]
    cdef double below[TOP_LEVELS]
    cdef double t, wi, delta, value, previous
    cdef double* diff = NULL
    _need(rank.shape[0] == n and out.shape[0] == C + 1 and (unit or w.shape[0] == n),
          "P, rank and w (unless empty) must have n rows and out C + 1 entries")
    _need(_all_in(rank, 1, C + 1), "rank must be in [1, n_classes]")
    diff = <double*> PyMem_Malloc((C + 2) * sizeof(double))
    if diff == NULL:
        raise MemoryError()
    try:
        with nogil:
            memset(diff, 0, (C + 2) * sizeof(double))
            for i in range(n):
                memset(count, 0, sizeof(count))
                memset(mass, 0, sizeof(mass))
                for j in range(C):
                    lv = _level(P[i, j])
                    count[lv] += 1
                    mass[lv] += P[i, j]
                # below[lv] = b_l, summed from the smallest entries up; t = the row sum
                below[TOP_LEVELS - 1] = 0.0
                for lv in range(TOP_LEVELS - 2, -1, -1):
                    below[lv] = below[lv + 1] + mass[lv + 1]
                t = below[0] + mass[0]
                wi = 1.0 if unit else w[i]
                delta = 4.0 * (C + 70) * 1.1102230246251565e-16 * (t + 1.0)
                # K in [1, rank): |e - v| = v <= t
                diff[1] += wi * (t + delta)
                diff[rank[i]] -= wi * (t + delta)
                # K in [rank, C]: |1 - t| + b(K), b(K) = b_l for K in [c_l, c_{l+1})
                # (b non-increasing, c non-decreasing in l), t for K < c_0
                start = rank[i]
                previous = t
                stop = 0
                for lv in range(TOP_LEVELS):
                    stop += count[lv]            # c_l
                    if stop > start:
                        value = wi * (fabs(1.0 - t) + previous + delta)
                        diff[start] += value
                        diff[stop] -= value
                        start = stop
                    previous = below[lv]
                if start <= C:
                    value = wi * (fabs(1.0 - t) + previous + delta)
                    diff[start] += value
                    diff[C + 1] -= value
            value = 0.0
            out[0] = 0.0
            for K in range(1, C + 1):
                value += diff[K]
                out[K] = value
    finally:
        PyMem_Free(diff)


def gather_top(
    const double[:, ::1] P,             # IN  (n, C) probabilities (non-negative)
    Py_ssize_t lo,                      # IN  first row
    Py_ssize_t m,                       # IN  1 <= m <= C
    double[:, ::1] out,                 # OUT (rows, C) candidates of rows lo, lo + 1, ...
    Py_ssize_t[::1] widths,             # OUT (rows,) work: each row's count
):
    """Copy, for each row, a set of entries holding its ``m`` largest; return the width.

    Row ``lo + r`` goes to ``out[r]``: its entries at levels ``<= l``
    (``_level``), ``l`` the first level with at least ``m`` of them (a
    multiset containing the ``m`` largest values), then -1.0 up to the
    returned width (the largest count), below every entry. Sorting
    ``out[:, :width]`` and reading each row backwards gives the ``m``
    largest values in decreasing order, as a sort of the whole row does.
    """
    cdef Py_ssize_t n = P.shape[0], C = P.shape[1], rows = out.shape[0]
    cdef Py_ssize_t i, r, j, lv, last, g, width = 0
    cdef Py_ssize_t count[TOP_LEVELS]
    _need(out.shape[1] == C and widths.shape[0] == rows and 0 <= lo and lo + rows <= n
          and 1 <= m <= C, "out must have C columns and rows within P, 1 <= m <= C")
    with nogil:
        for r in range(rows):
            i = lo + r
            memset(count, 0, sizeof(count))
            for j in range(C):
                count[_level(P[i, j])] += 1
            g = 0
            last = TOP_LEVELS - 1
            for lv in range(TOP_LEVELS):
                g += count[lv]
                if g >= m:
                    last = lv
                    break
            g = 0
            for j in range(C):
                if _level(P[i, j]) <= last:
                    out[r, g] = P[i, j]
                    g += 1
            widths[r] = g
            if g > width:
                width = g
        for r in range(rows):
            for j in range(widths[r], width):
                out[r, j] = -1.0
    return width


# The row sort's high digit has at most SORT_HIGH buckets: each binade of
# the row's range split by its top s mantissa bits (s <= 6, as many as fit);
# the low digit is the next 6 mantissa bits.
cdef enum:
    SORT_HIGH = 2048
    SORT_SUB = 6
    SORT_LOW = 64
    SORT_MOVES = 8


def sort_rows(
    const double[:, ::1] P,             # IN  (n, C) probabilities (non-negative)
    Py_ssize_t lo,                      # IN  first row
    double[:, ::1] out,                 # OUT (rows, C) rows lo, lo + 1, ... in decreasing order
    unsigned char[::1] failed,          # OUT (rows,) 1 where the row was left to the caller
):
    """Sort rows ``lo, lo + 1, ...`` of ``P`` in decreasing order; return how many failed.

    Non-negative doubles order as their bits. Each row is sorted by two
    stable counting passes (least significant digit first) on two digits
    of its bits read downwards: the high digit the binade (from the row's
    largest down to its smallest) and the top ``s`` mantissa bits, ``s <= 6``
    as large as keeps the buckets within 2048; the low digit the next 6
    mantissa bits. That orders the entries by their top ``17 + s`` bits; one
    insertion pass finishes, moving only entries that share them. A row
    whose insertion pass would move entries more than ``8 C`` places in
    all (many entries alike in those bits but not equal) is left as it is
    and flagged in ``failed``: the caller sorts it, as it does a row with a
    negative, infinite or NaN entry. The values are those of the sorted row
    (-0.0 written as 0.0).
    """
    cdef Py_ssize_t n = P.shape[0], C = P.shape[1], rows = out.shape[0]
    cdef Py_ssize_t i, r, j, b, k, n_high, moves, n_failed = 0
    cdef Py_ssize_t sub, shift_high, shift_low
    cdef uint64_t u, top, bottom, x, e_top, mask
    cdef Py_ssize_t* high = NULL
    cdef Py_ssize_t* low = NULL
    cdef uint64_t* bits = NULL
    cdef uint64_t* middle = NULL
    cdef uint64_t* placed = NULL
    cdef _Bits cast
    _need(out.shape[1] == C and failed.shape[0] == rows and 0 <= lo and lo + rows <= n
          and C > 0, "out must have C > 0 columns and rows within P")
    high = <Py_ssize_t*> PyMem_Malloc((SORT_HIGH + 1 + SORT_LOW + 1) * sizeof(Py_ssize_t))
    bits = <uint64_t*> PyMem_Malloc(3 * C * sizeof(uint64_t))
    if high == NULL or bits == NULL:
        PyMem_Free(high)
        PyMem_Free(bits)
        raise MemoryError()
    low = high + SORT_HIGH + 1
    middle = bits + C
    placed = middle + C
    try:
        with nogil:
            for r in range(rows):
                i = lo + r
                top = 0
                bottom = <uint64_t> 0x7FF0000000000000
                for j in range(C):
                    cast.d = P[i, j] + 0.0
                    u = cast.u
                    bits[j] = u
                    top = u if u > top else top
                    bottom = u if u < bottom else bottom
                if top >= <uint64_t> 0x7FF0000000000000:
                    # a negative, infinite or NaN entry: not ordered by its bits
                    failed[r] = 1
                    n_failed += 1
                    continue
                # the high digit: (e_top - e) << sub, then the top sub mantissa bits
                e_top = top >> 52
                sub = SORT_SUB
                while sub > 0 and (<Py_ssize_t> (e_top - (bottom >> 52)) + 1) << sub > SORT_HIGH:
                    sub -= 1
                n_high = (<Py_ssize_t> (e_top - (bottom >> 52)) + 1) << sub
                shift_high = 52 - sub
                shift_low = 52 - sub - SORT_SUB
                mask = ((<uint64_t> 1) << sub) - 1
                memset(high, 0, (n_high + 1) * sizeof(Py_ssize_t))
                memset(low, 0, (SORT_LOW + 1) * sizeof(Py_ssize_t))
                for j in range(C):
                    u = bits[j]
                    b = (<Py_ssize_t> (e_top - (u >> 52)) << sub) + <Py_ssize_t> (
                        mask - ((u >> shift_high) & mask))
                    high[b + 1] += 1
                    b = SORT_LOW - 1 - <Py_ssize_t> ((u >> shift_low) & (SORT_LOW - 1))
                    low[b + 1] += 1
                for b in range(n_high):
                    high[b + 1] += high[b]
                for b in range(SORT_LOW):
                    low[b + 1] += low[b]
                # stable passes: the low digit, then the high one
                for j in range(C):
                    u = bits[j]
                    b = SORT_LOW - 1 - <Py_ssize_t> ((u >> shift_low) & (SORT_LOW - 1))
                    middle[low[b]] = u
                    low[b] += 1
                for j in range(C):
                    u = middle[j]
                    b = (<Py_ssize_t> (e_top - (u >> 52)) << sub) + <Py_ssize_t> (
                        mask - ((u >> shift_high) & mask))
                    placed[high[b]] = u
                    high[b] += 1
                # entries that share both digits, by insertion, within a budget
                moves = 0
                for k in range(1, C):
                    x = placed[k]
                    if placed[k - 1] < x:
                        j = k - 1
                        while j >= 0 and placed[j] < x:
                            placed[j + 1] = placed[j]
                            j -= 1
                        placed[j + 1] = x
                        moves += k - 1 - j
                        if moves > SORT_MOVES * C:
                            break
                if moves > SORT_MOVES * C:
                    failed[r] = 1
                    n_failed += 1
                    continue
                failed[r] = 0
                for j in range(C):
                    cast.u = placed[j]
                    out[r, j] = cast.d
    finally:
        PyMem_Free(high)
        PyMem_Free(bits)
    return n_failed
