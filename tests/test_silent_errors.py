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


# --- issue 22: weights at any scale, pos_label on multiclass input, sizes -------

_SCALE_FUNCTIONS = [
    *BINARY,
    skcal.calibration_fixed_decision_loss,
    lambda y, p, sample_weight: binned_ece(
        y, p, sample_weight=sample_weight, strategy="quantile", norm="l2"
    ),
    lambda y, p, sample_weight: binned_ece(y, p, sample_weight=sample_weight, norm="max"),
    lambda y, p, sample_weight: soft_binned_cdl(y, p, sample_weight=sample_weight, m=8),
]


def _scaled(w, k):
    """``w * 2**k``, checked exact (so the values must be equal, not close)."""
    out = np.ldexp(w, k)
    assert np.array_equal(np.ldexp(out, -k), w)
    return out


def test_values_do_not_depend_on_the_scale_of_the_weights():
    # issue 22 item 6: subnormal weights gave binned ECE 1.0 for 0.7, smCE 0
    # for 0.2 and a scipy error from dCE; every measure is a functional of
    # w / sum(w). Weights of 1..3 times 2**k are exact from k = -1072
    # (subnormal) to k = 1022 (sum past float64): the value must be the same
    # bit for bit; random factors in [1e-300, 1e300] round, so close.
    rng = np.random.default_rng(22)
    for case in range(12):
        n = int(rng.integers(3, 25))
        y = rng.integers(0, 2, n)
        p = np.round(rng.random(n), 2)
        if case % 3 == 0:
            p[: n // 2] = p[0]  # ties
        w = rng.integers(1, 4, n).astype(float)
        P = rng.dirichlet(np.ones(3), n)
        yc = rng.integers(0, 3, n)
        yc[:3] = [0, 1, 2]  # every class seen: the columns are the labels
        for f in _SCALE_FUNCTIONS:
            base = f(y, p, sample_weight=w)
            top = f(yc, P, sample_weight=w)
            for k in (-1072, -1060, -1000, -600, -1, 3, 600, 1000, 1022):
                assert f(y, p, sample_weight=_scaled(w, k)) == base, (case, f, k)
                assert f(yc, P, sample_weight=_scaled(w, k)) == top, (case, f, k)
            for c in 10.0 ** rng.uniform(-300, 300, 3):
                assert f(y, p, sample_weight=w * c) == pytest.approx(base, abs=1e-9)
        uc = utility_calibration_error(yc, P, sample_weight=w)
        for k in (-1072, -600, 600, 1022):
            assert utility_calibration_error(yc, P, sample_weight=_scaled(w, k)) == uc
        assert utility_calibration_error(
            yc, P, sample_weight=w * 1e-250
        ) == pytest.approx(uc, abs=1e-9)


def test_subnormal_weights_issue_cases():
    # the cases of the issue, with the right values computed from unit-scale
    # weights (the smallest subnormal times small integers is exact)
    y = np.array([0, 1, 1, 0, 1])
    p = np.array([0.1, 0.3, 0.5, 0.7, 0.9])
    w = np.array([1.0, 2.0, 3.0, 1.0, 1.0])
    tiny = w * 5e-324
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no underflow or division warnings
        for f in BINARY:
            assert f(y, p, sample_weight=tiny) == f(y, p, sample_weight=w), f


def test_tester_statistic_and_p_value_do_not_depend_on_the_weight_scale():
    rng = np.random.default_rng(23)
    y = rng.integers(0, 2, 30)
    p = np.round(rng.random(30), 1)
    w = rng.integers(1, 4, 30).astype(float)

    def run(weights, measure):
        tester = skcal.CalibrationTester(
            measure=measure, n_resamples=99, resampling_risk=None, random_state=0
        )
        result = tester.fit(y, p, sample_weight=weights).decide()
        return result.statistic, result.p_value

    for measure in ("smce", "dce", "cutoff", "binned_ece", "scdl"):
        base = run(w, measure)
        for k in (-1072, -700, 700, 1022):
            assert run(_scaled(w, k), measure) == base, (measure, k)


def test_sketch_statistic_is_rescaled_but_not_stored_rescaled():
    # measures from a sketch get the same rescale; the sketch keeps its sums
    rng = np.random.default_rng(24)
    y = rng.integers(0, 2, 40)
    p = np.round(rng.random(40), 2)
    w = rng.integers(1, 4, 40).astype(float) * 5e-324
    sketch = skcal.CalibrationSketch().update(y, p, sample_weight=w)
    stored = sketch.grouped_statistic().weights.copy()
    for f in BINARY:
        assert f(sketch) == pytest.approx(f(y, p, sample_weight=w / 5e-324), abs=1e-12)
    np.testing.assert_array_equal(sketch.grouped_statistic().weights, stored)


def test_negative_zero_and_bool_labels_and_one_row():
    y = np.array([True, False, True, True])
    p = np.array([0.2, 0.4, 0.6, 0.9])
    for f in BINARY:
        with_zero = f(y, p, sample_weight=np.array([1.0, 0.0, 2.0, 1.0]))
        assert f(y, p, sample_weight=np.array([1.0, -0.0, 2.0, 1.0])) == with_zero
        assert f(y, p) == f(y.astype(int), p)
        assert f([1], [0.5], sample_weight=[1e-320]) == f([1], [0.5])
        for bad in (np.zeros(4), np.array([1.0, np.nan, 1, 1]), np.array([1, np.inf, 1, 1])):
            with pytest.raises(ValueError, match="sample_weight"):
                f(y, p, sample_weight=bad)


def _multiclass_data():
    rng = np.random.default_rng(25)
    P = rng.dirichlet(np.ones(3), 60)
    y = rng.integers(0, 3, 60)
    return y, P


@pytest.mark.parametrize("measure", BINARY)
def test_pos_label_with_multiclass_probabilities_raises(measure):
    # issue 22 item 5: pos_label was silently ignored for 3+ columns
    y, P = _multiclass_data()
    with pytest.raises(ValueError, match="pos_label=2 does not apply"):
        measure(y, P, pos_label=2)
    measure(y, P)  # top-label without pos_label still works


def test_pos_label_with_multiclass_probabilities_raises_in_every_entry_point():
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_validate

    from skcal import measures

    y, P = _multiclass_data()
    for cls in measures.MEASURE_CLASSES:
        if "pos_label" not in cls().get_params():
            continue
        with pytest.raises(ValueError, match="pos_label"):
            cls(pos_label=2)(y, P)
    tester = skcal.CalibrationTester(pos_label=2, n_resamples=99, resampling_risk=None)
    with pytest.raises(ValueError, match="pos_label"):
        tester.fit(y, P)
    X = np.random.default_rng(0).normal(size=(60, 2))
    scorer = skcal.BinnedECE(pos_label=2).scorer()
    with pytest.raises(ValueError, match="pos_label"):
        cross_validate(
            LogisticRegression(), X, y, cv=2, scoring=scorer, error_score="raise"
        )


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda y, p: binned_ece(y, p, n_bins=10**9), "n_bins"),
        (lambda y, p: binned_ece(y, p, n_bins=10**9, strategy="quantile"), "n_bins"),
        (lambda y, p: skcal.BinnedECE(n_bins=10**9)(y, p), "n_bins"),
        (lambda y, p: lower_distance_to_calibration(y, p, grid=10**9), "grid"),
        (lambda y, p: skcal.LowerDistanceToCalibration(grid=10**9)(y, p), "grid"),
        (
            lambda y, p: skcal.CalibrationTester(
                measure="binned_ece", measure_params={"n_bins": 10**9}
            ).fit(y, p),
            "n_bins",
        ),
        (lambda y, p: skcal.CalibrationTester(n_resamples=10**9).fit(y, p), "n_resamples"),
        (
            lambda y, p: skcal.utility_calibration_ecdf(
                [0, 1, 2], np.full((3, 3), 1 / 3), "linear", n_utilities=10**9
            ),
            "n_utilities",
        ),
        (lambda y, p: skcal.LinearFamily(3).sample(10**9), "n_utilities"),
    ],
)
def test_huge_sizes_raise_a_clear_error_before_allocating(call, name):
    # issue 22 item 14: a bare MemoryError before
    y = np.array([0, 1, 1, 0])
    p = np.array([0.2, 0.4, 0.6, 0.9])
    with pytest.raises(ValueError, match=name) as info:
        call(y, p)
    assert "16777216" in str(info.value).replace(",", "")


def test_input_errors_name_the_arguments_of_the_call():
    # the tester has no labels= and calls its probabilities y_prob, as do the
    # UtilityCalibrationError class and function
    P = np.random.default_rng(26).dirichlet(np.ones(3), 20)
    y = np.array([0, 1] * 10)  # two of the three classes: ambiguous columns
    for measure in ("smce", "utility", skcal.SmoothCalibrationError()):
        with pytest.raises(ValueError) as info:
            skcal.CalibrationTester(measure=measure).fit(y, P)
        message = str(info.value)
        assert "pass labels=" not in message and "y_proba" not in message, message
        assert "measure_params={'labels'" in message and "y_prob" in message
    fixed = skcal.CalibrationTester(
        measure="smce", measure_params={"labels": [0, 1, 2]}, n_resamples=99,
        resampling_risk=None,
    )
    fixed.fit(y, P)  # the advice works
    for call in (skcal.UtilityCalibrationError(), skcal.utility_calibration_error):
        with pytest.raises(ValueError) as info:
            call(y, P[:5])
        assert "y_prob" in str(info.value) and "y_proba" not in str(info.value)
    with pytest.raises(ValueError) as info:
        skcal.CalibrationTester(measure="utility").fit(y, P[:5])
    assert "y_proba" not in str(info.value)
