"""The tester's result carries the tested measure's interval, dCE included."""

import numpy as np
import pytest

from skcal import CalibrationTester, LowerDistanceToCalibration


def test_dce_result_has_the_measures_own_interval():
    rng = np.random.default_rng(0)
    p = rng.uniform(0.05, 0.95, size=150)
    y = (rng.uniform(size=150) < p + 0.15).astype(int)
    w = rng.uniform(0.5, 2.0, size=150)
    result = CalibrationTester(measure="dce", alpha=0.1, n_resamples=19, resampling_risk=None,
                               random_state=3).fit(y, p, sample_weight=w).result_
    ci = LowerDistanceToCalibration().interval(y, p, sample_weight=w, confidence=0.9,
                                               random_state=3)
    # dCE's draws resume from the last linear program's basis: equal to 1e-15
    assert result.interval == pytest.approx((ci.low, ci.high), abs=1e-12)
    assert ci.low > 0
    assert "[" in str(result)  # the sentence shows it
