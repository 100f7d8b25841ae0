"""dCE's dedicated simplex (``skcal._kernels._dce_simplex``) against HiGHS.

``_solve_on_grid`` solves a fresh program with the simplex
(``_solve_by_simplex``) and hands it to HiGHS only when the simplex does
not certify its solution. Here the simplex alone must give the value of
the HiGHS path (``_solve_on_grid_highs``) and of the dense LP of Hu et al.,
Lemma 18 (``reference.ldtc_dense_lp``), with potentials that certify it by
the brute-force dual objective (``reference.ldtc_dual_objective``, a
minimum over every grid point), on random data: ties, zero and real
weights, n = 1, predictions at 0, 1 and on grid points, one class only,
uniform, uneven and coarse grids (M = 2, 3), data denser and sparser than
the grid.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skcal.metrics._ldtc as ldtc_module
from skcal import lower_distance_to_calibration
from skcal._grouped import group
from skcal._kernels import _dce_simplex

from cases import random_case
from reference_ldtc import ldtc_dense_lp, ldtc_dual_objective

TOL = 1e-9  # the brief's bar; measured differences are ~1e-16


def _grid(rng):
    kind = rng.integers(5)
    if kind == 0:
        return np.linspace(0, 1, int(rng.choice([1, 2, 3, 5, 10, 37, 100])) + 1)
    if kind == 1:  # uneven, on hundredths (data rounded to 2 digits lands on it)
        m = int(rng.integers(1, 60))
        inner = np.sort(rng.choice(np.arange(1, 100), size=m, replace=False)) / 100
        return np.concatenate([[0.0], inner, [1.0]])
    if kind == 2:  # uneven, anywhere
        inner = np.unique(rng.random(int(rng.integers(1, 30))))
        return np.concatenate([[0.0], inner[(inner > 0) & (inner < 1)], [1.0]])
    if kind == 3:  # far finer than most data
        return np.linspace(0, 1, int(rng.choice([300, 1000])) + 1)
    return np.array([0.0, 1.0])


def _data(rng):
    n = int(rng.choice([1, 2, 3, int(rng.integers(1, 80)), int(rng.integers(100, 5000))]))
    y, p, w = random_case(rng, n)
    if rng.random() < 0.2:  # on grid points of the uniform grids
        p = np.round(rng.random(n), int(rng.integers(1, 3)))
    return y, p, w


def _check(y, p, w, u, dense=False):
    """The simplex's value and potentials against HiGHS and the references;
    returns the value's difference from HiGHS."""
    g = group(y, p, w)
    values, mass0, mass1 = g.values, g.weights - g.positives, g.positives
    result = ldtc_module._solve_by_simplex(values, mass0, mass1, u)
    assert result is not None, "the simplex did not certify its solution"
    value, psi = result
    highs, _ = ldtc_module._solve_on_grid_highs(values, mass0, mass1, u)
    assert value == pytest.approx(highs, abs=TOL)
    # a certificate: dual feasible, and its objective (minimum over every
    # grid point, by brute force) meets the value
    assert psi.shape == (2, u.shape[0])
    assert np.all((1 - u) * psi[0] + u * psi[1] <= 1e-9)
    assert ldtc_dual_objective(y, p, w, u, psi) == pytest.approx(value, abs=TOL)
    if dense:
        assert value == pytest.approx(ldtc_dense_lp(y, p, w, u), abs=1e-7)
    return abs(value - highs)


def test_simplex_matches_highs_and_certifies():
    rng = np.random.default_rng(2026)
    worst = 0.0
    for _ in range(1500):
        y, p, w = _data(rng)
        u = _grid(rng)
        dense = y.shape[0] <= 30 and u.shape[0] <= 40
        worst = max(worst, _check(y, p, w, u, dense=dense))
    assert worst <= TOL


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(st.sampled_from([0.0, 0.25, 0.5, 1.0, 0.1, 0.9]),
                      st.floats(0.0, 1.0)),
            st.integers(0, 1),
            st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.7]),
        ),
        min_size=1,
        max_size=25,
    ),
    st.lists(st.floats(0.01, 0.99), max_size=8),
)
def test_simplex_equals_the_dense_lp(rows, inner):
    p = np.array([r[0] for r in rows])
    y = np.array([r[1] for r in rows], dtype=float)
    w = np.array([r[2] for r in rows])
    if w.sum() == 0:
        w[0] = 1.0
    u = np.unique(np.concatenate([[0.0, 1.0], inner, [0.25, 0.5][: len(inner) % 3]]))
    _check(y, p, w, u, dense=True)


def test_simplex_on_dense_data_and_coarse_grids():
    rng = np.random.default_rng(7)
    for n, M in ((20_000, 2), (20_000, 3), (50_000, 101), (3, 1001), (200, 5001)):
        p = rng.random(n)
        y = (rng.random(n) < p ** 1.3).astype(float)
        _check(y, p, np.ones(n), np.linspace(0, 1, M))


def test_one_class_and_end_points():
    u = np.linspace(0, 1, 11)
    for y, p in (
        ([1.0], [0.3]),
        ([0.0], [0.0]),
        ([1.0], [1.0]),
        ([0.0, 0.0, 0.0], [0.0, 0.5, 1.0]),
        ([1.0, 1.0], [0.05, 0.95]),
        ([0.0, 1.0, 0.0, 1.0], [0.0, 0.0, 1.0, 1.0]),
    ):
        y, p = np.array(y), np.array(p)
        _check(y, p, np.ones(y.shape[0]), u, dense=True)


def test_public_function_uses_the_simplex(monkeypatch):
    rng = np.random.default_rng(0)
    p = rng.random(10_000)
    y = (rng.random(10_000) < np.clip(p + 0.03, 0, 1)).astype(int)
    counts = {"solves": 0, "fallbacks": 0}
    monkeypatch.setattr(ldtc_module, "simplex_counts", counts)
    value = lower_distance_to_calibration(y, p)
    assert type(value) is float
    assert counts == {"solves": 1, "fallbacks": 0}
    assert value == lower_distance_to_calibration(y, p)  # no state: bit for bit
    monkeypatch.setattr(ldtc_module, "_USE_SIMPLEX", False)
    assert value == pytest.approx(lower_distance_to_calibration(y, p), abs=TOL)
    assert counts["solves"] == 2


@pytest.mark.parametrize(
    "setting", [("_SIMPLEX_ITERATIONS_PER_POINT", 0), ("_SIMPLEX_GAP_TOL", -1.0)]
)
def test_uncertified_solves_go_to_highs(monkeypatch, setting):
    # the iteration cap reached, or a certificate that fails: HiGHS answers
    rng = np.random.default_rng(3)
    y, p, w = random_case(rng, 500)
    p = rng.random(500)
    g = group(y, p, w)
    values, mass0, mass1 = g.values, g.weights - g.positives, g.positives
    u = np.linspace(0, 1, 21)
    highs = ldtc_module._solve_on_grid_highs(values, mass0, mass1, u)
    counts = {"solves": 0, "fallbacks": 0}
    monkeypatch.setattr(ldtc_module, "simplex_counts", counts)
    monkeypatch.setattr(ldtc_module, *setting)
    assert ldtc_module._solve_by_simplex(values, mass0, mass1, u) is None
    value, psi = ldtc_module._solve_on_grid(values, mass0, mass1, u)
    assert counts == {"solves": 1, "fallbacks": 1}
    assert value == highs[0]
    np.testing.assert_array_equal(psi, highs[1])


def test_kernel_reports_status_and_certificate():
    rng = np.random.default_rng(11)
    values = np.sort(rng.random(300))
    y = (rng.random(300) < values).astype(float)
    u = np.linspace(0, 1, 11)
    psi, out = np.empty(22), np.empty(6)
    assert _dce_simplex.simplex(values, 1 - y, y, u, 1.0, 10**6, 1e-11, 4.0, psi, out) == 0
    primal, constant, dual, violation, iterations, flips = out
    assert abs(primal + constant - dual) < 1e-10
    assert 0 <= violation < 1e-12 and 0 < flips < iterations
    # a cap of one iteration: not optimal yet
    assert _dce_simplex.simplex(values, 1 - y, y, u, 1.0, 1, 1e-11, 4.0, psi, out) == 1


def test_kernel_checks_shapes():
    values = np.array([0.2, 0.7])
    u = np.linspace(0, 1, 3)
    with pytest.raises(ValueError, match="shapes"):
        _dce_simplex.simplex(values, np.ones(3), np.ones(2), u, 1.0, 10, 0.0, 4.0,
                             np.empty(6), np.empty(6))
    with pytest.raises(ValueError, match="shapes"):
        _dce_simplex.simplex(values, np.ones(2), np.ones(2), u, 1.0, 10, 0.0, 4.0,
                             np.empty(5), np.empty(6))
    with pytest.raises(ValueError, match="shapes"):
        _dce_simplex.simplex(values, np.ones(2), np.ones(2), u[:1], 1.0, 10, 0.0, 4.0,
                             np.empty(2), np.empty(6))


def test_simplex_with_weights_over_many_orders_of_magnitude():
    rng = np.random.default_rng(17)
    for _ in range(40):
        n = int(rng.integers(1, 2000))
        p = rng.random(n) if rng.random() < 0.5 else np.round(rng.random(n), 2)
        y = (rng.random(n) < rng.random()).astype(float)
        w = np.exp(rng.uniform(-20, 20, n))
        M = int(rng.choice([2, 3, 11, 101]))
        _check(y, p, w, np.linspace(0, 1, M))


def test_totals_read_in_the_kernel_match_the_array_of_negatives():
    # ldtc_core and the public function pass the statistic's weights as
    # totals (label 0's masses formed in the kernel, no array of them): the
    # same program as with the array, so, given one divisor, the same
    # solution bit for bit; and the public value is the HiGHS path's
    rng = np.random.default_rng(33)
    for _ in range(150):
        y, p, w = _data(rng)
        u = _grid(rng)
        g = group(y, p, w)
        K, M = g.values.shape[0], u.shape[0]
        mass0 = g.weights - g.positives
        divisor = float((mass0.sum() + g.positives.sum()) / K)
        runs = []
        for first, totals in ((mass0, False), (g.weights, True)):
            potentials, out = np.empty(2 * M), np.empty(6)
            status = _dce_simplex.simplex(
                g.values, first, g.positives, u, divisor,
                ldtc_module._SIMPLEX_ITERATIONS_PER_POINT * M, ldtc_module._SIMPLEX_TOL,
                ldtc_module._SIMPLEX_PENALTY,
                potentials, out, totals,
            )
            runs.append((status, potentials, out))
        assert runs[0][0] == runs[1][0]
        np.testing.assert_array_equal(runs[0][1], runs[1][1])
        np.testing.assert_array_equal(runs[0][2], runs[1][2])
        value = ldtc_module._solve_on_sparse_grid(
            g.values, g.weights, g.positives, u, totals=True
        )[0]
        highs = ldtc_module._solve_on_grid_highs(g.values, mass0, g.positives, u)[0]
        assert value == pytest.approx(highs, abs=TOL)


@pytest.mark.parametrize("totals", [False, True])
def test_masses_that_vanish_when_divided_take_no_slot(totals):
    # the kernel sizes the pieces' slots by m > 0, but a piece needs
    # m / divisor > 0: a mass whose quotient underflows to 0 leaves its slot
    # unused and is no piece, as a zero mass is (the same program, bit for
    # bit); a tiny mass that does not underflow stays one
    rng = np.random.default_rng(5)
    n, M = 400, 11
    values = np.sort(rng.random(n))
    y = (rng.random(n) < values).astype(float)
    u = np.linspace(0, 1, M)
    divisor = 2.0**40
    runs = []
    for tiny in (0.0, 5e-324, 1e-300):
        mass1 = y.copy()
        mass0 = 1.0 - y
        mass1[7] = tiny if y[7] else 0.0       # a value with only a tiny mass
        mass0[7] = 0.0 if y[7] else tiny
        first = mass0 + mass1 if totals else mass0
        potentials, out = np.empty(2 * M), np.empty(6)
        status = _dce_simplex.simplex(
            values, first, mass1, u, divisor, 10**6, 1e-11, 4.0, potentials, out, totals
        )
        assert status == 0
        runs.append((potentials.copy(), out.copy()))
    # 5e-324 / 2**40 underflows: the same program as a zero mass
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    np.testing.assert_array_equal(runs[0][1], runs[1][1])
    # 1e-300 / 2**40 does not: a piece of its own, the same optimum to rounding
    assert runs[2][1][0] + runs[2][1][1] == pytest.approx(runs[0][1][0] + runs[0][1][1], abs=1e-12)


@pytest.mark.parametrize("totals", [False, True])
def test_divisor_a_power_of_two_multiplies_as_it_divides(totals):
    # a power-of-two divisor is applied as a product with its exact
    # reciprocal, any other by division: integer masses m over 2**e and 3 m
    # over 3 * 2**e are the same exact quotients, so the two paths build the
    # same program and reach the same solution bit for bit (the dual
    # objective, summed in the masses' scale, agrees to rounding)
    rng = np.random.default_rng(41)
    for _ in range(60):
        n = int(rng.integers(1, 3000))
        values = np.unique(np.round(rng.random(n), int(rng.integers(1, 6))))
        K = values.shape[0]
        mass1 = rng.integers(0, 5, K).astype(float)
        mass0 = rng.integers(0, 5, K).astype(float)
        mass0[(mass0 + mass1) == 0] = 1.0
        u = _grid(rng)
        M = u.shape[0]
        scale = 2.0 ** int(rng.integers(-30, 30))
        runs = []
        for factor in (1.0, 3.0):
            first = factor * (mass0 + mass1) if totals else factor * mass0
            potentials, out = np.empty(2 * M), np.empty(6)
            status = _dce_simplex.simplex(
                values, first, factor * mass1, u, factor * scale, 10**6,
                ldtc_module._SIMPLEX_TOL, ldtc_module._SIMPLEX_PENALTY,
                potentials, out, totals,
            )
            runs.append((status, potentials, out))
        assert runs[0][0] == runs[1][0]
        np.testing.assert_array_equal(runs[0][1], runs[1][1])
        np.testing.assert_array_equal(runs[0][2][[0, 1, 3, 4, 5]], runs[1][2][[0, 1, 3, 4, 5]])
        assert runs[0][2][2] == pytest.approx(runs[1][2][2], rel=1e-12, abs=1e-12)


def test_simplex_with_work_memory_in_huge_pages():
    # 3 * 10**5 distinct predictions: the pieces (16 bytes a value) are a
    # block of 4 MiB or more, which the kernel allocates as numpy allocates
    # large arrays (huge pages advised, _kernels/_memory.pxd); the same
    # value as HiGHS
    rng = np.random.default_rng(43)
    n = 300_000
    p = rng.random(n)
    y = (rng.random(n) < p**1.2).astype(float)
    g = group(y, p, np.ones(n))
    u = np.linspace(0, 1, 101)
    mass0, mass1 = g.weights - g.positives, g.positives
    value = ldtc_module._solve_by_simplex(g.values, mass0, mass1, u)[0]
    highs = ldtc_module._solve_on_grid_highs(g.values, mass0, mass1, u)[0]
    assert value == pytest.approx(highs, abs=TOL)
