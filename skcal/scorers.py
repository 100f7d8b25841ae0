"""scikit-learn scorers for the skcal measures.

``get_scorer("neg_smooth_calibration_error")`` returns an object usable as
``scoring=`` anywhere in scikit-learn (``cross_validate``, ``GridSearchCV``,
``permutation_importance``); any name skcal does not define falls through to
:func:`sklearn.metrics.get_scorer`, so skcal and scikit-learn names mix freely
in one multi-metric ``scoring`` dict.
"""

import numpy as np
from sklearn.metrics import get_scorer as _sklearn_get_scorer
from sklearn.metrics import get_scorer_names as _sklearn_get_scorer_names

from ._compat import _Scorer
from ._validation import check_binary_calibration_input

__all__ = ["CalibrationScorer", "get_scorer", "get_scorer_names", "make_scorers"]

class CalibrationScorer(_Scorer):
    """Scorer for a calibration measure on ``predict_proba`` output.

    Built by the ``scorer()`` method of the measure classes and by
    :func:`get_scorer`; not usually created directly. It evaluates
    ``sign * measure(y_true, y_prob, **options)``, where ``y_prob`` is the
    estimator's ``predict_proba`` output, read as the measure reads it:

    * binary classifiers: the probability of ``pos_label`` (the estimator's
      ``classes_[-1]`` by default, so string labels need no extra option);
    * multiclass classifiers: top-label confidence against correctness, with
      the columns labelled by the estimator's ``classes_`` (so folds missing a
      class are scored correctly), or an error with ``multiclass="raise"``;
    * multiclass measures (``proba="full"``, e.g. the utility calibration
      error): the whole probability matrix, its columns labelled by the
      estimator's ``classes_`` (passed as ``labels=``).

    It supports metadata routing: ``scorer.set_score_request(sample_weight=True)``
    lets ``cross_validate(..., params={"sample_weight": w})`` weight the score.

    Parameters
    ----------
    score_func : callable
        A measure ``f(y_true, y_prob, *, sample_weight=None, **options)``.
    sign : {1, -1}
        -1 for a loss (every skcal measure), so that greater is better.
    kwargs : dict
        Options of the measure, including ``pos_label`` and ``multiclass``
        (binary measures) or ``labels`` (multiclass measures; None means the
        estimator's ``classes_``).
    proba : {"binary", "full"}, default="binary"
        Whether the measure takes one probability per sample (binary measures,
        read as described above) or the full ``predict_proba`` matrix.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from sklearn.model_selection import cross_val_score
    >>> from skcal import get_scorer
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> scorer = get_scorer("neg_cutoff_calibration_error")
    >>> scores = cross_val_score(GaussianNB(), X, y, cv=3, scoring=scorer)
    >>> bool((scores <= 0).all())
    True
    """

    def __init__(self, score_func, sign=-1, kwargs=None, proba="binary"):
        if proba not in ("binary", "full"):
            raise ValueError(f'proba must be "binary" or "full", got {proba!r}.')
        super().__init__(
            score_func, sign, dict(kwargs or {}), response_method="predict_proba"
        )
        self._proba = proba

    def _score(self, method_caller, estimator, X, y_true, **kwargs):
        self._warn_overlap(
            message=(
                "There is an overlap between set kwargs of this scorer instance "
                "and passed metadata. Please pass them either as options of the "
                "measure or as metadata, but not both."
            ),
            kwargs=kwargs,
        )
        options = {**self._kwargs, **kwargs}
        classes = getattr(estimator, "classes_", None)
        if self._proba == "full":
            y_prob = method_caller(estimator, "predict_proba", X, pos_label=None)
            labels = options.pop("labels", None)
            if labels is None:
                labels = classes
            return self._sign * self._score_func(
                y_true, y_prob, labels=labels, **options
            )
        pos_label = options.pop("pos_label", None)
        multiclass = options.pop("multiclass", "top-label")
        labels = options.pop("labels", None)
        if labels is None:
            labels = classes
        y_prob = method_caller(estimator, "predict_proba", X, pos_label=pos_label)
        y_prob = np.asarray(y_prob)
        if y_prob.ndim == 1:
            if pos_label is None:
                pos_label = classes[-1] if classes is not None else None
            y, p, w = check_binary_calibration_input(
                y_true,
                y_prob,
                options.pop("sample_weight", None),
                pos_label=pos_label,
            )
        else:
            y, p, w = check_binary_calibration_input(
                y_true,
                y_prob,
                options.pop("sample_weight", None),
                pos_label=pos_label,
                multiclass=multiclass,
                labels=labels,
            )
        return self._sign * self._score_func(y, p, sample_weight=w, **options)

    def __repr__(self):
        options = "".join(f", {k}={v!r}" for k, v in self._kwargs.items())
        return f"CalibrationScorer({self._score_func.__name__}{options})"


def _registry():
    # Imported here: the measure classes import this module for their scorer.
    from . import measures

    return {
        "neg_" + cls._score_name: cls
        for cls in measures._MEASURE_CLASSES
    }


def get_scorer_names():
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


def get_scorer(scoring):
    """Scorer from a name; skcal names first, then scikit-learn's.

    Parameters
    ----------
    scoring : str, callable or None
        An skcal name such as ``"neg_soft_binned_cdl"`` (see
        :func:`get_scorer_names`), any :func:`sklearn.metrics.get_scorer`
        name, a callable (returned as is) or None.

    Returns
    -------
    scorer : callable
        A new scorer object on each call.

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
    return _sklearn_get_scorer(scoring)


def make_scorers(names=None):
    """A ``{name: scorer}`` dict ready for a multi-metric ``scoring=``.

    Parameters
    ----------
    names : iterable of str, default=None
        Scorer names, skcal's or scikit-learn's; by default every skcal
        calibration scorer.

    Returns
    -------
    scoring : dict of str to callable

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
