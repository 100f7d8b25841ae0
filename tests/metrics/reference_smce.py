"""Slow, obviously-correct twins of the smooth calibration error (skcal/metrics/_smce.py).

Each is written straight from a definition in the papers, with no
attempt at speed, so that the fast paths can be checked against it.
"""

import numpy as np

from reference_cutoff import residuals


def smce_linprog(y, p, w):
    """max sum_i b_i x_i over |x_i| <= 1, |x_i - x_j| <= |p_i - p_j| (002 eq. (3)).

    One variable per row, rows sorted by p, only adjacent pairs constrained
    (002 Lemma 2); tied rows get |x_i - x_j| <= 0, i.e. one shared value.
    Solved by HiGHS.
    """
    from scipy.optimize import linprog

    order = np.argsort(p, kind="stable")
    ps, b = p[order], residuals(y, p, w)[order]
    n = ps.shape[0]
    A = np.zeros((2 * (n - 1), n))
    for i in range(n - 1):
        A[2 * i, [i, i + 1]] = [-1.0, 1.0]
        A[2 * i + 1, [i, i + 1]] = [1.0, -1.0]
    gap = np.repeat(np.diff(ps), 2)
    # HiGHS's tolerances are absolute (about 1e-7): scale the objective to
    # unit size so residuals that small are not lost in them
    scale = np.abs(b).max()
    if scale == 0:
        return 0.0
    res = linprog(
        -b / scale,
        A_ub=A if n > 1 else None,
        b_ub=gap if n > 1 else None,
        bounds=[(-1.0, 1.0)] * n,
        method="highs",
    )
    assert res.status == 0, res.message
    return -res.fun * scale
