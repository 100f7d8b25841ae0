"""Properties every public measure shares, checked in one place.

Each binary measure function of :mod:`skcal` must: leave the caller's arrays
untouched (and accept read-only ones), give the same value for lists and
arrays, for any order of the samples, and for integer weights as for repeated
rows; each measure class must clone, pickle and forward its options.
"""

import inspect
import pickle

import numpy as np
import pytest
from sklearn.base import clone

import skcal
from skcal.measures import MEASURE_CLASSES

# Binary measures: name -> (function, options, tolerance), read off the
# registry (every binary measure class), plus variants of some of them. The
# LP-based distance is exact to solver tolerance only.
_OPTIONS = {
    "lower_distance_to_calibration": ({"grid": 40}, 1e-7),
    "binned_ece": ({"n_bins": 7}, 1e-12),
}
BINARY = {
    cls._function_name: (
        getattr(skcal, cls._function_name),
        *_OPTIONS.get(cls._function_name, ({}, 1e-12)),
    )
    for cls in MEASURE_CLASSES
    if cls._proba == "binary"
}
BINARY.update(
    {
        "soft_binned_cdl_m8": (skcal.soft_binned_cdl, {"m": 8}, 1e-12),
        "calibration_fixed_decision_loss": (
            skcal.calibration_fixed_decision_loss,
            {},
            1e-12,
        ),
        "maximum_swap_regret": (skcal.maximum_swap_regret, {}, 1e-9),
        "binned_ece_quantile_max": (
            skcal.binned_ece,
            {"n_bins": 4, "strategy": "quantile", "norm": "max"},
            1e-12,
        ),
    }
)
MULTICLASS = {
    "top-class": "top-class",
    "comb": "comb",
    "top-2": skcal.TopK(2),
}


def _binary_case(seed, n=40):
    rng = np.random.default_rng(seed)
    # rounded so that ties occur, with both ends of [0, 1]
    p = np.round(rng.uniform(0, 1, n), 1)
    y = (rng.uniform(0, 1, n) < p ** 1.5).astype(int)
    w = rng.integers(0, 4, n)
    w[0] = 1
    return y, p, w


def _multiclass_case(seed, n=40, C=4):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.full(C, 0.7), n)
    P = np.round(P * 8) + 0.0
    P[P.sum(axis=1) == 0, 0] = 1.0
    P /= P.sum(axis=1, keepdims=True)
    y = rng.integers(0, C, n)
    y[:C] = np.arange(C)
    w = rng.integers(0, 4, n)
    w[0] = 1
    return y, P, w


def _read_only(*arrays):
    out = []
    for a in arrays:
        a = np.array(a)
        a.setflags(write=False)
        out.append(a)
    return out


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("seed", range(3))
def test_binary_measures_share_properties(name, seed):
    func, options, tol = BINARY[name]
    y, p, w = _binary_case(seed)
    y_ro, p_ro, w_ro = _read_only(y, p, w.astype(float))
    before = (y_ro.copy(), p_ro.copy(), w_ro.copy())
    value = func(y_ro, p_ro, sample_weight=w_ro, **options)
    for a, b in zip((y_ro, p_ro, w_ro), before):
        np.testing.assert_array_equal(a, b)
    assert isinstance(value, float)
    assert value >= 0
    # lists and arrays
    assert func(y.tolist(), p.tolist(), sample_weight=w.tolist(), **options) == (
        pytest.approx(value, abs=tol)
    )
    # order of the samples
    order = np.random.default_rng(seed + 100).permutation(y.shape[0])
    assert func(y[order], p[order], sample_weight=w[order], **options) == (
        pytest.approx(value, abs=tol)
    )
    # integer weights are repetitions (zero weights drop the row)
    rep = np.repeat(np.arange(y.shape[0]), w)
    assert func(y[rep], p[rep], **options) == pytest.approx(value, abs=tol)
    # two-column input is the same as the probability of class 1
    P2 = np.column_stack([1 - p, p])
    assert func(y, P2, sample_weight=w, **options) == pytest.approx(value, abs=tol)


@pytest.mark.parametrize("name", BINARY)
def test_binary_measures_reject_bad_input(name):
    func, options, _ = BINARY[name]
    with pytest.raises(ValueError, match="y_prob"):
        func([0, 1], [0.5, 1.5], **options)
    with pytest.raises(ValueError, match="y_prob"):
        func([0, 1], [0.5, np.nan], **options)
    with pytest.raises(ValueError, match="sample_weight"):
        func([0, 1], [0.5, 0.5], sample_weight=[1.0, -1.0], **options)
    with pytest.raises(ValueError):
        func([0, 1, 1], [0.5, 0.5], **options)


@pytest.mark.parametrize("utility", MULTICLASS)
@pytest.mark.parametrize("seed", range(3))
def test_utility_calibration_error_shares_properties(utility, seed):
    u = MULTICLASS[utility]
    y, P, w = _multiclass_case(seed)
    y_ro, P_ro, w_ro = _read_only(y, P, w.astype(float))
    before = (y_ro.copy(), P_ro.copy(), w_ro.copy())
    value = skcal.utility_calibration_error(y_ro, P_ro, u, sample_weight=w_ro)
    for a, b in zip((y_ro, P_ro, w_ro), before):
        np.testing.assert_array_equal(a, b)
    assert 0 <= value <= 2
    order = np.random.default_rng(seed).permutation(y.shape[0])
    assert skcal.utility_calibration_error(
        y[order], P[order], u, sample_weight=w[order]
    ) == pytest.approx(value, abs=1e-12)
    rep = np.repeat(np.arange(y.shape[0]), w)
    assert skcal.utility_calibration_error(y[rep], P[rep], u) == pytest.approx(
        value, abs=1e-12
    )
    labels = np.array(["a", "b", "c", "d"])
    assert skcal.utility_calibration_error(
        labels[y], P, u, sample_weight=w
    ) == pytest.approx(value, abs=1e-12)


@pytest.mark.parametrize("cls", MEASURE_CLASSES)
def test_measure_classes_are_estimator_like(cls):
    measure = cls()
    params = measure.get_params(deep=False)
    # every constructor argument is a parameter, stored under its own name
    # with its default (clone and GridSearchCV rely on both)
    signature = inspect.signature(cls.__init__).parameters
    defaults = {
        name: p.default for name, p in signature.items() if name != "self"
    }
    assert params.keys() == defaults.keys()
    for name, default in defaults.items():
        assert params[name] is default or params[name] == default
    twin = clone(measure)
    assert twin is not measure and repr(twin) == repr(measure)
    restored = pickle.loads(pickle.dumps(measure))
    y, p, w = _binary_case(0)
    assert restored(y, p, sample_weight=w) == measure(y, p, sample_weight=w)
    scorer = pickle.loads(pickle.dumps(measure.scorer()))
    assert scorer._sign == -1
    assert scorer._response_method == "predict_proba"
    value, details = measure(y, p, sample_weight=w, return_details=True)
    assert value == measure(y, p, sample_weight=w)
