"""Estimator-style classes for the calibration measures.

Each class holds a measure's options (so ``get_params``, ``set_params``,
``clone`` and ``repr`` work as for any scikit-learn estimator), is callable as
``measure(y_true, y_prob, sample_weight=None)`` and builds its scorer with
``scorer()``. The mathematics lives once, in the functions of
:mod:`skcal.metrics`; these classes only forward their options.
"""

from sklearn.base import BaseEstimator
from sklearn.utils import Bunch

from . import metrics
from .scorers import CalibrationScorer

__all__ = [
    "BinnedECE",
    "CalibrationDecisionLoss",
    "CutoffCalibrationError",
    "SmoothCalibrationError",
    "SoftBinnedCDL",
]


class _CalibrationMeasure(BaseEstimator):
    """Shared behaviour; subclasses name their function and detail outputs."""

    # The measure function (looked up in skcal.metrics by this name, so the
    # scorer pickles as a reference to a module-level function).
    _function_name = None
    # Keyword that makes the function return details, and how to name them
    # when it returns a tuple rather than a Bunch.
    _details_flag = "return_details"
    _details_names = ()
    # Scorer name without the "neg_" prefix.
    _score_name = None

    @property
    def _function(self):
        return getattr(metrics, self._function_name)

    def __call__(self, y_true, y_prob, sample_weight=None):
        """Value of the measure on ``(y_true, y_prob)``.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
        y_prob : array-like of shape (n_samples,) or (n_samples, n_classes)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        value : float
        """
        return self._function(
            y_true, y_prob, sample_weight=sample_weight, **self.get_params()
        )

    def details(self, y_true, y_prob, sample_weight=None):
        """Value and everything the measure can report about it.

        Returns
        -------
        details : sklearn.utils.Bunch
            ``value`` plus the measure's details (see the function's
            documentation for what each one reports).
        """
        value, *rest = self._function(
            y_true,
            y_prob,
            sample_weight=sample_weight,
            **self.get_params(),
            **{self._details_flag: True},
        )
        if len(rest) == 1 and isinstance(rest[0], dict):
            return Bunch(value=value, **rest[0])
        return Bunch(value=value, **dict(zip(self._details_names, rest)))

    def scorer(self):
        """An sklearn scorer for this measure with these options.

        Greater is better (the scorer returns minus the measure) and it
        scores ``predict_proba`` output; see
        :class:`skcal.scorers.CalibrationScorer`.
        """
        return CalibrationScorer(self._function, sign=-1, kwargs=self.get_params())


class SmoothCalibrationError(_CalibrationMeasure):
    """Smooth calibration error as an estimator-style object.

    Thin wrapper of :func:`skcal.smooth_calibration_error`; ``details``
    returns the optimal witness (``points``, ``witness``).

    Parameters
    ----------
    pos_label : int, float, bool or str, default=None
    multiclass : {"top-label", "raise"}, default="top-label"

    Examples
    --------
    >>> from skcal import SmoothCalibrationError
    >>> measure = SmoothCalibrationError()
    >>> round(measure([0, 1, 1], [0.2, 0.5, 0.9]), 4)
    0.1533
    >>> scorer = measure.scorer()
    """

    _function_name = "smooth_calibration_error"
    _details_flag = "return_witness"
    _details_names = ("points", "witness")
    _score_name = "smooth_calibration_error"

    def __init__(self, *, pos_label=None, multiclass="top-label"):
        self.pos_label = pos_label
        self.multiclass = multiclass


class CutoffCalibrationError(_CalibrationMeasure):
    """Cutoff calibration error as an estimator-style object.

    Thin wrapper of :func:`skcal.cutoff_calibration_error`; ``details``
    returns the worst ``interval`` and its ``sign``.

    Parameters
    ----------
    pos_label : int, float, bool or str, default=None
    multiclass : {"top-label", "raise"}, default="top-label"

    Examples
    --------
    >>> from skcal import CutoffCalibrationError
    >>> measure = CutoffCalibrationError()
    >>> round(measure([0, 0, 1, 1], [0.2, 0.4, 0.6, 0.9]), 6)
    0.15
    >>> measure.details([0, 0, 1, 1], [0.2, 0.4, 0.6, 0.9]).interval
    (0.2, 0.4)
    """

    _function_name = "cutoff_calibration_error"
    _details_flag = "return_interval"
    _details_names = ("interval", "sign")
    _score_name = "cutoff_calibration_error"

    def __init__(self, *, pos_label=None, multiclass="top-label"):
        self.pos_label = pos_label
        self.multiclass = multiclass


class SoftBinnedCDL(_CalibrationMeasure):
    """Soft-binned calibration decision loss (SCDL) as an estimator-style object.

    Thin wrapper of :func:`skcal.soft_binned_cdl`; ``details`` returns the
    chosen ``m``, the per-level values and the swap-regret bound.

    Parameters
    ----------
    m : int or None, default=None
        None for the self-balancing SCDL; an integer for ``SCDL_m``.
    pos_label : int, float, bool or str, default=None
    multiclass : {"top-label", "raise"}, default="top-label"

    Examples
    --------
    >>> from skcal import SoftBinnedCDL
    >>> measure = SoftBinnedCDL(m=4)
    >>> measure.get_params()["m"]
    4
    >>> value = measure([0, 1, 1, 0], [0.1, 0.8, 0.6, 0.3])
    """

    _function_name = "soft_binned_cdl"
    _score_name = "soft_binned_cdl"

    def __init__(self, *, m=None, pos_label=None, multiclass="top-label"):
        self.m = m
        self.pos_label = pos_label
        self.multiclass = multiclass


class CalibrationDecisionLoss(_CalibrationMeasure):
    """Calibration decision loss (CDL) as an estimator-style object.

    Thin wrapper of :func:`skcal.calibration_decision_loss`.

    Parameters
    ----------
    pos_label : int, float, bool or str, default=None
    multiclass : {"top-label", "raise"}, default="top-label"

    Examples
    --------
    >>> from skcal import CalibrationDecisionLoss
    >>> measure = CalibrationDecisionLoss()
    >>> measure([0, 0], [0.0, 0.0])
    0.0
    """

    _function_name = "calibration_decision_loss"
    _score_name = "calibration_decision_loss"

    def __init__(self, *, pos_label=None, multiclass="top-label"):
        self.pos_label = pos_label
        self.multiclass = multiclass


class BinnedECE(_CalibrationMeasure):
    """Binned expected calibration error as an estimator-style object.

    Thin wrapper of :func:`skcal.binned_ece`.

    Parameters
    ----------
    n_bins : int, default=15
    strategy : {"uniform", "quantile"}, default="uniform"
    norm : {"l1", "l2", "max"}, default="l1"
    pos_label : int, float, bool or str, default=None
    multiclass : {"top-label", "raise"}, default="top-label"

    Examples
    --------
    >>> from skcal import BinnedECE
    >>> measure = BinnedECE(n_bins=2)
    >>> round(measure([0, 1, 1, 1], [0.2, 0.4, 0.7, 0.9]), 4)
    0.2
    """

    _function_name = "binned_ece"
    _score_name = "binned_ece"

    def __init__(
        self,
        *,
        n_bins=15,
        strategy="uniform",
        norm="l1",
        pos_label=None,
        multiclass="top-label",
    ):
        self.n_bins = n_bins
        self.strategy = strategy
        self.norm = norm
        self.pos_label = pos_label
        self.multiclass = multiclass


# Every measure class, in the order the scorer registry lists them.
_MEASURE_CLASSES = [
    SmoothCalibrationError,
    CutoffCalibrationError,
    SoftBinnedCDL,
    CalibrationDecisionLoss,
    BinnedECE,
]
