# The runs of sorted prefix keys (``prefix_keys``: a prefix of the
# prediction's bits above the row index), shared by the two kernels that read
# them: the measures' weighted grouping (``group_prefix_keys`` in
# _interval.pyx) and the exact sketch's (``group_keys_exact`` in _sketch.pyx).

from libc.stdint cimport uint64_t


cdef inline Py_ssize_t prefix_run(
    const uint64_t* keys, Py_ssize_t j, Py_ssize_t n, int b, const double* p,
    bint* ordered,
) noexcept nogil:
    """The end ``e`` of the run of keys ``j .. e - 1`` that share ``keys[j]``'s
    prefix (the bits above ``b``), ``j < n``; ``ordered`` says whether their
    rows' predictions ``p[key & (2**b - 1)] + 0.0`` do not decrease (one row,
    or ties, or rows already in order: grouped as they come)."""
    cdef uint64_t mask = (<uint64_t> 1 << b) - 1, prefix = keys[j] >> b
    cdef Py_ssize_t e = j + 1, t
    cdef double x, prev = -1.0
    while e < n and keys[e] >> b == prefix:
        e += 1
    ordered[0] = True
    if e - j > 1:
        for t in range(j, e):
            x = p[<Py_ssize_t> (keys[t] & mask)] + 0.0
            if x < prev:
                ordered[0] = False
                break
            prev = x
    return e
