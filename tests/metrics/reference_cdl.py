"""Slow, obviously-correct twins of the calibration decision loss (skcal/metrics/_cdl.py).

Each is written straight from a definition in the papers, with no
attempt at speed, so that the fast paths can be checked against it.
"""

import numpy as np


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
