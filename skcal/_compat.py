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
    "validate_parameter_constraints",
]
