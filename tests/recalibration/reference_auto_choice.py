"""Slow, obviously-correct twins of the automatic choice of a recalibrator
(skcal/recalibration/_auto.py).

Each is written straight from a definition in the papers, with no
attempt at speed, so that the fast paths can be checked against it.
"""

import math

import numpy as np

from reference_multiclass import comb_calibration_bruteforce
from reference_patching import brier_multiclass


def auto_choice_reference(P, y, w, folds, names, fit_predict, margin_factor=0.05):
    """The choice rule of recalibrator="auto", by loops.

    Every candidate's out-of-fold predictions of all the rows (``fit_predict(
    name, train, test)`` predicts the rows ``test`` from a fit on ``train``)
    are scored by brute-force UC("comb") and the weighted Brier score; the
    first name whose UC is at most the smallest UC plus
    ``margin_factor * sqrt(log(4 m) / (2 sum(w)))`` wins, ``m = 2 C`` the
    number of "comb" utilities (C class-wise, C top-K).
    """
    scores = {}
    for name in names:
        Q = np.zeros(P.shape)
        for train, test in folds:
            predicted = fit_predict(name, train, test)
            for row, i in enumerate(test):
                Q[i] = predicted[row]
        scores[name] = {
            "uc": comb_calibration_bruteforce(Q, y, w),
            "brier": brier_multiclass(Q, y, w),
        }
    best = min(score["uc"] for score in scores.values())
    m = 2 * P.shape[1]
    margin = margin_factor * math.sqrt(math.log(4 * m) / (2 * sum(w)))
    for name in names:
        if scores[name]["uc"] <= best + margin:
            return name, scores
