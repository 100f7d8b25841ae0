"""Slow, obviously-correct twins of the cutoff bounds (skcal/_kernels/_members.pyx).

``cutoff_bounds`` puts rows into 4096 buckets by a non-decreasing map of
their value and bounds the cutoff error from below and above; these twins
follow its docstring literally: the map from ``math.frexp``, the bounds by
trying every pair of occupied buckets.
"""

import math

import numpy as np

BUCKETS = 4096
HALF = 2048


def half_bucket(x):
    """Index in [0, 2048) of x in [0, 0.5]: 64 per binade of x, 2^-33 and below at 0."""
    if not x > 0.0:
        return 0
    m, e = math.frexp(x)  # x = m 2^e, m in [0.5, 1)
    index = 64 * e + int((2.0 * m - 1.0) * 64.0) + HALF
    return min(max(index, 0), HALF - 1)


def bucket(v):
    v = float(v)
    if v < 0.5:
        return half_bucket(v)
    return BUCKETS - 1 - half_bucket(1.0 - v)


def linear_bucket(v, origin, scale):
    """``floor((v - origin) * scale)`` clamped to ``[0, 4096)``: the linear map."""
    x = (float(v) - origin) * scale
    return int(math.floor(min(max(x, 0.0), BUCKETS - 1.0)))


def cutoff_bounds_slow(v, event, w, origin=0.0, scale=0.0):
    """``(lower, upper, absolute)``: sums over rows, not divided by the total weight.

    With ``scale > 0`` the buckets are the linear map's, else the binade map's.
    """
    r = w * (event - v)
    if scale > 0.0:
        buckets = np.array([linear_bucket(x, origin, scale) for x in v])
    else:
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


def level(p):
    """0 for p >= 1, l for p in [2^-l, 2^-l+1), 65 below 2^-64 (zeros too)."""
    if not p > 0.0:
        return 65
    _, e = math.frexp(float(p))  # p in [2^(e-1), 2^e)
    return min(max(1 - e, 0), 65)


def top_k_mass_bound_slow(P, rank, w):
    """``out[K]``, K = 1..C: the bound of ``sum_i w_i |e_iK - v_iK|`` (docstring of the kernel)."""
    n, C = P.shape
    out = np.zeros(C + 1)
    for i in range(n):
        row = P[i]
        t = float(np.sum(row))
        levels = np.array([level(p) for p in row])
        delta = 4.0 * (C + 70) * 2.0**-53 * (t + 1.0)
        # per level l: how many entries lie at levels <= l, and the sum of the others
        counts = [int(np.sum(levels <= lv)) for lv in range(66)]
        below = [float(row[levels > lv].sum()) for lv in range(66)]
        for K in range(1, C + 1):
            if K < rank[i]:
                bound = t
            else:
                # the rest of the row, for the levels whose entries the top K hold
                rest = [t] + [b for c, b in zip(counts, below) if c <= K]
                bound = abs(1.0 - t) + min(rest)
            out[K] += w[i] * (bound + delta)
    return out
