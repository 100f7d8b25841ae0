"""Slow, obviously-correct twins of CalibrationTester (skcal/tester/_tester.py).

Each is written straight from a definition in the papers, with no
attempt at speed, so that the fast paths can be checked against it.
"""

import numpy as np


def smce_move_gap_bruteforce(y, p, w, lam, n_grid=4001):
    """``sum_i w_i (phi(p_i) - min_s [phi(s) + lam |s - p_i|]) / sum_i w_i``, slowly.

    ``phi_y(s) = (y - s) x(s)`` with ``x`` the smCE witness of ``(p, y)``
    (public ``return_details``), interpolated linearly and constant beyond
    the extreme predictions. The minimum is taken row by row over a uniform
    grid of ``n_grid`` points of [0, 1] plus the predictions, so it is at
    least the exact one: the result is at most the exact gap, and at least
    it minus ``(2 + lam) / (n_grid - 1)`` (``phi_y`` is 2-Lipschitz).
    """
    from skcal import smooth_calibration_error

    y = np.asarray(y, dtype=float)
    p = np.asarray(p, dtype=float)
    w = np.asarray(w, dtype=float)
    _, details = smooth_calibration_error(y, p, sample_weight=w, return_details=True)
    points, witness = details.points, details.witness
    s = np.union1d(np.linspace(0.0, 1.0, n_grid), p)
    x_s = np.interp(s, points, witness)
    total = 0.0
    for yi, pi, wi in zip(y, p, w):
        x_p = np.interp(pi, points, witness)
        phi_p = (yi - pi) * x_p
        psi = np.min((yi - s) * x_s + lam * np.abs(s - pi))
        total += wi * (phi_p - psi)
    return total / w.sum()


def coupling_failures_reference(n_resamples, j, delta):
    """``P(Binomial(B, delta) > j)`` by summing the probability mass function."""
    from math import comb

    return sum(
        comb(n_resamples, i) * delta**i * (1 - delta) ** (n_resamples - i)
        for i in range(j + 1, n_resamples + 1)
    )
