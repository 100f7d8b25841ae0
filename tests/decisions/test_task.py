"""DecisionTask: best responses and swap regret (Bairaktari et al., eq. (1))."""

import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from skcal import (
    DecisionTask,
)

from cases import over_cases
from decisions_helpers import (
    one_hot,
    random_task,
)
from reference_task import best_response_bruteforce, swap_regret_bruteforce

# --- DecisionTask ----------------------------------------------------------------


@pytest.mark.parametrize(
    "utility, message",
    [
        ([0.2, 0.3], "2-D array"),
        (np.zeros((2, 2, 2)), "2-D array"),
        (np.zeros((0, 2)), "at least one action"),
        ([[0.5], [0.2]], "at least two outcomes"),
        ([[0.5, np.nan], [0.2, 0.1]], "NaN or infinity"),
        ([[0.5, 1.5], [0.2, 0.1]], r"outside \[0, 1\]"),
        ([[0.5, -0.1], [0.2, 0.1]], r"outside \[0, 1\]"),
    ],
)
def test_task_rejects_bad_utility(utility, message):
    with pytest.raises(ValueError, match=message):
        DecisionTask(utility)


def test_task_copies_and_freezes_utility():
    U = np.array([[1.0, 0.0], [0.5, 1.0]])
    task = DecisionTask(U)
    U[0, 0] = 0.0
    assert task.utility[0, 0] == 1.0
    with pytest.raises(ValueError):
        task.utility[0, 0] = 0.3
    assert (task.n_actions, task.n_outcomes) == (2, 2)
    assert repr(task) == "DecisionTask([[1.0, 0.0], [0.5, 1.0]])"
    assert "3 x 40" in repr(DecisionTask(np.zeros((3, 40))))


@over_cases("seed", range(20))
def test_best_response_matches_bruteforce_with_exact_ties(seed):
    # Utilities and predictions on dyadic grids make every expected utility
    # exact, so ties are real ties and must go to the lowest action.
    rng = np.random.RandomState(seed)
    A = rng.randint(1, 7)
    U = rng.randint(0, 5, size=(A, 2)) / 4.0
    p = rng.randint(0, 17, size=50) / 16.0
    P = np.column_stack([1 - p, p])
    task = DecisionTask(U)
    assert_array_equal(task.best_response(p), best_response_bruteforce(U, P))
    assert_array_equal(task.best_response(P), task.best_response(p))
    assert_allclose(
        task.expected_utility(p), (1 - p)[:, None] * U[:, 0] + p[:, None] * U[:, 1]
    )


@over_cases("seed", range(10))
def test_best_response_multiclass_matches_bruteforce(seed):
    rng = np.random.RandomState(seed)
    A, K = rng.randint(1, 6), rng.randint(3, 5)
    U = rng.uniform(size=(A, K))
    P = rng.dirichlet(np.ones(K), size=40)
    task = DecisionTask(U)
    assert_array_equal(task.best_response(P), best_response_bruteforce(U, P))
    assert_allclose(task.expected_utility(P), P @ U.T)


def test_best_response_ties_and_scalars():
    task = DecisionTask([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    assert task.best_response(0.5) == 0  # actions 0 and 1 tie
    assert task.best_response(0.75) == 1  # actions 1 and 2 always tie
    assert isinstance(task.best_response(0.75), int)
    assert task.expected_utility(0.25).shape == (3,)
    assert_array_equal(task.best_response([0.0, 0.5, 1.0]), [0, 0, 1])


@pytest.mark.parametrize(
    "p, message",
    [
        ([0.2, 1.2], r"outside \[0, 1\]"),
        ([0.2, np.nan], "NaN or infinity"),
        ([[0.2, 0.3]], "summing to 1"),
        (np.full((2, 3), 1 / 3), r"shape \(n_samples, 2\)"),
    ],
)
def test_best_response_rejects_bad_predictions(p, message):
    with pytest.raises(ValueError, match=message):
        DecisionTask([[1.0, 0.0], [0.0, 1.0]]).best_response(p)


def test_multiclass_task_needs_a_matrix_of_predictions():
    task = DecisionTask(np.eye(3))
    with pytest.raises(ValueError, match=r"reshape\(1, -1\)"):
        task.best_response([0.2, 0.3, 0.5])
    assert task.best_response([[0.2, 0.3, 0.5]]).tolist() == [2]


@over_cases("seed", range(40))
def test_swap_regret_matches_all_swap_maps(seed):
    # Exact formula (best swap per action) against the maximum over all A^A
    # swap maps, for A <= 4, with weights (some zero) and repeated rows.
    rng = np.random.RandomState(seed)
    A = 1 + seed % 4
    K = 2 if seed % 3 else 3
    n = rng.randint(1, 40)
    task = random_task(rng, A, K)
    actions = rng.randint(0, A, size=n)
    y = rng.randint(0, K, size=n)
    w = rng.exponential(size=n) * (rng.uniform(size=n) < 0.8)
    w[0] += 0.1  # keep the total positive
    expected = swap_regret_bruteforce(task.utility, one_hot(actions, A), y, w)
    assert task.swap_regret(actions, y, sample_weight=w) == pytest.approx(
        expected, abs=1e-12
    )
    # Randomized responses (Definition 4.4): one swap map for all rounds.
    Q = rng.dirichlet(np.ones(A) * 0.5, size=n)
    expected = swap_regret_bruteforce(task.utility, Q, y, w)
    assert task.swap_regret(Q, y, sample_weight=w) == pytest.approx(expected, abs=1e-12)
    # One-hot action probabilities are the deterministic actions.
    assert task.swap_regret(one_hot(actions, A), y, w) == pytest.approx(
        task.swap_regret(actions, y, w), abs=1e-12
    )


def test_swap_regret_integer_weights_equal_repetition():
    rng = np.random.RandomState(0)
    task = random_task(rng, 4)
    actions = rng.randint(0, 4, size=30)
    y = rng.randint(0, 2, size=30)
    w = rng.randint(0, 4, size=30)
    w[0] = 1
    repeated = task.swap_regret(np.repeat(actions, w), np.repeat(y, w))
    assert task.swap_regret(actions, y, sample_weight=w) == pytest.approx(
        repeated, abs=1e-14
    )


def test_swap_regret_zero_for_best_response_on_calibrated_data():
    # Each prediction is exactly calibrated under the weights, so no task has
    # swap regret under its best response (paper 000, Section 1.1).
    p = np.array([0.2, 0.2, 0.7, 0.7, 1.0])
    y = np.array([1, 0, 1, 0, 1])
    w = np.array([0.2, 0.8, 0.7, 0.3, 0.5])
    rng = np.random.RandomState(0)
    for _ in range(50):
        task = random_task(rng, rng.randint(1, 6))
        assert task.swap_regret(task.best_response(p), y, w) == pytest.approx(
            0.0, abs=1e-15
        )


def test_swap_regret_example_and_bools():
    task = DecisionTask([[1.0, 0.0], [0.5, 1.0]])
    # No umbrella on two rainy days: swapping action 0 to 1 gains 1 each time.
    assert task.swap_regret([0, 0, 1, 1], [1, 1, 0, 1]) == 0.5
    assert task.swap_regret([0, 0, 1, 1], [True, True, False, True]) == 0.5
    assert task.swap_regret([0.0, 0.0, 1.0, 1.0], [1.0, 1.0, 0.0, 1.0]) == 0.5


@pytest.mark.parametrize(
    "actions, y, kwargs, error, message",
    [
        ([0, 2], [0, 1], {}, ValueError, r"actions must be in \{0, ..., 1\}"),
        ([0, -1], [0, 1], {}, ValueError, "actions must be in"),
        ([0, 1], [0, 2], {}, ValueError, r"y must be in \{0, ..., 1\}"),
        ([0, 0.5], [0, 1], {}, ValueError, "integer indices"),
        (["a", "b"], [0, 1], {}, TypeError, "integer indices"),
        ([0, 1, 1], [0, 1], {}, ValueError, "3 elements but y has 2"),
        ([], [], {}, ValueError, "y is empty"),
        ([0, 1], [0, 1], {"sample_weight": [1.0, -1.0]}, ValueError, "negative"),
        (
            np.full((2, 3), 1 / 3),
            [0, 1],
            {},
            ValueError,
            r"shape \(n_samples, n_actions\)",
        ),
        ([[0.5, 0.6], [0.5, 0.5]], [0, 1], {}, ValueError, "summing to 1"),
    ],
)
def test_swap_regret_rejects_bad_input(actions, y, kwargs, error, message):
    task = DecisionTask([[1.0, 0.0], [0.0, 1.0]])
    with pytest.raises(error, match=message):
        task.swap_regret(actions, y, **kwargs)


def test_task_pickles():
    task = DecisionTask([[1.0, 0.0], [0.5, 1.0]])
    again = pickle.loads(pickle.dumps(task))
    assert_array_equal(again.utility, task.utility)
    assert again.best_response(0.4) == task.best_response(0.4)


