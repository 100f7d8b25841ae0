# Row kernels of the patching recalibrator: the predicted and realised utility
# of the top-class, class-wise and top-K utilities; the step p + c * u_vec(p)
# shifted by its row maximum; the Euclidean projection of shifted rows onto
# the simplex. They repeat, operation for operation, the numpy arithmetic of
# skcal's utilities and of the sort-based projection (Held, Wolfe and
# Crowder): copies, running sums, one difference, division and clip per
# entry, in the same order, so the results are those of numpy bit for bit.
# The one reduction whose order numpy chooses (the pairwise row sum) is taken
# from numpy by the caller. Every kernel checks its argument shapes at entry
# (O(1)) and raises ValueError on a mismatch; the contents (classes and k in
# range) are the caller's.

from libc.string cimport memcpy
from libc.math cimport fabs, isfinite
from libc.stdlib cimport calloc, free, malloc, qsort


cdef inline void _need(bint ok, str what) except *:
    if not ok:
        raise ValueError(f"kernel argument shapes do not match: {what}")


def shifted_step(
    const double[:, ::1] P,             # IN  (n, C) rows p
    const double[:, ::1] U,             # IN  (n, C) utility vectors u_vec(p)
    double c,                           # IN  step times sign
    double[:, ::1] out,                 # OUT (n, C) x - max(x) with x = p + c u
):
    """``x - max_j x_j`` row by row with ``x = P + c * U``; False if some x is not finite.

    Equal, entry for entry, to ``X = P + c * U; X - X.max(axis=1,
    keepdims=True)`` in numpy (a product and a sum per entry, then an exact
    maximum and one difference).
    """
    cdef Py_ssize_t n = P.shape[0], C = P.shape[1]
    cdef Py_ssize_t i, j
    cdef double x, top
    cdef bint finite = True
    _need(U.shape[0] == n and U.shape[1] == C, "U must have the shape of P")
    _need(out.shape[0] == n and out.shape[1] == C, "out must have the shape of P")
    if C == 0:
        return True
    with nogil:
        for i in range(n):
            top = P[i, 0] + c * U[i, 0]
            for j in range(C):
                x = P[i, j] + c * U[i, j]
                out[i, j] = x
                if not isfinite(x):
                    finite = False
                elif x > top:
                    top = x
            for j in range(C):
                out[i, j] = out[i, j] - top
    return finite


cdef int _larger_first(const void* a, const void* b) noexcept nogil:
    cdef double x = (<const double*> a)[0], z = (<const double*> b)[0]
    return (x < z) - (x > z)


# up to this many classes a row is sorted by ranks counted without branches
cdef enum:
    _RANK_SORT_MAX = 16

# rows per block of rank_utilities
cdef enum:
    _BLOCK = 256


cdef inline void _sort_descending(double* s, Py_ssize_t C) noexcept nogil:
    """Largest first: insertion sort for a few classes, qsort for many.

    The insertion sort is stable: equal entries (0.0 and -0.0 among them)
    keep their order, as :func:`_rank_sort_descending` keeps it.
    """
    cdef Py_ssize_t i, j
    cdef double x
    if C > 32:
        qsort(s, C, sizeof(double), _larger_first)
        return
    for i in range(1, C):
        x = s[i]
        j = i - 1
        while j >= 0 and s[j] < x:
            s[j + 1] = s[j]
            j -= 1
        s[j + 1] = x


cdef inline void _descending_ranks(
    const double* x, Py_ssize_t* r, Py_ssize_t C
) noexcept nogil:
    """``r[j] = #{l: x_l > x_j} + #{l < j: x_l == x_j}`` (``rank(x, j) - 1``).

    Each pair of entries is compared once, without branches (the inner loop
    vectorises). For finite ``x`` the ranks are a permutation of
    ``0, ..., C - 1``: the positions of the entries in the stable sort
    largest first (equal entries, 0.0 and -0.0 among them, by position).
    """
    cdef Py_ssize_t j, other, first, later
    cdef double v
    for j in range(C):
        r[j] = 0
    for j in range(1, C):
        v = x[j]
        later = 0
        for other in range(j):
            first = x[other] >= v   # x_other ranks before x_j
            later += first
            r[other] += 1 - first
        r[j] += later


cdef inline void _rank_sort_descending(
    const double* x, double* s, Py_ssize_t* r, Py_ssize_t C
) noexcept nogil:
    """``x`` sorted largest first into ``s``, through the ranks ``r``.

    For ``C <= _RANK_SORT_MAX``; ``s`` must not alias ``x``. The same array,
    bit for bit, as the stable insertion sort of :func:`_sort_descending`.
    """
    cdef Py_ssize_t j
    _descending_ranks(x, r, C)
    for j in range(C):
        s[r[j]] = x[j]


def project_shifted(
    double[:, ::1] S,                   # IN/OUT (n, C) rows with maximum 0; projected in place
    const double[::1] sums,             # IN  (n,) numpy's S.sum(axis=1)
):
    """Project rows of largest entry 0 onto the simplex, in place.

    Row by row: ``theta = (sums[i] - 1) / C``; if ``min(S[i]) - theta > 0``
    the projection is ``S[i] - theta`` (no entry is clipped). Otherwise,
    with ``s`` the row sorted decreasingly and ``css_k = (s_1 + ... + s_k)
    - 1`` (a running sum), ``rho`` is the last ``k`` with
    ``s_k - css_k / k > 0`` (``k = 1`` always counts) and ``theta =
    css_rho / rho``. The row becomes ``clip(S[i] - theta, 0, 1)``.
    """
    cdef Py_ssize_t n = S.shape[0], C = S.shape[1]
    cdef Py_ssize_t i
    cdef Py_ssize_t r[_RANK_SORT_MAX]
    cdef double* s
    _need(sums.shape[0] == n, "sums must have one entry per row of S")
    if n == 0 or C == 0:
        return
    s = <double*> malloc(C * sizeof(double))
    if s == NULL:
        raise MemoryError()
    try:
        with nogil:
            for i in range(n):
                _project_row(&S[i, 0], sums[i], C, s, r)
    finally:
        free(s)


cdef inline void _project_row(
    double* row, double total, Py_ssize_t C, double* s, Py_ssize_t* r
) noexcept nogil:
    """One row of :func:`project_shifted`, in place (``s``, ``r``: C entries of room)."""
    cdef Py_ssize_t j, rho
    cdef double theta, lowest, css, x
    theta = (total - 1.0) / <double> C
    lowest = row[0]
    for j in range(1, C):
        if row[j] < lowest:
            lowest = row[j]
    if not lowest - theta > 0:
        if C <= _RANK_SORT_MAX:
            _rank_sort_descending(row, s, r, C)
        else:
            for j in range(C):
                s[j] = row[j]
            _sort_descending(s, C)
        css = s[0]
        theta = css - 1.0
        rho = 0
        for j in range(1, C):
            css = css + s[j]
            if s[j] - (css - 1.0) / <double> (j + 1) > 0:
                rho = j
                theta = css - 1.0
        theta = theta / (<double> rho + 1.0)
    for j in range(C):
        x = row[j] - theta
        if x < 0.0:
            x = 0.0
        elif x > 1.0:
            x = 1.0
        row[j] = x


# kinds of utility understood by rank_utilities
cdef enum:
    _CLASS_WISE = 0
    _TOP_K = 1
    _TOP_CLASS = 2


def rank_utilities(
    const double[:, ::1] P,             # IN  (N, C) probability rows
    const Py_ssize_t[::1] y,            # IN  (N,) observed columns
    const Py_ssize_t[::1] kind,         # IN  (m,) 0 class-wise, 1 top-K, 2 top-class
    const Py_ssize_t[::1] param,        # IN  (m,) the class c, or K (1 <= K <= C)
    double[:, ::1] V,                   # OUT (m, N) predicted utility v_u(p)
    double[:, ::1] R,                   # OUT (m, N) realised minus predicted utility
    const Py_ssize_t[::1] rows,         # IN  (n,) the rows to evaluate, in [0, N)
):
    """``v_u`` and ``u(p, e_y) - v_u`` of class-wise, top-K and top-class utilities.

    Class-wise ``c``: ``v = p_c``, realised ``1{y = c}``. Top-K: ``v`` is
    the running sum of the row sorted decreasingly, up to its ``K``-th
    entry (numpy's ``cumsum`` of the sorted row); realised ``1{rank(p, y)
    <= K}`` with ``rank(p, y) = 1 + #{j: p_j > p_y} + #{j < y: p_j = p_y}``.
    Top-class: ``v`` is the first largest entry, realised ``1{rank(p, y) =
    1}``. Only the columns ``rows`` of ``V`` and ``R`` are written.
    """
    cdef Py_ssize_t N = P.shape[0], C = P.shape[1], m = kind.shape[0]
    cdef Py_ssize_t n = rows.shape[0]
    cdef Py_ssize_t ii, i, j, t, rank, yi, start, stop, c, b
    cdef Py_ssize_t r[_RANK_SORT_MAX]
    cdef double py, v, realised, top
    cdef bint sorted_needed = False
    cdef double* s
    cdef double* block_sums
    cdef double* block_top
    cdef Py_ssize_t* block_rank
    _need(y.shape[0] == N, "y must have one entry per row of P")
    _need(param.shape[0] == m, "kind and param must have one length")
    _need(V.shape[0] == m and V.shape[1] == N and R.shape[0] == m and R.shape[1] == N,
          "V and R must have shape (len(kind), len(P))")
    _need(C > 0 or n == 0, "P must have at least one column")
    for t in range(m):
        if kind[t] == _TOP_K:
            sorted_needed = True
    if n == 0:
        return
    # a block of rows at a time: first what each row needs (its running sums
    # sorted, the rank of y, the top entry), then utility by utility, so
    # that the writes to V and R run along their rows
    block_sums = <double*> malloc(_BLOCK * C * sizeof(double))
    block_top = <double*> malloc(_BLOCK * sizeof(double))
    block_rank = <Py_ssize_t*> malloc(_BLOCK * sizeof(Py_ssize_t))
    try:
        if block_sums == NULL or block_top == NULL or block_rank == NULL:
            raise MemoryError()
        with nogil:
            start = 0
            while start < n:
                stop = start + _BLOCK if start + _BLOCK < n else n
                for ii in range(start, stop):
                    i = rows[ii]
                    yi = y[i]
                    s = block_sums + (ii - start) * C
                    if C <= _RANK_SORT_MAX:
                        # one pass of ranks: the sorted row (stable, so s[0]
                        # is the first largest entry) and the rank of y
                        _rank_sort_descending(&P[i, 0], s, r, C)
                        rank = r[yi] + 1
                        top = s[0]
                    else:
                        py = P[i, yi]
                        rank = 1
                        top = P[i, 0]
                        for j in range(C):
                            rank += (P[i, j] > py) + ((j < yi) & (P[i, j] == py))
                            if P[i, j] > top:
                                top = P[i, j]
                        if sorted_needed:
                            for j in range(C):
                                s[j] = P[i, j]
                            _sort_descending(s, C)
                    if sorted_needed:
                        for j in range(1, C):
                            s[j] = s[j - 1] + s[j]
                    block_rank[ii - start] = rank
                    block_top[ii - start] = top
                for t in range(m):
                    c = param[t]
                    if kind[t] == _CLASS_WISE:
                        for ii in range(start, stop):
                            i = rows[ii]
                            v = P[i, c]
                            realised = 1.0 if y[i] == c else 0.0
                            V[t, i] = v
                            R[t, i] = realised - v
                    elif kind[t] == _TOP_K:
                        for ii in range(start, stop):
                            i = rows[ii]
                            b = ii - start
                            v = block_sums[b * C + c - 1]
                            realised = 1.0 if block_rank[b] <= c else 0.0
                            V[t, i] = v
                            R[t, i] = realised - v
                    else:
                        for ii in range(start, stop):
                            i = rows[ii]
                            b = ii - start
                            v = block_top[b]
                            realised = 1.0 if block_rank[b] == 1 else 0.0
                            V[t, i] = v
                            R[t, i] = realised - v
                start = stop
    finally:
        free(block_sums)
        free(block_top)
        free(block_rank)


def top_k_rows(
    const double[:, ::1] P,             # IN  (n, C) probability rows
    Py_ssize_t k,                       # IN  1 <= k <= C
    double[:, ::1] U,                   # OUT (n, C) 1{rank(p, j) <= k}
):
    """The top-K utility vectors: ``U[i, j] = 1{rank(p_i, j) <= k}``.

    ``rank(p, j) = 1 + #{l: p_l > p_j} + #{l < j: p_l = p_j}``: the entries
    above the ``k``-th largest value ``t`` are in, and the lowest columns
    among those equal to ``t`` fill the remaining places. For a few classes
    the ranks are counted directly (the same entries).
    """
    cdef Py_ssize_t n = P.shape[0], C = P.shape[1]
    cdef Py_ssize_t i, j, room
    cdef Py_ssize_t r[_RANK_SORT_MAX]
    cdef double t
    cdef double* s
    _need(U.shape[0] == n and U.shape[1] == C, "U must have the shape of P")
    _need(1 <= k <= C or n == 0, "k must be in [1, n_classes]")
    if n == 0:
        return
    s = <double*> malloc(C * sizeof(double))
    if s == NULL:
        raise MemoryError()
    try:
        with nogil:
            for i in range(n):
                if C <= _RANK_SORT_MAX:
                    # in iff rank(p, j) <= k: the same entries
                    _descending_ranks(&P[i, 0], r, C)
                    for j in range(C):
                        U[i, j] = 1.0 if r[j] < k else 0.0
                    continue
                for j in range(C):
                    s[j] = P[i, j]
                _sort_descending(s, C)
                t = s[k - 1]
                room = k
                for j in range(C):
                    if P[i, j] > t:
                        room -= 1
                for j in range(C):
                    if P[i, j] > t:
                        U[i, j] = 1.0
                    elif P[i, j] == t and room > 0:
                        U[i, j] = 1.0
                        room -= 1
                    else:
                        U[i, j] = 0.0
    finally:
        free(s)


# interval_upper_bounds bins v by the top bits of its float64 representation:
# _OCTAVE_BITS mantissa bits per power of two, from 2^-_OCTAVES up to 2
# (smaller and negative v in the first bin, larger in the last): bins are
# monotone in v, finer near 0 where probabilities crowd.
cdef enum:
    _OCTAVE_BITS = 10
    _OCTAVES = 30
    _N_BINS = (_OCTAVES + 2) << _OCTAVE_BITS
    _SHIFT = 52 - _OCTAVE_BITS
    _FIRST_KEY = (1023 - _OCTAVES) << _OCTAVE_BITS   # 2^-_OCTAVES


cdef inline Py_ssize_t _bin_of(double v) noexcept nogil:
    cdef double positive = v + 0.0      # -0.0 as +0.0
    cdef unsigned long long bits
    cdef long long key
    if not positive > 0.0:
        return 0
    memcpy(&bits, &positive, sizeof(double))  # the bits, without type punning
    key = <long long> (bits >> _SHIFT) - _FIRST_KEY
    if key < 0:
        return 0
    if key >= _N_BINS:
        return _N_BINS - 1
    return <Py_ssize_t> key


def interval_upper_bounds(
    const double[:, ::1] v,             # IN  (m, n) predicted utility: row k is utility k
    const double[:, ::1] r,             # IN  (m, n) realised minus predicted utility
    const double[::1] w,                # IN  (n,) non-negative sample weights
    double[::1] bound,                  # OUT (m,) >= the worst |sum of w r| over runs of v[k]
):
    """Upper bounds on ``max_abs_interval_rows``'s ``value``, without sorting.

    The rows are binned by ``v`` (bins monotone in ``v``, ties in one bin).
    With ``E_j`` the sum of ``w r`` over the bins before bin ``j`` and
    ``P_j``, ``N_j`` the sums of ``w r^+`` and ``w r^-`` in it, every prefix
    sum of the sorted residuals ending in bin ``j`` lies in ``[E_j - N_j,
    E_j + P_j]``; so the worst run is at most ``max(0, max_j E_j + P_j) -
    min(0, min_j E_j - N_j)``. To cover rounding (this sum and the exact
    one add in different orders) ``4 n eps sum |w r|`` is added (the sum
    taken over the bins).
    """
    cdef Py_ssize_t m = v.shape[0], n = v.shape[1]
    cdef Py_ssize_t k, i, j, first, last
    cdef double s, top, low, x, total_abs
    cdef bint unit = True
    cdef double* acc
    _need(r.shape[0] == m and r.shape[1] == n, "r must have the shape of v")
    _need(w.shape[0] == n, "w must have one entry per column of v")
    _need(bound.shape[0] == m, "bound needs one entry per row of v")
    # acc[2 j] and acc[2 j + 1]: the sums of w r^+ and w r^- in bin j (one
    # cache line for both), zero outside the bins in use
    acc = <double*> calloc(2 * _N_BINS, sizeof(double))
    if acc == NULL:
        raise MemoryError()
    try:
        with nogil:
            for i in range(n):
                unit = unit & (w[i] == 1.0)
            for k in range(m):
                total_abs = 0.0
                first = _N_BINS - 1
                last = 0
                for i in range(n):
                    # w = 1: x = r; |x| to the sum of its sign, chosen by
                    # the index, not by a branch (the sign is a coin toss)
                    x = r[k, i] if unit else w[i] * r[k, i]
                    j = _bin_of(v[k, i])
                    first = j if j < first else first
                    last = j if j > last else last
                    acc[2 * j + (x <= 0)] += fabs(x)
                # the bins outside [first, last] are empty: they change
                # neither s nor top nor low
                s = 0.0
                top = 0.0
                low = 0.0
                for j in range(first, last + 1):
                    total_abs += acc[2 * j] + acc[2 * j + 1]
                    x = s + acc[2 * j]
                    top = x if x > top else top
                    x = s - acc[2 * j + 1]
                    low = x if x < low else low
                    s = s + acc[2 * j] - acc[2 * j + 1]
                    acc[2 * j] = 0.0
                    acc[2 * j + 1] = 0.0
                bound[k] = (top - low) * (1.0 + 1e-12) + 4.0 * (n + 1) * 2.3e-16 * total_abs
    finally:
        free(acc)


def scatter_row_brier(
    const double[::1] squares,          # IN  (n,) numpy's einsum("ij,ij->i", P, P)
    const double[:, ::1] P,             # IN  (n, C) the rows
    const Py_ssize_t[::1] y,            # IN  (n,) observed columns, in [0, C)
    const Py_ssize_t[::1] index,        # IN  (n,) where each row's loss goes, in [0, N)
    double[::1] loss,                   # IN/OUT (N,) loss[index[r]] is written
):
    """``loss[index] = squares - 2 * P[rows, y] + 1``: ``||p - e_y||^2`` per row.

    The arithmetic of numpy's ``squares - 2.0 * P[np.arange(n), y] + 1.0``
    (a product, a difference, a sum per row, in that order), scattered into
    ``loss`` without the temporaries.
    """
    cdef Py_ssize_t n = P.shape[0]
    cdef Py_ssize_t r
    _need(squares.shape[0] == n and y.shape[0] == n and index.shape[0] == n,
          "squares, y and index must have one entry per row of P")
    with nogil:
        for r in range(n):
            loss[index[r]] = squares[r] - 2.0 * P[r, y[r]] + 1.0


cdef double _pairwise_sum(const double* a, Py_ssize_t n) noexcept nogil:
    """numpy's pairwise summation of ``a[0:n]`` (``DOUBLE_pairwise_sum``).

    Fewer than 8 terms: one running sum. Up to 128: eight running sums over
    the terms ``j, j + 8, ...`` combined as ``((r0 + r1) + (r2 + r3)) +
    ((r4 + r5) + (r6 + r7))``, then the last ``n % 8`` terms one by one.
    More: the two halves (the first a multiple of 8 long) summed so and
    added. The same sum, bit for bit, as ``np.add.reduce`` along a
    contiguous last axis (its result is this plus the reduction's zero).
    """
    cdef Py_ssize_t i, j, half
    cdef double res
    cdef double r[8]
    if n < 8:
        res = 0.0
        for i in range(n):
            res = res + a[i]
        return res
    if n <= 128:
        for j in range(8):
            r[j] = a[j]
        i = 8
        while i < n - (n % 8):
            for j in range(8):
                r[j] = r[j] + a[i + j]
            i += 8
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        while i < n:
            res = res + a[i]
            i += 1
        return res
    half = n // 2
    half -= half % 8
    return _pairwise_sum(a, half) + _pairwise_sum(a + half, n - half)


def step_project(
    const double[:, ::1] P,             # IN  (n, C) rows p
    const double[:, ::1] U,             # IN  (n, C) utility vectors u_vec(p)
    double c,                           # IN  step times sign
    double[:, ::1] out,                 # OUT (n, C) the projected rows
    double[::1] sums,                   # OUT (n,) the row sums of the shifted rows
):
    """:func:`shifted_step`, the row sums and :func:`project_shifted`, row by row.

    Each row goes through the three while it is in cache: ``x = p + c u``
    shifted by its maximum, ``sums[i]`` numpy's pairwise sum of it (see
    :func:`_pairwise_sum`: what ``out.sum(axis=1)`` would give), then its
    projection onto the simplex; the same rows, bit for bit, as
    ``shifted_step(P, U, c, out); project_shifted(out, out.sum(axis=1))``.
    False if some x is not finite (such a row is left shifted, not projected).
    """
    cdef Py_ssize_t n = P.shape[0], C = P.shape[1]
    cdef Py_ssize_t i, j
    cdef Py_ssize_t r[_RANK_SORT_MAX]
    cdef double x, top
    cdef bint finite = True, row_finite
    cdef double* s
    _need(U.shape[0] == n and U.shape[1] == C, "U must have the shape of P")
    _need(out.shape[0] == n and out.shape[1] == C, "out must have the shape of P")
    _need(sums.shape[0] == n, "sums must have one entry per row of P")
    if C == 0:
        for i in range(n):
            sums[i] = 0.0
        return True
    s = <double*> malloc(C * sizeof(double))
    if s == NULL:
        raise MemoryError()
    try:
        with nogil:
            for i in range(n):
                row_finite = True
                top = P[i, 0] + c * U[i, 0]
                for j in range(C):
                    x = P[i, j] + c * U[i, j]
                    out[i, j] = x
                    if not isfinite(x):
                        row_finite = False
                    elif x > top:
                        top = x
                for j in range(C):
                    out[i, j] = out[i, j] - top
                sums[i] = _pairwise_sum(&out[i, 0], C)
                if row_finite:
                    _project_row(&out[i, 0], sums[i], C, s, r)
                else:
                    finite = False
    finally:
        free(s)
    return finite
