"""OnlineRecalibratedClassifier: one forecaster per bucket of a deployed score."""

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB
from sklearn.utils import check_random_state
from sklearn.utils.estimator_checks import parametrize_with_checks

from skcal import calibration_decision_loss
from skcal.online import OnlineMSRForecaster, OnlineRecalibratedClassifier


@parametrize_with_checks(
    [
        OnlineRecalibratedClassifier(n_buckets=10, cv=2),
        OnlineRecalibratedClassifier(GaussianNB(), cv=2),
    ]
)
def test_sklearn_compatible(estimator, check):
    # Binary only (tag multi_class=False: the multiclass checks become the
    # check that multiclass y is refused); no expected failures.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        check(estimator)


def _drifted_stream(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-X[:, 0]))).astype(int)
    model = LogisticRegression().fit(X[:500], y[:500])
    model.intercept_ += 1.5  # the deployed model now over-predicts
    return X[500:], y[500:], model


def test_recalibrator_replays_one_forecaster_per_bucket():
    # The twin: each bucket's outcomes, in stream order, played by a plain
    # OnlineMSRForecaster seeded as the recalibrator seeds it.
    X, y, model = _drifted_stream(3000)
    labels = np.where(y == 1, "yes", "no")
    model_s = LogisticRegression().fit(X[:300], labels[:300])
    model_s.intercept_ += 1.5
    online = OnlineRecalibratedClassifier(
        FrozenEstimator(model_s), n_bins=7, random_state=5
    )
    for start in range(0, 2000, 333):  # uneven batches
        stop = min(start + 333, 2000)
        online.partial_fit(X[start:stop], labels[start:stop])
    assert online.n_samples_seen_ == 2000
    assert_array_equal(online.classes_, ["no", "yes"])
    scores = model_s.predict_proba(X[:2000])[:, 1]
    bins = np.minimum((scores * 7).astype(int), 6)
    seeds = check_random_state(5).randint(np.iinfo(np.int32).max, size=7)
    nxt = []
    for k in range(7):
        twin = OnlineMSRForecaster(random_state=int(seeds[k]))
        p, _ = twin.run(y[:2000][bins == k])
        assert_array_equal(online.forecasters_[k].forecasts_, p)
        nxt.append(twin.predict_mean())
    mean = online.predict_mean(X[2000:])
    s_new = model_s.predict_proba(X[2000:])[:, 1]
    assert_array_equal(mean[:, 1], np.array(nxt)[np.minimum((s_new * 7).astype(int), 6)])
    proba = online.predict_proba(X[2000:])
    assert_allclose(proba.sum(axis=1), 1.0)
    # served: each row's bucket mean rounded to a neighbouring grid point
    m = np.array([f.n_buckets_ for f in online.forecasters_])[
        np.minimum((s_new * 7).astype(int), 6)]
    assert np.all(np.abs(proba[:, 1] - mean[:, 1]) < 1.0 / m + 1e-12)
    assert_allclose(proba[:, 1] * m, np.round(proba[:, 1] * m), atol=1e-9)
    assert set(online.predict(X[2000:])) <= {"no", "yes"}
    # one call over the whole stream leaves the same state as the batches
    whole = OnlineRecalibratedClassifier(FrozenEstimator(model_s), n_bins=7, random_state=5)
    whole.partial_fit(X[:2000], labels[:2000])
    assert_array_equal(whole.predict_mean(X[2000:]), mean)
    # serving does not move the state
    assert_array_equal(online.predict_mean(X[2000:]), mean)


def test_recalibrator_corrects_a_drifted_model():
    # The forecasts shown before each batch's outcomes arrive have a far
    # smaller calibration decision loss than the drifted model's scores.
    X, y, model = _drifted_stream(8500)
    online = OnlineRecalibratedClassifier(FrozenEstimator(model), random_state=0)
    online.partial_fit(X[:500], y[:500])
    shown = []
    for start in range(500, 8000, 500):
        shown.append(online.predict_proba(X[start : start + 500])[:, 1])
        online.partial_fit(X[start : start + 500], y[start : start + 500])
    shown = np.concatenate(shown)
    base = model.predict_proba(X[500:8000])[:, 1]
    assert calibration_decision_loss(y[500:8000], base) > 0.4
    assert calibration_decision_loss(y[500:8000], shown) < 0.12


def test_recalibrator_fit_restarts_and_errors():
    X, y, model = _drifted_stream(900)
    clf = OnlineRecalibratedClassifier(cv=3, random_state=0).fit(X, y)
    first = clf.predict_proba(X)
    clf.partial_fit(X[:100], y[:100])
    assert clf.n_samples_seen_ == 500
    clf.fit(X, y)  # starts over
    assert clf.n_samples_seen_ == 400
    assert_array_equal(clf.predict_proba(X), first)
    with pytest.raises(ValueError, match="not in classes_"):
        clf.partial_fit(X[:3], [0, 1, 2])
    with pytest.raises(ValueError, match="Only binary classification"):
        OnlineRecalibratedClassifier().fit(X[:30], np.arange(30) % 3)
    with pytest.raises(ValueError, match="one class"):
        OnlineRecalibratedClassifier().partial_fit(X[:30], np.ones(30))
    with pytest.raises(ValueError, match="not in classes"):
        OnlineRecalibratedClassifier().partial_fit(X[:30], np.ones(30), classes=[0, 2])
    two = OnlineRecalibratedClassifier(cv=2).partial_fit(
        X[:30], np.r_[np.ones(28), 0, 0], classes=[0, 1]
    )
    assert_array_equal(two.classes_, [0, 1])
    for params, name in [
        ({"n_bins": 0}, "n_bins"),
        ({"n_bins": 2.5}, "n_bins"),
        ({"horizon": 1}, "horizon"),
        ({"n_buckets": 1}, "n_buckets"),
    ]:
        with pytest.raises(ValueError, match=name):
            OnlineRecalibratedClassifier(FrozenEstimator(model), **params).fit(X, y)
    three = GaussianNB().fit(X[:30], np.arange(30) % 3)
    with pytest.raises(ValueError, match="Only binary classification .* 3 classes"):
        OnlineRecalibratedClassifier(FrozenEstimator(three)).partial_fit(X[:3], [0, 1, 2])
    from sklearn.svm import LinearSVC

    with pytest.raises(TypeError, match="predict_proba"):
        OnlineRecalibratedClassifier(LinearSVC()).fit(X, y)


def test_served_draw_is_not_the_played_one():
    # An outcome that reacts to the forecast it is served (1 exactly when it
    # is below 1/2). Before, predict_proba showed the forecaster's own draw,
    # and the forecasts it played reached a CDL near 1; now the served draw
    # uses separate coins, the played forecasts keep the guarantee (their
    # outcomes do not depend on their own draws), and what was served is
    # exploited, as documented.
    rng = np.random.default_rng(13)
    X = rng.normal(size=(1500, 2))
    model = LogisticRegression().fit(X[:200], (X[:200, 0] > 0).astype(int))
    online = OnlineRecalibratedClassifier(FrozenEstimator(model), n_bins=1,
                                          random_state=0)
    online.partial_fit(X[:2], [0, 1])
    served, outcomes = [], []
    for i in range(2, 1500):
        p = online.predict_proba(X[i : i + 1])[0, 1]
        y = int(p < 0.5)
        online.partial_fit(X[i : i + 1], [y])
        served.append(p)
        outcomes.append(y)
    own = online.forecasters_[0]
    assert calibration_decision_loss(own.outcomes_, own.forecasts_) < 0.2
    assert calibration_decision_loss(outcomes, served) > 0.5


def test_prefit_is_not_a_cv():
    X, y, _ = _drifted_stream(700)
    with pytest.raises(ValueError, match="FrozenEstimator"):
        OnlineRecalibratedClassifier(LogisticRegression(), cv="prefit").fit(X, y)
