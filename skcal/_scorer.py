"""The scorer class of the calibration measures, on its own.

Kept apart from :mod:`skcal.scorers` (the name registry) so that the measure
classes can build scorers without importing the registry, which reads the
measure classes: nothing imports in a circle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from . import _specs
from ._compat import _Scorer
from ._input import check_binary_calibration_input
from ._input._canonical import binary_input

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Literal

__all__ = ["CalibrationScorer"]


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

    def __init__(
        self,
        score_func: Callable[..., float],
        sign: Literal[1, -1] = -1,
        kwargs: dict[str, Any] | None = None,
        proba: Literal["binary", "full"] = "binary",
    ) -> None:
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
            multiclass, labels = "top-label", None
        sample_weight = options.pop("sample_weight", None)
        if _specs.spec_of_function(self._score_func) is not None:
            # a registered measure reads the canonical form: the input is
            # converted and checked here, once, and not again below
            data = binary_input(
                y_true, y_prob, sample_weight, pos_label=pos_label,
                multiclass=multiclass, labels=labels,
            )
            return self._sign * self._score_func(data, **options)
        y, p, w = check_binary_calibration_input(
            y_true, y_prob, sample_weight, pos_label=pos_label, multiclass=multiclass,
            labels=labels,
        )
        return self._sign * self._score_func(y, p, sample_weight=w, **options)

    def __repr__(self):
        options = "".join(f", {k}={v!r}" for k, v in self._kwargs.items())
        return f"CalibrationScorer({self._score_func.__name__}{options})"
