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
from ._scorer import CalibrationScorer

__all__ = [
    "BinnedECE",
    "CalibrationDecisionLoss",
    "CutoffCalibrationError",
    "LowerDistanceToCalibration",
    "SmoothCalibrationError",
    "SoftBinnedCDL",
    "UtilityCalibrationError",
]


class _CalibrationMeasure(BaseEstimator):
    """Shared behaviour; subclasses name their function and detail outputs."""

    # The measure function (looked up in skcal.metrics by this name, so the
    # scorer pickles as a reference to a module-level function).
    _function_name = None
    # Scorer name without the "neg_" prefix.
    _score_name = None
    # What the measure reads of predict_proba: one probability per sample
    # ("binary") or the whole matrix ("full"); see CalibrationScorer.
    _proba = "binary"

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
            y_true, y_prob, sample_weight=sample_weight, **self.get_params(deep=False)
        )

    def details(self, y_true, y_prob, sample_weight=None):
        """Value and everything the measure can report about it.

        Returns
        -------
        details : sklearn.utils.Bunch
            ``value`` plus the measure's details (see the function's
            documentation for what each one reports).
        """
        value, details = self._function(
            y_true,
            y_prob,
            sample_weight=sample_weight,
            **self.get_params(deep=False),
            return_details=True,
        )
        return Bunch(value=value, **details)

    def scorer(self):
        """An sklearn scorer for this measure with these options.

        Greater is better (the scorer returns minus the measure) and it
        scores ``predict_proba`` output; see
        :class:`skcal.scorers.CalibrationScorer`.
        """
        return CalibrationScorer(
            self._function, sign=-1, kwargs=self.get_params(deep=False), proba=self._proba
        )


class SmoothCalibrationError(_CalibrationMeasure):
    """Smooth calibration error as an estimator-style object.

    Thin wrapper of :func:`skcal.smooth_calibration_error`; ``details``
    returns the optimal witness (``points``, ``witness``).

    Parameters
    ----------
    pos_label : int, float, bool or str, default=None
    multiclass : {"top-label", "raise"}, default="top-label"
    labels : array-like of shape (n_classes,), default=None
        The class of each ``predict_proba`` column; the scorer fills it from
        the estimator's ``classes_`` when None.

    Examples
    --------
    >>> from skcal import SmoothCalibrationError
    >>> measure = SmoothCalibrationError()
    >>> round(measure([0, 1, 1], [0.2, 0.5, 0.9]), 4)
    0.1533
    >>> scorer = measure.scorer()
    """

    _function_name = "smooth_calibration_error"
    _score_name = "smooth_calibration_error"

    def __init__(self, *, pos_label=None, multiclass="top-label", labels=None):
        self.pos_label = pos_label
        self.multiclass = multiclass
        self.labels = labels


class CutoffCalibrationError(_CalibrationMeasure):
    """Cutoff calibration error as an estimator-style object.

    Thin wrapper of :func:`skcal.cutoff_calibration_error`; ``details``
    returns the worst ``interval`` and its ``sign``.

    Parameters
    ----------
    pos_label : int, float, bool or str, default=None
    multiclass : {"top-label", "raise"}, default="top-label"
    labels : array-like of shape (n_classes,), default=None
        The class of each ``predict_proba`` column; the scorer fills it from
        the estimator's ``classes_`` when None.

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
    _score_name = "cutoff_calibration_error"

    def __init__(self, *, pos_label=None, multiclass="top-label", labels=None):
        self.pos_label = pos_label
        self.multiclass = multiclass
        self.labels = labels


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
    labels : array-like of shape (n_classes,), default=None
        The class of each ``predict_proba`` column; the scorer fills it from
        the estimator's ``classes_`` when None.

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

    def __init__(self, *, m=None, pos_label=None, multiclass="top-label", labels=None):
        self.m = m
        self.pos_label = pos_label
        self.multiclass = multiclass
        self.labels = labels


class CalibrationDecisionLoss(_CalibrationMeasure):
    """Calibration decision loss (CDL) as an estimator-style object.

    Thin wrapper of :func:`skcal.calibration_decision_loss`.

    Parameters
    ----------
    pos_label : int, float, bool or str, default=None
    multiclass : {"top-label", "raise"}, default="top-label"
    labels : array-like of shape (n_classes,), default=None
        The class of each ``predict_proba`` column; the scorer fills it from
        the estimator's ``classes_`` when None.

    Examples
    --------
    >>> from skcal import CalibrationDecisionLoss
    >>> measure = CalibrationDecisionLoss()
    >>> measure([0, 0], [0.0, 0.0])
    0.0
    """

    _function_name = "calibration_decision_loss"
    _score_name = "calibration_decision_loss"

    def __init__(self, *, pos_label=None, multiclass="top-label", labels=None):
        self.pos_label = pos_label
        self.multiclass = multiclass
        self.labels = labels


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
    labels : array-like of shape (n_classes,), default=None
        The class of each ``predict_proba`` column; the scorer fills it from
        the estimator's ``classes_`` when None.

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
        labels=None,
    ):
        self.n_bins = n_bins
        self.strategy = strategy
        self.norm = norm
        self.pos_label = pos_label
        self.multiclass = multiclass
        self.labels = labels


class LowerDistanceToCalibration(_CalibrationMeasure):
    """Lower distance to calibration (dCE) as an estimator-style object.

    Thin wrapper of :func:`skcal.lower_distance_to_calibration`; ``details``
    returns the ``bound`` ``(lower, upper)`` that contains the exact dCE.

    Parameters
    ----------
    grid : int or array-like, default=100
        The grid of calibrated values (``100`` is spacing ``h = 0.01``).
    pos_label : int, float, bool or str, default=None
    multiclass : {"top-label", "raise"}, default="top-label"
    labels : array-like of shape (n_classes,), default=None
        The class of each ``predict_proba`` column; the scorer fills it from
        the estimator's ``classes_`` when None.

    Examples
    --------
    >>> from skcal import LowerDistanceToCalibration
    >>> measure = LowerDistanceToCalibration(grid=20)
    >>> round(measure([0, 1, 0, 1], [0.55, 0.55, 0.55, 0.55]), 6)
    0.05
    >>> lower, upper = measure.details([0, 1, 0, 1], [0.55] * 4).bound
    """

    _function_name = "lower_distance_to_calibration"
    _score_name = "lower_distance_to_calibration"

    def __init__(
        self, *, grid=100, pos_label=None, multiclass="top-label", labels=None
    ):
        self.grid = grid
        self.pos_label = pos_label
        self.multiclass = multiclass
        self.labels = labels


class UtilityCalibrationError(_CalibrationMeasure):
    """Multiclass utility calibration error as an estimator-style object.

    Thin wrapper of :func:`skcal.utility_calibration_error`; ``details``
    returns the worst ``utility``, its ``interval`` and ``sign``, and every
    member's error. Unlike the binary measures it reads the whole
    ``predict_proba`` matrix; its scorer labels the columns with the
    estimator's ``classes_``.

    Parameters
    ----------
    utility : str, Utility or finite family, default="top-class"
        "top-class", "class-wise", "top-k", "comb", a :class:`skcal.Utility`
        or a finite family of them.
    labels : array-like of shape (n_classes,), default=None
        The class of each column (an estimator's ``classes_``). The scorer
        fills it from the estimator when None.

    Examples
    --------
    >>> from skcal import UtilityCalibrationError
    >>> measure = UtilityCalibrationError(utility="comb")
    >>> y_true = [0, 1, 0, 2]
    >>> y_proba = [[0.5, 0.25, 0.25], [0.5, 0.25, 0.25],
    ...            [0.75, 0.125, 0.125], [0.75, 0.125, 0.125]]
    >>> measure(y_true, y_proba)
    0.1875
    >>> measure.details(y_true, y_proba).utility
    ClassWise(c=2)

    As a scorer, e.g. in ``cross_validate(..., scoring=measure.scorer())``:

    >>> from sklearn.datasets import load_iris
    >>> from sklearn.linear_model import LogisticRegression
    >>> X, y = load_iris(return_X_y=True)
    >>> model = LogisticRegression(max_iter=1000).fit(X, y)
    >>> score = measure.scorer()(model, X, y)
    >>> bool(score <= 0)
    True
    """

    _function_name = "utility_calibration_error"
    _score_name = "utility_calibration_error"
    _proba = "full"

    def __init__(self, utility="top-class", *, labels=None):
        self.utility = utility
        self.labels = labels


# Every measure class, in the order the scorer registry lists them.
_MEASURE_CLASSES = [
    SmoothCalibrationError,
    LowerDistanceToCalibration,
    CutoffCalibrationError,
    SoftBinnedCDL,
    CalibrationDecisionLoss,
    BinnedECE,
    UtilityCalibrationError,
]
