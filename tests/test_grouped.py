"""The grouped sufficient statistic and the measures computed from it."""

import pickle

import numpy as np
import pytest
from sklearn.utils import Bunch

from skcal import (
    binned_ece,
    calibration_decision_loss,
    calibration_fixed_decision_loss,
    cutoff_calibration_error,
    lower_distance_to_calibration,
    maximum_swap_regret,
    smooth_calibration_error,
    soft_binned_cdl,
)
from skcal._grouped import GroupedStatistic, binary_statistic, group

from cases import random_cases
from reference import grouped_reference

CASES = random_cases(31, 300, max_n=80)


def test_group_matches_reference():
    for y, p, w in CASES:
        g = group(y, p, w)
        values, weights, positives = grouped_reference(y, p, w)
        np.testing.assert_array_equal(g.values, values)
        np.testing.assert_allclose(g.weights, weights, rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(g.positives, positives, rtol=1e-13, atol=1e-15)
        assert g.total == pytest.approx(w.sum(), rel=1e-13)
        assert np.all(np.diff(g.values) > 0)


def test_unlabelled_unit_weights_take_the_two_sort_path_exactly():
    # no sample_weight and 0/1 labels: two value sorts and a merge, which
    # must give the reference's statistic exactly (the counts are integers)
    for y, p, _w in CASES:
        for labels in (y.astype(np.int64), y.astype(bool), y.astype(np.uint8)):
            g = binary_statistic(labels, p)
            values, weights, positives = grouped_reference(y, p, np.ones_like(p))
            np.testing.assert_array_equal(g.values, values)
            np.testing.assert_array_equal(g.weights, weights)
            np.testing.assert_array_equal(g.positives, positives)
    # the caller's arrays are untouched
    labels = np.array([1, 0, 1, 0])
    p = np.array([0.4, 0.3, 0.2, 0.1])
    binary_statistic(labels, p)
    np.testing.assert_array_equal(labels, [1, 0, 1, 0])
    np.testing.assert_array_equal(p, [0.4, 0.3, 0.2, 0.1])


class _Holder:
    """Anything with ``grouped_statistic()`` stands in for the data (a sketch)."""

    def __init__(self, statistic):
        self._statistic = statistic

    def grouped_statistic(self):
        return self._statistic


MEASURES = [
    (smooth_calibration_error, {}),
    (cutoff_calibration_error, {}),
    (calibration_decision_loss, {}),
    (calibration_fixed_decision_loss, {}),
    (maximum_swap_regret, {}),
    (lower_distance_to_calibration, {"grid": 20}),
    (soft_binned_cdl, {}),
    (soft_binned_cdl, {"m": 8}),
    (binned_ece, {}),
    (binned_ece, {"n_bins": 7, "norm": "l2"}),
    (binned_ece, {"n_bins": 5, "strategy": "quantile", "norm": "max"}),
]


@pytest.mark.parametrize(
    "measure, options", MEASURES, ids=[f"{m.__name__}-{o}" for m, o in MEASURES]
)
def test_measures_of_the_statistic_equal_the_measures_of_the_rows(measure, options):
    # SCDL and uniform-bin ECE read rows in one pass without grouping; from
    # the statistic they weigh each distinct value once
    for y, p, w in CASES[:120]:
        expected = measure(y, p, sample_weight=w, **options)
        value = measure(_Holder(group(y, p, w)), **options)
        assert value == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_statistic_input_refuses_rows_beside_it():
    y, p, w = CASES[5]
    holder = _Holder(group(y, p, w))
    with pytest.raises(ValueError, match="pass y_prob=None"):
        smooth_calibration_error(holder, p)
    with pytest.raises(ValueError, match="y_prob is required"):
        smooth_calibration_error(y)


def test_statistic_pickles_and_resamples():
    y, p, w = CASES[10]
    g = binary_statistic(y, p, w)
    h = pickle.loads(pickle.dumps(g))
    assert isinstance(h, GroupedStatistic) and h.total == g.total
    np.testing.assert_array_equal(h.values, g.values)
    r = g.with_positives(np.zeros(len(g)))
    assert r.values is g.values and r.positives.sum() == 0
    assert "n_values" in repr(g)


@pytest.mark.parametrize(
    "measure, flag",
    [
        (smooth_calibration_error, "return_witness"),
        (cutoff_calibration_error, "return_interval"),
        (lower_distance_to_calibration, "return_bound"),
        (calibration_fixed_decision_loss, "return_threshold"),
    ],
)
def test_details_come_one_way(measure, flag):
    # return_details=True -> (value, Bunch) is the one way; the per-measure
    # flags of the unreleased first draft are gone, not deprecated
    y, p = [0, 0, 1, 1], [0.2, 0.4, 0.6, 0.9]
    with pytest.raises(TypeError, match=flag):
        measure(y, p, **{flag: True})
    value, details = measure(y, p, return_details=True)
    assert value == measure(y, p) and isinstance(details, Bunch)
