"""The base shared by the recalibrators that map probabilities to probabilities.

Every family (scaling, binning, Venn-ABERS, spline) is a scikit-learn
classifier whose input ``X`` is the ``predict_proba`` output of a frozen
model: ``fit(X, y, sample_weight=None)`` learns a map from those
probabilities to calibrated ones, ``predict_proba(X)`` applies it. This module
holds what they share: the input checks (done once, here), the class
encoding, and the conversion of a 1-D positive-class probability to the
two-column form. A family implements ``_fit(P, y, w)`` and
``_predict_proba(P)`` on the canonical form:

* ``P``: float64, C-contiguous, shape ``(n, C)`` with ``C >= 2``, finite,
  entries in ``[0, 1]``, rows summing to 1 (within the row-sum tolerance);
* ``y``: intp column indices in ``0..C-1``;
* ``w``: float64 weights, finite, non-negative, positive sum (ones when the
  caller passed none).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import column_or_1d
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from .._compat import _fit_context
from .._input import (
    as_probability_array,
    check_probability_matrix,
    check_sample_weight,
    label_positions,
    resolve_labels,
)

__all__ = []


def check_probability_input(X, *, name="X", n_classes=None, owner=None):
    """``X`` as an ``(n, C)`` float64 probability matrix, and whether it was 1-D.

    A 1-D ``X`` (or one column) is the probability of the second of two
    classes and becomes ``[1 - p, p]``. ``n_classes`` (when fitted) is the
    number of columns expected; ``owner`` names the estimator in errors.
    """
    input_dtype = getattr(X, "dtype", None)
    array = as_probability_array(X, name)
    if array.ndim == 2 and array.shape[1] == 1:
        array = array[:, 0]
    return checked_probabilities(array, name, input_dtype, n_classes, owner)


def checked_probabilities(array, name, input_dtype, n_classes, owner):
    """The checks shared by every probability input, on its float64 ``array``.

    ``array`` is 1-D (the probability of the second of two classes) or has
    at least 2 columns; ``input_dtype`` (the caller's) sets the row-sum
    tolerance. Returns the ``(n, C)`` matrix and whether it was 1-D.
    """
    one_d = array.ndim == 1
    if array.shape[0] == 0:
        raise ValueError(f"{name} is empty: at least one sample is needed.")
    n_found = 2 if one_d else array.shape[1]
    if n_classes is not None and n_found != n_classes:
        what = "a 1-D array (2 classes)" if one_d else f"{n_found} columns"
        raise ValueError(
            f"{name} has {what} but {owner or 'the recalibrator'} was fitted on "
            f"{n_classes} classes."
        )
    check_probability_matrix(array, name=name, input_dtype=input_dtype)
    if one_d:
        array = np.column_stack([1.0 - array, array])
    return np.ascontiguousarray(array, dtype=np.float64), one_d


class BaseRecalibrator(ClassifierMixin, BaseEstimator):
    """Map the probabilities of a frozen classifier to calibrated probabilities.

    Subclasses define ``_fit(P, y, w)`` (setting fitted attributes) and
    ``_predict_proba(P)`` returning an ``(n, C)`` probability matrix, on the
    canonical form described in the module docstring. The public methods
    validate once and call them.

    ``labels`` (a constructor parameter of every subclass) says which class
    each column of ``X`` is; by default the distinct labels of ``y`` when all
    ``C`` occur, else an error asks for it.
    """

    def _validate_fit(self, X, y, sample_weight):
        P, one_d = check_probability_input(X)
        y = column_or_1d(y, warn=True)
        check_classification_targets(y)
        if y.shape[0] != P.shape[0]:
            raise ValueError(
                f"X and y have inconsistent numbers of samples: {P.shape[0]} and "
                f"{y.shape[0]}."
            )
        classes = resolve_labels(
            y, self.labels, P.shape[1], proba_name="X", y_name="y", one_d=one_d
        )
        index = label_positions(classes, y).astype(np.intp)
        w = check_sample_weight(sample_weight, P.shape[0])
        self.classes_ = classes
        self.n_classes_ = int(P.shape[1])
        return P, index, w

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(
        self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> BaseRecalibrator:
        """Fit the map on held-out probabilities and observed classes.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            Probabilities of a frozen model (``predict_proba`` output), or the
            probability of the second of two classes.
        y : array-like of shape (n_samples,)
            Observed classes.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights with a positive sum.

        Returns
        -------
        self : object
            The fitted recalibrator.
        """
        P, y_index, w = self._validate_fit(X, y, sample_weight)
        self._fit(P, y_index, w)
        return self

    def _fit_canonical(self, P, y, w):
        """Fit on the canonical form without validating it (skcal's inner fits).

        The entry point (a public ``fit``) validated ``P``, ``y`` and ``w``
        once; candidates, folds and inner cross-validations call this. The
        parameters are still checked (they are the estimator's, not input).
        ``y`` holds column indices, so the classes are ``labels`` when given,
        else the column indices.
        """
        self._validate_params()
        C = P.shape[1]
        self.classes_ = np.arange(C) if self.labels is None else np.asarray(self.labels)
        self.n_classes_ = int(C)
        self._fit(P, y, w)
        return self

    def _predict_canonical(self, P):
        """``_predict_proba`` on a canonical ``P`` (skcal's inner predictions)."""
        return self._predict_proba(P)

    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """Calibrated probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            Probabilities of the frozen model, as in :meth:`fit`.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``.
        """
        check_is_fitted(self)
        P, _ = check_probability_input(
            X, n_classes=self.n_classes_, owner=type(self).__name__
        )
        return self._predict_proba(P)

    def predict(self, X: ArrayLike) -> np.ndarray:
        """The class of largest calibrated probability (ties: lowest index).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            Predicted probabilities, as for ``predict_proba``.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Labels from ``classes_``.
        """
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        tags.target_tags.required = True
        return tags
