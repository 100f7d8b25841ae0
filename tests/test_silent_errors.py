"""Inputs that used to give a confident wrong number now raise or are right.

Each case here returned a plausible value on the code before this test was
written: a calibration tool must refuse ambiguous input rather than guess.
"""

import warnings

import numpy as np
import pytest

import skcal
from skcal import (
    binned_ece,
    calibration_decision_loss,
    cutoff_calibration_error,
    lower_distance_to_calibration,
    smooth_calibration_error,
    soft_binned_cdl,
    utility_calibration_error,
)

BINARY = [
    smooth_calibration_error,
    cutoff_calibration_error,
    soft_binned_cdl,
    calibration_decision_loss,
    binned_ece,
    lower_distance_to_calibration,
]


@pytest.mark.parametrize("measure", BINARY)
@pytest.mark.parametrize(
    "y_true, pos_label",
    [
        ([0, 1, 0, 1], 5),
        ([0, 1, 0, 1], "1"),
        (["no", "yes", "no", "yes"], "maybe"),
        (["no", "yes", "no", "yes"], 1),
    ],
)
def test_pos_label_not_among_two_observed_labels_raises(measure, y_true, pos_label):
    with pytest.raises(ValueError, match="pos_label=.* is not one of the labels"):
        measure(y_true, [0.2, 0.8, 0.3, 0.6], pos_label=pos_label)


def test_pos_label_absent_with_one_observed_label_is_all_negative():
    # legitimate: a sample of negatives only, scored for the class 'yes'
    value = smooth_calibration_error(["no", "no"], [0.25, 0.25], pos_label="yes")
    assert value == smooth_calibration_error([0, 0], [0.25, 0.25])


@pytest.mark.parametrize("measure", BINARY)
def test_multiclass_columns_with_an_absent_class_need_labels(measure):
    # a model with classes [1, 2, 3], scored where class 3 never occurs
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(3), size=200)
    y = 1 + (rng.random(200) < 0.5).astype(int)
    with pytest.raises(ValueError, match="ambiguous; pass labels="):
        measure(y, P)
    # with the columns named, the value is that of the explicit reduction
    conf, pred = P.max(axis=1), P.argmax(axis=1) + 1
    expected = measure((pred == y).astype(int), conf)
    assert measure(y, P, labels=[1, 2, 3]) == pytest.approx(expected, abs=1e-12)


def test_multiclass_utility_calibration_with_an_absent_class_needs_labels():
    rng = np.random.default_rng(1)
    P = rng.dirichlet(np.ones(3), size=50)
    y = 1 + (rng.random(50) < 0.5).astype(int)
    with pytest.raises(ValueError, match="ambiguous; pass labels="):
        utility_calibration_error(y, P, "comb")
    value = utility_calibration_error(y, P, "comb", labels=[1, 2, 3])
    assert value == utility_calibration_error(y - 1, P, "comb", labels=[0, 1, 2])


@pytest.mark.parametrize("measure", BINARY)
def test_two_columns_one_observed_class(measure):
    P = np.array([[0.9, 0.1]] * 4)
    # labels {0, 1}: class 0 is the first column whatever y_true shows
    assert measure([0, 0, 0, 0], P, pos_label=0) == pytest.approx(
        measure([1, 1, 1, 1], P[:, 0])
    )
    assert measure([1, 1, 1, 1], P) == pytest.approx(measure([1, 1, 1, 1], P[:, 1]))
    # other labels: which column is 'y' cannot be known
    with pytest.raises(ValueError, match="pass labels="):
        measure(["y", "y", "y", "y"], P, pos_label="y")
    assert measure(["y"] * 4, P, pos_label="y", labels=["y", "z"]) == pytest.approx(
        measure([1, 1, 1, 1], P[:, 0])
    )


@pytest.mark.parametrize("measure", BINARY)
def test_overflowing_weight_total(measure):
    y = np.array([0, 1] * 150)
    p = np.full(300, 0.3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning either
        value = measure(y, p, sample_weight=np.full(300, 1e308))
    assert value == pytest.approx(measure(y, p), rel=1e-9)
    assert value > 0.1  # the data are miscalibrated by 0.2


def test_overflowing_weights_keep_their_ratios():
    rng = np.random.default_rng(2)
    y = (rng.random(100) < 0.5).astype(int)
    p = rng.random(100)
    w = rng.integers(1, 4, 100).astype(float)
    assert smooth_calibration_error(y, p, sample_weight=w * 1e307) == pytest.approx(
        smooth_calibration_error(y, p, sample_weight=w), rel=1e-12
    )


@pytest.mark.parametrize("measure", BINARY)
def test_mixed_label_types_raise_a_clear_type_error(measure):
    y = np.array(["a", 1, "a", 1], dtype=object)
    with pytest.raises(TypeError, match="y_true mixes labels of different types"):
        measure(y, [0.2, 0.4, 0.6, 0.8], pos_label="a")


def test_float16_probabilities_pass_the_row_sum_check():
    rng = np.random.default_rng(3)
    P = rng.dirichlet(np.ones(10), size=500).astype(np.float16)
    y = rng.integers(0, 10, 500)
    y[:10] = np.arange(10)
    assert np.abs(P.astype(np.float64).sum(axis=1) - 1).max() > 1e-6
    value = smooth_calibration_error(y, P)
    assert 0 <= value <= 1
    # a row that is off by more than float16 rounding still fails
    P[0, 0] = 0.5
    with pytest.raises(ValueError, match="row 0 sums to"):
        smooth_calibration_error(y, P)


def test_multiclass_argmax_does_not_copy_the_matrix():
    import tracemalloc

    rng = np.random.default_rng(4)
    P = rng.dirichlet(np.ones(200), size=2000)
    y = rng.integers(0, 200, 2000)
    y[:200] = np.arange(200)
    tracemalloc.start()
    binned_ece(y, P)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < P.nbytes / 4


def test_measure_classes_accept_labels():
    rng = np.random.default_rng(5)
    P = rng.dirichlet(np.ones(3), size=100)
    y = rng.integers(1, 3, 100)
    for cls in (skcal.SmoothCalibrationError, skcal.BinnedECE, skcal.SoftBinnedCDL):
        with pytest.raises(ValueError, match="ambiguous"):
            cls()(y, P)
        assert cls(labels=[1, 2, 3])(y, P) == cls()(
            (P.argmax(axis=1) + 1 == y).astype(int), P.max(axis=1)
        )


# --- errors name the caller's parameters ------------------------------------------

_PARAMETER_WORDS = (
    "labels", "pos_label", "multiclass", "grid", "n_bins", "epsilon", "tolerance",
    "alpha", "measure", "threshold", "family", "init", "step", "tol", "max_iter",
    "utility", "n_resamples", "rounding",
)


def _estimator_classes():
    from skcal import measures

    return [*measures.MEASURE_CLASSES, skcal.CalibrationTester,
            skcal.UtilityPatchingRecalibrator, skcal.SCDLRounding]


@pytest.mark.parametrize("cls", _estimator_classes(), ids=lambda c: c.__name__)
def test_parameter_errors_name_only_parameters_the_object_has(cls):
    # issue 15: "some parameter errors name parameters the object does not
    # have" (the recalibrator's family errors spoke of `utility`)
    import inspect
    import re

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 50)
    p = rng.random(50)
    names = set(inspect.signature(cls).parameters)
    for name in sorted(names):
        for bad in (-1, 1.5, "nope", np.nan, [1, 2]):
            try:
                obj = cls(**{name: bad})
                if cls is skcal.CalibrationTester:
                    obj.fit(y, p).decide(y, p)
                elif cls is skcal.UtilityPatchingRecalibrator:
                    obj.fit(np.c_[1 - p, p], y)
                elif cls is skcal.SCDLRounding:
                    obj.fit(p, y)
                else:
                    obj(y, p)
            except (ValueError, TypeError) as error:
                message = str(error)
                # where a message names a parameter: "x=", "x must", "x:",
                # "Unknown x" (not prose such as "the labels in y_true")
                words = set(
                    re.findall(r"\b([a-z_]+)(?:=| must\b|:)|Unknown ([a-z_]+)", message)
                )
                words = {w for pair in words for w in pair if w}
                stray = [w for w in _PARAMETER_WORDS if w in words and w not in names]
                assert not stray, (name, bad, message)
