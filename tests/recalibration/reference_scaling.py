"""Slow, obviously-correct twins of the scaling recalibrators (skcal.recalibration._scaling).

Each twin writes the model and its penalised weighted log-loss row by row
with ``math`` (the logarithms floored at ``2.2e-16`` as documented), and
minimises it with a general-purpose optimiser on finite-difference
gradients: nothing is shared with the fast code but the definitions.
"""

import math

import numpy as np
from scipy.optimize import minimize

EPS = np.finfo(np.float64).eps


def flog(p):
    return math.log(max(p, EPS))


def log_sigmoid(s):
    return -math.log1p(math.exp(-s)) if s > 0 else s - math.log1p(math.exp(s))


def log_softmax_row(scores):
    m = max(scores)
    lse = m + math.log(sum(math.exp(s - m) for s in scores))
    return [s - lse for s in scores]


def rest(row, k):
    return sum(p for j, p in enumerate(row) if j != k)


def _minimise(f, x0, bounds=None):
    res = minimize(f, np.asarray(x0, float), method="L-BFGS-B", bounds=bounds,
                   options={"maxiter": 3000, "ftol": 1e-15, "gtol": 1e-9, "maxfun": 10**6})
    return res.x, res.fun


# --- one-vs-rest maps (sigmoid, beta) --------------------------------------------


def ovr_scores(kind, theta, row):
    """One score per problem: class 1 for two classes, else each class."""
    C = len(row)
    ks = [1] if C == 2 else list(range(C))
    K = len(ks)
    out = []
    for j, k in enumerate(ks):
        lp, lq = flog(row[k]), flog(rest(row, k))
        if kind == "sigmoid":
            out.append(theta[j] * (lp - lq) + theta[K + j])
        else:
            out.append(theta[j] * lp - theta[K + j] * lq + theta[2 * K + j])
    return out


def ovr_proba_row(kind, theta, row):
    s = ovr_scores(kind, theta, row)
    if len(row) == 2:
        return [math.exp(log_sigmoid(-s[0])), math.exp(log_sigmoid(s[0]))]
    logs = [log_sigmoid(v) for v in s]
    return [math.exp(v) for v in log_softmax_row(logs)]


def ovr_objective(kind, theta, P, y, w, smoothing):
    C = len(P[0])
    ks = [1] if C == 2 else list(range(C))
    W = sum(w)
    targets = {}
    for k in ks:
        n_pos = sum(wi for wi, yi in zip(w, y) if yi == k)
        n_neg = W - n_pos
        targets[k] = ((n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2)) if smoothing else (1.0, 0.0)
    total = 0.0
    for row, yi, wi in zip(P, y, w):
        s = ovr_scores(kind, theta, row)
        for j, k in enumerate(ks):
            t = targets[k][0] if yi == k else targets[k][1]
            total += wi * -(t * log_sigmoid(s[j]) + (1 - t) * log_sigmoid(-s[j]))
    return total / W


def fit_ovr(kind, P, y, w, smoothing=True):
    C = len(P[0])
    K = 1 if C == 2 else C
    if kind == "sigmoid":
        x0, bounds = [1.0] * K + [0.0] * K, None
    else:
        x0 = [1.0] * (2 * K) + [0.0] * K
        bounds = [(0, None)] * (2 * K) + [(None, None)] * K
    theta, value = _minimise(lambda t: ovr_objective(kind, t, P, y, w, smoothing), x0, bounds)
    return theta, value


# --- softmax maps (temperature, vector, matrix, Dirichlet) -----------------------


def affine_proba_row(W, b, row):
    L = [flog(p) for p in row]
    C = len(row)
    scores = [sum(W[k][j] * L[j] for j in range(C)) + b[k] for k in range(C)]
    return [math.exp(v) for v in log_softmax_row(scores)]


def affine_log_loss(W, b, P, y, w):
    """Weighted mean log-loss of ``softmax(log P W^T + b)``."""
    total = 0.0
    for row, yi, wi in zip(P, y, w):
        L = [flog(p) for p in row]
        C = len(row)
        scores = [sum(W[k][j] * L[j] for j in range(C)) + b[k] for k in range(C)]
        total += wi * -log_softmax_row(scores)[yi]
    return total / sum(w)


def penalty(kind, W, b, lam, mu):
    C = len(b)
    if kind == "l2":
        return lam * (sum((W[i][j] - (i == j)) ** 2 for i in range(C) for j in range(C))
                      + sum(v * v for v in b))
    if kind == "odir":
        off = sum(W[i][j] ** 2 for i in range(C) for j in range(C) if i != j)
        return lam / (C * (C - 1)) * off + mu / C * sum(v * v for v in b)
    if kind == "vector":
        return lam * (sum((W[i][i] - 1) ** 2 for i in range(C)) + sum(v * v for v in b))
    return 0.0


def fit_affine(kind, P, y, w, lam, mu=None, x0=None):
    """Minimise log-loss + penalty over (W, b) (``kind="vector"``: W diagonal)."""
    C = len(P[0])

    def unpack(t):
        if kind == "vector":
            return [[t[i] if i == j else 0.0 for j in range(C)] for i in range(C)], list(t[C:])
        return [list(t[i * C:(i + 1) * C]) for i in range(C)], list(t[C * C:])

    def f(t):
        W, b = unpack(t)
        return affine_log_loss(W, b, P, y, w) + penalty(kind, W, b, lam, mu)

    if x0 is None:
        x0 = [1.0] * C + [0.0] * C if kind == "vector" else list(np.eye(C).ravel()) + [0.0] * C
    t, value = _minimise(f, x0)
    W, b = unpack(t)
    return np.array(W), np.array(b), value


def temperature_objective(T, P, y, w):
    C = len(P[0])
    return affine_log_loss([[(i == j) / T for j in range(C)] for i in range(C)], [0.0] * C,
                           P, y, w)


def fit_temperature(P, y, w):
    """Scan log T on a grid, then refine with a bounded scalar search."""
    from scipy.optimize import minimize_scalar

    grid = np.exp(np.linspace(-5, 8, 300))
    values = [temperature_objective(T, P, y, w) for T in grid]
    i = int(np.argmin(values))
    lo, hi = math.log(grid[max(i - 1, 0)]), math.log(grid[min(i + 1, len(grid) - 1)])
    res = minimize_scalar(lambda u: temperature_objective(math.exp(u), P, y, w),
                          bounds=(lo, hi), method="bounded", options={"xatol": 1e-10})
    return math.exp(res.x), res.fun
