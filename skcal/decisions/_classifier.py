"""A classifier turned into the rounded best responses of one decision task."""

from __future__ import annotations

import numbers
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.frozen import FrozenEstimator
from sklearn.preprocessing import LabelEncoder
from sklearn.utils import column_or_1d
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, indexable

from .._compat import _fit_context
from .._input import check_sample_weight
from .._meta import HeldOutProbaMetaEstimator, check_cv_param
from ._rounding import ROUNDING_CONSTRAINTS, SCDLRounding, check_m
from ._task import DecisionTask

if TYPE_CHECKING:
    from sklearn.base import BaseEstimator
    from sklearn.model_selection import BaseCrossValidator

__all__ = ["RoundedResponseClassifier"]


class RoundedResponseClassifier(HeldOutProbaMetaEstimator):
    """Act on a binary classifier's probabilities with a swap-regret guarantee.

    Fits ``estimator``, measures the SCDL of its cross-validated
    probabilities (:class:`SCDLRounding`), and :meth:`predict_action` returns
    the actions of the rounding response ``r*_Z o tau_m`` of Bairaktari et
    al., Section 4: round the predicted probability to the ``1/m`` grid, then take the
    best response for ``task``. By Theorem 4.2 its swap regret, in
    expectation over the rounding draws (:meth:`predict_action_proba`), is
    at most ``swap_regret_bound_ = 2 SCDL_m + 2/m`` on the distribution of the
    cross-validated predictions -- for this task and for every other task
    with utilities in ``[0, 1]``. On new data it holds up to the sampling
    error of SCDL and the difference between the fold models and the final
    one (none for a :class:`~sklearn.frozen.FrozenEstimator`).

    :meth:`predict` returns class labels (the base estimator's most probable
    class), as for every classifier; the actions of the task are returned by
    :meth:`predict_action` and :meth:`predict_action_proba`.
    :meth:`predict_proba` is the base estimator's, and :meth:`score` is the
    mean utility of the response, not accuracy.

    Parameters
    ----------
    estimator : classifier
        A binary classifier with ``predict_proba``. It is cloned and fitted
        on all the data; the rounding is fitted on its cross-validated
        probabilities. Wrap a fitted classifier in
        :class:`sklearn.frozen.FrozenEstimator` to use it as is: the data
        passed to :meth:`fit` are then all held out and only fit the rounding.
    task : DecisionTask or array-like of shape (n_actions, 2)
        The decision task; outcome 0 is ``classes_[0]``, outcome 1 is
        ``classes_[1]``.
    m : "auto", None or int, default="auto"
        Grid size, see :class:`SCDLRounding` (None means ``"auto"``).
    rounding : {"random", "floor"}, default="random"
        Randomized rounding (Definition 4.1) or the deterministic hard-binned
        variant, see :class:`SCDLRounding`.
    cv : int, cross-validation generator or iterable, default=None
        Splits for the held-out probabilities, as in
        :func:`sklearn.model_selection.cross_val_predict` (None: 5-fold,
        stratified). Unused for a :class:`~sklearn.frozen.FrozenEstimator`.
    n_jobs : int, default=None
        Parallel jobs for the cross-validation.
    random_state : int, RandomState instance or None, default=None
        Draws of the randomized rounding in :meth:`predict`.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    estimator_ : classifier
        The base estimator fitted on all the data.
    task_ : DecisionTask
    rounding_ : SCDLRounding
        Fitted on the cross-validated probabilities.
    m_ : int
    scdl_ : float
    swap_regret_bound_ : float
        See :class:`SCDLRounding`.
    n_features_in_ : int
        Only when the base estimator defines it.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Only when the base estimator defines it.

    See Also
    --------
    SCDLRounding : The rounding alone, for predictions you already have.
    DecisionTask : Best responses and swap regret.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skcal import DecisionTask, RoundedResponseClassifier
    >>> X, y = make_classification(n_samples=4000, random_state=0)
    >>> X_fit, y_fit, X_new, y_new = X[:2000], y[:2000], X[2000:], y[2000:]
    >>> task = DecisionTask([[1.0, 0.0], [0.5, 1.0]])  # the umbrella task
    >>> clf = RoundedResponseClassifier(
    ...     LogisticRegression(), task, random_state=0).fit(X_fit, y_fit)
    >>> clf.predict_action(X_new[:5]).shape
    (5,)

    The bound is on the *expected* swap regret over the rounding draws
    (:meth:`predict_action_proba`), here on held-out data:

    >>> bool(task.swap_regret(clf.predict_action_proba(X_new), y_new)
    ...      <= clf.swap_regret_bound_)
    True
    """

    def __init__(
        self,
        estimator: BaseEstimator,
        task: DecisionTask,
        *,
        m: str | int | None = "auto",
        rounding: str = "random",
        cv: int | BaseCrossValidator | Iterable[Any] | None = None,
        n_jobs: int | None = None,
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        self.estimator = estimator
        self.task = task
        self.m = m
        self.rounding = rounding
        self.cv = cv
        self.n_jobs = n_jobs
        self.random_state = random_state

    _parameter_constraints = {
        **ROUNDING_CONSTRAINTS,
        # checked in fit with messages of their own (a missing predict_proba,
        # a task that is not binary, a string cv such as "prefit")
        "estimator": "no_validation",
        "task": "no_validation",
        "cv": "no_validation",
        "n_jobs": [numbers.Integral, None],
    }

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(
        self,
        X: ArrayLike,
        y: ArrayLike,
        sample_weight: ArrayLike | None = None,
        **fit_params: Any,
    ) -> RoundedResponseClassifier:
        """Fit the estimator and the rounding on its held-out probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data, in any form the base estimator accepts.
        y : array-like of shape (n_samples,)
            Binary target.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights for the base estimator (when its ``fit`` accepts them,
            or with metadata routing when it requests them) and for the SCDL
            measured to choose the grid.
        **fit_params : dict
            Only with metadata routing enabled
            (``sklearn.set_config(enable_metadata_routing=True)``): routed to
            the base estimator's ``fit`` as it requests.

        Returns
        -------
        self : RoundedResponseClassifier
            The estimator itself.
        """
        # Parameters first (_fit_context checked the declared constraints):
        # the base estimator's fits can be expensive.
        check_m(self)
        check_cv_param(self.cv)
        task = (
            self.task
            if isinstance(self.task, DecisionTask)
            else DecisionTask(self.task)
        )
        if task.n_outcomes != 2:
            raise ValueError(
                f"task must have 2 outcomes (the two classes), got {task.n_outcomes}: "
                "the rounding response of Bairaktari et al. is for binary outcomes."
            )
        y = column_or_1d(y, warn=True)
        check_classification_targets(y)
        y_type = type_of_target(y, input_name="y")
        if y_type != "binary":
            raise ValueError(
                "Only binary classification is supported. The type of the target "
                f"is {y_type}."
            )
        X, y = indexable(X, y)
        encoder = LabelEncoder().fit(y)
        if encoder.classes_.shape[0] != 2:
            raise ValueError(
                "RoundedResponseClassifier needs a binary target with exactly 2 "
                f"classes, got {encoder.classes_.shape[0]} class(es)."
            )
        outcome = encoder.transform(y)
        self._check_predict_proba(self.estimator)
        if sample_weight is not None:
            sample_weight = check_sample_weight(sample_weight, outcome.shape[0])
        frozen = isinstance(self.estimator, FrozenEstimator)
        params = self._route_fit_params(
            self.estimator,
            sample_weight,
            fit_params,
            frozen,
            "to measure SCDL and choose the rounding",
        )
        self.estimator_, held_out = self._held_out_proba(
            self.estimator, X, y, params, frozen, self.cv
        )
        if not np.array_equal(
            getattr(self.estimator_, "classes_", encoder.classes_), encoder.classes_
        ):
            raise ValueError(
                f"estimator has classes {self.estimator_.classes_.tolist()} but y "
                f"has {encoder.classes_.tolist()}."
            )
        self.rounding_ = SCDLRounding(
            m=self.m, rounding=self.rounding, random_state=self.random_state
        ).fit(held_out[:, 1], outcome, sample_weight=sample_weight)
        self.task_ = task
        self.classes_ = encoder.classes_
        self.m_ = self.rounding_.m_
        self.scdl_ = self.rounding_.scdl_
        self.swap_regret_bound_ = self.rounding_.swap_regret_bound_
        self._forward_attributes()
        return self

    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """The base estimator's class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input samples, in any form the base estimator accepts.

        Returns
        -------
        proba : ndarray of shape (n_samples, 2)
            The base estimator's class probabilities.
        """
        check_is_fitted(self)
        return self.estimator_.predict_proba(X)

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """Class labels: the base estimator's most probable class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input samples, in any form the base estimator accepts.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Labels from ``classes_`` (ties: the first class). For the actions
            of the task, see :meth:`predict_action`.
        """
        check_is_fitted(self)
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    def predict_action(self, X: ArrayLike) -> NDArray[np.intp]:
        """Actions of the rounding response ``r*_Z o tau_m`` (Definition 4.3).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input samples, in any form the base estimator accepts.

        Returns
        -------
        actions : ndarray of shape (n_samples,) of int
            Action indices of ``task`` (rows of its utility), not class
            labels. The rounding draws are independent across rows.
        """
        check_is_fitted(self)
        rounded = self.rounding_.transform(self.predict_proba(X)[:, 1])
        return self.task_.best_response(rounded)

    def predict_action_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """The distribution of the action :meth:`predict` takes on each row.

        ``r*_Z o tau_m(p)`` of Definition 4.3: the best responses at the two
        grid neighbours of ``p``, weighted by the rounding probabilities. Pass
        it to :meth:`DecisionTask.swap_regret` for the swap regret of the
        randomized response in expectation (Definition 4.4).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input samples, in any form the base estimator accepts.

        Returns
        -------
        action_proba : ndarray of shape (n_samples, n_actions)
            Probability of each action for each sample.
        """
        check_is_fitted(self)
        lower, upper, prob_upper = self.rounding_.rounding_distribution(
            self.predict_proba(X)[:, 1]
        )
        rows = np.arange(lower.shape[0])
        action_proba = np.zeros((lower.shape[0], self.task_.n_actions))
        np.add.at(
            action_proba, (rows, self.task_.best_response(lower)), 1.0 - prob_upper
        )
        np.add.at(action_proba, (rows, self.task_.best_response(upper)), prob_upper)
        return action_proba

    def score(
        self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> float:
        """Mean utility of the rounding response on ``(X, y)``; greater is better.

        The utility ``U[a, y]`` averaged over rows and, exactly, over the
        rounding draws (:meth:`predict_action_proba`), so the score is not
        itself random.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input samples, in any form the base estimator accepts.
        y : array-like of shape (n_samples,)
            Class labels (among ``classes_``).
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows; equal weights when None.

        Returns
        -------
        score : float
            Mean utility of the response on ``(X, y)``.
        """
        action_proba = self.predict_action_proba(X)
        y = column_or_1d(y, warn=False)
        outcome = np.searchsorted(self.classes_, y)
        outcome = np.minimum(outcome, 1)
        if not np.all(self.classes_[outcome] == y):
            unknown = np.setdiff1d(y, self.classes_)[:5].tolist()
            raise ValueError(
                f"y has labels {unknown} outside classes_ {self.classes_.tolist()}."
            )
        w = check_sample_weight(sample_weight, y.shape[0])
        utility = (action_proba @ self.task_.utility)[np.arange(y.shape[0]), outcome]
        return float(np.average(utility, weights=w))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags
