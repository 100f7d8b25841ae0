"""The expert oracle and step 3 of the online forecaster (skcal.online._oracle)."""

import math

import numpy as np
from numpy.testing import assert_allclose

from skcal.online import OnlineMSRForecaster
from skcal.online._oracle import ExpertOracle, step3

import reference_oracle as ref

# --- the expert oracle ---------------------------------------------------------------


def _algorithm1_losses(rng, T, m, mode):
    """Loss vectors shaped as in Algorithm 1: one bucket, +-(p - theta), aux 0."""
    d = 2 * m + 1
    L = np.zeros((T, d))
    for t in range(T):
        if mode == "rare" and t % 5:
            i = 0  # bucket 0 takes 4/5 of the rounds, the others are rare
        else:
            i = rng.integers(m)
        g = rng.uniform(-1, 1) if mode != "extreme" else rng.choice([-1.0, 1.0])
        L[t, i], L[t, m + i] = -g, g
    return L


def test_oracle_matches_replay_and_keeps_its_regret_bound():
    # Small games, random and adaptive: the weights equal the loop replay and
    # every expert's regret (auxiliary included) is within the derived bound.
    rng = np.random.default_rng(0)
    n_games = 0
    for case in range(24):
        m = int(rng.integers(2, 5))
        d = 2 * m + 1
        T = int(rng.choice([1, 2, 17, 60, 150]))
        horizon = int(rng.choice([T, 4 * T + 3, 1000]))
        oracle = ExpertOracle(d, horizon)
        mode = ["uniform", "rare", "extreme", "adaptive"][case % 4]
        if mode == "adaptive":
            # each round, the loss that hurts the current weights most:
            # expert pair i with the largest weight gap, sign against it
            L = np.zeros((T, d))
            W = np.empty((T, d))
            for t in range(T):
                w = oracle.weights()
                W[t] = w
                v = w[:m] - w[m : 2 * m]
                i = int(np.argmax(np.abs(v)))
                g = -1.0 if v[i] >= 0 else 1.0
                L[t, i], L[t, m + i] = -g, g
                oracle.update(L[t])
        else:
            L = _algorithm1_losses(rng, T, m, mode)
            W = np.empty((T, d))
            for t in range(T):
                W[t] = oracle.weights()
                oracle.update(L[t])
        W_ref = ref.online_oracle_replay(L, horizon)
        assert_allclose(W, W_ref, rtol=1e-9, atol=1e-13)
        assert_allclose(W.sum(axis=1), 1.0, rtol=1e-12)
        played = np.einsum("td,td->", W_ref, L)
        for i in range(d):
            regret = played - L[:, i].sum()
            bound = ref.online_oracle_bound((L[:, i] ** 2).sum(), d, horizon)
            assert regret <= bound + 1e-9, (case, i, regret, bound)
        assert_allclose(
            oracle.regret_bound((L**2).sum(axis=0)),
            [ref.online_oracle_bound(s, d, horizon) for s in (L**2).sum(axis=0)],
            rtol=1e-12,
        )
        n_games += 1
    assert n_games == 24


def test_oracle_regret_grows_with_the_experts_own_count():
    # Lemma 5.4's point: regret against a rarely active expert is bounded by
    # its own sqrt(n_i), far below sqrt(T). A long game where expert pair 1
    # is active in 1 round of 100 and always gains 1 (so its regret is
    # nearly all it could be: it alone gains, in its rounds).
    m, T = 3, 8000
    d = 2 * m + 1
    oracle = ExpertOracle(d, T)
    rng = np.random.default_rng(1)
    played = 0.0
    total = np.zeros(d)
    for t in range(T):
        w = oracle.weights()
        loss = np.zeros(d)
        if t % 100 == 0:
            loss[1], loss[m + 1] = -1.0, 1.0
        else:
            g = rng.uniform(-1, 1)
            loss[0], loss[m] = -g, g
        played += w @ loss
        total += loss
        oracle.update(loss)
    regret = played - total
    n1 = T // 100
    assert regret[1] <= oracle.regret_bound(n1)
    # the bound itself is O(log(dT) + sqrt(n_i log(dT))), not O(sqrt(T))
    assert oracle.regret_bound(n1) < oracle.regret_bound(T) / 3
    assert regret[2 * m] <= oracle.regret_bound(0.0)  # the auxiliary expert, (26)


# --- step 3 -----------------------------------------------------------------------


def _random_v(rng, m):
    kind = rng.integers(6)
    if kind == 0:
        return np.zeros(m)
    if kind == 1:
        return -rng.uniform(0.01, 1, m)  # all negative
    if kind == 2:
        return rng.uniform(0, 1, m)  # all non-negative
    if kind == 3:
        v = -rng.uniform(0.01, 1, m)
        v[rng.integers(1, m) :] = 0.0  # a zero after negatives
        return v
    if kind == 4:
        return np.round(rng.uniform(-1, 1, m), 1)  # ties and zeros
    return rng.uniform(-1, 1, m)


def _soft_gain(w_plus, w_minus, p, theta):
    """The literal weighted gain (28) with tent buckets: loops over grid points."""
    m = len(w_plus) - 1
    total = 0.0
    for k in range(m + 1):
        tent = max(0.0, 1.0 - abs(m * p - k))
        total += (w_plus[k] - w_minus[k]) * tent * (p - theta)
    return total


def test_step3_against_brute_force_on_a_grid():
    # Over random weight vectors on the m + 1 grid points: the returned point
    # has h_t(p) <= 0 up to rounding (by the literal (28) with tent
    # buckets), and no point of a fine grid does better than 0 is needed:
    # the minimum of h over a fine grid is >= -1 (sanity) and ours is <= it
    # up to rounding when it is 0 there.
    rng = np.random.default_rng(2)
    for case in range(200):
        m = int(rng.integers(2, 9))
        v = _random_v(rng, m + 1)
        v = v / max(1.0, np.abs(v).sum())
        slack = max(0.0, 1.0 - np.abs(v).sum()) / (2 * m + 2)
        common = rng.uniform(0, slack, m + 1) if case % 2 else np.zeros(m + 1)
        w_plus = np.maximum(v, 0) + common
        w_minus = np.maximum(-v, 0) + common
        p = step3(w_plus - w_minus)
        assert 0.0 <= p <= 1.0
        h = max(_soft_gain(w_plus, w_minus, p, th) for th in (0, 1))
        assert h <= 1e-12, (case, h)
        grid = np.linspace(0, 1, 8 * m + 1)
        h_grid = min(max(_soft_gain(w_plus, w_minus, x, th) for th in (0, 1))
                     for x in grid)
        assert h <= max(h_grid, 0.0) + 1e-12


def test_step3_holds_inside_a_game():
    # The invariant the proof rests on: in every round of a game, the mean
    # p~ keeps the weighted gain (28) <= 0 whatever the outcome, and the
    # forecast is one of the two grid points around it.
    f = OnlineMSRForecaster(horizon=300, random_state=3)
    rng = np.random.default_rng(3)
    for _ in range(300):
        p = f.predict()
        mean = f.predict_mean()
        w = f._oracle._master @ f._oracle._base
        m = f.n_buckets_
        h = max(_soft_gain(w[: m + 1], w[m + 1 : 2 * m + 2], mean, th) for th in (0, 1))
        assert h <= 1e-12
        assert p in (math.floor(mean * m) / m, math.ceil(mean * m) / m) or mean == 1.0
        f.update(int(rng.uniform() < 0.3 + 0.4 * (p < 0.5)))


def test_rounding_is_unbiased_for_a_rare_event():
    # The paper's rule served the right end of the bucket: after 1,000 rounds
    # of a 2% event the forecast was 0.25. Randomised rounding keeps the mean.
    rng = np.random.default_rng(12)
    for seed in range(5):
        y = (rng.uniform(size=2000) < 0.02).astype(int)
        p, _ = OnlineMSRForecaster(horizon=2000, random_state=seed).run(y)
        assert abs(p.mean() - 0.02) <= 0.01, (seed, p.mean())
        assert p.min() == 0.0


def test_draws_average_to_the_mean():
    # E[p_t | past] = p~_t: over many independent coins at a fixed state the
    # forecasts average to predict_mean (5 standard errors of 4,000 coins)
    f = OnlineMSRForecaster(horizon=400, random_state=0)
    f.run((np.arange(150) % 3 == 0).astype(int))
    mean = f.predict_mean()
    m = f.n_buckets_
    draws = []
    for seed in range(4000):  # the same state, fresh coins
        f._pending, f._rng = None, np.random.RandomState(seed)
        draws.append(f.predict())
        assert f.predict_mean() == mean
    assert abs(np.mean(draws) - mean) <= 5 * 0.5 / m / math.sqrt(4000)


