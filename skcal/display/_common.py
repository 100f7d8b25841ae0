"""Checks shared by the Display classes."""

import numbers

from sklearn.utils.validation import check_is_fitted

__all__ = ["check_estimator_proba", "check_int", "check_name", "estimator_name"]


def check_int(value, name, *, low):
    """``value`` as an int ``>= low``, or a ValueError naming ``name``.

    Parameters
    ----------
    value : object
        The value to check.
    name : str
        The parameter's name, for the message.
    low : int
        The smallest value allowed.

    Returns
    -------
    value : int
        ``value`` as a Python int.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}.")
    return int(value)


def check_name(name):
    """A legend entry: None or a string.

    Parameters
    ----------
    name : object
        The value to check.

    Returns
    -------
    name : str or None
        ``name``, unchanged.
    """
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name must be a string or None, got {type(name).__name__}.")
    return name


def check_estimator_proba(estimator, caller):
    """A fitted classifier with ``predict_proba``, or a clear error.

    Parameters
    ----------
    estimator : object
        The estimator to check.
    caller : str
        The public method checking it, for the message.
    """
    if not hasattr(estimator, "predict_proba"):
        raise TypeError(
            f"{caller} needs a classifier with predict_proba; "
            f"{type(estimator).__name__} has none."
        )
    check_is_fitted(estimator)
    if not hasattr(estimator, "classes_"):
        raise ValueError(
            f"{caller} needs the estimator's classes_ to label the columns of "
            f"predict_proba; {type(estimator).__name__} has none."
        )


def estimator_name(estimator, name):
    """The legend entry of ``from_estimator``: ``name``, or the class name.

    Parameters
    ----------
    estimator : object
        The estimator drawn.
    name : str or None
        The entry given by the user.

    Returns
    -------
    name : str
        ``name``, or the estimator's class name when it is None.
    """
    return type(estimator).__name__ if check_name(name) is None else name
