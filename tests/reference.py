"""Slow, obviously-correct implementations used only by the tests.

Each function is written straight from a definition in the papers, with no
attempt at speed, so that the fast paths in skcal can be checked against it.
All take already-validated arrays ``y`` (0/1 floats), ``p`` and ``w``.
"""

import math

import numpy as np


def residuals(y, p, w):
    """b_i = w_i (y_i - p_i) / sum(w)."""
    return w * (y - p) / w.sum()


# --- cutoff calibration error ------------------------------------------------


def cutoff_bruteforce(y, p, w):
    """sup over all intervals [a, b] with end points at data values (000 Def. 2.5)."""
    b = residuals(y, p, w)
    pts = np.unique(p)
    best = 0.0
    for i, a in enumerate(pts):
        for hi in pts[i:]:
            mask = (p >= a) & (p <= hi)
            best = max(best, abs(b[mask].sum()))
    return best


# --- smooth calibration error (smCE) -------------------------------------------


def smce_linprog(y, p, w):
    """max sum_i b_i x_i over |x_i| <= 1, |x_i - x_j| <= |p_i - p_j| (002 eq. (3)).

    One variable per row, rows sorted by p, only adjacent pairs constrained
    (002 Lemma 2); tied rows get |x_i - x_j| <= 0, i.e. one shared value.
    Solved by HiGHS.
    """
    from scipy.optimize import linprog

    order = np.argsort(p, kind="stable")
    ps, b = p[order], residuals(y, p, w)[order]
    n = ps.shape[0]
    A = np.zeros((2 * (n - 1), n))
    for i in range(n - 1):
        A[2 * i, [i, i + 1]] = [-1.0, 1.0]
        A[2 * i + 1, [i, i + 1]] = [1.0, -1.0]
    gap = np.repeat(np.diff(ps), 2)
    # HiGHS's tolerances are absolute (about 1e-7): scale the objective to
    # unit size so residuals that small are not lost in them
    scale = np.abs(b).max()
    if scale == 0:
        return 0.0
    res = linprog(
        -b / scale,
        A_ub=A if n > 1 else None,
        b_ub=gap if n > 1 else None,
        bounds=[(-1.0, 1.0)] * n,
        method="highs",
    )
    assert res.status == 0, res.message
    return -res.fun * scale


# --- soft-binned calibration decision loss (SCDL) and binned ECE ---------------


def scdl_m_reference(y, p, w, m):
    """SCDL_m straight from 000 Definition 1.1, soft bins as in Lemma 3.1.

    The n x (m+1) matrix of triangular weights W_ij = (1 - |m p_i - j|)_+
    gives pi_j = E[w_j(p)] and pi_j q_j = E[w_j(p) y]; every i = 0..m is then
    evaluated with the products pi_j q_j, pi_j (an empty bin adds 0).
    """
    j = np.arange(m + 1)
    weights = np.maximum(0.0, 1.0 - np.abs(m * p[:, None] - j[None, :]))
    wn = w / w.sum()
    pi = wn @ weights
    piq = (wn * y) @ weights
    nz = np.flatnonzero(pi)  # bins with pi_j = 0 contribute nothing
    i = np.arange(m + 1)[:, None]
    left = (nz[None, :] <= i) * np.maximum(piq[nz] - (i + 1) / m * pi[nz], 0.0)
    right = (nz[None, :] > i) * np.maximum(i / m * pi[nz] - piq[nz], 0.0)
    return float((left + right).sum(axis=1).max())


def scdl_reference(y, p, w, max_level=10):
    """inf over m = 2, 4, ..., 2**max_level of max(SCDL_m, 1/m) (000 Def. 1.1).

    Equal to SCDL when the minimising m is below 2**max_level (000 Lemma 3.3:
    when m* < 2**max_level).
    """
    return min(
        max(scdl_m_reference(y, p, w, 2**k), 2.0**-k) for k in range(1, max_level + 1)
    )


def binned_ece_reference(y, p, w, n_bins=15, strategy="uniform", norm="l1"):
    """Binned ECE by an explicit loop over the bins (DESIGN.md section 3).

    Uniform bins are [k/B, (k+1)/B) with the doubles k/B as edges, the last
    one closed at 1. Quantile bins: a distinct prediction whose preceding
    weight (of all smaller predictions) is a fraction c of the total goes to
    bin min(floor(B c), B - 1), so ties are never split.
    """
    W = w.sum()
    b = residuals(y, p, w)
    if strategy == "uniform":
        edges = np.arange(n_bins + 1) / n_bins
        masks = [
            (p >= edges[k]) & ((p < edges[k + 1]) if k < n_bins - 1 else (p <= 1.0))
            for k in range(n_bins)
        ]
    else:
        bin_of = {}
        for v in np.unique(p):
            before = w[p < v].sum()
            bin_of[v] = min(int(np.floor(n_bins * before / W)), n_bins - 1)
        row_bin = np.array([bin_of[v] for v in p])
        masks = [row_bin == k for k in range(n_bins)]
    total, squares, worst = 0.0, 0.0, 0.0
    for mask in masks:
        mass = w[mask].sum() / W
        if mass == 0:
            continue
        bias = b[mask].sum()
        total += abs(bias)
        squares += mass * (bias / mass) ** 2
        worst = max(worst, abs(bias) / mass)
    return {"l1": total, "l2": np.sqrt(squares), "max": worst}[norm]


# --- calibration decision loss (CDL) -------------------------------------------


def _cdl_groups(y, p, w):
    """Distinct predictions v_k carrying weight, their mass pi_k and rate q_k."""
    v = np.unique(p[w > 0])
    mass = np.array([w[p == t].sum() for t in v])
    q = np.array([(w * y)[p == t].sum() for t in v]) / mass
    return v, mass / w.sum(), q


def prediction_swap_regret(utility, v, pi, q, tol=1e-12):
    """Swap regret of best-responding to each v_k in the task ``utility``.

    ``utility[a] = (U(a, 0), U(a, 1))``. Forecast ``v_k`` gets a best
    response (expected utility within ``tol`` of the best, the worst such for
    the decision maker: the supremum over tasks lets a perturbation break
    ties either way) and may swap it for the best action under ``q_k``
    (003 Definition 2.12 / Claim 2.16).
    """
    utility = np.asarray(utility, dtype=float)
    at_v = np.outer(1 - v, utility[:, 0]) + np.outer(v, utility[:, 1])
    at_q = np.outer(1 - q, utility[:, 0]) + np.outer(q, utility[:, 1])
    response = at_v >= at_v.max(axis=1, keepdims=True) - tol
    worst = np.where(response, at_q, np.inf).min(axis=1)
    return float(np.sum(pi * (at_q.max(axis=1) - worst)))


def cdl_dense_lp(y, p, w):
    """CDL by the menu LP of 003 Theorem 3.11, dense: O(M^2) constraints.

    Menu: the distinct predictions, their outcome rates and the point masses
    {0, 1} (the theorem's Q, Q-hat and Theta-hat). Variables: the scores
    s[m, theta] in [0, 1]. Properness: every m scores its own line at least
    as high as any other menu line, at m. Objective: sum_k pi_k E_{q_k}[s[q_k,
    .] - s[v_k, .]], the swap to the outcome rate (the theorem's display
    drops the weights pi_k = n_k / T; with them the LP value is MSR / T).
    """
    from scipy.optimize import linprog

    v, pi, q = _cdl_groups(y, p, w)
    menu = np.unique(np.concatenate([v, q, [0.0, 1.0]]))
    m = menu.shape[0]
    at = {t: i for i, t in enumerate(menu.tolist())}
    c = np.zeros(2 * m)  # variable 2 i + theta is s[menu[i], theta]
    for vk, pk, qk in zip(v, pi, q):
        iv, iq = at[vk], at[qk]
        c[2 * iq] += pk * (1 - qk)
        c[2 * iq + 1] += pk * qk
        c[2 * iv] -= pk * (1 - qk)
        c[2 * iv + 1] -= pk * qk
    rows = []
    for i, t in enumerate(menu):
        for j in range(m):
            if i != j:
                # E_{theta ~ t} s[menu[j], theta] - E_{theta ~ t} s[t, theta] <= 0
                row = np.zeros(2 * m)
                row[2 * j] += 1 - t
                row[2 * j + 1] += t
                row[2 * i] -= 1 - t
                row[2 * i + 1] -= t
                rows.append(row)
    # unit-size objective: HiGHS's tolerances are absolute (about 1e-7)
    scale = np.abs(c).max()
    if scale == 0:
        return 0.0
    res = linprog(
        -c / scale,
        A_ub=np.array(rows),
        b_ub=np.zeros(len(rows)),
        bounds=(0, 1),
        method="highs",
    )
    assert res.status == 0, res.message
    return -res.fun * scale


def cfdl_bruteforce(y, p, w):
    """000 Lemma 2.2's S = sup_mu E[(q - mu)_+ 1{p <= mu} + (mu - q)_+ 1{p > mu}].

    Scanned literally over a grid of mu plus every v_k, q_k and the float
    just below each (where the supremum is approached but not attained).
    """
    v, pi, q = _cdl_groups(y, p, w)
    cand = np.concatenate([v, q])
    mus = np.concatenate([np.linspace(0, 1, 1001), cand, np.nextafter(cand, -np.inf)])
    mus = mus[(mus >= 0) & (mus <= 1)]
    best = 0.0
    for mu in mus:
        val = np.sum(
            pi * (np.maximum(q - mu, 0) * (v <= mu) + np.maximum(mu - q, 0) * (v > mu))
        )
        best = max(best, val)
    return best


def cdl_three_action_bruteforce(y, p, w):
    """Best swap regret over three-action tasks (1, 0), B, (0, 1), B in [0, 1]^2.

    B is placed so that the best response switches at a pair of candidate
    points mu1 < mu2 (the v_k, q_k, 0, 1/2, 1): B passes through
    (mu1, 1 - mu1) and (mu2, mu2). Pairs whose B leaves [0, 1]^2 are not
    tasks and are skipped; mu1 = mu2 = 1/2 is the two-action task. Each
    value is a swap regret computed from the definition, so a lower bound
    on CDL (which the closed form says is attained).
    """
    v, pi, q = _cdl_groups(y, p, w)
    cand = np.unique(np.concatenate([v, q, [0.0, 0.5, 1.0]]))
    best = prediction_swap_regret([(1, 0), (0, 1)], v, pi, q)
    for i, mu1 in enumerate(cand):
        for mu2 in cand[i + 1 :]:
            slope = (mu2 - (1 - mu1)) / (mu2 - mu1)
            b0 = (1 - mu1) - slope * mu1
            b1 = b0 + slope
            if min(b0, b1) < -1e-12 or max(b0, b1) > 1 + 1e-12:
                continue
            menu = [(1, 0), (b0, b1), (0, 1)]
            best = max(best, prediction_swap_regret(menu, v, pi, q))
    return best


def cdl_sparse_lp(y, p, w):
    """CDL by an O(M) linear program over convex functions (003 Theorem 3.4).

    The same optimisation as :func:`cdl_dense_lp`, written over the convex
    utility ``u`` of the scoring rule instead of its menu: unknowns ``u_j`` and
    a subgradient ``g_j`` at each sorted point ``x_j`` of the v_k, q_k, 0, 1.
    Convexity and ``g_j`` being a subgradient are the consecutive-slope
    conditions ``slope_{j-1} <= g_j <= slope_j``; each tangent line must take
    values in [0, 1] at 0 and 1 (scores in [0, 1]). Objective: the Bregman
    form of the swap regret, sum_k pi_k (u(q_k) - u(v_k) - g(v_k) (q_k - v_k))
    (003 Proposition 3.6). Sparse, so it checks the closed form at large K.
    """
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix

    v, pi, q = _cdl_groups(y, p, w)
    x = np.unique(np.concatenate([v, q, [0.0, 1.0]]))
    m = x.shape[0]
    iv, iq = np.searchsorted(x, v), np.searchsorted(x, q)
    c = np.zeros(2 * m)  # u_j is variable j, g_j is variable m + j
    np.add.at(c, iq, -pi)
    np.add.at(c, iv, pi)
    np.add.at(c, m + iv, pi * (q - v))
    rows, cols, vals, rhs = [], [], [], []

    def constraint(entries, bound):
        r = len(rhs)
        for col, val in entries:
            rows.append(r)
            cols.append(col)
            vals.append(val)
        rhs.append(bound)

    for j in range(m):
        # rows in slope units: scaled by the gap, a tiny gap would let the
        # solver's absolute feasibility tolerance hide a large slope error
        if j > 0:  # (u_j - u_{j-1}) / (x_j - x_{j-1}) <= g_j
            d = x[j] - x[j - 1]
            constraint([(j, 1.0 / d), (j - 1, -1.0 / d), (m + j, -1.0)], 0.0)
        if j < m - 1:  # g_j <= (u_{j+1} - u_j) / (x_{j+1} - x_j)
            d = x[j + 1] - x[j]
            constraint([(m + j, 1.0), (j + 1, -1.0 / d), (j, 1.0 / d)], 0.0)
        # tangent line at x_j: value u_j - g_j x_j at 0, u_j + g_j (1 - x_j) at 1
        constraint([(j, 1.0), (m + j, -x[j])], 1.0)
        constraint([(j, -1.0), (m + j, x[j])], 0.0)
        constraint([(j, 1.0), (m + j, 1.0 - x[j])], 1.0)
        constraint([(j, -1.0), (m + j, x[j] - 1.0)], 0.0)
    a_ub = coo_matrix((vals, (rows, cols)), shape=(len(rhs), 2 * m)).tocsr()
    res = linprog(c, A_ub=a_ub, b_ub=np.array(rhs), bounds=(None, None), method="highs")
    assert res.status == 0, res.message
    return -res.fun


# --- multiclass utility calibration --------------------------------------------


def rank_bruteforce(p, j):
    """rank(p, j) = 1 + #{i: p_i > p_j} + #{i < j: p_i = p_j} (DESIGN.md section 4)."""
    rank = 1
    for i in range(len(p)):
        if p[i] > p[j] or (i < j and p[i] == p[j]):
            rank += 1
    return rank


def _first_argmax(values):
    best = 0
    for i in range(1, len(values)):
        if values[i] > values[best]:
            best = i
    return best


def utility_vector_bruteforce(spec, p):
    """[u(p, e_0), ..., u(p, e_{C-1})] straight from paper 001's definitions.

    ``spec`` is ``(name, parameter)``: ("top-class", None), ("class-wise", c),
    ("top-k", k), ("linear", a), ("rank", theta), ("dcg", gamma) (Examples
    3.4-3.6, C.3), ("decision", loss) (Example 3.7), ("gain", R) (C.2),
    ("similarity", S) (C.3). Argmax and rank ties go to the lowest index.
    """
    name, param = spec
    C = len(p)
    if name == "top-class":
        star = _first_argmax(p)
        return [1.0 if j == star else 0.0 for j in range(C)]
    if name == "class-wise":
        return [1.0 if j == param else 0.0 for j in range(C)]
    if name == "top-k":
        return [1.0 if rank_bruteforce(p, j) <= param else 0.0 for j in range(C)]
    if name == "linear":
        return [float(param[j]) for j in range(C)]
    if name == "rank":
        return [float(param[rank_bruteforce(p, j) - 1]) for j in range(C)]
    if name == "dcg":
        return [np.log2(1.0 + rank_bruteforce(p, j)) ** -param for j in range(C)]
    if name == "decision":
        loss = np.asarray(param)
        expected = [sum(p[j] * loss[j, a] for j in range(C)) for a in range(loss.shape[1])]
        best = _first_argmax([-e for e in expected])
        return [-float(loss[j, best]) for j in range(C)]
    if name == "gain":
        R = np.asarray(param)
        expected = [sum(p[i] * R[i, j] for i in range(C)) for j in range(C)]
        star = _first_argmax(expected)
        return [float(R[i, star]) for i in range(C)]
    if name == "similarity":
        S = np.asarray(param)
        return [sum(p[i] * S[i, j] for i in range(C)) for j in range(C)]
    raise ValueError(f"unknown utility {name!r}")


def predicted_and_realised_bruteforce(spec, P, y):
    """v_u(p_i) = sum_j p_ij u(p_i, e_j) (001 eq. 3.1) and u(p_i, e_{y_i}), row by row."""
    v, realised = [], []
    for i in range(P.shape[0]):
        u = utility_vector_bruteforce(spec, P[i])
        v.append(sum(P[i, j] * u[j] for j in range(P.shape[1])))
        realised.append(u[y[i]])
    return np.array(v), np.array(realised)


def utility_calibration_bruteforce(spec, P, y, w):
    """UC(f, u) (001 eq. 3.2): sup over all O(n^2) intervals [a, b] of distinct v.

    v is summed here in a different order from the fast path, so v values
    that are equal in exact arithmetic are grouped after rounding to 12
    decimals (test data keep distinct values much further apart).
    """
    v, realised = predicted_and_realised_bruteforce(spec, P, y)
    b = w * (realised - v) / w.sum()
    key = np.round(v, 12)
    pts = np.unique(key)
    best = 0.0
    for lo in range(len(pts)):
        for hi in range(lo, len(pts)):
            mask = (key >= pts[lo]) & (key <= pts[hi])
            best = max(best, abs(b[mask].sum()))
    return best


def family_calibration_bruteforce(specs, P, y, w):
    """UC(f, U) = max over the utilities of U (001 eq. 3.5)."""
    return max(utility_calibration_bruteforce(spec, P, y, w) for spec in specs)


# --- decision tasks and swap regret --------------------------------------------


def best_response_bruteforce(U, P):
    """First action with the largest expected utility, by a loop over actions."""
    actions = []
    for row in P:
        values = [
            sum(row[k] * U[a, k] for k in range(U.shape[1])) for a in range(len(U))
        ]
        best = 0
        for a in range(1, len(U)):
            if values[a] > values[best]:
                best = a
        actions.append(best)
    return np.array(actions)


def swap_regret_bruteforce(U, Q, y, w):
    """max over all A^A swap maps of the weighted mean gain (000 eq. (1), Def. 4.4).

    ``Q`` holds the probability of every action in every round (one-hot rows
    for deterministic actions).
    """
    import itertools

    A = U.shape[0]
    rows = np.arange(len(y))
    best = -np.inf
    for sigma in itertools.product(range(A), repeat=A):
        gain = (Q @ (U[list(sigma)] - U))[rows, y]
        best = max(best, np.dot(w, gain) / w.sum())
    return best


def hard_binned_scdl_reference(y, p, w):
    """Hard-binned SCDL and m* (remark after 000 eq. (4)), for small m*."""

    def at(m):
        return scdl_m_reference(y, np.floor(m * p) / m, w, m)

    m = 2
    while at(2 * m) < 1.0 / m:
        m *= 2
    return max(at(m), 1.0 / m), m


# --- lower distance to calibration (LDTC / dCE) ---------------------------------


def ldtc_dense_lp(y, p, w, grid):
    """dCE^U by the dense linear program of 002 Lemma 18, solved by HiGHS.

    One variable Pi(u, v, y) per grid point ``u`` and distinct pair ``(v, y)``
    of the data; constraints: the (v, y) marginal is the weighted empirical
    distribution, and ``(1 - u) sum_v Pi(u, v, 1) = u sum_v Pi(u, v, 0)`` for
    every ``u``. Masses are scaled to sum to the number of pairs (the value is
    divided back) so that HiGHS's absolute tolerances are relative ones.
    """
    from scipy.optimize import linprog

    grid = np.asarray(grid, dtype=float)
    pairs, inverse = np.unique(np.column_stack([p, y]), axis=0, return_inverse=True)
    inverse = inverse.ravel()
    n_pairs, n_grid = pairs.shape[0], grid.shape[0]
    mass = np.bincount(inverse, weights=w, minlength=n_pairs)
    mass = mass * n_pairs / mass.sum()
    v, label = pairs[:, 0], pairs[:, 1]
    # variable (i, j) at column i * n_grid + j: pair i coupled to grid point j
    cost = np.abs(grid[None, :] - v[:, None]).ravel()
    A = np.zeros((n_pairs + n_grid, n_pairs * n_grid))
    b = np.zeros(n_pairs + n_grid)
    for i in range(n_pairs):
        A[i, i * n_grid : (i + 1) * n_grid] = 1.0
        b[i] = mass[i]
    for j, u in enumerate(grid):
        for i in range(n_pairs):
            A[n_pairs + j, i * n_grid + j] = (1 - u) * label[i] - u * (1 - label[i])
    result = linprog(
        cost,
        A_eq=A,
        b_eq=b,
        bounds=(0, None),
        method="highs",
        options={
            "primal_feasibility_tolerance": 1e-10,
            "dual_feasibility_tolerance": 1e-10,
        },
    )
    assert result.status == 0, result.message
    return result.fun / n_pairs


def ldtc_dual_objective(y, p, w, grid, potentials):
    """Weak-duality lower bound on dCE^U from node potentials ``psi[y, j]``.

    For any ``psi`` with ``(1 - u_j) psi[0, j] + u_j psi[1, j] <= 0`` at every
    grid point, ``E_D[min_j (|u_j - v| + psi[y, j])] <= dCE^U(D)``: the dual
    of 002 Lemma 18 with ``psi[y, j] = lambda_j (u_j - y)``, by brute force.
    """
    grid = np.asarray(grid, dtype=float)
    inner = np.abs(grid[None, :] - p[:, None]) + potentials[y.astype(int)]
    return float(np.sum(w * inner.min(axis=1)) / w.sum())


# --- recalibration ------------------------------------------------------------


def simplex_projection_bisection(x, n_iter=200):
    """Euclidean projection of one vector onto the probability simplex.

    Straight from the KKT conditions of min ||p - x||^2 s.t. p >= 0,
    sum(p) = 1: the solution is p_j = max(x_j - theta, 0) for the theta with
    sum_j max(x_j - theta, 0) = 1. That sum is continuous and non-increasing
    in theta, equals sum(x - theta) >= 1 at theta = min(x) - 1 and 0 at
    theta = max(x), so bisection on [min(x) - 1, max(x)] finds theta.
    """
    x = np.asarray(x, dtype=np.float64)
    lo, hi = x.min() - 1.0, x.max()
    for _ in range(n_iter):
        mid = 0.5 * (lo + hi)
        if np.maximum(x - mid, 0.0).sum() > 1.0:
            lo = mid
        else:
            hi = mid
    return np.maximum(x - 0.5 * (lo + hi), 0.0)


def brier_multiclass(P, y, w):
    """Weighted mean over rows of sum_j (P[i, j] - 1{y_i = j})^2."""
    total = 0.0
    for i in range(P.shape[0]):
        row = 0.0
        for j in range(P.shape[1]):
            row += (P[i, j] - (1.0 if y[i] == j else 0.0)) ** 2
        total += w[i] * row
    return total / w.sum()


def patching_reference(specs, P, y, w, n_steps):
    """Algorithm 1 of paper 001 (Appendix A) with eta_t = err_t / C, by brute force.

    Each step: for every utility (``specs`` as in
    ``utility_vector_bruteforce``, in family order) try every interval
    [a, b] of distinct predicted utilities, keep the first (utility,
    interval) with the largest |sum_i w_i (u(p_i, e_{y_i}) - v_u(p_i)) 1{v in
    [a, b]}| / W; rows in it move to proj(p + eta * sign * u_vec(p)) with
    sign that of the sum (+1: realised exceeds predicted), projected by
    bisection. Returns the final predictions and the (spec, sign, eta) of
    every step.
    """
    P = np.array(P, dtype=np.float64)
    C = P.shape[1]
    steps = []
    for _ in range(n_steps):
        best = (0.0, None, None, None)
        for spec in specs:
            v, realised = predicted_and_realised_bruteforce(spec, P, y)
            b = w * (realised - v) / w.sum()
            key = np.round(v, 12)
            pts = np.unique(key)
            for lo in range(len(pts)):
                for hi in range(lo, len(pts)):
                    mask = (key >= pts[lo]) & (key <= pts[hi])
                    total = b[mask].sum()
                    if abs(total) > best[0]:
                        best = (abs(total), spec, mask, 1 if total > 0 else -1)
        err, spec, mask, sign = best
        if spec is None:
            break
        eta = err / C
        for i in np.flatnonzero(mask):
            u = np.array(utility_vector_bruteforce(spec, P[i]))
            P[i] = simplex_projection_bisection(P[i] + eta * sign * u)
        steps.append((spec, sign, eta))
    return P, steps


# --- grouped sufficient statistic ------------------------------------------------


def grouped_reference(y, p, w):
    """(values, weights, positives) by a dictionary over the distinct predictions."""
    sums = {}
    for yi, pi, wi in zip(y.tolist(), p.tolist(), w.tolist()):
        total, positive = sums.get(pi, (0.0, 0.0))
        sums[pi] = (total + wi, positive + wi * yi)
    values = sorted(sums)
    return (
        np.array(values),
        np.array([sums[v][0] for v in values]),
        np.array([sums[v][1] for v in values]),
    )


# --- pictures: reliability diagram (skcal.display) -------------------------


def soft_bins_reference(y, p, w, m):
    """SCDL soft bins by the definition: every sample against every grid point."""
    total = float(np.sum(w))
    centers = np.arange(m + 1) / m
    pi = np.zeros(m + 1)
    pos = np.zeros(m + 1)
    for yi, pi_, wi in zip(y, p, w):
        for j in range(m + 1):
            share = max(0.0, 1.0 - abs(m * pi_ - j))
            pi[j] += wi * share
            pos[j] += wi * share * yi
    q = np.array([pos[j] / pi[j] if pi[j] > 0 else np.nan for j in range(m + 1)])
    return centers, pi / total, q


def null_bin_frequencies_reference(p, w, bin_of_row, n_bins, n_resamples, seed):
    """Per-bin weighted frequencies of y* ~ Bernoulli(p), one sample at a time.

    Uses the generator's uniforms in the same order (resample by resample,
    sample by sample) as the fast path, so the two agree exactly.
    """
    rng = np.random.RandomState(seed)
    out = np.full((n_resamples, n_bins), np.nan)
    for r in range(n_resamples):
        u = rng.uniform(size=len(p))
        for k in range(n_bins):
            num = den = 0.0
            for i in range(len(p)):
                if bin_of_row[i] == k:
                    den += w[i]
                    num += w[i] * (u[i] < p[i])
            if den > 0:
                out[r, k] = num / den
    return out


# --- calibration tester: null draws (tester helper) -----------------------------


def row_null_draw_reference(function, y, p, w, seed):
    """One null draw ``y* ~ Bernoulli(p)`` row by row, measured by the public function.

    Uses the generator of ``seed`` as the tester's weighted path does: one
    uniform per row, in row order.
    """
    u = np.random.default_rng(seed).random(len(p))
    y_star = np.array([1.0 if ui < pi else 0.0 for ui, pi in zip(u, p)])
    return function(y_star, p, sample_weight=w)


def exact_null_law_reference(function, p):
    """Exact law of ``function(y*, p)`` under ``y*_i ~ Bernoulli(p_i)`` (small n).

    Enumerates all ``2^n`` outcome vectors; returns ``{value: probability}``
    with values rounded to 12 digits.
    """
    import itertools

    law = {}
    for outcome in itertools.product((0.0, 1.0), repeat=len(p)):
        prob = 1.0
        for yi, pi in zip(outcome, p):
            prob *= pi if yi == 1.0 else 1.0 - pi
        if prob == 0.0:
            continue
        value = round(float(function(np.array(outcome), np.asarray(p))), 12)
        law[value] = law.get(value, 0.0) + prob
    return law


# --- calibration decision loss: the decision profile (skcal.metrics._cdl) --------


def decision_profile_reference(statistic):
    """The CDL decision profile ``h`` at its breakpoints, by difference arrays.

    Breakpoints ``x`` (sorted, distinct, including 0, 1/2, 1) and ``h(x)``,
    every point stored: the vectorised twin of ``decision_hull``.

    Also returns the total weight. Zero-weight groups carry no mass in ``D``
    and are dropped (their ``q`` is undefined).
    """
    values, wsum, wysum = statistic.values, statistic.weights, statistic.positives
    total = statistic.total
    nonzero = wsum > 0
    v, wsum, wysum = values[nonzero], wsum[nonzero], wysum[nonzero]
    q = wysum / wsum
    pi = wsum / total

    x = np.unique(np.concatenate((v, q, [0.0, 0.5, 1.0])))
    # Groups with q_k = v_k contribute nothing; skipping them keeps an exactly
    # calibrated D at exactly zero instead of summation noise.
    off = q != v
    v, q, pi = v[off], q[off], pi[off]
    up = q > v
    # On [min(v_k, q_k), max(v_k, q_k)] group k adds pi_k |q_k - mu|, i.e.
    # coef_k + slope_k * mu, entered as difference arrays over the points x;
    # both ends are closed (the closed end at v_k is the tie rule of step 1),
    # so the term stops one past the index of the right end.
    coef = np.where(up, pi * q, -pi * q)
    slope = np.where(up, -pi, pi)
    start = np.searchsorted(x, np.minimum(v, q))
    stop = np.searchsorted(x, np.maximum(v, q)) + 1
    size = x.shape[0] + 1
    active_coef = np.cumsum(
        np.bincount(start, coef, size) - np.bincount(stop, coef, size)
    )
    active_slope = np.cumsum(
        np.bincount(start, slope, size) - np.bincount(stop, slope, size)
    )
    # h >= 0 exactly; the cumulative sums can leave a negative rounding residue.
    h = np.maximum(active_coef[:-1] + active_slope[:-1] * x, 0.0)
    return x, h, total


# --- patching recalibrator: twins of the compiled row kernels (patchspeed) -------


def simplex_projection_sort_numpy(X):
    """The sort-based projection onto the simplex, row-vectorised in numpy.

    Held, Wolfe and Crowder: with each row shifted by its maximum and sorted
    decreasingly, ``s_1 >= ... >= s_C``, ``rho`` is the last ``k`` with
    ``s_k - (s_1 + ... + s_k - 1) / k > 0`` and the projection is
    ``clip(x - theta, 0, 1)`` with ``theta = (s_1 + ... + s_rho - 1) / rho``;
    rows whose coordinates all exceed ``theta = (sum(x) - 1) / C`` need no
    sort (``rho = C``). skcal's ``project_simplex`` before its rows were
    projected by a compiled loop, kept as the twin of that loop: the loop
    must give these results bit for bit (the row sums are numpy's, the rest
    is one operation per entry, in this order).
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    n, C = X.shape
    shifted = X - X.max(axis=1, keepdims=True)
    theta = (shifted.sum(axis=1) - 1.0) / C
    inner = shifted.min(axis=1) - theta > 0
    out = np.empty_like(shifted)
    out[inner] = np.clip(shifted[inner] - theta[inner, None], 0.0, 1.0)
    outer = shifted[~inner]
    s = -np.sort(-outer, axis=1)
    css = np.cumsum(s, axis=1) - 1.0
    k = np.arange(1, C + 1, dtype=np.float64)
    positive = s - css / k > 0
    positive[:, 0] = True
    rho = C - 1 - np.argmax(positive[:, ::-1], axis=1)
    theta_outer = css[np.arange(outer.shape[0]), rho] / (rho + 1.0)
    out[~inner] = np.clip(outer - theta_outer[:, None], 0.0, 1.0)
    return out


# --- online forecaster (Hu and Wu, Algorithm 1; the oracle of Chen, Luo and Wei) --


def online_in_interval(p, i, m):
    """Whether p lies in I_i of (24) of Hu and Wu, by exact rational comparison."""
    from fractions import Fraction

    P, lo, hi = Fraction(p), Fraction(i - 1, m), Fraction(i, m)
    return (lo <= P <= hi) if i == 1 else (lo < P <= hi)


def online_weighted_gain(w_plus, w_minus, p, theta):
    """sum_{i, sigma} w_{i,sigma} l_{i,sigma}(p, theta), (25) term by term."""
    m = len(w_plus)
    total = 0.0
    for i in range(1, m + 1):
        for sigma, w in ((1, w_plus[i - 1]), (-1, w_minus[i - 1])):
            if online_in_interval(p, i, m):
                total += w * sigma * (p - theta)
    return total


def online_h(w_plus, w_minus, points, probs):
    """h_t(s) of (28): the worse state's expected weighted gain under s."""
    return max(
        sum(
            s * online_weighted_gain(w_plus, w_minus, p, theta)
            for p, s in zip(points, probs)
        )
        for theta in (0, 1)
    )


def online_step3_bruteforce(w_plus, w_minus, grid):
    """min of h_t over all distributions on the points of ``grid`` (an LP)."""
    from scipy.optimize import linprog

    n = len(grid)
    G = np.array(
        [[online_weighted_gain(w_plus, w_minus, x, theta) for x in grid]
         for theta in (0, 1)]
    )
    # variables (s_1..s_n, z): minimise z, G s <= z, sum s = 1, s >= 0
    c = np.r_[np.zeros(n), 1.0]
    A_ub = np.c_[G, -np.ones(2)]
    A_eq = np.r_[np.ones(n), 0.0][None, :]
    res = linprog(c, A_ub=A_ub, b_ub=np.zeros(2), A_eq=A_eq, b_eq=[1.0],
                  bounds=[(0, None)] * n + [(None, None)], method="highs")
    assert res.status == 0
    return res.fun


def online_oracle_replay(losses, horizon):
    """The two-layer expert oracle replayed with loops: the weights of each round.

    Bases: multiplicative weights with correction, one learning rate each
    (eta_j = 2^-j / 32), uniform prior; master over the bases: the mirror
    descent step with the weighted entropy (rates mu_j = eta_j / 2, prior
    proportional to mu_j^2), its simplex multiplier found by bisection.
    """
    import math

    T, d = losses.shape
    K = max(1, math.ceil(math.log2(max(horizon, 2)) / 2))
    eta = [1.0 / (32.0 * 2.0**j) for j in range(1, K + 1)]
    mu = [e / 2.0 for e in eta]
    prior = [u * u for u in mu]
    master = [p / sum(prior) for p in prior]
    base = [[1.0 / d] * d for _ in range(K)]
    out = []
    for t in range(T):
        out.append([sum(master[j] * base[j][i] for j in range(K)) for i in range(d)])
        loss = [float(v) for v in losses[t]]
        x = [sum(base[j][i] * loss[i] for i in range(d)) for j in range(K)]
        for j in range(K):
            row = [base[j][i] * math.exp(-eta[j] * (loss[i] + 32 * eta[j] * loss[i] ** 2))
                   for i in range(d)]
            base[j] = [r / sum(row) for r in row]
        y = [x[j] + 32 * mu[j] * x[j] ** 2 for j in range(K)]

        def mass(lam, master=master, y=y):
            return sum(master[j] * math.exp(-mu[j] * (y[j] + lam)) for j in range(K))

        lo, hi = -1e4, 1e4
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if mass(mid) > 1 else (lo, mid)
        lam = (lo + hi) / 2
        master = [master[j] * math.exp(-mu[j] * (y[j] + lam)) for j in range(K)]
    return np.array(out)


def online_oracle_bound(sum_sq_loss, n_experts, horizon):
    """The regret bound the oracle's docstring derives, minimised over the scales."""
    import math

    K = max(1, math.ceil(math.log2(max(horizon, 2)) / 2))
    eta = [1.0 / (32.0 * 2.0**j) for j in range(1, K + 1)]
    mu = [e / 2.0 for e in eta]
    prior = [u * u / sum(v * v for v in mu) for u in mu]
    const = sum(p / u for p, u in zip(prior, mu))
    return min(
        math.log(n_experts) / e + 32 * e * sum_sq_loss + (math.log(1 / p) - 1) / u + const
        for e, u, p in zip(eta, mu, prior)
    )


# --- calibration sketch (skcal.sketch) -------------------------------------------


def exact_grouped_reference(y, p, w):
    """(values, weights, positives), each sum exact (Fractions) then rounded once.

    The statistic a merge of sketches must reproduce bit for bit: the
    correctly rounded exact sums, whatever the order of the rows.
    """
    from fractions import Fraction

    sums = {}
    for yi, pi, wi in zip(y.tolist(), p.tolist(), w.tolist()):
        total, positive = sums.get(pi, (Fraction(0), Fraction(0)))
        sums[pi] = (total + Fraction(wi), positive + Fraction(wi) * int(yi != 0))
    values = sorted(sums)
    return (
        np.array(values, dtype=float),
        np.array([float(sums[v][0]) for v in values]),
        np.array([float(sums[v][1]) for v in values]),
    )


def compacted_rows_reference(y, p, w, level):
    """Rows moved as a compacted sketch moves them, slowly, with Fractions.

    On the cells ``[j 2**-level, (j + 1) 2**-level)`` (1 in the last), the
    positive-weight rows of each class in a cell move to their exact weighted
    mean prediction (rounded once). Returns ``(y, p, w)`` of the moved rows
    (zero-weight rows dropped) and the largest distance a row moved.
    """
    from fractions import Fraction

    cells = {}
    for yi, pi, wi in zip(y.tolist(), p.tolist(), w.tolist()):
        if wi == 0:
            continue
        j = min(int(Fraction(pi) * 2**level), 2**level - 1)
        mass, moment, members = cells.get((j, yi != 0), (Fraction(0), Fraction(0), []))
        members.append(pi)
        cells[(j, yi != 0)] = (mass + Fraction(wi), moment + Fraction(wi) * Fraction(pi), members)
    ys, ps, ws, moved = [], [], [], 0.0
    for (_cell, positive), (mass, moment, members) in sorted(cells.items()):
        mean = float(moment / mass)
        mean = min(max(mean, min(members)), max(members))
        if min(members) == max(members):
            mean = members[0]
        moved = max(moved, max(abs(m - mean) for m in members))
        ys.append(1.0 if positive else 0.0)
        ps.append(mean)
        ws.append(float(mass))
    return np.array(ys), np.array(ps), np.array(ws), moved


# --- tolerant calibration test (skcal.tester, branch tolerant) -------------------


def smce_move_gap_bruteforce(y, p, w, lam, n_grid=4001):
    """``sum_i w_i (phi(p_i) - min_s [phi(s) + lam |s - p_i|]) / sum_i w_i``, slowly.

    ``phi_y(s) = (y - s) x(s)`` with ``x`` the smCE witness of ``(p, y)``
    (public ``return_details``), interpolated linearly and constant beyond
    the extreme predictions. The minimum is taken row by row over a uniform
    grid of ``n_grid`` points of [0, 1] plus the predictions, so it is at
    least the exact one: the result is at most the exact gap, and at least
    it minus ``(2 + lam) / (n_grid - 1)`` (``phi_y`` is 2-Lipschitz).
    """
    from skcal import smooth_calibration_error

    y = np.asarray(y, dtype=float)
    p = np.asarray(p, dtype=float)
    w = np.asarray(w, dtype=float)
    _, details = smooth_calibration_error(y, p, sample_weight=w, return_details=True)
    points, witness = details.points, details.witness
    s = np.union1d(np.linspace(0.0, 1.0, n_grid), p)
    x_s = np.interp(s, points, witness)
    total = 0.0
    for yi, pi, wi in zip(y, p, w):
        x_p = np.interp(pi, points, witness)
        phi_p = (yi - pi) * x_p
        psi = np.min((yi - s) * x_s + lam * np.abs(s - pi))
        total += wi * (phi_p - psi)
    return total / w.sum()


def coupling_failures_reference(n_resamples, j, delta):
    """``P(Binomial(B, delta) > j)`` by summing the probability mass function."""
    from math import comb

    return sum(
        comb(n_resamples, i) * delta**i * (1 - delta) ** (n_resamples - i)
        for i in range(j + 1, n_resamples + 1)
    )


# --- dCE on a grid with per-sample arrays: the array code before the ldtc ----
# --- kernels (branch dcemem), kept as the twin of skcal/_kernels/_ldtc.pyx ---


def ldtc_solve_on_grid_arrays(values, mass0, mass1, u, merge_above=100, tol=1e-9):
    """``_solve_on_grid`` as it was written with numpy arrays, one per column.

    Builds every split column (value, label) as arrays, merges the columns of
    one (cell, label) row into a block when there are more than
    ``merge_above`` columns per grid point, solves, and cuts every block whose
    columns' reduced costs disagree in sign at the points where the sign
    changes, until none does. The kernels must give the same program bit for
    bit, hence the same value and potentials. Uses the module's program
    assembly (``_fixed_columns``, ``_solve``), which the kernels do not touch.
    """
    from skcal.metrics._ldtc import _fixed_columns, _solve

    M = u.shape[0]
    scale = values.shape[0] / (mass0.sum() + mass1.sum())
    cell = np.searchsorted(u, values, side="right") - 1
    on_grid = u[cell] == values
    supply = np.zeros(2 * M)
    constant = 0.0
    rows, bounds, costs = [], [], []
    for label, mass in enumerate((mass0, mass1)):
        mass = mass * scale
        here = on_grid & (mass > 0)
        np.add.at(supply, label * M + cell[here], mass[here])
        split = ~on_grid & (mass > 0)
        k, v, d = cell[split], values[split], mass[split]
        constant += float(np.sum(d * (u[k + 1] - v)))
        np.add.at(supply, label * M + k + 1, d)
        rows.append(label * M + k)
        bounds.append(d)
        costs.append(2.0 * v - u[k] - u[k + 1])
    row = np.concatenate(rows)
    mass = np.concatenate(bounds)
    cost = np.concatenate(costs)
    fixed = _fixed_columns(u)
    starts = np.ones(row.shape[0], dtype=bool)
    if row.shape[0] > merge_above * M:
        starts[1:] = row[1:] != row[:-1]
    n_solves = 0
    while True:
        first = np.flatnonzero(starts)
        if first.shape[0]:
            block_mass = np.add.reduceat(mass, first)
            block_cost = np.add.reduceat(mass * cost, first) / block_mass
        else:
            block_mass = block_cost = np.zeros(0)
        result = _solve(row[first], block_mass, block_cost, supply, fixed, M)
        n_solves += 1
        potential = -result.eqlin.marginals
        threshold = potential[row + 1] - potential[row]
        side = np.sign(cost - threshold) * (np.abs(cost - threshold) > tol)
        block = np.cumsum(starts) - 1
        has_left = np.zeros(first.shape[0], dtype=bool)
        has_right = np.zeros(first.shape[0], dtype=bool)
        has_left[block[side < 0]] = True
        has_right[block[side > 0]] = True
        torn = (has_left & has_right)[block]
        cuts = np.zeros_like(starts)
        cuts[1:] = torn[1:] & (side[1:] != side[:-1]) & (block[1:] == block[:-1])
        if not cuts.any():
            break
        starts |= cuts
    value = (result.fun + constant) / values.shape[0]
    return min(max(value, 0.0), 1.0), potential.reshape(2, M), n_solves


# --- tolerant test: certified epsilon (skcal.tester, branch tolerant2) -----------


def design_gap_reference(values, weights):
    """``max_m sum_i w_i |v_i - m| - |m - vbar|`` (normalised ``w``), slowly.

    The maximum over ``m`` in the predictions, their weighted mean and a
    uniform grid of [0, 1], each sum computed directly: the function is
    piecewise linear with kinks at the predictions and the mean only, so this
    finite maximum is the supremum over [0, 1].
    """
    v = np.asarray(values, dtype=float)
    w = np.asarray(weights, dtype=float)
    w = w / w.sum()
    mean = float(np.sum(w * v))
    best = -np.inf
    for m in list(v) + [mean] + list(np.linspace(0.0, 1.0, 101)):
        value = sum(wi * abs(vi - m) for vi, wi in zip(v, w)) - abs(m - mean)
        best = max(best, value)
    return best


def interval_noise_reference(zeta, u, p, w):
    """``R = int_0^1 |sum_i w_i zeta_i s_i(t)| dt``, interval by interval.

    ``s_i = +1`` on ``[p_i, u_i)``, ``-1`` on ``[u_i, p_i)``; ``M(t)`` is
    constant between consecutive end points, so it is read at each midpoint
    and multiplied by the length. ``w`` is normalised here.
    """
    w = np.asarray(w, dtype=float) / np.sum(w)
    ends = np.unique(np.r_[0.0, 1.0, u, p])
    total = 0.0
    for left, right in zip(ends[:-1], ends[1:]):
        t = (left + right) / 2
        m = 0.0
        for zi, ui, pi, wi in zip(zeta, u, p, w):
            if pi <= t < ui:
                m += wi * zi
            elif ui <= t < pi:
                m -= wi * zi
        total += abs(m) * (right - left)
    return total


# --- patching recalibrator: the whole fit, slowly (branch patchfit) ---------------


def worst_interval_sorted_reference(v, residual):
    """The worst run of one utility, by a stable sort and one cumulative sum.

    ``residual`` is ``w (u(p, e_y) - v)`` per row. Rows are sorted by ``v``
    (ties in row order) and summed one at a time; a prefix may only end
    after the last row of a group of equal ``v``. With ``S_0 = 0`` and
    ``S_g`` the sum up to the end of group ``g``, the worst run is between
    the first largest and the first smallest ``S`` (``max S - min S``).
    Returns ``(value, lower, upper, sign)`` with the smallest and largest
    ``v`` of the run; ``value = sign = 0`` when every run sums to zero.
    """
    order = np.argsort(v, kind="stable")
    v_sorted = v[order]
    running = np.cumsum(residual[order])
    ends = np.flatnonzero(np.r_[v_sorted[1:] != v_sorted[:-1], True])
    S = np.r_[0.0, running[ends]]
    g_max, g_min = int(np.argmax(S)), int(np.argmin(S))
    value = S[g_max] - S[g_min]
    if not value > 0:
        return 0.0, v_sorted[0], v_sorted[0], 0
    first, last = min(g_max, g_min), max(g_max, g_min)
    start = 0 if first == 0 else ends[first - 1] + 1  # first row of the run
    lower, upper = v_sorted[start], v_sorted[ends[last - 1]]
    return value, lower, upper, 1 if g_max > g_min else -1


def patching_fit_reference(P, y, w, utilities, *, max_iter, tol, step="armijo"):
    """The fit of UtilityPatchingRecalibrator as first written, without shortcuts.

    Every iteration re-evaluates every utility on every row with the
    utilities' own (numpy) evaluation, audits each by
    :func:`worst_interval_sorted_reference` and keeps the first largest;
    the patch shrinks the interval to the rows of positive weight, takes
    ``u_vec`` from ``_checked_matrix``, steps by ``"armijo"`` (start at
    ``4 err / E||u||^2``, halve until the Brier score drops by ``eta err /
    2``, at most 40 times), ``"paper"`` (``err / C``) or a constant, and
    projects with :func:`simplex_projection_sort_numpy`; a step that does
    not lower the Brier score stops the fit. Brier scores are numpy's
    ``einsum`` row norms summed with the weights by ``np.sum``, as the fit computes
    them. Returns ``(P, patches, uc, brier)`` with patches
    ``(utility, (a, b), sign, eta)``.
    """
    from skcal.utilities import UtilityFamily

    P = np.array(P, dtype=np.float64)
    y = np.asarray(y, dtype=np.intp)
    w = np.asarray(w, dtype=np.float64)
    n, C = P.shape
    W = w.sum()
    rows_all = np.arange(n)

    def row_loss_of(Q, labels):
        return np.einsum("ij,ij->i", Q, Q) - 2.0 * Q[np.arange(Q.shape[0]), labels] + 1.0

    loss = row_loss_of(P, y)
    brier = float(np.sum(w * loss)) / W
    patches, uc_history, brier_history = [], [], []
    for t in range(max_iter + 1):
        V, realised = UtilityFamily(list(utilities)).evaluate(P, y)
        audits = [
            worst_interval_sorted_reference(V[k], w * (realised[k] - V[k]))
            for k in range(len(utilities))
        ]
        values = np.array([a[0] for a in audits]) / W
        worst = int(np.argmax(values))
        _, lower, upper, sign = audits[worst]
        uc_history.append(float(values[worst]))
        brier_history.append(brier)
        if values[worst] <= tol or sign == 0 or t == max_iter:
            break
        utility, v = utilities[worst], V[worst]
        inside = (v >= lower) & (v <= upper) & (w > 0)
        if not inside.any():
            break
        a, b = float(v[inside].min()), float(v[inside].max())
        index = rows_all[(v >= a) & (v <= b)]
        U = utility._checked_matrix(P[index])
        err = float(np.sum(w[index] * (sign * (U[np.arange(len(index)), y[index]] - v[index])))) / W
        norm2 = float(np.sum(w[index] * np.einsum("ij,ij->i", U, U))) / W
        if not (err > 0 and norm2 > 0):
            break

        def trial(eta, index=index, sign=sign, U=U, loss=loss):
            new_rows = simplex_projection_sort_numpy(P[index] + (eta * sign) * U)
            new_loss = loss.copy()
            new_loss[index] = row_loss_of(new_rows, y[index])
            return new_rows, new_loss, float(np.sum(w * new_loss)) / W

        if step == "armijo":
            eta = 4.0 * err / norm2
            for _ in range(40):
                new_rows, new_loss, new_brier = trial(eta)
                if new_brier < brier and new_brier <= brier - 0.5 * eta * err:
                    break
                eta /= 2
            else:
                break
        else:
            eta = err / C if step == "paper" else step
            new_rows, new_loss, new_brier = trial(eta)
            if not new_brier < brier:
                break
        P[index] = new_rows
        loss, brier = new_loss, new_brier
        patches.append((utility, (a, b), sign, float(eta)))
    return P, patches, np.array(uc_history), np.array(brier_history)


# --- one-pass checked kernels (skcal._kernels._binning, branch onepass) ----------
# Twins of checked_soft_bin and checked_uniform_bin_sums: which rows pass
# their checks, and what they accumulate, by the definitions row by row.


def plain_rows_reference(y, p, w):
    """True when every row is plainly valid: p a double in [0, 1] (-0.0 too),
    y exactly 0 or 1, and w (None: unit weights) finite and non-negative."""
    for i in range(len(p)):
        if not (0.0 <= float(p[i]) <= 1.0):
            return False
        if float(y[i]) not in (0.0, 1.0):
            return False
        if w is not None and not (np.isfinite(w[i]) and w[i] >= 0.0):
            return False
    return True


def class_soft_bins_reference(y, p, w, m):
    """(2, m + 1): per class c and grid point j, sum of w_i (1 - |m p_i - j|)_+
    over the rows with y_i = c (Bairaktari et al., Lemma 3.1)."""
    tables = np.zeros((2, m + 1))
    for i in range(len(p)):
        wi = 1.0 if w is None else float(w[i])
        c = int(float(y[i]) == 1.0)
        for j in range(m + 1):
            tables[c, j] += wi * max(0.0, 1.0 - abs(m * float(p[i]) - j))
    return tables


def uniform_bin_sums_reference(y, p, w, n_bins):
    """(B, 2): per bin [k/B, (k+1)/B) (the doubles k/B; the last bin closed at
    1), found by comparing p with every edge, the sum of w and of w (y - p)."""
    edges = np.arange(n_bins + 1) / n_bins
    sums = np.zeros((n_bins, 2))
    for i in range(len(p)):
        v = float(p[i])
        k = max(b for b in range(n_bins) if v >= edges[b])
        wi = 1.0 if w is None else float(w[i])
        sums[k, 0] += wi
        sums[k, 1] += wi * (float(y[i]) - v)
    return sums


# --- recalibrator="auto" of RecalibratedClassifier (branch autorecal) ------------


def comb_calibration_bruteforce(P, y, w):
    """UC over the "comb" family: class-wise c = 0..C-1 and top-k k = 1..C."""
    C = P.shape[1]
    specs = [("class-wise", c) for c in range(C)] + [("top-k", k) for k in range(1, C + 1)]
    return family_calibration_bruteforce(specs, P, y, w)


def null_tolerance_reference(Q, w, seed, n_draws):
    """Median over ``n_draws`` of UC("comb") of ``Q`` against y* ~ Categorical(Q).

    Row by row: u_i ~ U(0, 1) from ``RandomState(seed)`` (n numbers per draw,
    in row order), y*_i the first class whose running sum of ``Q_i`` exceeds
    ``u_i`` times the row total (the last class if none does).
    """
    rng = np.random.RandomState(seed)
    n, C = Q.shape
    values = []
    for _ in range(n_draws):
        u = rng.uniform(size=n)
        y_star = []
        for i in range(n):
            running, total = [], 0.0
            for j in range(C):
                total += Q[i, j]
                running.append(total)
            threshold = u[i] * running[-1]
            chosen = C - 1
            for j in range(C):
                if running[j] > threshold:
                    chosen = j
                    break
            y_star.append(chosen)
        values.append(comb_calibration_bruteforce(Q, np.array(y_star), w))
    values.sort()
    middle = len(values) // 2
    if len(values) % 2:
        return values[middle]
    return 0.5 * (values[middle - 1] + values[middle])


def auto_choice_reference(P, y, w, folds, names, fit_predict, margin_factor=0.05):
    """The choice rule of recalibrator="auto", by loops.

    Every candidate's out-of-fold predictions of all the rows (``fit_predict(
    name, train, test)`` predicts the rows ``test`` from a fit on ``train``)
    are scored by brute-force UC("comb") and the weighted Brier score; the
    first name whose UC is at most the smallest UC plus
    ``margin_factor * sqrt(log(4 m) / (2 sum(w)))`` wins, ``m = 2 C`` the
    number of "comb" utilities (C class-wise, C top-K).
    """
    scores = {}
    for name in names:
        Q = np.zeros(P.shape)
        for train, test in folds:
            predicted = fit_predict(name, train, test)
            for row, i in enumerate(test):
                Q[i] = predicted[row]
        scores[name] = {
            "uc": comb_calibration_bruteforce(Q, y, w),
            "brier": brier_multiclass(Q, y, w),
        }
    best = min(score["uc"] for score in scores.values())
    m = 2 * P.shape[1]
    margin = margin_factor * math.sqrt(math.log(4 * m) / (2 * sum(w)))
    for name in names:
        if scores[name]["uc"] <= best + margin:
            return name, scores


def task_swap_regret_reference(utility, response_of, y, p, w, swap=None):
    """Swap regret of a decision maker taking ``response_of[p_i]`` in round i.

    From the definition (000 Definition 2.1, action swap regret): the rows
    are grouped by the action taken, and each action is swapped, as a whole,
    to the one action that gains most on its rows (or to ``swap[a]`` when
    given). ``response_of`` maps each prediction to an action index.
    """
    utility = np.asarray(utility, dtype=float)
    total = 0.0
    # rows of weight zero take no part (and their prediction may have no action)
    actions = np.array([response_of.get(float(t), -1) for t in p])
    for a in range(utility.shape[0]):
        rows = (actions == a) & (w > 0)
        if not rows.any():
            continue
        gains = [
            float(np.sum(w[rows] * (utility[b, y[rows]] - utility[a, y[rows]])))
            for b in range(utility.shape[0])
        ]
        total += gains[swap[a]] if swap is not None else max(gains)
    return total / float(np.sum(w))


def best_responses_reference(utility, v, tol=1e-12):
    """Per prediction ``v_k``, the actions of largest expected utility (within tol)."""
    utility = np.asarray(utility, dtype=float)
    out = []
    for t in v:
        values = [(1 - t) * u0 + t * u1 for u0, u1 in utility]
        top = max(values)
        out.append([a for a, x in enumerate(values) if x >= top - tol])
    return out


def cdl_task_search_bruteforce(y, p, w, levels=5, max_actions=3):
    """Largest action swap regret over small tasks, by exhaustive search.

    Every task of 2..``max_actions`` actions with utilities on the grid
    ``{0, 1/(levels-1), ..., 1}``, with every choice among the best
    responses at each distinct prediction (a tie may go either way). A lower
    bound on CDL, the supremum over all tasks and best responses.
    """
    import itertools

    y = np.asarray(y, dtype=int)
    grid = np.linspace(0.0, 1.0, levels)
    points = [(a, b) for a in grid for b in grid]
    v = np.unique(p[w > 0])
    best = 0.0
    for k in range(2, max_actions + 1):
        for task in itertools.combinations(points, k):
            choices = best_responses_reference(task, v)
            for pick in itertools.product(*choices):
                response_of = dict(zip(v.tolist(), pick))
                best = max(best, task_swap_regret_reference(task, response_of, y, p, w))
    return best


def smce_bernoulli_reference(values, u, scale):
    """smCE of one row per value, weight ``scale``, outcome ``u < values`` (the LP)."""
    values = np.asarray(values, dtype=float)
    y = (np.asarray(u) < values).astype(float)
    return smce_linprog(y, values, np.full(values.shape[0], float(scale)))
