"""Tests for RecalibratedClassifier, the chain of recalibrators and the
meta-estimator's use of utility patching.

Expected values come from the slow references in tests/recalibration/reference_patching.py (the
simplex projection by bisection on the KKT threshold, Algorithm 1 by brute
force over all intervals, the Brier score by loops) or are derived by hand in
the comments.
"""

import pickle
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import BaseEstimator, clone
from sklearn.datasets import make_classification
from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import (
    GridSearchCV,
    KFold,
    StratifiedKFold,
    cross_val_predict,
)
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import parametrize_with_checks

from skcal import (
    RecalibratedClassifier,
    UtilityPatchingRecalibrator,
    utility_calibration_error,
)
from skcal.online import OnlineRecalibratedClassifier
from skcal.recalibration import AutoRecalibrator, TemperatureScaling

from adapters import ProbabilityRows
from reference_patching import brier_multiclass

# --- data -------------------------------------------------------------------------



def softmax(Z):
    Z = Z - Z.max(axis=1, keepdims=True)
    E = np.exp(Z)
    return E / E.sum(axis=1, keepdims=True)


def overconfident(n, n_classes, seed, temperature=3.0):
    """Predictions softmax(T z) for outcomes drawn from softmax(z): over-confident."""
    rng = np.random.RandomState(seed)
    Z = rng.normal(scale=1.5, size=(n, n_classes))
    truth = softmax(Z)
    y = (truth.cumsum(axis=1) > rng.uniform(size=(n, 1))).argmax(axis=1)
    return softmax(temperature * Z), y


def assert_same_patches(a, b, rtol=0.0):
    """Same utilities (by repr: they compare by identity), intervals, signs, steps."""
    assert len(a) == len(b)
    for p, q in zip(a, b):
        assert repr(p.utility) == repr(q.utility)
        assert p.sign == q.sign
        assert_allclose(p.interval, q.interval, rtol=rtol, atol=0)
        assert_allclose(p.step, q.step, rtol=rtol, atol=0)


def _brier(P, y, w=None):
    w = np.ones(P.shape[0]) if w is None else np.asarray(w, dtype=float)
    return brier_multiclass(P, y, w)


def test_pickle_round_trip():
    P, y = overconfident(400, 3, seed=19)
    rec = UtilityPatchingRecalibrator(tol=0.0, max_iter=10).fit(P, y)
    again = pickle.loads(pickle.dumps(rec))
    assert_same_patches(again.patches_, rec.patches_)
    assert_array_equal(again.transform(P), rec.transform(P))
    clf = RecalibratedClassifier(GaussianNB(), cv=3).fit(*_classification(3, 300))
    X, _ = _classification(3, 300)
    assert_array_equal(
        pickle.loads(pickle.dumps(clf)).predict_proba(X), clf.predict_proba(X)
    )


def _classification(n_classes, n, seed=0):
    return make_classification(
        n_samples=n,
        n_features=8,
        n_informative=5,
        n_classes=n_classes,
        n_clusters_per_class=1,
        random_state=seed,
    )


class RecordingRecalibrator(BaseEstimator):
    """Records what it is fitted on; predicts the probabilities unchanged."""

    def fit(self, P, y, sample_weight=None):
        self.P_ = np.array(P, copy=True)
        self.y_ = np.array(y, copy=True)
        self.sample_weight_ = None if sample_weight is None else np.array(sample_weight)
        return self

    def predict_proba(self, P):
        return np.asarray(P, dtype=float)


_FIT_LOG = []


class RecordingLogisticRegression(LogisticRegression):
    """Records the sample weights of every fit in _FIT_LOG (clones included)."""

    def __init__(self):
        super().__init__()

    def fit(self, X, y, sample_weight=None):
        _FIT_LOG.append(None if sample_weight is None else np.array(sample_weight))
        return super().fit(X, y, sample_weight=sample_weight)


def test_classifier_matches_manual_composition():
    X, y = _classification(4, 600)
    X_new, _ = _classification(4, 200, seed=1)
    cv = KFold(4, shuffle=True, random_state=0)
    clf = RecalibratedClassifier(
        GaussianNB(), UtilityPatchingRecalibrator(), cv=cv
    ).fit(X, y)
    held_out = cross_val_predict(GaussianNB(), X, y, cv=cv, method="predict_proba")
    rec = UtilityPatchingRecalibrator().fit(held_out, y)
    assert len(rec.patches_) > 0
    base = GaussianNB().fit(X, y)
    assert_array_equal(
        clf.predict_proba(X_new), rec.predict_proba(base.predict_proba(X_new))
    )
    assert_array_equal(clf.predict(X_new), np.argmax(clf.predict_proba(X_new), axis=1))
    assert_same_patches(clf.recalibrator_.patches_, rec.patches_)
    assert clf.n_features_in_ == 8


def test_frozen_estimator():
    X, y = _classification(3, 900)
    base = GaussianNB().fit(X[:300], y[:300])
    expected = UtilityPatchingRecalibrator().fit(base.predict_proba(X[300:]), y[300:])
    # the recalibrator given explicitly: "auto" (the default) may choose another
    rec = UtilityPatchingRecalibrator()
    frozen = RecalibratedClassifier(FrozenEstimator(base), rec).fit(X[300:], y[300:])
    assert frozen.estimator_.estimator is base
    for clf in (frozen,):
        assert_same_patches(clf.recalibrator_.patches_, expected.patches_)
        assert_array_equal(
            clf.predict_proba(X[:300]),
            expected.predict_proba(base.predict_proba(X[:300])),
        )
    with pytest.raises(ValueError, match="FrozenEstimator"):
        RecalibratedClassifier(GaussianNB(), cv="prefit").fit(X, y)
    with pytest.raises(ValueError, match="does not know"):
        RecalibratedClassifier(FrozenEstimator(base)).fit(X[:5], np.full(5, 7))
    with pytest.raises(ValueError, match="cv must be"):
        RecalibratedClassifier(base, cv="frozen").fit(X, y)


def test_frozen_calibration_data_missing_a_class():
    X, y = _classification(3, 900)
    base = GaussianNB().fit(X[:300], y[:300])
    keep = y[300:] != 1
    clf = RecalibratedClassifier(FrozenEstimator(base), RecordingRecalibrator())
    clf.fit(X[300:][keep], y[300:][keep])
    assert_array_equal(clf.classes_, [0, 1, 2])
    assert clf.recalibrator_.P_.shape[1] == 3
    assert set(clf.recalibrator_.y_) == {0, 2}


def test_string_labels():
    X, y = _classification(3, 600)
    names = np.array(["setosa", "versicolor", "virginica"])
    clf = RecalibratedClassifier(GaussianNB(), cv=3).fit(X, names[y])
    assert_array_equal(clf.classes_, names)
    assert set(clf.predict(X)) <= set(names)
    # the same recalibration with numeric labels: compared on a recalibrator
    # whose fit is one smooth optimisation (auto's discrete choice between
    # near-tied candidates may differ with the last bits of BLAS sums, which
    # depend on the alignment of the arrays, so it is not compared bit for bit)
    clf = RecalibratedClassifier(GaussianNB(), TemperatureScaling(), cv=3)
    clf.fit(X, names[y])
    numeric = RecalibratedClassifier(GaussianNB(), TemperatureScaling(), cv=3)
    numeric.fit(X, y)
    assert_allclose(clf.predict_proba(X), numeric.predict_proba(X), rtol=1e-9, atol=1e-12)
    assert_array_equal(clf.predict(X), names[numeric.predict(X)])
    # the recalibrator sees column indices, not labels
    recorded = RecalibratedClassifier(GaussianNB(), RecordingRecalibrator(), cv=3)
    assert_array_equal(recorded.fit(X, names[y]).recalibrator_.y_, y)


def test_custom_recalibrator_and_ties():
    X, y = _classification(2, 400)
    base = LogisticRegression().fit(X, y)
    clf = RecalibratedClassifier(FrozenEstimator(base), RecordingRecalibrator()).fit(X, y)
    assert_array_equal(clf.predict_proba(X), base.predict_proba(X))
    assert_array_equal(clf.recalibrator_.P_, base.predict_proba(X))

    class Constant(BaseEstimator):
        def fit(self, P, y):
            return self

        def predict_proba(self, P):
            return np.full((len(P), 2), 0.5)

    base10 = LogisticRegression().fit(X, y + 10)
    tied = RecalibratedClassifier(FrozenEstimator(base10), Constant()).fit(X, y + 10)
    assert_array_equal(tied.predict(X[:3]), [10, 10, 10])
    with pytest.raises(TypeError, match="recalibrator must have"):
        RecalibratedClassifier(FrozenEstimator(base), object()).fit(X, y)


def test_folds_missing_a_class_are_mapped_to_classes_order():
    X, y = _classification(3, 300)
    order = np.argsort(y, kind="stable")
    X, y = X[order], y[order]  # 100 rows of each class, in order
    # fold 1 trains on classes 0 and 1 only and predicts rows of class 2
    folds = [
        (np.arange(0, 200), np.arange(200, 300)),
        (np.arange(100, 300), np.arange(0, 100)),
        (np.r_[0:100, 200:300], np.arange(100, 200)),
    ]
    clf = RecalibratedClassifier(
        LogisticRegression(), RecordingRecalibrator(), cv=folds
    )
    with pytest.warns(RuntimeWarning, match="Number of classes in training fold"):
        clf.fit(X, y)
    P = clf.recalibrator_.P_
    expected = np.zeros((100, 3))
    expected[:, :2] = LogisticRegression().fit(X[:200], y[:200]).predict_proba(X[200:])
    assert_allclose(P[200:], expected)
    expected = np.zeros((100, 3))
    expected[:, 1:] = LogisticRegression().fit(X[100:], y[100:]).predict_proba(X[:100])
    assert_allclose(P[:100], expected)


def test_sample_weight_is_routed():
    X, y = _classification(3, 300)
    w = np.random.RandomState(0).randint(1, 4, size=300).astype(float)
    _FIT_LOG.clear()
    log = _FIT_LOG
    cv = KFold(3)
    clf = RecalibratedClassifier(
        RecordingLogisticRegression(), RecordingRecalibrator(), cv=cv
    ).fit(X, y, sample_weight=w)
    assert len(log) == 4  # three folds and the final fit
    for (train, _), fold_weights in zip(cv.split(X), log[:3]):
        assert_array_equal(fold_weights, w[train])
    assert_array_equal(log[3], w)
    assert_array_equal(clf.recalibrator_.sample_weight_, w)
    # a base estimator without sample_weight: a warning, the recalibrator still
    # gets the weights
    with pytest.warns(UserWarning, match="does not accept sample_weight"):
        clf = RecalibratedClassifier(
            KNeighborsClassifier(), RecordingRecalibrator(), cv=3
        ).fit(X, y, sample_weight=w)
    assert_array_equal(clf.recalibrator_.sample_weight_, w)

    class NoWeights(RecordingRecalibrator):
        def fit(self, P, y):
            return super().fit(P, y)

    with pytest.warns(UserWarning, match="fitted without weights"):
        RecalibratedClassifier(LogisticRegression(), NoWeights(), cv=3).fit(
            X, y, sample_weight=w
        )


def test_integer_weights_equal_repetition_for_the_classifier():
    X, y = _classification(3, 300)
    base = GaussianNB().fit(X[:100], y[:100])
    w = np.random.RandomState(1).randint(0, 3, size=200)
    rows = np.repeat(np.arange(200), w)
    weighted = RecalibratedClassifier(
        FrozenEstimator(base), UtilityPatchingRecalibrator()
    ).fit(X[100:], y[100:], w)
    plain = RecalibratedClassifier(
        FrozenEstimator(base), UtilityPatchingRecalibrator()
    ).fit(X[100:][rows], y[100:][rows])
    assert_allclose(
        weighted.predict_proba(X[:100]), plain.predict_proba(X[:100]), atol=1e-12
    )


def test_pipeline_and_grid_search():
    X, y = _classification(3, 600)
    pipe = Pipeline(
        [
            ("scale", StandardScaler()),
            (
                "clf",
                RecalibratedClassifier(
                    GaussianNB(), UtilityPatchingRecalibrator(tol=0.0), cv=3
                ),
            ),
        ]
    )
    search = GridSearchCV(
        pipe,
        {"clf__recalibrator__max_iter": [0, 3, 10]},
        cv=StratifiedKFold(3),
        scoring="neg_brier_score",
    ).fit(X, y)
    assert search.best_params_["clf__recalibrator__max_iter"] in (0, 3, 10)
    assert search.predict_proba(X).shape == (600, 3)
    fitted = search.best_estimator_.named_steps["clf"]
    assert len(fitted.recalibrator_.patches_) <= fitted.recalibrator.max_iter
    # max_iter=0 is the base estimator's probabilities exactly
    identity = clone(pipe).set_params(clf__recalibrator__max_iter=0).fit(X, y)
    Xs = StandardScaler().fit_transform(X)
    assert_allclose(
        identity.predict_proba(X), GaussianNB().fit(Xs, y).predict_proba(Xs)
    )
    # tuned directly too
    direct = GridSearchCV(
        RecalibratedClassifier(GaussianNB(), UtilityPatchingRecalibrator()),
        {"recalibrator__family": ["top-class", "comb"], "cv": [3]},
        cv=3,
    ).fit(X, y)
    assert direct.best_params_["recalibrator__family"] in ("top-class", "comb")


def test_classifier_recalibrates_gaussian_nb():
    X, y = _classification(5, 6000, seed=2)
    X_test, y_test = X[4000:], y[4000:]
    clf = RecalibratedClassifier(GaussianNB()).fit(X[:4000], y[:4000])
    base = clf.estimator_.predict_proba(X_test)
    before = utility_calibration_error(y_test, base, "comb")
    after = utility_calibration_error(y_test, clf.predict_proba(X_test), "comb")
    assert after < 0.6 * before
    assert _brier(clf.predict_proba(X_test), y_test) < _brier(base, y_test)


def test_classifier_errors():
    X, y = _classification(3, 60)
    with pytest.raises(ValueError, match="Unknown label type"):
        RecalibratedClassifier().fit(X, np.linspace(0, 1, 60))
    with pytest.raises(NotFittedError):
        RecalibratedClassifier().predict(X)
    with pytest.raises(ValueError, match="sample_weight has negative"):
        RecalibratedClassifier().fit(X, y, sample_weight=-np.ones(60))


# The probability transformer meets the checks through an adapter that turns
# their arbitrary features into probability rows (tests/adapters.py): every
# check runs, and none is expected to fail.
@parametrize_with_checks(
    [
        ProbabilityRows(UtilityPatchingRecalibrator()),
        # random_state fixes the folds of the warm start's cross-fitting
        ProbabilityRows(
            UtilityPatchingRecalibrator("top-class", init="temperature", random_state=0)
        ),
        # "auto" with two cheap candidates (the full table is tested elsewhere)
        RecalibratedClassifier(
            recalibrator=AutoRecalibrator(candidates=["temperature"], random_state=0),
            cv=3,
        ),
        RecalibratedClassifier(
            GaussianNB(), UtilityPatchingRecalibrator("top-class"), cv=3
        ),
        RecalibratedClassifier(
            GaussianNB(),
            [AutoRecalibrator(candidates=["temperature"], random_state=0),
             UtilityPatchingRecalibrator("top-class")],
            cv=3,
        ),
    ],
    expected_failed_checks=lambda est: (
        {
            name: "the chain cross-fits its first step: it splits rows into folds, a row "
            "of weight 2 is one row of one fold, two repeated rows may fall in "
            "two folds, so the out-of-fold fits differ"
            for name in (
                "check_sample_weight_equivalence_on_dense_data",
                "check_sample_weight_equivalence_on_sparse_data",
            )
        }
        if isinstance(getattr(est, "recalibrator", None), list)
        else {
            name: "auto mixes its output with the uniform at 1 / (n + 1) for Kish's "
            "effective number of rows n = (sum w)^2 / sum w^2, unchanged when all "
            "weights are scaled: weight k counts less than k repeated rows (with n "
            "counted as copies they agree: "
            "test_auto.py::test_integer_weights_equal_repetition_given_the_same_folds)"
            for name in (
                "check_sample_weight_equivalence_on_dense_data",
                "check_sample_weight_equivalence_on_sparse_data",
            )
        }
        if isinstance(getattr(est, "recalibrator", None), AutoRecalibrator)
        else {}
    ),
)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        check(estimator)


def test_auto_in_grid_search():
    X, y = _classification(3, 600)
    search = GridSearchCV(
        RecalibratedClassifier(GaussianNB(), cv=3),
        {"recalibrator": ["auto", UtilityPatchingRecalibrator()]},
        cv=3,
        scoring="neg_brier_score",
    ).fit(X, y)
    assert search.best_estimator_.predict_proba(X).shape == (600, 3)


def test_prefit_is_removed():
    # nothing was released with cv="prefit": FrozenEstimator is the one way
    X, y = _classification(3, 400)
    base = GaussianNB().fit(X[:200], y[:200])
    with pytest.raises(ValueError, match="FrozenEstimator"):
        RecalibratedClassifier(
            base, UtilityPatchingRecalibrator(), cv="prefit"
        ).fit(X[200:], y[200:])
    frozen = RecalibratedClassifier(
        FrozenEstimator(base), UtilityPatchingRecalibrator()
    ).fit(X[200:], y[200:])
    expected = UtilityPatchingRecalibrator().fit(base.predict_proba(X[200:]), y[200:])
    assert_array_equal(
        frozen.predict_proba(X), expected.predict_proba(base.predict_proba(X))
    )


class _NoProba(BaseEstimator):
    _estimator_type = "classifier"

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[0])


def test_estimator_without_predict_proba_is_named():
    X, y = _classification(3, 100)
    with pytest.raises(TypeError, match="estimator must be a classifier with "
                       "predict_proba; _NoProba has no predict_proba"):
        RecalibratedClassifier(_NoProba()).fit(X, y)


def test_sample_weight_with_metadata_routing():
    import sklearn

    X, y = _classification(3, 400)
    w = np.random.RandomState(0).randint(1, 3, size=400).astype(float)
    rec = UtilityPatchingRecalibrator()
    plain = RecalibratedClassifier(LogisticRegression(), rec, cv=3).fit(X, y, w)
    with sklearn.config_context(enable_metadata_routing=True):
        routed = RecalibratedClassifier(
            LogisticRegression().set_fit_request(sample_weight=True), rec, cv=3
        ).fit(X, y, sample_weight=w)
    assert_allclose(routed.predict_proba(X), plain.predict_proba(X))


# --- moved from tests/test_auto_recalibrator.py --------------------------------


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


# --- "auto" by default, None is "auto", a list is a chain ------------------------


def test_default_and_none_are_auto():
    X, y = _classification(3, 300)
    for recalibrator in ("auto", None):
        clf = RecalibratedClassifier(GaussianNB(), recalibrator, cv=3).fit(X, y)
        assert isinstance(clf.recalibrator_, AutoRecalibrator)
        assert clf.recalibrator_.chosen_ in clf.recalibrator_.scores_


def test_chain_fits_later_steps_on_cross_fitted_outputs():
    # reference: the chain written out by hand on the held-out probabilities
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from sklearn.utils import check_random_state

    X, y = _classification(3, 600)
    first = AutoRecalibrator(candidates=["temperature"], random_state=0)
    second = UtilityPatchingRecalibrator("top-class")
    clf = RecalibratedClassifier(GaussianNB(), [first, second], cv=3).fit(X, y)
    held_out = cross_val_predict(
        GaussianNB(), X, y, cv=StratifiedKFold(3), method="predict_proba"
    )
    labels = np.arange(3)
    from skcal.recalibration._common import draw_seed

    # the classifier's random_state (0) gives the chain its seed; the chain
    # draws the seed of its steps, then its folds
    rng = check_random_state(draw_seed(0))
    draw_seed(rng)
    start = np.empty_like(held_out)
    for train, test in StratifiedKFold(5, shuffle=True, random_state=rng).split(
        held_out, y
    ):
        fold = clone(first).set_params(labels=labels).fit(held_out[train], y[train])
        start[test] = fold.predict_proba(held_out[test])
    step1 = clone(first).set_params(labels=labels).fit(held_out, y)
    step2 = clone(second).set_params(labels=labels).fit(start, y)
    base = GaussianNB().fit(X, y).predict_proba(X)
    assert_allclose(
        clf.predict_proba(X), step2.predict_proba(step1.predict_proba(base)),
        rtol=1e-10, atol=1e-12,
    )
    with pytest.raises(ValueError, match="empty list"):
        RecalibratedClassifier(GaussianNB(), []).fit(X, y)
    with pytest.raises(TypeError, match="every recalibrator of the list"):
        RecalibratedClassifier(GaussianNB(), [object()]).fit(X, y)


def test_integer_random_state_makes_the_recalibration_reproducible():
    from skcal.recalibration import DirichletCalibration, HistogramBinning

    X, y = _classification(3, 500)
    X_new, _ = _classification(3, 100, seed=1)
    for recalibrator in (
        "auto",
        [HistogramBinning(), DirichletCalibration()],
        DirichletCalibration(),
    ):
        fits = []
        for global_seed in (1, 2):
            np.random.seed(global_seed)  # the global state must not matter
            clf = RecalibratedClassifier(
                GaussianNB(), recalibrator, cv=3, random_state=5
            ).fit(X, y)
            fits.append(clf.predict_proba(X_new))
        assert_array_equal(fits[0], fits[1])
    # the default (0) is reproducible as well; None draws from the global state
    assert RecalibratedClassifier().get_params()["random_state"] == 0
    clf = RecalibratedClassifier(GaussianNB(), DirichletCalibration(), cv=3).fit(X, y)
    assert isinstance(clf.recalibrator_.random_state, int)
    assert clf.recalibrator.random_state is None  # the caller's object untouched
