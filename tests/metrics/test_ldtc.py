import time

import numpy as np
import pytest
from scipy.optimize import OptimizeResult

import skcal.metrics._ldtc as ldtc_module
from skcal import (
    cutoff_calibration_error,
    lower_distance_to_calibration,
    smooth_calibration_error,
)
from skcal._grouped import group

from cases import over_cases, random_case, random_cases, repeat_rows
from reference_ldtc import ldtc_dense_lp, ldtc_dual_objective

LP_TOL = 1e-6  # the bar; the solves agree to ~1e-12 in practice


def _grids(rng):
    """A uniform grid (as an int or as points) or an irregular one."""
    kind = rng.integers(3)
    m = int(rng.integers(1, 25))
    if kind == 0:
        return m, np.linspace(0, 1, m + 1)
    if kind == 1:
        return np.linspace(0, 1, m + 1), np.linspace(0, 1, m + 1)
    inner = np.sort(rng.choice(np.arange(1, 100), size=m, replace=False)) / 100
    points = np.concatenate([[0.0], inner, [1.0]])
    return points, points


CASES = random_cases(10, 300, max_n=40) + random_cases(11, 40, max_n=120)


@over_cases("index", range(len(CASES)))
def test_matches_dense_lp(index):
    y, p, w = CASES[index]
    grid, points = _grids(np.random.default_rng(index))
    value = lower_distance_to_calibration(y, p, sample_weight=w, grid=grid)
    assert value == pytest.approx(ldtc_dense_lp(y, p, w, points), abs=LP_TOL)
    assert 0.0 <= value <= 1.0


@over_cases("index", range(0, len(CASES), 3))
def test_merged_blocks_match_dense_lp(index, monkeypatch):
    # force the merge-and-refine path that large inputs take
    monkeypatch.setattr(ldtc_module, "_MERGE_ABOVE_COLUMNS_PER_POINT", 0)
    y, p, w = CASES[index]
    grid, points = _grids(np.random.default_rng(index))
    value = lower_distance_to_calibration(y, p, sample_weight=w, grid=grid)
    assert value == pytest.approx(ldtc_dense_lp(y, p, w, points), abs=LP_TOL)


def test_a_solve_without_verdict_is_retried_with_presolve(monkeypatch):
    # scipy 1.10's HiGHS can stop on a dCE program with "model_status
    # Unknown" (linprog status 4) at the tolerances used; the solve is then
    # repeated with presolve. Make every first attempt fail that way here.
    monkeypatch.setattr(ldtc_module, "_USE_LINPROG", True)  # HiGHS via linprog
    real = ldtc_module.linprog
    calls = []

    def unknown_first(*args, options, **kwargs):
        calls.append(options["presolve"])
        if not options["presolve"]:
            result = real(*args, options=options, **kwargs)
            return OptimizeResult({**result, "status": 4, "x": None})
        return real(*args, options=options, **kwargs)

    monkeypatch.setattr(ldtc_module, "linprog", unknown_first)
    for index in range(0, len(CASES), 20):
        y, p, w = CASES[index]
        value = lower_distance_to_calibration(y, p, sample_weight=w, grid=10)
        points = np.linspace(0, 1, 11)
        assert value == pytest.approx(ldtc_dense_lp(y, p, w, points), abs=LP_TOL)
    assert calls.count(True) == calls.count(False) > 0


@pytest.mark.parametrize("merge", [0, 16])
def test_dual_certificate_on_larger_data(merge, monkeypatch):
    # too big for the dense LP: the returned potentials are dual feasible and
    # their weak-duality bound meets the value (strong duality = optimality)
    monkeypatch.setattr(ldtc_module, "_MERGE_ABOVE_COLUMNS_PER_POINT", merge)
    rng = np.random.default_rng(3)
    for n, m in [(3000, 100), (2000, 37), (500, 250)]:
        p = np.round(rng.random(n), 3)
        y = (rng.random(n) < np.clip(p + rng.uniform(-0.2, 0.2), 0, 1)).astype(float)
        w = rng.exponential(size=n)
        u = np.linspace(0, 1, m + 1)
        g = group(y, p, w)
        values, wsum, wysum = g.values, g.weights, g.positives
        value, psi = ldtc_module._solve_on_grid(values, wsum - wysum, wysum, u)
        assert np.all((1 - u) * psi[0] + u * psi[1] <= 1e-9)
        assert ldtc_dual_objective(y, p, w, u, psi) == pytest.approx(value, abs=1e-8)
        assert value == pytest.approx(
            lower_distance_to_calibration(y, p, sample_weight=w, grid=m), abs=1e-9
        )


@pytest.mark.parametrize("eps", [0.0, 0.01, 0.05, 0.2, 0.45])
def test_lemma1_constant_prediction_against_fair_coin(eps):
    # 002 Lemma 1: v = 1/2 + eps, y ~ Bern(1/2) has dCE = eps exactly (Jensen
    # below, u = 1/2 above); 1/2 is on the grid, so dCE^U = eps too
    y = np.tile([0.0, 1.0], 50)
    p = np.full(100, 0.5 + eps)
    assert lower_distance_to_calibration(y, p) == pytest.approx(eps, abs=1e-12)
    assert lower_distance_to_calibration(y, p, grid=2) == pytest.approx(eps, abs=1e-12)


def test_shifted_uniform_is_shift():
    # Table 1's distribution (v ~ U[0, 1 - e], y ~ Bern(v + e)) with the
    # outcome frequencies exact: weights make E[y | v] = v + e at every v,
    # so dCE = e (Jensen below, u = v + e above)
    e = 0.01
    v = np.arange(0, 99) / 100
    y = np.concatenate([np.zeros(99), np.ones(99)])
    p = np.concatenate([v, v])
    w = np.concatenate([1 - (v + e), v + e])
    assert lower_distance_to_calibration(y, p, sample_weight=w) == pytest.approx(
        e, abs=1e-12
    )


def test_sandwich_of_lemma17():
    # dCE <= dCE^U <= dCE + h (002 Lemma 17): a fine grid's value is within
    # the coarse grid's bound, and refining a grid never increases the value
    rng = np.random.default_rng(5)
    for _ in range(40):
        y, p, w = random_case(rng, int(rng.integers(1, 60)))
        fine = lower_distance_to_calibration(y, p, sample_weight=w, grid=420)
        for m in (1, 3, 7, 10, 20):
            value, details = lower_distance_to_calibration(
                y, p, sample_weight=w, grid=m, return_details=True
            )
            lower, upper = details.bound
            assert upper == value and lower == pytest.approx(max(value - 1 / m, 0))
            # fine >= dCE >= lower; and 420 is a multiple of m: fine <= value
            assert lower - 1e-9 <= fine <= value + 1e-9


def test_jensen_and_trivial_coupling_bounds():
    # |E[y] - E[v]| <= dCE (Jensen, as in 002 Lemma 1) and
    # dCE^U <= E|v - y| (the coupling u = y), with equality on the grid {0, 1}
    rng = np.random.default_rng(6)
    for _ in range(100):
        y, p, w = random_case(rng, int(rng.integers(1, 50)))
        value = lower_distance_to_calibration(y, p, sample_weight=w)
        mean_gap = abs(np.sum(w * (y - p))) / w.sum()
        trivial = np.sum(w * np.abs(y - p)) / w.sum()
        assert mean_gap - 1e-12 <= value <= trivial + 1e-12
        assert lower_distance_to_calibration(
            y, p, sample_weight=w, grid=1
        ) == pytest.approx(trivial, abs=1e-12)


def test_smce_within_factor_two():
    # dCE / 2 <= smCE <= 2 dCE (002 Lemma 12), with dCE in [value - h, value]
    rng = np.random.default_rng(7)
    for _ in range(100):
        y, p, w = random_case(rng, int(rng.integers(1, 80)))
        _, details = lower_distance_to_calibration(
            y, p, sample_weight=w, grid=400, return_details=True
        )
        lower, upper = details.bound
        smce = smooth_calibration_error(y, p, sample_weight=w)
        assert lower / 2 - 1e-9 <= smce <= 2 * upper + 1e-9
        # and the tester's bound on cutoff: smCE <= 2 cutoff
        assert smce <= 2 * cutoff_calibration_error(y, p, sample_weight=w) + 1e-9


def test_calibrated_on_grid_is_zero():
    # predictions on the grid whose outcome frequencies match exactly
    y = np.array([0, 0, 0, 1, 0, 1, 1, 1, 1.0])
    p = np.array([0.25, 0.25, 0.25, 0.25, 0.5, 0.5, 1.0, 1.0, 1.0])
    assert lower_distance_to_calibration(y, p, grid=4) == pytest.approx(0, abs=1e-12)
    assert lower_distance_to_calibration([0, 1], [0.0, 1.0]) == 0.0
    assert lower_distance_to_calibration([1, 1], [0.0, 0.0]) == pytest.approx(1.0)


def test_integer_weights_equal_repetition():
    rng = np.random.default_rng(8)
    for _ in range(40):
        y, p, _ = random_case(rng, int(rng.integers(1, 30)))
        w = rng.integers(0, 4, y.shape[0]).astype(float)
        w[0] += 1
        yr, pr = repeat_rows(y, p, w)
        assert lower_distance_to_calibration(
            y, p, sample_weight=w
        ) == pytest.approx(lower_distance_to_calibration(yr, pr), abs=1e-12)


def test_invariances():
    rng = np.random.default_rng(9)
    y, p, w = random_case(rng, 60)
    v = lower_distance_to_calibration(y, p, sample_weight=w)
    perm = rng.permutation(60)
    assert lower_distance_to_calibration(
        y[perm], p[perm], sample_weight=w[perm]
    ) == pytest.approx(v, abs=1e-12)
    assert lower_distance_to_calibration(
        y, p, sample_weight=3.5 * w
    ) == pytest.approx(v, abs=1e-12)
    # relabelling with pos_label and predict_proba input
    labels = np.where(y == 1, "yes", "no")
    P = np.column_stack([1 - p, p])
    assert lower_distance_to_calibration(
        labels, P, sample_weight=w, pos_label="yes", labels=["no", "yes"]
    ) == pytest.approx(v, abs=1e-12)


def test_multiclass_top_label_matches_explicit():
    rng = np.random.default_rng(10)
    P = rng.dirichlet(np.ones(3), size=70)
    labels = rng.integers(0, 3, 70)
    conf, correct = P.max(axis=1), (P.argmax(axis=1) == labels).astype(float)
    assert lower_distance_to_calibration(labels, P) == pytest.approx(
        lower_distance_to_calibration(correct, conf), abs=1e-12
    )
    with pytest.raises(ValueError, match="multiclass='raise'"):
        lower_distance_to_calibration(labels, P, multiclass="raise")


def test_does_not_mutate_inputs():
    rng = np.random.default_rng(11)
    y, p, w = random_case(rng, 30)
    grid = np.linspace(0, 1, 11)
    copies = [a.copy() for a in (y, p, w, grid)]
    lower_distance_to_calibration(y, p, sample_weight=w, grid=grid)
    for a, c in zip((y, p, w, grid), copies):
        np.testing.assert_array_equal(a, c)


@pytest.mark.parametrize(
    "grid, error, match",
    [
        (0, ValueError, "positive number of intervals"),
        (-3, ValueError, "positive number of intervals"),
        (0.01, TypeError, "grid=round"),
        (True, TypeError, "grid must be an int"),
        ("fine", TypeError, "grid must be an int"),
        ([0.0, 0.5], ValueError, "start at 0 and end at 1"),
        ([0.1, 1.0], ValueError, "start at 0 and end at 1"),
        ([0.0, 0.6, 0.4, 1.0], ValueError, "strictly increasing"),
        ([0.0, 0.5, 0.5, 1.0], ValueError, "strictly increasing"),
        ([0.0, np.nan, 1.0], ValueError, "NaN"),
        ([1.0], ValueError, "at least 2 points"),
        ([[0.0, 1.0]], ValueError, "1-D"),
        (["a", "b"], TypeError, "numeric"),
    ],
)
def test_bad_grid(grid, error, match):
    with pytest.raises(error, match=match):
        lower_distance_to_calibration([0, 1], [0.2, 0.7], grid=grid)


def test_bad_input_is_rejected():
    with pytest.raises(ValueError, match=r"outside \[0, 1\]"):
        lower_distance_to_calibration([0, 1], [0.2, 1.5])
    with pytest.raises(ValueError, match="negative"):
        lower_distance_to_calibration([0, 1], [0.2, 0.5], sample_weight=[1, -1])
    with pytest.raises(ValueError, match="empty"):
        lower_distance_to_calibration([], [])


def test_single_sample_and_extremes():
    assert lower_distance_to_calibration([1], [0.3]) == pytest.approx(0.7)
    assert lower_distance_to_calibration([0], [0.3]) == pytest.approx(0.3)
    assert lower_distance_to_calibration([1, 0], [1.0, 0.0]) == 0.0
    # zero-weight rows do not count
    assert lower_distance_to_calibration(
        [1, 0, 1], [0.3, 0.9, 0.6], sample_weight=[1, 0, 0]
    ) == pytest.approx(0.7)


def test_scales_to_n_2_pow_14_in_seconds():
    # the bar: n = 2**14, h = 0.01 well under 30 s (about 0.05 s here)
    rng = np.random.default_rng(12)
    n = 2**14
    p = rng.uniform(0, 0.99, n)
    y = (rng.random(n) < p + 0.01).astype(float)
    start = time.perf_counter()
    value, details = lower_distance_to_calibration(y, p, return_details=True)
    lower, upper = details.bound
    assert time.perf_counter() - start < 30
    # the population value is 0.01; the sample's is close to it
    assert lower <= 0.01 + 0.02 and upper >= 0.01 - 0.02


@pytest.mark.parametrize("stride", [64, 1])
def test_sparse_grid_equals_the_full_grid(stride, monkeypatch):
    # fine grids solved on the points next to the data (plus a coarse subset,
    # none with stride 1, so that the column generation has work to do)
    # against one solve on every grid point; the extended potentials are a
    # dual certificate on the whole grid
    monkeypatch.setattr(ldtc_module, "_SPARSE_GRID_STRIDE", stride)
    rng = np.random.default_rng(21)
    calls = []
    solve = ldtc_module._solve_on_grid
    monkeypatch.setattr(
        ldtc_module, "_solve_on_grid", lambda *a: calls.append(a[3].shape[0]) or solve(*a)
    )
    for i in range(12):
        n = int(rng.integers(1, 40))
        m = int(rng.choice([300, 700, 1500]))
        y, p, w = random_case(rng, n)
        g = group(y, p, w)
        values, mass0, mass1 = g.values, g.weights - g.positives, g.positives
        u = np.linspace(0, 1, m + 1)
        value, psi = ldtc_module._solve_on_sparse_grid(values, mass0, mass1, u)
        full, _ = solve(values, mass0, mass1, u)
        assert value == pytest.approx(full, abs=1e-9), (i, n, m)
        assert np.all((1 - u) * psi[0] + u * psi[1] <= 1e-9)
        assert ldtc_dual_objective(y, p, w, u, psi) == pytest.approx(value, abs=1e-8)
    # the sub-grids were smaller than the grids, and some needed more solves
    assert min(calls) < 300
    if stride == 1:
        assert len(calls) > 12


def test_fine_grid_scales_with_the_data(monkeypatch):
    # issue 15: grid=10_000 at n=200 took 27 s (and 100_000 minutes and 2 GB);
    # the sparse solve depends on the occupied cells. Not a timing assertion:
    # the size of the largest program solved is what is checked.
    rng = np.random.default_rng(22)
    p = rng.random(200)
    y = (rng.random(200) < p).astype(int)
    sizes = []
    solve = ldtc_module._solve_on_grid
    monkeypatch.setattr(
        ldtc_module, "_solve_on_grid", lambda *a: sizes.append(a[3].shape[0]) or solve(*a)
    )
    value = lower_distance_to_calibration(y, p, grid=100_000)
    assert 0 <= value <= 1
    assert max(sizes) < 5_000
