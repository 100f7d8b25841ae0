"""The dCE kernels (skcal/_kernels/_ldtc.pyx) against the array code they replaced.

``_solve_on_grid`` builds the flow program's split columns per block in
compiled loops, summing in numpy's pairwise order, instead of one array entry
per distinct (value, label). Its twin, ``reference.ldtc_solve_on_grid_arrays``,
is the array code as it was: both must hand HiGHS the same program, so the
values and potentials must be equal bit for bit, not only within tolerance.
The twin solves with ``scipy.optimize.linprog``, so these tests make
``_solve_on_grid`` do so too (``_USE_LINPROG``) and cut torn blocks as the
twin does (``_GRADE = None``); the HiGHS model refined in place that it
uses otherwise, and the graded cuts, are checked in tests/metrics/test_ldtc_solver.py.
"""

import tracemalloc

import numpy as np
import pytest

import skcal.metrics._ldtc as ldtc_module
from skcal import lower_distance_to_calibration
from skcal._grouped import group
from skcal._kernels import _ldtc

from cases import random_case
from reference_ldtc import ldtc_dense_lp, ldtc_solve_on_grid_arrays


def _grid(rng):
    """Uniform, irregular (some points at data-like values) or very coarse grids."""
    kind = rng.integers(4)
    if kind == 0:
        return np.linspace(0, 1, int(rng.choice([1, 2, 5, 10, 37, 100])) + 1)
    if kind == 1:
        m = int(rng.integers(1, 60))
        inner = np.sort(rng.choice(np.arange(1, 100), size=m, replace=False)) / 100
        return np.concatenate([[0.0], inner, [1.0]])
    if kind == 2:
        inner = np.unique(rng.random(int(rng.integers(1, 30))))
        return np.concatenate([[0.0], inner[(inner > 0) & (inner < 1)], [1.0]])
    return np.array([0.0, 1.0])


def _data(rng):
    """A grouped random case: ties, weights, n = 1, p in {0, 1}, one class, ..."""
    n = int(rng.choice([1, 2, 3, int(rng.integers(1, 80)), int(rng.integers(100, 3000))]))
    y, p, w = random_case(rng, n)
    if rng.random() < 0.2:  # finer ties than random_case's, many per cell
        p = np.round(rng.random(n), 3)
    g = group(y, p, w)
    return g.values, g.weights - g.positives, g.positives


@pytest.fixture(autouse=True)
def _linprog(monkeypatch):
    monkeypatch.setattr(ldtc_module, "_USE_LINPROG", True)
    monkeypatch.setattr(ldtc_module, "_MERGE_ABOVE_COLUMNS_PER_POINT", 100)
    # the twin cuts a torn block in three; the graded cut of _cut (more
    # pieces, same value to solver tolerance) is checked in test_ldtc_solver.py
    monkeypatch.setattr(ldtc_module, "_GRADE", None)


def _same(new, old):
    value, psi = new
    old_value, old_psi, _ = old
    assert value == old_value
    np.testing.assert_array_equal(psi, old_psi)


def test_solve_on_grid_is_the_array_code_bit_for_bit(monkeypatch):
    rng = np.random.default_rng(2024)
    n_cut = 0  # cases whose blocks were cut at least once
    for _ in range(400):
        values, mass0, mass1 = _data(rng)
        u = _grid(rng)
        # merging thresholds: every column its own block (large), merged rows
        # with refinement (0, 1), and the default
        merge = int(rng.choice([0, 1, 4, 100, 10**9]))
        monkeypatch.setattr(ldtc_module, "_MERGE_ABOVE_COLUMNS_PER_POINT", merge)
        new = ldtc_module._solve_on_grid(values, mass0, mass1, u)
        old = ldtc_solve_on_grid_arrays(values, mass0, mass1, u, merge_above=merge)
        _same(new, old)
        n_cut += old[2] > 1
    # the refinement (cut_blocks) ran in many of them
    assert n_cut > 40


def test_solve_on_grid_on_values_at_grid_points_and_ends(monkeypatch):
    # every value on a grid point (no split column at all), some on it, 0 and 1
    monkeypatch.setattr(ldtc_module, "_MERGE_ABOVE_COLUMNS_PER_POINT", 0)
    rng = np.random.default_rng(7)
    u = np.linspace(0, 1, 11)
    for _ in range(100):
        n = int(rng.integers(1, 200))
        on = rng.random() < 0.5
        p = rng.choice(u, n) if on else np.where(rng.random(n) < 0.5, rng.choice(u, n),
                                                 rng.random(n))
        y = (rng.random(n) < rng.random()).astype(float)
        w = rng.choice([0.0, 1.0, 2.5], n)
        w[0] = 1.0
        g = group(y, p, w)
        values, mass0, mass1 = g.values, g.weights - g.positives, g.positives
        new = ldtc_module._solve_on_grid(values, mass0, mass1, u)
        _same(new, ldtc_solve_on_grid_arrays(values, mass0, mass1, u, merge_above=0))
        assert new[0] == pytest.approx(ldtc_dense_lp(y, p, w, u), abs=1e-6)


def test_public_function_unchanged_including_the_sparse_grid(monkeypatch):
    # the whole call, fine grids included (4 K < M: the sub-grid path), with
    # the array code substituted for _solve_on_grid gives the same value
    rng = np.random.default_rng(11)
    cases = []
    for _ in range(60):
        y, p, w = random_case(rng, int(rng.integers(1, 300)))
        grid = int(rng.choice([100, 1000, 3000, 20000]))
        cases.append((y, p, w, grid))
    new = [lower_distance_to_calibration(y, p, sample_weight=w, grid=g)
           for y, p, w, g in cases]
    monkeypatch.setattr(
        ldtc_module,
        "_solve_on_grid",
        lambda values, mass0, mass1, u, totals=False, total=None: ldtc_solve_on_grid_arrays(
            values, mass0 - mass1 if totals else mass0, mass1, u, merge_above=100
        )[:2],
    )
    old = [lower_distance_to_calibration(y, p, sample_weight=w, grid=g)
           for y, p, w, g in cases]
    assert new == old


def test_pairwise_sums_are_numpy_sums():
    # split_supply's constant is np.sum(d * (u[k + 1] - v)) and block_sums'
    # totals np.add.reduceat, in numpy's summation order, at many lengths
    # (the pairwise sum changes shape at 8, 128 and every power of two above)
    rng = np.random.default_rng(3)
    u = np.array([0.0, 1.0])
    for n in [1, 2, 7, 8, 9, 15, 16, 17, 127, 128, 129, 130, 255, 256, 257, 1000,
              1031, 4096, 5000, 70001]:
        values = np.sort(rng.uniform(1e-9, 1 - 1e-9, n))
        mass = rng.exponential(size=n) * 10.0 ** rng.uniform(-8, 8, n)
        mass[rng.random(n) < 0.1] = 0.0
        scale = float(rng.uniform(0.5, 2.0))
        d = mass * scale
        used = d > 0
        supply, count = np.zeros(2), np.empty(2, dtype=np.intp)
        constant = _ldtc.split_supply(values, mass, u, scale, supply, count)
        assert constant == float(np.sum(d[used] * (1.0 - values[used])))
        assert count[0] == np.count_nonzero(used) and count[1] == 0
        sequential = 0.0  # np.add.at adds in order
        for x in d[used]:
            sequential += x
        assert supply[0] == 0.0 and supply[1] == sequential
        if not used.any():
            continue
        block_mass, block_cost = np.empty(1), np.empty(1)
        lo, hi = np.array([0], dtype=np.intp), np.array([n], dtype=np.intp)
        _ldtc.block_sums(values, mass, u, scale, lo, hi, np.zeros(1, dtype=np.intp),
                         np.array([used.sum()], dtype=np.intp), block_mass, block_cost)
        cost = 2.0 * values[used] - 0.0 - 1.0
        assert block_mass[0] == np.add.reduceat(d[used], [0])[0]
        assert block_cost[0] == np.add.reduceat(d[used] * cost, [0])[0] / block_mass[0]


def test_kernels_check_shapes():
    values, mass, u = np.array([0.2, 0.5]), np.ones(2), np.linspace(0, 1, 3)
    with pytest.raises(ValueError, match="shapes"):
        _ldtc.split_supply(values, np.ones(3), u, 1.0, np.zeros(3), np.empty(3, np.intp))
    with pytest.raises(ValueError, match="shapes"):
        _ldtc.split_supply(values, mass, u, 1.0, np.zeros(2), np.empty(3, np.intp))
    with pytest.raises(ValueError, match="shapes"):
        one = np.zeros(1, dtype=np.intp)
        _ldtc.block_sums(values, mass, u, 1.0, one, one, one, np.zeros(2, np.intp),
                         np.empty(1), np.empty(1))
    with pytest.raises(ValueError, match="shapes"):
        one = np.zeros(1, dtype=np.intp)
        _ldtc.cut_blocks(values, mass, u, 1.0, one, one, one, one, np.zeros(1), 1e-9,
                         np.empty((1, 5), np.intp))
    with pytest.raises(ValueError, match="shapes"):
        _ldtc.split_elements(values, mass, u, 1.0, np.empty(3, np.intp),
                             np.empty(3, np.intp))


def test_solve_on_grid_allocates_per_block_not_per_value(monkeypatch):
    # the program's arrays are per block and grid point: at 2e5 distinct
    # values and h = 0.01 the array code's peak was 119 bytes per value
    # (every column an entry of several arrays), the kernels' 7 (none per
    # value: about 1,850 blocks after 13 solves, each a column of every
    # linprog call). Not a timing: traced numpy allocations (HiGHS's own
    # memory is not traced). The HiGHS path: the simplex that comes first
    # (skcal._kernels._dce_simplex) keeps two doubles per split sample in
    # C memory, which tracemalloc does not see.
    monkeypatch.setattr(ldtc_module, "_USE_SIMPLEX", False)
    rng = np.random.default_rng(5)
    n = 200_000
    p = rng.random(n)
    y = (rng.random(n) < p).astype(float)
    g = group(y, p, np.ones(n))
    mass0, u = g.weights - g.positives, np.linspace(0, 1, 101)
    tracemalloc.start()
    try:
        ldtc_module._solve_on_grid(g.values, mass0, g.positives, u)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 12 * n  # bytes
