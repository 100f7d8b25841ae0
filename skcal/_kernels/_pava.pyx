# Pool-adjacent-violators kernels for Venn-ABERS (Vovk and Petej 2014).
#
# The caller (skcal/recalibration/_venn_abers.py) groups the calibration
# scores into k distinct sorted values with positive total weights W and
# positive weights S, and passes their cumulative sums C, D (length k + 1,
# starting at 0); every output is allocated by the Python side. The
# arithmetic repeats numpy's operation for operation (cross-multiplied mean
# comparisons, sums in the same order), so that the results equal those of
# the vectorised numpy twin kept in the tests.


cdef inline void _need(bint ok, str what) except *:
    if not ok:
        raise ValueError(f"kernel argument shapes do not match: {what}")


def prefix_block_starts(
    const double[::1] C,                # IN  cumulative weights, length k + 1
    const double[::1] D,                # IN  cumulative positive weights
    Py_ssize_t[::1] L,                  # OUT (k,) start of the last block of the fit of 0..g
    Py_ssize_t[::1] stack,              # WORK (k,)
):
    """Where the last block of the isotonic fit of groups ``0..g`` starts, for every g.

    One left-to-right pass of pool-adjacent-violators with a stack of block
    starts: a new group's block absorbs the block before it while that
    block's mean is at least its own (ties pool).
    """
    cdef Py_ssize_t k = L.shape[0]
    cdef Py_ssize_t g, top, s, left
    cdef double bW, bS, cW, cS
    _need(C.shape[0] == k + 1 and D.shape[0] == k + 1 and stack.shape[0] == k,
          "C and D must have length k + 1, L and stack length k")
    with nogil:
        top = -1
        for g in range(k):
            s = g
            while top >= 0:
                left = stack[top]
                bW = C[s] - C[left]
                bS = D[s] - D[left]
                cW = C[g + 1] - C[s]
                cS = D[g + 1] - D[s]
                if bS * cW >= cS * bW:
                    s = left
                    top -= 1
                else:
                    break
            top += 1
            stack[top] = s
            L[g] = s


def suffix_block_ends(
    const double[::1] C,                # IN  cumulative weights, length k + 1
    const double[::1] D,                # IN  cumulative positive weights
    Py_ssize_t[::1] R,                  # OUT (k,) end of the first block of the fit of g..k-1
    Py_ssize_t[::1] stack,              # WORK (k,)
):
    """Where the first block of the isotonic fit of groups ``g..k-1`` ends, for every g."""
    cdef Py_ssize_t k = R.shape[0]
    cdef Py_ssize_t g, top, e, right
    cdef double bW, bS, cW, cS
    _need(C.shape[0] == k + 1 and D.shape[0] == k + 1 and stack.shape[0] == k,
          "C and D must have length k + 1, R and stack length k")
    with nogil:
        top = -1
        for g in range(k - 1, -1, -1):
            e = g
            while top >= 0:
                right = stack[top]
                bW = C[right + 1] - C[e + 1]
                bS = D[right + 1] - D[e + 1]
                cW = C[e + 1] - C[g]
                cS = D[e + 1] - D[g]
                if cS * bW >= bS * cW:
                    e = right
                    top -= 1
                else:
                    break
            top += 1
            stack[top] = e
            R[g] = e


def venn_abers_pairs(
    const double[::1] W,                # IN  (k,) weight of each group
    const double[::1] S,                # IN  (k,) positive weight of each group
    const double[::1] C,                # IN  (k + 1,) cumulative W from 0
    const double[::1] D,                # IN  (k + 1,) cumulative S from 0
    const Py_ssize_t[::1] L,            # IN  (k,) prefix_block_starts
    const Py_ssize_t[::1] R,            # IN  (k,) suffix_block_ends
    double[::1] p0,                     # OUT (2k + 1,) isotonic value with (s, 0) added
    double[::1] p1,                     # OUT (2k + 1,) isotonic value with (s, 1) added
):
    """The Venn-ABERS pair at every test position (see ``_venn_abers.py``).

    Position ``2i`` is the gap below group ``i`` (``2k``: above the last),
    ``2i + 1`` a score tied with group ``i``. The test point (weight 1, label
    0 or 1) with its tied group is a block that absorbs, in rounds, the last
    block of the fit left of it and then the first block of the fit right of
    it, while their means are on the wrong side of its own.
    """
    cdef Py_ssize_t k = W.shape[0]
    cdef Py_ssize_t pos, g, lo, hi, side, e
    cdef bint tie, m_left, m_right
    cdef double aW, aS, bW, bS, y
    _need(S.shape[0] == k and C.shape[0] == k + 1 and D.shape[0] == k + 1
          and L.shape[0] == k and R.shape[0] == k and p0.shape[0] == 2 * k + 1
          and p1.shape[0] == 2 * k + 1, "W, S, L, R (k), C, D (k + 1), p0, p1 (2k + 1)")
    with nogil:
        for side in range(2):
            y = <double>side
            for pos in range(2 * k + 1):
                g = pos // 2
                tie = pos % 2 == 1
                lo = g - 1
                hi = g + 1 if tie else g
                if tie:
                    aW = W[g] + 1.0
                    aS = S[g] + y
                else:
                    aW = 0.0 + 1.0
                    aS = 0.0 + y
                while True:
                    m_left = False
                    if lo >= 0:
                        bW = C[lo + 1] - C[L[lo]]
                        bS = D[lo + 1] - D[L[lo]]
                        if bS * aW >= aS * bW:
                            m_left = True
                            aW = aW + bW
                            aS = aS + bS
                            lo = L[lo] - 1
                    m_right = False
                    if hi < k:
                        e = R[hi]
                        bW = C[e + 1] - C[hi]
                        bS = D[e + 1] - D[hi]
                        if aS * bW >= bS * aW:
                            m_right = True
                            aW = aW + bW
                            aS = aS + bS
                            hi = e + 1
                    if not (m_left or m_right):
                        break
                if side == 0:
                    p0[pos] = aS / aW
                else:
                    p1[pos] = aS / aW
