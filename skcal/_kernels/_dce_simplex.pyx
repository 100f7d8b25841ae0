# A primal simplex of its own for the flow program of the lower distance to
# calibration on a grid (skcal.metrics._ldtc._solve_on_grid).
#
# Rows: node (y, j) is row y * M + j. Columns: per label y and grid cell k one
# free flow f = net mass moved from node k + 1 to node k (c = y * (M - 1) + k),
# +1 at (y, k), -1 at (y, k + 1), with a convex piecewise linear cost: slope
# -gap_k below 0 (rightward along the grid edge), then one piece per split
# sample of the cell in increasing v (it goes left instead of right: unit cost
# 2 v - u_k - u_{k+1}, length its mass), then slope gap_k (leftward along the
# grid edge); and per grid point j a calibrated sink t_j (c = 2 (M - 1) + j),
# -(1 - u_j) at (0, j) and -u_j at (1, j), cost 0 above 0 and ``penalty`` per
# unit below (so that any basis is a start; at the optimum every sink is >= 0
# or the caller is told). A basis has 2M columns of at most two nonzeros: a
# spanning pseudo-forest of the two grid paths and their sink rungs, so
# B x = r and B' pi = c are solved by peeling leaves and closing at most one
# cycle per component, in O(M). A basic column lies on one piece of its cost,
# a nonbasic one at a breakpoint. The ratio test is long-step: it goes on
# through the breakpoints of the moving columns (a heap of the next one of
# each) while the objective still decreases along the direction.
#
# Nothing of it is trusted: the kernel returns the primal objective, the dual
# objective of its potentials (sum_i d_i min(psi[k] + v - u_k,
# psi[k+1] + u_{k+1} - v)) and the worst violation of the dual constraints
# and of t >= 0; skcal.metrics._ldtc checks them and falls back to HiGHS
# when they disagree or the iteration cap is hit.

from libc.math cimport fabs, frexp, ldexp
from cpython.mem cimport PyMem_RawFree, PyMem_RawMalloc

from ._memory cimport work_malloc


cdef inline void _need(bint ok, str what) except *:
    if not ok:
        raise ValueError(f"kernel argument shapes do not match: {what}")


cdef struct Net:
    Py_ssize_t M, E, NV
    Py_ssize_t* start      # NV: the split samples of flow c are [start[c], end[c])
    Py_ssize_t* end
    double* cum            # breakpoint q >= 1 of flow c: cum[start[c] + q - 1]
    double* sl             # slope of piece p in 1..m of flow c: sl[start[c] + p - 1]
    double* low            # NV: slope of the first piece (below breakpoint 0)
    double* high           # NV: slope of the last piece
    double* supply         # 2M
    Py_ssize_t* cnode      # 2 NV: nodes of a column (-1: none)
    double* ccoef          # 2 NV: their coefficients
    Py_ssize_t* inc        # 3 per node: incident columns (-1: none)
    # state
    double* x              # NV
    char* basic            # NV
    Py_ssize_t* pos        # NV: piece of a basic column, breakpoint of a nonbasic one
    # factorisation: leaves peeled in order, then the cycles
    Py_ssize_t* deg
    char* done
    char* used
    Py_ssize_t* stack
    Py_ssize_t* pnode
    Py_ssize_t* pcol
    Py_ssize_t* pother     # the column's other node (-1: none)
    double* pinv           # 1 / its coefficient at the peeled node
    double* pocoef         # its coefficient at the other node
    Py_ssize_t n_peel
    Py_ssize_t* nidx       # N: a node's place in the peel order, or -1 - its cycle
    Py_ssize_t* ynode
    Py_ssize_t* ycol
    Py_ssize_t* ystart     # cycles: [ystart[i], ystart[i + 1])
    double* yown           # coefficient of cycle column i at cycle node i
    double* ynext          # and at cycle node i + 1
    Py_ssize_t n_cyc
    double* pi
    double* r
    double* w


cdef inline double _mass0(
    const double[::1] mass0, const double[::1] mass1, Py_ssize_t i, bint totals,
) noexcept nogil:
    """Label 0's weight at value i: ``mass0[i]``, or with ``totals`` the total less label 1's."""
    if totals:
        return mass0[i] - mass1[i]
    return mass0[i]


cdef Py_ssize_t _count_split(
    const double[::1] mass0, const double[::1] mass1, bint totals, Py_ssize_t* count1,
) noexcept nogil:
    """The values of label 0 mass > 0 (returned) and of label 1 mass > 0 (``count1``).

    At least the slots the program's pieces take (a piece needs ``m /
    divisor > 0``, which a mass ``m > 0`` misses only when the quotient
    underflows; its slot then stays unused, between the two labels' runs).
    Counted without the division: the divisions of the three counting
    passes this replaces took about a tenth of the solve at 10**7 values.
    """
    cdef Py_ssize_t i, c0 = 0, c1 = 0, K = mass1.shape[0]
    for i in range(K):
        c0 += _mass0(mass0, mass1, i, totals) > 0.0
        c1 += mass1[i] > 0.0
    count1[0] = c1
    return c0


cdef inline double _bp(Net* g, Py_ssize_t e, Py_ssize_t q) noexcept nogil:
    if q == 0:
        return 0.0
    return g.cum[g.start[e] + q - 1]


cdef inline double _slope(Net* g, Py_ssize_t e, Py_ssize_t p) noexcept nogil:
    if p == 0:
        return g.low[e]
    if p == g.end[e] - g.start[e] + 1:
        return g.high[e]
    return g.sl[g.start[e] + p - 1]


cdef inline double _coef(Net* g, Py_ssize_t n, Py_ssize_t c) noexcept nogil:
    if g.cnode[2 * c] == n:
        return g.ccoef[2 * c]
    return g.ccoef[2 * c + 1]


cdef inline Py_ssize_t _other(Net* g, Py_ssize_t n, Py_ssize_t c) noexcept nogil:
    if g.cnode[2 * c] == n:
        return g.cnode[2 * c + 1]
    return g.cnode[2 * c]


cdef inline Py_ssize_t _unused_basic(Net* g, Py_ssize_t n) noexcept nogil:
    """A basic column at node ``n`` not yet used by the factorisation, or -1."""
    cdef Py_ssize_t s, c
    for s in range(3):
        c = g.inc[3 * n + s]
        if c >= 0 and g.basic[c] and not g.used[c]:
            return c
    return -1


cdef inline bint _close_cycle(
    Net* g, Py_ssize_t a, Py_ssize_t b, const double* r, double* lam
) noexcept nogil:
    """The value on the closing column of the cycle ``a .. b - 1`` for the
    right-hand side ``r`` (into ``lam``); False where the cycle is singular."""
    cdef double alpha = 0.0, beta = 1.0, ca = g.ynext[b - 1], den
    cdef Py_ssize_t n
    for n in range(a, b):
        den = g.yown[n]
        alpha = (r[g.ynode[n]] - ca * alpha) / den
        beta = -ca * beta / den
        ca = g.ynext[n]
    den = 1.0 - beta
    if den == 0.0:
        return False
    lam[0] = alpha / den
    return True


cdef bint _factor(Net* g) noexcept nogil:
    """Peel order and cycles of the basis; False if it is singular."""
    cdef Py_ssize_t N = 2 * g.M, n, s, c, n2, top = 0, found, L, first, cur, nxt
    for n in range(N):
        g.deg[n] = 0
        g.done[n] = 0
        for s in range(3):
            c = g.inc[3 * n + s]
            if c >= 0 and g.basic[c]:
                g.deg[n] += 1
    for c in range(g.NV):
        g.used[c] = 0
    for n in range(N):
        if g.deg[n] == 1:
            g.stack[top] = n
            top += 1
    g.n_peel = 0
    while top > 0:
        top -= 1
        n = g.stack[top]
        if g.done[n]:
            continue
        found = _unused_basic(g, n)
        if found < 0:
            return False
        g.used[found] = 1
        g.done[n] = 1
        n2 = _other(g, n, found)
        g.pnode[g.n_peel] = n
        g.pcol[g.n_peel] = found
        g.pother[g.n_peel] = n2
        g.pinv[g.n_peel] = 1.0 / _coef(g, n, found)
        g.pocoef[g.n_peel] = _coef(g, n2, found) if n2 >= 0 else 0.0
        g.nidx[n] = g.n_peel
        g.n_peel += 1
        if n2 >= 0:
            g.deg[n2] -= 1
            if g.deg[n2] == 1:
                g.stack[top] = n2
                top += 1
            elif g.deg[n2] == 0:
                return False
    # what is left: cycles, every node with two unused basic columns
    g.n_cyc = 0
    L = 0
    for first in range(N):
        if g.done[first]:
            continue
        if g.deg[first] != 2:
            return False
        g.ystart[g.n_cyc] = L
        g.n_cyc += 1
        cur = first
        while True:
            found = _unused_basic(g, cur)
            if found < 0:
                return False
            g.used[found] = 1
            g.done[cur] = 1
            g.nidx[cur] = -g.n_cyc                  # cycle n_cyc - 1
            nxt = _other(g, cur, found)
            if nxt < 0:
                return False
            g.ynode[L] = cur
            g.ycol[L] = found
            g.yown[L] = _coef(g, cur, found)
            g.ynext[L] = _coef(g, nxt, found)
            L += 1
            if nxt == first:
                break
            if g.done[nxt] or g.deg[nxt] != 2:
                return False
            cur = nxt
    g.ystart[g.n_cyc] = L
    return L + g.n_peel == N


cdef bint _solve_primal(Net* g, double* r, double* w) noexcept nogil:
    """``B w = r`` (``r`` is overwritten); ``w`` indexed by column."""
    cdef Py_ssize_t i, n, n2, a, b
    cdef double alpha, ca, lam
    cdef double v
    for i in range(g.n_peel):
        v = r[g.pnode[i]] * g.pinv[i]
        w[g.pcol[i]] = v
        n2 = g.pother[i]
        if n2 >= 0:
            r[n2] -= g.pocoef[i] * v
    for i in range(g.n_cyc):
        a = g.ystart[i]
        b = g.ystart[i + 1]
        # w[c_{L-1}] = lam; node a + j joins c_{j-1} (c_{-1} = c_{L-1}) and c_j
        if not _close_cycle(g, a, b, r, &lam):
            return False
        alpha = lam
        ca = g.ynext[b - 1]
        for n in range(a, b):
            alpha = (r[g.ynode[n]] - ca * alpha) / g.yown[n]
            w[g.ycol[n]] = alpha
            ca = g.ynext[n]
        w[g.ycol[b - 1]] = lam
    return True


cdef bint _solve_column(Net* g, Py_ssize_t q, Py_ssize_t* moving,
                        Py_ssize_t* n_move) noexcept nogil:
    """``B w = a_q`` for one column ``q``: only the columns on the paths from
    its nodes up to their roots or cycles move (listed in ``moving``).

    ``g.r`` is 0 on entry and on exit. Nodes are taken in peel order, so a
    node is solved after every path below it has reached it.
    """
    cdef Py_ssize_t na = g.cnode[2 * q], nb = g.cnode[2 * q + 1], n, i, c, p
    cdef Py_ssize_t cyc_a = 0, cyc_b = 0, a, b, j, cy
    cdef double v, alpha, ca, lam
    n_move[0] = 0
    if na >= 0:
        g.r[na] = g.ccoef[2 * q]
    if nb >= 0:
        g.r[nb] += g.ccoef[2 * q + 1]
    # walk up: na, nb are the frontier (-1: none, or ended in a cycle)
    while True:
        if na >= 0 and g.nidx[na] < 0:
            if cyc_a == 0:
                cyc_a = -g.nidx[na]
            else:
                cyc_b = -g.nidx[na]
            na = -1
        if nb >= 0 and g.nidx[nb] < 0:
            if cyc_a == 0:
                cyc_a = -g.nidx[nb]
            else:
                cyc_b = -g.nidx[nb]
            nb = -1
        if na < 0 and nb < 0:
            break
        if na < 0 or (nb >= 0 and g.nidx[nb] < g.nidx[na]):
            n = nb
            nb = na
            na = n
        n = na                          # the lower of the two in peel order
        if nb == n:
            nb = -1
        i = g.nidx[n]
        c = g.pcol[i]
        v = g.r[n] * g.pinv[i]
        g.r[n] = 0.0
        g.w[c] = v
        moving[n_move[0]] = c
        n_move[0] += 1
        p = g.pother[i]
        if p >= 0:
            g.r[p] -= g.pocoef[i] * v
        na = p
    # the cycles reached (at most two: one per component)
    for j in range(2):
        cy = cyc_a if j == 0 else cyc_b
        if cy == 0 or (j == 1 and cyc_b == cyc_a):
            continue
        a = g.ystart[cy - 1]
        b = g.ystart[cy]
        if not _close_cycle(g, a, b, g.r, &lam):
            return False
        alpha = lam
        ca = g.ynext[b - 1]
        for n in range(a, b):
            alpha = (g.r[g.ynode[n]] - ca * alpha) / g.yown[n]
            g.r[g.ynode[n]] = 0.0
            g.w[g.ycol[n]] = alpha
            moving[n_move[0]] = g.ycol[n]
            n_move[0] += 1
            ca = g.ynext[n]
        g.w[g.ycol[b - 1]] = lam
    return True


cdef inline double _column_cost(Net* g, Py_ssize_t c) noexcept nogil:
    return _slope(g, c, g.pos[c])


cdef bint _solve_dual(Net* g, double* pi) noexcept nogil:
    """``B' pi = c_B``: reduced cost 0 on every basic column."""
    cdef Py_ssize_t i, j, a, b, L, c, n2
    cdef double alpha, beta, lam, den, ca, cb
    for i in range(g.n_cyc):
        a = g.ystart[i]
        b = g.ystart[i + 1]
        L = b - a
        # pi[node a] = lam; column a + j joins nodes a + j and a + j + 1
        alpha = 0.0
        beta = 1.0
        for j in range(L - 1):
            c = g.ycol[a + j]
            ca = g.yown[a + j]
            cb = g.ynext[a + j]
            alpha = (_column_cost(g, c) - ca * alpha) / cb
            beta = -ca * beta / cb
        c = g.ycol[b - 1]
        ca = g.yown[b - 1]
        cb = g.ynext[b - 1]
        den = ca * beta + cb
        if den == 0.0:
            return False
        lam = (_column_cost(g, c) - ca * alpha) / den
        pi[g.ynode[a]] = lam
        for j in range(L - 1):
            c = g.ycol[a + j]
            pi[g.ynode[a + j + 1]] = (
                _column_cost(g, c) - g.yown[a + j] * pi[g.ynode[a + j]]
            ) / g.ynext[a + j]
    for i in range(g.n_peel - 1, -1, -1):
        n2 = g.pother[i]
        alpha = _column_cost(g, g.pcol[i])
        if n2 >= 0:
            alpha -= g.pocoef[i] * pi[n2]
        pi[g.pnode[i]] = alpha * g.pinv[i]
    return True


cdef bint _primal_values(Net* g) noexcept nogil:
    """Basic values from the nonbasic ones (nonbasic sinks are 0); leaves
    ``g.r`` at 0."""
    cdef Py_ssize_t n, c
    cdef bint ok
    for n in range(2 * g.M):
        g.r[n] = -g.supply[n]
    for c in range(g.NV):
        if not g.basic[c]:
            g.x[c] = _bp(g, c, g.pos[c])
            if g.x[c] != 0.0:                   # (a nonbasic sink is at 0)
                g.r[g.cnode[2 * c]] -= g.x[c]
                g.r[g.cnode[2 * c + 1]] += g.x[c]
    ok = _solve_primal(g, g.r, g.x)
    for n in range(2 * g.M):
        g.r[n] = 0.0
    return ok


# the ratio test's heap of events (step, column)
cdef inline void _push(double* key, Py_ssize_t* col, Py_ssize_t* size,
                       double k, Py_ssize_t c) noexcept nogil:
    cdef Py_ssize_t i = size[0], parent
    size[0] += 1
    while i > 0:
        parent = (i - 1) // 2
        if key[parent] < k or (key[parent] == k and col[parent] < c):
            break
        key[i] = key[parent]
        col[i] = col[parent]
        i = parent
    key[i] = k
    col[i] = c


cdef inline void _pop(double* key, Py_ssize_t* col, Py_ssize_t* size) noexcept nogil:
    cdef Py_ssize_t i = 0, child, n
    cdef double k
    cdef Py_ssize_t c
    size[0] -= 1
    n = size[0]
    if n == 0:
        return
    k = key[n]
    c = col[n]
    while True:
        child = 2 * i + 1
        if child >= n:
            break
        if child + 1 < n and (key[child + 1] < key[child] or (
                key[child + 1] == key[child] and col[child + 1] < col[child])):
            child += 1
        if key[child] > k or (key[child] == k and col[child] > c):
            break
        key[i] = key[child]
        col[i] = col[child]
        i = child
    key[i] = k
    col[i] = c


cdef inline bint _next_event(Net* g, Py_ssize_t c, double rate, Py_ssize_t p,
                             double x0, double* step, double* jump) noexcept nogil:
    """The next breakpoint of column ``c`` (on piece ``p``, from ``x0``) along ``rate``."""
    cdef Py_ssize_t m = g.end[c] - g.start[c]
    if rate > 0:
        if p > m:
            return False
        step[0] = (_bp(g, c, p) - x0) / rate
        jump[0] = rate * (_slope(g, c, p + 1) - _slope(g, c, p))
    else:
        if p < 1:
            return False
        step[0] = (_bp(g, c, p - 1) - x0) / rate
        jump[0] = -rate * (_slope(g, c, p) - _slope(g, c, p - 1))
    if step[0] < 0:
        step[0] = 0.0
    return True


cdef inline void* _take(
    void** held, Py_ssize_t* n_held, size_t size, bint large=False
) noexcept nogil:
    """``PyMem_RawMalloc`` (so that tracemalloc sees the solver's memory),
    remembered in ``held`` (freed together); ``large``: ``work_malloc``."""
    cdef void* p = work_malloc(size) if large else PyMem_RawMalloc(size)
    held[n_held[0]] = p
    n_held[0] += 1
    return p


def simplex(
    const double[::1] values,       # IN  distinct predictions, ascending, in [0, 1]
    const double[::1] mass0,        # IN  weight of label 0 per value
    const double[::1] mass1,        # IN  weight of label 1 per value
    const double[::1] u,            # IN  grid, strictly increasing from 0 to 1
    double divisor,                 # IN  every mass is divided by it
    Py_ssize_t max_iter,            # IN  iteration cap
    double tol,                     # IN  reduced costs below -tol enter
    double penalty,                 # IN  cost per unit of a sink below 0
    double[::1] potentials,         # OUT psi (2M): minus the node duals
    double[::1] out,                # OUT see below (6 entries)
    bint totals=False,              # IN  mass0 holds each value's total weight
):
    """Solve the flow program; returns 0 (optimal), 1 (cap hit) or 2 (failed).

    With ``totals``, label 0's weight at value i is ``mass0[i] - mass1[i]``
    (the grouped statistic's weights and positives, with no array of their
    differences: 8 bytes per value less).

    ``out``: the primal cost of the split samples and grid edges, the
    constant ``sum d (u_{k+1} - v)`` (their sum is the optimal cost in the
    divided masses' scale: the value times their total), the dual objective
    of ``potentials`` (equal to it at an optimum), the largest violation of
    ``(1 - u_j) psi[0, j] + u_j psi[1, j] <= 0``, of ``|psi[y, j+1] -
    psi[y, j]| <= u_{j+1} - u_j`` and of ``t_j >= 0``, the number of
    iterations and of them bound flips (no basis change).
    """
    cdef Py_ssize_t K = values.shape[0], M = u.shape[0]
    _need(mass0.shape[0] == K and mass1.shape[0] == K and K > 0,
          "values and masses must have one, positive length")
    _need(M >= 2 and potentials.shape[0] == 2 * M and out.shape[0] == 6,
          "potentials need 2 entries per grid point, out 6")
    cdef Net g
    cdef Py_ssize_t E = 2 * (M - 1), NV = 3 * M - 2, N = 2 * M
    cdef Py_ssize_t i, n_split = 0, status = 2, count0, count1
    cdef double* key = NULL
    cdef Py_ssize_t* hcol = NULL
    cdef double* rates = NULL
    cdef Py_ssize_t* hpiece = NULL
    cdef Py_ssize_t* moving = NULL
    cdef void* held[48]
    cdef Py_ssize_t n_held = 0
    with nogil:
        count0 = _count_split(mass0, mass1, totals, &count1)
        n_split = count0 + count1       # slots for the split samples
        g.M = M
        g.E = E
        g.NV = NV
        g.start = <Py_ssize_t*> _take(held, &n_held, NV * sizeof(Py_ssize_t))
        g.end = <Py_ssize_t*> _take(held, &n_held, NV * sizeof(Py_ssize_t))
        # (the pieces: the one large block, in huge pages where there are)
        g.cum = <double*> _take(held, &n_held, (n_split + 2) * sizeof(double), True)
        g.sl = <double*> _take(held, &n_held, (n_split + 2) * sizeof(double), True)
        g.low = <double*> _take(held, &n_held, NV * sizeof(double))
        g.high = <double*> _take(held, &n_held, NV * sizeof(double))
        g.supply = <double*> _take(held, &n_held, N * sizeof(double))
        g.cnode = <Py_ssize_t*> _take(held, &n_held, 2 * NV * sizeof(Py_ssize_t))
        g.ccoef = <double*> _take(held, &n_held, 2 * NV * sizeof(double))
        g.inc = <Py_ssize_t*> _take(held, &n_held, 3 * N * sizeof(Py_ssize_t))
        g.x = <double*> _take(held, &n_held, NV * sizeof(double))
        g.basic = <char*> _take(held, &n_held, NV)
        g.pos = <Py_ssize_t*> _take(held, &n_held, NV * sizeof(Py_ssize_t))
        g.deg = <Py_ssize_t*> _take(held, &n_held, N * sizeof(Py_ssize_t))
        g.done = <char*> _take(held, &n_held, N)
        g.used = <char*> _take(held, &n_held, NV)
        g.stack = <Py_ssize_t*> _take(held, &n_held, (N + NV) * sizeof(Py_ssize_t))
        g.pnode = <Py_ssize_t*> _take(held, &n_held, N * sizeof(Py_ssize_t))
        g.pcol = <Py_ssize_t*> _take(held, &n_held, N * sizeof(Py_ssize_t))
        g.pother = <Py_ssize_t*> _take(held, &n_held, N * sizeof(Py_ssize_t))
        g.nidx = <Py_ssize_t*> _take(held, &n_held, N * sizeof(Py_ssize_t))
        g.pinv = <double*> _take(held, &n_held, N * sizeof(double))
        g.pocoef = <double*> _take(held, &n_held, N * sizeof(double))
        g.ynode = <Py_ssize_t*> _take(held, &n_held, N * sizeof(Py_ssize_t))
        g.ycol = <Py_ssize_t*> _take(held, &n_held, N * sizeof(Py_ssize_t))
        g.ystart = <Py_ssize_t*> _take(held, &n_held, (N + 1) * sizeof(Py_ssize_t))
        g.yown = <double*> _take(held, &n_held, N * sizeof(double))
        g.ynext = <double*> _take(held, &n_held, N * sizeof(double))
        g.pi = <double*> _take(held, &n_held, N * sizeof(double))
        g.r = <double*> _take(held, &n_held, N * sizeof(double))
        g.w = <double*> _take(held, &n_held, NV * sizeof(double))
        # (a direction moves at most every basic column and the entering one)
        key = <double*> _take(held, &n_held, (NV + 1) * sizeof(double))
        hcol = <Py_ssize_t*> _take(held, &n_held, (NV + 1) * sizeof(Py_ssize_t))
        rates = <double*> _take(held, &n_held, NV * sizeof(double))
        hpiece = <Py_ssize_t*> _take(held, &n_held, NV * sizeof(Py_ssize_t))
        moving = <Py_ssize_t*> _take(held, &n_held, (NV + 1) * sizeof(Py_ssize_t))
        status = 0
        for i in range(n_held):
            if held[i] == NULL:
                status = 3
        if status == 0:
            status = _run(&g, values, mass0, mass1, u, divisor, max_iter, tol,
                          penalty, potentials, out, key, hcol, rates, hpiece, moving,
                          totals, count0)
        for i in range(n_held):
            PyMem_RawFree(held[i])
    if status == 3:
        raise MemoryError()
    return status


cdef Py_ssize_t _run(
    Net* g, const double[::1] values, const double[::1] mass0,
    const double[::1] mass1, const double[::1] u, double divisor,
    Py_ssize_t max_iter, double tol, double penalty, double[::1] potentials,
    double[::1] out, double* key, Py_ssize_t* hcol, double* rates,
    Py_ssize_t* hpiece, Py_ssize_t* moving, bint totals, Py_ssize_t count0,
) noexcept nogil:
    cdef Py_ssize_t K = values.shape[0], M = g.M, E = g.E, NV = g.NV, N = 2 * M
    cdef Py_ssize_t i, j, k, y, c, n, s, s0, s1, lo, hi, mid, m, q = 0
    cdef Py_ssize_t it = 0, flips = 0, entering, blocking, size, n_move
    cdef Py_ssize_t n_change = 0, switch, stalled = 0
    cdef bint bland, stale = True
    cdef double v, up, cost, d0, d1, acc0, acc1, constant = 0.0
    cdef double rc, best, sigma, diff, rate, deriv, step, jump, theta
    cdef double primal, dual, worst, a, b, a0, a1, frac, inverse
    cdef int exponent
    cdef bint exact_inverse
    # A power of two divides as its reciprocal (exact) multiplies: the same
    # quotients, without a division per mass (one row per value and unit
    # weights give divisor 1).
    frac = frexp(divisor, &exponent)
    exact_inverse = frac == 0.5 and exponent > -1021   # (its reciprocal finite)
    inverse = ldexp(1.0, 1 - exponent)
    # The program: supplies, the constant and the breakpoints of every flow,
    # in one pass over the values (label 0's split samples from slot 0, label
    # 1's from two slots after the last label 0 can take; each value's slots
    # written, kept only where it has mass: no branch on the labels).
    for n in range(N):
        g.supply[n] = 0.0
    s0 = 0
    s1 = 1 + count0                     # (a spare slot: label 0 writes one past)
    k = 0
    g.start[0] = s0
    g.start[M - 1] = s1
    acc0 = acc1 = 0.0
    for i in range(K):
        v = values[i]
        while k + 1 < M and u[k + 1] <= v:
            g.end[k] = s0               # close cell k: its split mass is
            g.end[M - 1 + k] = s1       # supplied at u[k + 1]
            g.supply[k + 1] += acc0
            g.supply[M + k + 1] += acc1
            k += 1
            if k < M - 1:
                g.start[k] = s0
                g.start[M - 1 + k] = s1
            acc0 = acc1 = 0.0
        if exact_inverse:
            d0 = _mass0(mass0, mass1, i, totals) * inverse
            d1 = mass1[i] * inverse
        else:
            d0 = _mass0(mass0, mass1, i, totals) / divisor
            d1 = mass1[i] / divisor
        d0 = 0.5 * (d0 + fabs(d0))      # max(d, 0), exact, without a branch
        d1 = 0.5 * (d1 + fabs(d1))
        if v == u[k]:                   # on a grid point: supplied there
            g.supply[k] += d0
            g.supply[M + k] += d1
            continue
        up = u[k + 1]
        cost = 2.0 * v - u[k] - up
        constant += (d0 + d1) * (up - v)
        acc0 += d0
        acc1 += d1
        g.cum[s0] = acc0
        g.sl[s0] = cost
        g.cum[s1] = acc1
        g.sl[s1] = cost
        s0 += d0 > 0
        s1 += d1 > 0
    while k < M - 1:
        g.end[k] = s0
        g.end[M - 1 + k] = s1
        g.supply[k + 1] += acc0
        g.supply[M + k + 1] += acc1
        acc0 = acc1 = 0.0
        k += 1
        if k < M - 1:
            g.start[k] = s0
            g.start[M - 1 + k] = s1
    for c in range(NV):
        if c < E:
            k = c % (M - 1)
            g.low[c] = -(u[k + 1] - u[k])
            g.high[c] = u[k + 1] - u[k]
        else:
            g.start[c] = 0              # a sink: one breakpoint, at 0
            g.end[c] = 0
            g.low[c] = -penalty
            g.high[c] = 0.0
    # columns and incidence
    for n in range(3 * N):
        g.inc[n] = -1
    for c in range(E):
        y = c // (M - 1)
        k = c % (M - 1)
        g.cnode[2 * c] = y * M + k
        g.ccoef[2 * c] = 1.0
        g.cnode[2 * c + 1] = y * M + k + 1
        g.ccoef[2 * c + 1] = -1.0
        g.inc[3 * (y * M + k) + 1] = c          # slot 1: the flow to the right
        g.inc[3 * (y * M + k + 1)] = c          # slot 0: the flow to the left
    for j in range(M):
        c = E + j
        g.cnode[2 * c] = -1
        g.cnode[2 * c + 1] = -1
        g.ccoef[2 * c] = 0.0
        g.ccoef[2 * c + 1] = 0.0
        s = 0
        if 1.0 - u[j] != 0.0:
            g.cnode[2 * c] = j
            g.ccoef[2 * c] = -(1.0 - u[j])
            g.inc[3 * j + 2] = c
            s = 1
        if u[j] != 0.0:
            g.cnode[2 * c + s] = M + j
            g.ccoef[2 * c + s] = -u[j]
            g.inc[3 * (M + j) + 2] = c
    # The start (the shape of the optimal bases seen): every sink basic and
    # one flow per cell, of label 1 below 1/2 (where positives are scarce)
    # and of label 0 above, both in the cell where they switch; nonbasic
    # flows where their cell's samples below its midpoint go left (negative
    # unit cost). A sink may start below 0: the penalty prices it back.
    if M == 2:
        switch = 1
    else:
        switch = 0
        while switch < M - 1 and u[switch] + u[switch + 1] < 1.0:
            switch += 1
        switch = min(max(switch, 1), M - 2)
    for c in range(NV):
        if c < M - 1:
            g.basic[c] = c >= switch - 1
        elif c < E:
            g.basic[c] = c - (M - 1) < switch
        else:
            g.basic[c] = 1
        g.pos[c] = 0
        if not g.basic[c]:
            lo = g.start[c]
            while lo < g.end[c] and g.sl[lo] < 0:
                lo += 1
            g.pos[c] = lo - g.start[c]
    if not _factor(g):
        return 2
    if not _primal_values(g):
        return 2
    for c in range(NV):
        if not g.basic[c]:
            continue
        # the piece holding the value: the first p with x <= breakpoint p
        m = g.end[c] - g.start[c]
        lo = 0
        hi = m + 1
        while lo < hi:
            mid = (lo + hi) // 2
            if g.x[c] <= _bp(g, c, mid):
                hi = mid
            else:
                lo = mid + 1
        g.pos[c] = lo
        if c >= E and g.x[c] >= 0.0:
            g.pos[c] = 1
    status = 1
    while True:
        # (the duals move only with the basis or a basic column's piece)
        if stale and not _solve_dual(g, g.pi):
            return 2
        stale = False
        # pricing (Dantzig): the most negative reduced cost, either way; after
        # a run of steps of length 0, Bland's rule (the first column that
        # improves, ties in the ratio test to the lowest column) until a
        # step moves, against cycling
        bland = stalled > 2 * M
        entering = -1
        best = -tol
        sigma = 0.0
        for c in range(NV):
            if g.basic[c]:
                continue
            if c < E:
                diff = g.pi[g.cnode[2 * c]] - g.pi[g.cnode[2 * c + 1]]
            else:
                j = c - E
                diff = -(1.0 - u[j]) * g.pi[j] - u[j] * g.pi[M + j]
            rc = _slope(g, c, g.pos[c] + 1) - diff      # increasing
            if rc < best:
                best = rc
                entering = c
                sigma = 1.0
            rc = diff - _slope(g, c, g.pos[c])          # decreasing
            if rc < best:
                best = rc
                entering = c
                sigma = -1.0
            if bland and entering >= 0:
                break
        if entering < 0:
            status = 0
            break
        if it >= max_iter:
            break
        it += 1
        # direction: the basic columns move by -sigma B^-1 a_q per unit step
        if not _solve_column(g, entering, moving, &n_move):
            return 2
        moving[n_move] = entering
        n_move += 1
        g.w[entering] = -1.0                            # rate sigma
        # long-step ratio test over the moving columns
        size = 0
        deriv = best
        for i in range(n_move):
            c = moving[i]
            rate = -sigma * g.w[c]
            rates[c] = rate
            hpiece[c] = g.pos[c]
            if c == entering and sigma > 0:
                hpiece[c] = g.pos[c] + 1
            if rate != 0.0 and _next_event(g, c, rate, hpiece[c], g.x[c], &step, &jump):
                _push(key, hcol, &size, step, c)
        blocking = -1
        theta = 0.0
        while size > 0 and blocking < 0:
            c = hcol[0]
            theta = key[0]
            _pop(key, hcol, &size)
            _next_event(g, c, rates[c], hpiece[c], g.x[c], &step, &jump)
            # the column's events in a run while they come before the heap's
            # next one in the heap's order (step, then column): the events of
            # a heap walk in the same order, without a push and a pop each
            # (a long step passes hundreds of breakpoints at 10**5 values)
            while True:
                deriv += jump
                if deriv >= 0.0:
                    blocking = c
                    break
                hpiece[c] += 1 if rates[c] > 0 else -1
                stale |= c != entering
                if not _next_event(g, c, rates[c], hpiece[c], g.x[c], &step, &jump):
                    break
                if size > 0 and (key[0] < step or (key[0] == step and hcol[0] < c)):
                    _push(key, hcol, &size, step, c)
                    break
                theta = step
        if blocking < 0:
            return 2                                    # unbounded: cannot be
        if theta > 0:
            stalled = 0
        else:
            stalled += 1
        # every moving column advances by the step; the blocking one rests
        # at the breakpoint it reached
        for i in range(n_move):
            c = moving[i]
            g.pos[c] = hpiece[c]
            g.x[c] += rates[c] * theta
        q = hpiece[blocking] if rates[blocking] > 0 else hpiece[blocking] - 1
        g.x[blocking] = _bp(g, blocking, q)
        if blocking == entering:                        # a bound flip
            g.pos[entering] = q
            flips += 1
        else:
            g.basic[entering] = 1
            g.basic[blocking] = 0
            g.pos[blocking] = q
            if not _factor(g):
                return 2
            n_change += 1
            stale = True
            if n_change % 16 == 0:                      # against drift
                if not _primal_values(g):
                    return 2
    # The certificate, on basic values recomputed from the nonbasic ones.
    if not _primal_values(g):
        return 2
    for n in range(N):
        potentials[n] = -g.pi[n]
    worst = 0.0
    for c in range(E, NV):                              # sinks >= 0
        if -g.x[c] > worst:
            worst = -g.x[c]
    for j in range(M):
        a = (1.0 - u[j]) * potentials[j] + u[j] * potentials[M + j]
        if a > worst:
            worst = a
    for y in range(2):
        for k in range(M - 1):
            a = potentials[y * M + k + 1] - potentials[y * M + k]
            a = (a if a > 0 else -a) - (u[k + 1] - u[k])
            if a > worst:
                worst = a
    # The primal cost per flow: a flow on piece p sends its first p - 1
    # samples left and part of the p-th, one at breakpoint q its first q
    # (each sample's mass the difference of its breakpoints).
    primal = 0.0
    for c in range(E):
        m = g.end[c] - g.start[c]
        q = g.pos[c]
        a = 0.0                         # the part of sample q sent left
        if g.basic[c]:
            if q == 0:
                primal += g.low[c] * g.x[c]
            elif q == m + 1:
                primal += g.high[c] * (g.x[c] - _bp(g, c, m))
                q = m
            else:
                q -= 1
                a = g.x[c] - _bp(g, c, q)
        b = 0.0
        for s in range(g.start[c], g.start[c] + q):
            primal += (g.cum[s] - b) * g.sl[s]
            b = g.cum[s]
        if a != 0.0:
            primal += a * g.sl[g.start[c] + q]
    # the dual objective, by the values: label 0 and 1 summed apart, in the
    # masses' own scale and divided once at the end (a certificate, checked
    # to a tolerance: two divisions a value were a sixth of the solve at
    # 10**7 values)
    a0 = a1 = 0.0
    k = 0
    for i in range(K):
        v = values[i]
        while k + 1 < M and u[k + 1] <= v:
            k += 1
        d0 = _mass0(mass0, mass1, i, totals)
        d1 = mass1[i]
        d0 = 0.5 * (d0 + fabs(d0))
        d1 = 0.5 * (d1 + fabs(d1))
        if v == u[k]:
            a0 += d0 * potentials[k]
            a1 += d1 * potentials[M + k]
            continue
        up = u[k + 1]
        a = potentials[k] + (v - u[k])
        b = potentials[k + 1] + (up - v)
        a0 += d0 * (a if a < b else b)
        a = potentials[M + k] + (v - u[k])
        b = potentials[M + k + 1] + (up - v)
        a1 += d1 * (a if a < b else b)
    dual = (a0 + a1) / divisor
    out[0] = primal
    out[1] = constant
    out[2] = dual
    out[3] = worst
    out[4] = it
    out[5] = flips
    return status
