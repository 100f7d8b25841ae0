"""Slow, obviously-correct twins of the cutoff bounds (skcal/_kernels/_members.pyx).

``cutoff_bounds`` puts rows into 1024 buckets by a non-decreasing map of
their value and bounds the cutoff error from below and above; these twins
follow its docstring literally: the map from ``math.frexp``, the bounds by
trying every pair of occupied buckets.
"""

import math

import numpy as np

BUCKETS = 1024
HALF = 512


def half_bucket(x):
    """Index in [0, 512) of x in [0, 0.5]: 16 per binade of x, 2^-33 and below at 0."""
    if not x > 0.0:
        return 0
    m, e = math.frexp(x)  # x = m 2^e, m in [0.5, 1)
    index = 16 * e + int((2.0 * m - 1.0) * 16.0) + HALF
    return min(max(index, 0), HALF - 1)


def bucket(v):
    v = float(v)
    if v < 0.5:
        return half_bucket(v)
    return BUCKETS - 1 - half_bucket(1.0 - v)


def cutoff_bounds_slow(v, event, w):
    """``(lower, upper, absolute)``: sums over rows, not divided by the total weight."""
    r = w * (event - v)
    buckets = np.array([bucket(x) for x in v])
    occupied = np.unique(buckets)
    pos = np.array([r[(buckets == b) & (r > 0)].sum() for b in occupied])
    neg = np.array([r[(buckets == b) & (r <= 0)].sum() for b in occupied])
    total = pos + neg
    lower = upper = 0.0
    for a in range(len(occupied)):
        for b in range(a, len(occupied)):
            # every range of buckets is a feasible interval of values
            lower = max(lower, abs(total[a : b + 1].sum()))
            # an interval: part of its first bucket, all between, part of its last
            inner = total[a + 1 : b].sum()
            if a == b:
                upper = max(upper, pos[a], -neg[a])
            else:
                upper = max(upper, pos[a] + inner + pos[b], -(neg[a] + inner + neg[b]))
    return lower, upper, float(np.abs(r).sum())
