"""The parameter checks of :class:`skcal.CalibrationTester` (moved out of its module).

Every option is checked against the others (the rule, the measure, the
tolerance and the number of draws) with a message that says what to change.
"""

import math
import numbers

from sklearn.base import clone

from ..measures import CalibrationMeasure, UtilityCalibrationError
from ._null import _can_reject, _CustomMeasure, _registry
from ._tolerant import _MONTE_CARLO_SHARE, _check_real

__all__ = ["check_tester_params"]

# Keyword arguments the tester sets itself.
_RESERVED_PARAMS = ("sample_weight", "pos_label", "multiclass")


def check_tester_params(tester):
    """Validate a :class:`CalibrationTester`'s parameters; return ``(measure, name)``.

    The measure is resolved to an object (a clone of a measure object with
    ``measure_params`` set, a registry measure, or a plain callable wrapped)
    and the name the tester reports it by.
    """
    params = {} if tester.measure_params is None else tester.measure_params
    if not isinstance(params, dict):
        raise TypeError(
            f"measure_params must be a dict or None, got {type(params).__name__}."
        )
    reserved = [
        k for k in params if k in _RESERVED_PARAMS or k.startswith("return_")
    ]
    if reserved:
        raise ValueError(
            f"measure_params may not set {reserved}: the tester passes "
            "sample weights and labels itself and needs a single value."
        )
    registry = _registry()
    if isinstance(tester.measure, CalibrationMeasure):
        measure = clone(tester.measure)
        if params:
            measure.set_params(**params)
        name = measure._tester_name
    elif isinstance(tester.measure, str) and tester.measure in registry:
        try:
            measure = registry[tester.measure](**params)
        except TypeError as exc:
            raise ValueError(
                f"measure_params {sorted(params)} are not all options of "
                f"measure={tester.measure!r} ({registry[tester.measure].__name__}): "
                f"{exc}"
            ) from None
        name = tester.measure
    elif callable(tester.measure):
        measure = _CustomMeasure(tester.measure, params)
        name = getattr(tester.measure, "__name__", repr(tester.measure))
    else:
        raise ValueError(
            f"measure must be one of {sorted(registry)}, a measure object of "
            f"skcal.measures or a callable, got {tester.measure!r}."
        )
    if tester.pos_label is not None and isinstance(measure, UtilityCalibrationError):
        raise ValueError(
            "pos_label has no meaning for the multiclass "
            "UtilityCalibrationError; leave it None."
        )
    _check_real("alpha", tester.alpha, 0.0, 1.0, closed=False)
    _check_real("tolerance", tester.tolerance, 0.0, 1.0, closed="left")
    if tester.epsilon is not None:
        _check_real("epsilon", tester.epsilon, 0.0, 1.0, closed="right")
        if tester.tolerance >= tester.epsilon:
            raise ValueError(
                f"tolerance ({tester.tolerance}) must be below epsilon "
                f"({tester.epsilon}): an (epsilon, tolerance)-tester separates "
                "dCE <= tolerance from dCE >= epsilon."
            )
    if tester.threshold == "theory":
        if name not in ("smce", "dce") or isinstance(measure, _CustomMeasure):
            raise ValueError(
                "threshold='theory' exists for measure 'smce' (Theorem 3 of Hu, "
                'Jambulapati, Tian and Yang, "Testing calibration in '
                "nearly-linear time\") and 'dce' (their Theorem 4), not "
                f"{name!r}; use threshold='resample'."
            )
        if tester.epsilon is None:
            raise ValueError("threshold='theory' needs epsilon.")
        if name == "smce" and not tester.epsilon > 4 * tester.tolerance:
            raise ValueError(
                "The smCE tester of Theorem 3 needs epsilon > 4 * tolerance, "
                f"got epsilon={tester.epsilon}, tolerance={tester.tolerance}; use "
                "measure='dce' for a tighter tolerance."
            )
    elif tester.threshold == "resample":
        if (
            not isinstance(tester.n_resamples, numbers.Integral)
            or isinstance(tester.n_resamples, bool)
            or tester.n_resamples < 1
        ):
            raise ValueError(
                f"n_resamples must be a positive integer, got {tester.n_resamples!r}."
            )
        if tester.resampling_risk is not None:
            _check_real(
                "resampling_risk", tester.resampling_risk, 0.0, 1.0, closed=False
            )
        lipschitz = getattr(measure, "_lipschitz", None)
        if tester.tolerance > 0:
            if lipschitz is None:
                raise ValueError(
                    f"tolerance > 0 needs a measure that is Lipschitz in the "
                    f"predictions ('smce' or 'dce'), not {name!r}."
                )
            l_v, l_y = lipschitz
            if name == "smce" and tester.tolerance >= 0.2:
                raise ValueError(
                    f"tolerance={tester.tolerance} is too large for measure "
                    "'smce': the tolerant smCE test is limited to tolerance "
                    "< 0.2 (dCE <= tolerance allows smCE up to 2 * tolerance, "
                    "so near that limit the test could never reject at "
                    "practical n; from 2/3 on it could never reject at all)."
                )
            if name != "smce" and (2 * l_v + l_y) * tester.tolerance >= (
                measure._max_value
            ):
                raise ValueError(
                    f"tolerance={tester.tolerance} is too large for measure "
                    f"{name!r}: the threshold would exceed {(2 * l_v + l_y)} "
                    f"* tolerance >= {measure._max_value:g}, the largest value "
                    f"the measure takes, so the test could never reject. Use "
                    f"tolerance < {measure._max_value / (2 * l_v + l_y):.4g}."
                )
            level = tester.alpha * _MONTE_CARLO_SHARE
            if math.floor(level * (tester.n_resamples + 1) + 1e-9) < 1:
                raise ValueError(
                    f"n_resamples={tester.n_resamples} is too few to ever reject "
                    f"at this alpha: it needs at least {math.ceil(1 / level) - 1}."
                )
        elif tester.resampling_risk is None:
            if math.floor(tester.alpha * (tester.n_resamples + 1) + 1e-9) < 1:
                raise ValueError(
                    f"n_resamples={tester.n_resamples} is too few to ever reject "
                    "at this alpha: it needs at least "
                    f"{math.ceil(1 / tester.alpha) - 1}."
                )
        elif not _can_reject(tester.n_resamples, tester.alpha, tester.resampling_risk):
            needed = tester.n_resamples
            while not _can_reject(needed, tester.alpha, tester.resampling_risk):
                needed = math.ceil(needed * 1.1) + 1
            raise ValueError(
                f"n_resamples={tester.n_resamples} is too few to ever reject at "
                f"alpha={tester.alpha} with resampling_risk="
                f"{tester.resampling_risk}: it needs about {needed}."
            )
    else:
        raise ValueError(
            f"threshold must be 'resample' or 'theory', got {tester.threshold!r}."
        )
    return measure, name
