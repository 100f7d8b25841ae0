# The multiclass boundary's check of a probability matrix, fused with its top
# label (skcal/_input/_multiclass.py): one read of each row for the range,
# the row sum and the largest entry, then the first column holding it (the
# row still in cache). The range is checked on the entries' bits as
# integers: the doubles in [+0, 1] are those whose bits are at most those of
# 1.0, so NaN, infinities and signs are seen without a floating comparison;
# the floating maximum may then assume finite values and one sign of zero
# (-ffinite-math-only -fno-signed-zeros for this kernel alone, meson.build),
# which lets the compiler keep it in vector registers. A row with NaN, an
# infinity, a negative entry or -0.0 fails, and the caller takes its exact
# path. The row loop is C, in eight lanes, compiled once per vector width
# (AVX-512, AVX2, baseline) with GCC and glibc on x86-64, chosen at load time.
# The kernel checks its argument shapes at entry.

from libc.stdint cimport uint64_t
from libc.string cimport memcpy


cdef enum:
    _LANES = 8

cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    /* adding it lifts every bit pattern above the bits of 1.0 into bit 62 */
    #define SKCAL_LIFT 0x000FFFFFFFFFFFFFULL
    #define SKCAL_HIGH2 0xC000000000000000ULL
    #define SKCAL_LANES 8
    /* one clone per vector width, chosen at load time (an ifunc: GCC, glibc) */
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__)
    #define SKCAL_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
    #else
    #define SKCAL_CLONES
    #endif

    /* Sum, largest entry and its first column of one row; non-zero if an
       entry is not a double in [+0, 1]. Eight lanes keep their sums, the OR
       of their bits, their largest entry and the first block where it
       appeared; then the lanes are combined and the last entries read one
       by one. GCC and Clang get the lanes as vector types (the loop
       vectoriser keeps each lane's sum in order and would not vectorise
       them); other compilers read every entry one by one. */
    #if defined(__GNUC__)
    typedef double skcal_v8d __attribute__((vector_size(64)));
    typedef uint64_t skcal_v8u __attribute__((vector_size(64)));
    #endif

    SKCAL_CLONES
    static int skcal_proba_row(const double *row, Py_ssize_t C, double *sum, double *best,
                               Py_ssize_t *column)
    {
        uint64_t u, bad = 0;
        double x, s = 0.0, b = 0.0;
        Py_ssize_t j = 0, jb = 0;
        int k;
    #if defined(__GNUC__)
        if (C >= SKCAL_LANES) {
            skcal_v8d sl = {0}, hi = {0}, xv;
            skcal_v8u ors = {0}, at = {0}, uv, keep, jv;
            for (; j + SKCAL_LANES <= C; j += SKCAL_LANES) {
                memcpy(&xv, row + j, sizeof xv);
                memcpy(&uv, row + j, sizeof uv);
                ors |= uv | (uv + SKCAL_LIFT);
                sl += xv;
                /* a lane keeps its first largest entry: replaced only by a larger one */
                keep = (skcal_v8u) (hi >= xv);
                hi = (skcal_v8d) (((skcal_v8u) hi & keep) | ((skcal_v8u) xv & ~keep));
                jv = (skcal_v8u) {0} + (uint64_t) j;
                at = (at & keep) | (jv & ~keep);
            }
            s = ((sl[0] + sl[1]) + (sl[2] + sl[3])) + ((sl[4] + sl[5]) + (sl[6] + sl[7]));
            bad = ((ors[0] | ors[1]) | (ors[2] | ors[3])) | ((ors[4] | ors[5]) | (ors[6] | ors[7]));
            /* the first column among the lanes holding the largest entry; a
               lane whose entries are all zero has at = 0 and column k, no
               later than its first zero */
            b = hi[0];
            jb = (Py_ssize_t) at[0];
            for (k = 1; k < SKCAL_LANES; k++) {
                if (hi[k] > b || (hi[k] == b && (Py_ssize_t) at[k] + k < jb)) {
                    b = hi[k];
                    jb = (Py_ssize_t) at[k] + k;
                }
            }
        }
    #endif
        for (; j < C; j++) {
            memcpy(&u, row + j, sizeof u);
            bad |= u | (u + SKCAL_LIFT);
            x = row[j];
            s += x;
            if (x > b || j == 0) {
                b = x;
                jb = j;
            }
        }
        *sum = s;
        *best = b;
        *column = jb;
        return (bad & SKCAL_HIGH2) != 0;
    }
    """
    int _row "skcal_proba_row"(
        const double* row, Py_ssize_t C, double* total, double* best, Py_ssize_t* column
    ) noexcept nogil
    uint64_t SKCAL_LIFT
    uint64_t SKCAL_HIGH2


cdef inline void _need(bint ok, str what) except *:
    if not ok:
        raise ValueError(f"kernel argument shapes do not match: {what}")


def check_top_label(
    const double[:, ::1] P,             # IN  (n, C) probabilities
    double tol,                         # IN  a row passes if |sum - 1| <= tol
    double[::1] conf,                   # OUT (n,) largest entry of each row
    Py_ssize_t[::1] pred,               # OUT (n,) its first column, as np.argmax
):
    """Check every entry in [+0, 1] and every row sum within ``tol`` of 1; the top label.

    Returns 0 when every row passes, else 1 + the first failing row (an
    entry that is not a double in [+0, 1] -- NaN, an infinity, a negative
    number or -0.0 -- or a sum farther than ``tol`` from 1; the rows after
    it are not read). The sum is added in eight lanes, so it can differ
    from ``P.sum(axis=1)`` in the last bits: the caller leaves a margin.
    ``conf`` and ``pred`` are filled for the rows that passed.
    """
    cdef Py_ssize_t n = P.shape[0], C = P.shape[1], i, jbest, failed = 0
    cdef double total = 0.0, best = 0.0
    cdef const double* row
    _need(C >= 1, "P needs at least one column")
    _need(conf.shape[0] == n and pred.shape[0] == n, "conf and pred need one entry per row")
    with nogil:
        for i in range(n):
            row = &P[i, 0]
            if (
                _row(row, C, &total, &best, &jbest)
                or not (total - 1.0 <= tol and 1.0 - total <= tol)
            ):
                failed = i + 1
                break
            conf[i] = row[jbest]
            pred[i] = jbest
    return failed


def check_rows(
    const double[:, ::1] P,             # IN  (n, C) probabilities
    double tol,                         # IN  a row passes if |sum - 1| <= tol
):
    """``check_top_label`` without the top label: the check alone, in one read.

    Returns 0 when every entry is a double in [+0, 1] and every row sum is
    within ``tol`` of 1, else 1 + the first failing row (the rows after it
    are not read). The sum is added in eight lanes (``P.sum(axis=1)``'s
    order for fewer than eight columns): the caller leaves a margin. For
    the two columns of a binary ``predict_proba``, where ``P.sum(axis=1)``
    reduces each short row on its own (about 10 ns a row).
    """
    cdef Py_ssize_t n = P.shape[0], C = P.shape[1], i, jbest, failed = 0
    cdef double total = 0.0, best = 0.0
    _need(C >= 1, "P needs at least one column")
    if C == 2:
        with nogil:
            failed = _two_columns(&P[0, 0] if n else NULL, n, tol)
        return failed
    with nogil:
        for i in range(n):
            if (
                _row(&P[i, 0], C, &total, &best, &jbest)
                or not (total - 1.0 <= tol and 1.0 - total <= tol)
            ):
                failed = i + 1
                break
    return failed


cdef Py_ssize_t _two_columns(const double* P, Py_ssize_t n, double tol) noexcept nogil:
    """``check_rows`` of two columns: rows in blocks, each checked without a
    branch (the bits of both entries, and ``p0 + p1``, numpy's sum), then
    the failing row of a failing block found one by one (0: all pass)."""
    cdef Py_ssize_t i, start, stop
    cdef uint64_t bad, u0, u1, far
    cdef double s
    for start in range(0, n, 1024):
        stop = start + 1024 if start + 1024 < n else n
        bad = 0
        for i in range(start, stop):
            memcpy(&u0, &P[2 * i], 8)
            memcpy(&u1, &P[2 * i + 1], 8)
            s = P[2 * i] + P[2 * i + 1]
            far = (s - 1.0 > tol) | (1.0 - s > tol) | (s != s)
            bad |= u0 | (u0 + SKCAL_LIFT) | u1 | (u1 + SKCAL_LIFT) | (far << 63)
        if bad & SKCAL_HIGH2:
            for i in range(start, stop):
                memcpy(&u0, &P[2 * i], 8)
                memcpy(&u1, &P[2 * i + 1], 8)
                s = P[2 * i] + P[2 * i + 1]
                if ((u0 | (u0 + SKCAL_LIFT) | u1 | (u1 + SKCAL_LIFT)) & SKCAL_HIGH2) or not (
                    s - 1.0 <= tol and 1.0 - s <= tol
                ):
                    return i + 1
    return 0
