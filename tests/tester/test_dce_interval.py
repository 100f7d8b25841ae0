"""The branch and bound of dCE's bootstrap interval, as the tester reads it.

``CalibrationTester`` reports ``(low, high)`` of the measure's interval; for
dCE it solves the bootstrap resamples and the calibrated-null draws only
where their bounds do not settle the two ends
(``skcal.tester._dcebound.dce_interval_draws``). The ends must be those of
solving every draw with the same solver, bit for bit, and within solver
rounding of the public ``interval`` (a warm-started solve per draw). The
tester's own results with it: ``test_dcebound.py``.
"""

import numpy as np
import pytest

import skcal.metrics._ldtc as _ldtc
import skcal.tester._dcebound as dcebound
from skcal._interval import measure_interval
from skcal.measures import LowerDistanceToCalibration

from reference_dcebound import (
    bound_case,
    bounds_by_definition,
    check_bounds,
    needs_sessions,
    random_predictions,
    random_weights,
)

pytestmark = needs_sessions

# Agreement of the ends with the public interval's (ldtc_core's warm-started
# solves against FixedStartSession's): measured within 5.6e-13 relative on
# 173 random cases (benchmarks/bench_tester.py --dce-interval-agreement; the
# solver works to 1e-10), except where a null draw ties the statistic to
# rounding and the rank test reads the last bits (1 case: low 0.045 against
# 0). Asserted with the solver's tolerance on cases without such a tie.
_RTOL, _ATOL = 1e-10, 1e-12


def _case(rng, i):
    """Data and interval settings: ties, zero weights, p in {0, 1}, n = 1."""
    n = [1, 2, 3, 8, 30, 60, 100, 150][i % 8]
    p = random_predictions(rng, n, [0, 3, 4, 1, 2][(i // 8) % 5])
    shift = [0.0, 0.15, -0.3, 0.4][i % 4]
    y = (rng.random(n) < np.clip(p + shift, 0, 1)).astype(float)
    if i % 11 == 5:
        y[:] = 1.0  # one class
    w = random_weights(rng, n, i % 3)
    K = len(np.unique(p))
    # sessions need a grid of at most 4 K points (else the interval solves
    # every draw by itself): small grids for small n
    grid = int(rng.integers(1, 4 * K)) if i % 5 else 100
    confidence = [0.95, 0.9, 0.8, 0.99][(i // 2) % 4]
    n_resamples = [20, 40, 99, 20, 40, 200][(i // 3) % 6]
    return y, p, w, grid, confidence, n_resamples


def _ends(y, p, w, grid, confidence, n_resamples, seed, dce_draws):
    made = []

    def factory(measure, statistic):
        draws = None if dce_draws is None else dce_draws(measure, statistic)
        made.append(draws)
        return draws

    ci = measure_interval(
        LowerDistanceToCalibration(grid=grid), y, p, sample_weight=w,
        confidence=confidence, n_resamples=n_resamples, random_state=seed,
        dce_draws=factory,
    )
    solved = len(made[0]._certificates()) - 1 if made and made[0] is not None else None
    return (ci.low, ci.high), ci.debiased, solved


def _compare(monkeypatch, n_cases, seed, stop=False):
    """Pruned against every draw solved; ``(differ, pruned cases, solved, drawn, lows)``.

    ``stop``: at the first case that differs.
    """
    rng = np.random.default_rng(seed)
    differ = pruned = solved_total = drawn = 0
    lows = []
    for i in range(n_cases):
        case = _case(rng, i)
        monkeypatch.setattr(dcebound, "_BRANCH_AND_BOUND", True)
        fast, debiased, solved = _ends(*case, seed=i, dce_draws=dcebound.dce_interval_draws)
        monkeypatch.setattr(dcebound, "_BRANCH_AND_BOUND", False)
        full, _, _ = _ends(*case, seed=i, dce_draws=dcebound.dce_interval_draws)
        differ += fast != full
        if stop and differ:
            break
        if solved is not None:
            assert debiased is None
            pruned += 1
            solved_total += solved
            drawn += case[-1]
            lows.append(fast[0])
    return differ, pruned, solved_total, drawn, lows


def test_pruned_ends_equal_every_draw_solved(monkeypatch):
    differ, pruned, solved, drawn, lows = _compare(monkeypatch, 36, seed=0)
    assert differ == 0
    # not vacuous: most cases ran the branch and bound, with both kinds of
    # lower end, and most draws were never solved
    assert pruned > 20
    assert 5 < sum(low == 0 for low in lows) < len(lows) - 5
    assert solved < 0.5 * drawn


def test_pruned_ends_agree_with_the_public_interval(monkeypatch):
    # the public interval with the sessions' solver (HiGHS): a null draw that
    # ties the statistic in exact arithmetic then ties it in both, so the
    # lower ends are 0 together (with the dedicated simplex in the public
    # path the two solvers' last bits can break such a tie differently)
    monkeypatch.setattr(_ldtc, "_USE_SIMPLEX", False)
    rng = np.random.default_rng(1)
    for i in range(12):
        case = _case(rng, i)
        fast, _, _ = _ends(*case, seed=i, dce_draws=dcebound.dce_interval_draws)
        y, p, w, grid, confidence, n_resamples = case
        public = LowerDistanceToCalibration(grid=grid).interval(
            y, p, sample_weight=w, confidence=confidence, n_resamples=n_resamples,
            random_state=i,
        )
        np.testing.assert_allclose(fast, (public.low, public.high), rtol=_RTOL, atol=_ATOL)
        assert (fast[0] == 0) == (public.low == 0)


@pytest.mark.parametrize("broken", ["upper", "lower"])
def test_the_comparison_fails_when_needed_draws_are_pruned(monkeypatch, broken):
    # bounds that are wrong (upper 10% too low, lower 0.02 too high) prune
    # draws the ends need, and the comparison above sees it
    name = "_upper" if broken == "upper" else "_lower"
    real = getattr(dcebound._Resamples, name)
    if broken == "upper":
        def wrong(self, *args):
            return 0.9 * real(self, *args)
    else:
        def wrong(self, *args):
            return real(self, *args) + 0.02
    monkeypatch.setattr(dcebound._Resamples, name, wrong)
    differ, _, _, _, _ = _compare(monkeypatch, 40, seed=0, stop=True)
    assert differ > 0


def test_bounds_hold_on_random_resamples():
    """lower <= exact <= upper on bootstrap resamples, and by their definition."""
    rng = np.random.default_rng(2)
    checked = tight = 0
    for i in range(20):
        y, p, w, measure = bound_case(rng, i, "random")
        seen = []

        def factory(measure, statistic, seen=seen):
            draws = dcebound.dce_interval_draws(measure, statistic)
            seen.append((draws, statistic))
            return None  # the interval itself solves every draw

        measure_interval(measure, y, p, sample_weight=w, random_state=i, dce_draws=factory)
        draws, G = seen[0]
        if draws is None:
            continue
        # resamples as the interval draws them: Gamma masses per cell
        W = rng.gamma(2.0, size=(24, len(G))) * G.weights
        share = rng.random((24, len(G)))
        share[:, ::5] = rng.integers(0, 2, share[:, ::5].shape)  # one label only
        resamples = draws.resamples(W, W * share)
        # certificates of four resamples and of the data
        counts = check_bounds(resamples)
        checked, tight = checked + counts[0], tight + counts[1]
        # the vectorised bounds are the literal formulas, on a resample's
        # own weights (both masses move)
        pool = draws._certificates()
        _, psi, t = pool.session.certified(*resamples._masses_of(7))
        pool.add(psi, t)
        g0, g1, t_unit = pool.items[-1]
        literal = bounds_by_definition(G.values, W[9], W[9] * share[9], draws.points, psi, t)
        nine = np.array([9])
        assert resamples._lower(nine, g0, g1)[0] == pytest.approx(
            literal[0], rel=1e-9, abs=1e-12
        )
        if t_unit is not None:
            assert resamples._upper(nine, t_unit)[0] == pytest.approx(
                literal[1], rel=1e-9, abs=1e-12
            )
    assert checked > 200
    assert tight > checked // 4
