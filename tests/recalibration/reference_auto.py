"""Slow, obviously-correct twin of the choice rule of AutoRecalibrator."""

import math


def argmin_choice_reference(losses, w):
    """The argmin choice, by loops over plain Python floats.

    ``losses[k][i]``: loss of candidate ``k`` (the identity is ``k = 0``) on
    unit ``i``; ``w[i]`` its weight. Mean loss of each candidate (infinite
    if any loss is); the choice is the first candidate whose finite mean is
    at most the smallest mean plus ``1e-12`` of its magnitude; 0 when every
    mean is infinite.
    """
    W = sum(w)
    means = []
    for row in losses:
        if any(math.isinf(v) for v in row):
            means.append(math.inf)
        else:
            means.append(sum(wi * v for wi, v in zip(w, row)) / W)
    if all(math.isinf(m) for m in means):
        return 0
    low = min(means)
    for k, m in enumerate(means):
        if m <= low + 1e-12 * abs(low):
            return k
    raise AssertionError("unreachable")
