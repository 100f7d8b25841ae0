"""Slow twin of the tolerant dCE test's branch and bound: every draw solved."""

import numpy as np
import pytest

from skcal.measures import LowerDistanceToCalibration
from skcal.metrics._ldtc import _solve_on_sparse_grid, sessions_available

# The branch and bound re-solves draws in a HiGHS session, which needs
# HiGHS's own binding (SciPy >= 1.15); without it the tester and the
# interval solve every draw (the paths of the other tests), and so would
# the twins of the tests marked with this.
needs_sessions = pytest.mark.skipif(
    not sessions_available(1000, 101),
    reason="no HiGHS session here (SciPy < 1.15): every draw is solved",
)


def random_predictions(rng, n, kind):
    """``n`` predictions: uniform (kind 0), ties with 0 and 1 among them (1),
    one value (2), Beta(0.3, 0.3), crowding 0 and 1 (3), or two decimals (4)."""
    if kind == 0:
        return rng.random(n)
    if kind == 1:
        return rng.choice([0.0, 0.2, 0.5, 0.5, 0.7, 1.0], n)
    if kind == 2:
        return np.full(n, rng.random())
    if kind == 3:
        return rng.beta(0.3, 0.3, n)
    return np.round(rng.random(n), 2)


def random_weights(rng, n, kind):
    """None (kind 0), integers 0 to 3 with a 1 somewhere (1), or in [0.1, 1.1) (2)."""
    if kind == 1:
        w = rng.integers(0, 4, n).astype(float)
        w[rng.integers(n)] = 1.0
        return w
    return rng.random(n) + 0.1 if kind == 2 else None


def bound_case(rng, i, odd_weights=None):
    """A small case for the bound checks: ``(y, p, w, measure)``.

    Predictions with 0 and 1 among them (every third case), shifted
    outcomes, integer weights with zeros on odd ``i`` and ``odd_weights``
    (None or ``"random"``: positive random weights) on even ``i``, and a
    grid of at most 4 times the distinct predictions (the sessions' limit).
    """
    n = [5, 20, 80, 200][i % 4]
    p = rng.choice([0.0, 1.0, *rng.random(n)], n) if i % 3 == 0 else rng.random(n)
    y = (rng.random(n) < np.clip(p + [0.0, 0.1, -0.2][i % 3], 0, 1)).astype(float)
    if i % 2:
        w = rng.integers(0, 3, n).astype(float)
    else:
        w = None if odd_weights is None else rng.random(n)
    if w is not None:
        w[0] = 1.0
    K = len(np.unique(p))
    measure = LowerDistanceToCalibration(grid=int(rng.integers(1, min(4 * K, 60))))
    return y, p, w, measure


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


def check_bounds(draws, n_certified=4):
    """lower <= exact <= upper on a draw set, from certificates of other draws.

    The first ``n_certified`` draws are solved (their certificates join the
    reference's); every other draw's bounds from all of them
    (``skcal.tester._dcebound._bound_checks``) must hold its exact value.
    Returns how many draws were checked and how many had bounds closer
    than half their value.
    """
    from skcal.tester._dcebound import _bound_checks

    for b in range(n_certified):
        draws._solve(b)
    index = np.arange(n_certified, draws.size)
    lower, exact, upper = _bound_checks(draws, index)
    assert np.all(lower <= exact + 1e-12)
    assert np.all(exact <= upper + 1e-12)
    return index.shape[0], int(np.count_nonzero(upper - lower < 0.5 * exact))
