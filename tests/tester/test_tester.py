import dataclasses
import math
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression

from skcal import (
    CalibrationTester,
    CalibrationTestResult,
    lower_distance_to_calibration,
    smooth_calibration_error,
)


def calibrated(rng, n):
    """v ~ U[0, 1], y ~ Bern(v): perfectly calibrated."""
    p = rng.random(n)
    return (rng.random(n) < p).astype(float), p


def shifted(rng, n, eps):
    """v ~ U[0, 1 - eps], y ~ Bern(v + eps): dCE = smCE = eps (002 Section 6)."""
    p = rng.uniform(0, 1 - eps, n)
    return (rng.random(n) < p + eps).astype(float), p


def rejection_rate(make_data, n_datasets, seed, **params):
    rng = np.random.default_rng(seed)
    decisions = []
    for i in range(n_datasets):
        y, p = make_data(rng)
        tester = CalibrationTester(random_state=i, **params)
        decisions.append(not tester.decide(y, p).calibrated)
    return float(np.mean(decisions))


def monte_carlo_slack(rate, n_datasets):
    """Three binomial standard errors."""
    return 3 * math.sqrt(rate * (1 - rate) / n_datasets)


# --- error rates, by simulation (the full versions: benchmarks/) -------------


def test_resample_false_alarm_rate_is_alpha():
    # the Monte Carlo test is exact: with B + 1 = 100 and alpha = 0.1 a
    # calibrated data set is rejected with probability exactly 0.1 (the
    # statistic is continuous), neither more nor much less
    alpha, n_datasets = 0.1, 200
    rate = rejection_rate(
        lambda rng: calibrated(rng, 200),
        n_datasets,
        0,
        alpha=alpha,
        n_resamples=99,
        resampling_risk=None,
    )
    slack = monte_carlo_slack(alpha, n_datasets)
    assert alpha - slack <= rate <= alpha + slack


def test_resample_power_where_guaranteed():
    # dCE = 0.2 and n = 1500: min_epsilon is below 0.2, so "not calibrated"
    # is guaranteed with probability >= 1 - alpha
    rng = np.random.default_rng(1)
    y, p = shifted(rng, 1500, 0.2)
    result = CalibrationTester(
        n_resamples=99, resampling_risk=None, random_state=0
    ).decide(y, p)
    assert result.min_epsilon <= 0.2
    rate = rejection_rate(
        lambda rng: shifted(rng, 1500, 0.2), 40, 2, n_resamples=99, resampling_risk=None
    )
    assert rate >= 0.95


def test_resample_power_at_moderate_shift():
    # below the certified epsilon the test is still powerful: dCE = 0.05 at n = 2000
    rate = rejection_rate(
        lambda rng: shifted(rng, 2000, 0.05),
        40,
        3,
        n_resamples=99,
        resampling_risk=None,
    )
    assert rate >= 0.95


def test_resample_dce_error_rates():
    # dCE is ~15 ms per evaluation here: a small check of both error types
    rate0 = rejection_rate(
        lambda rng: calibrated(rng, 150),
        20,
        4,
        measure="dce",
        alpha=0.1,
        n_resamples=19,
        resampling_risk=None,
    )
    assert rate0 <= 0.1 + monte_carlo_slack(0.1, 20)
    rate1 = rejection_rate(
        lambda rng: shifted(rng, 400, 0.2),
        10,
        5,
        measure="dce",
        n_resamples=19,
        resampling_risk=None,
    )
    assert rate1 == 1.0


@pytest.mark.parametrize("measure", ["smce", "dce"])
def test_tolerant_resample_is_valid_at_the_null_boundary(measure):
    # dCE exactly equal to the tolerance: the composite null's hardest cases
    # (002 Lemma 1's constant prediction and the Section 6 shift) are accepted
    eps2 = 0.05
    n_resamples = 99 if measure == "smce" else 24

    def lemma1(rng):
        return (rng.random(300) < 0.5).astype(float), np.full(300, 0.5 + eps2)

    n_datasets = 40 if measure == "smce" else 8
    for make in (lemma1, lambda rng: shifted(rng, 300, eps2)):
        rate = rejection_rate(
            make,
            n_datasets,
            6,
            measure=measure,
            tolerance=eps2,
            n_resamples=n_resamples,
            resampling_risk=None,
        )
        assert rate <= 0.05 + monte_carlo_slack(0.05, n_datasets)


def test_tolerant_resample_still_rejects_large_miscalibration():
    rate = rejection_rate(
        lambda rng: shifted(rng, 2000, 0.3),
        20,
        7,
        tolerance=0.02,
        n_resamples=99,
        resampling_risk=None,
    )
    assert rate == 1.0


@pytest.mark.parametrize("measure", ["smce", "dce"])
def test_theory_error_rates_where_guaranteed(measure):
    # n = 3000 and epsilon = 0.25 >= min_epsilon: both answers are right
    eps, n = 0.25, 3000
    params = dict(measure=measure, threshold="theory", epsilon=eps)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "too few samples" warning
        yes = rejection_rate(lambda rng: calibrated(rng, n), 15, 8, **params)
        no = rejection_rate(lambda rng: shifted(rng, n, eps), 15, 9, **params)
    assert yes <= 0.05 and no >= 0.95


# --- the rules themselves ----------------------------------------------------


def test_theory_thresholds_and_constants():
    rng = np.random.default_rng(10)
    y, p = calibrated(rng, 4000)
    alpha = 0.05
    t_no = math.sqrt(2 * math.log(1 / alpha) / 4000)
    t_cal = math.sqrt(2 * math.log(2 / alpha) / 4000)

    tester = CalibrationTester(threshold="theory", epsilon=0.3).fit(y, p)
    # 002 Theorem 3: yes iff smCE <= eps1/4 + eps2
    assert tester.threshold_ == pytest.approx(0.3 / 4)
    assert tester.min_epsilon_ == pytest.approx(4 * max(t_cal, t_no))
    assert tester.statistic_ == pytest.approx(smooth_calibration_error(y, p))
    assert tester.p_value_ is None and tester.null_statistics_ is None

    tester = CalibrationTester(
        "dce", threshold="theory", epsilon=0.3, measure_params={"grid": 50}
    ).fit(y, p)
    # 002 Theorem 4 on dCE^U - h/2: yes iff dCE^U <= (eps1 + eps2 + h)/2
    assert tester.threshold_ == pytest.approx((0.3 + 0.02) / 2)
    assert tester.min_epsilon_ == pytest.approx(0.02 + 2 * max(2 * t_cal, t_no))
    assert tester.statistic_ == pytest.approx(
        lower_distance_to_calibration(y, p, grid=50)
    )

    # a tolerance raises the threshold by eps2 and the certified epsilon by
    # more than 4 eps2 (smCE); the decision is statistic <= threshold
    tolerant = CalibrationTester(threshold="theory", epsilon=0.5, tolerance=0.02).fit(
        y, p
    )
    assert tolerant.threshold_ == pytest.approx(0.5 / 4 + 0.02)
    assert tolerant.min_epsilon_ > 4 * 0.02 + 4 * t_cal
    assert tolerant.decide().calibrated == (tolerant.statistic_ <= tolerant.threshold_)


def test_theory_warns_when_n_is_too_small():
    rng = np.random.default_rng(11)
    y, p = calibrated(rng, 100)
    with pytest.warns(UserWarning, match="too few for the guarantee of Theorem 3"):
        result = CalibrationTester(threshold="theory", epsilon=0.1).decide(y, p)
    assert result.min_epsilon > 0.1


def test_resample_threshold_and_p_value_agree():
    rng = np.random.default_rng(12)
    for i in range(20):
        y, p = shifted(rng, 300, 0.03 * (i % 3))
        tester = CalibrationTester(
            n_resamples=99, resampling_risk=None, random_state=i
        ).fit(y, p)
        null = tester.null_statistics_
        assert null.shape == (99,) and np.all(np.diff(null) >= 0)
        # threshold: the (B + 1 - k)-th smallest draw, k = floor(alpha (B + 1))
        assert tester.threshold_ == null[99 - 5]
        expected_p = (1 + np.sum(null >= tester.statistic_)) / 100
        assert tester.p_value_ == pytest.approx(expected_p)
        result = tester.decide()
        assert result.calibrated == (result.p_value > 0.05)
        assert result.calibrated == (result.statistic <= result.threshold)


def test_tolerant_resample_is_more_conservative():
    rng = np.random.default_rng(13)
    y, p = shifted(rng, 1000, 0.05)
    plain = CalibrationTester(n_resamples=99, resampling_risk=None, random_state=0).fit(
        y, p
    )
    tolerant = CalibrationTester(
        n_resamples=99, resampling_risk=None, random_state=0, tolerance=0.01
    ).fit(y, p)
    np.testing.assert_array_equal(plain.null_statistics_, tolerant.null_statistics_)
    # the Monte Carlo level is 0.8 alpha and the threshold is shifted up
    assert tolerant.threshold_ > plain.threshold_ + 5 * 0.01
    assert tolerant.p_value_ >= plain.p_value_
    result = tolerant.decide()
    assert result.calibrated == (result.p_value > 0.05 - 1e-6)
    assert result.min_epsilon > plain.min_epsilon_


def test_min_epsilon_by_measure():
    rng = np.random.default_rng(14)
    y, p = calibrated(rng, 500)
    t_no = math.sqrt(2 * math.log(1 / 0.05) / 500)
    for measure, factor in [("smce", 0.5), ("dce", 1.0), ("cutoff", 0.25)]:
        params = dict(n_resamples=19, resampling_risk=None) if measure == "dce" else {}
        tester = CalibrationTester(measure, random_state=0, **params).fit(y, p)
        assert tester.min_epsilon_ == pytest.approx((tester.threshold_ + t_no) / factor)
    for measure in ("scdl", "binned_ece"):
        assert CalibrationTester(measure, random_state=0).fit(y, p).min_epsilon_ is None


def test_measure_params_and_callables():
    rng = np.random.default_rng(15)
    y, p = calibrated(rng, 200)
    tester = CalibrationTester(
        "binned_ece",
        measure_params={"n_bins": 5},
        n_resamples=19,
        resampling_risk=None,
        random_state=0,
    ).fit(y, p)
    from skcal import binned_ece

    assert tester.statistic_ == pytest.approx(binned_ece(y, p, n_bins=5))

    def mean_bias(y_true, y_prob, sample_weight=None):
        return abs(np.average(np.asarray(y_true) - y_prob, weights=sample_weight))

    result = CalibrationTester(
        mean_bias, n_resamples=19, resampling_risk=None, random_state=0
    ).decide(y, p)
    assert result.measure == "mean_bias" and result.min_epsilon is None
    assert result.statistic == pytest.approx(abs(np.mean(y - p)))


# --- API -------------------------------------------------------------------


def test_result_is_frozen_and_readable():
    rng = np.random.default_rng(16)
    y, p = calibrated(rng, 100)
    result = CalibrationTester(
        n_resamples=19, resampling_risk=None, random_state=0
    ).decide(y, p)
    assert isinstance(result, CalibrationTestResult)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.calibrated = False
    text = repr(result)
    assert text.startswith("CalibrationTestResult(calibrated=")
    for field in ("statistic=", "threshold=", "p_value=", "min_epsilon=", "n=100"):
        assert field in text
    assert "measure='smce'" in text and "method='resample'" in text


def test_reproducible_and_independent_of_n_jobs():
    rng = np.random.default_rng(17)
    y, p = calibrated(rng, 300)
    a = CalibrationTester(n_resamples=40, resampling_risk=None, random_state=3).fit(
        y, p
    )
    b = CalibrationTester(
        n_resamples=40, resampling_risk=None, random_state=3, n_jobs=2
    ).fit(y, p)
    c = CalibrationTester(n_resamples=40, resampling_risk=None, random_state=4).fit(
        y, p
    )
    np.testing.assert_array_equal(a.null_statistics_, b.null_statistics_)
    assert not np.array_equal(a.null_statistics_, c.null_statistics_)
    assert a.decide() == b.decide()


def test_decide_fits_and_unfitted_errors():
    rng = np.random.default_rng(18)
    y, p = calibrated(rng, 100)
    tester = CalibrationTester(n_resamples=19, resampling_risk=None, random_state=0)
    with pytest.raises(NotFittedError):
        tester.decide()
    with pytest.raises(ValueError, match="both y_true and y_prob"):
        tester.decide(y)
    result = tester.decide(y, p)
    assert tester.decide() is result
    with pytest.raises(ValueError, match="sample_weight was given"):
        tester.decide(sample_weight=np.ones(100))


def test_get_params_and_clone():
    tester = CalibrationTester("dce", epsilon=0.1, measure_params={"grid": 20})
    assert tester.get_params()["measure_params"] == {"grid": 20}
    twin = clone(tester)
    assert twin.get_params() == tester.get_params()
    assert "measure='dce'" in repr(tester)


def test_sample_weight_and_labels():
    rng = np.random.default_rng(19)
    y, p = calibrated(rng, 300)
    w = rng.exponential(size=300)
    tester = CalibrationTester(
        n_resamples=19, resampling_risk=None, random_state=0
    ).fit(y, p, w)
    assert tester.statistic_ == pytest.approx(
        smooth_calibration_error(y, p, sample_weight=w)
    )
    assert tester.n_effective_ == pytest.approx(w.sum() ** 2 / np.sum(w**2))
    labels = np.where(y == 1, "spam", "ham")
    other = CalibrationTester(
        n_resamples=19, resampling_risk=None, random_state=0, pos_label="spam"
    )
    assert other.fit(labels, p, w).decide() == tester.decide()


def test_from_estimator_binary_and_multiclass():
    X, y = make_classification(
        n_samples=600, n_classes=3, n_informative=4, random_state=0
    )
    model = LogisticRegression(max_iter=500).fit(X[:300], y[:300])
    tester = CalibrationTester.from_estimator(
        model, X[300:], y[300:], n_resamples=19, resampling_risk=None, random_state=0
    )
    P = model.predict_proba(X[300:])
    assert tester.statistic_ == pytest.approx(smooth_calibration_error(y[300:], P))
    names = np.array(["a", "b", "c"])[y]
    model = LogisticRegression(max_iter=500).fit(X[:300], names[:300] == "a")
    tester = CalibrationTester.from_estimator(
        model,
        X[300:],
        names[300:] == "a",
        n_resamples=19,
        resampling_risk=None,
        random_state=0,
    )
    assert tester.statistic_ == pytest.approx(
        smooth_calibration_error(names[300:] == "a", model.predict_proba(X[300:])[:, 1])
    )
    with pytest.raises(NotFittedError):
        CalibrationTester.from_estimator(LogisticRegression(), X, y)


@pytest.mark.parametrize(
    "params, error, match",
    [
        (dict(measure="ece"), ValueError, "measure must be one of"),
        (dict(alpha=0), ValueError, r"'alpha' parameter .* range \(0"),
        (dict(alpha=1.5), ValueError, "'alpha' parameter of CalibrationTester"),
        (dict(alpha="0.05"), TypeError, "'alpha' parameter .* must be a float"),
        (dict(tolerance=-0.1), ValueError, r"'tolerance' parameter .* range \[0"),
        (dict(epsilon=0), ValueError, r"'epsilon' parameter .* range \(0.*, 1.*\]"),
        (dict(epsilon=0.1, tolerance=0.1), ValueError, "must be below epsilon"),
        (dict(threshold="bootstrap"), ValueError, "'threshold' parameter .* among"),
        (dict(threshold="theory"), ValueError, "needs epsilon"),
        (
            dict(threshold="theory", measure="cutoff", epsilon=0.1),
            ValueError,
            "Theorem 3",
        ),
        (
            dict(threshold="theory", epsilon=0.1, tolerance=0.03),
            ValueError,
            "epsilon > 4 \\* tolerance",
        ),
        (dict(n_resamples=0), ValueError, "'n_resamples' parameter .* range \\[1"),
        (dict(n_resamples=10), ValueError, "too few to ever reject"),
        (dict(n_resamples=19, tolerance=0.01), ValueError, "too few to ever reject"),
        (dict(measure="cutoff", tolerance=0.01), ValueError, "Lipschitz"),
        (
            dict(measure_params=[("grid", 5)]),
            TypeError,
            "'measure_params' parameter .* instance of 'dict'",
        ),
        (dict(measure_params={"pos_label": 1}), ValueError, "may not set"),
        (
            dict(measure="dce", measure_params={"return_details": True}),
            ValueError,
            "may not set",
        ),
    ],
)
def test_bad_parameters(params, error, match):
    tester = CalibrationTester(**params)  # the constructor only stores them
    with pytest.raises(error, match=match):
        tester.fit([0, 1, 1, 0], [0.2, 0.6, 0.7, 0.4])


def test_measure_returning_a_tuple_is_rejected():
    def pair(y_true, y_prob, sample_weight=None):
        return 0.1, 0.2

    with pytest.raises(TypeError, match="not a single number"):
        CalibrationTester(pair).fit([0, 1], [0.3, 0.6])


def test_does_not_mutate_inputs():
    rng = np.random.default_rng(20)
    y, p = calibrated(rng, 50)
    w = rng.exponential(size=50)
    copies = [a.copy() for a in (y, p, w)]
    CalibrationTester(n_resamples=19, resampling_risk=None, random_state=0).fit(y, p, w)
    for a, c in zip((y, p, w), copies):
        np.testing.assert_array_equal(a, c)


# --- grouped null draws against the slow references (tester helper) ----------

from skcal import (  # noqa: E402
    binned_ece,
    calibration_decision_loss,
    cutoff_calibration_error,
    soft_binned_cdl,
    utility_calibration_error,
)
from skcal._grouped import group  # noqa: E402
from skcal.measures import (  # noqa: E402
    BinnedECE,
    LowerDistanceToCalibration,
    SmoothCalibrationError,
    UtilityCalibrationError,
)
from skcal.tester._null import _BinaryData, _checkpoints, _seeds, _sequential_test  # noqa: E402

from cases import random_cases  # noqa: E402
from reference_null import exact_null_law_reference, row_null_draw_reference  # noqa: E402

MEASURE_FUNCTIONS = {
    "smce": smooth_calibration_error,
    "cutoff": cutoff_calibration_error,
    "cdl": calibration_decision_loss,
    "scdl": soft_binned_cdl,
    "binned_ece": binned_ece,
    "dce": lambda y, p, sample_weight=None: lower_distance_to_calibration(
        y, p, sample_weight=sample_weight, grid=20
    ),
}


def _binary_data(name, y, p, w):
    tester = CalibrationTester(
        name, measure_params={"grid": 20} if name == "dce" else None
    )
    measure, _ = tester._check_params()
    return _BinaryData(measure, y, p, w, None, None)


def test_statistic_and_weighted_draws_match_the_public_functions():
    # The statistic is the public function's value; with unequal weights each
    # draw is one Bernoulli per row (same uniforms as the reference) summed
    # into its group, so it equals the public function on the redrawn rows.
    for i, (y, p, w) in enumerate(random_cases(20, 40, max_n=30)):
        for name, function in MEASURE_FUNCTIONS.items():
            data = _binary_data(name, y, p, w)
            expected = function(y, p, sample_weight=w)
            assert data.statistic == pytest.approx(expected, abs=1e-9), (i, name)
            if data.p is None:  # equal weights: the binomial path, tested below
                continue
            for seed in range(3):
                got = data.draw(seed)
                want = row_null_draw_reference(function, y, p, w, seed)
                assert got == pytest.approx(want, abs=1e-9), (i, name, seed)


def test_binomial_draws_follow_the_exact_null_law():
    # Equal weights: one Binomial(count, v) per distinct value. Its law must be
    # the exact law of the measure under y* ~ Bernoulli(p), enumerated over all
    # 2^n outcomes; Kolmogorov distance at most 1.63 / sqrt(N) (1% level).
    rng = np.random.default_rng(21)
    n_draws = 3000
    for case in range(6):
        n = int(rng.integers(1, 8))
        p = rng.choice([0.0, 1.0, 0.3, 0.3, rng.random(), rng.random()], n)
        y = (rng.random(n) < p).astype(float)
        for name in ("smce", "cutoff", "binned_ece"):
            function = MEASURE_FUNCTIONS[name]
            law = exact_null_law_reference(function, p)
            data = _binary_data(name, y, p, np.full(n, 2.5))
            assert data.p is None
            draws = np.round([data.draw(s) for s in _seeds(case, n_draws)], 12)
            values = np.array(sorted(law))
            exact_cdf = np.cumsum([law[v] for v in values])
            empirical = np.searchsorted(np.sort(draws), values, side="right") / n_draws
            assert np.all(np.isin(draws, values)), (case, name)
            assert np.max(np.abs(empirical - exact_cdf)) <= 1.63 / math.sqrt(n_draws)


def test_sketch_in_place_of_data_gives_the_same_result():
    rng = np.random.default_rng(22)
    y, p = calibrated(rng, 500)
    p = np.round(p, 2)

    class Sketch:
        def __init__(self, statistic):
            self.statistic = statistic

        def grouped_statistic(self):
            return self.statistic

    sketch = Sketch(group(y, p, np.ones_like(p)))
    a = CalibrationTester(random_state=1).decide(y, p)
    b = CalibrationTester(random_state=1).decide(sketch)
    assert a == b
    with pytest.raises(ValueError, match="y_prob=None"):
        CalibrationTester().decide(sketch, p)
    weighted = Sketch(group(y, p, np.full(500, 0.5)))
    with pytest.raises(ValueError, match="non-integer weights"):
        CalibrationTester().decide(weighted)


# --- sequential Monte Carlo --------------------------------------------------


def test_checkpoints():
    assert _checkpoints(999)[0] == 20 and _checkpoints(999)[-1] == 999
    assert _checkpoints(5) == [5]
    points = _checkpoints(999)
    assert all(b > a for a, b in zip(points, points[1:]))


def test_sequential_resampling_risk_is_bounded():
    # A null whose exceedance probability q is known: T* ~ U(0, 1), T = 1 - q.
    # A decision taken before the last draw must agree with the ideal test
    # "reject iff q < alpha" except with probability at most the resampling
    # risk (here 0.05, so that it is measurable), also for q next to alpha;
    # undecided runs (q near alpha) are left to the fixed test (tested below).
    def draw(seed):
        return float(np.random.default_rng(seed).random())

    alpha, risk, runs = 0.05, 0.05, 200
    for q, max_draws in ((0.01, 1000), (0.045, 1000), (0.055, 1000), (0.2, 300)):
        wrong = undecided = 0
        for run in range(runs):
            null, decision = _sequential_test(
                draw, 1 - q, alpha, _seeds(run, max_draws), risk, None
            )
            undecided += decision is None
            wrong += decision is not None and decision != (q < alpha)
            assert decision is not None or null.size == max_draws
        assert wrong / runs <= risk + monte_carlo_slack(risk, runs), q
        if q in (0.01, 0.2):  # far from alpha: decided before the last draw
            assert undecided == 0, q


def test_sequential_stops_early_and_reports_resamples():
    rng = np.random.default_rng(23)
    y, p = calibrated(rng, 2000)
    tester = CalibrationTester(random_state=0).fit(y, p)
    assert tester.result_.calibrated
    assert tester.n_resamples_ == tester.result_.n_resamples < 999
    assert tester.null_statistics_.size == tester.n_resamples_
    y_bad = (rng.random(2000) < np.clip(p + 0.1, 0, 1)).astype(float)
    result = CalibrationTester(random_state=0).decide(y_bad, p)
    assert not result.calibrated and result.n_resamples < 999
    fixed = CalibrationTester(random_state=0, resampling_risk=None).decide(y, p)
    assert fixed.n_resamples == 999


def test_sequential_false_alarm_rate_at_most_alpha():
    # type I of the default (sequential) test: at most alpha + risk
    alpha, n_datasets = 0.1, 200
    rate = rejection_rate(
        lambda rng: calibrated(rng, 200), n_datasets, 30, alpha=alpha, n_resamples=499
    )
    assert rate <= alpha + 1e-3 + monte_carlo_slack(alpha, n_datasets)


def test_undecided_sequential_runs_take_the_fixed_decision():
    # The same seeds give the same draws, so a sequential run that used all
    # B draws saw exactly the fixed test's null and must decide as it does;
    # with a tiny resampling risk many runs near the boundary get there.
    rng = np.random.default_rng(26)
    full = agree = 0
    for run in range(40):
        y, p = calibrated(rng, 60)
        y = (rng.random(60) < np.clip(p + 0.08, 0, 1)).astype(float)
        params = dict(random_state=run, n_resamples=499)
        seq = CalibrationTester(resampling_risk=1e-5, **params).decide(y, p)
        fixed = CalibrationTester(resampling_risk=None, **params).decide(y, p)
        if seq.n_resamples == 499:
            full += 1
            agree += seq.calibrated == fixed.calibrated
            assert seq.p_value == fixed.p_value
    assert full >= 5 and agree == full


def test_early_rejection_excess_is_small():
    # eta of the Notes (what early rejections can add to the fixed test's
    # level), against a direct sum over q and the counts for one setting
    from scipy.stats import binom

    from skcal.tester._null import _early_rejection_excess, _rejection_counts

    for max_draws, alpha, risk in ((999, 0.05, 1e-3), (199, 0.1, 0.05), (499, 0.01, 1e-2)):
        eta = _early_rejection_excess(max_draws, alpha, risk)
        assert 0 <= eta <= risk, (max_draws, alpha, risk, eta)
    counts = _rejection_counts(199, 0.1, 0.05)
    k = math.floor(0.1 * 200 + 1e-9)
    worst = 0.0
    for q in np.linspace(0.001, 0.5, 500):
        total = 0.0
        for n, c in counts[:-1]:
            for s in range(c + 1):
                total += binom.pmf(s, n, q) * binom.sf(k - 1 - s, 199 - n, q)
        worst = max(worst, total)
    assert worst <= _early_rejection_excess(199, 0.1, 0.05) * 1.05 + 1e-12


def test_sequential_reproducible_and_independent_of_n_jobs():
    rng = np.random.default_rng(24)
    y, p = calibrated(rng, 300)
    a = CalibrationTester(random_state=3).fit(y, p)
    b = CalibrationTester(random_state=3, n_jobs=2).fit(y, p)
    assert a.result_ == b.result_
    np.testing.assert_array_equal(a.null_statistics_, b.null_statistics_)


# --- measure objects and the registry -----------------------------------------


def test_measure_objects_equal_their_names():
    rng = np.random.default_rng(25)
    y, p = calibrated(rng, 300)
    by_name = CalibrationTester(
        "binned_ece", measure_params={"n_bins": 5}, random_state=0
    ).decide(y, p)
    by_object = CalibrationTester(BinnedECE(n_bins=5), random_state=0).decide(y, p)
    assert by_name == by_object
    assert by_object.measure == "binned_ece"
    a = CalibrationTester(SmoothCalibrationError(), random_state=0).decide(y, p)
    assert a == CalibrationTester("smce", random_state=0).decide(y, p)
    theory = CalibrationTester(
        LowerDistanceToCalibration(grid=50), threshold="theory", epsilon=0.9
    ).fit(y, p)
    assert theory.result_.method == "theorem 4"
    with pytest.raises(ValueError, match="measure_params"):
        CalibrationTester("smce", measure_params={"n_bins": 3}).fit(y, p)


def test_utility_measure_is_tested_as_multiclass():
    # On main the measure object was called on the top-label reduction of the
    # probability matrix; now the statistic is the multiclass value and the
    # null draws y* ~ Categorical(p).
    rng = np.random.default_rng(26)
    n, C = 600, 4
    P = rng.dirichlet(np.ones(C), size=n)
    y = (rng.random(n)[:, None] > np.cumsum(P, axis=1)).sum(axis=1)
    measure = UtilityCalibrationError("class-wise")
    result = CalibrationTester(measure, random_state=0).decide(y, P)
    assert result.statistic == pytest.approx(
        utility_calibration_error(y, P, utility="class-wise")
    )
    assert result.measure == "utility" and result.calibrated
    # always predicting class 0 with probability at least 0.5 too often
    y_bad = np.where(rng.random(n) < 0.3, 0, y)
    assert not CalibrationTester(measure, random_state=0).decide(y_bad, P).calibrated
    with pytest.raises(ValueError, match="pos_label"):
        CalibrationTester(measure, pos_label=1).fit(y, P)


# --- issue 15: no silent wrong answers, no dead ends ---------------------------


def test_custom_measure_with_positional_weights():
    # written as doc/testing.md shows: f(y_true, y_prob, sample_weight) with
    # any names; main passed sample_weight= by keyword and failed
    def mean_bias(y, p, w):
        return abs(np.average(y - p, weights=w))

    def unweighted(y, p):
        return abs(np.mean(y - p))

    rng = np.random.default_rng(27)
    y, p = calibrated(rng, 400)
    result = CalibrationTester(mean_bias, random_state=0).decide(y, p)
    assert result.statistic == pytest.approx(abs(np.mean(y - p)))
    assert CalibrationTester(unweighted, random_state=0).decide(
        y, p
    ) == result.__class__(**{**dataclasses.asdict(result), "measure": "unweighted"})
    with pytest.raises(TypeError, match="sample_weight"):
        CalibrationTester(unweighted).fit(y, p, rng.random(400))


def test_measure_returning_nan_raises():
    rng = np.random.default_rng(28)
    y, p = calibrated(rng, 100)
    with pytest.raises(ValueError, match="finite"):
        CalibrationTester(lambda y, p, sample_weight=None: np.nan).fit(y, p)
    calls = []

    def nan_on_resamples(y, p, sample_weight=None):
        calls.append(1)
        return 0.1 if len(calls) == 1 else float("nan")

    with pytest.raises(ValueError, match="on a resample"):
        CalibrationTester(nan_on_resamples).fit(y, p)


@pytest.mark.parametrize(
    "measure, tolerance", [("smce", 0.6), ("smce", 0.2), ("dce", 0.34)]
)
def test_tolerance_that_can_never_reject_raises(measure, tolerance):
    rng = np.random.default_rng(29)
    y, p = calibrated(rng, 100)
    with pytest.raises(ValueError, match="could never reject"):
        CalibrationTester(measure, tolerance=tolerance).fit(y, p)


def test_large_smce_tolerance_still_rejects_what_is_far_outside():
    # the smCE threshold adapts to the data (its bound on moving predictions
    # uses the data's own optimal test): predictions 0 for outcomes 1
    # (dCE = 1) are rejected at tolerance 0.15
    y, p = np.ones(2000), np.zeros(2000)
    result = CalibrationTester(tolerance=0.15, n_resamples=99, random_state=0).decide(
        y, p
    )
    assert not result.calibrated and result.statistic == 1.0


# --- the tolerant resample test (dCE <= tolerance) ---------------------------

from skcal.tester._tolerant import (  # noqa: E402
    _LAGRANGE_GRID,
    _bernstein,
    _coupling_plan,
    _SmceMoveBound,
)

from reference_tester import (  # noqa: E402
    coupling_failures_reference,
    smce_move_gap_bruteforce,
)


def two_point(rng, n, a, d):
    """y ~ Bern(a); v = a + d if y = 1 else a: dCE = a d, smCE = a d (2 - a - d).

    The calibrated predictions u = a are at distance a d; the predictions
    move with the outcome, so smCE is 1.7 dCE at a = 0.1, d = 0.2: the
    hardest kind of null for a statistic that is 2-Lipschitz in the
    predictions.
    """
    y = (rng.random(n) < a).astype(float)
    return y, np.where(y == 1, a + d, a)


def test_two_point_null_is_at_the_boundary():
    y, p, w = [0, 1], [0.1, 0.3], [0.9, 0.1]
    assert lower_distance_to_calibration(y, p, sample_weight=w, grid=1000) == (
        pytest.approx(0.02, abs=1e-9)
    )
    assert smooth_calibration_error(y, p, sample_weight=w) == pytest.approx(0.034)


def test_tolerant_smce_is_valid_at_the_null_boundary():
    # 200 data sets per boundary distribution (dCE = tolerance exactly): the
    # tolerant test may reject at most alpha + 3 binomial standard errors;
    # the plain test (tolerance 0) rejects many of them
    eps2, n, n_datasets = 0.05, 300, 200
    makers = [
        lambda rng: ((rng.random(n) < 0.5).astype(float), np.full(n, 0.5 + eps2)),
        lambda rng: shifted(rng, n, eps2),
        lambda rng: two_point(rng, n, 0.2, 0.25),
    ]
    for seed, make in enumerate(makers):
        rate = rejection_rate(
            make, n_datasets, 40 + seed, tolerance=eps2, n_resamples=49
        )
        assert rate <= 0.05 + monte_carlo_slack(0.05, n_datasets)
        plain = rejection_rate(
            make, 20, 40 + seed, n_resamples=49, resampling_risk=None
        )
        assert plain >= 0.25


def test_tolerant_smce_certifies_small_epsilon_at_n_5000():
    # the old rule (threshold shifted by 5 A' + t_F) certified 0.39 here
    rng = np.random.default_rng(41)
    for y, p in (
        ((rng.random(5000) < 0.5).astype(float), np.full(5000, 0.52)),
        shifted(rng, 5000, 0.02),
    ):
        result = CalibrationTester(tolerance=0.02, random_state=0).decide(y, p)
        assert result.calibrated
        assert result.min_epsilon <= 0.25
        # and it rejects a shift of 0.12 at that n
        y_far, p_far = shifted(rng, 5000, 0.12)
        far = CalibrationTester(tolerance=0.02, random_state=0).decide(y_far, p_far)
        assert not far.calibrated


def test_tolerant_result_is_reproducible_and_independent_of_n_jobs():
    rng = np.random.default_rng(42)
    y, p = shifted(rng, 400, 0.05)
    w = rng.integers(1, 4, 400).astype(float)
    runs = [
        CalibrationTester(
            tolerance=0.02, n_resamples=99, random_state=3, n_jobs=jobs
        ).fit(y, p, sample_weight=w)
        for jobs in (1, 2)
    ]
    assert runs[1].result_ == runs[0].result_
    np.testing.assert_array_equal(runs[1].null_statistics_, runs[0].null_statistics_)


def test_coupling_plan_against_the_binomial_law():
    for n_resamples in (24, 99, 199, 999):
        for level in (0.01, 0.05, 0.2, 0.5):
            plan = _coupling_plan(level, n_resamples)
            k = math.floor(0.8 * level * (n_resamples + 1) + 1e-9)
            if k < 1:
                assert plan is None
                continue
            k_plan, j, delta = plan
            assert k_plan == k and j == k // 2
            # P(more than j of B coupling bounds fail) <= 0.1 level, and tight
            assert coupling_failures_reference(n_resamples, j, delta) <= (
                0.1 * level * (1 + 1e-9)
            )
            assert coupling_failures_reference(n_resamples, j, delta * 1.01) > (
                0.1 * level
            )


def _move_bound(y, p, w):
    y = np.asarray(y, dtype=float)
    G = group((y == 1).astype(np.uint8), np.asarray(p, dtype=float), w)
    return _SmceMoveBound(G, smooth_calibration_error(y, p, sample_weight=w))


def test_smce_move_gap_against_bruteforce():
    # the exact piecewise minimum of the fast path against a dense grid: the
    # grid's gap is below the exact one by at most (2 + lambda) / 4000
    rng = np.random.default_rng(43)
    checked = 0
    for case in range(60):
        n = [1, 2, 5, 12, 30][case % 5]
        if case % 6 == 0:  # ties
            p = rng.choice([0.0, 0.3, 0.31, 1.0], n)
        else:
            p = rng.uniform(size=n) ** (1 + case % 3)
        y = (rng.random(n) < np.clip(p + rng.normal(0, 0.2), 0, 1)).astype(float)
        if case % 7 == 0:
            y[:] = case % 2  # one class
        w = rng.integers(1, 4, n).astype(float) if case % 2 else np.ones(n)
        bound = _move_bound(y, p, w)
        for index in (0, 10, 40, 80):
            lam = _LAGRANGE_GRID[index]
            want = smce_move_gap_bruteforce(y, p, w, lam)
            got = bound.gaps[index]
            assert want - 1e-9 <= got <= want + (2 + lam) / 4000 + 1e-9
            checked += 1
    assert checked == 240


def test_smce_move_bound_holds_for_moved_predictions():
    # smCE(p, y) - smCE(u, y) <= bound(mean |u - p|) for every u in [0, 1]^n:
    # random moves, one row moved far, every row moved one way, and the
    # two-point construction where smCE falls by 1.7 times the distance
    rng = np.random.default_rng(44)
    worst = 0.0
    for case in range(120):
        n = [1, 3, 10, 40][case % 4]
        p = rng.uniform(size=n)
        if case % 5 == 0:
            p = rng.choice([0.0, 0.5, 1.0], n)
        y = (rng.random(n) < p).astype(float)
        w = rng.integers(1, 5, n).astype(float) if case % 3 == 0 else np.ones(n)
        bound = _move_bound(y, p, w)
        value = smooth_calibration_error(y, p, sample_weight=w)
        kind = case % 4
        for _ in range(10):
            if kind == 0:
                u = np.clip(p + rng.normal(0, 0.1, n), 0, 1)
            elif kind == 1:
                u = p.copy()
                i = rng.integers(n)
                u[i] = rng.uniform()
            elif kind == 2:
                u = np.clip(p - rng.uniform(0, 0.2) * np.sign(rng.normal()), 0, 1)
            else:
                u = np.where(y == 1, p - rng.uniform(0, 0.3, n), p)
                u = np.clip(u, 0, 1)
            distance = float(np.average(np.abs(u - p), weights=w))
            drop = value - smooth_calibration_error(y, u, sample_weight=w)
            assert drop <= bound(distance) + 1e-12
            if distance > 0:
                worst = max(worst, drop / distance)
    assert worst > 1.0  # the factor above 1 is met, so the check has teeth
    # the two-point data: u = 0.1 everywhere is calibrated at distance 0.02
    y, p = [0, 1], np.array([0.1, 0.3])
    w = np.array([0.9, 0.1])
    bound = _move_bound(y, p, w)
    assert bound(0.02) >= 0.034 - 1e-12


def test_per_draw_coupling_bound_by_simulation():
    # smCE(u, y*_u) - smCE(p, y*_p) with y*_u = 1{U < u}, y*_p = 1{U < p} and
    # the same uniforms exceeds A/2 + t_G + (1 + spread) t_M with probability
    # at most delta (Notes of CalibrationTester)
    rng = np.random.default_rng(45)
    n, delta, n_draws = 200, 0.05, 1500
    for case in range(3):
        p = rng.uniform(size=n)
        if case == 0:
            u = np.clip(p + rng.normal(0, 0.05, n), 0, 1)
        elif case == 1:
            u = np.where(rng.random(n) < 0.1, 0.5, p)
        else:
            u = np.clip(p - 0.04, 0, 1)
        A = float(np.mean(np.abs(u - p)))
        share = 1 / n
        spread = float(p.max() - p.min())
        allowed = (
            A / 2
            + _bernstein(share * A / 4, share, delta / 2)
            + (1 + spread) * _bernstein(share * A, share, delta / 4)
        )
        U = rng.random((n_draws, n))
        exceed = 0
        for b in range(n_draws):
            y_u = (U[b] < u).astype(float)
            y_p = (U[b] < p).astype(float)
            gap = smooth_calibration_error(y_u, u) - smooth_calibration_error(y_p, p)
            exceed += gap > allowed
        assert exceed / n_draws <= delta + 3 * math.sqrt(delta * (1 - delta) / n_draws)


def test_result_says_what_its_numbers_are_about():
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(3), size=300)
    y = np.array([rng.choice(3, p=row) for row in P])
    multiclass = CalibrationTester(random_state=0, n_resamples=199).fit(y, P).decide()
    assert multiclass.target == "top-label"
    assert "top-label smCE" in str(multiclass)
    binary = CalibrationTester(random_state=0, n_resamples=199).fit(
        (y == 1).astype(int), P[:, 1]
    ).decide()
    assert binary.target is None and "top-label" not in str(binary)
    utility = CalibrationTester(
        measure=UtilityCalibrationError(utility="comb"), random_state=0, n_resamples=199
    ).fit(y, P).decide()
    assert utility.target == "comb" and "(comb)" in str(utility)
