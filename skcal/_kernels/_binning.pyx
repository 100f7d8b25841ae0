# One-pass binning kernels: triangular soft bins and the SCDL_m scan of
# Bairaktari et al., and hard uniform bins for binned ECE.
# Callers validate, except for the two checked kernels at the end, which are
# themselves the row-by-row check (each value is tested before it is used to
# index anything); every output is allocated (and, where said, zeroed) by
# the Python side. Outcomes come as bytes (or int64 0/1) and weights may have stride 0
# (unit weights, np.broadcast_to(1.0, n)): the one-pass measures then cost
# no O(n) conversion or allocation besides the pass itself.

from libc.float cimport DBL_MAX
from libc.math cimport ceil, floor
from libc.string cimport memcpy

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


cdef inline double _uniform_tolerance(double dB) noexcept nogil:
    # B p and the edges are exact to a few units of B * 2**-53; far wider margin
    return dB * 1e-12


cdef inline Py_ssize_t _uniform_bin(
    double v, double dB, double tol, Py_ssize_t B, const double* edges
) noexcept nogil:
    """Bin of ``v`` in [0, 1] among [edges[k], edges[k+1]), the last one closed.

    The bin is k = floor(B v). Only when B v is within rounding of an
    integer can comparing v with the stored doubles k / B (as a loop over
    the bins would) disagree with it; those rows, where floor(B v -+ tol)
    differ, are checked against edges (two truncations and one integer
    comparison per row: cheaper than forming the fraction B v - k).
    """
    cdef double x = dB * v
    cdef Py_ssize_t k = <Py_ssize_t>(x - tol)   # x - tol > -1: truncation is floor
    cdef Py_ssize_t k_up = <Py_ssize_t>(x + tol)
    if k != k_up or k > B - 1:
        k = k_up if k_up < B - 1 else B - 1
        if k > 0 and v < edges[k]:
            k -= 1
        elif k < B - 1 and v >= edges[k + 1]:
            k += 1
    return k


def uniform_bin_sums(
    const double[::1] p,                # IN  predictions in [0, 1]
    const outcome_t[::1] y,             # IN  outcomes in {0, 1}
    const double[:] w,                  # IN  non-negative weights (stride 0: unit)
    const double[::1] edges,            # IN  (B + 1,) edges k / B as doubles
    double[:, ::1] sums,                # OUT (B, 2) zeroed: per bin, sum of w
                                        #     and of the residuals w (y - p)
):
    """Per-bin sums over the bins [edges[k], edges[k+1]), the last one closed.

    The bin is k = floor(B p), settled against ``edges`` near an edge (see
    ``_uniform_bin``). A bin's two sums share one 16-byte row, so a sample touches one cache
    line with two additions.
    """
    cdef Py_ssize_t n = p.shape[0]
    cdef Py_ssize_t B = sums.shape[0]
    cdef Py_ssize_t i, k
    cdef double v, wi, dB = <double>B
    cdef double tol = _uniform_tolerance(dB)
    _need(y.shape[0] == n and w.shape[0] == n, "p, y and w must have one length")
    _need(B >= 1 and sums.shape[1] == 2, "sums must have shape (B, 2) with B >= 1")
    _need(edges.shape[0] == B + 1, "edges must have B + 1 entries")
    with nogil:
        for i in range(n):
            v = p[i]
            k = _uniform_bin(v, dB, tol, B, &edges[0])
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


# ---------------------------------------------------------------------------
# Checked one-pass kernels: validation fused into the pass of SCDL and of the
# uniform binned ECE. They read the caller's own arrays (any label dtype
# below, unit weights as None) and return False at the first row that is not
# plainly valid, leaving the outputs partly filled: the caller then falls back
# to the full validator, which raises its usual error (or, for input that is
# valid but not plain, e.g. labels {-1, 1}, converts it and uses the kernels
# above). Valid input is read once; nothing is allocated.

# The caller's label arrays as they come: bytes (uint8, or bool viewed as
# uint8), int32, int64 or float64, all required to be exactly 0 or 1.
ctypedef fused label_t:
    unsigned char
    int
    long long
    double

# The bits of 1.0: as unsigned integers, the doubles in [+0, 1] are exactly
# those at most this (negative ones have the sign bit, NaN the full exponent),
# so one integer comparison checks the range and finiteness of a prediction.
cdef unsigned long long _ONE_BITS = 0x3FF0000000000000ULL
# -0.0 is a valid prediction (it equals 0.0): the one value past _ONE_BITS
# that passes, checked only on that rare branch. Reading it as +0.0 changes
# no sum (its bin is 0 and every term it adds is +-0.0 or 1).
cdef unsigned long long _MINUS_ZERO_BITS = 0x8000000000000000ULL


cdef inline unsigned long long _bits(double v) noexcept nogil:
    cdef unsigned long long b
    memcpy(&b, &v, 8)
    return b


cdef inline bint _plain_label(label_t v) noexcept nogil:
    """True when ``v`` is 0 or 1 (for integers, one unsigned comparison)."""
    if label_t is double:
        return v == 0.0 or v == 1.0
    else:
        return <unsigned long long>v <= 1


cdef inline Py_ssize_t _label_index(label_t v) noexcept nogil:
    """0 or 1 for a label already found plain."""
    if label_t is double:
        return 1 if v == 1.0 else 0
    else:
        return <Py_ssize_t>v


cdef inline bint _plain_weight(double v) noexcept nogil:
    """Finite and non-negative (NaN fails both comparisons)."""
    return v >= 0.0 and v <= DBL_MAX


def checked_soft_bin(
    const double[::1] p,                # IN  predictions, checked in [+0, 1]
    const label_t[::1] y,               # IN  labels, checked in {0, 1}
    const double[::1] w,                # IN  weights, checked finite >= 0; None: unit
    double[:, ::1] tables,              # OUT (2, m + 1) zeroed: per grid point j,
                                        #     sum w_i w_j(p_i) over y_i = 0, then y_i = 1
):
    """Triangular soft-bin weights per class with the input checks, in one pass.

    The same accumulation as ``soft_bin`` (Bairaktari et al., Lemma 3.1),
    kept per class instead of as (all, positive): a row updates two
    neighbouring doubles of one table, half the work. ``tables[1]`` equals
    ``soft_bin``'s positive sums bit for bit; ``tables[0] + tables[1]`` its
    total sums up to summation order. Returns True when every row was valid.
    """
    cdef Py_ssize_t n = p.shape[0]
    cdef Py_ssize_t m = tables.shape[1] - 1
    cdef Py_ssize_t i, j
    cdef double v, x, f, wi, dm = <double>m
    cdef double* base
    cdef double* t
    cdef bint ok = True
    cdef bint unit = w is None
    _need(y.shape[0] == n and (unit or w.shape[0] == n), "p, y and w must have one length")
    _need(m >= 1 and tables.shape[0] == 2, "tables must have shape (2, m + 1) with m >= 1")
    base = &tables[0, 0]
    with nogil:
        # two loops rather than a test of unit per row
        if unit:
            for i in range(n):
                v = p[i]
                if _bits(v) > _ONE_BITS or not _plain_label(y[i]):
                    if _bits(v) != _MINUS_ZERO_BITS or not _plain_label(y[i]):
                        ok = False
                        break
                    v = 0.0
                x = dm * v
                j = <Py_ssize_t>x
                if j >= m:              # p = 1 lies on the last grid point
                    j = m - 1
                f = x - j
                t = base + _label_index(y[i]) * (m + 1) + j
                t[0] += 1.0 - f
                t[1] += f
        else:
            for i in range(n):
                v = p[i]
                wi = w[i]
                if (_bits(v) > _ONE_BITS or not _plain_label(y[i])
                        or not _plain_weight(wi)):
                    if (_bits(v) != _MINUS_ZERO_BITS or not _plain_label(y[i])
                            or not _plain_weight(wi)):
                        ok = False
                        break
                    v = 0.0
                x = dm * v
                j = <Py_ssize_t>x
                if j >= m:
                    j = m - 1
                f = x - j
                t = base + _label_index(y[i]) * (m + 1) + j
                t[0] += wi * (1.0 - f)
                t[1] += wi * f
    return ok


def checked_uniform_bin_sums(
    const double[::1] p,                # IN  predictions, checked in [+0, 1]
    const label_t[::1] y,               # IN  labels, checked in {0, 1}
    const double[::1] w,                # IN  weights, checked finite >= 0; None: unit
    const double[::1] edges,            # IN  (B + 1,) edges k / B as doubles
    double[:, ::1] sums,                # OUT (B, 2) zeroed: per bin, sum of w
                                        #     and of the residuals w (y - p)
):
    """``uniform_bin_sums`` with the input checks in the same pass.

    The same bins and the same additions in the same order, so the sums
    equal those of ``uniform_bin_sums`` on validated input bit for bit.
    Returns True when every row was valid.
    """
    cdef Py_ssize_t n = p.shape[0]
    cdef Py_ssize_t B = sums.shape[0]
    cdef Py_ssize_t i, k
    cdef double v, wi, dB = <double>B
    cdef double tol = _uniform_tolerance(dB)
    cdef double* s
    cdef const double* e
    cdef bint ok = True
    cdef bint unit = w is None
    _need(y.shape[0] == n and (unit or w.shape[0] == n), "p, y and w must have one length")
    _need(B >= 1 and sums.shape[1] == 2, "sums must have shape (B, 2) with B >= 1")
    _need(edges.shape[0] == B + 1, "edges must have B + 1 entries")
    s = &sums[0, 0]
    e = &edges[0]
    with nogil:
        if unit:
            for i in range(n):
                v = p[i]
                if _bits(v) > _ONE_BITS or not _plain_label(y[i]):
                    if _bits(v) != _MINUS_ZERO_BITS or not _plain_label(y[i]):
                        ok = False
                        break
                    v = 0.0
                k = _uniform_bin(v, dB, tol, B, e)
                s[2 * k] += 1.0
                s[2 * k + 1] += <double>y[i] - v
        else:
            for i in range(n):
                v = p[i]
                wi = w[i]
                if (_bits(v) > _ONE_BITS or not _plain_label(y[i])
                        or not _plain_weight(wi)):
                    if (_bits(v) != _MINUS_ZERO_BITS or not _plain_label(y[i])
                            or not _plain_weight(wi)):
                        ok = False
                        break
                    v = 0.0
                k = _uniform_bin(v, dB, tol, B, e)
                s[2 * k] += wi
                s[2 * k + 1] += wi * (<double>y[i] - v)
    return ok
