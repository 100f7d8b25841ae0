"""AutoRecalibrator's stacking: the out-of-fold-optimal mixture of candidates."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.metrics import log_loss

from skcal.recalibration import AutoRecalibrator
from skcal.recalibration._auto import _mix, _power, stack
from skcal.recalibration._top_label import apply_top_label


def _objective(kind, Qs, y, w, v):
    Q = np.tensordot(v, Qs, axes=1)
    rows = np.arange(y.shape[0])
    if kind == "log-loss":
        return -float(np.dot(w, np.log(Q[rows, y])) / w.sum())
    E = np.zeros_like(Q)
    E[rows, y] = 1.0
    return float(np.dot(w, ((Q - E) ** 2).sum(axis=1)) / w.sum())


def _random_case(rng):
    m = int(rng.integers(1, 5))
    n = int(rng.integers(1, 40))
    K = int(rng.integers(2, 4))
    Qs = rng.dirichlet(np.full(K, rng.choice([0.3, 1.0, 5.0])), size=(m, n))
    Qs = 0.98 * Qs + 0.02 / K  # out-of-fold predictions are mixed: no zeros
    if m > 1 and rng.uniform() < 0.3:
        Qs[-1] = Qs[0]  # a candidate equal to a simpler one
    y = rng.integers(0, K, size=n)
    w = rng.choice([1.0, 2.0, 0.5], size=n) if rng.uniform() < 0.5 else np.ones(n)
    return Qs, y, w


@pytest.mark.parametrize("kind", ["log-loss", "Brier score"])
def test_stacking_weights_beat_every_point_of_a_dense_simplex_sample(kind):
    # slow twin: the objective at every vertex and at 4000 random points of
    # the simplex; the solution is at least as good as all of them (up to
    # the pruning of weights below 1e-3, which moves the objective by little)
    rng = np.random.default_rng(0)
    for _ in range(60):
        Qs, y, w = _random_case(rng)
        m = Qs.shape[0]
        v = stack(kind, Qs, y, w)
        assert v.shape == (m,) and np.all(v >= 0) and np.isclose(v.sum(), 1.0)
        got = _objective(kind, Qs, y, w, v)
        points = np.vstack([np.eye(m), rng.dirichlet(np.ones(m), size=4000)])
        best = min(_objective(kind, Qs, y, w, p) for p in points)
        assert got <= best + 1e-3 * abs(best) + 1e-9
        if m > 1 and np.array_equal(Qs[-1], Qs[0]):
            assert v[-1] == 0.0  # ties to the simplest


def test_complementary_candidates_are_mixed_and_a_dominated_one_gets_nothing():
    rng = np.random.default_rng(1)
    n = 400
    y = rng.integers(0, 2, size=n)
    half = np.arange(n) < n // 2
    good = np.where(y[:, None] == np.arange(2), 0.8, 0.2)
    bad = np.where(y[:, None] == np.arange(2), 0.35, 0.65)
    A = np.where(half[:, None], good, 0.5)  # informative on the first half only
    B = np.where(half[:, None], 0.5, good)  # on the second half only
    v = stack("log-loss", np.stack([A, B, bad]), y, np.ones(n))
    assert v[0] > 0.3 and v[1] > 0.3 and v[2] == 0.0


def _overconfident(n, seed, K=3):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, K))
    truth = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    y = (truth.cumsum(axis=1) > rng.uniform(size=(n, 1))).argmax(axis=1)
    P = np.exp(2.5 * logits)
    return P / P.sum(axis=1, keepdims=True), y


def test_the_fitted_mixture_is_what_predict_returns_and_scores_no_worse():
    P, y = _overconfident(1200, 2)
    auto = AutoRecalibrator(
        candidates=["temperature", "isotonic", "spline"], random_state=0
    ).fit(P, y)
    assert set(auto.weights_) == set(auto.recalibrators_)
    assert np.isclose(sum(auto.weights_.values()), 1.0)
    assert auto.chosen_ == max(auto.weights_, key=auto.weights_.get)
    assert auto.recalibrator_ is auto.recalibrators_[auto.chosen_]
    expected = sum(
        w * auto.recalibrators_[name].predict_proba(P[:50])
        for name, w in auto.weights_.items()
    )
    expected = _mix(_power(expected, auto.tau_), auto.mixture_)
    if auto.top_label_map_ is not None:  # the map of the confidence (test_auto_top_label)
        expected = _mix(apply_top_label(expected, auto.top_label_map_), auto.mixture_)
    assert_allclose(auto.predict_proba(P[:50]), expected, rtol=1e-12)
    best_single = max(entry["score"] for entry in auto.scores_.values())
    if len(auto.weights_) > 1:
        assert auto.stack_score_ >= best_single
        assert "<- weight" in auto.summary()
    else:
        assert auto.stack_score_ is None


def test_ensemble_false_is_the_single_best_candidate():
    P, y = _overconfident(900, 3)
    auto = AutoRecalibrator(random_state=0, ensemble=False).fit(P, y)
    assert auto.weights_ == {auto.chosen_: 1.0}
    assert auto.stack_score_ is None
    best = max(auto.scores_, key=lambda name: auto.scores_[name]["score"])
    assert auto.scores_[auto.chosen_]["score"] == auto.scores_[best]["score"]
    assert_allclose(
        auto.predict_proba(P),
        _mix(auto.recalibrator_.predict_proba(P), auto.mixture_),
        rtol=0,
        atol=0,
    )
    assert "<- chosen" in auto.summary()


def test_a_score_that_is_not_a_row_mean_chooses_one_candidate():
    P, y = _overconfident(600, 4)
    auto = AutoRecalibrator(
        candidates=["temperature", "isotonic"],
        selection_scoring="neg_smooth_calibration_error",
        random_state=0,
    ).fit(P, y)
    assert len(auto.weights_) == 1 and auto.stack_score_ is None


def test_stacking_helps_out_of_sample_on_average_where_candidates_are_close():
    # 6 data sets where no candidate dominates: the mixture's held-out
    # log-loss is on average no worse than the single best candidate's
    diffs = []
    for seed in range(6):
        P, y = _overconfident(2400, 10 + seed)
        fit, test = slice(0, 1200), slice(1200, None)
        single = AutoRecalibrator(random_state=0, ensemble=False).fit(P[fit], y[fit])
        mixed = AutoRecalibrator(random_state=0).fit(P[fit], y[fit])
        diffs.append(
            log_loss(y[test], mixed.predict_proba(P[test]), labels=[0, 1, 2])
            - log_loss(y[test], single.predict_proba(P[test]), labels=[0, 1, 2])
        )
    assert np.mean(diffs) <= 0.0
