# One-pass binning kernels: triangular soft bins and the SCDL_m scan of
# Bairaktari et al., and hard uniform bins for binned ECE.
# Callers validate; every output is allocated (and, where said, zeroed) by
# the Python side. Outcomes come as bytes (or int64 0/1) and weights may have stride 0
# (unit weights, np.broadcast_to(1.0, n)): the one-pass measures then cost
# no O(n) conversion or allocation besides the pass itself.

from libc.math cimport ceil, floor

# Every kernel checks its argument shapes at entry (O(1)) and raises
# ValueError on a mismatch rather than reading or writing out of bounds; the
# values (predictions in [0, 1], outcomes in {0, 1}) are the caller's.


cdef inline void _need(bint ok, str what) except *:
    if not ok:
        raise ValueError(f"kernel argument shapes do not match: {what}")

# Outcomes in {0, 1}, as bytes or as the caller's own int64 labels (already
# checked to be 0 or 1): reading int64 directly is cheaper than converting.
ctypedef fused outcome_t:
    unsigned char
    long long


def soft_bin(
    const double[::1] p,                # IN  predictions in [0, 1]
    const outcome_t[::1] y,             # IN  outcomes in {0, 1}
    const double[:] w,                  # IN  non-negative weights (stride 0: unit)
    double[:, ::1] bins,                # OUT (m + 1, 2) zeroed: per grid point j,
                                        #     sum w_i w_j(p_i) and sum w_i y_i w_j(p_i)
):
    """Accumulate the triangular weights w_j(p) = (1 - |m p - j|)_+ (Bairaktari et al., Lemma 3.1).

    Each prediction touches the two grid points around it, j = floor(m p)
    and j + 1, with weights 1 - f and f, f = m p - j. The two sums of a grid
    point sit side by side, so a row updates one or two cache lines.
    """
    cdef Py_ssize_t n = p.shape[0]
    cdef Py_ssize_t m = bins.shape[0] - 1
    cdef Py_ssize_t i, j
    cdef double x, f, wi, wy, dm = <double>m
    _need(y.shape[0] == n and w.shape[0] == n, "p, y and w must have one length")
    _need(m >= 1 and bins.shape[1] == 2, "bins must have shape (m + 1, 2) with m >= 1")
    with nogil:
        for i in range(n):
            x = dm * p[i]
            j = <Py_ssize_t>x
            if j >= m:                  # p = 1 lies on the last grid point
                j = m - 1
            f = x - j
            wi = w[i]
            wy = wi * <double>y[i]      # arithmetic, not a branch: y is random
            bins[j, 0] += wi * (1.0 - f)
            bins[j, 1] += wy * (1.0 - f)
            bins[j + 1, 0] += wi * f
            bins[j + 1, 1] += wy * f


def coarsen(
    const double[:, ::1] fine,          # IN  (2m + 1, 2) soft-bin sums at level 2m
    double[:, ::1] coarse,              # OUT (m + 1, 2) the same sums at level m
):
    """Exact level-m soft-bin sums from level 2m (proof of Bairaktari et al., Lemma 3.2).

    w_i = w~_{2i} + (w~_{2i-1} + w~_{2i+1}) / 2, the end points keeping only
    their inner neighbour, so any linear statistic of the bins coarsens too.
    """
    cdef Py_ssize_t m = coarse.shape[0] - 1
    cdef Py_ssize_t i, c
    _need(m >= 1 and coarse.shape[1] == 2, "coarse must have shape (m + 1, 2) with m >= 1")
    _need(fine.shape[0] == 2 * m + 1 and fine.shape[1] == 2, "fine must have shape (2m + 1, 2)")
    with nogil:
        for c in range(2):
            coarse[0, c] = fine[0, c] + 0.5 * fine[1, c]
            for i in range(1, m):
                coarse[i, c] = (
                    fine[2 * i, c] + 0.5 * (fine[2 * i - 1, c] + fine[2 * i + 1, c])
                )
            coarse[m, c] = fine[2 * m, c] + 0.5 * fine[2 * m - 1, c]


def scdl_level(
    const double[:, ::1] bins,          # IN  (m + 1, 2) pi_j and pi_j q_j (any scale)
    double[:, ::1] work,                # OUT (3, m + 2) scratch, overwritten
):
    """SCDL_m = max_i F(i) of Bairaktari et al., Definition 1.1, in O(m), in the units of pi.

    F(i) = sum_{j<=i} (pi_j q_j - (i+1)/m pi_j)_+ + sum_{j>i} (i/m pi_j - pi_j q_j)_+.
    Bin j's left term is positive exactly for j <= i < m q_j - 1 and its
    right term exactly for m q_j < i < j: each bin adds a linear function of
    i on at most two index ranges. Difference arrays of the three running
    sums (A = sum of +-pi_j q_j, BL and BR = sum of pi_j on the left and
    right) give every F(i) = A - ((i+1) BL - i BR) / m in one sweep.
    """
    cdef Py_ssize_t m = bins.shape[0] - 1
    cdef Py_ssize_t i, j, lo, hi
    cdef double a, b, x, s_a = 0.0, s_bl = 0.0, s_br = 0.0, f, best = 0.0
    cdef double dm = <double>m
    _need(m >= 1 and bins.shape[1] == 2, "bins must have shape (m + 1, 2) with m >= 1")
    _need(work.shape[0] == 3 and work.shape[1] >= m + 2, "work must have shape (3, m + 2)")
    with nogil:
        for i in range(m + 2):
            work[0, i] = 0.0
            work[1, i] = 0.0
            work[2, i] = 0.0
        for j in range(m + 1):
            b = bins[j, 0]
            if b <= 0.0:                # an empty bin contributes nothing
                continue
            a = bins[j, 1]
            x = dm * a / b              # m q_j
            # left term on j <= i <= ceil(m q_j) - 2, i.e. (i + 1) / m < q_j
            hi = <Py_ssize_t>ceil(x) - 2
            if hi > m - 1:              # q_j <= 1 up to rounding
                hi = m - 1
            if hi >= j:
                work[0, j] += a
                work[1, j] += b
                work[0, hi + 1] -= a
                work[1, hi + 1] -= b
            # right term on floor(m q_j) + 1 <= i <= j - 1, i.e. i / m > q_j
            lo = <Py_ssize_t>floor(x) + 1
            if lo < 0:
                lo = 0
            if lo <= j - 1:
                work[0, lo] -= a
                work[2, lo] += b
                work[0, j] += a
                work[2, j] -= b
        for i in range(m + 1):
            s_a += work[0, i]
            s_bl += work[1, i]
            s_br += work[2, i]
            f = s_a - ((i + 1) * s_bl - i * s_br) / dm
            if f > best:
                best = f
    return best


def uniform_bin_sums(
    const double[::1] p,                # IN  predictions in [0, 1]
    const outcome_t[::1] y,             # IN  outcomes in {0, 1}
    const double[:] w,                  # IN  non-negative weights (stride 0: unit)
    const double[::1] edges,            # IN  (B + 1,) edges k / B as doubles
    double[:, ::1] sums,                # OUT (B, 2) zeroed: per bin, sum of w
                                        #     and of the residuals w (y - p)
):
    """Per-bin sums over the bins [edges[k], edges[k+1]), the last one closed.

    The bin is k = floor(B p). Only when B p is within rounding of an
    integer can comparing p with the stored doubles k / B (as a loop over
    the bins would) disagree with it; those rows, where floor(B p -+ tol)
    differ, are checked against edges (two truncations and one integer
    comparison per row: cheaper than forming the fraction B p - k).
    A bin's two sums share one 16-byte row, so a sample touches one cache
    line with two additions.
    """
    cdef Py_ssize_t n = p.shape[0]
    cdef Py_ssize_t B = sums.shape[0]
    cdef Py_ssize_t i, k, k_up
    cdef double v, x, wi, dB = <double>B
    # B p and the edges are exact to a few units of B * 2**-53; far wider margin
    cdef double tol = dB * 1e-12
    _need(y.shape[0] == n and w.shape[0] == n, "p, y and w must have one length")
    _need(B >= 1 and sums.shape[1] == 2, "sums must have shape (B, 2) with B >= 1")
    _need(edges.shape[0] == B + 1, "edges must have B + 1 entries")
    with nogil:
        for i in range(n):
            v = p[i]
            x = dB * v
            k = <Py_ssize_t>(x - tol)   # x - tol > -1: truncation is floor
            k_up = <Py_ssize_t>(x + tol)
            if k != k_up or k > B - 1:
                k = k_up if k_up < B - 1 else B - 1
                if k > 0 and v < edges[k]:
                    k -= 1
                elif k < B - 1 and v >= edges[k + 1]:
                    k += 1
            wi = w[i]
            sums[k, 0] += wi
            sums[k, 1] += wi * (<double>y[i] - v)


def checked_top_label(
    const double[:, ::1] P,             # IN  (n, K) probabilities
    double[::1] conf,                   # OUT (n,) largest entry per row
    Py_ssize_t[::1] pred,               # OUT (n,) its column, ties to the lowest
    double[::1] sums,                   # OUT (n,) row sums
):
    """Top label, row sums and the range check in one pass over ``P``.

    Returns True when every entry is in [0, 1] (NaN is not). The matrix is
    read once, where the range check, the row sums and ``np.argmax`` would
    read it three times: on a large ``predict_proba`` output, memory
    bandwidth is the whole cost.
    """
    cdef Py_ssize_t n = P.shape[0], K = P.shape[1], i, j, jj, jbest
    cdef double x, best, least, s0, s1, s2, s3, s
    cdef const double* row
    cdef bint ok = True
    _need(K >= 1, "P needs at least one column")
    _need(conf.shape[0] == n and pred.shape[0] == n and sums.shape[0] == n,
          "conf, pred and sums need one entry per row of P")
    with nogil:
        for i in range(n):
            row = &P[i, 0]
            best = least = row[0]
            jbest = 0
            # four running sums: one would wait on the previous addition
            s0 = s1 = s2 = s3 = 0.0
            j = 0
            while j + 4 <= K:
                s0 += row[j]
                s1 += row[j + 1]
                s2 += row[j + 2]
                s3 += row[j + 3]
                if row[j] > best or row[j + 1] > best or row[j + 2] > best or row[j + 3] > best:
                    for jj in range(j, j + 4):
                        if row[jj] > best:
                            best = row[jj]
                            jbest = jj
                if row[j] < least or row[j + 1] < least or row[j + 2] < least or row[j + 3] < least:
                    for jj in range(j, j + 4):
                        if row[jj] < least:
                            least = row[jj]
                j += 4
            while j < K:
                x = row[j]
                s0 += x
                if x > best:
                    best = x
                    jbest = j
                elif x < least:
                    least = x
                j += 1
            s = (s0 + s1) + (s2 + s3)
            conf[i] = best
            pred[i] = jbest
            sums[i] = s
            # a NaN entry makes the sum NaN (and s != s); an infinity too
            if not (least >= 0.0 and best <= 1.0 and s == s):
                ok = False
    return ok
