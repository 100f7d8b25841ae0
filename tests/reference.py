"""Slow, obviously-correct implementations used only by the tests.

Each function is written straight from a definition in the papers, with no
attempt at speed, so that the fast paths in skcal can be checked against it.
All take already-validated arrays ``y`` (0/1 floats), ``p`` and ``w``.
"""

import numpy as np


def residuals(y, p, w):
    """b_i = w_i (y_i - p_i) / sum(w)."""
    return w * (y - p) / w.sum()


# --- cutoff calibration error ------------------------------------------------


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


# --- smooth calibration error (smCE) -------------------------------------------
# (section owned by the smCE work; insert below this line)


# --- soft-binned calibration decision loss (SCDL) and binned ECE ---------------
# (section owned by the SCDL work; insert below this line)


# --- calibration decision loss (CDL) -------------------------------------------
# (section owned by the CDL work; insert below this line)
