"""Slow, obviously-correct twins of patching (skcal/recalibration/_patching.py).

Each is written straight from a definition in the papers, with no
attempt at speed, so that the fast paths can be checked against it.
"""

import numpy as np

from reference_utilities import predicted_and_realised_bruteforce, utility_vector_bruteforce


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
