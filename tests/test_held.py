"""skcal._held.HeldStatistic: one grouped statistic handed to every measure function."""

import numpy as np

from skcal import (
    calibration_decision_loss,
    cutoff_calibration_error,
    lower_distance_to_calibration,
    smooth_calibration_error,
)
from skcal._grouped import binary_statistic, group
from skcal._held import HeldStatistic

FUNCTIONS = (smooth_calibration_error, cutoff_calibration_error, calibration_decision_loss,
             lower_distance_to_calibration)


def test_held_statistic_gives_the_measure_of_the_rows():
    rng = np.random.default_rng(0)
    for case in range(12):
        n = int(rng.integers(1, 40))
        p = np.round(rng.uniform(size=n), 1) if case % 2 else rng.uniform(size=n)
        y = (rng.uniform(size=n) < p).astype(float)
        w = rng.uniform(1e-3, 5.0, size=n) if case % 3 else np.ones(n)
        f = FUNCTIONS[case % len(FUNCTIONS)]
        expected = f(y, p, sample_weight=w)
        assert f(HeldStatistic(group(y, p, w))) == expected
        rescaled = binary_statistic(y, p, w, rescale=True)
        assert f(HeldStatistic(rescaled, canonical=True)) == expected
