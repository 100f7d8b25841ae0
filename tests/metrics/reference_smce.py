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


def smce_isotonic(y, p, w):
    """smCE as ``|B_K|`` plus an L1 isotonic regression, each term by definition.

    A second twin, from the dual of ``skcal/_kernels/_flow.pyx``:
    ``min sum_k |G_k - G_{k-1}| + sum_{k<K} d_k |G_k - B_k|`` over
    ``G_0 = 0``, ``G_K = B_K``. An interior level set of ``G`` above (or
    below) both neighbours could be moved towards them, saving twice the move
    in the first sum and losing at most ``sum d_k <= 1`` times it in the
    second, so some optimal ``G`` is monotone from 0 to ``B_K``; then the
    first sum is ``|B_K|``, and with ``s = sign(B_K)``, ``x_k = s B_k`` and
    ``c = |B_K|``::

        smCE = c + sum_k d_k dist(x_k, [0, c])
                 + min { sum_k d_k |g_k - clip(x_k, 0, c)| :
                         0 <= g_1 <= ... <= g_{K-1} <= c }.

    The last term (an L1 isotonic regression with weights ``d_k``) is solved
    here as a linear program by HiGHS, with no use of the primal of
    ``smce_linprog``.
    """
    from scipy.optimize import linprog

    order = np.argsort(p, kind="stable")
    ps, b = p[order], residuals(y, p, w)[order]
    values, first = np.unique(ps, return_index=True)
    B = np.cumsum(np.add.reduceat(b, first))
    c = abs(B[-1])
    x = (1.0 if B[-1] >= 0 else -1.0) * B[:-1]
    d = np.diff(values)
    clipped = np.clip(x, 0.0, c)
    value = c + float(np.sum(d * np.abs(x - clipped)))
    m = x.shape[0]
    if m == 0 or c == 0.0:
        return value
    # variables g (m) then e (m): e_k >= |g_k - clipped_k|, g_k <= g_{k+1}
    eye = np.eye(m)
    rise = (eye - np.eye(m, k=1))[: m - 1]
    A = np.block([[eye, -eye], [-eye, -eye], [rise, np.zeros((m - 1, m))]])
    rhs = np.concatenate([clipped, -clipped, np.zeros(m - 1)])
    # HiGHS's tolerances are absolute: costs and levels of unit size
    scale_d, scale_c = d.max(), c
    res = linprog(
        np.concatenate([np.zeros(m), d / scale_d]),
        A_ub=A,
        b_ub=rhs / scale_c,
        bounds=[(0.0, 1.0)] * m + [(0.0, None)] * m,
        method="highs",
    )
    assert res.status == 0, res.message
    return value + res.fun * scale_d * scale_c
