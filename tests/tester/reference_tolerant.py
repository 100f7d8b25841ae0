"""Slow, obviously-correct twins of the tolerant test (skcal/tester/_tolerant.py).

Each is written straight from a definition in the papers, with no
attempt at speed, so that the fast paths can be checked against it.
"""

import numpy as np

from reference_multiclass import comb_calibration_bruteforce


def design_gap_reference(values, weights):
    """``max_m sum_i w_i |v_i - m| - |m - vbar|`` (normalised ``w``), slowly.

    The maximum over ``m`` in the predictions, their weighted mean and a
    uniform grid of [0, 1], each sum computed directly: the function is
    piecewise linear with kinks at the predictions and the mean only, so this
    finite maximum is the supremum over [0, 1].
    """
    v = np.asarray(values, dtype=float)
    w = np.asarray(weights, dtype=float)
    w = w / w.sum()
    mean = float(np.sum(w * v))
    best = -np.inf
    for m in list(v) + [mean] + list(np.linspace(0.0, 1.0, 101)):
        value = sum(wi * abs(vi - m) for vi, wi in zip(v, w)) - abs(m - mean)
        best = max(best, value)
    return best


def interval_noise_reference(zeta, u, p, w):
    """``R = int_0^1 |sum_i w_i zeta_i s_i(t)| dt``, interval by interval.

    ``s_i = +1`` on ``[p_i, u_i)``, ``-1`` on ``[u_i, p_i)``; ``M(t)`` is
    constant between consecutive end points, so it is read at each midpoint
    and multiplied by the length. ``w`` is normalised here.
    """
    w = np.asarray(w, dtype=float) / np.sum(w)
    ends = np.unique(np.r_[0.0, 1.0, u, p])
    total = 0.0
    for left, right in zip(ends[:-1], ends[1:]):
        t = (left + right) / 2
        m = 0.0
        for zi, ui, pi, wi in zip(zeta, u, p, w):
            if pi <= t < ui:
                m += wi * zi
            elif ui <= t < pi:
                m -= wi * zi
        total += abs(m) * (right - left)
    return total


def null_tolerance_reference(Q, w, seed, n_draws):
    """Median over ``n_draws`` of UC("comb") of ``Q`` against y* ~ Categorical(Q).

    Row by row: u_i ~ U(0, 1) from ``RandomState(seed)`` (n numbers per draw,
    in row order), y*_i the first class whose running sum of ``Q_i`` exceeds
    ``u_i`` times the row total (the last class if none does).
    """
    rng = np.random.RandomState(seed)
    n, C = Q.shape
    values = []
    for _ in range(n_draws):
        u = rng.uniform(size=n)
        y_star = []
        for i in range(n):
            running, total = [], 0.0
            for j in range(C):
                total += Q[i, j]
                running.append(total)
            threshold = u[i] * running[-1]
            chosen = C - 1
            for j in range(C):
                if running[j] > threshold:
                    chosen = j
                    break
            y_star.append(chosen)
        values.append(comb_calibration_bruteforce(Q, np.array(y_star), w))
    values.sort()
    middle = len(values) // 2
    if len(values) % 2:
        return values[middle]
    return 0.5 * (values[middle - 1] + values[middle])
