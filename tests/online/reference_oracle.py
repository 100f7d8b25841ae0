"""Slow, obviously-correct twins of the online oracle (skcal/online/_oracle.py).

Each is written straight from a definition in the papers, with no
attempt at speed, so that the fast paths can be checked against it.
"""

import numpy as np


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
