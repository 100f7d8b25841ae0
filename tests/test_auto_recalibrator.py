"""Tests for RecalibratedClassifier(recalibrator="auto") and the parameter
validation of RecalibratedClassifier and OnlineRecalibratedClassifier.

Expected values come from the loops of tests/reference.py (the choice rule on
pooled out-of-fold predictions, the null tolerance by row-by-row draws, UC by
brute force over all intervals) or are derived in the comments.
"""

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.datasets import make_classification
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils._param_validation import InvalidParameterError

from skcal.metrics import utility_calibration_error
from skcal.online import OnlineRecalibratedClassifier
from skcal.recalibration import RecalibratedClassifier, UtilityPatchingRecalibrator
from skcal.recalibration import _patching as recalibration
from skcal.recalibration._patching import (
    _auto_candidate,
    _choose_recalibrator,
    _fit_recalibrator,
    _null_tolerance,
    _SklearnRecalibrator,
)

from reference import auto_choice_reference, null_tolerance_reference

NAMES = (
    "temperature",
    "isotonic",
    "patching",
    "temperature+patching",
    "isotonic+patching",
)


def _classification(n_classes, n_samples, seed=0):
    return make_classification(
        n_samples=n_samples,
        n_features=8,
        n_informative=5,
        n_classes=n_classes,
        n_clusters_per_class=1,
        random_state=seed,
    )


def _random_case(rng):
    """Probabilities and classes with ties, weights, one-hot rows, few classes."""
    n = int(rng.integers(2, 31))
    C = int(rng.integers(2, 5))
    P = rng.dirichlet(np.full(C, 0.7), size=n)
    kind = rng.integers(0, 5)
    if kind == 1:  # ties: a few distinct rows repeated
        P = P[rng.integers(0, max(1, n // 4), size=n)]
    elif kind == 2:  # p in {0, 1}: one-hot rows
        P = np.eye(C)[rng.integers(0, C, size=n)]
    y = rng.integers(0, C, size=n)
    if kind == 3:  # one class only
        y = np.full(n, int(rng.integers(0, C)))
    w = np.ones(n)
    if rng.uniform() < 0.5:
        w = rng.integers(0, 4, size=n).astype(float)
        w[0] = 1.0  # some weight left
    return P, y, w


# --- the null tolerance ----------------------------------------------------------


def test_null_tolerance_matches_reference():
    rng = np.random.default_rng(1)
    for _ in range(25):
        Q, _, w = _random_case(rng)
        expected = null_tolerance_reference(Q, w, seed=0, n_draws=20)
        assert_allclose(_null_tolerance(Q, w), expected, rtol=1e-9, atol=1e-15)


def test_null_tolerance_of_certain_predictions_is_zero():
    # one-hot rows: every draw is the predicted class, so UC = 0 in every draw
    Q = np.eye(3)[[0, 1, 2, 2, 0, 1]]
    assert _null_tolerance(Q, np.ones(6)) == 0.0
    # one certain row: the same
    assert _null_tolerance(np.array([[1.0, 0.0]]), np.ones(1)) == 0.0
    # one row p = (1/2, 1/2): whichever class is drawn, the class-wise
    # utilities have residual |1 - 1/2| = 1/2 (top-2 has 0), so UC = 1/2
    assert _null_tolerance(np.array([[0.5, 0.5]]), np.ones(1)) == 0.5


def test_null_tolerance_is_the_typical_uc_of_calibrated_predictions():
    # For predictions that ARE calibrated (y drawn from Q), UC(y, Q) exceeds the
    # null median about half the time. Count over 40 independent data sets:
    # Binomial(40, 1/2) lies in [9, 31] with probability > 0.9999. The
    # Hoeffding tolerance tol="auto" would be exceeded (almost) never.
    rng = np.random.default_rng(7)
    above = 0
    for _ in range(40):
        Q = rng.dirichlet(np.ones(4), size=400)
        y = (Q.cumsum(axis=1) > rng.uniform(size=(400, 1))).argmax(axis=1)
        w = np.ones(400)
        uc = utility_calibration_error(y, Q, "comb", labels=np.arange(4))
        above += uc > _null_tolerance(Q, w)
    assert 9 <= above <= 31


# --- the choice rule ---------------------------------------------------------------


def _folds_by_definition(y):
    """5 shuffled folds (seed 0), stratified when every present class has 5 rows."""
    counts = np.bincount(y)
    if counts[counts > 0].min() >= 5:
        splitter = StratifiedKFold(5, shuffle=True, random_state=0)
    else:
        splitter = KFold(min(5, y.shape[0]), shuffle=True, random_state=0)
    return list(splitter.split(np.zeros((y.shape[0], 1)), y))


@pytest.mark.parametrize("margin", [0.0, 0.05, 1.0])
def test_choice_matches_reference_on_random_cases(margin, monkeypatch):
    # 0.05 is the rule shipped; 0 (the smallest UC wins) and 1 (a margin
    # larger than most differences) make both branches of the rule occur
    monkeypatch.setattr(recalibration, "_AUTO_MARGIN", margin)
    rng = np.random.default_rng(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(12):
            P, y, w = _random_case(rng)

            def fit_predict(name, train, test, P=P, y=y, w=w):
                model = _fit_recalibrator(
                    _auto_candidate(name, P[train], y[train], w[train]),
                    P[train],
                    y[train],
                    w[train],
                )
                return model.predict_proba(P[test])

            expected_choice, expected = auto_choice_reference(
                P, y, w, _folds_by_definition(y), NAMES, fit_predict, margin
            )
            choice, scores = _choose_recalibrator(P, y, w)
            assert set(scores) == set(NAMES)
            for name in NAMES:
                assert_allclose(scores[name]["uc"], expected[name]["uc"],
                                rtol=1e-9, atol=1e-12)
                assert_allclose(scores[name]["brier"], expected[name]["brier"],
                                rtol=1e-9, atol=1e-12)
            assert choice == expected_choice


def test_choice_keeps_the_simpler_candidate_within_the_margin(monkeypatch):
    # GaussianNB on 3 classes: some patched candidate beats temperature
    # scaling by a clear UC margin; with a margin as large as that lead the
    # choice falls back to the first candidate, temperature scaling
    X, y = _classification(3, 900)
    from sklearn.model_selection import cross_val_predict

    P = cross_val_predict(GaussianNB(), X, y, cv=3, method="predict_proba")
    w = np.ones(900)
    choice, scores = _choose_recalibrator(P, y, w)
    lead = scores["temperature"]["uc"] - min(s["uc"] for s in scores.values())
    assert choice != "temperature" and lead > 0
    unit = np.sqrt(np.log(4 * 6) / (2 * 900))
    monkeypatch.setattr(recalibration, "_AUTO_MARGIN", 1.01 * lead / unit)
    assert _choose_recalibrator(P, y, w)[0] == "temperature"
    monkeypatch.setattr(recalibration, "_AUTO_MARGIN", 0.99 * lead / unit)
    assert _choose_recalibrator(P, y, w)[0] != "temperature"


def test_auto_candidates_are_what_the_documentation_says():
    rng = np.random.default_rng(4)
    P = rng.dirichlet(np.ones(3), size=200)
    y = rng.integers(0, 3, size=200)
    w = np.ones(200)
    assert isinstance(_auto_candidate("isotonic", P, y, w), _SklearnRecalibrator)
    assert _auto_candidate("temperature", P, y, w).method == "temperature"
    plain = _auto_candidate("patching", P, y, w)
    assert plain.init is None and plain.tol == "auto"
    warm = _auto_candidate("temperature+patching", P, y, w)
    assert (warm.init, warm.tol, warm.init_cv) == ("temperature", "auto", 5)
    # isotonic+patching stops at the null tolerance of the in-sample isotonic fit
    iso = _auto_candidate("isotonic+patching", P, y, w)
    start = _SklearnRecalibrator("isotonic").fit(P, y).predict_proba(P)
    assert iso.init == "isotonic" and iso.init_cv == 5
    assert_allclose(iso.tol, null_tolerance_reference(start, w, 0, 20), rtol=1e-9)
    # a tiny inner fold: the start is cross-fitted over one fold a row
    assert _auto_candidate("isotonic+patching", P[:3], y[:3], w[:3]).init_cv == 3


def test_auto_exposes_choice_and_scores_and_refits_the_choice():
    X, y = _classification(3, 900)
    clf = RecalibratedClassifier(GaussianNB(), cv=3).fit(X, y)
    scores = clf.recalibrator_scores_
    assert set(scores) == set(NAMES)
    assert all(set(score) == {"uc", "brier"} for score in scores.values())
    # the first candidate within the margin of the smallest UC
    best = min(score["uc"] for score in scores.values())
    margin = 0.05 * np.sqrt(np.log(4 * 6) / (2 * 900))  # 6 "comb" utilities
    within = [name for name in NAMES if scores[name]["uc"] <= best + margin]
    assert clf.recalibrator_choice_ == within[0]
    # the chosen candidate, refitted on all the held-out probabilities
    from sklearn.model_selection import cross_val_predict

    held_out = cross_val_predict(GaussianNB(), X, y, cv=3, method="predict_proba")
    w = np.ones(900)
    expected = _fit_recalibrator(
        _auto_candidate(clf.recalibrator_choice_, held_out, y, w), held_out, y, w
    )
    assert_allclose(
        clf.predict_proba(X), expected.predict_proba(clf.estimator_.predict_proba(X))
    )
    explicit = RecalibratedClassifier(GaussianNB(), "auto", cv=3).fit(X, y)
    assert_array_equal(explicit.predict_proba(X), clf.predict_proba(X))
    # a given recalibrator leaves no auto attributes
    clf.set_params(recalibrator=UtilityPatchingRecalibrator()).fit(X, y)
    assert not hasattr(clf, "recalibrator_choice_")
    assert not hasattr(clf, "recalibrator_scores_")


def test_auto_handles_a_rare_class_and_a_frozen_model_missing_one():
    X, y = _classification(3, 900)
    base = GaussianNB().fit(X[:300], y[:300])
    # 3 rows of class 2 in the calibration data: some inner folds miss it
    rows = np.r_[np.flatnonzero(y[300:] != 2), np.flatnonzero(y[300:] == 2)[:3]] + 300
    clf = RecalibratedClassifier(FrozenEstimator(base)).fit(X[rows], y[rows])
    assert clf.predict_proba(X).shape == (900, 3)
    assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0)
    # no row of class 1 at all
    keep = y[300:] != 1
    clf = RecalibratedClassifier(FrozenEstimator(base)).fit(X[300:][keep], y[300:][keep])
    assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0)


def test_sklearn_recalibrator_with_classes_missing():
    rng = np.random.default_rng(5)
    P = rng.dirichlet(np.ones(4), size=60)
    y = rng.choice([0, 2, 3], size=60)
    out = _SklearnRecalibrator("isotonic").fit(P, y).predict_proba(P)
    # column 1 never occurs: probability 0; the others are scikit-learn's
    # isotonic recalibration of the three columns present
    assert_array_equal(out[:, 1], 0.0)
    assert_allclose(out.sum(axis=1), 1.0)
    one = _SklearnRecalibrator("isotonic").fit(P, np.full(60, 2)).predict_proba(P)
    assert_array_equal(one, np.eye(4)[np.full(60, 2)])


def test_auto_in_pipeline_and_grid_search():
    X, y = _classification(3, 600)
    pipe = make_pipeline(StandardScaler(), RecalibratedClassifier(GaussianNB(), cv=3))
    assert pipe.fit(X, y).predict_proba(X).shape == (600, 3)
    search = GridSearchCV(
        RecalibratedClassifier(GaussianNB(), cv=3),
        {"recalibrator": ["auto", UtilityPatchingRecalibrator()]},
        cv=3,
        scoring="neg_brier_score",
    ).fit(X, y)
    assert search.best_estimator_.predict_proba(X).shape == (600, 3)


# --- scikit-learn's parameter validation -----------------------------------------


def test_recalibrated_classifier_parameter_constraints():
    X, y = _classification(3, 120)
    with pytest.raises(InvalidParameterError, match="'n_jobs' parameter"):
        RecalibratedClassifier(GaussianNB(), n_jobs="two").fit(X, y)
    # InvalidParameterError is a ValueError and a TypeError
    with pytest.raises(ValueError, match="n_jobs"):
        RecalibratedClassifier(GaussianNB(), n_jobs=1.5).fit(X, y)
    # the checks with messages of their own are unchanged
    with pytest.raises(TypeError, match="recalibrator must have"):
        RecalibratedClassifier(GaussianNB(), object()).fit(X, y)
    with pytest.raises(ValueError, match="recalibrator must be 'auto'"):
        RecalibratedClassifier(GaussianNB(), "fast").fit(X, y)
    # skip_parameter_validation turns the declared checks off
    import sklearn

    with sklearn.config_context(skip_parameter_validation=True):
        RecalibratedClassifier(GaussianNB(), n_jobs=1.0, cv=2).fit(X, y)


def test_online_recalibrated_classifier_parameter_constraints():
    X, y = _classification(2, 200)
    model = GaussianNB().fit(X, y)
    for params, name in [
        ({"n_bins": 0}, "n_bins"),
        ({"n_bins": "ten"}, "n_bins"),
        ({"horizon": 1}, "horizon"),
        ({"horizon": 2.5}, "horizon"),
        ({"n_buckets": "many"}, "n_buckets"),
        ({"n_buckets": 1}, "n_buckets"),
        ({"random_state": "seed"}, "random_state"),
        ({"n_jobs": "all"}, "n_jobs"),
    ]:
        online = OnlineRecalibratedClassifier(FrozenEstimator(model), **params)
        with pytest.raises(InvalidParameterError, match=f"'{name}' parameter"):
            online.fit(X, y)
        with pytest.raises(InvalidParameterError, match=f"'{name}' parameter"):
            online.partial_fit(X, y)
    # booleans, which the integer intervals accept, are refused by the own check
    with pytest.raises(ValueError, match="n_bins"):
        OnlineRecalibratedClassifier(FrozenEstimator(model), n_bins=True).fit(X, y)
    # a later partial_fit does not validate again (scikit-learn's convention)
    online = OnlineRecalibratedClassifier(FrozenEstimator(model), random_state=0)
    online.partial_fit(X[:50], y[:50])
    online.n_jobs = "ignored after the first call"
    online.partial_fit(X[50:100], y[50:100])
    assert online.n_samples_seen_ == 100
