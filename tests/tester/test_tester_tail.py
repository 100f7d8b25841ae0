"""smCE's early rejection on McDiarmid's bound (the tester's tail at large n).

``_smce_tail_bound`` against the exact null law of smCE (all ``2^n``
outcomes, ``reference.exact_null_law_reference``) on small cases with ties,
weights, n = 1, p in {0, 1} and one class, and against Monte Carlo draws at
larger n; the sequential rule with the bound against the rule without it.
"""

import math

import numpy as np
from scipy.stats import binom

import skcal.tester._null as null_module
from skcal import CalibrationTester, smooth_calibration_error
from skcal.tester._null import (
    _bound_rejection_excess,
    _checkpoints,
    _seeds,
    _sequential_test,
    _smce_tail_bound,
)

from cases import random_cases
from reference_null import exact_null_law_reference


def _n_eff(w):
    return float(np.sum(w)) ** 2 / float(np.sum(np.square(w)))


def test_tail_bound_holds_on_the_exact_null_law():
    # P(T* >= t) <= bound(t) at every value t of the law, and the mean of T*
    # is at most 2 / sqrt(N), for weighted rows with ties and p in {0, 1}
    checked = 0
    for i, (_, p, w) in enumerate(random_cases(41, 80, max_n=10)):
        keep = w > 0
        p, w = p[keep], w[keep]
        if p.size == 0:
            continue
        law = exact_null_law_reference(
            lambda y, q, w=w: smooth_calibration_error(y, q, sample_weight=w), p
        )
        values = np.array(sorted(law))
        probs = np.array([law[v] for v in values])
        n_eff = _n_eff(w)
        assert float(values @ probs) <= 2 / math.sqrt(n_eff) + 1e-12, i
        survival = np.cumsum(probs[::-1])[::-1]
        for t, s in zip(values, survival):
            assert s <= _smce_tail_bound(t, n_eff) + 1e-12, (i, t)
        checked += 1
    assert checked >= 60


def test_tail_bound_against_draws_at_larger_n():
    # the mean bound and the tail bound against 400 draws at n = 3000 (the
    # mean is about 0.38 / sqrt(N), a fifth of the bound: a mean bound of
    # 0.25 / sqrt(N) would fail here)
    rng = np.random.default_rng(42)
    n = 3000
    p = rng.random(n)
    draws = np.array(
        [smooth_calibration_error((rng.random(n) < p).astype(float), p) for _ in range(400)]
    )
    assert draws.mean() <= 2 / math.sqrt(n)
    assert draws.mean() > 0.25 / math.sqrt(n)
    for t in np.quantile(draws, [0.5, 0.9, 0.99, 1.0]):
        assert np.mean(draws >= t) <= _smce_tail_bound(t, n) + 0.05


def test_tail_bound_is_one_below_the_mean_bound():
    assert _smce_tail_bound(0.0, 100) == 1.0
    assert _smce_tail_bound(0.2, 100) == 1.0  # 2 / sqrt(100)
    assert math.isclose(_smce_tail_bound(0.3, 100), math.exp(-2), rel_tol=1e-6)


def test_bound_rejects_at_the_first_look_and_only_below_the_spend():
    def draw(seed):
        return float(np.random.default_rng(seed).random())

    seeds = _seeds(0, 999)
    delta = 1e-3 / len(_checkpoints(999))
    plain = _sequential_test(draw, 0.5, 0.05, seeds, 1e-3, None)
    null, decision = _sequential_test(draw, 0.5, 0.05, seeds, 1e-3, None, delta)
    assert decision is True and null.size == 20
    again = _sequential_test(draw, 0.5, 0.05, seeds, 1e-3, None, 1.01 * delta)
    assert again[1] == plain[1] and np.array_equal(again[0], plain[0])


def test_bound_rejection_excess():
    # d P(Binomial(B, d) >= k), d = risk / J, at most the resampling risk
    for max_draws, alpha, risk in ((999, 0.05, 1e-3), (199, 0.1, 0.05), (20, 0.05, 0.5)):
        delta = risk / len(_checkpoints(max_draws))
        k = math.floor(alpha * (max_draws + 1) + 1e-9)
        want = delta * sum(binom.pmf(s, max_draws, delta) for s in range(k, max_draws + 1))
        got = _bound_rejection_excess(max_draws, alpha, risk)
        assert math.isclose(got, want, rel_tol=1e-6, abs_tol=1e-300)
        assert got <= risk
    assert _bound_rejection_excess(999, 0.05, 1e-3) < 1e-100


def _shifted(rng, n, shift):
    p = rng.random(n)
    return (rng.random(n) < np.minimum(p + shift, 1)).astype(float), p


def test_far_miscalibration_stops_at_the_first_look():
    # the default tester on a shift of 0.1 at n = 20000 (smCE about 0.04,
    # bound's cut-off 4.2 / sqrt(n) = 0.03): 20 draws, where the rule alone
    # needs about 190; the same decision, weighted rows too
    rng = np.random.default_rng(43)
    y, p = _shifted(rng, 20000, 0.1)
    w = rng.choice([1.0, 2.0], 20000)
    for sample_weight in (None, w):
        result = CalibrationTester(random_state=0).decide(y, p, sample_weight)
        assert not result.calibrated and result.n_resamples == 20
        try:
            null_module._TAIL_BOUND = False
            alone = CalibrationTester(random_state=0).decide(y, p, sample_weight)
        finally:
            null_module._TAIL_BOUND = True
        assert not alone.calibrated and alone.n_resamples > 100
        # the ideal test rejects too: no draw of the fixed test reaches T
        fixed = CalibrationTester(random_state=0, resampling_risk=None).fit(
            y, p, sample_weight
        )
        assert fixed.null_statistics_.max() < fixed.statistic_


def test_bound_only_for_the_sequential_smce_test():
    rng = np.random.default_rng(44)
    y, p = _shifted(rng, 20000, 0.1)
    fixed = CalibrationTester(random_state=0, resampling_risk=None).decide(y, p)
    assert fixed.n_resamples == 999
    cutoff = CalibrationTester("cutoff", random_state=0).decide(y, p)
    assert not cutoff.calibrated and cutoff.n_resamples > 20


def test_calibrated_data_are_not_touched():
    # a calibrated sample is far below the cut-off: the bound is 1 and the
    # decisions and draws are those of the rule alone
    rng = np.random.default_rng(45)
    for run in range(5):
        y, p = _shifted(rng, 2000, 0.0)
        a = CalibrationTester(random_state=run).fit(y, p)
        try:
            null_module._TAIL_BOUND = False
            b = CalibrationTester(random_state=run).fit(y, p)
        finally:
            null_module._TAIL_BOUND = True
        assert a.result_ == b.result_
        np.testing.assert_array_equal(a.null_statistics_, b.null_statistics_)
