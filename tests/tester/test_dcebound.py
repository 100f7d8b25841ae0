"""The tolerant dCE test's branch and bound over its null draws.

``CalibrationTester(measure="dce", tolerance > 0)`` solves only the draws
its threshold and p-value need (``skcal.tester._dcebound``); everything it
reports must be what solving every draw gives, bit for bit, and
``null_statistics_`` must hold every draw's exact value.
"""

import pickle

import numpy as np
import pytest
from sklearn.base import clone

import skcal.tester._dcebound as dcebound
from skcal import CalibrationTester
from skcal.measures import LowerDistanceToCalibration
from skcal.metrics import _ldtc
from skcal.metrics._ldtc import FixedStartSession, grid_points
from skcal.tester._null import _prepare, _seeds
from skcal.tester._tolerant import (
    _smallest_rejecting_level,
    _tolerant_min_epsilon,
    _TolerantRule,
)

from reference_dcebound import (
    bound_case,
    bounds_by_definition,
    check_bounds,
    full_null,
    needs_sessions,
    random_predictions,
    random_weights,
)

pytestmark = needs_sessions


def _case(rng, i):
    """Data, weights and test settings: ties, zero weights, p in {0, 1}, n = 1."""
    n = [1, 2, 3, 5, 8, 13, 30, 60][i % 8]
    p = random_predictions(rng, n, (i // 8) % 4)
    mode = i % 3
    if mode == 0:  # calibrated
        y = (rng.random(n) < p).astype(float)
    elif mode == 1:  # shifted
        y = (rng.random(n) < np.clip(p + 0.3, 0, 1)).astype(float)
    else:  # against the predictions: the p-value's bisection has work
        y = (p < 0.5).astype(float)
    w = random_weights(rng, n, i % 5 if i % 5 < 3 else 0)
    K = len(np.unique(p))
    grid = int(rng.integers(1, 4 * K)) if i % 7 else np.array([0.0, 0.3, 1.0])
    alpha = [0.05, 0.1, 0.2][i % 3]
    tolerance = [0.001, 0.01, 0.05][(i // 3) % 3]
    B = [19, 39, 99][(i // 2) % 3]
    return y, p, w, grid, alpha, tolerance, B


def _moderate_case(rng, i):
    """n = 100 or 200, shifted so that the statistic nears the thresholds."""
    n = [100, 200][i % 2]
    p = rng.random(n)
    shift = [0.1, 0.15, 0.2, 0.25][(i // 2) % 4]
    y = (rng.random(n) < np.clip(p + shift, 0, 1)).astype(float)
    w = rng.integers(0, 3, n).astype(float) if i % 3 == 0 else None
    if w is not None:
        w[0] = 1.0
    return y, p, w, 20, [0.05, 0.1][i % 2], [0.001, 0.01][(i // 8) % 2], 99


def _run(y, p, w, grid, alpha, tolerance, B, seed):
    """The tolerant dCE test as CalibrationTester._fit runs it, by parts."""
    measure = LowerDistanceToCalibration(grid=grid)
    data = _prepare(measure, y, p, w, None, None)
    seeds = _seeds(seed, B)
    null = dcebound._dce_null("dce", measure, data, seeds)
    assert null is not None
    rule = _TolerantRule("dce", measure._lipschitz, tolerance, data, null)
    threshold = rule(alpha)
    p_value = _smallest_rejecting_level(data.statistic, rule)
    min_epsilon = _tolerant_min_epsilon("dce", threshold, alpha, data)
    solved = B if isinstance(null, np.ndarray) else null.n_solved
    values = null if isinstance(null, np.ndarray) else null.sorted_values()
    answer = (threshold, p_value, data.statistic <= threshold, min_epsilon)
    return answer, values, solved, (data, seeds, grid_points(grid))


def _compare(monkeypatch, n_cases, seed):
    """Branch and bound against the full path; ``(cases differing, solved, drawn)``."""
    rng = np.random.default_rng(seed)
    differ, solved_total, drawn = 0, 0, 0
    for i in range(n_cases):
        case = _case(rng, i) if i % 4 else _moderate_case(rng, i // 4)
        monkeypatch.setattr(dcebound, "_BRANCH_AND_BOUND", True)
        fast, fast_values, solved, _ = _run(*case, seed=i)
        monkeypatch.setattr(dcebound, "_BRANCH_AND_BOUND", False)
        full, full_values, _, _ = _run(*case, seed=i)
        solved_total += solved
        drawn += case[-1]
        same = fast == full and np.array_equal(fast_values, full_values)
        differ += not same
    return differ, solved_total, drawn


def test_same_answers_as_every_draw_solved(monkeypatch):
    differ, solved, drawn = _compare(monkeypatch, 96, seed=0)
    assert differ == 0
    # the comparison is not vacuous: most draws were never solved at fit
    assert solved < 0.5 * drawn


@pytest.mark.parametrize("broken", ["upper", "lower"])
def test_the_comparison_fails_when_needed_draws_are_pruned(monkeypatch, broken):
    # bounds that are wrong (upper 10% too low, lower 0.02 too high) prune
    # draws the answers need, and the comparison above sees it (far worse
    # bounds contradict each other, and the branch and bound then solves
    # every draw: its fallback)
    if broken == "upper":
        real = dcebound._DceNull._upper
        monkeypatch.setattr(
            dcebound._DceNull, "_upper", lambda self, m1, t: 0.9 * real(self, m1, t)
        )
    else:
        real = dcebound._DceNull._lower
        monkeypatch.setattr(
            dcebound._DceNull, "_lower", lambda self, m1, g0, g1: real(self, m1, g0, g1) + 0.02
        )
    differ, _, _ = _compare(monkeypatch, 32, seed=0)
    assert differ > 0


def test_draws_agree_with_fresh_solves():
    rng = np.random.default_rng(1)
    for i in range(24):
        y, p, w, grid, alpha, tolerance, B = _case(rng, i)
        _, values, _, (data, seeds, points) = _run(y, p, w, grid, alpha, tolerance, B, i)
        np.testing.assert_allclose(
            values, full_null(data.resampler, seeds, points), rtol=1e-9, atol=1e-12
        )


def test_bounds_hold_on_random_draws():
    """lower <= exact <= upper for certificates of other draws, and by definition."""
    rng = np.random.default_rng(2)
    checked = tight = 0
    for i in range(40):
        y, p, w, measure = bound_case(rng, i)
        data = _prepare(measure, y, p, w, None, None)
        null = dcebound._DceNull(data.resampler, _seeds(i, 20), grid_points(measure.grid))
        # certificates of four draws and of the mean draw
        counts = check_bounds(null)
        checked, tight = checked + counts[0], tight + counts[1]
        # the vectorised bounds are the literal formulas
        G = data.resampler.G
        m1 = data.resampler.positives(null.seeds[7])
        pool = null._certificates()
        _, psi, t_raw = pool.session.certified(G.weights - m1, m1)
        m2 = data.resampler.positives(null.seeds[9])
        literal = bounds_by_definition(G.values, G.weights, m2, null.points, psi, t_raw)
        pool.add(psi, t_raw)
        g0, g1, t = pool.items[-1]
        assert null._lower(m2, g0, g1) == pytest.approx(literal[0], rel=1e-9, abs=1e-12)
        assert null._upper(m2[None, :], t)[0] == pytest.approx(
            literal[1], rel=1e-9, abs=1e-12
        )
    # the bounds are not vacuous either
    assert tight > checked // 4


def test_fixed_start_values_do_not_depend_on_the_order():
    rng = np.random.default_rng(3)
    n = 400
    p = rng.random(n)
    y = (rng.random(n) < p).astype(float)
    data = _prepare(LowerDistanceToCalibration(), y, p, None, None, None)
    G = data.resampler.G
    u = grid_points(100)
    draws = [data.resampler.positives(s) for s in _seeds(0, 12)]
    mean = (G.weights * (1 - G.values), G.weights * G.values)
    one = FixedStartSession(G.values, u, mean)
    forward = [one.certified(G.weights - m, m)[0] for m in draws]
    other = FixedStartSession(G.values, u, mean)
    backward = [other.certified(G.weights - m, m)[0] for m in draws[::-1]][::-1]
    assert forward == backward
    np.testing.assert_allclose(forward, [ _ldtc._solve_on_sparse_grid(
        G.values, G.weights - m, m, u)[0] for m in draws], rtol=1e-9)


def _tester_pair(monkeypatch, y, p, w, **params):
    """Branch and bound, every draw solved, and the interval as before (every
    resample solved by ``ldtc_core``, the public ``interval``'s path)."""
    out = []
    real = dcebound.dce_interval_draws
    for bb, before in ((True, False), (False, False), (True, True)):
        monkeypatch.setattr(dcebound, "_BRANCH_AND_BOUND", bb)
        monkeypatch.setattr(
            dcebound, "dce_interval_draws",
            (lambda measure, statistic: None) if before else real,
        )
        out.append(
            CalibrationTester(measure="dce", **params).fit(y, p, sample_weight=w)
        )
    return out


@pytest.mark.parametrize("shift", [0.0, 0.25])
def test_tester_reports_and_null_statistics(monkeypatch, shift):
    rng = np.random.default_rng(4)
    n = 120
    p = rng.random(n)
    y = (rng.random(n) < np.clip(p + shift, 0, 1)).astype(float)
    w = rng.integers(0, 3, n).astype(float)
    w[0] = 1.0
    params = dict(tolerance=0.01, n_resamples=59, alpha=0.1, random_state=5,
                  measure_params={"grid": 40})
    fast, full, before = _tester_pair(monkeypatch, y, p, w, **params)
    lazy = fast.__dict__["_null_statistics"]
    assert isinstance(lazy, dcebound._DceNull) and lazy.n_solved < 59
    for name in ("threshold_", "p_value_", "min_epsilon_", "n_resamples_", "statistic_"):
        assert getattr(fast, name) == getattr(full, name) == getattr(before, name)
    assert fast.result_.calibrated == full.result_.calibrated == before.result_.calibrated
    # the interval: that of every draw solved, bit for bit, and within solver
    # rounding of the one before (see test_dce_interval.py)
    assert fast.result_.interval == full.result_.interval
    np.testing.assert_allclose(
        fast.result_.interval, before.result_.interval, rtol=1e-10, atol=1e-12
    )
    assert (fast.result_.interval[0] == 0) == (before.result_.interval[0] == 0) == (shift == 0)
    # pickled and cloned before the null is read: the same values after
    copy = pickle.loads(pickle.dumps(fast))
    assert clone(fast).get_params() == fast.get_params()
    np.testing.assert_array_equal(fast.null_statistics_, full.null_statistics_)
    np.testing.assert_array_equal(copy.null_statistics_, full.null_statistics_)
    assert fast.null_statistics_ is fast.null_statistics_  # solved once
    with pytest.raises(AttributeError):
        _ = CalibrationTester().null_statistics_
