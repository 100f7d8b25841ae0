"""The one module that reaches into private scikit-learn API.

A scikit-learn upgrade that moves any of these touches only this file.

* ``_Scorer``: the base of :class:`skcal.scorers.CalibrationScorer`.
* ``_raise_for_params`` and ``_routing_enabled``: metadata routing in the
  meta-estimators (``skcal._meta``).
* ``_check_feature_names``: ``feature_names_in_`` of the probability
  transformers, which read data frames of probabilities without
  ``validate_data`` (it cannot take their 1-D input).
* ``_fit_context`` and the constraint types of ``_param_validation``: the
  declarative parameter validation of scikit-learn estimators
  (``_parameter_constraints`` checked once at the start of ``fit``).
"""

from sklearn.base import _fit_context
from sklearn.metrics._scorer import _Scorer
from sklearn.utils._metadata_requests import _raise_for_params, _routing_enabled
from sklearn.utils._param_validation import (
    HasMethods,
    Interval,
    Options,
    StrOptions,
    validate_parameter_constraints,
)
from sklearn.utils.validation import _check_feature_names

try:  # SciPy >= 1.12
    from scipy.optimize import isotonic_regression as _scipy_isotonic
except ImportError:  # pragma: no cover - the oldest supported SciPy (1.10, 1.11)
    _scipy_isotonic = None

__all__ = [
    "HasMethods",
    "Interval",
    "Options",
    "StrOptions",
    "_Scorer",
    "_check_feature_names",
    "_fit_context",
    "_raise_for_params",
    "_routing_enabled",
    "isotonic_regression",
    "validate_parameter_constraints",
]


def isotonic_regression(y, weights):
    """Weighted non-decreasing isotonic regression of ``y`` (an ndarray).

    SciPy's (1.12 and later), else scikit-learn's public
    :func:`sklearn.isotonic.isotonic_regression`: both pool adjacent
    violators with positive weights, so they agree up to rounding.
    """
    if _scipy_isotonic is not None:
        return _scipy_isotonic(y, weights=weights, increasing=True).x
    from sklearn.isotonic import isotonic_regression as sklearn_isotonic

    return sklearn_isotonic(y, sample_weight=weights, increasing=True)
