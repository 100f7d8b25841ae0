"""Fuzzing every public measure with arbitrary arrays.

Each generated call must either return a finite value in the measure's
documented range or raise ``ValueError`` / ``TypeError`` whose message names
the argument at fault: never another exception type, never a crash, never
NaN. The number of generated calls per callable is 200 in the quick profile
and 2,000 in CI (``HYPOTHESIS_PROFILE=ci``, see ``conftest.py``).
"""

import math
import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import skcal

EXAMPLES = 2000 if os.environ.get("HYPOTHESIS_PROFILE") == "ci" else 200

# Names an error message may use to point at the argument at fault.
ARGUMENT_WORDS = (
    "y_true",
    "y_prob",
    "sample_weight",
    "pos_label",
    "labels",
    "multiclass",
    "grid",
    "n_bins",
    "utility",
)

DTYPES = st.sampled_from(
    [
        np.float64,
        np.float32,
        np.float16,
        np.int64,
        np.int8,
        np.uint8,
        np.bool_,
        np.complex128,
        "U3",
        object,
    ]
)
SPECIAL = [0.0, 1.0, 0.5, -0.0, -1.0, 2.0, np.nan, np.inf, -np.inf]


def _elements(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        # the largest finite value of the dtype stands for "huge" (1e308 in float64)
        special = st.sampled_from(SPECIAL + [float(np.finfo(dtype).max)])
        return st.one_of(st.floats(0, 1, width=min(64, 8 * dtype.itemsize)), special)
    if dtype.kind == "c":
        return st.complex_numbers(max_magnitude=2, allow_nan=False)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return st.integers(max(info.min, -3), min(info.max, 3))
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind == "U":
        return st.sampled_from(["a", "b", "yes", "no", "1"])
    return st.sampled_from(["a", "b", 0, 1, 2, 0.5, None])


@st.composite
def arrays(draw, max_dims=3, n=None):
    dtype = draw(DTYPES)
    ndim = draw(st.integers(0, max_dims))
    shape = tuple(
        draw(st.integers(0, 6)) if i else (n if n is not None else draw(st.integers(0, 6)))
        for i in range(ndim)
    )
    if dtype is object:
        elements = draw(st.lists(_elements(object), min_size=int(np.prod(shape)),
                                 max_size=int(np.prod(shape))))
        out = np.empty(shape, dtype=object)
        out.reshape(-1)[:] = elements
        return out
    return draw(hnp.arrays(dtype, shape, elements=_elements(dtype)))


@st.composite
def binary_inputs(draw):
    n = draw(st.integers(0, 6))
    good = draw(st.booleans())  # half the cases are well-formed but unusual
    if good:
        p = draw(hnp.arrays(np.float64, n, elements=st.floats(0, 1)))
        y = draw(hnp.arrays(np.int64, n, elements=st.integers(0, 1)))
        if draw(st.booleans()):
            p = np.column_stack([1 - p, p])
    else:
        y = draw(arrays(max_dims=2, n=n))
        p = draw(arrays(max_dims=3, n=n))
    w = draw(st.one_of(st.none(), arrays(max_dims=2, n=n)))
    pos_label = draw(st.sampled_from([None, None, 0, 1, "a", 5, 0.5]))
    return y, p, w, pos_label


# function -> (extra options, upper end of the documented range)
BINARY = {
    "smooth_calibration_error": ({}, 1.0),
    "cutoff_calibration_error": ({}, 1.0),
    "soft_binned_cdl": ({}, 1.0),
    "calibration_decision_loss": ({}, 1.0),
    "calibration_fixed_decision_loss": ({}, 1.0),
    "maximum_swap_regret": ({}, None),
    "binned_ece": ({"n_bins": 4}, 1.0),
    "lower_distance_to_calibration": ({"grid": 10}, 1.0),
}


def _check_outcome(call, upper, argument_words=ARGUMENT_WORDS):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = call()
    except (ValueError, TypeError) as error:
        message = str(error)
        assert any(word in message for word in argument_words), message
        return
    assert isinstance(value, float), type(value)
    assert math.isfinite(value)
    assert value >= 0
    if upper is not None:
        assert value <= upper + 1e-12


@pytest.mark.parametrize("name", BINARY)
@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=binary_inputs())
def test_binary_measures_never_crash(name, data):
    y, p, w, pos_label = data
    options, upper = BINARY[name]
    func = getattr(skcal, name)
    if name == "maximum_swap_regret" and w is None:
        upper = float(np.size(y)) if np.ndim(y) else None
    _check_outcome(
        lambda: func(y, p, sample_weight=w, pos_label=pos_label, **options), upper
    )


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(
    data=binary_inputs(),
    utility=st.sampled_from(["top-class", "class-wise", "comb"]),
    labels=st.sampled_from([None, [0, 1], [0, 1, 2], ["a", "b"]]),
)
def test_utility_calibration_error_never_crashes(data, utility, labels):
    y, p, w, _ = data
    _check_outcome(
        lambda: skcal.utility_calibration_error(
            y, p, utility, sample_weight=w, labels=labels
        ),
        2.0,
    )


@pytest.mark.parametrize(
    "cls",
    [
        skcal.SmoothCalibrationError,
        skcal.CutoffCalibrationError,
        skcal.SoftBinnedCDL,
        skcal.BinnedECE,
        skcal.CalibrationDecisionLoss,
    ],
)
@settings(max_examples=EXAMPLES // 4, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(data=binary_inputs())
def test_measure_objects_never_crash(cls, data):
    y, p, w, pos_label = data
    _check_outcome(lambda: cls(pos_label=pos_label)(y, p, sample_weight=w), 1.0)


@settings(max_examples=EXAMPLES // 4, deadline=None)
@given(
    name=st.sampled_from(sorted(BINARY)),
    option=st.sampled_from(["pos_label", "multiclass", "labels"]),
    value=st.one_of(
        st.none(), st.integers(-2, 3), st.text(max_size=3), st.floats(allow_nan=True),
        st.just([0]), st.just([[0, 1]]), st.just(object()),
    ),
)
def test_bad_options_never_crash(name, option, value):
    func = getattr(skcal, name)
    options = dict(BINARY[name][0])
    options[option] = value
    _check_outcome(lambda: func([0, 1, 1], [0.2, 0.5, 0.9], **options), None)


# --- estimators -------------------------------------------------------------------

ESTIMATOR_WORDS = ARGUMENT_WORDS + ("P", "X", "y", "p", "actions", "task", "utility")


def _check_fit(call):
    """An estimator call either works or raises ValueError/TypeError naming its input."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call()
    except (ValueError, TypeError) as error:
        message = str(error)
        assert any(word in message for word in ESTIMATOR_WORDS), message


@settings(max_examples=EXAMPLES // 4, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=binary_inputs())
def test_calibration_tester_never_crashes(data):
    y, p, w, pos_label = data
    tester = skcal.CalibrationTester(
        n_resamples=199, resampling_risk=None, pos_label=pos_label, random_state=0
    )
    _check_fit(lambda: tester.fit(y, p, sample_weight=w))


@settings(max_examples=EXAMPLES // 4, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=binary_inputs())
def test_recalibrator_and_rounding_never_crash(data):
    y, p, w, _ = data
    _check_fit(
        lambda: skcal.UtilityPatchingRecalibrator(max_iter=3).fit(p, y, sample_weight=w)
    )
    _check_fit(lambda: skcal.SCDLRounding(random_state=0).fit(p, y, sample_weight=w))


@settings(max_examples=EXAMPLES // 4, deadline=None)
@given(utility=arrays(max_dims=3), p=arrays(max_dims=2))
def test_decision_task_never_crashes(utility, p):
    def call():
        task = skcal.DecisionTask(utility)
        task.best_response(p)

    _check_fit(call)
