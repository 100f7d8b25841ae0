"""Interval of the utility calibration error on its grouped statistic.

The fast path (skcal._interval_utility) draws one Gamma mass and one
residual sum per cell of (predicted utility, realised utility); its slow
twin here is the row-level Bayesian bootstrap: the public function called
on the rows with weights multiplied by Exp(1), one call per draw.
"""

import numpy as np
import pytest
from scipy.stats import ks_2samp

import skcal._interval_utility as fast
from skcal import ClassWise, TopClass, TopK, UtilityCalibrationError, utility_calibration_error
from skcal.utilities._engine import Predictions, evaluate_blocks


def _case(rng, kind, n=None):
    """Small multiclass data: ties (rounded rows), weights, 2 to 4 classes."""
    n = int(rng.integers(30, 80)) if n is None else n
    k = int(rng.integers(2, 5))
    P = rng.dirichlet(np.ones(k), size=n)
    if kind == "ties":
        P = np.round(P * 4) + 1e-9
        P /= P.sum(axis=1, keepdims=True)
    y = np.array([rng.choice(k, p=row) for row in P])
    y[:k] = np.arange(k)  # every class present
    w = None
    if kind == "weights":
        # equal weights within a (value, outcome) cell of every utility below
        # is not possible for all utilities at once: weights by observed class
        w = 0.5 + y.astype(float)
    return y, P, w


def _row_draws(utility, y, P, w, R, rng):
    w = np.ones(len(y)) if w is None else np.asarray(w, float)
    return np.array([
        utility_calibration_error(y, P, utility, sample_weight=w * rng.standard_exponential(len(y)))
        for _ in range(R)
    ])


def _cells(utility, y, P, w):
    u = [utility]
    _, V, realised = next(evaluate_blocks(u, Predictions(np.asarray(P, float), np.asarray(y)), 1))
    v, r = V[0].astype(float), realised[0].astype(float)
    w = np.ones(len(y)) if w is None else np.asarray(w, float)
    return fast.utility_cells(v, r - v, r, w)


UTILITIES = [TopClass(), ClassWise(c=1), TopK(k=2)]


def test_cell_center_is_the_measure():
    rng = np.random.default_rng(0)
    for case in range(30):
        y, P, w = _case(rng, ("ties", "weights", "plain")[case % 3])
        utility = UTILITIES[case % 3]
        expected = utility_calibration_error(y, P, utility, sample_weight=w)
        assert _cells(utility, y, P, w).center() == pytest.approx(expected, abs=1e-12)


def test_cell_draws_have_the_law_of_row_reweighting():
    # rows of one weight per cell (one value and one realised utility): the
    # cell draw is exactly the rows' sum of Exp(1) multipliers
    rng = np.random.default_rng(1)
    pvalues = []
    for case in range(4):
        y, P, _ = _case(rng, ("ties", "plain")[case % 2])
        utility = UTILITIES[case % 3]
        cells = _cells(utility, y, P, None)
        pvalues.append(ks_2samp(cells.draws(rng, 600),
                                _row_draws(utility, y, P, None, 600, rng)).pvalue)
    assert min(pvalues) > 0.001 / len(pvalues)


def test_unequal_weights_and_merged_cells_match_row_moments(monkeypatch):
    # rows of different weights or residuals in a cell: moment-matched draws
    rng = np.random.default_rng(2)
    y, P, _ = _case(rng, "plain", n=300)
    w = rng.uniform(0.2, 3.0, size=300)
    for merge in (False, True):
        if merge:  # the large-n path on small data: 64 cells of the range of v
            monkeypatch.setattr(fast, "_EXACT_ROWS", 50)
            monkeypatch.setattr(fast, "_CELLS", 64)
        cells = _cells(TopClass(), y, P, w)
        assert cells.merged is merge
        draws = cells.draws(rng, 1000) - cells.center()
        slow = _row_draws(TopClass(), y, P, w, 1000, rng)
        slow = slow - utility_calibration_error(y, P, sample_weight=w)
        assert abs(draws.std() / slow.std() - 1) < 0.15, merge
        assert abs(draws.mean() - slow.mean()) < 0.15 * slow.std(), merge


def reference_interval(utility, y, P, w, confidence, R, rng):
    """The hull of the basic and percentile intervals from row-level draws."""
    a = 1 - confidence
    t = utility_calibration_error(y, P, utility, sample_weight=w)
    draws = _row_draws(utility, y, P, w, R, rng)
    q_lo, q_hi = np.quantile(draws - t, [a / 2, 1 - a / 2])
    half = max(q_hi, -q_lo)
    return max(t - half, 0.0), t + half


def test_interval_matches_row_level_reference():
    rng = np.random.default_rng(3)
    for case in range(3):
        y, P, w = _case(rng, ("ties", "weights", "plain")[case])
        utility = UTILITIES[case]
        ci = UtilityCalibrationError(utility).interval(
            y, P, sample_weight=w, n_resamples=1000, random_state=case
        )
        low, high = reference_interval(utility, y, P, w, 0.95, 600, rng)
        assert ci.estimate == utility_calibration_error(y, P, utility, sample_weight=w)
        scale = max(high - low, ci.high - ci.low, 1e-3)
        assert abs(ci.high - high) <= 0.15 * scale, (case, ci, high)
        assert abs(ci.low - low) <= 0.15 * scale, (case, ci, low)


def test_family_is_resampled_on_the_rows_and_caller_arrays_unchanged():
    rng = np.random.default_rng(4)
    y, P, w = _case(rng, "weights")
    copies = [y.copy(), P.copy(), w.copy()]
    ci = UtilityCalibrationError("comb").interval(y, P, sample_weight=w, n_resamples=20,
                                                   random_state=0)
    again = UtilityCalibrationError("comb").interval(y, P, sample_weight=w, n_resamples=20,
                                                      random_state=0)
    assert ci == again and 0 <= ci.low <= ci.estimate <= ci.high
    assert "merged" not in ci
    for a, b in zip(copies, (y, P, w)):
        np.testing.assert_array_equal(a, b)
