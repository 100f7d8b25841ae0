# The worst interval of grouped residuals, scanned group by group: shared by
# the cutoff kernels that group rows as they go (_members' two sorted runs,
# _interval's sorted label keys) and so never store the grouped statistic.
#
# Feed each group's prediction v, in increasing order, with its residual
# term (P - v W) / total; the running sum's largest rise or fall is the
# cutoff error, as ``max_abs_interval_grouped`` finds it on a stored
# statistic, and the predictions at the interval's ends are kept as the scan
# passes them (the end after an extreme is the next group's).

cdef struct WorstScan:
    double s, smax, smin, first
    double max_last, max_next, min_last, min_next
    Py_ssize_t g, imax, imin
    bint pend_max, pend_min


cdef inline void scan_init(WorstScan* w) noexcept nogil:
    w.s = w.smax = w.smin = w.first = 0.0
    w.max_last = w.max_next = w.min_last = w.min_next = 0.0
    w.g = -1
    w.imax = w.imin = 0
    w.pend_max = w.pend_min = False


cdef inline void scan_add(WorstScan* w, double v, double term) noexcept nogil:
    """The next group: its prediction ``v`` and residual term."""
    w.g += 1
    if w.g == 0:
        w.first = w.max_next = w.min_next = v
    if w.pend_max:
        w.max_next = v
        w.pend_max = False
    if w.pend_min:
        w.min_next = v
        w.pend_min = False
    w.s += term
    if w.s > w.smax:
        w.smax = w.s
        w.imax = w.g + 1
        w.max_last = v
        w.pend_max = True
    elif w.s < w.smin:
        w.smin = w.s
        w.imin = w.g + 1
        w.min_last = v
        w.pend_min = True


cdef inline tuple scan_result(WorstScan* w):
    """``(value, lower, upper, sign)``, as ``cutoff_core`` gives them."""
    if w.smax - w.smin <= 0.0:
        return 0.0, w.first, w.first, 0
    if w.imin < w.imax:
        return w.smax - w.smin, w.min_next, w.max_last, 1
    return w.smax - w.smin, w.max_next, w.min_last, -1
