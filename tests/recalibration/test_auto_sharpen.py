"""AutoRecalibrator(sharpen=True): the stacked pool raised to an out-of-fold power tau."""

import pickle

import numpy as np
from numpy.testing import assert_allclose
from sklearn.base import clone

from skcal.recalibration import AutoRecalibrator
from skcal.recalibration._auto import (
    _fit_tau,
    _mix,
    _power,
    _row_losses,
    _sharpness_bound,
    _target_losses,
)
from skcal.recalibration._common import smoothed_targets as _smoothed_targets


def _power_reference(Q, tau):
    """``q_k^tau / sum_j q_j^tau`` row by row, in plain Python floats."""
    out = np.empty_like(Q)
    for i, row in enumerate(Q):
        powered = [float(q) ** tau if q > 0 else 0.0 for q in row]
        total = sum(powered)
        out[i] = [p / total for p in powered]
    return out


def _classes(y, R):
    """One-hot target rows of the classes ``y`` (the score against the observed classes)."""
    return np.eye(R.shape[1])[y]


def _score_reference(kind, R, a, y, w, tau):
    """Weighted mean row score of ``mix(power(R, tau), a)``, slowly."""
    S = _power_reference(R, tau)
    K = R.shape[1]
    total = 0.0
    for i in range(R.shape[0]):
        s = (1.0 - a[i]) * S[i] + a[i] / K
        if kind == "log-loss":
            total += w[i] * -np.log(s[y[i]])
        else:
            e = np.zeros(K)
            e[y[i]] = 1.0
            total += w[i] * float(((s - e) ** 2).sum())
    return total / w.sum()


def _random_pool(rng):
    n = int(rng.integers(1, 30))
    K = int(rng.integers(2, 5))
    R = rng.dirichlet(np.full(K, rng.choice([0.2, 1.0, 5.0])), size=n)
    if rng.uniform() < 0.3:  # exact zeros and ones (p in {0, 1})
        R[: max(1, n // 3)] = np.eye(K)[rng.integers(0, K, size=max(1, n // 3))]
    if rng.uniform() < 0.2:  # ties: repeated rows
        R[n // 2:] = R[0]
    y = rng.integers(0, K, size=n) if rng.uniform() < 0.8 else np.zeros(n, dtype=int)
    w = rng.choice([0.5, 1.0, 3.0], size=n) if rng.uniform() < 0.5 else np.ones(n)
    a = rng.choice([1e-3, 0.02, 0.1], size=n)
    return R, a, y, w


def test_power_matches_its_slow_twin_and_keeps_rows_summing_to_one():
    rng = np.random.default_rng(0)
    for _ in range(300):
        R, _, _, _ = _random_pool(rng)
        tau = float(np.exp(rng.uniform(-5.0, 5.0)))
        got = _power(R, tau)
        assert_allclose(got, _power_reference(R, tau), rtol=1e-10, atol=1e-300)
        assert_allclose(got.sum(axis=1), 1.0, rtol=0, atol=1e-12)
        assert np.all(got[R == 0] == 0)  # an exact zero stays zero
    R, _, _, _ = _random_pool(rng)
    R0 = R.copy()
    assert _power(R, 1.0) is R  # tau = 1: no transform
    _power(R, 3.0)
    assert np.array_equal(R, R0)  # the input is not mutated
    # a large power cannot underflow a row to all zeros
    tiny = np.array([[1e-200, 2e-200, 1.0 - 3e-200], [0.5, 0.25, 0.25]])
    assert np.all(np.isfinite(_power(tiny, 100.0)))


def test_fitted_tau_beats_a_dense_grid_of_powers():
    # slow twin: the score at 2001 values of log tau over the search interval
    # and at tau = 1; the fitted tau is at least as good as all of them
    rng = np.random.default_rng(1)
    grid = np.exp(np.linspace(-5.0, 5.0, 2001))
    for case in range(200):
        R, a, y, w = _random_pool(rng)
        kind = "log-loss" if case % 2 == 0 else "Brier score"
        tau, score, at_one = _fit_tau(kind, R, a, w, _classes(y, R))
        assert tau > 0
        assert_allclose(score, _score_reference(kind, R, a, y, w, tau), rtol=1e-9)
        assert_allclose(at_one, _score_reference(kind, R, a, y, w, 1.0), rtol=1e-9)
        assert score <= at_one
        if tau == 1.0:
            assert score == at_one
        best = min(_score_reference(kind, R, a, y, w, t) for t in grid[::40])
        assert score <= best + 1e-6 * abs(best) + 1e-12


def test_fitted_tau_by_the_grid_on_larger_pools():
    # the full grid, on a few pools of a few hundred rows
    rng = np.random.default_rng(2)
    grid = np.exp(np.linspace(-5.0, 5.0, 2001))
    for _ in range(3):
        n, K = 300, 3
        R = rng.dirichlet(np.ones(K), size=n)
        y = rng.integers(0, K, size=n)
        w = rng.choice([1.0, 2.0], size=n)
        a = np.full(n, 1.0 / 241.0)
        tau, score, _ = _fit_tau("log-loss", R, a, w, _classes(y, R))
        W = w / w.sum()
        scores = [
            float(W @ -np.log(_mix(_power(R, t), 1.0 / 241.0)[np.arange(n), y])) for t in grid
        ]
        assert score <= min(scores) + 1e-9


def _truth(n, K, rng):
    logits = 2.0 * rng.normal(size=(n, K))
    T = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    y = (T.cumsum(axis=1) > rng.uniform(size=(n, 1))).argmax(axis=1)
    return T, y


def test_an_under_confident_pool_gets_tau_above_one_and_a_calibrated_one_about_one():
    rng = np.random.default_rng(3)
    T, y = _truth(8000, 4, rng)
    a = np.full(y.shape[0], 1e-4)
    w = np.ones(y.shape[0])
    # a linear pool of two calibrated-in-expectation but noisy forecasts
    # is under-confident: the true probabilities to the power 1/2
    tau, score, at_one = _fit_tau("log-loss", _power(T, 0.5), a, w, _classes(y, T))
    assert 1.7 < tau < 2.3 and score < at_one
    tau, _, _ = _fit_tau("log-loss", T, a, w, _classes(y, T))
    assert 0.95 < tau < 1.05  # the truth is (nearly) left alone
    tau, _, _ = _fit_tau("Brier score", _power(T, 0.5), a, w, _classes(y, T))
    assert tau > 1.5


def test_no_transform_when_the_score_is_flat_in_tau():
    # a uniform pool is its own power: tau = 1 exactly (ties to no transform)
    rng = np.random.default_rng(4)
    R = np.full((50, 3), 1.0 / 3.0)
    y = rng.integers(0, 3, size=50)
    for kind in ("log-loss", "Brier score"):
        tau, score, at_one = _fit_tau(kind, R, np.full(50, 0.01), np.ones(50), _classes(y, R))
        assert tau == 1.0 and score == at_one


def test_fit_tau_weights_are_repeated_rows():
    rng = np.random.default_rng(5)
    for _ in range(20):
        R, a, y, _ = _random_pool(rng)
        k = rng.integers(1, 4, size=y.shape[0])
        got = _fit_tau("log-loss", R, a, k.astype(float), _classes(y, R))
        rep = np.repeat(np.arange(y.shape[0]), k)
        want = _fit_tau("log-loss", R[rep], a[rep], np.ones(rep.shape[0]), _classes(y[rep], R))
        assert_allclose(got[1], want[1], rtol=1e-9)
        assert_allclose(got[0], want[0], rtol=1e-6)


def _overconfident(n, seed, K=3):
    rng = np.random.default_rng(seed)
    T, y = _truth(n, K, rng)
    P = T ** 2.5
    return P / P.sum(axis=1, keepdims=True), y


def test_auto_sharpened_is_the_stacked_pool_to_the_power_tau():
    P, y = _overconfident(1500, 6)
    plain = AutoRecalibrator(random_state=0, sharpen=False).fit(P, y)
    sharp = AutoRecalibrator(random_state=0, sharpen=True).fit(P, y)
    assert plain.tau_ == 1.0
    assert sharp.weights_ == plain.weights_  # the same weights, then the power
    assert len(sharp.weights_) > 1
    assert sharp.stack_score_ >= plain.stack_score_  # never worse than the pool
    assert (sharp.tau_ == 1.0) == (sharp.stack_score_ == plain.stack_score_)
    P_new, _ = _overconfident(200, 7)
    pool = sum(
        v * sharp.recalibrators_[name].predict_proba(P_new) for name, v in sharp.weights_.items()
    )
    want = _mix(_power_reference(pool, sharp.tau_), sharp.mixture_)
    got = sharp.predict_proba(P_new)
    assert_allclose(got, want, rtol=1e-9, atol=1e-15)
    assert_allclose(got.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    if sharp.tau_ != 1.0:
        assert f"tau = {sharp.tau_:.4g}" in sharp.summary()


def test_sharpen_true_is_the_default_output():
    P, y = _overconfident(600, 8)
    a = AutoRecalibrator(random_state=0).fit(P, y)
    b = AutoRecalibrator(random_state=0, sharpen=True).fit(P, y)
    c = AutoRecalibrator(random_state=0, sharpen=False).fit(P, y)
    assert np.array_equal(a.predict_proba(P), b.predict_proba(P))
    assert a.summary() == b.summary() and "tau" not in c.summary()
    assert c.tau_ == 1.0


def test_one_candidate_is_not_sharpened():
    P, y = _overconfident(600, 9)
    for kwargs in ({"ensemble": False}, {"candidates": ["temperature"]},
                   {"selection_scoring": "accuracy"}):
        auto = AutoRecalibrator(random_state=0, sharpen=True, **kwargs).fit(P, y)
        if len(auto.weights_) == 1:
            assert auto.tau_ == 1.0
    auto = AutoRecalibrator(random_state=0, sharpen=True, ensemble=False).fit(P, y)
    assert auto.tau_ == 1.0


def test_sharpened_sample_weight_zero_rows_are_dropped():
    P, y = _overconfident(800, 10)
    w = np.ones(y.shape[0])
    w[::7] = 0.0
    keep = w > 0
    w0 = w.copy()
    a = AutoRecalibrator(random_state=0, sharpen=True).fit(P, y, sample_weight=w)
    b = AutoRecalibrator(random_state=0, sharpen=True).fit(P[keep], y[keep])
    assert np.array_equal(w, w0)  # the caller's weights are not mutated
    assert a.weights_.keys() == b.weights_.keys()
    assert_allclose(a.tau_, b.tau_, rtol=1e-6)
    assert_allclose(a.predict_proba(P), b.predict_proba(P), rtol=1e-6, atol=1e-9)


def test_sharpened_clone_and_pickle():
    P, y = _overconfident(500, 11)
    auto = AutoRecalibrator(random_state=0, sharpen=True)
    assert "sharpen=True" not in repr(auto)  # the default
    assert "sharpen=False" in repr(AutoRecalibrator(sharpen=False))
    assert clone(auto).get_params()["sharpen"] is True
    auto.fit(P, y)
    again = pickle.loads(pickle.dumps(auto))
    assert again.tau_ == auto.tau_
    assert np.array_equal(again.predict_proba(P), auto.predict_proba(P))


def _entropy_reference(Q, w):
    total = 0.0
    for row, wi in zip(Q, w):
        total += wi * -sum(float(q) * np.log(float(q)) for q in row if q > 0)
    return total / float(np.sum(w))


def test_smoothed_targets_are_platts_for_two_classes_and_scale_free():
    rng = np.random.default_rng(12)
    for _ in range(100):
        n, K = int(rng.integers(1, 40)), int(rng.integers(2, 6))
        y = rng.integers(0, K, size=n)
        w = rng.choice([1.0, 1.0, 2.5], size=n)
        T = _smoothed_targets(y, w, K)
        assert_allclose(T.sum(axis=1), 1.0, rtol=0, atol=1e-12)
        n_eff = w.sum() ** 2 / (w @ w)
        for i in range(n):
            N = n_eff * w[y == y[i]].sum() / w.sum()
            assert_allclose(T[i, y[i]], (N + 1) / (N + 2), rtol=1e-12)
            others = np.delete(T[i], y[i])
            assert_allclose(others, 1 / ((N + 2) * (K - 1)), rtol=1e-12)
        assert_allclose(_smoothed_targets(y, 7.0 * w, K), T, rtol=1e-12)
    # two classes, unit weights: Platt's targets (N+ + 1)/(N+ + 2), 1/(N- + 2)
    y = np.array([1, 1, 1, 0, 1, 0])
    T = _smoothed_targets(y, np.ones(6), 2)
    assert_allclose(T[:, 1], np.where(y == 1, 5 / 6, 1 / 4), rtol=1e-12)


def test_target_losses_are_the_row_losses_on_one_hot_targets_and_match_a_twin():
    rng = np.random.default_rng(13)
    for _ in range(100):
        R, a, y, w = _random_pool(rng)
        S = _mix(R, 0.01)
        K = R.shape[1]
        E = np.eye(K)[y]
        for kind in ("log-loss", "Brier score"):
            assert_allclose(_target_losses(kind, S, E), _row_losses(kind, S, y), rtol=1e-12)
        T = _smoothed_targets(y, w, K)
        want_log = [-sum(t * np.log(s) for t, s in zip(Tr, Sr)) for Tr, Sr in zip(T, S)]
        want_brier = [sum((s - t) ** 2 for t, s in zip(Tr, Sr)) for Tr, Sr in zip(T, S)]
        assert_allclose(_target_losses("log-loss", S, T), want_log, rtol=1e-12)
        assert_allclose(_target_losses("Brier score", S, T), want_brier, rtol=1e-12, atol=1e-15)


def test_sharpness_bound_against_a_dense_grid():
    # slow twin: the largest power on a fine grid of log tau at which the
    # pool's mean entropy is still at least its candidates' weighted mean
    rng = np.random.default_rng(14)
    grid = np.linspace(0.0, 5.0, 1001)
    interior = 0
    for _ in range(60):
        n, K, m = int(rng.integers(1, 30)), int(rng.integers(2, 5)), int(rng.integers(2, 4))
        Qs = [rng.dirichlet(np.full(K, rng.choice([0.1, 0.5, 2.0])), size=n) for _ in range(m)]
        v = rng.dirichlet(np.ones(m))
        w = rng.choice([0.5, 1.0, 3.0], size=n)
        R = sum(x * Q for x, Q in zip(v, Qs))
        target = sum(x * _entropy_reference(Q, w) for x, Q in zip(v, Qs))
        bound = _sharpness_bound(R, list(zip(v, Qs)), w)
        assert 1.0 <= bound <= np.exp(5.0) * (1 + 1e-12)
        # R ** tau row by row, normalised: plain numpy on the whole grid
        with np.errstate(divide="ignore", invalid="ignore"):
            G = R[None] ** np.exp(grid)[:, None, None]
            G = G / G.sum(axis=2, keepdims=True)
            H = -np.where(G > 0, G * np.log(G), 0.0).sum(axis=2) @ w / w.sum()
        ok = grid[H >= target - 1e-12]
        want = np.exp(ok.max()) if ok.size else 1.0
        assert abs(np.log(bound) - np.log(want)) <= 6e-3, (bound, want)
        if 1.0 < bound < np.exp(5.0):
            interior += 1
            assert_allclose(_entropy_reference(_power_reference(R, bound), w), target,
                            rtol=1e-4, atol=1e-9)
    assert interior > 20  # the pools mostly lose sharpness (Jensen)


def _target_twin(kind, R, a, w, T, tau):
    """Weighted mean loss of ``mix(power(R, tau), a)`` against the targets ``T``."""
    K = R.shape[1]
    S = (1 - a)[:, None] * _power_reference(R, tau) + (a / K)[:, None]
    return float((w / w.sum()) @ _target_losses(kind, S, T))


def test_fitted_tau_with_targets_and_an_upper_bound_beats_the_grid_below_it():
    rng = np.random.default_rng(15)
    grid = np.linspace(-5.0, 5.0, 2001)
    for case in range(80):
        R, a, y, w = _random_pool(rng)
        kind = "log-loss" if case % 2 == 0 else "Brier score"
        T = _smoothed_targets(y, w, R.shape[1])
        upper = float(np.exp(rng.uniform(0.0, 2.0)))
        tau, score, at_one = _fit_tau(kind, R, a, w, T, upper)
        assert 0 < tau <= upper * (1 + 1e-9)
        assert_allclose(score, _target_twin(kind, R, a, w, T, tau), rtol=1e-9)
        best = min(_target_twin(kind, R, a, w, T, np.exp(t))
                   for t in grid[::20] if np.exp(t) <= upper)
        assert score <= best + 1e-6 * abs(best) + 1e-12


def test_separable_calibration_rows_do_not_drive_tau_up():
    # An over-fitted model: right on every calibration row, mostly certain.
    # The out-of-fold score of the pool (identity and histogram binning)
    # keeps falling as tau grows; the unbounded fit gave tau = 2.7 and 3.4
    # on these two data sets (148 on the benchmark's breast_cancer / MLP).
    for seed in (0, 4):
        rng = np.random.default_rng(seed)
        n = 150
        y = rng.integers(0, 2, n)
        conf = np.where(rng.uniform(size=n) < 0.8, 1 - 10.0 ** rng.uniform(-8, -3, n),
                        rng.uniform(0.55, 0.99, n))
        p1 = np.where(y == 1, conf, 1 - conf)
        P = np.column_stack([1 - p1, p1])
        auto = AutoRecalibrator(
            [0, 1], candidates=["histogram"], random_state=0, sharpen=True).fit(P, y)
        assert len(auto.weights_) == 2
        assert 1.0 <= auto.tau_ < 1.5, auto.tau_
