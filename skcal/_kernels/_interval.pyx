# Contiguous-run kernels over sorted predictions: grouping ties and the worst
# interval (maximum |sum| over contiguous runs). Callers validate and sort.


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
    with nogil:
        for i in range(n):
            j = order[i]
            v = p[j]
            if k < 0 or v != last:
                k += 1
                values[k] = v
                wsum[k] = 0.0
                wysum[k] = 0.0
                last = v
            wsum[k] += w[j]
            wysum[k] += w[j] * y[j]
    return k + 1


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
    if smax - smin <= 0.0:
        return 0.0, 0, 0, 0
    if imin < imax:
        return smax - smin, imin, imax - 1, 1
    return smax - smin, imax, imin - 1, -1
