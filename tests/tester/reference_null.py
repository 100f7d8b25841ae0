"""Slow, obviously-correct twins of the tester's resampling null (skcal/tester/_null.py).

Each is written straight from a definition in the papers, with no
attempt at speed, so that the fast paths can be checked against it.
"""

import numpy as np

from reference_smce import smce_linprog


def row_null_draw_reference(function, y, p, w, seed):
    """One null draw ``y* ~ Bernoulli(p)`` row by row, measured by the public function.

    Uses the generator of ``seed`` as the tester's weighted path does: one
    uniform per row, in row order.
    """
    u = np.random.default_rng(seed).random(len(p))
    y_star = np.array([1.0 if ui < pi else 0.0 for ui, pi in zip(u, p)])
    return function(y_star, p, sample_weight=w)


def exact_null_law_reference(function, p):
    """Exact law of ``function(y*, p)`` under ``y*_i ~ Bernoulli(p_i)`` (small n).

    Enumerates all ``2^n`` outcome vectors; returns ``{value: probability}``
    with values rounded to 12 digits.
    """
    import itertools

    law = {}
    for outcome in itertools.product((0.0, 1.0), repeat=len(p)):
        prob = 1.0
        for yi, pi in zip(outcome, p):
            prob *= pi if yi == 1.0 else 1.0 - pi
        if prob == 0.0:
            continue
        value = round(float(function(np.array(outcome), np.asarray(p))), 12)
        law[value] = law.get(value, 0.0) + prob
    return law


def smce_bernoulli_reference(values, u, scale):
    """smCE of one row per value, weight ``scale``, outcome ``u < values`` (the LP)."""
    values = np.asarray(values, dtype=float)
    y = (np.asarray(u) < values).astype(float)
    return smce_linprog(y, values, np.full(values.shape[0], float(scale)))
