"""Slow, obviously-correct twins of the utility calibration error (skcal/metrics/_multiclass.py).

Each is written straight from a definition in the papers, with no
attempt at speed, so that the fast paths can be checked against it.
"""

import numpy as np

from reference_utilities import predicted_and_realised_bruteforce


def utility_calibration_bruteforce(spec, P, y, w):
    """UC(f, u) (001 eq. 3.2): sup over all O(n^2) intervals [a, b] of distinct v.

    v is summed here in a different order from the fast path, so v values
    that are equal in exact arithmetic are grouped after rounding to 12
    decimals (test data keep distinct values much further apart).
    """
    v, realised = predicted_and_realised_bruteforce(spec, P, y)
    b = w * (realised - v) / w.sum()
    key = np.round(v, 12)
    pts = np.unique(key)
    best = 0.0
    for lo in range(len(pts)):
        for hi in range(lo, len(pts)):
            mask = (key >= pts[lo]) & (key <= pts[hi])
            best = max(best, abs(b[mask].sum()))
    return best


def family_calibration_bruteforce(specs, P, y, w):
    """UC(f, U) = max over the utilities of U (001 eq. 3.5)."""
    return max(utility_calibration_bruteforce(spec, P, y, w) for spec in specs)


def comb_calibration_bruteforce(P, y, w):
    """UC over the "comb" family: class-wise c = 0..C-1 and top-k k = 1..C."""
    C = P.shape[1]
    specs = [("class-wise", c) for c in range(C)] + [("top-k", k) for k in range(1, C + 1)]
    return family_calibration_bruteforce(specs, P, y, w)
