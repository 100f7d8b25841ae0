"""The top-label map of AutoRecalibrator (``top_label=True``)."""

import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone

from skcal.recalibration import AutoRecalibrator, BetaCalibration
from skcal.recalibration._top_label import apply_top_label, fit_top_label


def _random_rows(rng, n, K):
    """Probability rows with ties, exact zeros and rows of one certain class."""
    Q = rng.dirichlet(np.full(K, 0.7), size=n)
    Q[rng.uniform(size=n) < 0.1, 0] = 0.0
    ties = rng.uniform(size=n) < 0.1
    Q[ties, 1] = Q[ties].max(axis=1)
    certain = rng.uniform(size=n) < 0.1
    Q[certain] = 0.0
    Q[certain, rng.integers(0, K, size=int(certain.sum()))] = 1.0
    return Q / Q.sum(axis=1, keepdims=True)


def _fitted_map(rng, a, b, c):
    """A BetaCalibration of two classes with the given coefficients."""
    p = rng.uniform(0.05, 0.95, 300)
    model = BetaCalibration(labels=[0, 1]).fit(
        np.column_stack([1 - p, p]), (rng.uniform(size=300) < p).astype(int))
    model.a_, model.b_, model.c_ = np.array([a]), np.array([b]), np.array([c])
    return model


def _reference(Q, model):
    """apply_top_label row by row, as its docstring says."""
    out = np.empty_like(Q)
    K = Q.shape[1]
    for i, row in enumerate(Q):
        t = int(np.argmax(row))
        c = row[t]
        g = float(model.predict_proba(np.array([[1 - c, c]]))[0, 1])
        others = [k for k in range(K) if k != t]
        rest = sum(row[k] for k in others)
        # the top class keeps its place: at least where the runner-up ties it
        runner = max(row[k] for k in others)
        g = max(g, runner / (rest + runner) if rest > 0 else 1 / K)
        for k in others:
            out[i, k] = (1 - g) / (K - 1) if rest == 0 else row[k] * (1 - g) / rest
        out[i, t] = g
    return out


def test_apply_matches_the_reference_and_keeps_the_input():
    rng = np.random.default_rng(0)
    for _ in range(60):
        K, n = int(rng.integers(2, 6)), int(rng.integers(1, 40))
        Q = _random_rows(rng, n, K)
        model = _fitted_map(rng, *rng.uniform(0.2, 3, 2), rng.normal())
        before = Q.copy()
        out = apply_top_label(Q, model)
        assert_array_equal(Q, before)
        assert_allclose(out, _reference(Q, model), rtol=1e-12, atol=1e-15)
        assert_allclose(out.sum(axis=1), 1.0, rtol=0, atol=1e-12)
        assert np.all(out >= 0)
        # the top class stays a largest one (ties within rounding allowed)
        rows = np.arange(n)
        top = Q.argmax(axis=1)
        assert np.all(out[rows, top] >= out.max(axis=1) * (1 - 1e-12))
        # the other classes keep their order
        for i in range(n):
            others = np.delete(np.arange(K), top[i])
            assert np.all(np.diff(out[i, others][np.argsort(Q[i, others], kind="stable")])
                          >= -1e-15)


def test_a_map_that_would_demote_the_top_class_stops_at_the_tie():
    rng = np.random.default_rng(3)
    low = _fitted_map(rng, 1.0, 1.0, -6.0)  # g(c) far below c
    Q = np.array([[0.5, 0.3, 0.2], [0.1, 0.2, 0.7], [0.0, 1.0, 0.0]])
    out = apply_top_label(Q, low)
    assert_allclose(out[0], [0.375, 0.375, 0.25])
    # c = 0.7, runner-up 0.2 of the others' 0.3: the tie is at 0.2 / 0.5
    assert_allclose(out[1], [0.2, 0.4, 0.4])
    # a certain row: g(1) is near 1 (above the tie 1 / 3), the rest evenly
    assert_allclose(out[2], [0.0, 1.0, 0.0], atol=1e-9)
    assert out[2, 0] == out[2, 2] > 0


def test_the_log_loss_changes_by_the_binary_log_loss_of_the_top_class():
    rng = np.random.default_rng(1)
    for _ in range(30):
        K, n = int(rng.integers(2, 7)), 200
        Q = rng.dirichlet(np.ones(K), size=n)
        y = rng.integers(0, K, size=n)
        model = _fitted_map(rng, *rng.uniform(0.2, 3, 2), rng.normal())
        out = apply_top_label(Q, model)
        rows = np.arange(n)
        top = Q.argmax(axis=1)
        c, g = Q[rows, top], out[rows, top]
        right = top == y
        full = -np.log(out[rows, y]) + np.log(Q[rows, y])
        binary = np.where(right, -np.log(g) + np.log(c), -np.log1p(-g) + np.log1p(-c))
        assert_allclose(full, binary, rtol=1e-9, atol=1e-12)


def test_no_map_from_one_outcome():
    rng = np.random.default_rng(2)
    Q = rng.dirichlet(np.ones(3), size=50)
    top = Q.argmax(axis=1)
    w = np.ones(50)
    assert fit_top_label(Q, top, w) is None  # always right
    assert fit_top_label(Q, (top + 1) % 3, w) is None  # never right
    y = top.copy()
    y[0] = (top[0] + 1) % 3
    assert fit_top_label(Q, y, w) is not None
    w[0] = 0.0  # the only wrong row has no weight
    assert fit_top_label(Q, y, w) is None


def _distorted(n, K, seed):
    """Rows whose confidence ``c`` is right with probability ``c ** 3``.

    The other classes are drawn in proportion to their probabilities: a
    miscalibration of the confidence alone, which no single temperature
    repairs (it would have to move confident rows and uncertain rows apart).
    """
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.full(K, 0.5), size=n)
    rows = np.arange(n)
    top = P.argmax(axis=1)
    c = P[rows, top]
    right = rng.uniform(size=n) < c ** 3
    y = np.empty(n, dtype=int)
    y[right] = top[right]
    for i in np.flatnonzero(~right):
        rest = P[i].copy()
        rest[top[i]] = 0.0
        y[i] = rng.choice(K, p=rest / rest.sum())
    return P, y


def _log_loss(Q, y):
    return float(np.mean(-np.log(Q[np.arange(y.shape[0]), y])))


def test_auto_recalibrates_a_miscalibrated_confidence():
    P, y = _distorted(3000, 4, 0)
    P_new, y_new = _distorted(20000, 4, 1)
    kw = dict(candidates=["temperature"], random_state=0)
    with_map = AutoRecalibrator(**kw).fit(P, y)
    without = AutoRecalibrator(top_label=False, **kw).fit(P, y)
    assert with_map.top_label_map_ is not None
    assert without.top_label_map_ is None and without.top_label_score_ is None
    best = max(entry["score"] for entry in with_map.scores_.values())
    assert with_map.top_label_score_ > best
    # on new rows of the same law: better log-loss and a calibrated confidence
    Q, R = with_map.predict_proba(P_new), without.predict_proba(P_new)
    assert _log_loss(Q, y_new) < _log_loss(R, y_new) - 0.01
    def band_errors(Q):
        conf = Q.max(axis=1)
        right = Q.argmax(axis=1) == y_new
        bands = [(conf >= lo) & (conf < hi) for lo, hi in [(0.3, 0.5), (0.5, 0.7), (0.7, 1)]]
        return np.array([abs(right[b].mean() - conf[b].mean()) for b in bands])

    # c ** 3 is not a beta map: less than half the error and below 0.05
    # (0.06 to 0.24 without the map in these bands)
    assert np.all(band_errors(Q) < np.minimum(0.5 * band_errors(R), 0.05))
    assert "top-label map" in with_map.summary()
    assert "top-label map" not in without.summary()


def test_no_map_is_kept_unless_it_scores_better_out_of_fold():
    # calibrated rows: whatever the map does, it is kept only with a better
    # cross-fitted score, and new rows of the same law score about the same
    rng = np.random.default_rng(4)
    n, K = 2000, 3
    P = rng.dirichlet(np.ones(K), size=n)
    y = (P.cumsum(axis=1) > rng.uniform(size=(n, 1))).argmax(axis=1)
    P_new = rng.dirichlet(np.ones(K), size=20000)
    y_new = (P_new.cumsum(axis=1) > rng.uniform(size=(20000, 1))).argmax(axis=1)
    for seed in range(3):
        auto = AutoRecalibrator(candidates=["temperature", "vector"], random_state=seed)
        auto.fit(P, y)
        if auto.top_label_map_ is not None:
            stack = auto.stack_score_
            if stack is None:
                stack = auto.scores_[auto.chosen_]["score"]
            assert auto.top_label_score_ > stack
        off = clone(auto).set_params(top_label=False).fit(P, y)
        assert abs(_log_loss(auto.predict_proba(P_new), y_new)
                   - _log_loss(off.predict_proba(P_new), y_new)) < 0.005


def test_top_label_false_is_the_output_without_the_map():
    P, y = _distorted(1500, 3, 5)
    auto = AutoRecalibrator(candidates=["temperature", "isotonic"], random_state=0,
                            top_label=False).fit(P, y)
    from skcal.recalibration._auto import _mix, _power
    Q = sum(w * auto.recalibrators_[n].predict_proba(P) for n, w in auto.weights_.items())
    assert_allclose(auto.predict_proba(P), _mix(_power(Q, auto.tau_), auto.mixture_),
                    rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("scoring", ["neg_log_loss", "neg_brier_score"])
def test_the_floor_and_the_sums_hold_with_the_map(scoring):
    P, y = _distorted(1500, 5, 6)
    P = P.copy()
    P[:20] = np.eye(5)[P[:20].argmax(axis=1)]  # rows of one certain class
    auto = AutoRecalibrator(selection_scoring=scoring, candidates=["temperature"],
                            random_state=0).fit(P, y)
    assert auto.top_label_map_ is not None
    Q = auto.predict_proba(P)
    assert_allclose(Q.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert Q.min() >= auto.mixture_ / 5 * (1 - 1e-12)
    again = pickle.loads(pickle.dumps(auto))
    assert_array_equal(again.predict_proba(P), Q)


def test_weights_enter_the_map():
    P, y = _distorted(1500, 3, 7)
    w = np.random.default_rng(8).integers(0, 3, size=1500).astype(float)
    a = AutoRecalibrator(candidates=["temperature"], random_state=0).fit(P, y, sample_weight=w)
    kept = w > 0
    b = AutoRecalibrator(candidates=["temperature"], random_state=0).fit(P[kept], y[kept],
                                                                          sample_weight=w[kept])
    # rows of weight 0 are dropped first: the same fit
    assert_allclose(a.predict_proba(P), b.predict_proba(P), rtol=1e-12, atol=1e-15)
    c = AutoRecalibrator(candidates=["temperature"], random_state=0).fit(P[kept], y[kept])
    assert not np.allclose(a.top_label_map_.a_, c.top_label_map_.a_)


def test_the_map_is_fitted_to_smoothed_targets_of_effective_counts():
    P, y = _distorted(800, 3, 9)
    w = np.random.default_rng(10).uniform(0.5, 2.0, size=800)
    a, b = fit_top_label(P, y, w), fit_top_label(P, y, 7.0 * w)
    # Kish's counts do not change when every weight is scaled
    assert_allclose([a.a_, a.b_, a.c_], [b.a_, b.b_, b.c_], rtol=1e-6, atol=1e-9)
    # three mistakes among 300 confident rows, at the three lowest
    # confidences: fitted to them as certain outcomes, the map separates
    # them (coefficients of several hundred: confidences of 1 - 1e-16 and
    # probabilities of 1e-26 for the top class of the wrong rows); the
    # smoothed targets, (297 + 1) / (297 + 2) and 1 / (3 + 2), keep it to
    # what 3 mistakes support
    rng = np.random.default_rng(11)
    Q = rng.dirichlet([20.0, 1.0, 1.0], size=300)
    c = Q.max(axis=1)
    y = np.zeros(300, dtype=int)
    low = np.argsort(c)[:3]
    y[low] = 1
    model = fit_top_label(Q, y, np.ones(300))
    g = model.predict_proba(np.column_stack([1 - c, c]))[:, 1]
    assert 1 - g.max() > 1e-5
    assert g[low].min() > 0.1
