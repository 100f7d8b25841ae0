"""Slow twin of the tolerant dCE test's branch and bound: every draw solved."""

import numpy as np

from skcal.metrics._ldtc import _solve_on_sparse_grid


def full_null(resampler, seeds, points):
    """Every null draw of the tolerant dCE test, by fresh solves, sorted.

    The masses of each draw are drawn from its seed as the tester draws them
    and solved by the public function's solver (a new program per draw), so
    the values agree with the tester's to solver tolerance, not bit for bit.
    """
    G = resampler.G
    values = []
    for seed in seeds:
        m1 = resampler.positives(seed)
        values.append(_solve_on_sparse_grid(G.values, G.weights - m1, m1, points)[0])
    return np.sort(np.array(values))


def bounds_by_definition(values, weights, positives, u, psi, t):
    """The lower and upper bound of one certificate on one draw, literally.

    Lower: ``sum_i (d_i / D) min_j (|v_i - u_j| + psi[y_i, j])`` with ``psi``
    lowered to feasibility at each point. Upper: the repaired sinks of ``t``
    and two 1-D transports, each by sorting all atoms and integrating the
    difference of the cumulative masses.
    """
    total = weights.sum()
    excess = np.maximum((1 - u) * psi[0] + u * psi[1], 0.0)
    psi = psi - excess
    lower = 0.0
    for label, mass in ((0, weights - positives), (1, positives)):
        cost = np.abs(values[:, None] - u[None, :]) + psi[label][None, :]
        lower += float(np.sum(mass / total * cost.min(axis=1)))
    t = t / t.sum()
    a = float(np.sum((1 - u) * t))
    c = 1 - a
    C = positives.sum() / total
    A = 1 - C
    sinks0, sinks1 = (1 - u) * t, u * t
    if C >= c:
        s = A / a if a > 0 else 0.0
        sinks0, sinks1 = s * sinks0, s * sinks1
        sinks1[-1] += C - s * c
    else:
        s = C / c
        sinks0, sinks1 = s * sinks0, s * sinks1
        sinks0[0] += A - s * a
    upper = 0.0
    for mass, sinks in ((weights - positives, sinks0), (positives, sinks1)):
        x = np.concatenate([values, u])
        m = np.concatenate([mass / total, -sinks])
        order = np.argsort(x, kind="stable")
        F = np.cumsum(m[order])
        upper += float(np.sum(np.abs(F[:-1]) * np.diff(x[order])))
    return lower, upper
