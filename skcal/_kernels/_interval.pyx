# Contiguous-run kernels over sorted predictions: grouping ties and the worst
# interval (maximum |sum| over contiguous runs). Callers validate and sort.
# Every kernel checks its argument shapes at entry (O(1)) and raises
# ValueError on a mismatch rather than reading or writing out of bounds;
# the contents (that ``order`` holds indices in range) are the caller's.


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
