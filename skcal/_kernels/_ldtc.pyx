# Kernels of the lower distance to calibration (skcal.metrics._ldtc): the
# split columns of the flow program on a grid, summed per block, without a
# per-sample array. The distinct predictions of one label and one grid cell
# are the samples of one "row"; a block is a contiguous run of a row, given
# by a half-open range [lo, hi) of indices into the grouped arrays (samples
# of the range that are on the grid or carry no mass are not columns and are
# skipped). Every number is computed as numpy computed it in the array code
# these kernels replace: the same products and differences in the same
# order, and sums in numpy's pairwise order (the order of np.sum of a
# contiguous array and of np.add.reduceat: the first element plus the
# pairwise sum of the rest), so the program handed to the solver is the
# same bit for bit. The module is compiled with -ffp-contract=off for that.
# Every kernel checks its argument shapes at entry (O(1)) and raises
# ValueError on a mismatch; the contents (sorted values, blocks inside one
# cell) are the caller's.


from libc.math cimport fabs


cdef inline void _need(bint ok, str what) except *:
    if not ok:
        raise ValueError(f"kernel argument shapes do not match: {what}")


cdef enum:
    _BUFFER = 128


cdef struct Cursor:
    const double* values
    const double* mass
    const double* u
    double scale
    Py_ssize_t M
    Py_ssize_t k        # next index to look at
    Py_ssize_t end      # one past the last index to look at
    Py_ssize_t cell     # grid cell of values[k - 1] (or of the block)
    bint track          # follow the cell along the values (else fixed)
    bint constant       # terms d (u[cell + 1] - v) instead of (d, d cost)
    Py_ssize_t pos      # next buffered term pair
    Py_ssize_t fill     # buffered term pairs
    double ta[_BUFFER]
    double tb[_BUFFER]


cdef inline void _refill(Cursor* c) noexcept nogil:
    """Buffer the terms of the next split columns (up to _BUFFER of them).

    Every value's terms are written and the slot kept only for a split
    column (mass > 0, not on the grid): no branch on the data, which is
    where a mixed sequence of labels would mispredict.
    """
    cdef Py_ssize_t f = 0, k = c.k, end = c.end, cell = c.cell, M = c.M
    cdef const double* u = c.u
    cdef double v, m, up
    cdef bint keep
    while f < _BUFFER and k < end:
        v = c.values[k]
        if c.track:
            while cell + 1 < M and u[cell + 1] <= v:
                cell += 1
        m = c.mass[k] * c.scale
        keep = (m > 0) & (v != u[cell])
        up = u[cell + 1] if cell + 1 < M else 1.0   # (a value at 1 is not kept)
        if c.constant:
            c.ta[f] = m * (up - v)
            c.tb[f] = 0.0
        else:
            c.ta[f] = m
            c.tb[f] = m * (2.0 * v - u[cell] - up)
        f += keep
        k += 1
    c.k = k
    c.cell = cell
    c.pos = 0
    c.fill = f


cdef inline void _next(Cursor* c, double* a, double* b) noexcept nogil:
    """The terms of the next split column; one must exist before ``c.end``."""
    if c.pos == c.fill:
        _refill(c)
    a[0] = c.ta[c.pos]
    b[0] = c.tb[c.pos]
    c.pos += 1


cdef void _pairwise(Cursor* c, Py_ssize_t n, double* out) noexcept nogil:
    """Sums of the next ``n`` term pairs in numpy's pairwise order."""
    cdef double ra[8]
    cdef double rb[8]
    cdef double left[2]
    cdef double a, b, sa, sb
    cdef Py_ssize_t i, j, n2, _i
    if n < 8:
        sa = -0.0
        sb = -0.0
        for _i in range(n):
            _next(c, &a, &b)
            sa += a
            sb += b
        out[0] = sa
        out[1] = sb
        return
    if n <= 128:
        for j in range(8):
            _next(c, &ra[j], &rb[j])
        i = 8
        while i < n - (n % 8):
            for j in range(8):
                _next(c, &a, &b)
                ra[j] += a
                rb[j] += b
            i += 8
        sa = ((ra[0] + ra[1]) + (ra[2] + ra[3])) + ((ra[4] + ra[5]) + (ra[6] + ra[7]))
        sb = ((rb[0] + rb[1]) + (rb[2] + rb[3])) + ((rb[4] + rb[5]) + (rb[6] + rb[7]))
        while i < n:
            _next(c, &a, &b)
            sa += a
            sb += b
            i += 1
        out[0] = sa
        out[1] = sb
        return
    n2 = n // 2
    n2 -= n2 % 8
    _pairwise(c, n2, left)          # the left half first: the cursor streams
    _pairwise(c, n - n2, out)
    out[0] = left[0] + out[0]
    out[1] = left[1] + out[1]


cdef inline void _cursor(
    Cursor* c, const double[::1] values, const double[::1] mass,
    const double[::1] u, double scale,
) noexcept nogil:
    c.values = &values[0]
    c.mass = &mass[0]
    c.u = &u[0]
    c.scale = scale
    c.M = u.shape[0]
    c.k = 0
    c.end = values.shape[0]
    c.pos = 0
    c.fill = 0
    c.cell = 0
    c.track = True
    c.constant = False


def split_supply(
    const double[::1] values,           # IN  distinct predictions, ascending, in [0, 1]
    const double[::1] mass,             # IN  weight of one label per value
    const double[::1] u,                # IN  grid, strictly increasing from 0 to 1
    double scale,                       # IN  factor applied to every mass
    double[::1] supply,                 # IN/OUT the label's M node supplies (added to)
    Py_ssize_t[::1] count,              # OUT split columns per cell (M entries)
):
    """Supplies and split columns of one label; returns ``sum d (u[k+1] - v)``.

    As ``np.add.at`` added them: the masses of the values on the grid first,
    then each split mass ``d`` at the grid point above its value, in order.
    """
    cdef Py_ssize_t K = values.shape[0], M = u.shape[0], k, cell = 0, n = 0
    cdef Py_ssize_t lo, hi, mid, n_cell
    cdef double v, m, acc
    cdef bint keep
    cdef double out[2]
    cdef Cursor c
    _need(mass.shape[0] == K and K > 0, "values and mass must have one, positive length")
    _need(supply.shape[0] == M and count.shape[0] == M and M >= 2,
          "supply and count need one entry per grid point")
    with nogil:
        for k in range(M):
            count[k] = 0
        for cell in range(M):                   # the values on the grid
            lo = 0                              # (binary search: first >= u)
            hi = K
            while lo < hi:
                mid = lo + (hi - lo) // 2
                if values[mid] < u[cell]:
                    lo = mid + 1
                else:
                    hi = mid
            while lo < K and values[lo] == u[cell]:
                m = mass[lo] * scale
                if m > 0:
                    supply[cell] += m
                lo += 1
        # the split ones, added in order to a running sum per cell (the
        # values are sorted: a cell's values are contiguous)
        cell = 0
        acc = supply[1]
        n_cell = 0
        for k in range(K):
            v = values[k]
            if cell + 1 < M and u[cell + 1] <= v:
                supply[cell + 1] = acc
                count[cell] = n_cell
                n += n_cell
                n_cell = 0
                while cell + 1 < M and u[cell + 1] <= v:
                    cell += 1
                if cell + 1 < M:
                    acc = supply[cell + 1]
            m = mass[k] * scale
            keep = m > 0 and v != u[cell]
            acc += m if keep else 0.0           # + 0.0: exact, and no branch
            n_cell += keep
        if cell + 1 < M:
            supply[cell + 1] = acc
        count[cell] = n_cell
        n += n_cell
        _cursor(&c, values, mass, u, scale)
        c.constant = True
        _pairwise(&c, n, out)
    return out[0]


def split_elements(
    const double[::1] values,           # IN  as in split_supply
    const double[::1] mass,             # IN
    const double[::1] u,                # IN
    double scale,                       # IN
    Py_ssize_t[::1] index,              # OUT the split columns' value indices, in order
    Py_ssize_t[::1] cell,               # OUT and their cells
):
    """List the split columns of one label (as many as ``index`` holds)."""
    cdef Py_ssize_t K = values.shape[0], M = u.shape[0], k, j = 0, c = 0
    cdef Py_ssize_t n = index.shape[0]
    cdef double v, m
    _need(mass.shape[0] == K and cell.shape[0] == n, "lengths differ")
    with nogil:
        for k in range(K):
            if j == n:
                break
            v = values[k]
            while c + 1 < M and u[c + 1] <= v:
                c += 1
            m = mass[k] * scale
            if m > 0 and v != u[c]:
                index[j] = k
                cell[j] = c
                j += 1
    _need(j == n, "fewer split columns than index holds")


cdef inline void _block_sums(
    Cursor* c, Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t cell, Py_ssize_t n,
    double* mass, double* cost,
) noexcept nogil:
    """Total mass and mass-weighted mean cost of one block of ``n`` columns.

    As ``np.add.reduceat``: the first term plus the pairwise sum of the rest.
    """
    cdef double a, b
    cdef double rest[2]
    c.k = lo
    c.end = hi
    c.pos = 0
    c.fill = 0
    c.cell = cell
    c.track = False
    c.constant = False
    _next(c, &a, &b)
    if n > 1:
        _pairwise(c, n - 1, rest)
        a = a + rest[0]
        b = b + rest[1]
    mass[0] = a
    cost[0] = b / a


def block_sums(
    const double[::1] values,           # IN  as in split_supply
    const double[::1] mass,             # IN
    const double[::1] u,                # IN
    double scale,                       # IN
    const Py_ssize_t[::1] lo,           # IN  first value index of each block
    const Py_ssize_t[::1] hi,           # IN  one past its last
    const Py_ssize_t[::1] cell,         # IN  its cell (every value of a block is in it)
    const Py_ssize_t[::1] count,        # IN  its number of split columns (>= 1)
    double[::1] block_mass,             # OUT total mass
    double[::1] block_cost,             # OUT mass-weighted mean cost
):
    """Total mass and mean cost of blocks of one label."""
    cdef Py_ssize_t B = lo.shape[0], b
    cdef Cursor c
    _need(mass.shape[0] == values.shape[0] and values.shape[0] > 0, "values and mass")
    _need(hi.shape[0] == B and cell.shape[0] == B and count.shape[0] == B
          and block_mass.shape[0] == B and block_cost.shape[0] == B,
          "block arrays must have one length")
    with nogil:
        _cursor(&c, values, mass, u, scale)
        for b in range(B):
            _block_sums(&c, lo[b], hi[b], cell[b], count[b], &block_mass[b],
                        &block_cost[b])


cdef inline int _side(double cost, double threshold, double tol) noexcept nogil:
    """``sign(d) * (|d| > tol)`` for ``d = cost - threshold``."""
    cdef double d = cost - threshold
    if not (d > tol or d < -tol):
        return 0
    return 1 if d > 0 else -1


def cut_blocks(
    const double[::1] values,           # IN  as in split_supply
    const double[::1] mass,             # IN
    const double[::1] u,                # IN
    double scale,                       # IN
    const Py_ssize_t[::1] lo,           # IN  blocks of one label, as in block_sums
    const Py_ssize_t[::1] hi,           # IN  one past the last value index of each block
    const Py_ssize_t[::1] cell,         # IN
    const Py_ssize_t[::1] count,        # IN
    const double[::1] threshold,        # IN  potential difference across each block's cell
    double tol,                         # IN  reduced costs within tol count as zero
    Py_ssize_t[:, ::1] pieces,          # OUT per torn block: its index and the first
                                        #     value index of its middle and right piece
                                        #     (middle = right when it has none), and the
                                        #     split column counts of its three pieces
):
    """Find the blocks whose columns do not all agree with the dual threshold.

    A column goes left (its upper bound) when its cost is below the
    threshold by more than ``tol``, right when above. Within one cell the
    cost ``2 v - u_k - u_{k+1}`` does not decrease with ``v`` (also in
    floating point: rounding is monotone), so a block's sides run
    left..., zero..., right...: it is torn iff its first column goes left
    and its last goes right, and it is cut where the side changes. Returns
    the number of torn blocks (rows of ``pieces`` used).
    """
    cdef Py_ssize_t B = lo.shape[0], b, k, t = 0, first, last, n_a, n_b
    cdef Py_ssize_t mid, right
    cdef double v, m, cu, cu1
    cdef int s
    _need(mass.shape[0] == values.shape[0], "values and mass")
    _need(hi.shape[0] == B and cell.shape[0] == B and count.shape[0] == B
          and threshold.shape[0] == B and pieces.shape[0] >= B and pieces.shape[1] == 6,
          "block arrays must have one length, pieces (B, 6)")
    with nogil:
        for b in range(B):
            if count[b] < 2:
                continue
            cu = u[cell[b]]
            cu1 = u[cell[b] + 1]
            first = lo[b]
            while not (mass[first] * scale > 0 and values[first] != cu):
                first += 1
            if _side(2.0 * values[first] - cu - cu1, threshold[b], tol) >= 0:
                continue
            last = hi[b] - 1
            while not (mass[last] * scale > 0 and values[last] != cu):
                last -= 1
            if _side(2.0 * values[last] - cu - cu1, threshold[b], tol) <= 0:
                continue
            # torn: the first column of side >= 0 and the first of side > 0
            mid = -1
            right = -1
            n_a = 0
            n_b = 0
            for k in range(first, last + 1):
                v = values[k]
                m = mass[k] * scale
                if not (m > 0 and v != cu):
                    continue
                s = _side(2.0 * v - cu - cu1, threshold[b], tol)
                if s < 0:
                    n_a += 1
                elif s == 0:
                    if mid < 0:
                        mid = k
                    n_b += 1
                else:
                    right = k
                    break
            if mid < 0:
                mid = right
            pieces[t, 0] = b
            pieces[t, 1] = mid
            pieces[t, 2] = right
            pieces[t, 3] = n_a
            pieces[t, 4] = n_b
            pieces[t, 5] = count[b] - n_a - n_b
            t += 1
    return t


def transport_bounds(
    const double[:, ::1] positives,
    const double[::1] weights,
    const double[::1] values,
    const double[::1] u,
    const double[::1] t,
    double total,
    double[::1] out,
):
    """Primal upper bound on ``dCE^U`` of each draw from calibrated masses ``t``.

    A draw (a row of ``positives``) has positive mass ``positives[b, i]``
    and negative mass ``weights[i] - positives[b, i]`` at ``values[i]``
    (ascending), ``total`` in all. ``t`` (sum 1) is repaired to the draw's
    totals ``A`` (negative) and ``C`` (positive): with ``a = sum (1 - u) t``
    and ``c = 1 - a``, if ``C >= c`` it is scaled by ``A / a`` and the
    missing positive mass is put at ``u = 1``, else scaled by ``C / c``
    with the missing negative mass at ``u = 0`` (``skcal.tester._dcebound``
    proves the plan feasible). ``out[b]`` is the cost of moving each
    label's mass onto its share of the repaired sinks, two 1-D W1
    distances ``int |F_y - T_y|`` summed in one merged pass over the values
    and the grid.
    """
    cdef Py_ssize_t B = positives.shape[0], K = positives.shape[1], M = u.shape[0]
    _need(weights.shape[0] == K and values.shape[0] == K, "weights, values")
    _need(t.shape[0] == M and out.shape[0] == B and M >= 2, "t, out")
    cdef Py_ssize_t b, i, j
    cdef double a = 0.0, c, C, A, s, e0, e1, F0, F1, x, last, cost, m
    for j in range(M):
        a += (1.0 - u[j]) * t[j]
    c = 1.0 - a
    with nogil:
        for b in range(B):
            C = 0.0
            for i in range(K):
                C += positives[b, i]
            C /= total
            A = 1.0 - C
            e0 = 0.0
            e1 = 0.0
            if C >= c:
                s = A / a if a > 0.0 else 0.0
                e1 = C - s * c
            else:
                s = C / c if c > 0.0 else 0.0
                e0 = A - s * a
            F0 = 0.0
            F1 = 0.0
            cost = 0.0
            last = 0.0
            i = 0
            j = 0
            while i < K or j < M:
                if i < K and (j == M or values[i] <= u[j]):
                    x = values[i]
                    cost += (fabs(F0) + fabs(F1)) * (x - last)
                    m = positives[b, i]
                    F1 += m / total
                    F0 += (weights[i] - m) / total
                    i += 1
                else:
                    x = u[j]
                    cost += (fabs(F0) + fabs(F1)) * (x - last)
                    F1 -= s * (u[j] * t[j])
                    F0 -= s * ((1.0 - u[j]) * t[j])
                    if j == 0:
                        F0 -= e0
                    if j == M - 1:
                        F1 -= e1
                    j += 1
                last = x
            out[b] = cost
