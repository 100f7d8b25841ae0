"""Confidence intervals of the measures (``measure.interval``).

The fast path resamples the grouped statistic (one Gamma variate per
distinct prediction and outcome); its slow twins here resample the rows
(one ``Exp(1)`` multiplier per row, the measure's public function called on
the reweighted rows), and draw the calibrated null row by row.
"""

import dataclasses
import math

import numpy as np
import pytest
from scipy.stats import ks_2samp

import skcal._interval as interval_module
from skcal import (
    BinnedECE,
    CalibrationDecisionLoss,
    CalibrationSketch,
    CalibrationTester,
    CutoffCalibrationError,
    LowerDistanceToCalibration,
    SmoothCalibrationError,
    SoftBinnedCDL,
    UtilityCalibrationError,
    binned_ece,
    calibration_decision_loss,
    smooth_calibration_error,
    soft_binned_cdl,
)
from skcal._grouped import group
from skcal._interval import _binary_cells, _Layout

FAST_MEASURES = [
    SmoothCalibrationError(),
    CutoffCalibrationError(),
    SoftBinnedCDL(),
    BinnedECE(n_bins=5),
    BinnedECE(n_bins=4, strategy="quantile", norm="l2"),
]


def _small_case(rng, kind):
    """Small binary data with ties, weights or extremes."""
    n = int(rng.integers(20, 60))
    if kind == "ties":
        p = rng.choice([0.0, 0.2, 0.5, 0.7, 1.0], size=n)
    else:
        p = np.round(rng.uniform(size=n), 2)
    y = (rng.uniform(size=n) < np.clip(p + rng.uniform(-0.2, 0.2), 0, 1)).astype(int)
    w = None
    if kind == "weights":
        # equal weights within a (value, outcome) cell: the grouped draw is exact
        w = 0.5 + 3 * p + y
    return y, p, w


# --- slow twins -------------------------------------------------------------


def row_bootstrap(function, y, p, w, n_resamples, rng):
    """Bayesian bootstrap on the rows: the measure of rows reweighted by Exp(1)."""
    w = np.ones(p.shape[0]) if w is None else np.asarray(w, float)
    return np.array(
        [
            function(y, p, sample_weight=w * rng.standard_exponential(p.shape[0]))
            for _ in range(n_resamples)
        ]
    )


def row_null(function, p, w, n_resamples, rng):
    """The calibrated null on the rows: y* ~ Bernoulli(p), one per row."""
    out = []
    for _ in range(n_resamples):
        y = (rng.uniform(size=p.shape[0]) < p).astype(int)
        if y.min() == y.max():  # keep both labels present for the public function
            y = np.concatenate([y, [0, 1]])
            pp = np.concatenate([p, [0.0, 1.0]])
            ww = np.concatenate([np.ones(p.shape[0]) if w is None else w, [0.0, 0.0]])
            out.append(function(y, pp, sample_weight=ww))
        else:
            out.append(function(y, p, sample_weight=w))
    return np.array(out)


def reference_interval(function, y, p, w, confidence, n_resamples, rng, max_value=1.0):
    """The hull of the basic and percentile intervals, the null's lower end, on the rows."""
    a = 1 - confidence
    t = function(y, p, sample_weight=w)
    draws = row_bootstrap(function, y, p, w, n_resamples, rng)
    basic = (t - np.quantile(draws - t, 1 - a / 2), t - np.quantile(draws - t, a / 2))
    percentile = (np.quantile(draws, a / 2), np.quantile(draws, 1 - a / 2))
    low = min(max(min(basic[0], percentile[0]), 0.0), max_value)
    high = min(max(max(basic[1], percentile[1]), 0.0), max_value)
    null = row_null(function, p, w, n_resamples, rng)
    if (1 + np.sum(null >= t)) / (n_resamples + 1) > a / 2:
        low = 0.0
    return low, high


def reference_cutoff_band(y, p, w, confidence, n_resamples, rng):
    """The cutoff error's uniform band on the rows (``_cutoff_band``'s twin).

    Per resample, the residual process ``S*(t) = sum_{p_i <= t} w_i E_i (y_i -
    p_i) / sum_i w_i E_i`` minus the data's, read at every distinct ``p``;
    ``q`` is the quantile of its largest increment and the band ``T -+ q``.
    """
    w = np.ones(p.shape[0]) if w is None else np.asarray(w, float)
    order = np.argsort(p, kind="stable")
    ps, ys, ws = p[order], np.asarray(y, float)[order], w[order]
    ends = np.flatnonzero(np.concatenate([ps[1:] != ps[:-1], [True]]))
    r = ws * (ys - ps)

    def process(mult):
        return np.cumsum(r * mult)[ends] / np.sum(ws * mult)

    base = process(np.ones(p.shape[0]))
    sup = []
    for _ in range(n_resamples):
        d = process(rng.standard_exponential(p.shape[0])) - base
        sup.append(max(d.max(), 0.0) - min(d.min(), 0.0))
    q = np.quantile(sup, confidence)
    t = max(base.max(), 0.0) - min(base.min(), 0.0)
    return max(t - q, 0.0), min(t + q, 1.0)


def _function(measure):
    params = measure.get_params()

    def f(y, p, sample_weight=None):
        return measure._function(y, p, sample_weight=sample_weight, **params)

    return f


# --- the resampling laws ----------------------------------------------------


def test_grouped_draws_have_the_law_of_row_reweighting():
    # Exp(1) multipliers summed over the rows of a cell are Gamma(count): the
    # grouped draw must have exactly the law of the row-level twin
    rng = np.random.default_rng(0)
    pvalues = []
    for case in range(6):
        kind = ("ties", "weights", "plain")[case % 3]
        y, p, w = _small_case(rng, kind)
        for measure in FAST_MEASURES[case % 2:4:2]:
            cells, _, _ = _binary_cells(measure, y, p, w, measure.get_params())
            fast = np.array(
                [measure._grouped_core(cells.draw(rng)) for _ in range(500)]
            )
            slow = row_bootstrap(_function(measure), y, p, w, 500, rng)
            pvalues.append(ks_2samp(fast, slow).pvalue)
    # 24 comparisons of equal laws: a Bonferroni bound at 0.001 overall
    assert min(pvalues) > 0.001 / len(pvalues)


def test_grouped_null_has_the_law_of_row_bernoullis():
    rng = np.random.default_rng(1)
    pvalues = []
    for case in range(4):
        y, p, _ = _small_case(rng, ("ties", "plain")[case % 2])
        for measure in FAST_MEASURES[case % 2:3:2]:
            cells, _, _ = _binary_cells(measure, y, p, None, measure.get_params())
            fast = np.array(
                [measure._grouped_core(cells.null_draw(rng)) for _ in range(500)]
            )
            slow = row_null(_function(measure), p, None, 500, rng)
            pvalues.append(ks_2samp(fast, slow).pvalue)
    assert min(pvalues) > 0.001 / len(pvalues)


def test_unequal_weights_in_a_cell_match_row_moments():
    # rows of different weights in a cell: a moment-matched Gamma, so the
    # resampled measure has the mean and spread of the row-level twin
    rng = np.random.default_rng(2)
    n = 400
    p = rng.choice(np.linspace(0.05, 0.95, 7), size=n)
    y = (rng.uniform(size=n) < p + 0.08).astype(int)
    w = rng.uniform(0.2, 3.0, size=n)
    measure = SmoothCalibrationError()
    cells, _, _ = _binary_cells(measure, y, p, w, measure.get_params())
    fast = np.array([measure._grouped_core(cells.draw(rng)) for _ in range(1500)])
    slow = row_bootstrap(_function(measure), y, p, w, 1500, rng)
    assert abs(fast.mean() - slow.mean()) < 0.1 * slow.std()
    assert abs(fast.std() / slow.std() - 1) < 0.1


def test_interval_matches_row_level_reference():
    rng = np.random.default_rng(3)
    for case in range(6):
        kind = ("ties", "weights", "plain")[case % 3]
        y, p, w = _small_case(rng, kind)
        for measure in FAST_MEASURES[case % 2::2]:
            # SCDL's default is its finite-sample bound (tested on its own):
            # its bootstrap is checked here
            method = "bootstrap" if isinstance(measure, SoftBinnedCDL) else "auto"
            ci = measure.interval(
                y, p, sample_weight=w, n_resamples=1000, random_state=case, method=method
            )
            if isinstance(measure, CutoffCalibrationError):
                low, high = reference_cutoff_band(y, p, w, 0.95, 1000, rng)
            else:
                low, high = reference_interval(
                    _function(measure), y, p, w, 0.95, 1000, rng,
                    max_value=measure._max_value,
                )
            # Monte Carlo error of a 2.5% quantile of 1000 draws, on the scale
            # of the interval or of the value (an end clipped at 0 is short)
            scale = max(high - low, ci.high - ci.low, ci.estimate, 1e-3)
            # the lower end may sit at 0 by the null rule on one side only
            # when the data are at the null's edge; the upper ends agree
            assert abs(ci.high - high) <= 0.25 * scale, (case, measure, ci, high)
            if low > 0 and ci.low > 0:
                assert abs(ci.low - low) <= 0.25 * scale, (case, measure, ci, low)


# --- what the interval reports ---------------------------------------------


def test_bunch_fields_and_reproducibility():
    rng = np.random.default_rng(4)
    p = rng.uniform(size=300)
    y = rng.uniform(size=300) < p
    for measure in FAST_MEASURES:
        ci = measure.interval(y, p, random_state=7)
        again = measure.interval(y, p, random_state=7)
        assert dict(ci) == dict(again)
        for key in ("estimate", "low", "high", "confidence", "method"):
            assert key in ci
        assert 0 <= ci.low <= ci.high
        assert ci.estimate == pytest.approx(measure(y, p))
        expected = "analytic" if isinstance(measure, SoftBinnedCDL) else "bootstrap"
        assert ci.confidence == 0.95 and ci.method == expected


def test_caller_arrays_unchanged():
    rng = np.random.default_rng(5)
    p = rng.uniform(size=200)
    y = (rng.uniform(size=200) < p).astype(int)
    w = rng.uniform(0.5, 2, size=200)
    copies = [a.copy() for a in (y, p, w)]
    SmoothCalibrationError().interval(y, p, sample_weight=w, random_state=0)
    for a, b in zip((y, p, w), copies):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    "y, p",
    [([1], [0.3]), ([0, 0, 0], [0.0, 0.0, 0.0]), ([1, 1], [1.0, 1.0]), ([0, 1], [0.0, 1.0])],
)
def test_degenerate_inputs(y, p):
    for measure in FAST_MEASURES[:4]:
        ci = measure.interval(y, p, random_state=0, n_resamples=50)
        assert 0 <= ci.low <= ci.high <= measure._max_value


def test_analytic_upper_bound_formula_and_coverage():
    # [0, T + sqrt(ln(1/a) / (2 N))] covers the smCE of the outcome law on the
    # predictions (McDiarmid): check the value and its coverage by simulation
    rng = np.random.default_rng(6)
    n = 400
    p = np.sort(rng.uniform(size=n))
    mu = np.clip(p + 0.04 * np.sin(6 * p), 0, 1)
    truth = smooth_calibration_error(np.r_[np.zeros(n), np.ones(n)], np.r_[p, p],
                                     sample_weight=np.r_[1 - mu, mu])
    covered = []
    for _ in range(300):
        y = (rng.uniform(size=n) < mu).astype(int)
        ci = SmoothCalibrationError().interval(y, p, method="analytic", confidence=0.9)
        t = smooth_calibration_error(y, p)
        assert ci.low == 0.0
        assert ci.high == pytest.approx(t + math.sqrt(math.log(1 / 0.1) / (2 * n)))
        covered.append(ci.high >= truth)
    assert np.mean(covered) >= 0.9


def test_weighted_analytic_uses_effective_size():
    rng = np.random.default_rng(7)
    p = rng.uniform(size=100)
    y = rng.uniform(size=100) < p
    w = np.r_[np.ones(50), 3 * np.ones(50)]
    n_eff = w.sum() ** 2 / (w**2).sum()
    ci = CutoffCalibrationError().interval(y, p, sample_weight=w, method="analytic")
    assert ci.n_effective == pytest.approx(n_eff)
    t = math.sqrt(math.log(1 / 0.05) / (2 * n_eff))
    value = CutoffCalibrationError()(y, p, sample_weight=w)
    assert ci.high == pytest.approx(min(value + t, 1.0))


def test_cdl_is_not_presented_as_an_estimate_on_continuous_scores():
    rng = np.random.default_rng(8)
    p = rng.uniform(size=500)
    y = rng.uniform(size=500) < p
    ci = CalibrationDecisionLoss().interval(y, p, random_state=0)
    assert ci.method == "scdl-bound"
    assert math.isnan(ci.estimate)
    assert ci.plug_in == pytest.approx(calibration_decision_loss(y, p))
    assert ci.high == 1.0
    # the lower end is a lower end of SCDL's interval (SCDL <= CDL)
    scdl = SoftBinnedCDL().interval(y, p, confidence=0.9, random_state=0)
    assert ci.low <= soft_binned_cdl(y, p)
    assert ci.low <= scdl.high
    # discrete scores with many rows each: the plug-in is bootstrapped
    q = rng.choice([0.1, 0.4, 0.8], size=600)
    z = rng.uniform(size=600) < q
    ci = CalibrationDecisionLoss().interval(z, q, random_state=0)
    assert ci.method == "bootstrap" and ci.estimate == pytest.approx(
        calibration_decision_loss(z, q)
    )


def test_multiclass_is_top_label_and_utility_is_named():
    rng = np.random.default_rng(9)
    P = rng.dirichlet(np.ones(3), size=300)
    y = np.array([rng.choice(3, p=row) for row in P])
    ci = SmoothCalibrationError().interval(y, P, random_state=0)
    assert ci.target == "top-label"
    assert ci.estimate == pytest.approx(smooth_calibration_error(y, P))
    uc = UtilityCalibrationError().interval(y, P, n_resamples=30, random_state=0)
    assert "top-class" in uc.target
    assert 0 <= uc.low <= uc.high


def test_sketch_and_dask_give_the_interval_of_the_arrays():
    rng = np.random.default_rng(10)
    p = np.round(rng.uniform(size=3000), 3)
    y = (rng.uniform(size=3000) < p).astype(int)
    sketch = CalibrationSketch().update(y, p)
    for measure in (SmoothCalibrationError(), BinnedECE()):
        a = measure.interval(y, p, random_state=3)
        b = measure.interval(sketch, random_state=3)
        assert (a.low, a.high, a.estimate) == pytest.approx((b.low, b.high, b.estimate))
    with pytest.raises(ValueError, match="y_prob=None"):
        SmoothCalibrationError().interval(sketch, p)
    da = pytest.importorskip("dask.array")
    c = SmoothCalibrationError().interval(
        da.from_array(y, chunks=700), da.from_array(p, chunks=700), random_state=3
    )
    a = SmoothCalibrationError().interval(y, p, random_state=3)
    assert (a.low, a.high, a.estimate) == pytest.approx((c.low, c.high, c.estimate))


def test_large_n_cells_keep_the_sums(monkeypatch):
    # above the layout's size the rows are summed into cells without a sort:
    # total, positive weight and residual sum are kept, and the uniform ECE
    # (a function of the bin sums) is exactly that of the rows
    monkeypatch.setattr(interval_module, "_MAX_GROUPS", 64)
    rng = np.random.default_rng(11)
    n = 2000
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p).astype(int)
    w = rng.uniform(0.5, 2, size=n)
    for measure in (BinnedECE(n_bins=7), SmoothCalibrationError()):
        cells, estimate, _ = _binary_cells(measure, y, p, w, measure.get_params())
        G = cells.G
        assert len(G) <= _Layout(measure).size < n
        assert np.all(np.diff(G.values) > 0)
        assert G.total == pytest.approx(w.sum())
        assert G.positives.sum() == pytest.approx((w * y).sum())
        assert (G.positives - G.values * G.weights).sum() == pytest.approx(
            (w * (y - p)).sum()
        )
        assert estimate == pytest.approx(measure(y, p, sample_weight=w))
    G = _binary_cells(BinnedECE(n_bins=7), y, p, w, BinnedECE(n_bins=7).get_params())[0].G
    assert BinnedECE(n_bins=7)._grouped_core(G) == pytest.approx(
        binned_ece(y, p, sample_weight=w, n_bins=7)
    )
    # the same cells from a grouped statistic (a sketch) as from the rows
    full = group(y, p, w)
    c = interval_module._Cells(full, np.zeros(len(full)), np.zeros(len(full)))
    merged = c.blocks(_Layout(SmoothCalibrationError())).G
    rows = _binary_cells(
        SmoothCalibrationError(), y, p, w, SmoothCalibrationError().get_params()
    )[0].G
    np.testing.assert_allclose(merged.weights, rows.weights)
    np.testing.assert_allclose(merged.values, rows.values)


def test_dce_interval_runs_on_its_cells():
    rng = np.random.default_rng(12)
    p = rng.uniform(size=300)
    y = rng.uniform(size=300) < np.clip(p + 0.1, 0, 1)
    ci = LowerDistanceToCalibration(grid=20).interval(
        y, p, n_resamples=20, random_state=0
    )
    assert 0 <= ci.low <= ci.high <= 1
    assert ci.merged


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"confidence": 1.0}, "confidence"),
        ({"confidence": 0}, "confidence"),
        ({"confidence": "0.9"}, "confidence"),
        ({"confidence": True}, "confidence"),
        ({"method": "percentile"}, "method"),
        ({"n_resamples": 5}, "n_resamples"),
    ],
)
def test_bad_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SmoothCalibrationError().interval([0, 1], [0.2, 0.7], **kwargs)


def test_method_not_available_for_the_measure():
    with pytest.raises(ValueError, match="method"):
        BinnedECE().interval([0, 1], [0.2, 0.7], method="analytic")
    with pytest.raises(ValueError, match="y_prob"):
        SmoothCalibrationError().interval([0, 1])


# --- CalibrationTestResult as text -----------------------------------------


def _result(**changes):
    rng = np.random.default_rng(13)
    p = rng.uniform(size=1000)
    y = rng.uniform(size=1000) < p
    result = CalibrationTester(random_state=0).decide(y, p)
    return dataclasses.replace(result, **changes)


def test_result_reads_as_a_sentence():
    result = _result()
    assert result.calibrated
    text = str(result)
    assert text.startswith("calibrated: no evidence of miscalibration at level 0.05; smCE ")
    assert f"the data certify smCE <= {result.min_epsilon_measure:.3g}" in text
    shown = _result(interval=(0.004, 0.021))
    assert "[0.004, 0.021]" in str(shown)
    rejected = _result(calibrated=False)
    assert str(rejected).startswith("not calibrated: miscalibration detected")
    assert "certify" not in str(rejected)
    tolerant = _result(tolerance=0.02)
    assert "dCE exceeds 0.02" in str(tolerant)


def test_result_names_top_label_and_utility_everywhere():
    result = _result(target="top-label", interval=(0.01, 0.02))
    for text in (str(result), result.summary(), result._repr_html_()):
        assert "top-label smCE" in text
    utility = _result(measure="utility", target="top-class", min_epsilon_measure=None)
    assert "utility calibration error (top-class)" in str(utility)


def test_result_summary_and_html():
    result = _result(interval=(0.001, 0.02))
    summary = result.summary()
    assert summary.splitlines()[0] == str(result)
    assert "certified bound" in summary and "p-value" in summary
    html = result._repr_html_()
    assert html.startswith("<div>") and "<table" in html and "&lt;=" in html


def test_kumar_debiased_l2_ece_matches_rows():
    # slow twin: per bin, from the rows, the unbiased squared bias of Kumar,
    # Liang and Ma, (ybar - pbar)^2 - ybar (1 - ybar) / (n_b - 1)
    rng = np.random.default_rng(14)
    for _ in range(20):
        n = int(rng.integers(30, 300))
        p = np.round(rng.uniform(size=n), 3)
        y = (rng.uniform(size=n) < np.clip(p + rng.uniform(-0.1, 0.1), 0, 1)).astype(int)
        ci = BinnedECE(n_bins=5, norm="l2").interval(y, p, n_resamples=20, random_state=0)
        b = np.minimum((p * 5).astype(int), 4)
        total = 0.0
        for k in range(5):
            rows = b == k
            m = rows.sum()
            if m == 0:
                continue
            ybar, pbar = y[rows].mean(), p[rows].mean()
            term = (ybar - pbar) ** 2 - (ybar * (1 - ybar) / (m - 1) if m > 1 else 0.0)
            total += m * term
        assert ci.debiased_l2 == pytest.approx(math.sqrt(max(total / n, 0.0)), abs=1e-12)
