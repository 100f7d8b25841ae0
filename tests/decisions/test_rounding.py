"""SCDLRounding and the swap-regret bound of Theorem 4.2 (Bairaktari et al.)."""

import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression

from skcal import (
    DecisionTask,
    RoundedResponseClassifier,
    SCDLRounding,
    calibration_decision_loss,
    soft_binned_cdl,
)

from cases import over_cases
from decisions_helpers import (
    MISCALIBRATIONS,
    bound_ratios,
    random_task,
    response_distribution,
    rounded_sample,
    simulate,
    structured_tasks,
)
from reference_scdl import hard_binned_scdl_reference, scdl_m_reference

# --- SCDLRounding ----------------------------------------------------------------


@pytest.mark.parametrize("rounding", ["random", "floor"])
@pytest.mark.parametrize("m", [1, 3, 8, 10, 64])
def test_rounding_lands_on_the_grid(rounding, m):
    rng = np.random.RandomState(m)
    p, y = simulate(rng, 500, MISCALIBRATIONS["squared"])
    p[:3] = [0.0, 1.0, 0.5]
    fitted = SCDLRounding(m=m, rounding=rounding, random_state=0).fit(p, y)
    rounded = fitted.transform(p)
    assert fitted.m_ == m
    assert_allclose(rounded * m, np.round(rounded * m), atol=1e-9)
    assert np.all((rounded >= 0) & (rounded <= 1))
    # Never further than one grid step from p; floor never rounds up.
    assert np.all(np.abs(rounded - p) <= 1.0 / m + 1e-12)
    if rounding == "floor":
        assert_allclose(rounded, np.floor(m * p) / m)
        assert np.all(rounded <= p)


@pytest.mark.parametrize("m", [1, 2, 5, 16])
def test_rounding_distribution_is_unbiased_and_matches_soft_bins(m):
    # Pr[p' = j/m | p] = (1 - |m p - j|)_+ (Lemma 3.1), hence E[p'] = p.
    rng = np.random.RandomState(m)
    p = np.concatenate([rng.uniform(size=300), np.arange(m + 1) / m])
    y = rng.randint(0, 2, size=p.shape[0])
    fitted = SCDLRounding(m=m).fit(p, y)
    lower, upper, prob_upper = fitted.rounding_distribution(p)
    assert_allclose(lower + prob_upper * (upper - lower), p, atol=1e-12)
    assert np.all((prob_upper >= 0) & (prob_upper < 1))
    distribution = np.zeros((p.shape[0], m + 1))
    rows = np.arange(p.shape[0])
    np.add.at(distribution, (rows, np.round(lower * m).astype(int)), 1 - prob_upper)
    np.add.at(distribution, (rows, np.round(upper * m).astype(int)), prob_upper)
    soft_bins = np.clip(1 - np.abs(m * p[:, None] - np.arange(m + 1)), 0, None)
    assert_allclose(distribution, soft_bins, atol=1e-12)


def test_random_rounding_is_unbiased_statistically():
    p = np.array([0.0, 0.01, 0.3, 0.5, 0.77, 0.999, 1.0])
    fitted = SCDLRounding(m=4, random_state=0).fit(p, [0, 0, 1, 0, 1, 1, 1])
    draws = fitted.transform(np.tile(p, 20000)).reshape(20000, -1)
    # p' takes the two neighbours of p, so its standard deviation is at most
    # 1/(2m); five standard errors of the mean.
    assert_allclose(draws.mean(axis=0), p, atol=5 * (1 / 8) / np.sqrt(20000))
    for j, value in enumerate(p):
        assert set(np.unique(draws[:, j])) <= {
            np.floor(4 * value) / 4,
            np.ceil(4 * value) / 4,
        }


def test_rounding_random_state():
    p = np.linspace(0, 1, 101)
    y = (p > 0.5).astype(int)
    fixed = SCDLRounding(m=4, random_state=0).fit(p, y)
    assert_array_equal(fixed.transform(p), fixed.transform(p))
    fresh = SCDLRounding(m=4, random_state=np.random.RandomState(0)).fit(p, y)
    assert not np.array_equal(fresh.transform(p), fresh.transform(p))
    floor = SCDLRounding(m=4, rounding="floor").fit(p, y)
    assert_array_equal(floor.transform(p), floor.transform(p))


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("ties", [False, True])
def test_auto_m_is_the_self_balancing_m_star(seed, ties):
    rng = np.random.RandomState(seed)
    g = list(MISCALIBRATIONS.values())[seed]
    p, y = simulate(rng, 1500, g, ties=ties)
    w = rng.exponential(size=p.shape[0])
    fitted = SCDLRounding().fit(p, y, sample_weight=w)
    value, details = soft_binned_cdl(y, p, sample_weight=w, return_details=True)
    assert fitted.m_ == details.m
    assert fitted.scdl_ == value
    # Lemma 3.3: SCDL in [1/m*, 2/m*); the bound is Theorem 4.2's middle term.
    assert 1.0 / fitted.m_ <= fitted.scdl_ < 2.0 / fitted.m_
    assert fitted.scdl_m_ == pytest.approx(
        scdl_m_reference(y, p, w, fitted.m_), abs=1e-12
    )
    assert fitted.swap_regret_bound_ == pytest.approx(
        2 * fitted.scdl_m_ + 2 / fitted.m_
    )
    assert fitted.swap_regret_bound_ <= details.swap_regret_bound + 1e-12


@pytest.mark.parametrize("m", [1, 3, 8, 50])
def test_fixed_m_bound(m):
    rng = np.random.RandomState(m)
    p, y = simulate(rng, 800, MISCALIBRATIONS["non-monotone"])
    fitted = SCDLRounding(m=m).fit(p, y)
    assert fitted.scdl_ == soft_binned_cdl(y, p)
    assert fitted.scdl_m_ == pytest.approx(
        scdl_m_reference(y, p, np.ones_like(p), m), abs=1e-12
    )
    assert fitted.swap_regret_bound_ == pytest.approx(2 * fitted.scdl_m_ + 2 / m)


@over_cases("seed", range(6))
def test_floor_rounding_uses_hard_bins(seed):
    rng = np.random.RandomState(seed)
    p, y = simulate(rng, 600, list(MISCALIBRATIONS.values())[seed], ties=seed % 2 == 1)
    w = rng.exponential(size=p.shape[0])
    fitted = SCDLRounding(rounding="floor").fit(p, y, sample_weight=w)
    value, m_star = hard_binned_scdl_reference(y, p, w)
    assert fitted.m_ == m_star
    # Lemma 3.2 carries over to hard bins: SCDL_m does not decrease along 2^k.
    hard_levels = [
        scdl_m_reference(y, np.floor(m * p) / m, w, m) for m in 2 ** np.arange(1, 9)
    ]
    assert np.all(np.diff(hard_levels) >= -1e-12)
    assert fitted.scdl_ == pytest.approx(value, abs=1e-12)
    assert 1.0 / fitted.m_ <= fitted.scdl_ < 2.0 / fitted.m_
    hard = scdl_m_reference(y, np.floor(m_star * p) / m_star, w, m_star)
    assert fitted.scdl_m_ == pytest.approx(hard, abs=1e-12)
    assert fitted.swap_regret_bound_ == pytest.approx(2 * hard + 2 / m_star)


def test_exactly_calibrated_data_are_not_rounded():
    # SCDL = 0: no m* below 2**40, so the grid is 2**-40 (paper: alpha = 0,
    # use the best response as is).
    p = np.array([0.5, 0.5, 0.25, 0.25, 0.25, 0.25])
    y = np.array([0, 1, 1, 0, 0, 0])
    for rounding in ("random", "floor"):
        fitted = SCDLRounding(rounding=rounding, random_state=0).fit(p, y)
        assert fitted.m_ == 2**40
        assert fitted.scdl_ == 0.0
        assert fitted.swap_regret_bound_ == pytest.approx(2.0**-39)
        assert_array_equal(fitted.transform(p), p)


def test_two_column_input():
    rng = np.random.RandomState(0)
    p, y = simulate(rng, 400, MISCALIBRATIONS["squared"])
    P = np.column_stack([1 - p, p])
    one = SCDLRounding(random_state=0).fit(p, y)
    two = SCDLRounding(random_state=0).fit(P, y)
    assert (one.m_, one.scdl_, one.swap_regret_bound_) == (
        two.m_,
        two.scdl_,
        two.swap_regret_bound_,
    )
    rounded = two.transform(P)
    assert rounded.shape == (400, 2)
    assert_allclose(rounded[:, 1], one.transform(p))
    assert_allclose(rounded.sum(axis=1), 1.0)
    assert_allclose(one.fit_transform(p, y), one.transform(p))


def test_rounding_sample_weight():
    rng = np.random.RandomState(0)
    p, y = simulate(rng, 300, MISCALIBRATIONS["over-confident"])
    w = rng.randint(0, 4, size=300)
    for rounding in ("random", "floor"):
        weighted = SCDLRounding(rounding=rounding).fit(p, y, sample_weight=w)
        repeated = SCDLRounding(rounding=rounding).fit(np.repeat(p, w), np.repeat(y, w))
        assert weighted.m_ == repeated.m_
        assert weighted.scdl_ == pytest.approx(repeated.scdl_, abs=1e-12)
        assert weighted.swap_regret_bound_ == pytest.approx(
            repeated.swap_regret_bound_, abs=1e-12
        )
    w_before = w.copy()
    SCDLRounding().fit(p, y, sample_weight=w)
    assert_array_equal(w, w_before)


@pytest.mark.parametrize(
    "params, X, y, message",
    [
        ({"m": 0}, [0.2, 0.8], [0, 1], "The 'm' parameter of SCDLRounding must be"),
        ({"m": 2.5}, [0.2, 0.8], [0, 1], "The 'm' parameter of SCDLRounding must be"),
        ({"m": True}, [0.2, 0.8], [0, 1], "The 'm' parameter of SCDLRounding must be"),
        ({"rounding": "round"}, [0.2, 0.8], [0, 1], "The 'rounding' parameter of"),
        ({"random_state": "x"}, [0.2, 0.8], [0, 1], "The 'random_state' parameter"),
        ({}, [0.2, 1.8], [0, 1], r"outside \[0, 1\]"),
        ({}, [0.2, 0.8], None, "requires y to be passed"),
        ({}, [0.2, 0.8], [0, 2], r"y must hold binary outcomes .* got the labels \[0, 2\]"),
        ({}, np.full((2, 3), 1 / 3), [0, 1], r"X must be of shape \(n_samples,\) or"),
    ],
)
def test_rounding_rejects_bad_input(params, X, y, message):
    with pytest.raises(ValueError, match=message):
        SCDLRounding(**params).fit(X, y)


def test_rounding_transform_checks():
    fitted = SCDLRounding(m=4).fit([0.2, 0.8], [0, 1])
    with pytest.raises(ValueError, match=r"\(n_samples, 2\)"):
        fitted.transform(np.full((2, 3), 1 / 3))
    with pytest.raises(ValueError, match=r"outside \[0, 1\]"):
        fitted.transform([1.5])
    with pytest.raises(ValueError, match="NaN"):
        fitted.transform([np.nan])


@pytest.mark.parametrize("rounding", ["random", "floor"])
def test_rounding_estimator_api_on_probabilities(rounding):
    # What the scikit-learn checks would verify if they could feed
    # probabilities (see EXPECTED_FAILED_CHECKS).
    rng = np.random.RandomState(0)
    p, y = simulate(rng, 300, MISCALIBRATIONS["squared"])
    est = SCDLRounding(rounding=rounding, random_state=0)
    assert est.fit(p, y) is est
    first = est.transform(p)
    assert_array_equal(est.fit(p, y).transform(p), first)  # idempotent
    again = pickle.loads(pickle.dumps(est))
    assert_array_equal(again.transform(p), first)
    assert_array_equal(clone(est).fit(list(p), list(y)).transform(p), first)
    assert_array_equal(clone(est).fit(p.astype(np.float32), y).transform(p), first)
    readonly = p.copy()
    readonly.setflags(write=False)
    assert_array_equal(clone(est).fit(readonly, y).transform(readonly), first)
    single = clone(est).fit([0.3], [1])  # one sample is a distribution too
    assert single.transform([0.3]).shape == (1,)
    if rounding == "floor":  # row-wise deterministic: order and subsets do not matter
        order = rng.permutation(300)
        assert_array_equal(est.transform(p[order]), first[order])
        assert_array_equal(est.transform(p[:10]), first[:10])


# --- the swap-regret bound (Theorem 4.2) -------------------------------------------


@pytest.mark.parametrize("rounding", ["random", "floor"])
def test_rounded_sample_gives_the_swap_regret_of_the_response(rounding):
    # SR_Z(r*_Z o tau_m, D) computed from the action probabilities of every
    # row (Definition 4.4) equals SR_Z(r*_Z, D_m) on the rounded distribution.
    rng = np.random.RandomState(0)
    p, y = simulate(rng, 3000, MISCALIBRATIONS["non-monotone"])
    w = rng.exponential(size=3000)
    fitted = SCDLRounding(rounding=rounding).fit(p, y, sample_weight=w)
    grid_p, grid_y, grid_w = rounded_sample(fitted, p, y, w)
    assert grid_p.shape[0] <= 2 * (fitted.m_ + 1)
    for task in [random_task(rng, A) for A in range(1, 6)] + structured_tasks():
        per_row = task.swap_regret(response_distribution(task, fitted, p), y, w)
        on_grid = task.swap_regret(task.best_response(grid_p), grid_y, grid_w)
        assert on_grid == pytest.approx(per_row, abs=1e-12)


@pytest.mark.parametrize("name", list(MISCALIBRATIONS))
@pytest.mark.parametrize("rounding", ["random", "floor"])
@pytest.mark.parametrize("m", ["auto", 3, 8, 50])
def test_theorem_4_2_on_the_fitted_distribution(name, rounding, m):
    # Theorem 4.2 (and Lemma 4.3 for floor rounding) on the weighted empirical
    # distribution the rounding is fitted on: exact, no sampling error, so
    # the swap regret in expectation over the rounding must not exceed the
    # bound for any task.
    g = MISCALIBRATIONS[name]
    worst = 0.0
    for seed in range(8):
        rng = np.random.RandomState(seed)
        p, y = simulate(rng, 2000, g, ties=seed % 4 == 3)
        w = rng.exponential(size=p.shape[0]) if seed % 2 else None
        fitted = SCDLRounding(m=m, rounding=rounding).fit(p, y, sample_weight=w)
        tasks = [random_task(rng, A) for A in range(2, 6) for _ in range(6)]
        worst = max(worst, *bound_ratios(tasks + structured_tasks(), fitted, p, y, w))
    assert worst <= 1.0 + 1e-9


@pytest.mark.parametrize("name", list(MISCALIBRATIONS))
def test_theorem_4_2_for_the_worst_task(name):
    # sup_Z SR_Z(r*_Z o tau_m, D) = CDL(D_m) (eq. (11)), computed exactly by
    # skcal.calibration_decision_loss on the rounded sample: the bound holds
    # for every task at once, on the fitted sample and on fresh samples. Each
    # single task's swap regret is at most that supremum (Definition 2.2).
    g = MISCALIBRATIONS[name]
    rng = np.random.RandomState(0)
    worst = 0.0
    for seed in range(4):
        p, y = simulate(rng, 2000, g, ties=seed % 2 == 1)
        w = rng.exponential(size=p.shape[0]) if seed % 2 else None
        for rounding in ("random", "floor"):
            for m in ("auto", 3, 8, 50):
                fitted = SCDLRounding(m=m, rounding=rounding).fit(p, y, sample_weight=w)
                grid_p, grid_y, grid_w = rounded_sample(fitted, p, y, w)
                cdl = calibration_decision_loss(grid_y, grid_p, sample_weight=grid_w)
                worst = max(worst, cdl / fitted.swap_regret_bound_)
                tasks = [random_task(rng, A) for A in range(1, 6)]
                for task in tasks + structured_tasks():
                    regret = task.swap_regret(
                        task.best_response(grid_p), grid_y, grid_w
                    )
                    assert regret <= cdl + 1e-12
    for rounding in ("random", "floor"):
        fitted = SCDLRounding(rounding=rounding).fit(*simulate(rng, 20000, g))
        grid_p, grid_y, grid_w = rounded_sample(fitted, *simulate(rng, 200000, g))
        cdl = calibration_decision_loss(grid_y, grid_p, sample_weight=grid_w)
        worst = max(worst, cdl / fitted.swap_regret_bound_)
    assert worst <= 1.0 + 1e-9


@pytest.mark.parametrize("name", list(MISCALIBRATIONS))
def test_swap_regret_below_bound_on_fresh_samples(name):
    # The workflow of a user: fit the rounding on one sample of a known
    # distribution, act on a fresh, larger sample from it. The swap regret is
    # taken in expectation over the rounding (exact rounding probabilities),
    # so only the outcomes are random; across many tasks and seeds it stays
    # below the fitted bound 2 SCDL_m + 2/m.
    g = MISCALIBRATIONS[name]
    worst = 0.0
    for seed in range(6):
        rng = np.random.RandomState(100 + seed)
        for rounding in ("random", "floor"):
            fitted = SCDLRounding(rounding=rounding).fit(*simulate(rng, 20000, g))
            p, y = simulate(rng, 200000, g)
            tasks = [random_task(rng, A) for A in range(2, 6) for _ in range(25)]
            worst = max(worst, *bound_ratios(tasks + structured_tasks(), fitted, p, y))
    assert worst < 1.0


def test_realized_random_actions_stay_below_bound():
    # Theorem 4.4: the guarantee also holds for the realized random
    # rounding, not only in expectation.
    rng = np.random.RandomState(7)
    g = MISCALIBRATIONS["non-monotone"]
    fitted = SCDLRounding(random_state=rng).fit(*simulate(rng, 20000, g))
    p, y = simulate(rng, 200000, g)
    tasks = [random_task(rng, A) for A in range(2, 6) for _ in range(5)]
    for task in tasks + structured_tasks():
        actions = task.best_response(fitted.transform(p))
        assert task.swap_regret(actions, y) < fitted.swap_regret_bound_


def test_rounding_removes_the_regret_of_example_2():
    # Example 2 of paper 000: calibrated p ~ U[1/3, 2/3] and a task with an
    # action per prediction. Best responding to the raw distinct predictions
    # has large swap regret on the sample; the rounding response does not.
    # Here 8001 actions, more than the 1000 predictions can share.
    rng = np.random.RandomState(0)
    p = rng.uniform(1 / 3, 2 / 3, size=1000)
    y = (rng.uniform(size=1000) < p).astype(int)
    grid = np.linspace(0.0, 1.0, 8001)
    task = DecisionTask(np.column_stack([1.0 - grid**2, 1.0 - (1.0 - grid) ** 2]))
    fitted = SCDLRounding().fit(p, y)
    raw = task.swap_regret(task.best_response(p), y)
    rounded = task.swap_regret(response_distribution(task, fitted, p), y)
    assert raw > 0.15
    assert rounded <= fitted.swap_regret_bound_ < raw / 4




@pytest.mark.parametrize("rounding", ["random", "floor"])
def test_m_none_means_auto(rounding):
    # None and "auto" mean the same, as soft_binned_cdl's m=None is its m*
    rng = np.random.RandomState(3)
    p, y = simulate(rng, 500, MISCALIBRATIONS["squared"])
    auto = SCDLRounding(m="auto", rounding=rounding, random_state=0).fit(p, y)
    none = SCDLRounding(m=None, rounding=rounding, random_state=0).fit(p, y)
    assert (none.m_, none.scdl_, none.swap_regret_bound_) == (
        auto.m_, auto.scdl_, auto.swap_regret_bound_
    )
    assert_array_equal(none.transform(p), auto.transform(p))
    X, labels = make_classification(n_samples=300, random_state=0)
    task = DecisionTask([[1.0, 0.0], [0.5, 1.0]])
    clf = RoundedResponseClassifier(LogisticRegression(), task, m=None).fit(X, labels)
    assert clf.m_ == RoundedResponseClassifier(
        LogisticRegression(), task
    ).fit(X, labels).m_
