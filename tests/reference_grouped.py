"""Slow, obviously-correct twins of the grouped statistic (skcal/_grouped.py).

Each is written straight from a definition in the papers, with no
attempt at speed, so that the fast paths can be checked against it.
"""

import numpy as np


def grouped_reference(y, p, w):
    """(values, weights, positives) by a dictionary over the distinct predictions."""
    sums = {}
    for yi, pi, wi in zip(y.tolist(), p.tolist(), w.tolist()):
        total, positive = sums.get(pi, (0.0, 0.0))
        sums[pi] = (total + wi, positive + wi * yi)
    values = sorted(sums)
    return (
        np.array(values),
        np.array([sums[v][0] for v in values]),
        np.array([sums[v][1] for v in values]),
    )
