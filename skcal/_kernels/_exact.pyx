"""Exact per-group sums of doubles and of products of two doubles.

The kernels of :class:`skcal._grouped.ExactSums` (see its docstring for the
representation): every term ``m 2**e`` (``m`` an integer below ``2**59``) is
added, without rounding, into three 32-bit limbs of its group's row in an
int64 array. A limb gains less than ``2**35`` per input row (four product
terms of less than ``2**33`` each), so ``2**28`` rows per group cannot
overflow; the caller sums at most ``2**24`` rows per call and then
propagates the carries.

A double ``x >= 0`` is ``m 2**e`` with the 53-bit integer ``m`` read from its
bits; a product ``v x`` is split into four terms by halving both mantissas
into 27 and 26 bits, so that each partial product is below ``2**54``.
"""

from libc.math cimport fabs, signbit
from libc.stdint cimport int64_t, uint64_t
from libc.string cimport memcpy

# exponents of terms lie in [-2148, 2048): biased by 4096 they are positive,
# so the limb column is a shift, the floor for negative exponents too
cdef enum:
    EXP_BIAS = 4096
    COL_BIAS = 128  # EXP_BIAS / 32

cdef int64_t LIMB_MASK = 0xFFFFFFFF
cdef int64_t HALF_MASK = (1 << 27) - 1


cdef inline bint _split(double x, int64_t* mant, int64_t* expo) noexcept nogil:
    """``x = mant 2**expo``; False unless ``x`` is finite and not negative."""
    cdef uint64_t bits
    cdef int64_t biased
    memcpy(&bits, &x, 8)
    biased = <int64_t>((bits >> 52) & 0x7FF)
    mant[0] = <int64_t>(bits & ((<uint64_t>1 << 52) - 1))
    if biased == 0x7FF:
        return False
    if (bits >> 63) and (mant[0] != 0 or biased != 0):
        return False
    if biased == 0:  # zero or subnormal
        expo[0] = -1074
    else:
        mant[0] |= <int64_t>1 << 52
        expo[0] = biased - 1075
    return True


cdef inline int64_t _column(int64_t expo) noexcept nogil:
    return ((expo + EXP_BIAS) >> 5) - COL_BIAS


cdef inline void _add_term(
    int64_t* row, int64_t mant, int64_t expo, int64_t offset
) noexcept nogil:
    """Add ``mant 2**expo`` (``0 <= mant < 2**59``) to the limbs of ``row``."""
    cdef int64_t t = expo + EXP_BIAS
    cdef int64_t col = (t >> 5) - COL_BIAS - offset
    cdef int64_t shift = t & 31
    cdef int64_t low = (mant & LIMB_MASK) << shift  # < 2**63
    cdef int64_t high = (mant >> 32) << shift  # < 2**58
    row[col] += low & LIMB_MASK
    row[col + 1] += (low >> 32) + (high & LIMB_MASK)
    row[col + 2] += high >> 32


def term_columns(
    const double[::1] v,       # IN  (n,) first factors (ignored unless product)
    const double[::1] x,       # IN  (n,) values, or second factors
    bint product,              # IN  sum v * x instead of x
    bint absolute=False,       # IN  the terms of |x| (deposit_signed_runs)
):
    """``(lowest, highest)`` limb column of the non-zero terms, or None.

    Raises ValueError if an input is negative (unless ``absolute``) or not
    finite.
    """
    cdef Py_ssize_t n = x.shape[0], i
    cdef int64_t mx, ex, mv = 0, ev = 0, lo = 1 << 40, hi = -(1 << 40), c
    cdef bint ok = True
    with nogil:
        for i in range(n):
            ok = _split(fabs(x[i]) if absolute else x[i], &mx, &ex)
            if product:
                ok = ok and _split(v[i], &mv, &ev)
            if not ok:
                break
            if mx == 0 or (product and mv == 0):
                continue
            if product:
                ex += ev
            c = _column(ex)
            if c < lo:
                lo = c
            # the highest term: m below 2**53 (x) or 2**106 (v x) at 2**ex
            c = _column(ex + (106 if product else 53))
            if c > hi:
                hi = c
    if not ok:
        raise ValueError("exact sums need finite, non-negative doubles")
    if lo > hi:
        return None
    return int(lo), int(hi)


def deposit(
    const int64_t[::1] index,  # IN  (n,) group of each row, in [0, k)
    const double[::1] v,       # IN  (n,) first factors (ignored unless product)
    const double[::1] x,       # IN  (n,) values, or second factors
    bint product,              # IN  sum v * x instead of x
    int64_t offset,            # IN  column of limb 0 (term_columns' lowest)
    int64_t[:, ::1] out,       # I/O (k, L) limbs, L >= highest - offset + 2
):
    """Add every row's term(s) to the limbs of its group, exactly (no carry)."""
    cdef Py_ssize_t n = x.shape[0], i
    cdef int64_t mx, ex, mv, ev, a0, a1, b0, b1, e
    cdef int64_t* row
    with nogil:
        for i in range(n):
            _split(x[i], &mx, &ex)
            if mx == 0:
                continue
            row = &out[index[i], 0]
            if not product:
                _add_term(row, mx, ex, offset)
                continue
            _split(v[i], &mv, &ev)
            if mv == 0:
                continue
            a0, a1 = mv & HALF_MASK, mv >> 27
            b0, b1 = mx & HALF_MASK, mx >> 27
            e = ev + ex
            _add_term(row, a0 * b0, e, offset)
            _add_term(row, a1 * b0, e + 27, offset)
            _add_term(row, a0 * b1, e + 27, offset)
            _add_term(row, a1 * b1, e + 54, offset)


def deposit_signed_runs(
    const int64_t[::1] counts,  # IN  (g,) rows of each value, in order
    const double[::1] signed,   # IN  (counts.sum(),) their weights, a positive row's as -w
    int64_t offset,             # IN  column of limb 0 (term_columns' lowest, absolute)
    int64_t[:, ::1] out,        # I/O (2 g, L) limbs, L >= highest - offset + 2
):
    """Add each row's weight to the limbs of group ``2 j + (its sign bit)``.

    The rows of value ``j`` are the next ``counts[j]`` entries of ``signed``:
    ``deposit`` of ``|signed|`` with the index ``2 j + signbit``, without the
    index array (no more than ``2**28`` rows per value, as ``deposit``).
    """
    cdef Py_ssize_t g = counts.shape[0], j, r = 0, end
    cdef int64_t mx, ex
    cdef double x
    if out.shape[0] < 2 * g:
        raise ValueError("kernel argument shapes do not match: out needs 2 len(counts) rows")
    with nogil:
        for j in range(g):
            end = r + counts[j]
            if end > signed.shape[0]:
                break
            while r < end:
                x = signed[r]
                _split(fabs(x), &mx, &ex)
                if mx != 0:
                    _add_term(&out[2 * j + (signbit(x) != 0), 0], mx, ex, offset)
                r += 1
    if r != signed.shape[0]:
        raise ValueError("kernel argument shapes do not match: counts must sum to len(signed)")
