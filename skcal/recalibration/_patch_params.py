"""Parameter checks of :class:`UtilityPatchingRecalibrator`.

The declarative constraints that ``_fit_context`` checks at the start of
``fit`` and ``fit_transform``, and the checks with messages of their own
(the booleans the constraints let through, the utility family, ``init``).
Kept apart from the fitting algorithm in ``_patching.py``.
"""

import numbers

import numpy as np

from .._compat import Interval, StrOptions
from ..utilities._families import resolve_utility
from ._common import SKLEARN_METHODS, SklearnRecalibrator

__all__ = []

_STEP_OPTIONS = ("armijo", "paper")


# --- parameter checks ------------------------------------------------------------


# scikit-learn's declarative validation of UtilityPatchingRecalibrator's
# parameters (checked by _fit_context at the start of fit and fit_transform);
# family and init are checked in fit with messages of their own (names,
# utilities, families; a name, a recalibrator or a callable)
_PATCHING_CONSTRAINTS = {
    "family": "no_validation",
    "max_iter": [Interval(numbers.Integral, 0, None, closed="left")],
    "tol": [StrOptions({"auto"}), Interval(numbers.Real, 0, None, closed="left")],
    "step": [
        StrOptions(set(_STEP_OPTIONS)),
        Interval(numbers.Real, 0, None, closed="neither"),
    ],
    "validation_fraction": [Interval(numbers.Real, 0, 1, closed="neither"), None],
    "n_iter_no_change": [Interval(numbers.Integral, 1, None, closed="left")],
    "random_state": ["random_state"],
    "init": "no_validation",
    "init_cv": [Interval(numbers.Integral, 2, None, closed="left"), None],
    "labels": ["array-like", None],
}

# what a parameter must be, for the booleans the constraints let through
# (True is an int and a float to them)
_NOT_BOOLEAN = {
    "max_iter": "a non-negative integer",
    "tol": "'auto' or a non-negative float",
    "step": f"one of {_STEP_OPTIONS} or a positive float",
    "n_iter_no_change": "a positive integer",
}


def _check_not_boolean(params):
    for name, what in _NOT_BOOLEAN.items():
        if isinstance(params[name], (bool, np.bool_)):
            raise ValueError(f"{name} must be {what}, got {params[name]!r}.")


def _check_family(family):
    return resolve_utility(family, name="family")


def _auto_tol(n_utilities, n_samples):
    """``sqrt(log(4 |U|) / (2 n))``: see ``tol`` in UtilityPatchingRecalibrator."""
    return float(np.sqrt(np.log(4.0 * n_utilities) / (2.0 * n_samples)))

def _check_init(init):
    """``init`` as an unfitted recalibrator, a callable, or None."""
    if init is None:
        return None
    if isinstance(init, str):
        if init in SKLEARN_METHODS:
            return SklearnRecalibrator(init)
        raise ValueError(
            f"init must be None, one of {SKLEARN_METHODS}, a recalibrator with "
            f"fit(P, y) and predict_proba(P), or a callable, got {init!r}."
        )
    if callable(getattr(init, "fit", None)) and callable(
        getattr(init, "predict_proba", None)
    ):
        return init
    if callable(init):
        return init
    raise TypeError(
        f"init must be None, one of {SKLEARN_METHODS}, a recalibrator with fit(P, y) "
        f"and predict_proba(P), or a callable; got {type(init).__name__}."
    )
