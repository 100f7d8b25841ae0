"""The tolerant resample test (``tolerance > 0``): its certified epsilon.

The Notes of :class:`skcal.CalibrationTester` ("Tolerant test") state the
bounds; here they are checked against slow references and by simulation.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skcal import CalibrationTester, smooth_calibration_error
from skcal.tester._tolerant import _design_gap

from reference_ldtc import ldtc_dense_lp
from reference_smce import smce_linprog
from reference_tolerant import design_gap_reference, interval_noise_reference

ALPHA = 0.05


def _designs(rng, n_cases):
    """Random designs: ties, weights, n = 1, values at 0 and 1, one value."""
    for case in range(n_cases):
        n = [1, 2, 3, 7, 20][case % 5]
        kind = case % 4
        if kind == 0:
            v = rng.random(n)
        elif kind == 1:  # ties
            v = rng.choice([0.0, 0.25, 0.5, 1.0], size=n)
        elif kind == 2:  # one value
            v = np.full(n, rng.random())
        else:  # clustered near an end
            v = np.clip(rng.normal(0.9, 0.05, n), 0, 1)
        w = rng.exponential(size=n) if case % 3 else np.ones(n)
        yield np.sort(v), w


def test_design_gap_matches_reference():
    rng = np.random.default_rng(0)
    for v, w in _designs(rng, 200):
        values, inverse = np.unique(v, return_inverse=True)
        weights = np.bincount(inverse, weights=w)
        assert _design_gap(values, weights) == pytest.approx(
            design_gap_reference(v, w), abs=1e-12
        )


def test_design_gap_ignores_empty_values_and_is_zero_for_one_value():
    assert _design_gap(np.array([0.3]), np.array([2.0])) == 0.0
    assert _design_gap(np.array([0.1, 0.3]), np.array([0.0, 5.0])) == 0.0
    # masses 1/2 at 0 and 1: sum w |v - m| = 1/2 on [0, 1], mean 1/2
    assert _design_gap(np.array([0.0, 1.0]), np.array([1.0, 1.0])) == pytest.approx(
        0.5
    )


@settings(max_examples=60, deadline=None)
@given(
    v=st.lists(st.floats(0, 1), min_size=1, max_size=5),
    mu_seed=st.integers(0, 2**31 - 1),
)
def test_smce_is_at_least_dce_minus_design_gap(v, mu_seed):
    # the bound behind the certificate: for every outcome law mu on the
    # predictions v, smCE >= dCE - kappa (dCE >= dCE^U - h, Lemma 17 of Hu,
    # Jambulapati, Tian and Yang, "Testing calibration in nearly-linear time")
    rng = np.random.default_rng(mu_seed)
    v = np.array(v)
    w = rng.exponential(size=v.size) if mu_seed % 2 else np.ones(v.size)
    mu = rng.choice([0.0, 1.0, rng.random()], size=v.size)
    # the law as weighted rows: (v, 1) with weight w mu, (v, 0) with w (1 - mu)
    y = np.r_[np.ones(v.size), np.zeros(v.size)]
    p = np.r_[v, v]
    rows_w = np.r_[w * mu, w * (1 - mu)]
    keep = rows_w > 0
    y, p, rows_w = y[keep], p[keep], rows_w[keep]
    grid = np.linspace(0, 1, 51)
    dce = ldtc_dense_lp(y, p, rows_w, grid) - 1 / 50
    smce = smce_linprog(y, p, rows_w)
    values, inverse = np.unique(v, return_inverse=True)
    kappa = design_gap_reference(values, np.bincount(inverse, weights=w))
    assert smce >= dce - kappa - 1e-7
    assert smce >= dce / 2 - 1e-7


def test_one_prediction_value_has_gap_zero_and_smce_equals_bias():
    # constant predictions: smCE = |mean(y) - v| = dCE, so the certificate
    # uses factor 1 (threshold + t) instead of 2 (threshold + t)
    y = np.r_[np.ones(30), np.zeros(70)]
    p = np.full(100, 0.45)
    assert smooth_calibration_error(y, p) == pytest.approx(0.15)
    assert ldtc_dense_lp(y, p, np.ones(100), np.linspace(0, 1, 101)) == (
        pytest.approx(0.15, abs=1e-8)
    )


@pytest.mark.parametrize("weighted", [False, True])
def test_tolerant_min_epsilon_formula(weighted):
    rng = np.random.default_rng(3)
    n = 600
    p = rng.choice([0.1, 0.15, 0.3, 0.31], size=n)
    y = (rng.random(n) < p).astype(float)
    w = rng.exponential(size=n) if weighted else np.ones(n)
    n_eff = w.sum() ** 2 / np.sum(w**2)
    t = math.sqrt(math.log(1 / ALPHA) / (2 * n_eff))
    values = np.unique(p)
    kappa = design_gap_reference(
        values, [w[p == value].sum() for value in values]
    )
    for measure in ("smce", "dce"):
        tester = CalibrationTester(
            measure, tolerance=0.02, n_resamples=99, random_state=0
        ).fit(y, p, sample_weight=w)
        thr = tester.threshold_
        expected = thr + t if measure == "dce" else min(2 * (thr + t), thr + t + kappa)
        assert tester.min_epsilon_ == pytest.approx(expected)
        assert tester.result_.min_epsilon == pytest.approx(expected)


def test_tolerance_zero_min_epsilon_is_unchanged():
    # Hoeffding with range 2 and the worst-case factor, as before
    rng = np.random.default_rng(4)
    p = np.full(400, 0.3)
    y = (rng.random(400) < 0.3).astype(float)
    tester = CalibrationTester(resampling_risk=None, n_resamples=99, random_state=0)
    tester.fit(y, p)
    t_no = math.sqrt(2 * math.log(1 / ALPHA) / 400)
    assert tester.min_epsilon_ == pytest.approx(2 * (tester.threshold_ + t_no))


def _rejections(p, mu, n_datasets, seed, **params):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_datasets):
        y = (rng.random(p.size) < mu).astype(float)
        out.append(not CalibrationTester(**params).decide(y, p).calibrated)
    return float(np.mean(out))


@pytest.mark.parametrize("design", ["constant", "two values", "uniform"])
def test_tolerant_smce_detects_its_certified_epsilon(design):
    # given the predictions, outcomes with dCE = min_epsilon (a shift of the
    # predictions by min_epsilon, towards the side with room) are rejected
    # with probability at least 1 - alpha
    rng = np.random.default_rng(5)
    n = 2000
    if design == "constant":
        p = np.full(n, 0.52)
    elif design == "two values":
        p = np.where(rng.random(n) < 0.1, 0.3, 0.1)
    else:
        p = rng.uniform(0.5, 1.0, n)
    params = dict(tolerance=0.02, n_resamples=99, random_state=0)
    null = CalibrationTester(**params).fit((rng.random(n) < p).astype(float), p)
    eps = null.min_epsilon_
    assert eps < (0.2 if design == "constant" else 0.4)
    direction = 1.0 if design == "two values" else -1.0
    mu = p + direction * eps  # dCE = eps: E|v - u| >= |E v - E y| = eps
    assert np.all((mu >= 0) & (mu <= 1))
    rate = _rejections(p, mu, 30, 6, **params)
    assert rate >= 1 - ALPHA - 3 * math.sqrt(ALPHA * (1 - ALPHA) / 30)


@pytest.mark.parametrize("tolerance", [0.0, 0.02])
def test_min_epsilon_measure_formula(tolerance):
    # threshold + sqrt(ln(1/alpha) / (2 N)) for smCE, dCE and cutoff, in
    # every mode; None where the measure has no such bound
    rng = np.random.default_rng(11)
    n = 500
    p = rng.uniform(0.1, 0.9, n)
    y = (rng.random(n) < p).astype(float)
    w = rng.exponential(size=n)
    t = math.sqrt(math.log(1 / ALPHA) / (2 * (w.sum() ** 2 / np.sum(w**2))))
    measures = ("smce", "dce") if tolerance else ("smce", "dce", "cutoff")
    for measure in measures:
        tester = CalibrationTester(
            measure, tolerance=tolerance, n_resamples=49, resampling_risk=None,
            random_state=0,
        ).fit(y, p, sample_weight=w)
        assert tester.min_epsilon_measure_ == pytest.approx(tester.threshold_ + t)
        assert tester.result_.min_epsilon_measure == tester.min_epsilon_measure_
    theory = CalibrationTester(threshold="theory", epsilon=0.9).fit(y, p, sample_weight=w)
    assert theory.min_epsilon_measure_ == pytest.approx(theory.threshold_ + t)
    if not tolerance:
        for measure in ("scdl", "binned_ece"):
            tester = CalibrationTester(measure, random_state=0).fit(y, p)
            assert tester.min_epsilon_measure_ is None
            assert tester.result_.min_epsilon_measure is None


def _population_smce(p, mu):
    """smCE of the law (p_i, y_i ~ Bernoulli(mu_i)): each row as a 1 of
    weight mu_i and a 0 of weight 1 - mu_i (smCE is linear in the weights of
    each (p, y) pair for a fixed test function, and the sup is over the same
    test functions)."""
    y = np.concatenate([np.ones(p.size), np.zeros(p.size)])
    return smooth_calibration_error(
        y, np.concatenate([p, p]), sample_weight=np.concatenate([mu, 1 - mu])
    )


@pytest.mark.parametrize("design", ["constant", "two values", "uniform"])
def test_tolerant_smce_detects_its_certified_smce(design):
    # outcomes whose smCE (of the law on these predictions) is
    # min_epsilon_measure are rejected with probability at least 1 - alpha;
    # on varied predictions this is below min_epsilon (no factor 2)
    rng = np.random.default_rng(12)
    n = 2000
    if design == "constant":
        p = np.full(n, 0.52)
    elif design == "two values":
        p = np.where(rng.random(n) < 0.1, 0.3, 0.1)
    else:
        p = rng.uniform(0.5, 1.0, n)
    params = dict(tolerance=0.02, n_resamples=99, random_state=0)
    null = CalibrationTester(**params).fit((rng.random(n) < p).astype(float), p)
    eps = null.min_epsilon_measure_
    if design != "constant":
        assert eps < 0.8 * null.min_epsilon_
    # strictly above 2 * tolerance: no law of the null has this smCE
    assert 0.04 < eps < 0.2
    direction = 1.0 if design == "two values" else -1.0
    mu = p + direction * eps
    assert _population_smce(p, mu) == pytest.approx(eps, rel=1e-9)
    rate = _rejections(p, mu, 30, 13, **params)
    assert rate >= 1 - ALPHA - 3 * math.sqrt(ALPHA * (1 - ALPHA) / 30)


def test_tolerant_certificate_is_sharper_on_constant_predictions():
    # n = 5000, tolerance 0.02, alpha = 0.05, 999 resamples: 0.21 before
    # (factor 2 and Hoeffding with range 2), below 0.1 now
    rng = np.random.default_rng(7)
    y = (rng.random(5000) < 0.5).astype(float)
    p = np.full(5000, 0.52)
    tester = CalibrationTester(tolerance=0.02, random_state=0).fit(y, p)
    assert tester.decide().calibrated
    assert tester.min_epsilon_ < 0.1
    # factor 1 (kappa = 0) and the lower tail with range 1
    t = math.sqrt(math.log(1 / ALPHA) / (2 * 5000))
    assert tester.min_epsilon_ == pytest.approx(tester.threshold_ + t)
    # the worst-case form (factor 2, range 2) would not certify 0.1
    t_old = math.sqrt(2 * math.log(1 / ALPHA) / 5000)
    assert 2 * (tester.threshold_ + t_old) > 0.15


def test_tolerant_results_reproducible_and_independent_of_n_jobs():
    rng = np.random.default_rng(8)
    p = rng.uniform(0, 0.9, 800)
    y = (rng.random(800) < p + 0.02).astype(float)
    results = [
        CalibrationTester(
            tolerance=0.02, n_resamples=99, random_state=3, n_jobs=n_jobs
        ).decide(y, p)
        for n_jobs in (1, 2, 1)
    ]
    for result in results[1:]:
        assert result == results[0]


def test_interval_noise_bounds_every_lipschitz_test():
    # sum_i w_i zeta_i (x(u_i) - x(p_i)) <= R for every 1-Lipschitz x
    rng = np.random.default_rng(9)
    for case in range(100):
        n = [1, 2, 5, 30][case % 4]
        p = rng.random(n) if case % 3 else rng.choice([0.0, 0.5, 1.0], n)
        u = np.clip(p + rng.normal(0, 0.1, n), 0, 1)
        w = rng.exponential(size=n) if case % 2 else np.ones(n)
        zeta = (rng.random(n) < u) - u
        R = interval_noise_reference(zeta, u, p, w)
        wn = w / w.sum()
        for _ in range(20):
            # a random 1-Lipschitz function bounded by 1: piecewise linear
            knots = np.linspace(0, 1, 12)
            steps = rng.uniform(-1, 1, 11) * np.diff(knots)
            values = np.clip(rng.uniform(-1, 1) + np.r_[0, np.cumsum(steps)], -1, 1)
            x = lambda t, knots=knots, values=values: np.interp(t, knots, values)  # noqa: E731
            assert np.sum(wn * zeta * (x(u) - x(p))) <= R + 1e-12


def test_interval_noise_tail_by_simulation():
    # P(R > sqrt(mA)/2 + sqrt(mA ln(1/delta)/2)) <= delta, and E R <= sqrt(mA)/2
    from skcal.tester._tolerant import _interval_noise

    rng = np.random.default_rng(10)
    delta = 0.05
    for n, spread in ((40, 0.05), (200, 0.02), (200, 0.3)):
        p = rng.random(n)
        u = np.clip(p + rng.uniform(-spread, spread, n), 0, 1)
        w = rng.exponential(size=n)
        wn = w / w.sum()
        scale = wn.max() * np.sum(wn * np.abs(u - p))
        draws = np.array(
            [
                interval_noise_reference((rng.random(n) < u) - u, u, p, w)
                for _ in range(300)
            ]
        )
        assert draws.mean() <= math.sqrt(scale) / 2 + 3 * draws.std() / math.sqrt(300)
        exceed = np.mean(draws > _interval_noise(scale, delta))
        assert exceed <= delta + 3 * math.sqrt(delta * (1 - delta) / 300)
