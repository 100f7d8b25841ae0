"""Helpers shared by the tests of skcal.decisions: responses, rounded samples, cases."""

import numpy as np

from skcal import DecisionTask

__all__ = [
    "MISCALIBRATIONS",
    "bound_ratios",
    "one_hot",
    "random_task",
    "response_distribution",
    "rounded_sample",
    "simulate",
    "structured_tasks",
]


def one_hot(actions, n_actions):
    Q = np.zeros((len(actions), n_actions))
    Q[np.arange(len(actions)), actions] = 1.0
    return Q


def response_distribution(task, rounding, p):
    """Action probabilities of r*_Z o tau_m (Definition 4.3) from tau_m."""
    lower, upper, prob_upper = rounding.rounding_distribution(p)
    Q = one_hot(task.best_response(lower), task.n_actions) * (1.0 - prob_upper)[:, None]
    return Q + one_hot(task.best_response(upper), task.n_actions) * prob_upper[:, None]


def rounded_sample(rounding, p, y, w=None):
    """The rounded distribution D_m (Definition 4.2) as a weighted sample on the grid.

    SR_Z(r*_Z o tau_m, D) = SR_Z(r*_Z, D_m) (proof of Theorem 4.2), and D_m
    has at most 2 (m + 1) atoms, so every task is then evaluated in O(m A).
    """
    w = np.ones_like(p) if w is None else w
    lower, upper, prob_upper = rounding.rounding_distribution(p)
    index = np.round(np.concatenate([lower, upper]) * rounding.m_).astype(np.int64)
    key = 2 * index + np.concatenate([y, y])
    weight = np.bincount(key, np.concatenate([w * (1 - prob_upper), w * prob_upper]))
    atoms = np.flatnonzero(weight > 0)
    return (atoms // 2) / rounding.m_, atoms % 2, weight[atoms]


def random_task(rng, n_actions, n_outcomes=2):
    return DecisionTask(rng.uniform(size=(n_actions, n_outcomes)))


# Miscalibration maps g: the outcome is Bernoulli(g(p)).
MISCALIBRATIONS = {
    "calibrated": lambda p: p,
    "over-confident": lambda p: 0.5 + 0.5 * (p - 0.5),
    "under-confident": lambda p: np.clip(0.5 + 1.6 * (p - 0.5), 0.0, 1.0),
    "squared": lambda p: p**2,
    "non-monotone": lambda p: np.clip(p + 0.15 * np.sin(4 * np.pi * p), 0.0, 1.0),
    "reversed": lambda p: 1.0 - p,
}


def simulate(rng, n, g, ties=False):
    """p ~ U[0, 1] (or uniform on 7 values), y ~ Bernoulli(g(p))."""
    p = rng.randint(0, 7, size=n) / 6.0 if ties else rng.uniform(size=n)
    y = (rng.uniform(size=n) < g(p)).astype(int)
    return p, y


def structured_tasks():
    """Tasks that are not random: the umbrella, thresholds, Example 2's squared loss."""
    grid = np.linspace(0.0, 1.0, 33)
    squared_loss = np.column_stack([1.0 - grid**2, 1.0 - (1.0 - grid) ** 2])
    tasks = [DecisionTask([[1.0, 0.0], [0.5, 1.0]]), DecisionTask(squared_loss)]
    for mu in (0.05, 0.3, 0.5, 0.77):
        tasks.append(DecisionTask([[mu, 0.0], [0.0, 1.0 - mu]]))  # switch at p = mu
    return tasks


def bound_ratios(task_list, rounding, p, y, w=None):
    """Swap regret of r*_Z o tau_m on (p, y) over the fitted bound, per task."""
    grid_p, grid_y, grid_w = rounded_sample(rounding, p, y, w)
    return [
        task.swap_regret(task.best_response(grid_p), grid_y, grid_w)
        / rounding.swap_regret_bound_
        for task in task_list
    ]
