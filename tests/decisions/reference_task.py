"""Slow, obviously-correct twins of decision tasks (skcal/decisions/_task.py).

Each is written straight from a definition in the papers, with no
attempt at speed, so that the fast paths can be checked against it.
"""

import numpy as np


def best_response_bruteforce(U, P):
    """First action with the largest expected utility, by a loop over actions."""
    actions = []
    for row in P:
        values = [
            sum(row[k] * U[a, k] for k in range(U.shape[1])) for a in range(len(U))
        ]
        best = 0
        for a in range(1, len(U)):
            if values[a] > values[best]:
                best = a
        actions.append(best)
    return np.array(actions)


def swap_regret_bruteforce(U, Q, y, w):
    """max over all A^A swap maps of the weighted mean gain (000 eq. (1), Def. 4.4).

    ``Q`` holds the probability of every action in every round (one-hot rows
    for deterministic actions).
    """
    import itertools

    A = U.shape[0]
    rows = np.arange(len(y))
    best = -np.inf
    for sigma in itertools.product(range(A), repeat=A):
        gain = (Q @ (U[list(sigma)] - U))[rows, y]
        best = max(best, np.dot(w, gain) / w.sum())
    return best
