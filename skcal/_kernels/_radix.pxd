# A least-significant-digit radix sort of unsigned 64-bit keys, shared by
# the kernels that group or order rows by it (_interval's group_radix and
# argsort_rows, _members' cutoff runs, _sketch's exact rows).
#
# Keys are built by the caller (the bits of a non-negative double order as
# the double; _interval's _order_key maps any finite double to such a key)
# and counted into one histogram per digit while they are written
# (radix_count); radix_sort then runs the passes. Digits of 11 bits, six
# passes at most; a pass whose digit is the same on every key is skipped.
# The sort is stable, and an optional payload of the same width (a weight
# or a row index) travels with each key. Nothing here allocates: the
# caller owns the two buffers of each kind and the histograms
# (RADIX_PASSES * RADIX counts, zeroed before counting).

from libc.stdint cimport uint64_t

cdef enum:
    RADIX_BITS = 11
    RADIX = 1 << RADIX_BITS
    RADIX_PASSES = 6


ctypedef fused payload_t:
    double
    uint64_t


cdef inline void radix_count(uint64_t u, uint64_t* counts) noexcept nogil:
    """Count each digit of key ``u`` in its pass's histogram."""
    cdef int d
    for d in range(RADIX_PASSES):
        counts[d * RADIX + ((u >> (d * RADIX_BITS)) & (RADIX - 1))] += 1


cdef inline void radix_sort(
    uint64_t** key, payload_t** payload, uint64_t** key_work,
    payload_t** payload_work, Py_ssize_t n, uint64_t* counts,
) noexcept nogil:
    """Sort ``(*key)[:n]`` stably, carrying ``(*payload)[:n]`` unless it is NULL.

    The passes move the rows back and forth between the two buffers of each
    kind; on return ``*key`` and ``*payload`` point to the sorted rows and
    ``*key_work`` and ``*payload_work`` to the other buffers (the pointers
    are swapped, not the memory). ``counts`` holds the histograms of
    ``radix_count`` over the keys and is used up. ``n >= 1``.
    """
    cdef int d, shift
    cdef Py_ssize_t i
    cdef uint64_t c, u, total
    cdef uint64_t* cnt
    cdef uint64_t* src = key[0]
    cdef uint64_t* dst = key_work[0]
    cdef uint64_t* tmp
    cdef payload_t* src_p = payload[0]
    cdef payload_t* dst_p = payload_work[0]
    cdef payload_t* tmp_p
    for d in range(RADIX_PASSES):
        cnt = counts + d * RADIX
        shift = d * RADIX_BITS
        # skip a digit shared by every key
        if cnt[(src[0] >> shift) & (RADIX - 1)] == <uint64_t> n:
            continue
        total = 0
        for c in range(RADIX):
            u = cnt[c]
            cnt[c] = total
            total += u
        if src_p != NULL:
            for i in range(n):
                u = src[i]
                c = cnt[(u >> shift) & (RADIX - 1)]
                cnt[(u >> shift) & (RADIX - 1)] += 1
                dst[c] = u
                dst_p[c] = src_p[i]
            tmp_p = src_p
            src_p = dst_p
            dst_p = tmp_p
        else:
            for i in range(n):
                u = src[i]
                c = (u >> shift) & (RADIX - 1)
                dst[cnt[c]] = u
                cnt[c] += 1
        tmp = src
        src = dst
        dst = tmp
    key[0] = src
    key_work[0] = dst
    payload[0] = src_p
    payload_work[0] = dst_p
