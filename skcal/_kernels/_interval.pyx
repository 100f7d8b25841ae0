# Kernels over sorted predictions: grouping ties, the worst interval (maximum
# |sum| over contiguous runs) and the hull of the decision profile of the
# calibration decision loss. Callers validate and sort.
# Every kernel checks its argument shapes at entry (O(1)) and raises
# ValueError on a mismatch rather than reading or writing out of bounds;
# the contents (that ``order`` holds indices in range) are the caller's.


import numpy as np

from libc.math cimport signbit

from cpython.mem cimport (
    PyMem_Free, PyMem_Malloc, PyMem_RawFree, PyMem_RawMalloc, PyMem_RawRealloc,
)

cdef inline void _need(bint ok, str what) except *:
    if not ok:
        raise ValueError(f"kernel argument shapes do not match: {what}")


def group_sorted(
    const double[::1] p,                # IN  predictions, any order
    const double[::1] y,                # IN  outcomes in {0, 1} (or any reals)
    const double[::1] w,                # IN  non-negative weights
    const Py_ssize_t[::1] order,        # IN  a permutation sorting p ascending
    double[::1] values,                 # OUT distinct sorted p (first k used)
    double[::1] wsum,                   # OUT total weight per distinct value
    double[::1] wysum,                  # OUT total weight * y per distinct value
):
    """Collapse sorted (p, y, w) into distinct p values; return their count k."""
    cdef Py_ssize_t n = order.shape[0]
    cdef Py_ssize_t i, j, k = -1
    cdef double v, last = 0.0
    _need(p.shape[0] == n and y.shape[0] == n and w.shape[0] == n,
          "p, y, w and order must have one length")
    _need(values.shape[0] >= n and wsum.shape[0] >= n and wysum.shape[0] >= n,
          "values, wsum and wysum need room for len(order) entries")
    with nogil:
        for i in range(n):
            j = order[i]
            v = p[j]
            if k < 0 or v != last:
                k += 1
                values[k] = v + 0.0     # -0.0 and 0.0 group as +0.0
                wsum[k] = 0.0
                wysum[k] = 0.0
                last = v
            wsum[k] += w[j]
            wysum[k] += w[j] * y[j]
    return k + 1


def group_two_sorted(
    const double[::1] p0,               # IN  predictions of the negatives, sorted
    const double[::1] p1,               # IN  predictions of the positives, sorted
    double[::1] values,                 # OUT distinct sorted p (first k used)
    double[::1] wsum,                   # OUT count per distinct value
    double[::1] wysum,                  # OUT count of positives per distinct value
):
    """Merge two sorted runs into distinct values with counts; return k.

    The unit-weight, 0/1-label case of ``group_sorted``: the counts are
    exact integers in float64, so it gives that kernel's output bit for bit
    from two value sorts instead of one argsort.
    """
    cdef Py_ssize_t n0 = p0.shape[0], n1 = p1.shape[0]
    cdef Py_ssize_t i = 0, j = 0, k = -1
    cdef double v, last = 0.0
    cdef bint positive
    _need(values.shape[0] >= n0 + n1 and wsum.shape[0] >= n0 + n1
          and wysum.shape[0] >= n0 + n1,
          "values, wsum and wysum need room for len(p0) + len(p1) entries")
    with nogil:
        while i < n0 or j < n1:
            positive = i >= n0 or (j < n1 and p1[j] < p0[i])
            if positive:
                v = p1[j]
                j += 1
            else:
                v = p0[i]
                i += 1
            if k < 0 or v != last:
                k += 1
                values[k] = v + 0.0     # -0.0 and 0.0 group as +0.0
                wsum[k] = 0.0
                wysum[k] = 0.0
                last = v
            wsum[k] += 1.0
            if positive:
                wysum[k] += 1.0
    return k + 1


def max_abs_interval_grouped(
    const double[::1] values,           # IN  distinct predictions, increasing
    const double[::1] weights,          # IN  weight per value
    const double[::1] positives,        # IN  positive weight per value
    double total,                       # IN  weights.sum(), positive
):
    """``max_abs_interval`` of the residuals ``(positives - values * weights) / total``.

    The residuals are formed on the fly, exactly as numpy forms them, so
    nothing of size K is allocated.
    """
    cdef Py_ssize_t n = values.shape[0]
    cdef Py_ssize_t i, imax = 0, imin = 0
    cdef double s = 0.0, smax = 0.0, smin = 0.0
    _need(weights.shape[0] == n and positives.shape[0] == n,
          "values, weights and positives must have one length")
    with nogil:
        for i in range(n):
            s += (positives[i] - values[i] * weights[i]) / total
            if s > smax:
                smax = s
                imax = i + 1
            elif s < smin:
                smin = s
                imin = i + 1
    return _interval_result(smax, smin, imax, imin)


cdef tuple _interval_result(double smax, double smin, Py_ssize_t imax, Py_ssize_t imin):
    if smax - smin <= 0.0:
        return 0.0, 0, 0, 0
    if imin < imax:
        return smax - smin, imin, imax - 1, 1
    return smax - smin, imax, imin - 1, -1


def max_abs_interval(
    const double[::1] b,                # IN  residual mass per sorted group
):
    """Maximum of |b[lo] + ... + b[hi]| over contiguous runs.

    Returns ``(value, lo, hi, sign)`` with the run ``lo..hi`` inclusive and
    ``sign`` +1 when the run's sum is positive, -1 when negative and 0 when
    every run sums to zero (then ``lo = hi = 0``). It is ``max(S) - min(S)``
    over the prefix sums ``S_0 = 0, S_k = b_0 + ... + b_{k-1}``.
    """
    cdef Py_ssize_t n = b.shape[0]
    cdef Py_ssize_t i, imax = 0, imin = 0
    cdef double s = 0.0, smax = 0.0, smin = 0.0
    with nogil:
        for i in range(n):
            s += b[i]
            if s > smax:
                smax = s
                imax = i + 1
            elif s < smin:
                smin = s
                imin = i + 1
    return _interval_result(smax, smin, imax, imin)


def max_abs_interval_rows(
    const double[:, ::1] v,             # IN  (m, n) predicted utility: row k is utility k
    const double[:, ::1] r,             # IN  (m, n) realised minus predicted utility
    const double[::1] w,                # IN  (n,) non-negative sample weights
    const Py_ssize_t[:, ::1] order,     # IN  (m, n) row k a permutation sorting v[k] ascending
    double[::1] value,                  # OUT (m,) worst |sum of w r| over runs of v[k]
    double[::1] lower,                  # OUT (m,) smallest v[k] in the worst run
    double[::1] upper,                  # OUT (m,) largest v[k] in the worst run
    signed char[::1] sign,              # OUT (m,) sign of the worst run's sum, 0 if none
):
    """``max_abs_interval`` for many utilities at once, grouping ties in v.

    Row ``k`` is one utility: the worst interval is the largest
    ``|sum_{v[k, j] in [a, b]} w[j] r[k, j]|`` over closed intervals, that is
    ``max(S) - min(S)`` over the prefix sums ``S`` of the residuals in the
    order of ``v[k]``, where a prefix may only end between two distinct
    values (tied rows are one atom of the empirical distribution). The run is
    reported by its smallest and largest ``v``; when every run sums to zero,
    ``value = sign = 0`` and ``lower = upper = min v[k]``. Weights are not
    normalised here (the caller divides ``value`` by their total), so that
    integer weights and exactly representable residuals sum exactly.
    """
    cdef Py_ssize_t m = v.shape[0], n = v.shape[1]
    cdef Py_ssize_t k, i, j, imax, imin
    cdef double s, smax, smin
    _need(r.shape[0] == m and r.shape[1] == n, "r must have the shape of v")
    _need(order.shape[0] == m and order.shape[1] == n, "order must have the shape of v")
    _need(w.shape[0] == n, "w must have one entry per column of v")
    _need(value.shape[0] == m and lower.shape[0] == m and upper.shape[0] == m
          and sign.shape[0] == m, "value, lower, upper and sign need one entry per row of v")
    with nogil:
        for k in range(m):
            s = 0.0
            smax = 0.0
            smin = 0.0
            imax = 0
            imin = 0
            for i in range(n):
                j = order[k, i]
                s += w[j] * r[k, j]
                # the prefix may not split a group of tied values
                if i + 1 < n and v[k, order[k, i + 1]] == v[k, j]:
                    continue
                if s > smax:
                    smax = s
                    imax = i + 1
                elif s < smin:
                    smin = s
                    imin = i + 1
            if n == 0:
                value[k] = 0.0
                lower[k] = 0.0
                upper[k] = 0.0
                sign[k] = 0
            elif smax - smin <= 0.0:
                value[k] = 0.0
                lower[k] = v[k, order[k, 0]]
                upper[k] = lower[k]
                sign[k] = 0
            elif imin < imax:           # the run imin..imax-1 sums to smax - smin > 0
                value[k] = smax - smin
                lower[k] = v[k, order[k, imin]]
                upper[k] = v[k, order[k, imax - 1]]
                sign[k] = 1
            else:                       # the run imax..imin-1 sums to smin - smax < 0
                value[k] = smax - smin
                lower[k] = v[k, order[k, imax]]
                upper[k] = v[k, order[k, imin - 1]]
                sign[k] = -1


cdef inline bint _below_chord(
    double xj, double hj, double xk, double hk, double xi, double hi
) noexcept nogil:
    """Whether (xk, hk) lies on or below the chord from (xj, hj) to (xi, hi)."""
    return (xk - xj) * (hi - hj) - (hk - hj) * (xi - xj) >= 0.0


# Points of the decision profile are filtered in blocks of this many before
# Andrew's monotone chain (see ``_hull_flush``).
cdef enum:
    _BLOCK = 1024


cdef struct _Hull:
    double* x                           # the upper hull so far: vertices by x
    double* h
    Py_ssize_t size
    Py_ssize_t capacity
    double* block                       # 4 _BLOCK: points waiting (x, h), filter work
    Py_ssize_t waiting


cdef int _hull_push(_Hull* hull, double x, double h) noexcept nogil:
    """Push a point right of every other through Andrew's monotone chain; -1 if out of memory."""
    cdef double* grown
    cdef Py_ssize_t size = hull.size
    while size >= 2 and _below_chord(
        hull.x[size - 2], hull.h[size - 2], hull.x[size - 1], hull.h[size - 1], x, h
    ):
        size -= 1
    if size == hull.capacity:
        grown = <double*> PyMem_RawRealloc(hull.x, 2 * size * sizeof(double))
        if grown == NULL:
            return -1
        hull.x = grown
        grown = <double*> PyMem_RawRealloc(hull.h, 2 * size * sizeof(double))
        if grown == NULL:
            return -1
        hull.h = grown
        hull.capacity = 2 * size
    hull.x[size] = x
    hull.h[size] = h
    hull.size = size + 1
    return 0


cdef int _hull_flush(_Hull* hull) noexcept nogil:
    """Filter the waiting points, then push the rest through the chain.

    The chain is one chain of dependent steps (each push reads the stack
    the last one left) and spent 7 ns a point at K = 10**7. A point on or
    below the chord of its two neighbours is no vertex of the upper hull
    of any set holding the three, so dropping every such point at once
    leaves the hull as it is. Rounds of that test, each point against its
    neighbours of the round before (independent steps, no branch: the
    survivors are written and counted by the test's 0 or 1), keep the
    block's first and last points and stop when a round drops under a
    quarter of the points; the few left go through the chain, which then
    yields the same vertices as it would from all the points.
    """
    cdef double* x = hull.block
    cdef double* h = hull.block + _BLOCK
    cdef double* nx = hull.block + 2 * _BLOCK
    cdef double* nh = hull.block + 3 * _BLOCK
    cdef double* t
    cdef Py_ssize_t n = hull.waiting, i, k
    while n > 16:
        nx[0] = x[0]
        nh[0] = h[0]
        k = 1
        for i in range(1, n - 1):
            nx[k] = x[i]
            nh[k] = h[i]
            k += not _below_chord(x[i - 1], h[i - 1], x[i], h[i], x[i + 1], h[i + 1])
        nx[k] = x[n - 1]
        nh[k] = h[n - 1]
        k += 1
        t = x
        x = nx
        nx = t
        t = h
        h = nh
        nh = t
        i = n
        n = k
        if 4 * (i - n) < i:
            break
    for i in range(n):
        if _hull_push(hull, x[i], h[i]) < 0:
            return -1
    hull.waiting = 0
    return 0


cdef struct _Term:
    double coef                         # what a group adds to the active sums
    double slope
    double stop_coef                    # and to the sums that stop after it
    double stop_slope
    bint fractional                     # strict, and a rate strictly in (0, 1)


cdef inline bint _rate_inside(double P, double w) noexcept nogil:
    """Whether the rate ``P / w`` of a group (``w > 0``) lies strictly in (0, 1).

    The one test of the rate stream's groups, for the sweep and for the
    pass that lists them. ``min(P, w - P) > 0`` first: rarely true (a
    single row's rate is 0 or 1), no division then, and one test where a
    branch on ``P > 0`` alone would follow the outcome.
    """
    cdef double q
    if (P if P < w - P else w - P) > 0.0:
        q = P / w
        return q > 0.0 and q < 1.0
    return False


cdef inline _Term _value_term(
    double v, double w, double P, double total, bint strict
) noexcept nogil:
    """A group's term at its value (weight > 0): it starts there, or stops after.

    up (q > v): the term starts at v; down (q < v): it stops after v. No
    branch on the outcome (random on real data): each sum takes its term
    times 0 or 1. ``fractional`` (and nothing else) when ``strict`` and
    the rate is strictly between 0 and 1.
    """
    cdef double pi = w / total, q, up, down, a
    cdef _Term t
    t.fractional = False
    # rarely: P neither 0 nor w (its rate may still round to 0 or 1)
    if (P if P < w - P else w - P) > 0.0:     # min(P, w - P), no call to fmin
        if strict and _rate_inside(P, w):
            t.fractional = True
            return t
        q = P / w
        up = q > v
        down = q < v
        a = pi * q
        t.coef = up * a
        t.slope = up * pi
        t.stop_coef = down * a
        t.stop_slope = down * pi
    else:                               # q = 0 (P = 0) or 1 (P = w)
        up = (P > 0.0) & (v < 1.0)
        down = (P == 0.0) & (v > 0.0)
        # pi q is pi (q = 1) when up, 0 (q = 0) when down
        t.coef = up * pi
        t.slope = up * pi
        t.stop_coef = 0.0
        t.stop_slope = down * pi
    return t


cdef int _decision_sweep(
    const double* values, const double* weights, const double* positives,
    Py_ssize_t K, double total, const Py_ssize_t* q_order, Py_ssize_t m,
    bint strict, _Hull* hull, double at_zero,
) noexcept nogil:
    """The sweep of ``decision_hull``.

    ``at_zero``: the weight of the rate-0 groups of positive value, whose
    terms ``pi mu`` start at 0. ``q_order``: the ``m`` groups of rate in
    (0, 1), by rate. ``strict``: there are none (``m = 0``); return 1 at the
    first such group. Returns 0 when done, -1 if out of memory.
    """
    cdef Py_ssize_t i = 0, jq = 0, c = 0, g
    cdef double consts[3]
    cdef double x, v, q, pi, head, h
    cdef double coef = 0.0, slope = 0.0, stop_coef = 0.0, stop_slope = 0.0
    cdef double* block = hull.block
    cdef Py_ssize_t waiting = hull.waiting
    cdef _Term t
    cdef bint event
    consts[0] = 0.0
    consts[1] = 0.5
    consts[2] = 1.0
    while True:
        # skip zero-weight groups
        while i < K and weights[i] <= 0.0:
            i += 1
        # the next point: the next value, or else the next rate or constant
        x = values[i] if i < K else 2.0
        head = 2.0
        if jq < m:
            g = q_order[jq]
            head = positives[g] / weights[g]
        if c < 3 and consts[c] < head:
            head = consts[c]
        # the common case: a value alone (values are distinct), no event
        event = head <= x
        if event:
            if i >= K and jq >= m and c >= 3:
                break
            x = head
        # the terms whose right end was the previous point stop now
        coef -= stop_coef
        slope -= stop_slope
        stop_coef = stop_slope = 0.0
        if i < K and values[i] == x:
            t = _value_term(values[i], weights[i], positives[i], total, strict)
            if t.fractional:
                return 1
            coef += t.coef
            slope -= t.slope
            stop_coef -= t.stop_coef
            stop_slope += t.stop_slope
            i += 1
        if event:
            while jq < m:
                g = q_order[jq]
                q = positives[g] / weights[g]
                if q != x:
                    break
                v = values[g]
                pi = weights[g] / total
                if q < v:           # down: starts at q
                    coef -= pi * q
                    slope += pi
                elif q > v:         # up: stops after q (rate 1 stops after the last point)
                    stop_coef += pi * q
                    stop_slope -= pi
                jq += 1
            while c < 3 and consts[c] == x:
                if c == 0:                  # the rate-0 groups' terms start
                    slope += at_zero
                c += 1
        h = coef + slope * x
        h = h if h > 0.0 else 0.0       # h >= 0, as its terms are: rounding
        # into the block (the count in a local: through ``hull`` it would
        # go to memory and back at every point)
        block[waiting] = x
        block[_BLOCK + waiting] = h
        waiting += 1
        if waiting == _BLOCK:
            hull.waiting = waiting
            if _hull_flush(hull) < 0:
                return -1
            waiting = 0
    hull.waiting = waiting
    return _hull_flush(hull)


cdef double _rate_zero_weight(
    const double* values, const double* weights, const double* positives,
    Py_ssize_t K, double total,
) noexcept nogil:
    """``sum pi_k`` over the groups of rate 0 (``P_k = 0``) and value > 0.

    No branch on the data. Summed in the order of the values, as the sweep
    subtracts the same ``pi_k`` one by one after each value, which then
    leaves a slope of 0 up to rounding that largely cancels: four sums in
    another order measured up to 30 times the rounding error against
    exact rationals. Only the first value can be 0.
    """
    cdef Py_ssize_t g
    cdef double s = 0.0
    for g in range(1 if K > 0 and values[0] == 0.0 else 0, K):
        s += (positives[g] == 0.0) * (weights[g] / total)
    return s


def _by_rate(rates):
    """The order of the rates (finite, > 0), increasing, ties in index order.

    One ``np.sort`` of ``prefix_keys`` (numpy's SIMD sort of integers),
    whose order holds when no prefix is shared by distinct rates out of
    order (checked); else a stable argsort. The rates of groups of a few
    rows take few distinct values (1/2, 1/3, 2/3, ...), on which numpy's
    argsort is slow: 15 ms for 0.56 million rates of 16 values, the keys
    3 ms.
    """
    cdef Py_ssize_t m = rates.shape[0]
    cdef int b = index_bits(m) if m > 0 else 1
    if 1 < m and b <= 40:
        keys = np.empty(m, dtype=np.uint64)
        if prefix_keys(rates, keys, b):
            keys.sort()
            keys &= np.uint64((1 << b) - 1)
            order = keys.view(np.intp)
            ordered = rates[order]
            if not np.any(ordered[1:] < ordered[:-1]):
                return order
    return np.argsort(rates, kind="stable")


def decision_hull(
    const double[::1] values,           # IN  (K,) distinct predictions v_k, increasing
    const double[::1] weights,          # IN  (K,) weight W_k per value
    const double[::1] positives,        # IN  (K,) positive weight P_k per value
    double total,                       # IN  weights.sum(), positive
):
    """The upper hull of the decision profile ``h`` and its first maximum.

    ``h(mu) = sum_k pi_k |q_k - mu| 1{mu in [min(v_k, q_k), max(v_k, q_k)]}``
    (module docstring of ``skcal/metrics/_cdl.py``), with ``pi_k = W_k /
    total`` and ``q_k = P_k / W_k``, at the points ``{v_k} | {q_k} | {0,
    1/2, 1}`` of groups of positive weight. One sweep merges the two sorted
    streams (the values in order, the rates in order) with the three
    constants, keeps the active sums of ``pi_k q_k`` and ``pi_k`` (a term
    starts at its left end and stops after its right end, both closed),
    clips ``h`` at 0 and passes each point to the upper hull, by blocks of
    1024 filtered of points that cannot be vertices (``_hull_flush``), then
    Andrew's monotone chain: neither the points nor ``h`` are stored, only
    a block and the hull (a stack that grows as needed: a few vertices on
    real data, K at worst). At K = 10**7 single rows the whole takes 60 ms
    here (it took 0.2 s before the filter and the pass of rate-0 groups).

    A group whose rate is exactly 0 or 1 (every group of one row) needs no
    place in the rate stream: at rate 1 its term stops after 1, the last
    point; at rate 0 it starts at 0, so only the sum of these groups' ``pi``
    matters, taken in a pass before the sweep (``_rate_zero_weight``). A
    first sweep assumes no other rates; the first group of a rate strictly
    between 0 and 1 stops it, and the groups of such rates are argsorted
    by rate for a second. (At K = 10**7 single rows the argsort of all K
    rates, mostly 0 and 1, took 19 ms; the gathers through it in scrambled
    order cost nothing measurable. Leaving the rate-0 weight out of the
    slope and adding ``at_zero mu`` back at the end would spare the pass,
    without changing the hull's vertices, but measured up to 60 times the
    rounding error against exact rationals.)

    Returns ``(hull_x, hull_h, h_max, x_max)``, ``x_max`` the first point
    where ``h`` is largest (a vertex of the hull: the points left of it
    are lower).
    """
    cdef Py_ssize_t K = values.shape[0], m = 0, g, best = 0
    cdef int status
    cdef double at_zero
    cdef _Hull hull
    cdef Py_ssize_t[::1] index
    cdef const Py_ssize_t[::1] q_order
    cdef double[::1] out_x, out_h
    _need(weights.shape[0] == K and positives.shape[0] == K,
          "values, weights and positives must have one length")
    if K == 0:
        values = weights = positives = np.zeros(1)  # no group: the constants alone
    hull.size = 0
    hull.capacity = 64
    hull.waiting = 0
    hull.x = <double*> PyMem_RawMalloc(64 * sizeof(double))
    hull.h = <double*> PyMem_RawMalloc(64 * sizeof(double))
    hull.block = <double*> PyMem_RawMalloc(4 * _BLOCK * sizeof(double))
    try:
        if hull.x == NULL or hull.h == NULL or hull.block == NULL:
            raise MemoryError()
        with nogil:
            at_zero = _rate_zero_weight(&values[0], &weights[0], &positives[0], K, total)
            status = _decision_sweep(
                &values[0], &weights[0], &positives[0], K, total, NULL, 0, True,
                &hull, at_zero,
            )
        if status == 1:
            # groups of a rate strictly between 0 and 1: their indices (pages
            # of ``index`` never written are never touched), by rate
            fractional = np.empty(K, dtype=np.intp)
            index = fractional
            with nogil:
                for g in range(K):
                    index[m] = g
                    m += weights[g] > 0.0 and _rate_inside(positives[g], weights[g])
            fractional = fractional[:m]
            q_order = fractional[_by_rate(
                np.asarray(positives)[fractional] / np.asarray(weights)[fractional]
            )]
            hull.size = 0
            hull.waiting = 0
            with nogil:
                status = _decision_sweep(
                    &values[0], &weights[0], &positives[0], K, total,
                    &q_order[0], m, False, &hull, at_zero,
                )
        if status < 0:
            raise MemoryError()
        hull_x = np.empty(hull.size)
        hull_h = np.empty(hull.size)
        out_x = hull_x
        out_h = hull_h
        for g in range(hull.size):
            out_x[g] = hull.x[g]
            out_h[g] = hull.h[g]
            if out_h[g] > out_h[best]:
                best = g
    finally:
        PyMem_RawFree(hull.x)
        PyMem_RawFree(hull.h)
        PyMem_RawFree(hull.block)
    return hull_x, hull_h, out_h[best], out_x[best]


# --- grouping weighted rows by an LSD radix sort of (prediction, weight) pairs
#
# A prediction p >= 0 (+0.0 for -0.0) orders as the unsigned integer of its
# bits, so a least-significant-digit radix sort of those integers, carrying
# the weight, sorts the rows in O(n) passes over contiguous memory instead of
# an argsort and three random gathers. The outcome y in {0, 1} rides in the
# sign bit of the carried weight (w >= 0, so -w, or -0.0 for w = 0, marks a
# positive row). Digits of 11 bits: six passes at most, and a pass whose
# digit is the same on every row is skipped (the exponent bits of p in
# [0, 1] mostly are).

from libc.stdint cimport int64_t, uint32_t, uint64_t
from libc.string cimport memset

from ._prefix cimport prefix_run
from ._radix cimport RADIX, RADIX_PASSES, radix_count, radix_sort
from ._scan cimport WorstScan, scan_add, scan_init, scan_result


cdef union _Bits:
    double d
    uint64_t u


cdef union _Bits32:
    float f
    uint32_t u


def group_radix(
    const double[::1] p,                # IN  predictions in [0, 1], any order
    const unsigned char[::1] y,         # IN  outcomes, 0 or 1 (any non-zero is 1)
    const double[::1] w,                # IN  non-negative weights, or () for unit ones
    double[::1] values,                 # OUT distinct sorted p (first k used); work
    double[::1] wsum,                   # OUT total weight per distinct value; work
    double[::1] wysum,                  # OUT total weight of positives per value; work
    double[::1] work,                   # OUT (n,) work
):
    """``group_sorted`` of ``(p, y, w)`` by a stable radix sort; return k.

    Rows with equal predictions are summed in their input order (the sort is
    stable), so with unit weights the sums are exact counts, equal bit for
    bit to ``group_two_sorted``'s. The outputs double as the sort's buffers,
    ``(work, wysum)`` and ``(values, wsum)``; the last pass groups in place
    (a group never lands after its first row, and each row is read before
    its group is written): 8 bytes of work per row.
    """
    cdef Py_ssize_t n = p.shape[0]
    cdef Py_ssize_t i, k = -1
    cdef uint64_t u, last = 0
    cdef _Bits bits
    cdef double x
    cdef uint64_t* counts = NULL
    cdef uint64_t* src_key
    cdef uint64_t* dst_key
    cdef double* src_w
    cdef double* dst_w
    cdef bint unit = w.shape[0] == 0
    _need(y.shape[0] == n and (unit or w.shape[0] == n),
          "p, y and w must have one length (or w none)")
    _need(values.shape[0] >= n and wsum.shape[0] >= n and wysum.shape[0] >= n
          and work.shape[0] >= n,
          "values, wsum, wysum and work need room for len(p) entries")
    if n == 0:
        return 0
    counts = <uint64_t*> PyMem_Malloc(RADIX_PASSES * RADIX * sizeof(uint64_t))
    if counts == NULL:
        raise MemoryError()
    try:
        with nogil:
            memset(counts, 0, RADIX_PASSES * RADIX * sizeof(uint64_t))
            src_key = <uint64_t*> &work[0]
            src_w = &wysum[0]
            dst_key = <uint64_t*> &values[0]
            dst_w = &wsum[0]
            for i in range(n):
                bits.d = p[i] + 0.0     # -0.0 and 0.0 group as +0.0
                u = bits.u
                src_key[i] = u
                x = 1.0 if unit else w[i]
                src_w[i] = -x if y[i] else x
                radix_count(u, counts)
            radix_sort(&src_key, &src_w, &dst_key, &dst_w, n, counts)
            # group: src may be (values, wsum) itself; k <= i, and row i is
            # read before group k is written
            for i in range(n):
                u = src_key[i]
                x = src_w[i]
                if k < 0 or u != last:
                    k += 1
                    bits.u = u
                    values[k] = bits.d
                    wsum[k] = 0.0
                    wysum[k] = 0.0
                    last = u
                if signbit(x):
                    wsum[k] -= x
                    wysum[k] -= x
                else:
                    wsum[k] += x
    finally:
        PyMem_Free(counts)
    return k + 1


cdef inline uint64_t _order_key(double v) noexcept nogil:
    """An unsigned integer ordered as ``v`` (finite; -0.0 as +0.0)."""
    cdef _Bits bits
    bits.d = v + 0.0
    if bits.u >> 63:
        return ~bits.u
    return bits.u | (<uint64_t> 1 << 63)


def argsort_rows(
    const double[:, ::1] V,             # IN  (m, n) finite values
    Py_ssize_t[:, ::1] order,           # OUT (m, n) per row, a stable sorting permutation
):
    """``np.argsort(V, axis=1, kind="stable")`` by an LSD radix sort of each row.

    Six passes of 11-bit digits at most over (key, index) pairs in two
    buffers of 16 bytes per column, reused for every row; a digit shared by
    the whole row is skipped.
    """
    cdef Py_ssize_t m = V.shape[0], n = V.shape[1]
    cdef Py_ssize_t r, i
    cdef uint64_t u
    cdef uint64_t* counts = NULL
    cdef uint64_t* buf = NULL
    cdef uint64_t* src_key
    cdef uint64_t* dst_key
    cdef uint64_t* src_i
    cdef uint64_t* dst_i
    _need(order.shape[0] == m and order.shape[1] == n, "order must have the shape of V")
    if m == 0 or n == 0:
        return
    counts = <uint64_t*> PyMem_Malloc(RADIX_PASSES * RADIX * sizeof(uint64_t))
    buf = <uint64_t*> PyMem_Malloc(4 * n * sizeof(uint64_t))
    if counts == NULL or buf == NULL:
        PyMem_Free(counts)
        PyMem_Free(buf)
        raise MemoryError()
    try:
        with nogil:
            for r in range(m):
                memset(counts, 0, RADIX_PASSES * RADIX * sizeof(uint64_t))
                src_key = buf
                src_i = buf + n
                dst_key = buf + 2 * n
                dst_i = buf + 3 * n
                for i in range(n):
                    u = _order_key(V[r, i])
                    src_key[i] = u
                    src_i[i] = <uint64_t> i
                    radix_count(u, counts)
                radix_sort(&src_key, &src_i, &dst_key, &dst_i, n, counts)
                for i in range(n):
                    order[r, i] = <Py_ssize_t> src_i[i]
    finally:
        PyMem_Free(counts)
        PyMem_Free(buf)


# --- grouping unit-weight rows by one np.sort of integer keys
#
# A finite prediction p >= 0 (+0.0 for -0.0) orders as the unsigned integer
# of its bits, which is below 2**63; shifted left by one it leaves the lowest
# bit free for the outcome. So one ``np.sort`` of these uint64 keys (numpy's
# SIMD sort where it has one) puts the rows in order of prediction, outcomes
# 0 before 1 among equal ones, with no payload to carry, and one pass groups
# them.

cdef uint64_t _KEY_LIMIT = 0x7FEFFFFFFFFFFFFF     # the bits of the largest double


def zero_one_labels(
    const double[::1] y,                # IN  (n,) labels
    unsigned char[::1] out,             # OUT (n,) 1 where y == 1.0, else 0
):
    """Labels that are all 0.0 or 1.0 (-0.0 is 0.0), as bytes, in one pass.

    Returns 1 if some label is 0, plus 2 if some label is 1; -1 if a label
    is anything else (NaN included), ``out`` then unusable. Float labels in
    {0, 1} otherwise took a search for the classes, a mask, a conversion and
    a second check when grouped: a measure of 10**7 rows took 18 ms longer
    with float labels than with int64 ones, now 7.
    """
    cdef Py_ssize_t n = y.shape[0], i
    cdef bint zero, one
    cdef unsigned char seen0 = 0, seen1 = 0, other = 0
    _need(out.shape[0] == n, "y and out must have one length")
    with nogil:
        for i in range(n):
            zero = y[i] == 0.0
            one = y[i] == 1.0
            seen0 |= zero
            seen1 |= one
            other |= not (zero | one)
            out[i] = one
    if other:
        return -1
    return seen0 + 2 * seen1


cdef bint _keys64(
    const double* p, const unsigned char* y, uint64_t* keys, Py_ssize_t n
) noexcept nogil:
    """The body of ``label_keys``."""
    cdef Py_ssize_t i
    cdef _Bits bits
    cdef uint64_t bad = 0
    for i in range(n):
        bits.d = p[i] + 0.0             # -0.0 and 0.0 group as +0.0
        # a negative p has its sign bit set, infinities and NaN larger bits
        bad |= bits.u > _KEY_LIMIT
        keys[i] = (bits.u << 1) | (y[i] != 0)
    return not bad


def label_keys(
    const double[::1] p,                # IN  (n,) predictions, finite and >= 0
    const unsigned char[::1] y,         # IN  (n,) outcomes, 0 or 1 (any non-zero is 1)
    uint64_t[::1] keys,                 # OUT (n,) 2 bits(p + 0.0) + (y != 0)
):
    """Write the sort keys of unit-weight rows (see above).

    Returns False, the keys unusable, if a prediction is negative, infinite
    or NaN. ``keys`` may be the memory of the grouping's ``values`` output
    (``values.view(np.uint64)``): ``group_label_keys`` groups in place.
    """
    cdef Py_ssize_t n = p.shape[0]
    cdef bint ok = True
    _need(y.shape[0] == n and keys.shape[0] == n, "p, y and keys must have one length")
    if n > 0:
        with nogil:
            ok = _keys64(&p[0], &y[0], &keys[0], n)
    return ok


# Predictions that are all float32 values (what most deep-learning and
# boosting libraries output, and every float32 or float16 array) make keys of
# 32 bits, the same way: the float's bits (below 2**31 for a finite float >= 0)
# shifted left by one above the outcome. numpy sorts 32-bit keys about twice
# as fast as 64-bit ones (10**7: 34 against 61 ms here), and the grouping
# reads half the bytes. Same order, same groups, same statistic bit for bit:
# a double that is a float32 exactly converts to it and back unchanged.

ctypedef fused label_key:
    uint32_t                            # label_keys32: a float's bits, then y
    uint64_t                            # label_keys: a double's bits, then y


cdef inline double _key_value(label_key vbits) noexcept nogil:
    """The prediction of a key's upper bits (``key >> 1``)."""
    cdef _Bits bits
    cdef _Bits32 bits32
    if label_key is uint32_t:
        bits32.u = vbits
        return <double> bits32.f
    else:
        bits.u = vbits
        return bits.d


cdef uint32_t _KEY32_LIMIT = 0x7F7FFFFF           # the bits of the largest float
cdef Py_ssize_t _KEY32_BLOCK = 256


cdef bint _keys32(
    const double* p, const unsigned char* y, uint32_t* keys, Py_ssize_t n
) noexcept nogil:
    """The body of ``label_keys32``."""
    cdef Py_ssize_t i, start = 0, stop
    cdef float f
    cdef _Bits32 bits
    cdef uint32_t bad = 0
    while start < n:
        stop = start + _KEY32_BLOCK if n - start > _KEY32_BLOCK else n
        for i in range(start, stop):
            # (a double beyond the float range converts to inf: no float)
            f = <float> p[i]
            bad |= <double> f != p[i]
            bits.f = f + <float> 0.0    # -0.0 and 0.0 group as +0.0
            bad |= bits.u > _KEY32_LIMIT
            keys[i] = (bits.u << 1) | (y[i] != 0)
        if bad:
            return False
        start = stop
    return True


def label_keys32(
    const double[::1] p,                # IN  (n,) predictions, finite and >= 0
    const unsigned char[::1] y,         # IN  (n,) outcomes, 0 or 1 (any non-zero is 1)
    uint32_t[::1] keys,                 # OUT (n,) 2 bits(float(p) + 0.0) + (y != 0)
):
    """``label_keys`` in 32 bits, where every prediction is a float32 exactly.

    Returns False, the keys unusable, at the end of the first block of 256
    rows that holds a prediction that is no float32 (or negative, infinite
    or NaN): on float64 data that is the first block, a few hundred
    nanoseconds. ``keys`` may be the upper half of the memory of the
    grouping's ``values`` output (``values.view(np.uint32)[n:]``):
    ``group_label_keys32`` groups in place.
    """
    cdef Py_ssize_t n = p.shape[0]
    cdef bint ok = True
    _need(y.shape[0] == n and keys.shape[0] == n, "p, y and keys must have one length")
    if n > 0:
        with nogil:
            ok = _keys32(&p[0], &y[0], &keys[0], n)
    return ok


cdef Py_ssize_t _group_keys(
    const label_key* keys, Py_ssize_t n, double* values, double* weights, double* positives,
) noexcept nogil:
    """The body of ``group_label_keys`` and ``group_label_keys32``."""
    cdef Py_ssize_t i, k = -1
    cdef label_key u, v, last = 0
    cdef int64_t fresh, count = 0, hits = 0
    for i in range(n):
        u = keys[i]
        v = u >> 1
        fresh = (v != last) | (k < 0)
        k += fresh
        count = (count & (fresh - 1)) + 1
        hits = (hits & (fresh - 1)) + <int64_t> (u & 1)
        values[k] = _key_value(v)
        weights[k] = <double> count
        positives[k] = <double> hits
        last = v
    return k + 1


def group_label_keys(
    const uint64_t[::1] keys,           # IN  (n,) sorted keys of label_keys
    double[::1] values,                 # OUT distinct predictions, ascending
    double[::1] weights,                # OUT rows per value
    double[::1] positives,              # OUT outcomes 1 per value
):
    """Group sorted keys of ``label_keys`` into the statistic; return the count k.

    The statistic of ``group_radix`` with unit weights (counts are exact in
    any order). ``keys`` may share memory with ``values`` (the group of row
    i is written at k <= i, after row i is read). No branch on the data
    (with ties, whether a row starts a group is random): the counts are
    integers reset by a mask.
    """
    cdef Py_ssize_t n = keys.shape[0], k = 0
    _need(values.shape[0] >= n and weights.shape[0] >= n and positives.shape[0] >= n,
          "values, weights and positives need len(keys) entries")
    if n > 0:
        with nogil:
            k = _group_keys(&keys[0], n, &values[0], &weights[0], &positives[0])
    return k


def group_label_keys32(
    const uint32_t[::1] keys,           # IN  (n,) sorted keys of label_keys32
    double[::1] values,                 # OUT distinct predictions, ascending
    double[::1] weights,                # OUT rows per value
    double[::1] positives,              # OUT outcomes 1 per value
):
    """``group_label_keys`` of the 32-bit keys of ``label_keys32``.

    ``keys`` may be the upper half of the memory of ``values``
    (``values.view(np.uint32)[n:]``): ``values[k]`` covers bytes 8k to
    8k + 8, and a key not yet read, j > i >= k, starts at byte
    4n + 4j >= 8k + 8 (as n >= i + 1), so no write reaches it.
    """
    cdef Py_ssize_t n = keys.shape[0], k = 0
    _need(values.shape[0] >= n and weights.shape[0] >= n and positives.shape[0] >= n,
          "values, weights and positives need len(keys) entries")
    if n > 0:
        with nogil:
            k = _group_keys(&keys[0], n, &values[0], &weights[0], &positives[0])
    return k


def cutoff_label_keys(
    const label_key[::1] keys,          # IN  (n,) sorted keys of label_keys(32), n > 0
    double total,                       # IN  the number of rows, n
):
    """The cutoff error of sorted unit-weight keys, with no statistic stored.

    ``max_abs_interval_grouped`` of the statistic ``group_label_keys`` would
    write, in the same pass that groups the keys and with the same
    arithmetic (counts as doubles, the residual ``(hits - v count) /
    total``), so the same number bit for bit; the predictions at the ends
    of the worst interval are kept as the scan passes them (``_scan.pxd``).
    Returns ``(value, lower, upper, sign)`` as ``cutoff_core`` gives them.
    """
    cdef Py_ssize_t n = keys.shape[0], i = 0, j
    cdef label_key vbits
    cdef int64_t count, hits
    cdef double v
    cdef WorstScan scan
    _need(n > 0, "keys must not be empty")
    scan_init(&scan)
    with nogil:
        while i < n:
            vbits = keys[i] >> 1
            count = 0
            hits = 0
            j = i
            while j < n and keys[j] >> 1 == vbits:
                hits += <int64_t> (keys[j] & 1)
                count += 1
                j += 1
            v = _key_value(vbits)
            scan_add(&scan, v, (<double> hits - v * <double> count) / total)
            i = j
    return scan_result(&scan)


# --- grouping weighted rows by one np.sort of integer keys and a gather
#
# Weights cannot ride in a key, but a row index can: the key is the top bits
# of a number that grows with the prediction (a prefix of the spread bits,
# below 2**63 for a finite p >= 0) above the row's index, so one ``np.sort``
# of the keys orders the rows by prefix and, among equal prefixes, by index.
# One pass then reads each row's prediction, outcome and weight through its
# index (gathers, prefetched ahead), sorts the few rows of one prefix by
# their full prediction (an insertion sort, stable, so rows of equal
# predictions keep their input order) and groups them: the statistic of
# ``group_radix`` bit for bit, sums in input order.

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define skcal_prefetch(p) __builtin_prefetch(p)
    #else
    #define skcal_prefetch(p) ((void)0)
    #endif
    """
    void skcal_prefetch(const void* p) noexcept nogil

cdef Py_ssize_t _PREFETCH = 64          # rows ahead (32 and 128 timed alike)


def index_bits(Py_ssize_t n):
    """Bits of the row index in the keys of ``prefix_keys`` for n rows (at least 1)."""
    cdef Py_ssize_t b = 1
    while (<Py_ssize_t> 1 << b) < n:
        b += 1
    return b


cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    /* prefix_keys's loop (the spread bits: see the comment below): in C,
       with the bits read by memcpy and the cases selected by masks, so the
       compiler keeps it in vector registers (0.6 ns a row, as the plain
       bits; through a union and Cython's casts 1.9 ns) */
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__)
    __attribute__((target_clones("avx2", "default")))
    #endif
    static uint64_t skcal_prefix_keys(const double* p, uint64_t* keys, Py_ssize_t n, int b)
    {
        const uint64_t half = 0x3FE0000000000000ULL, one = 0x3FF0000000000000ULL;
        const uint64_t limit = 0x7FEFFFFFFFFFFFFFULL;
        uint64_t bad = 0;
        int drop = b - 1;
        for (Py_ssize_t i = 0; i < n; i++) {
            double v = p[i] + 0.0, q;
            uint64_t u, qu, low, high, key;
            memcpy(&u, &v, 8);
            q = 1.0 - v;
            memcpy(&qu, &q, 8);
            bad |= (uint64_t)(u > limit);
            low = (uint64_t)0 - (uint64_t)(u < half);
            high = (uint64_t)0 - (uint64_t)(u > one);
            key = (u & low) | ((2 * half - qu) & ~low & ~high)
                  | ((2 * half + 1 + ((u - one) >> 9)) & high);
            keys[i] = ((key >> drop) << b) | (uint64_t)i;
        }
        return bad;
    }
    """
    uint64_t skcal_prefix_keys(const double* p, uint64_t* keys, Py_ssize_t n, int b) noexcept nogil


# The number a key holds a prefix of grows with the prediction v (finite,
# >= +0.0): the bits of a double near 1 share their top bits far more than
# near 0 (1 - 1e-9 and 1 - 2e-9 agree in their top 40 bits; 1e-9 and 2e-9 do
# not), so a prefix of the bits crowds the predictions of a confident model,
# which pile up just below 1. So [0.5, 1] is mirrored: 2 bits(0.5) -
# bits(1 - v) (1 - v is exact there, Sterbenz), which gives the predictions
# near 1 the resolution of those near 0; above 1 the bits are shifted into
# the range left (not one to one there: the prefix's rows are sorted by
# their full value anyway). Strictly increasing on [0, 1], below 2**63; no
# branch (a confident model's predictions fall on either side of 0.5 at
# random: a branch made the pass eight times slower).


def prefix_keys(
    const double[::1] p,                # IN  (n,) predictions, finite and >= 0
    uint64_t[::1] keys,                 # OUT (n,) prefix of the spread bits, then the index
    int b,                              # IN  index bits, index_bits(n) (at most 40)
):
    """Write the keys of weighted rows (see above).

    Returns False, the keys unusable, if a prediction is negative, infinite
    or NaN.
    """
    cdef Py_ssize_t n = p.shape[0]
    cdef uint64_t bad = 0               # (63 bits of the spread, 64 - b of them kept)
    _need(keys.shape[0] == n, "p and keys must have one length")
    _need(1 <= b <= 40 and (n == 0 or <uint64_t> (n - 1) >> b == 0),
          "b must hold every row index, and at most 40 bits")
    with nogil:
        if n:
            bad = skcal_prefix_keys(&p[0], &keys[0], n, b)
    return not bad


cdef inline void _prefetch_row(
    const uint64_t* keys, Py_ssize_t at, Py_ssize_t n, uint64_t mask,
    const double* p, const unsigned char* y, const double* w,
) noexcept nogil:
    """Ask for the prediction, outcome and weight of the row of ``keys[at]``."""
    cdef Py_ssize_t r
    if at < n:
        r = <Py_ssize_t> (keys[at] & mask)
        skcal_prefetch(&p[r])
        skcal_prefetch(&w[r])
        skcal_prefetch(&y[r])


cdef inline Py_ssize_t _add_row(
    double* values, double* weights, double* positives, Py_ssize_t k, double* last,
    double v, double x, double hit,
) noexcept nogil:
    """Add a row (prediction v, weight x, outcome hit 0.0 or 1.0) to group k or a new one.

    ``x * hit`` is x or +0.0 (finite x): no branch on the outcome, and adding
    +0.0 changes no sum. Returns the row's group.
    """
    if k < 0 or v != last[0]:
        k += 1
        values[k] = v
        weights[k] = 0.0
        positives[k] = 0.0
        last[0] = v
    weights[k] += x
    positives[k] += x * hit
    return k


cdef Py_ssize_t _BLOCK_SORT_MAX = 4096  # rows of one prefix sorted in a buffer


def group_prefix_keys(
    const uint64_t[::1] keys,           # IN  (n,) sorted keys of prefix_keys
    const double[::1] p,                # IN  (n,) the predictions
    const unsigned char[::1] y,         # IN  (n,) outcomes, 0 or 1 (any non-zero is 1)
    const double[::1] w,                # IN  (n,) non-negative weights
    double[::1] values,                 # OUT distinct predictions, ascending
    double[::1] weights,                # OUT total weight per value
    double[::1] positives,              # OUT total weight of positives per value
    int b,                              # IN  index bits of the keys
):
    """Group the rows in the order of sorted ``keys``; return k, or -1 (see below).

    ``keys`` may share memory with ``values`` (a group is written at an
    index below the next key read). The rows of one prefix come in index
    order; if their predictions do not decrease (one row, or equal
    predictions: ties) they are grouped as they come, else sorted by
    prediction by insertion in a buffer (stable), which moves a row once per
    row it passes. If such a prefix has more than 4096 rows, or the moves
    exceed 8 per row in all (many distinct predictions sharing a prefix),
    the kernel stops and returns -1, and the caller groups otherwise.
    """
    cdef Py_ssize_t n = keys.shape[0], j = 0, e, m, t, s, k = -1, r
    cdef Py_ssize_t budget
    cdef uint64_t mask = (<uint64_t> 1 << b) - 1
    cdef double v, x, hit, last = -1.0
    cdef bint ordered
    cdef double* buf = NULL             # (v, x, hit) of one prefix's rows
    _need(p.shape[0] == n and y.shape[0] == n and w.shape[0] == n,
          "keys, p, y and w must have one length")
    _need(values.shape[0] >= n and weights.shape[0] >= n and positives.shape[0] >= n,
          "values, weights and positives need len(keys) entries")
    _need(1 <= b <= 40, "b must be 1 to 40")
    budget = 8 * n + 64
    try:
        with nogil:
            while j < n:
                e = prefix_run(&keys[0], j, n, b, &p[0], &ordered)
                m = e - j
                if ordered:
                    # the rows as they come; later rows prefetched
                    for t in range(j, e):
                        _prefetch_row(&keys[0], t + _PREFETCH, n, mask, &p[0], &y[0], &w[0])
                        r = <Py_ssize_t> (keys[t] & mask)
                        k = _add_row(&values[0], &weights[0], &positives[0], k, &last,
                                     p[r] + 0.0, w[r], <double> (y[r] != 0))
                    j = e
                    continue
                if m > _BLOCK_SORT_MAX:
                    k = -2
                    break
                if buf == NULL:
                    # the first prefix to sort (no GIL needed, and traced)
                    buf = <double*> PyMem_RawMalloc(3 * _BLOCK_SORT_MAX * sizeof(double))
                    if buf == NULL:
                        k = -3
                        break
                for t in range(m):
                    r = <Py_ssize_t> (keys[j + t] & mask)
                    v = p[r] + 0.0
                    x = w[r]
                    hit = <double> (y[r] != 0)
                    # insertion by prediction, after every row of an equal one
                    s = t
                    while s > 0 and buf[3 * s - 3] > v:
                        buf[3 * s] = buf[3 * s - 3]
                        buf[3 * s + 1] = buf[3 * s - 2]
                        buf[3 * s + 2] = buf[3 * s - 1]
                        s -= 1
                    budget -= t - s
                    buf[3 * s] = v
                    buf[3 * s + 1] = x
                    buf[3 * s + 2] = hit
                if budget < 0:
                    k = -2
                    break
                for t in range(m):
                    k = _add_row(&values[0], &weights[0], &positives[0], k, &last,
                                 buf[3 * t], buf[3 * t + 1], buf[3 * t + 2])
                j = e
    finally:
        PyMem_RawFree(buf)
    if k == -3:
        raise MemoryError()
    return k + 1
