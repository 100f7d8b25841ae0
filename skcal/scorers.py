"""scikit-learn scorers for the skcal measures.

``get_scorer("neg_smooth_calibration_error")`` returns an object usable as
``scoring=`` anywhere in scikit-learn (``cross_validate``, ``GridSearchCV``,
``permutation_importance``); any name skcal does not define falls through to
:func:`sklearn.metrics.get_scorer`, so skcal and scikit-learn names mix freely
in one multi-metric ``scoring`` dict.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, overload

from sklearn.metrics import get_scorer as _sklearn_get_scorer
from sklearn.metrics import get_scorer_names as _sklearn_get_scorer_names

from . import _specs
from ._scorer import CalibrationScorer

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

__all__ = ["CalibrationScorer", "get_scorer", "get_scorer_names", "make_scorers"]


def _registry():
    """Scorer name -> measure class, from the measure registry (``skcal._specs``)."""
    from . import measures  # at call time: skcal.measures imports skcal._scorer

    return {spec.score_name: measures.measure_class(spec) for spec in _specs.specs()}


def get_scorer_names() -> list[str]:
    """Names accepted by :func:`get_scorer`: skcal's and scikit-learn's.

    Returns
    -------
    names : list of str
        Sorted; the skcal names all start with ``neg_`` (they are losses).

    Examples
    --------
    >>> from skcal import get_scorer_names
    >>> "neg_smooth_calibration_error" in get_scorer_names()
    True
    >>> "accuracy" in get_scorer_names()
    True
    """
    return sorted(set(_registry()) | set(_sklearn_get_scorer_names()))


@overload
def get_scorer(scoring: None) -> None: ...


@overload
def get_scorer(scoring: str | Callable[..., Any]) -> Callable[..., Any]: ...


def get_scorer(scoring: str | Callable[..., Any] | None) -> Callable[..., Any] | None:
    """Scorer from a name; skcal names first, then scikit-learn's.

    Parameters
    ----------
    scoring : str, callable or None
        An skcal name such as ``"neg_soft_binned_cdl"`` (see
        :func:`get_scorer_names`), any :func:`sklearn.metrics.get_scorer`
        name, a callable (returned as is) or None.

    Returns
    -------
    scorer : callable or None
        A new scorer object on each call (None for ``scoring=None``, as
        :func:`sklearn.metrics.get_scorer` returns).

    Examples
    --------
    >>> from skcal import get_scorer
    >>> get_scorer("neg_cutoff_calibration_error")
    CalibrationScorer(cutoff_calibration_error, labels=None, multiclass='top-label', pos_label=None)
    >>> get_scorer("accuracy")
    make_scorer(accuracy_score, response_method='predict')
    """
    if isinstance(scoring, str):
        registry = _registry()
        if scoring in registry:
            return registry[scoring]().scorer()
        if scoring not in _sklearn_get_scorer_names():
            names = get_scorer_names()
            close = difflib.get_close_matches(scoring, names, n=3, cutoff=0.5)
            hint = f" Did you mean {' or '.join(map(repr, close))}?" if close else ""
            raise ValueError(
                f"{scoring!r} is not a valid scoring value.{hint} "
                "skcal.get_scorer_names() lists every valid name, skcal's "
                f"({', '.join(sorted(registry))}) and scikit-learn's."
            )
    return _sklearn_get_scorer(scoring)


def make_scorers(names: Iterable[str] | None = None) -> dict[str, Callable[..., Any]]:
    """A ``{name: scorer}`` dict ready for a multi-metric ``scoring=``.

    Parameters
    ----------
    names : iterable of str, default=None
        Scorer names, skcal's or scikit-learn's; by default every skcal
        calibration scorer.

    Returns
    -------
    scoring : dict of str to callable
        The scorer of each name, ready for ``scoring=``.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from sklearn.model_selection import cross_validate
    >>> from skcal import make_scorers
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> scoring = make_scorers(["neg_cutoff_calibration_error", "accuracy"])
    >>> result = cross_validate(GaussianNB(), X, y, cv=3, scoring=scoring)
    >>> sorted(k for k in result if k.startswith("test_"))
    ['test_accuracy', 'test_neg_cutoff_calibration_error']
    """
    if names is None:
        names = sorted(_registry())
    elif isinstance(names, str):
        raise TypeError("names must be an iterable of scorer names, not a string.")
    return {name: get_scorer(name) for name in names}
