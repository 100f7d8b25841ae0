"""Slow, obviously-correct twins of the cutoff calibration error (skcal/metrics/_cutoff.py).

Each is written straight from a definition in the papers, with no
attempt at speed, so that the fast paths can be checked against it.
"""

import numpy as np


def residuals(y, p, w):
    """b_i = w_i (y_i - p_i) / sum(w)."""
    return w * (y - p) / w.sum()


def cutoff_bruteforce(y, p, w):
    """sup over all intervals [a, b] with end points at data values (000 Def. 2.5)."""
    b = residuals(y, p, w)
    pts = np.unique(p)
    best = 0.0
    for i, a in enumerate(pts):
        for hi in pts[i:]:
            mask = (p >= a) & (p <= hi)
            best = max(best, abs(b[mask].sum()))
    return best
