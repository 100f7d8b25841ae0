# Checks of kernel arguments at entry, shared by the kernels that cimport them.


cdef inline bint _all_in(const Py_ssize_t[::1] a, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    """Whether every entry of ``a`` lies in ``[lo, hi)``: one check at a kernel's
    entry (a check per entry in Python, after which Cython asks whether an
    error was raised, cost several ns a row)."""
    cdef Py_ssize_t i
    cdef bint ok = True
    for i in range(a.shape[0]):
        ok &= (a[i] >= lo) & (a[i] < hi)
    return ok
