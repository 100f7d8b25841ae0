"""Slow, obviously-correct twin of the choice rule of AutoRecalibrator."""

import math


def one_se_choice_reference(losses, w):
    """The one-standard-error choice, by loops over plain Python floats.

    ``losses[k][i]``: loss of candidate ``k`` (the identity is ``k = 0``) on
    unit ``i``; ``w[i]`` its weight. Mean loss of each candidate; the best is
    the smallest (first on ties); the standard error of candidate ``k`` is
    that of the weighted mean of ``d_i = losses[k][i] - losses[best][i]``,
    ``sqrt(sum w_i^2 (d_i - dbar)^2) / W * sqrt(m / (m - 1))`` with
    ``m = W^2 / sum w_i^2``. The choice: the first candidate with a finite
    mean, no larger than the identity's, within its standard error of the
    best.
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
    best = min(range(len(means)), key=lambda k: (means[k], k))
    m_eff = W * W / sum(wi * wi for wi in w)
    for k, row in enumerate(losses):
        if math.isinf(means[k]) or means[k] > means[0]:
            continue
        if k == best:
            return k
        d = [a - b for a, b in zip(row, losses[best])]
        dbar = sum(wi * di for wi, di in zip(w, d)) / W
        if m_eff <= 1:
            se = 0.0 if all(di == dbar for di in d) else math.inf
        else:
            s = sum(wi * wi * (di - dbar) ** 2 for wi, di in zip(w, d))
            se = math.sqrt(s * m_eff / (m_eff - 1)) / W
        if means[k] - means[best] <= se:
            return k
    return best
