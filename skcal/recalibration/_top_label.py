"""The top-label map of :class:`AutoRecalibrator`'s output.

A multiclass forecast is *top-label calibrated* when its largest probability
(the confidence ``c``) is the probability that its top class is right
(Gupta and Ramdas 2022). A map fitted for the log-loss within a parametric
family -- matrix scaling, Dirichlet calibration, a stack of such maps -- is
calibrated along the statistics of its family only, and its confidence can
stay miscalibrated where per-class binning maps are not. The top-label map
recalibrates the confidence alone: ``c -> g(c)`` by beta calibration (Kull,
Silva Filho and Flach 2017; monotone, three parameters, the identity among
its maps) fitted on whether the top class was right, and the other classes
share the rest, ``1 - g(c)``, in their proportions.

Under the log-loss the map changes a row's loss by exactly the change of the
binary log-loss of the event "the top class is right": a row of class ``y =
t`` (the top class) scores ``-log g(c)`` for ``-log c``; a row of another
class ``y`` scores ``-log(q_y / s) - log(1 - g(c))`` for ``-log(q_y / s) -
log s`` with ``s = 1 - c`` the mass of the other classes. Fitting the map
is a binary calibration problem, and its gain in log-loss is its gain on
that binary event.
"""

from __future__ import annotations

import numpy as np

from ._common import fit_recalibrator, predict_recalibrator, smoothed_targets
from ._scaling import BetaCalibration

__all__ = ["apply_top_label", "fit_top_label"]


def _confidence(Q):
    """``(top, c)``: each row's first largest class and its probability."""
    top = Q.argmax(axis=1)
    return top, Q[np.arange(Q.shape[0]), top]


def _binary(c):
    return np.column_stack([1.0 - c, c])


def fit_top_label(Q, y, w):
    """The map of the confidence of ``Q``, fitted on rows of classes ``y``.

    A :class:`BetaCalibration` of the two columns ``(1 - c, c)`` on the
    outcome "the top class is ``y``", with weights ``w``, fitted to Platt's
    smoothed targets (1999; ``smoothed_targets`` of the recalibrators'
    shared internals): a right row targets ``(N1 + 1) / (N1 + 2)``, a wrong
    one ``1 / (N0 + 2)``, ``N1`` and ``N0`` the effective numbers of right
    and wrong rows (Kish's, as every count of ``AutoRecalibrator``: the
    counts for unit weights, unchanged when every weight is scaled). A
    confident model makes few mistakes, and
    a map fitted to a handful of them as certain outcomes follows their
    noise; the smoothed targets fit it to what those counts support. (The
    cross-entropy to a target ``t`` is the log-loss of the row counted as
    right at weight ``t`` and as wrong at ``1 - t``: the fit sees each row
    twice.) None when the top class is right in every row or in none:
    nothing to learn about the confidence from one outcome.
    """
    top, c = _confidence(Q)
    right = top == y
    kept = w > 0
    if not kept.any() or right[kept].all() or not right[kept].any():
        return None
    t = smoothed_targets(right.astype(np.intp), w, 2)[:, 1]
    B = _binary(c)
    # the rows are AutoRecalibrator's own outputs, validated once already
    return fit_recalibrator(
        BetaCalibration(), np.vstack([B, B]),
        np.concatenate([np.ones(c.shape[0], np.int64), np.zeros(c.shape[0], np.int64)]),
        np.concatenate([w * t, w * (1.0 - t)]),
    )


def apply_top_label(Q, model):
    """``Q`` with its confidence mapped by ``model`` and the rest rescaled.

    Each row's top class (the first largest) gets ``g = model(c)``; the other
    classes share ``1 - g`` in proportion to their probabilities, or evenly
    where they all have probability 0. The map recalibrates the confidence
    of the top class and keeps that class (as the top-label calibrators of
    Gupta and Ramdas keep the predicted label): where ``g`` would fall below
    the value ``m = r / (s + r)`` at which the runner-up (probability ``r``,
    the others' sum ``s``) would reach it, the top class gets ``m`` (the two
    tie there). Rows still sum to 1 and keep the order of their classes.
    ``Q`` is not modified.
    """
    Q = np.asarray(Q, dtype=np.float64)
    rows = np.arange(Q.shape[0])
    top, c = _confidence(Q)
    g = predict_recalibrator(model, _binary(c))[:, 1]
    out = Q.copy()
    out[rows, top] = 0.0
    # the others' sum from the others themselves (not 1 - c): exact where
    # they are tiny, and exactly 0 where they are all 0
    rest = out.sum(axis=1)
    if Q.shape[1] > 1:
        runner = out.max(axis=1)
        with np.errstate(invalid="ignore"):
            tie = np.where(rest > 0.0, runner / (rest + runner), 1.0 / Q.shape[1])
        g = np.maximum(g, tie)
    empty = rest == 0.0
    scale = np.divide(1.0 - g, rest, out=np.zeros_like(g), where=~empty)
    out *= scale[:, None]
    if empty.any():
        K = Q.shape[1]
        out[empty] = ((1.0 - g[empty]) / (K - 1))[:, None]
    out[rows, top] = g
    return out
