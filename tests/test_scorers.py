"""Scorers in real scikit-learn model selection, checked against direct calls."""

import pickle

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, load_iris, make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import (
    GridSearchCV,
    StratifiedKFold,
    cross_val_score,
    cross_validate,
)
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import skcal
from skcal import measures
from skcal.measures import MEASURE_CLASSES

SKCAL_NAMES = ["neg_" + cls._score_name for cls in MEASURE_CLASSES]
# Measures of one probability per sample (top-label on multiclass input).
BINARY_NAMES = [
    "neg_" + cls._score_name for cls in MEASURE_CLASSES if cls._proba == "binary"
]


@pytest.fixture(scope="module")
def binary_data():
    X, y = load_breast_cancer(return_X_y=True)
    return X[::2], y[::2]


@pytest.fixture(scope="module")
def string_multiclass():
    X, y = load_iris(return_X_y=True)
    names = np.array(["setosa", "versicolor", "virginica"])
    return X, names[y]


def test_scorer_names():
    names = skcal.get_scorer_names()
    for name in SKCAL_NAMES:
        assert name in names
        assert isinstance(skcal.get_scorer(name), skcal.CalibrationScorer)
    assert "accuracy" in names
    assert names == sorted(names)


def test_unknown_names_fall_through_to_sklearn():
    assert repr(skcal.get_scorer("neg_brier_score")) == repr(
        sklearn.metrics.get_scorer("neg_brier_score")
    )
    with pytest.raises(ValueError):
        skcal.get_scorer("no_such_scorer")
    assert skcal.get_scorer(None) is None
    with pytest.raises(TypeError):
        skcal.make_scorers("neg_binned_ece")


@pytest.mark.parametrize("cls", MEASURE_CLASSES)
def test_measure_class_is_thin(cls, binary_data):
    X, y = binary_data
    p = GaussianNB().fit(X, y).predict_proba(X)[:, 1]
    measure = cls()
    func = getattr(skcal, cls._function_name)
    assert measure(y, p) == func(y, p)
    value, details = measure(y, p, return_details=True)
    assert value == pytest.approx(func(y, p), abs=1e-12)
    _, expected = func(y, p, return_details=True)
    assert sorted(details) == sorted(expected)
    assert repr(clone(measure)) == repr(measure)
    assert pickle.loads(pickle.dumps(measure.scorer()))._score_func is func


def test_options_reach_the_function(binary_data):
    X, y = binary_data
    p = GaussianNB().fit(X, y).predict_proba(X)[:, 1]
    m = measures.BinnedECE(n_bins=7, norm="max")
    assert m(y, p) == skcal.binned_ece(y, p, n_bins=7, norm="max")
    m.set_params(n_bins=3)
    assert m.scorer()._kwargs["n_bins"] == 3


def _fold_scores(estimator, X, y, cv, func, **kw):
    out = []
    for train, test in cv.split(X, y):
        est = clone(estimator).fit(X[train], y[train])
        out.append(-func(y[test], est.predict_proba(X[test]), **kw))
    return np.array(out)


def test_cross_validate_multimetric_matches_direct_calls(binary_data):
    X, y = binary_data
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    scoring = skcal.make_scorers(SKCAL_NAMES + ["accuracy", "neg_brier_score"])
    est = GaussianNB()
    result = cross_validate(est, X, y, cv=cv, scoring=scoring)
    for cls in MEASURE_CLASSES:
        func = getattr(skcal, cls._function_name)
        expected = _fold_scores(est, X, y, cv, func)
        np.testing.assert_allclose(
            result["test_neg_" + cls._score_name], expected, rtol=0, atol=1e-12
        )
    assert np.all(result["test_accuracy"] > 0.8)


def test_string_binary_labels(binary_data):
    X, y = binary_data
    y_str = np.where(y == 1, "benign", "malignant")
    cv = StratifiedKFold(3, shuffle=True, random_state=1)
    est = GaussianNB()
    ours = cross_val_score(
        est, X, y_str, cv=cv, scoring=skcal.get_scorer("neg_cutoff_calibration_error")
    )
    # positive class is classes_[-1] = "malignant", as in scikit-learn
    expected = _fold_scores(
        est, X, y_str, cv, skcal.cutoff_calibration_error, pos_label="malignant"
    )
    np.testing.assert_allclose(ours, expected, atol=1e-12)


def test_multiclass_string_labels_top_label(string_multiclass):
    X, y = string_multiclass
    cv = StratifiedKFold(4, shuffle=True, random_state=0)
    est = make_pipeline(StandardScaler(), LogisticRegression(C=0.05))
    for name in BINARY_NAMES:
        scores = cross_val_score(est, X, y, cv=cv, scoring=skcal.get_scorer(name))
        func = getattr(skcal, name[4:])
        expected = []
        for train, test in cv.split(X, y):
            e = clone(est).fit(X[train], y[train])
            P = e.predict_proba(X[test])
            correct = (e.classes_[P.argmax(axis=1)] == y[test]).astype(float)
            expected.append(-func(correct, P.max(axis=1)))
        np.testing.assert_allclose(scores, expected, atol=1e-12)


def test_multiclass_raise_option(string_multiclass):
    X, y = string_multiclass
    scorer = measures.CutoffCalibrationError(multiclass="raise").scorer()
    est = GaussianNB().fit(X, y)
    with pytest.raises(ValueError, match="multiclass='raise'"):
        scorer(est, X, y)


def test_fold_missing_a_class_uses_estimator_classes():
    # classes 0, 1, 5; the test rows hold only classes 1 and 5, so the
    # scorer must label the columns by classes_, not by y_true
    X, y = make_classification(
        n_samples=90, n_classes=3, n_informative=4, random_state=0
    )
    y = np.array([0, 1, 5])[y]
    est = LogisticRegression(max_iter=500).fit(X, y)
    mask = y != 0
    P = est.predict_proba(X[mask])
    correct = (est.classes_[P.argmax(axis=1)] == y[mask]).astype(float)
    score = skcal.get_scorer("neg_cutoff_calibration_error")(est, X[mask], y[mask])
    assert score == pytest.approx(
        -skcal.cutoff_calibration_error(correct, P.max(axis=1)), abs=1e-12
    )


def test_grid_search_refit_on_calibration_metric_parallel(binary_data):
    X, y = binary_data
    pipe = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    scoring = skcal.make_scorers(["neg_smooth_calibration_error", "accuracy"])
    search = GridSearchCV(
        pipe,
        {"logisticregression__C": [0.01, 1.0, 100.0]},
        scoring=scoring,
        refit="neg_smooth_calibration_error",
        cv=3,
        n_jobs=2,
    )
    search.fit(X, y)
    ranks = search.cv_results_["rank_test_neg_smooth_calibration_error"]
    best = int(np.argmin(ranks))
    assert search.best_index_ == best
    assert search.best_params_ == search.cv_results_["params"][best]
    means = search.cv_results_["mean_test_neg_smooth_calibration_error"]
    assert search.best_score_ == means.max()


def test_sample_weight_through_metadata_routing(binary_data):
    X, y = binary_data
    rng = np.random.default_rng(0)
    w = rng.integers(1, 4, y.shape[0]).astype(float)
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    with sklearn.config_context(enable_metadata_routing=True):
        scorer = skcal.get_scorer("neg_cutoff_calibration_error")
        scorer.set_score_request(sample_weight=True)
        est = GaussianNB().set_fit_request(sample_weight=False)
        result = cross_validate(
            est, X, y, cv=cv, scoring={"cut": scorer}, params={"sample_weight": w}
        )
    expected = []
    for train, test in cv.split(X, y):
        e = GaussianNB().fit(X[train], y[train])
        p = e.predict_proba(X[test])[:, 1]
        expected.append(
            -skcal.cutoff_calibration_error(y[test], p, sample_weight=w[test])
        )
    np.testing.assert_allclose(result["test_cut"], expected, atol=1e-12)
    unweighted = cross_val_score(GaussianNB(), X, y, cv=cv, scoring=scorer)
    assert not np.allclose(unweighted, expected)


@pytest.mark.parametrize("utility", ["top-class", "comb", skcal.TopK(2)])
def test_utility_scorer_string_labels_matches_direct_calls(string_multiclass, utility):
    X, y = string_multiclass
    cv = StratifiedKFold(4, shuffle=True, random_state=0)
    est = make_pipeline(StandardScaler(), LogisticRegression(C=0.05))
    scorer = skcal.UtilityCalibrationError(utility=utility).scorer()
    result = cross_validate(
        est, X, y, cv=cv, scoring={"uc": scorer, "acc": "accuracy"}
    )
    expected = []
    for train, test in cv.split(X, y):
        e = clone(est).fit(X[train], y[train])
        # columns follow classes_; y_true as column indices, no labels needed
        col = np.searchsorted(e.classes_, y[test])
        expected.append(
            -skcal.utility_calibration_error(
                col, e.predict_proba(X[test]), utility, labels=[0, 1, 2]
            )
        )
    np.testing.assert_allclose(result["test_uc"], expected, atol=1e-12)
    assert np.all(np.asarray(expected) < 0)


def test_top_class_utility_scorer_is_top_label_cutoff(string_multiclass):
    # paper 001, Example 3.4: top-class UC is the cutoff error of
    # (confidence, correctness)
    X, y = string_multiclass
    est = GaussianNB().fit(X[::2], y[::2])
    uc = skcal.get_scorer("neg_utility_calibration_error")(est, X[1::2], y[1::2])
    cut = skcal.get_scorer("neg_cutoff_calibration_error")(est, X[1::2], y[1::2])
    assert uc == pytest.approx(cut, abs=1e-12)


def test_utility_scorer_fold_missing_a_class():
    X, y = make_classification(
        n_samples=120, n_classes=3, n_informative=4, random_state=3
    )
    y = np.array(["ant", "bee", "cat"])[y]
    est = LogisticRegression(max_iter=500).fit(X, y)
    mask = y != "ant"
    P = est.predict_proba(X[mask])
    score = skcal.UtilityCalibrationError(utility="class-wise").scorer()(
        est, X[mask], y[mask]
    )
    expected = skcal.utility_calibration_error(
        y[mask], P, "class-wise", labels=est.classes_
    )
    assert score == pytest.approx(-expected, abs=1e-12)
    # without the estimator's classes the two observed labels could not be
    # matched to three columns
    with pytest.raises(ValueError):
        skcal.utility_calibration_error(y[mask], P, "class-wise")


def test_utility_scorer_grid_search_and_weights(string_multiclass):
    X, y = string_multiclass
    scorer = skcal.UtilityCalibrationError(utility="comb").scorer()
    search = GridSearchCV(
        LogisticRegression(max_iter=1000),
        {"C": [0.01, 1.0]},
        scoring={"uc": scorer, "accuracy": "accuracy"},
        refit="uc",
        cv=3,
        n_jobs=2,
    ).fit(X, y)
    means = search.cv_results_["mean_test_uc"]
    assert search.best_index_ == int(np.argmax(means))
    w = np.random.default_rng(1).integers(1, 4, y.shape[0]).astype(float)
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    with sklearn.config_context(enable_metadata_routing=True):
        weighted = skcal.UtilityCalibrationError(utility="comb").scorer()
        weighted.set_score_request(sample_weight=True)
        est = GaussianNB().set_fit_request(sample_weight=False)
        result = cross_validate(
            est, X, y, cv=cv, scoring={"uc": weighted}, params={"sample_weight": w}
        )
    expected = []
    for train, test in cv.split(X, y):
        e = GaussianNB().fit(X[train], y[train])
        expected.append(
            -skcal.utility_calibration_error(
                y[test], e.predict_proba(X[test]), "comb",
                sample_weight=w[test], labels=e.classes_,
            )
        )
    np.testing.assert_allclose(result["test_uc"], expected, atol=1e-12)


def test_unknown_scorer_name_lists_skcal_names():
    from skcal import get_scorer

    with pytest.raises(ValueError, match="skcal.get_scorer_names") as info:
        get_scorer("neg_smooth_calibration_eror")
    assert "Did you mean 'neg_smooth_calibration_error'" in str(info.value)
    assert "neg_soft_binned_cdl" in str(info.value)
    with pytest.raises(ValueError, match="not a valid scoring value"):
        get_scorer("no_such_scorer")
