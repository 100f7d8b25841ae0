"""Estimator-style classes for the calibration measures.

Each class holds a measure's options (so ``get_params``, ``set_params``,
``clone`` and ``repr`` work as for any scikit-learn estimator), is callable as
``measure(y_true, y_prob, sample_weight=None)`` and builds its scorer with
``scorer()``. The mathematics lives once, in the functions of
:mod:`skcal.metrics`; these classes only forward their options.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import TYPE_CHECKING, overload

import numpy as np
from sklearn.base import BaseEstimator

from . import _specs, metrics
from ._input import power_of_two_scale
from ._scorer import CalibrationScorer

if TYPE_CHECKING:
    from typing import Literal

    from numpy.typing import ArrayLike
    from sklearn.utils import Bunch

    from ._typing import (
        BinaryLabels,
        Multiclass,
        PosLabel,
        RandomStateLike,
        UtilityName,
        Value,
    )
    from .utilities import Utility
    from .utilities._families import FiniteFamily

__all__ = [
    "BinnedECE",
    "CalibrationDecisionLoss",
    "CalibrationMeasure",
    "CutoffCalibrationError",
    "LowerDistanceToCalibration",
    "SmoothCalibrationError",
    "SoftBinnedCDL",
    "UtilityCalibrationError",
]


def _weights_on_scale(sample_weight):
    """In-memory weights times the power of two that brings the largest into [1, 2).

    An interval sums squared weights (the effective sample size, the
    bootstrap cells), which underflow for subnormal weights and overflow for
    huge ones; the scaling is exact and every measure depends on the weights
    only through ``w / sum(w)``, so the interval does not depend on their
    scale. Anything else (None, Dask input, weights the validator will refuse)
    is returned as given, for the validator and its messages.
    """
    if sample_weight is None or hasattr(sample_weight, "__dask_graph__"):
        return sample_weight
    try:
        w = np.asarray(sample_weight)
    except Exception:  # noqa: BLE001 - the validator says what is wrong
        return sample_weight
    if w.ndim != 1 or w.shape[0] == 0 or w.dtype.kind not in "uif":
        return sample_weight
    w = w.astype(np.float64)  # a copy: the caller's array is not touched
    if not (np.all(np.isfinite(w)) and w.min() >= 0):
        return sample_weight
    e = power_of_two_scale(w.max())
    return np.ldexp(w, e) if e else sample_weight


class CalibrationMeasure(BaseEstimator):
    """Base class of the measure objects: what every measure of skcal shares.

    Each measure class (:class:`SmoothCalibrationError`,
    :class:`CutoffCalibrationError`, ...) holds a measure's options as
    scikit-learn parameters; calling it on ``(y_true, y_prob)`` gives the
    measure's value, :meth:`interval` a confidence interval and
    :attr:`scorer` a scikit-learn scorer. Use it to check whether an object
    is one of skcal's measures (as :class:`CalibrationTester` does); it is not
    meant to be subclassed by users: a measure of one's own goes to the
    tester as a function.

    Examples
    --------
    >>> from skcal import CalibrationMeasure, SmoothCalibrationError
    >>> measure = SmoothCalibrationError()
    >>> isinstance(measure, CalibrationMeasure)
    True
    >>> measure([0, 1, 1, 0], [0.25, 0.75, 0.5, 0.5])
    0.03125
    """

    # The spec the class was made from, and what the tester, the report and
    # the scorers read of it (set by _from_spec):
    # _function_name: the measure function's name (looked up in skcal.metrics,
    #     so the scorer pickles as a reference to a module-level function);
    # _score_name: scorer name without the "neg_" prefix;
    # _proba: what the measure reads of predict_proba: one probability per
    #     sample ("binary") or the whole matrix ("full"); see CalibrationScorer;
    # _tester_name: the short name the tester accepts for this class;
    # _dce_factor: a constant ``a`` with ``measure(D) >= a * dCE(D)`` for every
    #     distribution, such that the measure of a sample is at least the sample
    #     mean of one fixed function with values in [-1, 1] whose mean is
    #     ``measure(D)`` (so Hoeffding bounds its lower tail); None if unknown;
    # _lipschitz: ``(L_v, L_y)``: moving predictions by a total (weighted mean)
    #     distance A changes the measure of a sample by at most ``L_v A``,
    #     flipping outcomes of total weight F by at most ``L_y F``; None if unknown;
    # _max_value: an upper bound of the measure on any data;
    # _label and _plain: the measure's name and one plain line for readers
    #     who are not calibration specialists (the demo and the report print them).
    _spec = None
    _function_name = None
    _score_name = None
    _proba: Literal["binary", "full"] = "binary"
    _tester_name = None
    _label = None
    _plain = None
    _dce_factor = None
    _lipschitz = None
    _max_value = 1.0

    def _grouped_core(self, statistic):
        """The measure of a GroupedStatistic with these (checked) options.

        Binary measures only; the tester calls it once per resample.
        """
        core = None if self._spec is None else self._spec.grouped_core
        if core is None:
            raise NotImplementedError(f"{type(self).__name__} has no grouped core.")
        return core(statistic, **self.get_params(deep=False))

    @property
    def _function(self):
        function = getattr(metrics, self._function_name, None)
        return function if function is not None else _specs.function_of(self._spec)

    @overload
    def __call__(
        self,
        y_true: BinaryLabels,
        y_prob: ArrayLike | None = None,
        sample_weight: ArrayLike | None = None,
        *,
        return_details: Literal[False] = False,
    ) -> float: ...

    @overload
    def __call__(
        self,
        y_true: BinaryLabels,
        y_prob: ArrayLike | None = None,
        sample_weight: ArrayLike | None = None,
        *,
        return_details: Literal[True],
    ) -> tuple[float, Bunch]: ...

    def __call__(
        self,
        y_true: BinaryLabels,
        y_prob: ArrayLike | None = None,
        sample_weight: ArrayLike | None = None,
        *,
        return_details: bool = False,
    ) -> Value:
        """Value of the measure on ``(y_true, y_prob)``.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,), or a calibration sketch
            Observed labels; a sketch for the binary measures (then
            ``y_prob`` and ``sample_weight`` are None).
        y_prob : array-like of shape (n_samples,) or (n_samples, n_classes)
            Predicted probabilities.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows; equal weights when None.
        return_details : bool, default=False
            Also return what the measure can report about the value, as the
            function does with ``return_details=True``.

        Returns
        -------
        value : float
            The measure.
        details : sklearn.utils.Bunch
            Only with ``return_details=True``: the function's details (see
            its documentation for what each one reports).
        """
        if not isinstance(return_details, (bool, np.bool_)):
            raise TypeError(
                f"return_details must be True or False, got {return_details!r}."
            )
        if return_details:
            return self._call(y_true, y_prob, sample_weight, return_details=True)
        return self._call(y_true, y_prob, sample_weight)

    def _call(self, y_true, y_prob, sample_weight, **extra):
        """The function on these arguments."""
        return self._function(
            y_true,
            y_prob,
            sample_weight=sample_weight,
            **self.get_params(deep=False),
            **extra,
        )

    def interval(
        self,
        y_true: BinaryLabels,
        y_prob: ArrayLike | None = None,
        *,
        sample_weight: ArrayLike | None = None,
        confidence: float = 0.95,
        method: Literal["auto", "bootstrap", "analytic", "scdl-bound"] = "auto",
        n_resamples: int = 200,
        random_state: RandomStateLike = None,
    ) -> Bunch:
        """Confidence interval of the measure, and what it guarantees.

        What is estimated is the measure of the *population* the rows are
        drawn from (for multiclass input, of its top-label, or of the named
        utility, distribution). The binary measures resample the grouped
        statistic (distinct predictions with their weight and positive
        weight), never the rows: a Bayesian bootstrap in which a value's
        positive and negative mass are Gamma draws. Methods:

        * ``"bootstrap"`` (``"auto"`` for every measure but SCDL, and CDL on
          continuous predictions): with ``q`` the quantiles of ``T* - T``,
          the hull of the basic interval ``[T - q(1 - a/2), T - q(a/2)]``
          (which subtracts the upward bias the resamples show) and the
          percentile interval ``[T + q(a/2), T + q(1 - a/2)]`` (which does
          not): on these non-smooth measures the bootstrap's bias estimate
          is not consistent, so neither alone can be trusted. The lower end
          is 0 whenever the calibrated null (the tester's) reaches ``T``
          with probability above ``a/2``. ``debiased = 2 T - mean(T*)`` is
          the bias-corrected estimate. Asymptotic; coverage is measured
          (see the guide's interval page), not assumed. The cutoff error
          uses a uniform band instead: ``[T - q, T + q]``, ``q`` the
          ``1 - a`` quantile of the largest deviation of the resampled
          residual curve from the observed one (by the triangle inequality
          it bounds ``|T - T_population|``).
        * ``"analytic"`` for SCDL (its ``"auto"``): a finite-sample bound on
          both ends given the predictions (McDiarmid on every level of the
          soft binning, a union bound over the levels, and a bound on the
          plug-in's upward bias for the lower end); see the guide.
        * ``"analytic"`` (smooth, cutoff and distance to calibration):
          ``[0, T + sqrt(ln(1/a) / (2 N))]``, ``N`` Kish's effective sample
          size: a finite-sample upper bound for the measure of the outcome
          law on these predictions (McDiarmid; the certificate of
          :class:`skcal.CalibrationTester`).
        * ``"scdl-bound"`` (calibration decision loss; ``"auto"`` when a
          distinct prediction has fewer than 20 rows): the plug-in CDL of
          continuous scores does not estimate the population CDL, so
          ``estimate`` is NaN (the plug-in is in ``plug_in``), ``low`` is
          the lower end of the soft-binned CDL's interval (SCDL <= CDL,
          Lemma 3.4 of Bairaktari et al.) and ``high`` is 1.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,), a calibration sketch or Dask input
            Observed labels, or a calibration sketch (then ``y_prob`` and
            ``sample_weight`` are None) or Dask input.
        y_prob : array-like of shape (n_samples,) or (n_samples, n_classes)
            Predicted probabilities.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows; equal weights when None.
        confidence : float, default=0.95
            Coverage probability, strictly between 0 and 1.
        method : {"auto", "bootstrap", "analytic", "scdl-bound"}, default="auto"
            How the interval is computed (see above).
        n_resamples : int, default=200
            Bootstrap resamples (at least 20).
        random_state : int, RandomState instance or None, default=None
            Seeds the resampling.

        Returns
        -------
        interval : sklearn.utils.Bunch
            ``estimate``, ``low``, ``high``, ``confidence``, ``method``, and
            ``debiased``, ``n_resamples``, ``target`` ("binary", "top-label"
            or the utility), ``n_effective`` and ``guarantee`` (one line).
            The l2 binned ECE adds ``debiased_l2``, the debiased estimator of
            Kumar, Liang and Ma, *Verified Uncertainty Calibration* (2019).

        Examples
        --------
        >>> import numpy as np
        >>> from skcal import SmoothCalibrationError
        >>> rng = np.random.default_rng(0)
        >>> p = rng.uniform(size=2000)
        >>> y = rng.uniform(size=2000) < p
        >>> ci = SmoothCalibrationError().interval(y, p, random_state=0)
        >>> bool(0 <= ci.low <= ci.high), ci.method, ci.confidence
        (True, 'bootstrap', 0.95)
        """
        from ._interval import measure_interval

        return measure_interval(
            self,
            y_true,
            y_prob,
            sample_weight=_weights_on_scale(sample_weight),
            confidence=confidence,
            method=method,
            n_resamples=n_resamples,
            random_state=random_state,
        )

    def scorer(self) -> CalibrationScorer:
        """An sklearn scorer for this measure with these options.

        Greater is better (the scorer returns minus the measure) and it
        scores ``predict_proba`` output; see
        :class:`skcal.scorers.CalibrationScorer`.

        Returns
        -------
        scorer : CalibrationScorer
            Usable as ``scoring=`` in ``cross_validate``, ``GridSearchCV``
            and the like.
        """
        return CalibrationScorer(
            self._function,
            sign=self._spec.sign if self._spec is not None else -1,
            kwargs=self.get_params(deep=False),
            proba=self._proba,
        )


def _spec_attributes(spec):
    """The class attributes the tester, report and scorers read, from ``spec``."""
    return {
        "_spec": spec,
        "_function_name": spec.name,
        "_score_name": spec.name,
        "_proba": spec.proba,
        "_tester_name": spec.tester_name,
        "_label": spec.label,
        "_plain": spec.docs,
        "_dce_factor": spec.dce_factor,
        "_lipschitz": spec.lipschitz,
        "_max_value": spec.max_value,
    }


def _from_spec(cls):
    """Give a hand-written measure class the attributes of its registered spec."""
    spec = next(s for s in _specs.specs() if s.class_name == cls.__name__)
    for key, value in _spec_attributes(spec).items():
        setattr(cls, key, value)
    return cls


# Classes generated for specs that have no hand-written class here.
_GENERATED: dict[str, type[CalibrationMeasure]] = {}


def measure_class(spec):
    """The estimator-style class of ``spec``: hand-written, or generated once.

    A generated class takes the spec's options, then ``pos_label``,
    ``multiclass`` and ``labels``, all keyword-only (so ``get_params``,
    ``clone`` and ``repr`` work as for the hand-written ones).
    """
    written = globals().get(spec.class_name)
    if isinstance(written, type) and written._spec is spec:
        return written
    if spec.name not in _GENERATED:
        params = {**spec.options, **_specs.BINARY_INPUT_OPTIONS}

        def __init__(self, **kwargs):
            unknown = sorted(set(kwargs) - set(params))
            if unknown:
                raise TypeError(f"{spec.class_name}() got unexpected arguments {unknown}.")
            for key, default in params.items():
                setattr(self, key, kwargs.get(key, default))

        __init__.__signature__ = inspect.Signature(
            [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
            + [
                inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=v)
                for k, v in params.items()
            ]
        )
        namespace = {
            "__init__": __init__,
            "__doc__": f"{spec.label or spec.name} as an estimator-style object: {spec.docs}",
            "__module__": __name__,
            **_spec_attributes(spec),
        }
        _GENERATED[spec.name] = type(spec.class_name, (CalibrationMeasure,), namespace)
    return _GENERATED[spec.name]


def _forget(name):
    """Drop the class generated for the measure ``name`` (it was unregistered)."""
    _GENERATED.pop(name, None)


@_from_spec
class SmoothCalibrationError(CalibrationMeasure):
    """Smooth calibration error as an estimator-style object.

    Thin wrapper of :func:`skcal.smooth_calibration_error`; with
    ``return_details=True`` the details hold the optimal witness (``points``, ``witness``).

    Parameters
    ----------
    pos_label : int, float, bool or str, default=None
        The positive class of binary ``y_true``, as in :mod:`sklearn.metrics`.
    multiclass : {"top-label", "raise"}, default="top-label"
        ``predict_proba`` output of more than two columns is measured for
        top-label calibration, or raises a ValueError.
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

    def __init__(
        self,
        *,
        pos_label: PosLabel = None,
        multiclass: Multiclass = "top-label",
        labels: ArrayLike | None = None,
    ) -> None:
        self.pos_label = pos_label
        self.multiclass = multiclass
        self.labels = labels


@_from_spec
class CutoffCalibrationError(CalibrationMeasure):
    """Cutoff calibration error as an estimator-style object.

    Thin wrapper of :func:`skcal.cutoff_calibration_error`; with
    ``return_details=True`` the details hold the worst ``interval`` and its ``sign``.

    Parameters
    ----------
    pos_label : int, float, bool or str, default=None
        The positive class of binary ``y_true``, as in :mod:`sklearn.metrics`.
    multiclass : {"top-label", "raise"}, default="top-label"
        ``predict_proba`` output of more than two columns is measured for
        top-label calibration, or raises a ValueError.
    labels : array-like of shape (n_classes,), default=None
        The class of each ``predict_proba`` column; the scorer fills it from
        the estimator's ``classes_`` when None.

    Examples
    --------
    >>> from skcal import CutoffCalibrationError
    >>> measure = CutoffCalibrationError()
    >>> round(measure([0, 0, 1, 1], [0.2, 0.4, 0.6, 0.9]), 6)
    0.15
    >>> measure([0, 0, 1, 1], [0.2, 0.4, 0.6, 0.9], return_details=True)[1].interval
    (0.2, 0.4)
    """

    def __init__(
        self,
        *,
        pos_label: PosLabel = None,
        multiclass: Multiclass = "top-label",
        labels: ArrayLike | None = None,
    ) -> None:
        self.pos_label = pos_label
        self.multiclass = multiclass
        self.labels = labels


@_from_spec
class SoftBinnedCDL(CalibrationMeasure):
    """Soft-binned calibration decision loss (SCDL) as an estimator-style object.

    Thin wrapper of :func:`skcal.soft_binned_cdl`; with ``return_details=True`` the
    details hold the chosen ``m``, the per-level values and the swap-regret
    bound.

    Parameters
    ----------
    m : int or None, default=None
        None for the self-balancing SCDL; an integer for ``SCDL_m``.
    pos_label : int, float, bool or str, default=None
        The positive class of binary ``y_true``, as in :mod:`sklearn.metrics`.
    multiclass : {"top-label", "raise"}, default="top-label"
        ``predict_proba`` output of more than two columns is measured for
        top-label calibration, or raises a ValueError.
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

    def __init__(
        self,
        *,
        m: int | None = None,
        pos_label: PosLabel = None,
        multiclass: Multiclass = "top-label",
        labels: ArrayLike | None = None,
    ) -> None:
        self.m = m
        self.pos_label = pos_label
        self.multiclass = multiclass
        self.labels = labels


@_from_spec
class CalibrationDecisionLoss(CalibrationMeasure):
    """Calibration decision loss (CDL) as an estimator-style object.

    Thin wrapper of :func:`skcal.calibration_decision_loss`.

    Parameters
    ----------
    pos_label : int, float, bool or str, default=None
        The positive class of binary ``y_true``, as in :mod:`sklearn.metrics`.
    multiclass : {"top-label", "raise"}, default="top-label"
        ``predict_proba`` output of more than two columns is measured for
        top-label calibration, or raises a ValueError.
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

    def __init__(
        self,
        *,
        pos_label: PosLabel = None,
        multiclass: Multiclass = "top-label",
        labels: ArrayLike | None = None,
    ) -> None:
        self.pos_label = pos_label
        self.multiclass = multiclass
        self.labels = labels


@_from_spec
class BinnedECE(CalibrationMeasure):
    """Binned expected calibration error as an estimator-style object.

    Thin wrapper of :func:`skcal.binned_ece`.

    Parameters
    ----------
    n_bins : int, default=15
        Number of bins.
    strategy : {"uniform", "quantile"}, default="uniform"
        Bins of equal width, or of equal weight (quantiles of the predictions).
    norm : {"l1", "l2", "max"}, default="l1"
        How the bins' gaps are combined: weighted mean of absolute values,
        root mean square, or maximum.
    pos_label : int, float, bool or str, default=None
        The positive class of binary ``y_true``, as in :mod:`sklearn.metrics`.
    multiclass : {"top-label", "raise"}, default="top-label"
        ``predict_proba`` output of more than two columns is measured for
        top-label calibration, or raises a ValueError.
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

    def __init__(
        self,
        *,
        n_bins: int = 15,
        strategy: Literal["uniform", "quantile"] = "uniform",
        norm: Literal["l1", "l2", "max"] = "l1",
        pos_label: PosLabel = None,
        multiclass: Multiclass = "top-label",
        labels: ArrayLike | None = None,
    ) -> None:
        self.n_bins = n_bins
        self.strategy = strategy
        self.norm = norm
        self.pos_label = pos_label
        self.multiclass = multiclass
        self.labels = labels


@_from_spec
class LowerDistanceToCalibration(CalibrationMeasure):
    """Lower distance to calibration (dCE) as an estimator-style object.

    Thin wrapper of :func:`skcal.lower_distance_to_calibration`; with
    ``return_details=True`` the details hold the ``bound`` ``(lower, upper)``
    that contains the exact dCE.

    Parameters
    ----------
    grid : int or array-like, default=100
        The grid of calibrated values (``100`` is spacing ``h = 0.01``).
    pos_label : int, float, bool or str, default=None
        The positive class of binary ``y_true``, as in :mod:`sklearn.metrics`.
    multiclass : {"top-label", "raise"}, default="top-label"
        ``predict_proba`` output of more than two columns is measured for
        top-label calibration, or raises a ValueError.
    labels : array-like of shape (n_classes,), default=None
        The class of each ``predict_proba`` column; the scorer fills it from
        the estimator's ``classes_`` when None.

    Examples
    --------
    >>> from skcal import LowerDistanceToCalibration
    >>> measure = LowerDistanceToCalibration(grid=20)
    >>> round(measure([0, 1, 0, 1], [0.55, 0.55, 0.55, 0.55]), 6)
    0.05
    >>> lower, upper = measure([0, 1, 0, 1], [0.55] * 4, return_details=True)[1].bound
    """

    def __init__(
        self,
        *,
        grid: int | ArrayLike = 100,
        pos_label: PosLabel = None,
        multiclass: Multiclass = "top-label",
        labels: ArrayLike | None = None,
    ) -> None:
        self.grid = grid
        self.pos_label = pos_label
        self.multiclass = multiclass
        self.labels = labels


@_from_spec
class UtilityCalibrationError(CalibrationMeasure):
    """Multiclass utility calibration error as an estimator-style object.

    Thin wrapper of :func:`skcal.utility_calibration_error`; with
    ``return_details=True`` the details hold the worst ``utility``, its
    ``interval`` and ``sign``, and every member's error. Unlike the binary
    measures it reads the whole ``predict_proba`` matrix; its scorer labels
    the columns with the estimator's ``classes_``.

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
    >>> y_prob = [[0.5, 0.25, 0.25], [0.5, 0.25, 0.25],
    ...            [0.75, 0.125, 0.125], [0.75, 0.125, 0.125]]
    >>> measure(y_true, y_prob)
    0.1875
    >>> measure(y_true, y_prob, return_details=True)[1].utility
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

    def __init__(
        self,
        utility: UtilityName | Utility | FiniteFamily = "top-class",
        *,
        labels: ArrayLike | None = None,
    ) -> None:
        self.utility = utility
        self.labels = labels


class _MeasureClasses(Sequence):
    """Every measure class, read off the registry at each use (a live list)."""

    def _classes(self):
        return [measure_class(spec) for spec in _specs.specs()]

    def __getitem__(self, index):
        return self._classes()[index]

    def __len__(self):
        return len(_specs.specs())

    def __repr__(self):
        return repr(self._classes())


# Every measure class, in the order the scorers, the tester, the demo and the
# report list them: derived from the registry (skcal._specs), where a new
# measure is added.
MEASURE_CLASSES = _MeasureClasses()


def __getattr__(name):
    """Generated classes of registered measures, as ``skcal.measures.<ClassName>``."""
    for spec in _specs.specs():
        if spec.class_name == name:
            return measure_class(spec)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
