"""Validate once: an entry point checks its input once, inner fits never again.

Every reference to scikit-learn's ``check_array`` in skcal's modules, to
``_check_sample_weight`` and to skcal's own input checks is replaced by a
counting wrapper during one fit; the counts must not grow with the number of
candidates or folds of :class:`AutoRecalibrator` (before this test they did:
one default ``auto`` fit made 67 probability checks and as many weight
checks).
"""

import sys
from collections import Counter

import numpy as np
import pytest
import sklearn.utils.validation as sk_validation
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression

import skcal._input as sc_validation
import skcal.recalibration._base as rc_base
from skcal.recalibration import (
    AutoRecalibrator,
    IsotonicCalibration,
    RecalibratedClassifier,
    TemperatureScaling,
    UtilityPatchingRecalibrator,
)

# (module, name) of every input check counted
_COUNTED = [
    (sk_validation, "check_array"),
    (sk_validation, "_check_sample_weight"),
    (sc_validation, "check_sample_weight"),
    (sc_validation, "as_probability_array"),
    (sc_validation, "check_probability_matrix"),
    (sc_validation, "resolve_labels"),
    (rc_base, "check_probability_input"),
    (rc_base, "checked_probabilities"),
]


@pytest.fixture
def counts(monkeypatch):
    """A Counter of calls per checking function, by name, while the test runs."""
    calls = Counter()
    originals = {
        id(getattr(module, name)): (name, getattr(module, name))
        for module, name in _COUNTED
        if hasattr(module, name)
    }

    def counting(name, function):
        def wrapper(*args, **kwargs):
            calls[name] += 1
            return function(*args, **kwargs)

        return wrapper

    wrappers = {key: counting(name, f) for key, (name, f) in originals.items()}
    for module_name, module in list(sys.modules.items()):
        if module is None or not (
            module_name.startswith("skcal") or module_name.startswith("sklearn")
        ):
            continue
        for attr, value in list(vars(module).items()):
            if id(value) not in wrappers or value is not originals[id(value)][1]:
                continue
            # scikit-learn's own uses of check_array (its splitters check the
            # fold labels with type_of_target, a base model reads its X) are
            # its business; skcal's uses of it are counted
            # (on scikit-learn 1.6, skcal._compat's isotonic fallback runs
            # sklearn.isotonic, which checks its own weights: counted nowhere)
            if attr in ("check_array", "_check_sample_weight") and not module_name.startswith(
                "skcal"
            ):
                continue
            monkeypatch.setattr(module, attr, wrappers[id(value)])
    return calls


MANY = ["temperature", "sigmoid", "structured-matrix", "histogram", "isotonic",
        "scaling-binning", "spline", "venn-abers"]


def _data(n=240, C=3, seed=0):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, C))
    truth = np.exp(Z) / np.exp(Z).sum(axis=1, keepdims=True)
    y = (truth.cumsum(axis=1) > rng.uniform(size=(n, 1))).argmax(axis=1)
    P = np.exp(2 * Z)
    return P / P.sum(axis=1, keepdims=True), y, rng.uniform(0.5, 2.0, size=n)


def _fit_counts(counts, fit):
    counts.clear()
    fit()
    return dict(counts)


def test_auto_fit_validates_once(counts):
    P, y, w = _data()
    one = _fit_counts(counts, lambda: AutoRecalibrator(
        candidates=["temperature"], cv=2, random_state=0).fit(P, y, sample_weight=w))
    # several candidates of every kind (one-vs-rest, inner folds, Venn-ABERS,
    # the temperature fit inside structured matrix scaling) and more folds
    every = _fit_counts(counts, lambda: AutoRecalibrator(
        candidates=MANY, cv=4, random_state=0).fit(P, y, sample_weight=w))
    # utility patching (warm-started by isotonic, with its own inner folds)
    # among the candidates, under a score that lets it compete
    patching = _fit_counts(counts, lambda: AutoRecalibrator(
        candidates=["isotonic", "patching", "isotonic+patching"],
        selection_scoring="neg_brier_score", cv=3, random_state=0,
    ).fit(P, y, sample_weight=w))
    assert one == every == patching
    # the probabilities once (the conversion and the checks of X), the
    # weights once, the labels once
    # the conversion of the probabilities: as_probability_array (its
    # check_array is imported inside it, for numpy input not called)
    assert every.get("as_probability_array", 0) == 1
    assert every.get("check_array", 0) == 0
    assert every.get("check_sample_weight", 0) + every.get("_check_sample_weight", 0) == 1
    assert every.get("resolve_labels", 0) == 1
    assert all(count == 1 for count in every.values())


def test_recalibrated_classifier_fit_validates_once(counts):
    P, y, w = _data()
    X = np.log(P)
    base = FrozenEstimator(LogisticRegression().fit(X, y))
    few = _fit_counts(counts, lambda: RecalibratedClassifier(
        base, recalibrator=AutoRecalibrator(candidates=["temperature"], cv=2),
        random_state=0).fit(X, y, sample_weight=w))
    many = _fit_counts(counts, lambda: RecalibratedClassifier(
        base, recalibrator=AutoRecalibrator(candidates=MANY, cv=4),
        random_state=0).fit(X, y, sample_weight=w))
    chain = _fit_counts(counts, lambda: RecalibratedClassifier(
        base, recalibrator=[TemperatureScaling(), IsotonicCalibration()],
        random_state=0).fit(X, y, sample_weight=w))
    assert few == many == chain
    # the base model reads X once (its own check_array); the classifier
    # checks the weights and the recalibrator its input once
    assert sum(many.values()) <= 8


def test_patching_with_init_validates_once(counts):
    P, y, w = _data()
    two = _fit_counts(counts, lambda: UtilityPatchingRecalibrator(
        init=IsotonicCalibration(), init_cv=2, max_iter=2, tol=0.0, random_state=0,
    ).fit(P, y, sample_weight=w))
    five = _fit_counts(counts, lambda: UtilityPatchingRecalibrator(
        init=IsotonicCalibration(), init_cv=5, max_iter=2, tol=0.0, random_state=0,
    ).fit(P, y, sample_weight=w))
    assert two == five
    # the conversion of the probabilities: as_probability_array (its
    # check_array is imported inside it, for numpy input not called)
    assert five.get("as_probability_array", 0) == 1
    assert five.get("check_array", 0) == 0
