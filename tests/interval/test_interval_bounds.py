"""The fast intervals against slow twins, and the bounds' guarantees.

* The uniform binned ECE and the cutoff error resample every cell of a
  statistic in one array; their twins resample the rows (one ``Exp(1)``
  multiplier per row) or draw the cells one resample at a time.
* SCDL's finite-sample interval is checked against a direct recomputation
  of its formula and for coverage of the measure of the outcome law on the
  predictions (what it guarantees).
* The cutoff band is checked for coverage of a population value computed
  here by numeric integration.
* A ``CalibrationTester`` result carries the interval of its measure.
"""

import math

import numpy as np
import pytest
from scipy.stats import ks_2samp

from skcal import (
    BinnedECE,
    CalibrationDecisionLoss,
    CalibrationSketch,
    CalibrationTester,
    CutoffCalibrationError,
    SmoothCalibrationError,
    SoftBinnedCDL,
    cutoff_calibration_error,
    soft_binned_cdl,
)
from skcal._grouped import GroupedStatistic
from skcal._interval import (
    _binary_cells,
    _Layout,
    _plain_ece_cells,
    _vector_core,
    _vector_draws,
)
from skcal._interval_bounds import _MAX_SCDL_LEVEL, _cutoff_sup_draws, _scdl_bound, _soft_sums
from skcal.metrics._scdl import scdl_core


def _case(rng, kind, n=None):
    """Binary data with ties (at bin and cell edges), weights, extremes."""
    n = int(rng.integers(1, 80)) if n is None else n
    if kind == "ties":
        p = rng.choice([0.0, 1 / 15, 0.2, 0.5, 7 / 15, 1.0], size=n)
    else:
        p = np.round(rng.uniform(size=n), 3)
    y = (rng.uniform(size=n) < np.clip(p + rng.uniform(-0.2, 0.2), 0, 1)).astype(int)
    if kind == "one class":
        y = np.zeros(n, int) + int(rng.integers(2))
    w = rng.uniform(0.1, 3.0, size=n) if kind == "weights" else None
    return y, p, w


KINDS = ("ties", "weights", "plain", "one class")


def _work(measure, y, p, w):
    cells, _, _ = _binary_cells(measure, y, p, w, measure.get_params())
    return cells.blocks(_Layout(measure))


# --- the uniform ECE in one array ------------------------------------------


def test_vector_ece_equals_the_measure_core_on_every_draw():
    rng = np.random.default_rng(0)
    for case in range(120):
        y, p, w = _case(rng, KINDS[case % 4])
        measure = BinnedECE(n_bins=(1, 3, 15)[case % 3], norm=("l1", "l2", "max")[case // 3 % 3])
        work = _work(measure, y, p, w)
        f = _vector_core(measure, work)
        pos, W = _vector_draws(work, rng, 4)
        fast = f(pos, W)
        for r in range(4):
            keep = W[r] > 0
            G = GroupedStatistic(work.G.values[keep], W[r][keep], pos[r][keep])
            assert fast[r] == pytest.approx(measure._grouped_core(G), rel=1e-9, abs=1e-12)


def test_plain_ece_cells_are_the_grouped_cells():
    # the one-pass kernel's cells (plain numpy input) against grouping the
    # rows and merging the groups into the same cells
    rng = np.random.default_rng(1)
    for case in range(80):
        y, p, w = _case(rng, KINDS[case % 4])
        measure = BinnedECE(n_bins=(2, 15)[case % 2])
        layout = _Layout(measure)
        fast = _plain_ece_cells(y.astype(np.int64), p, w, measure.get_params(), layout)
        slow = _work(measure, y, p, w)
        assert len(fast.G) == len(slow.G)
        for a, b in (
            (fast.G.values, slow.G.values), (fast.pos, slow.pos), (fast.neg, slow.neg),
            (fast.pos2, slow.pos2), (fast.neg2, slow.neg2),
        ):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
        # every cell is in the bin of its rows
        edges = np.arange(1, measure.n_bins) / measure.n_bins
        assert np.array_equal(
            np.searchsorted(edges, fast.G.values, side="right"),
            np.searchsorted(edges, slow.G.values, side="right"),
        )


def _row_draws(function, y, p, w, R, rng):
    w = np.ones(p.shape[0]) if w is None else np.asarray(w, float)
    return np.array(
        [function(y, p, sample_weight=w * rng.standard_exponential(p.shape[0]))
         for _ in range(R)]
    )


def test_vector_ece_draws_have_the_law_of_row_reweighting():
    rng = np.random.default_rng(2)
    pvalues = []
    for case in range(6):
        y, p, w = _case(rng, ("plain", "weights", "ties")[case % 3], n=150)
        measure = BinnedECE(n_bins=5, norm=("l1", "l2")[case % 2])
        work = _work(measure, y, p, w)
        fast = _vector_core(measure, work)(*_vector_draws(work, rng, 600))
        slow = _row_draws(measure, y, p, w, 600, rng)
        pvalues.append(ks_2samp(fast, slow).pvalue)
    assert min(pvalues) > 0.001 / len(pvalues)


def test_normal_approximation_of_large_cells_matches_gamma_draws():
    # cells of more than 1000 rows are drawn from the normal approximation of
    # their Gamma law; the twin draws each resample's Gamma variates exactly
    rng = np.random.default_rng(3)
    n = 300_000
    p = rng.uniform(0.1, 0.9, size=n)
    y = (rng.uniform(size=n) < p + 0.03).astype(np.int64)
    measure = BinnedECE(n_bins=5)
    work = _work(measure, y, p, None)
    shape = np.concatenate([work.pos**2 / work.pos2, work.neg**2 / work.neg2])
    assert 0.5 < np.mean(shape >= 1000) < 1  # both kinds of draws
    fast = _vector_core(measure, work)(*_vector_draws(work, rng, 800))
    slow = np.array([measure._grouped_core(work.draw(rng)) for _ in range(800)])
    assert ks_2samp(fast, slow).pvalue > 0.001


# --- the cutoff band --------------------------------------------------------


def _row_sup_draws(y, p, w, R, rng):
    """Per resample, the largest increment of the deviation of the residual
    process ``sum_{p_i <= t} w_i E_i (y_i - p_i) / sum w_i E_i`` (rows)."""
    w = np.ones(p.shape[0]) if w is None else np.asarray(w, float)
    order = np.argsort(p, kind="stable")
    ps, r, ws = p[order], (w * (y - p))[order], w[order]
    ends = np.flatnonzero(np.concatenate([ps[1:] != ps[:-1], [True]]))
    base = np.cumsum(r)[ends] / ws.sum()
    out = []
    for _ in range(R):
        e = rng.standard_exponential(p.shape[0])
        d = np.cumsum(r * e)[ends] / np.sum(ws * e) - base
        out.append(max(d.max(), 0.0) - min(d.min(), 0.0))
    return np.array(out)


def test_cutoff_band_draws_have_the_law_of_row_reweighting():
    rng = np.random.default_rng(4)
    pvalues = []
    for case in range(6):
        y, p, w = _case(rng, ("plain", "weights", "ties")[case % 3], n=200)
        work = _work(CutoffCalibrationError(), y, p, w)
        sup, draws, center = _cutoff_sup_draws(work, rng, 600)
        assert center == pytest.approx(cutoff_calibration_error(y, p, sample_weight=w))
        pvalues.append(ks_2samp(sup, _row_sup_draws(y, p, w, 600, rng)).pvalue)
    assert min(pvalues) > 0.001 / len(pvalues)


def test_cutoff_band_covers_a_tempered_model():
    # p ~ U(0.02, 0.98), P(y = 1 | p) = sigmoid(1.6 logit p): two witnesses of
    # equal size (below and above 1/2), where the bootstrap of the cutoff
    # itself covered 84-90% (issue 23); the population value by a midpoint sum
    grid = 0.02 + 0.96 * (np.arange(200_000) + 0.5) / 200_000
    residual = 1 / (1 + ((1 - grid) / grid) ** 1.6) - grid
    truth = residual[grid > 0.5].sum() / grid.shape[0]
    rng = np.random.default_rng(5)
    hits = 0
    for _ in range(60):
        p = rng.uniform(0.02, 0.98, size=3000)
        y = (rng.uniform(size=3000) < 1 / (1 + ((1 - p) / p) ** 1.6)).astype(int)
        ci = CutoffCalibrationError().interval(y, p, random_state=int(rng.integers(2**31)))
        hits += ci.low <= truth <= ci.high
    assert hits >= 56


def test_cutoff_interval_is_the_band_of_the_row_twin():
    # half-width: the quantile of the largest increment of the resampled
    # process's deviation (rows), not of the resampled cutoff's deviation
    # (which is smaller where two witnesses nearly tie, as here)
    rng = np.random.default_rng(14)
    p = rng.uniform(0.02, 0.98, size=2000)
    y = (rng.uniform(size=2000) < 1 / (1 + ((1 - p) / p) ** 1.6)).astype(int)
    ci = CutoffCalibrationError().interval(y, p, n_resamples=1000, random_state=0)
    q = np.quantile(_row_sup_draws(y, p, None, 1000, rng), 0.95)
    assert ci.high - ci.estimate == pytest.approx(q, rel=0.1)
    assert ci.estimate - ci.low == pytest.approx(q, rel=0.1)


# --- SCDL's finite-sample interval ------------------------------------------


def test_soft_sums_match_the_tent_weights_of_the_rows():
    rng = np.random.default_rng(6)
    for case in range(40):
        n = int(rng.integers(1, 60))
        p = rng.choice([0.0, 0.25, 0.5, 1.0], size=n) if case % 2 else rng.uniform(size=n)
        c = rng.uniform(0.1, 2.0, size=n)
        finest = int(2 ** rng.integers(1, 8))
        sums = _soft_sums(np.ascontiguousarray(p), c, finest)
        assert sorted(sums) == [2**k for k in range(int(math.log2(finest)) + 1)]
        for m, got in sums.items():
            j = np.arange(m + 1)
            tent = np.maximum(1 - np.abs(m * p[:, None] - j[None, :]), 0.0)
            np.testing.assert_allclose(got, (c[:, None] * tent).sum(axis=0), atol=1e-12)


def _scdl_twin(y, p, w, confidence):
    """SCDL's interval recomputed level by level from the public function."""
    w = np.ones(p.shape[0]) if w is None else np.asarray(w, float)
    a = 1 - confidence
    n_eff = w.sum() ** 2 / np.square(w).sum()
    t = math.sqrt(math.log(_MAX_SCDL_LEVEL / (a / 2)) / (2 * n_eff))
    _, details = soft_binned_cdl(y, p, sample_weight=w, return_details=True)
    low, high = 0.0, 0.5
    for m in details.levels:
        m = int(m)
        s = soft_binned_cdl(y, p, sample_weight=w, m=m)
        tent = np.maximum(1 - np.abs(m * p[:, None] - np.arange(m + 1)[None, :]), 0.0)
        bias = 0.5 * np.sqrt((w[:, None] ** 2 * tent).sum(axis=0)).sum() / w.sum()
        high = min(high, max(s + t, 1 / m))
        low = max(low, min(1 / m, s - bias - t))
    return low, max(high, low)


def test_scdl_interval_is_its_formula():
    rng = np.random.default_rng(7)
    for case in range(30):
        y, p, w = _case(rng, KINDS[case % 4], n=int(rng.integers(2, 400)))
        ci = SoftBinnedCDL().interval(y, p, sample_weight=w)
        low, high = _scdl_twin(y, p, w, 0.95)
        assert ci.method == "analytic"
        assert ci.estimate == pytest.approx(soft_binned_cdl(y, p, sample_weight=w))
        assert (ci.low, ci.high) == pytest.approx((low, high), rel=1e-9, abs=1e-12)


def test_scdl_interval_covers_the_measure_of_the_outcome_law():
    # what it guarantees: SCDL of (p_i, P(y = 1 | p_i)), for every n; the
    # bootstrap covered 28-60% at n = 10**4 on such data (issue 23)
    rng = np.random.default_rng(8)
    n = 5000
    p = rng.uniform(0, 0.9, size=n)
    mu = p + 0.05
    w = 0.5 + 2 * p
    truth = {
        None: scdl_core(GroupedStatistic(*_sorted(p, np.ones(n), mu))),
        "w": scdl_core(GroupedStatistic(*_sorted(p, w, mu))),
    }
    hits = {None: 0, "w": 0}
    for _ in range(40):
        y = (rng.uniform(size=n) < mu).astype(int)
        for key, weights in ((None, None), ("w", w)):
            ci = SoftBinnedCDL().interval(y, p, sample_weight=weights)
            hits[key] += ci.low <= truth[key] <= ci.high
    assert hits[None] >= 38 and hits["w"] >= 38


def _sorted(p, w, mu):
    order = np.argsort(p)
    return p[order], w[order], (w * mu)[order]


def test_scdl_interval_of_a_sketch_and_of_multiclass_input():
    rng = np.random.default_rng(9)
    p = np.round(rng.uniform(size=2000), 3)
    y = (rng.uniform(size=2000) < p).astype(int)
    sketch = CalibrationSketch().update(y, p)
    a, b = SoftBinnedCDL().interval(y, p), SoftBinnedCDL().interval(sketch)
    assert (a.low, a.high, a.estimate) == pytest.approx((b.low, b.high, b.estimate))
    P = rng.dirichlet(np.ones(3), size=500)
    labels = np.array([rng.choice(3, p=row) for row in P])
    ci = SoftBinnedCDL().interval(labels, P)
    assert ci.target == "top-label" and 0 <= ci.low <= ci.estimate <= ci.high


def test_scdl_fixed_level_interval():
    rng = np.random.default_rng(10)
    y, p, _ = _case(rng, "plain", n=300)
    ci = SoftBinnedCDL(m=8).interval(y, p)
    value = soft_binned_cdl(y, p, m=8)
    t = math.sqrt(math.log(1 / 0.025) / (2 * 300))
    assert ci.estimate == pytest.approx(value)
    assert ci.high == pytest.approx(value + t)


def test_cdl_lower_end_is_scdl_one_sided():
    rng = np.random.default_rng(11)
    p = rng.uniform(size=3000)
    y = (rng.uniform(size=3000) < 1 - p).astype(int)  # far from calibrated
    ci = CalibrationDecisionLoss().interval(y, p)
    assert ci.method == "scdl-bound" and ci.high == 1.0 and math.isnan(ci.estimate)
    scdl = SoftBinnedCDL()
    low = _scdl_bound(scdl, y, p, None, scdl.get_params(), 0.9)[1]
    assert ci.low == low > 0


# --- the tester's result ----------------------------------------------------


def test_tester_result_carries_the_interval_of_its_measure():
    rng = np.random.default_rng(12)
    p = rng.uniform(size=1500)
    y = (rng.uniform(size=1500) < p).astype(int)
    for measure in ("smce", BinnedECE(n_bins=10), "cutoff"):
        tester = CalibrationTester(measure, n_resamples=199, random_state=3)
        result = tester.decide(y, p)
        obj = SmoothCalibrationError() if measure == "smce" else (
            CutoffCalibrationError() if measure == "cutoff" else measure)
        ci = obj.interval(y, p, confidence=0.95, random_state=3)
        assert result.interval == (ci.low, ci.high)
        shown = f"[{ci.low:.3g}, {ci.high:.3g}]"
        assert shown in str(result) and shown in result.summary()
        assert "confidence interval" in result._repr_html_()
    # the level follows alpha
    result = CalibrationTester(alpha=0.2, n_resamples=199, random_state=3).decide(y, p)
    ci = SmoothCalibrationError().interval(y, p, confidence=0.8, random_state=3)
    assert result.interval == (ci.low, ci.high)


def test_tester_interval_of_multiclass_and_callable_measures():
    from sklearn.datasets import load_iris
    from sklearn.linear_model import LogisticRegression

    X, y = load_iris(return_X_y=True)
    labels = np.array(["a", "b", "c"])[y]
    model = LogisticRegression(max_iter=500).fit(X[::2], labels[::2])
    tester = CalibrationTester.from_estimator(
        model, X[1::2], labels[1::2], n_resamples=199, random_state=0
    )
    result = tester.decide()
    assert result.target == "top-label" and result.interval is not None
    assert result.interval[0] <= result.statistic <= result.interval[1] or (
        result.interval[0] == 0
    )

    def plain(y_true, y_prob, sample_weight=None):
        return float(np.mean(np.abs(np.asarray(y_true) - np.asarray(y_prob))))

    rng = np.random.default_rng(13)
    p = rng.uniform(size=200)
    y = (rng.uniform(size=200) < p).astype(int)
    result = CalibrationTester(plain, n_resamples=199, random_state=0).decide(y, p)
    assert result.interval is None and "[" not in str(result)


def test_intervals_do_not_depend_on_the_weight_scale():
    # subnormal and huge weights: squared weights must neither underflow to 0
    # (a division by zero in the effective size) nor overflow
    rng = np.random.default_rng(15)
    y = rng.integers(0, 2, 40)
    p = np.round(rng.random(40), 1)
    w = rng.integers(1, 4, 40).astype(float)
    for measure in (SmoothCalibrationError(), CutoffCalibrationError(), BinnedECE(),
                    SoftBinnedCDL(), CalibrationDecisionLoss()):
        base = measure.interval(y, p, sample_weight=w, random_state=0)
        for k in (-1072, -700, 700, 1022):
            ci = measure.interval(y, p, sample_weight=np.ldexp(w, k), random_state=0)
            assert (ci.low, ci.high, ci.n_effective) == pytest.approx(
                (base.low, base.high, base.n_effective)), (measure, k)
        sketch = CalibrationSketch().update(y, p, sample_weight=np.ldexp(np.ones(40), -1070))
        assert measure.interval(sketch, random_state=0).n_effective == pytest.approx(40)
