"""The one module that reaches into private scikit-learn API.

A scikit-learn upgrade that moves any of these touches only this file.

* ``_Scorer``: the base of :class:`skcal.scorers.CalibrationScorer`.
* ``_fit_context`` and the constraint types of ``_param_validation``: the
  declarative parameter validation of scikit-learn estimators
  (``_parameter_constraints`` checked once at the start of ``fit``).
"""

from sklearn.base import _fit_context
from sklearn.metrics._scorer import _Scorer
from sklearn.utils._param_validation import (
    HasMethods,
    Interval,
    Options,
    StrOptions,
    validate_parameter_constraints,
)

__all__ = [
    "HasMethods",
    "Interval",
    "Options",
    "StrOptions",
    "_Scorer",
    "_fit_context",
    "validate_parameter_constraints",
]
