"""Platt scaling on the probability itself, for inputs with exact 0 and 1.

:class:`~skcal.recalibration.SigmoidCalibration` maps ``logit(p)``; on a
model whose probabilities take the values 0 and 1 exactly (a random forest's
vote fractions, a tree's leaf frequencies) the logit is undefined there and
the floor of the logarithm (``2.2e-16``) turns every unanimous vote into the
arbitrary feature ``+-36``. Platt's original map reads the score as it is:
``sigmoid(a * p + b)``, which is defined on all of ``[0, 1]``. It is the
candidate ``"sigmoid-probability"`` of :class:`AutoRecalibrator`, offered
when the calibration probabilities contain an exact 0 or 1.
"""

from __future__ import annotations

from ._scaling import SigmoidCalibration

__all__ = []


class ProbabilitySigmoidCalibration(SigmoidCalibration):
    """Platt scaling on each class's probability, with target smoothing.

    Platt, J. C. (1999), "Probabilistic outputs for support vector machines
    and comparisons to regularized likelihood methods". For two classes the
    calibrated probability of the second class is ``sigmoid(a * p + b)``,
    ``p`` the input probability of the second class; for ``C > 2`` classes
    one such map per class (``P[:, k]`` against the rest), then each row
    divided by its sum. This is scikit-learn's
    ``CalibratedClassifierCV(method="sigmoid")`` on a model's probabilities.
    The fit (Platt's smoothed targets, weights, start at ``a = 1, b = 0``)
    is :class:`SigmoidCalibration`'s; only the feature differs: ``p``
    instead of ``logit(p)``, so exact 0 and 1 are ordinary inputs.

    Parameters
    ----------
    labels : array-like of shape (n_classes,), default=None
        The class of each column of ``X``, sorted; by default the classes
        of ``y`` (all must then occur).
    target_smoothing : bool, default=True
        Platt's smoothed targets; ``False`` fits the plain log-loss.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_classes_ : int
    coef_ : ndarray of shape (n_problems,)
        Slope ``a`` of each map (one for two classes, else one per class).
    intercept_ : ndarray of shape (n_problems,)
        Intercept ``b`` of each map.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.recalibration._sigmoid_probability import (
    ...     ProbabilitySigmoidCalibration)
    >>> rng = np.random.default_rng(0)
    >>> p = rng.integers(0, 11, 3000) / 10  # vote fractions: 0, 0.1, ..., 1
    >>> truth = 1 / (1 + np.exp(2 - 4 * p))  # 0.12 at p = 0, 0.88 at p = 1
    >>> y = (rng.uniform(size=3000) < truth).astype(int)
    >>> cal = ProbabilitySigmoidCalibration().fit(p, y)
    >>> q = cal.predict_proba([0.0, 1.0])[:, 1]
    >>> bool(abs(q[0] - 0.12) < 0.05 and abs(q[1] - 0.88) < 0.05)
    True
    """

    @staticmethod
    def _features(P):
        if P.shape[1] == 2:
            return P[:, 1:].copy()
        return P.copy()
