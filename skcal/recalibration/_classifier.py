"""The classifier meta-estimator and the composition of recalibrators.

* :class:`RecalibratedClassifier` is a classifier meta-estimator in the
  manner of :class:`sklearn.calibration.CalibratedClassifierCV`: it fits a
  base classifier, collects out-of-fold probabilities and fits one
  recalibrator (by default :class:`AutoRecalibrator`) or a chain of them on
  those probabilities.
* ``RecalibrationChain``: recalibrators applied one after the other, each
  fitted on the cross-fitted output of the previous ones.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, clone
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import LabelEncoder
from sklearn.utils import check_random_state, column_or_1d
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, has_fit_parameter, indexable

from .._compat import Interval, _fit_context
from .._input import check_sample_weight, user_stacklevel
from .._meta import HeldOutProbaMetaEstimator
from ._auto import AutoRecalibrator
from ._base import BaseRecalibrator
from ._common import (
    cross_fit_folds,
    draw_seed,
    fit_recalibrator,
    predict_recalibrator,
    seed_random_states,
    with_column_labels,
)

__all__ = ["RecalibratedClassifier"]


def _check_recalibrator(recalibrator, name="recalibrator"):
    for method in ("fit", "predict_proba"):
        if not callable(getattr(recalibrator, method, None)):
            raise TypeError(
                f"{name} must have fit(P, y) and predict_proba(P) methods; "
                f"{type(recalibrator).__name__} has no {method}."
            )


class RecalibrationChain(BaseRecalibrator):
    """Recalibrators applied one after the other.

    Step ``j`` maps the output of step ``j - 1``. Every step but the last is
    **cross-fitted**: it is fitted on ``cv - 1`` folds and predicts the
    remaining one, and the next step is fitted on these out-of-fold outputs
    (the step itself is then refitted on all the rows, for prediction).
    Fitted in sample instead, a flexible step (isotonic, binning) would hand
    the next step outputs that fit the calibration rows better than they
    will fit new rows, and the next step would learn to correct the wrong
    thing; cross-fitted, the next step sees outputs distributed as at
    prediction time. The price is ``cv + 1`` fits of every step but the last.

    Sample weights go to every fit. The folds are drawn over rows, so a row
    of integer weight ``k`` equals ``k`` repeated rows given the same folds
    (every copy in its original row's fold) and steps whose fits treat
    integer weights as repeated rows; with one step there are no folds and
    the equality holds as it does for that step.

    Parameters
    ----------
    steps : list of recalibrators
        Objects with ``fit(P, y[, sample_weight])`` and ``predict_proba(P)``
        on probability matrices, in the order they are applied; cloned.
    labels : array-like of shape (n_classes,), default=None
        The class of each column of ``X``.
    cv : int, default=5
        Folds of the cross-fitting of every step but the last (stratified
        when every class has that many rows).
    random_state : int, RandomState instance or None, default=None
        The folds; one integer seed drawn from it per fit is also set as the
        ``random_state`` of every step (and of the estimators inside it)
        whose ``random_state`` is None.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    steps_ : list
        The fitted steps (each on all the rows of its input).
    """

    _parameter_constraints = {
        "steps": [list, tuple],
        "labels": ["array-like", None],
        "cv": [Interval(numbers.Integral, 2, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        steps: list,
        labels: ArrayLike | None = None,
        *,
        cv: int = 5,
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        self.steps = steps
        self.labels = labels
        self.cv = cv
        self.random_state = random_state

    def _fit(self, P, y, w):
        if len(self.steps) == 0:
            raise ValueError("steps must hold at least one recalibrator.")
        for step in self.steps:
            _check_recalibrator(step, "every step")
        rng = check_random_state(self.random_state)
        seed = draw_seed(rng)
        C = P.shape[1]
        self.steps_ = []
        current = P
        for j, step in enumerate(self.steps):
            step = seed_random_states(with_column_labels(clone(step), C), seed)
            fitted = fit_recalibrator(clone(step), current, y, w)
            self.steps_.append(fitted)
            if j == len(self.steps) - 1:
                break
            n_splits = min(self.cv, current.shape[0])
            if n_splits < 2:
                current = predict_recalibrator(fitted, current)
                continue
            out = np.empty_like(current)
            for train, test in cross_fit_folds(y, n_splits, rng):
                model = fit_recalibrator(clone(step), current[train], y[train], w[train])
                out[test] = predict_recalibrator(model, current[test])
            current = out
        return self

    def _predict_proba(self, P):
        current = P
        last = len(self.steps_) - 1
        for j, step in enumerate(self.steps_):
            # a foreign step's output is checked where it feeds the next step
            current = predict_recalibrator(step, current, check=j < last)
        return current


class RecalibratedClassifier(HeldOutProbaMetaEstimator):
    """A classifier whose probabilities are recalibrated on held-out predictions.

    In the manner of :class:`sklearn.calibration.CalibratedClassifierCV`
    with ``ensemble=False``: clones of ``estimator`` are fitted on the
    training folds of ``cv``, their ``predict_proba`` on the held-out folds
    is collected, and **one** recalibrator is fitted on all these
    out-of-fold probabilities. The base estimator used for prediction is a
    clone fitted on all the data. Classes missing from a training fold get
    probability 0 in that fold's predictions, the fold model's columns being
    placed in the order of ``classes_``.

    To recalibrate a model fitted already, wrap it in
    :class:`sklearn.frozen.FrozenEstimator`: it is used as is and all the
    data passed to :meth:`fit` fit the recalibrator.

    Parameters
    ----------
    estimator : classifier, default=None
        A classifier with ``predict_proba``;
        :class:`~sklearn.linear_model.LogisticRegression` when None.
    recalibrator : "auto", None, object or list of objects, default="auto"
        ``"auto"`` (and None, which means the same) is
        :class:`AutoRecalibrator` (``n_jobs`` of this estimator; its
        ``random_state`` from ``random_state``): the candidate recalibrator
        whose cross-fitted log-loss on the held-out probabilities is best, the simplest within one
        standard error of the best, and never one that scores worse than
        the model left alone (see the user guide, "How auto chooses"); pass
        ``AutoRecalibrator(selection_scoring=...)`` to choose by another
        score. Else an object with ``fit(P, y[, sample_weight])`` and
        ``predict_proba(P)`` on probability matrices (any skcal
        recalibrator); it is cloned and fitted on the out-of-fold
        probabilities, with ``y`` the column indices ``0..n_classes-1``. A
        list (or tuple) of such objects is a chain, applied in order: e.g.
        ``[TemperatureScaling(), UtilityPatchingRecalibrator()]`` patches
        the temperature-scaled probabilities. Every step but the last is
        cross-fitted (5 folds): the next step is fitted on the out-of-fold
        outputs of the previous ones, which are distributed as that step's
        outputs on new data, not on its in-sample outputs.
    cv : int, cross-validation generator or iterable, default=5
        Splits for the out-of-fold probabilities, as in
        :func:`sklearn.model_selection.cross_val_predict` (an integer gives
        stratified folds); the test folds must partition the samples.
        Unused for a :class:`~sklearn.frozen.FrozenEstimator` (the way to
        recalibrate a model fitted already; there is no ``cv="prefit"``).
    n_jobs : int, default=None
        Parallel jobs for the cross-validation.
    random_state : int, RandomState instance or None, default=0
        The recalibration's randomness (the folds and subsample of "auto",
        the folds of a chain, the inner folds of a recalibrator): one
        integer seed drawn from it per fit becomes the ``random_state`` of
        the recalibrator's clone and of every estimator inside it whose
        ``random_state`` is None (one given already is kept). The default
        0 makes the fit reproducible; None draws the seed from the global
        ``np.random`` state. The folds of ``cv`` are those of
        :func:`~sklearn.model_selection.cross_val_predict` (an integer:
        unshuffled stratified folds) and the base estimator's own
        ``random_state`` is its own.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    estimator_ : classifier
        The base estimator used by :meth:`predict_proba` (fitted on all the
        data, or the frozen estimator).
    recalibrator_ : object
        The fitted recalibrator: an :class:`AutoRecalibrator` for "auto"
        (its ``chosen_``, ``scores_`` and ``summary()`` say what it chose
        and why), a ``RecalibrationChain`` for a list.
    n_features_in_ : int
        Only when the base estimator defines it.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Only when the base estimator defines it.

    See Also
    --------
    UtilityPatchingRecalibrator : The patching recalibrator.
    sklearn.calibration.CalibratedClassifierCV : The same scheme with
        sigmoid, isotonic or temperature recalibration.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skcal import RecalibratedClassifier, utility_calibration_error
    >>> X, y = make_classification(n_samples=3000, n_classes=3, n_informative=4,
    ...                            random_state=0)
    >>> X_test, y_test = X[2000:], y[2000:]
    >>> clf = RecalibratedClassifier(GaussianNB()).fit(X[:2000], y[:2000])
    >>> clf.predict_proba(X_test).shape
    (1000, 3)
    >>> clf.recalibrator_.chosen_ in clf.recalibrator_.scores_
    True
    >>> from sklearn.metrics import log_loss
    >>> before = log_loss(y_test, clf.estimator_.predict_proba(X_test))
    >>> after = log_loss(y_test, clf.predict_proba(X_test))
    >>> print(f"{before:.3f}", after < before)
    0.766 True

    A chain: temperature scaling, then utility patching of its output.

    >>> from skcal import TemperatureScaling, UtilityPatchingRecalibrator
    >>> chain = RecalibratedClassifier(
    ...     GaussianNB(), [TemperatureScaling(), UtilityPatchingRecalibrator()]
    ... ).fit(X[:2000], y[:2000])
    >>> chain.predict_proba(X_test).shape
    (1000, 3)
    """

    def __init__(
        self,
        estimator: BaseEstimator | None = None,
        recalibrator: str | BaseEstimator | list | None = "auto",
        *,
        cv: int | object = 5,
        n_jobs: int | None = None,
        random_state: int | np.random.RandomState | None = 0,
    ) -> None:
        self.estimator = estimator
        self.recalibrator = recalibrator
        self.cv = cv
        self.n_jobs = n_jobs
        self.random_state = random_state

    # scikit-learn's declarative parameter validation, checked by _fit_context at
    # the start of fit; estimator, recalibrator and cv are checked in fit with
    # messages of their own (the missing method named, cv="prefit" removed)
    _parameter_constraints = {
        "estimator": "no_validation",
        "recalibrator": "no_validation",
        "cv": "no_validation",
        "n_jobs": [numbers.Integral, None],
        "random_state": ["random_state"],
    }

    def _base(self):
        return LogisticRegression() if self.estimator is None else self.estimator

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(
        self,
        X: ArrayLike,
        y: ArrayLike,
        sample_weight: ArrayLike | None = None,
        **fit_params: Any,
    ) -> RecalibratedClassifier:
        """Fit the base estimator and the recalibrator on held-out probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data, in any form the base estimator accepts.
        y : array-like of shape (n_samples,)
            Target labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Passed to the base estimator's ``fit`` (when it accepts it, or
            with metadata routing when it requests it) and to the
            recalibrator's.
        **fit_params : dict
            Only with metadata routing enabled
            (``sklearn.set_config(enable_metadata_routing=True)``): routed to
            the base estimator's ``fit`` as it requests.

        Returns
        -------
        self : RecalibratedClassifier
            This meta-estimator, fitted.
        """
        base = self._base()
        recalibrator = self.recalibrator
        if recalibrator is None or (
            isinstance(recalibrator, str) and recalibrator == "auto"
        ):
            recalibrator = AutoRecalibrator(n_jobs=self.n_jobs)
        elif isinstance(recalibrator, str):
            raise ValueError(
                f"recalibrator must be 'auto', None, an object with fit(P, y) and "
                f"predict_proba(P) or a list of them, got {recalibrator!r}; for one "
                "family by name use AutoRecalibrator(candidates=[name]), e.g. "
                f"recalibrator=AutoRecalibrator(candidates=[{recalibrator!r}])."
            )
        elif isinstance(recalibrator, (list, tuple)):
            if len(recalibrator) == 0:
                raise ValueError(
                    "recalibrator is an empty list; pass at least one recalibrator "
                    "(or 'auto')."
                )
            for step in recalibrator:
                _check_recalibrator(step, "every recalibrator of the list")
            recalibrator = RecalibrationChain(list(recalibrator))
        else:
            _check_recalibrator(recalibrator)
        if isinstance(self.cv, str):
            raise ValueError(
                f"cv must be an int, a cross-validation generator or an iterable, "
                f"got {self.cv!r}"
                + (
                    "; to recalibrate a fitted estimator, wrap it in "
                    "sklearn.frozen.FrozenEstimator."
                    if self.cv == "prefit"
                    else "."
                )
            )
        self._check_predict_proba(base)
        y = column_or_1d(y, warn=True)
        check_classification_targets(y)
        X, y = indexable(X, y)
        if sample_weight is not None:
            sample_weight = check_sample_weight(sample_weight, y.shape[0])
        frozen = isinstance(base, FrozenEstimator)
        params = self._route_fit_params(
            base, sample_weight, fit_params, frozen, "to fit the recalibrator"
        )

        if frozen:
            self.estimator_, held_out = self._held_out_proba(
                base, X, y, params, True, None
            )
            classes = np.asarray(self.estimator_.classes_)
            index = np.searchsorted(classes, y)
            index = np.minimum(index, classes.shape[0] - 1)
            if not np.all(classes[index] == y):
                unknown = np.setdiff1d(y, classes)
                raise ValueError(
                    f"y has labels {unknown.tolist()} that the frozen estimator "
                    f"does not know (its classes_ are {classes.tolist()})."
                )
        else:
            encoder = LabelEncoder().fit(y)
            classes = encoder.classes_
            if classes.shape[0] < 2:
                raise ValueError(
                    "RecalibratedClassifier needs at least 2 classes in y, got "
                    f"{classes.shape[0]} class"
                    + (f" ({classes.tolist()[0]!r})." if classes.shape[0] else ".")
                )
            index = encoder.transform(y)
            self.estimator_, held_out = self._held_out_proba(
                base, X, y, params, False, self.cv
            )
            if not np.array_equal(self.estimator_.classes_, classes):
                raise ValueError(
                    f"estimator has classes {self.estimator_.classes_.tolist()} but "
                    f"y has {classes.tolist()}."
                )

        held_out = np.asarray(held_out, dtype=np.float64)
        self.recalibrator_ = seed_random_states(
            with_column_labels(clone(recalibrator), held_out.shape[1]),
            draw_seed(self.random_state),
        )
        if sample_weight is not None and not has_fit_parameter(
            self.recalibrator_, "sample_weight"
        ):
            warnings.warn(
                f"{type(self.recalibrator_).__name__}.fit does not accept "
                "sample_weight; the recalibrator is fitted without weights.",
                stacklevel=user_stacklevel(),
            )
        # the base estimator's output is foreign: the recalibrator's public
        # fit is the one boundary that checks it (and below it, nothing again)
        fit_recalibrator(self.recalibrator_, held_out, index, sample_weight, public=True)
        self.classes_ = classes
        self._forward_attributes()
        return self

    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """Recalibrated class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features, in any form the base estimator's ``predict_proba`` accepts.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``.
        """
        check_is_fitted(self)
        proba = np.asarray(
            self.recalibrator_.predict_proba(self.estimator_.predict_proba(X)),
            dtype=np.float64,
        )
        n_classes = self.classes_.shape[0]
        if proba.ndim != 2 or proba.shape[1] != n_classes:
            raise ValueError(
                f"recalibrator.predict_proba returned shape {proba.shape}; "
                f"expected (n_samples, {n_classes})."
            )
        return proba

    def predict(self, X: ArrayLike) -> np.ndarray:
        """The class of largest recalibrated probability (ties: lowest index).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features, in any form the base estimator's ``predict_proba`` accepts.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Labels from ``classes_``.
        """
        check_is_fitted(self)
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]
