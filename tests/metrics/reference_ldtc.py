"""Slow, obviously-correct twins of the distance to calibration (skcal/metrics/_ldtc.py).

Each is written straight from a definition in the papers, with no
attempt at speed, so that the fast paths can be checked against it.
"""

import numpy as np


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
