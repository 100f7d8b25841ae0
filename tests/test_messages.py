"""Messages read against the call a user made (issue 22, "Messages").

Every error and warning is triggered through a public entry point and must
name that entry point's arguments (not an internal helper's), show the
offending value and say what to do; warnings point at the caller's line.
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier

from skcal import (
    AutoRecalibrator,
    CalibrationTester,
    ClassWise,
    DecisionTask,
    Linear,
    OnlineMSRForecaster,
    RecalibratedClassifier,
    RoundedResponseClassifier,
    SCDLRounding,
    TemperatureScaling,
    TopK,
    UtilityCalibrationError,
    UtilityPatchingRecalibrator,
    utility_calibration_error,
)


def _message(call):
    with pytest.raises((ValueError, TypeError)) as info:
        call()
    return str(info.value)


def test_scdl_rounding_fit_names_x_and_y():
    # SCDLRounding.fit(X, y) has neither y_true, y_prob, pos_label nor multiclass
    p = np.array([0.2, 0.5, 0.9, 0.4])
    cases = [
        (lambda: SCDLRounding().fit(p, ["a", "b", "a", "b"]), "['a', 'b']"),
        (lambda: SCDLRounding().fit(p, [2, 3, 2, 3]), "[2, 3]"),
        (lambda: SCDLRounding().fit(p, [0, 1, 2, 0]), "[0, 1, 2]"),
        (lambda: SCDLRounding().fit(np.full((4, 3), 1 / 3), [0, 1, 1, 0]), "(4, 3)"),
        (lambda: SCDLRounding().fit(p, [0, 1, 1]), "3 and 4"),
        (lambda: SCDLRounding().fit(p + 0.5, [0, 1, 1, 0]), "X has values outside"),
    ]
    for call, shown in cases:
        message = _message(call)
        assert shown in message, message
        for absent in ("y_true", "y_prob", "pos_label", "multiclass"):
            assert absent not in message, message
    assert "pass y == positive_label" in _message(cases[0][0])


def test_one_d_probabilities_are_described_as_passed():
    # a 1-D array is read as the second of two columns; the message said
    # "has 2 columns" of an array that has none, and "y_true" for fit's y
    y = np.array([0, 1, 2, 0, 1, 2])
    p = np.linspace(0.1, 0.9, 6)
    message = _message(lambda: TemperatureScaling().fit(p, y))
    assert "y has 3 distinct labels and X is 1-D" in message, message
    message = _message(lambda: UtilityPatchingRecalibrator().fit(p, y))
    assert "y has 3 distinct labels and X is 1-D" in message, message
    message = _message(lambda: utility_calibration_error(y, p))
    assert "y_true has 3 distinct labels and y_prob is 1-D" in message, message
    message = _message(lambda: TemperatureScaling(labels=[0, 1, 2]).fit(p, y))
    assert "labels has 3 entries but X is 1-D" in message, message


def test_utility_sizes_name_no_argument_the_caller_lacks():
    # reached from fit(X, y), the message said "y_proba (now y_prob) has 2 columns"
    X, y = make_classification(60, random_state=0)
    P = LogisticRegression().fit(X, y).predict_proba(X)
    for utility, shown in [
        (Linear([0.1, 0.2, 0.3]), "3 payoffs but the predicted probabilities have 2"),
        (ClassWise(5), "c is a column index in [0, 1]"),
        (TopK(3), "use k <= 2"),
    ]:
        for call in (
            lambda u=utility: UtilityPatchingRecalibrator(family=u).fit(P, y),
            lambda u=utility: utility_calibration_error(y, P, u),
            lambda u=utility: UtilityCalibrationError(u)(y, P),
        ):
            message = _message(call)
            assert shown in message, message
            assert "y_proba" not in message and "y_prob " not in message, message


def test_offending_values_are_shown():
    X, y = make_classification(60, random_state=0)
    task = DecisionTask([[1, 0], [0, 1]])
    model = RoundedResponseClassifier(LogisticRegression(), task, random_state=0).fit(X, y)
    message = _message(lambda: model.score(X, y + 5))
    assert "y has labels [5, 6] outside classes_ [0, 1]" in message, message
    message = _message(lambda: OnlineMSRForecaster(random_state=0).run([0, 1, 2, 1]))
    assert "got [2]" in message, message
    message = _message(lambda: RecalibratedClassifier(LogisticRegression()).fit(X, 0 * y))
    assert "got 1 class (0)" in message, message


def test_recalibrator_by_name_says_how():
    X, y = make_classification(60, random_state=0)
    message = _message(
        lambda: RecalibratedClassifier(LogisticRegression(), recalibrator="sigmoid").fit(X, y)
    )
    assert "AutoRecalibrator(candidates=['sigmoid'])" in message, message
    # and what it suggests works
    RecalibratedClassifier(
        LogisticRegression(), recalibrator=AutoRecalibrator(candidates=["sigmoid"]), cv=2
    ).fit(X, y)


def _warns_here(call, match):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        call()
    hits = [r for r in record if match in str(r.message)]
    assert hits, [str(r.message) for r in record]
    for r in hits:
        assert r.filename == __file__, (r.filename, str(r.message))


def test_warnings_point_at_the_callers_line():
    # the warnings went through scikit-learn's fit wrappers (_fit_context,
    # set_output) with a fixed stacklevel and named sklearn/base.py or
    # sklearn/utils/_set_output.py as their source
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(30, 3))  # an over-confident model on 30 rows: no patch
    P_true = np.exp(Z) / np.exp(Z).sum(axis=1, keepdims=True)
    y30 = np.array([rng.choice(3, p=row) for row in P_true])
    P = np.exp(2 * Z) / np.exp(2 * Z).sum(axis=1, keepdims=True)
    _warns_here(lambda: UtilityPatchingRecalibrator().fit(P, y30), "made no patch")
    _warns_here(lambda: UtilityPatchingRecalibrator().fit_transform(P, y30), "made no patch")
    X, y = make_classification(60, random_state=0)
    w = np.ones(60)
    _warns_here(
        lambda: RecalibratedClassifier(KNeighborsClassifier(), cv=2).fit(X, y, sample_weight=w),
        "does not accept sample_weight",
    )
    task = DecisionTask([[1, 0], [0, 1]])
    _warns_here(
        lambda: RoundedResponseClassifier(
            KNeighborsClassifier(), task, cv=2, random_state=0
        ).fit(X, y, sample_weight=w),
        "does not accept sample_weight",
    )
    _warns_here(
        lambda: CalibrationTester("smce", epsilon=0.01, threshold="theory").fit(
            y, rng.random(60)
        ),
        "too few for the guarantee",
    )


def test_interval_of_a_weighted_sketch_says_what_to_pass():
    # the tester's advice ("Test sketches of unweighted rows") reached interval()
    from skcal import CalibrationSketch, SmoothCalibrationError

    sketch = CalibrationSketch([0, 1, 1], [0.2, 0.6, 0.9], [1.0, 2.0, 1.0])
    message = _message(lambda: SmoothCalibrationError().interval(sketch, n_resamples=20))
    assert "Pass the arrays themselves" in message, message
    assert "Test sketches" not in message, message


def test_rounding_names_x_when_it_holds_no_numbers():
    # found by the fuzz test: check_array's bare "could not convert string to float"
    message = _message(lambda: SCDLRounding().fit(np.array(["a"], dtype=object), [1]))
    assert message.startswith("X must hold probabilities"), message
