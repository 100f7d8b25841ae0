"""A deployed classifier's probabilities corrected online, one forecaster per bucket."""

from __future__ import annotations

import numbers
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.frozen import FrozenEstimator
from sklearn.utils import check_random_state, column_or_1d
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, indexable

from .._compat import Interval, StrOptions, _fit_context
from .._meta import HeldOutProbaMetaEstimator, check_cv_param
from ._forecaster import OnlineMSRForecaster

if TYPE_CHECKING:
    from sklearn.base import BaseEstimator
    from sklearn.model_selection import BaseCrossValidator

__all__ = ["OnlineRecalibratedClassifier"]


class OnlineRecalibratedClassifier(HeldOutProbaMetaEstimator):
    """A binary classifier whose probabilities are corrected online, bucket by bucket.

    The contextual use of the forecaster of Hu and Wu (Algorithm 1): the
    base classifier's probability of the positive class, ``s(x)``, picks one
    of ``n_bins`` equal-width buckets of ``[0, 1]``, and each bucket runs its
    own :class:`OnlineMSRForecaster`. In bucket ``k`` the forecasts issued
    for the samples whose score falls there, in the order the outcomes
    arrive, keep the maximum swap regret of Theorem 5.1 (``O(sqrt(n_k)
    log n_k)`` in expectation, for the ``n_k`` samples of that bucket)
    even if the data drift or an adversary picks the outcomes, provided no
    outcome depends on the random draw of its own forecast (the assumption
    of Theorem 5.1; no distributional assumption on the data).

    The protocol, for a stream: :meth:`predict_proba` serves forecasts;
    :meth:`partial_fit` then reports outcomes, which are played in order,
    one round each of the sample's bucket.

    **What is guaranteed as served.** Each bucket's state is a function of
    its past outcomes only. :meth:`predict_proba` serves, for every row, a
    fresh random rounding (to the grid ``0, 1/m, ..., 1``) of the row's
    bucket's current mean :meth:`predict_mean`, with its own coins: the
    forecasters' internal draws are never shown. Served one row at a time
    (``predict_proba`` for a row, then its outcome with ``partial_fit``),
    the served forecasts have the same law as the forecasters' own and
    Theorem 5.1 holds for them, under its assumption: *the outcome does not
    depend on the served draw* (it may depend on the features, the history
    and the mean). An outcome that reacts to the draw itself is not covered
    (it can drive the calibration decision loss of what was served towards
    1). Served in batches (``predict_proba`` on many rows, then their
    outcomes), all the rows of a bucket get draws of the same mean, while
    ``partial_fit`` plays them one at a time with a mean that moves after
    each: the theorem then covers the forecasters' own sequence
    (``forecasters_[k].forecasts_``), not what was served, which is measured
    in the user guide (``doc/online.md``). :meth:`predict_mean` serves the
    means themselves: deterministic, visible to anyone, with the
    soft-binned guarantee of :class:`OnlineMSRForecaster` instead.

    Parameters
    ----------
    estimator : classifier, default=None
        A binary classifier with ``predict_proba``;
        :class:`~sklearn.linear_model.LogisticRegression` when None. Wrap a
        deployed, fitted model in :class:`~sklearn.frozen.FrozenEstimator`:
        it is used as is. An unfrozen estimator is fitted by :meth:`fit` (or
        by the first :meth:`partial_fit`) on that data, and the forecasters
        start from its cross-validated probabilities on the same data;
        later batches only update the forecasters, never the estimator.
    n_bins : int, default=10
        The number of equal-width buckets of the base score.
    horizon : int or None, default=None
        ``horizon`` of each bucket's :class:`OnlineMSRForecaster` (None: the
        doubling schedule, for a stream of unknown length).
    n_buckets : int or "auto", default="auto"
        ``n_buckets`` of each forecaster: the number of forecast values
        ``1/m, ..., 1``.
    cv : int, cross-validation generator or iterable, default=5
        Folds for the held-out probabilities of an unfrozen estimator, as in
        :func:`sklearn.model_selection.cross_val_predict`.
    n_jobs : int, default=None
        Parallel jobs for that cross-validation.
    random_state : int, RandomState instance or None, default=None
        Seeds the forecasters' draws.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    estimator_ : classifier
        The base classifier (fitted, or the frozen one).
    forecasters_ : list of OnlineMSRForecaster
        One per bucket of the score.
    n_samples_seen_ : int
        Outcomes received so far.
    n_features_in_ : int
        Forwarded from ``estimator_`` when it has it.

    See Also
    --------
    OnlineMSRForecaster : The forecaster each bucket runs.
    RecalibratedClassifier : Batch recalibration on held-out probabilities.

    References
    ----------
    Lunjia Hu and Yifan Wu. *Predict to Minimize Swap Regret for All
    Payoff-Bounded Tasks*. FOCS 2024, pages 244-263. Section 5, Algorithm 1,
    Theorem 5.1.

    Examples
    --------
    A deployed model whose scores are too high, corrected as outcomes arrive:

    >>> import numpy as np
    >>> from sklearn.frozen import FrozenEstimator
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skcal.online import OnlineRecalibratedClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(6000, 2))
    >>> y = (rng.uniform(size=6000) < 1 / (1 + np.exp(-X[:, 0]))).astype(int)
    >>> model = LogisticRegression().fit(X[:1000], y[:1000])
    >>> model.intercept_ += 1.5  # drift: every score is now too high
    >>> online = OnlineRecalibratedClassifier(FrozenEstimator(model), random_state=0)
    >>> for start in range(1000, 6000, 500):
    ...     online = online.partial_fit(X[start:start + 500], y[start:start + 500])
    >>> online.n_samples_seen_
    5000
    >>> online.predict_proba(X[:2]).shape
    (2, 2)
    """

    def __init__(
        self,
        estimator: BaseEstimator | None = None,
        *,
        n_bins: int = 10,
        horizon: int | None = None,
        n_buckets: str | int = "auto",
        cv: int | BaseCrossValidator | Iterable[Any] | None = 5,
        n_jobs: int | None = None,
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        self.estimator = estimator
        self.n_bins = n_bins
        self.horizon = horizon
        self.n_buckets = n_buckets
        self.cv = cv
        self.n_jobs = n_jobs
        self.random_state = random_state

    # scikit-learn's declarative parameter validation, checked by _fit_context at
    # the start of fit and of the first partial_fit; the estimator is checked
    # with a message of its own (the missing predict_proba named), cv by the
    # cross-validation, and booleans, which the integer intervals would take,
    # by _check_params
    _parameter_constraints = {
        "estimator": "no_validation",
        "n_bins": [Interval(numbers.Integral, 1, None, closed="left")],
        "horizon": [Interval(numbers.Integral, 2, None, closed="left"), None],
        "n_buckets": [
            StrOptions({"auto"}),
            Interval(numbers.Integral, 2, None, closed="left"),
        ],
        "cv": "no_validation",
        "n_jobs": [numbers.Integral, None],
        "random_state": ["random_state"],
    }

    def _base(self):
        if self.estimator is None:
            from sklearn.linear_model import LogisticRegression

            return LogisticRegression()
        return self.estimator

    def _check_params(self):
        n = self.n_bins
        if not isinstance(n, numbers.Integral) or isinstance(n, bool) or n < 1:
            raise ValueError(f"n_bins must be a positive integer, got {n!r}.")
        # the forecasters' own parameters, checked once here
        OnlineMSRForecaster(self.horizon, n_buckets=self.n_buckets)._check_params()
        check_cv_param(self.cv)

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X: ArrayLike, y: ArrayLike) -> OnlineRecalibratedClassifier:
        """Start over: fit (or take) the base classifier, then play ``(X, y)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input samples, in any form the base estimator accepts.
        y : array-like of shape (n_samples,)
            Binary labels, played in this order.

        Returns
        -------
        self : OnlineRecalibratedClassifier
            The estimator itself.
        """
        for name in ("estimator_", "classes_", "forecasters_", "n_samples_seen_"):
            self.__dict__.pop(name, None)
        return self.partial_fit(X, y)

    @_fit_context(prefer_skip_nested_validation=False)
    def partial_fit(
        self, X: ArrayLike, y: ArrayLike, classes: ArrayLike | None = None
    ) -> OnlineRecalibratedClassifier:
        """Report the outcomes ``y`` of the samples ``X``, in order.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input samples, in any form the base estimator accepts.
        y : array-like of shape (n_samples,)
            Binary labels.
        classes : array-like of shape (2,), default=None
            The two classes; taken from a frozen estimator, else from ``y``
            on the first call. Later calls must keep to them.

        Returns
        -------
        self : OnlineRecalibratedClassifier
            The estimator itself.
        """
        first = not hasattr(self, "forecasters_")
        y = column_or_1d(y, warn=True)
        check_classification_targets(y)
        X, y = indexable(X, y)
        if first:
            scores = self._start(X, y, classes)
        else:
            scores = self.estimator_.predict_proba(X)[:, 1]
        index = self._encode(y)
        bins = self._bins(scores)
        for k, outcome in zip(bins.tolist(), index.tolist()):
            forecaster = self.forecasters_[k]
            forecaster.predict()
            forecaster.update(outcome)
        self.n_samples_seen_ += index.shape[0]
        return self

    def _start(self, X, y, classes):
        self._check_params()
        base = self._base()
        self._check_predict_proba(base)
        self._frozen = isinstance(base, FrozenEstimator)
        if self._frozen:
            self.estimator_ = base
            self.classes_ = np.asarray(base.classes_)
            scores = None
        else:
            labels = np.unique(y) if classes is None else np.unique(classes)
            if classes is not None and not np.all(np.isin(y, labels)):
                raise ValueError(
                    f"y has labels {np.setdiff1d(y, labels).tolist()} not in "
                    f"classes {labels.tolist()}."
                )
            y_type = type_of_target(y, input_name="y", raise_unknown=True)
            if y_type not in ("binary", "unknown") or labels.shape[0] > 2:
                raise ValueError(
                    "Only binary classification is supported. The type of the "
                    f"target is {y_type}."
                )
            if labels.shape[0] < 2:
                raise ValueError(
                    "OnlineRecalibratedClassifier needs the two classes: pass "
                    f"classes=, or a y with both (got one class, {labels.tolist()})."
                )
            self.estimator_, held_out = self._held_out_proba(
                base, X, y, {}, False, self.cv
            )
            scores = held_out[:, 1]
            self.classes_ = np.asarray(self.estimator_.classes_)
        if self.classes_.shape[0] != 2:
            raise ValueError(
                "Only binary classification is supported. The estimator has "
                f"{self.classes_.shape[0]} classes."
            )
        self._forward_attributes()
        rng = check_random_state(self.random_state)
        seeds = rng.randint(np.iinfo(np.int32).max, size=self.n_bins)
        self._serve_rng = np.random.RandomState(
            rng.randint(np.iinfo(np.int32).max)
        )
        self.forecasters_ = []
        for seed in seeds:
            f = OnlineMSRForecaster(
                self.horizon, n_buckets=self.n_buckets, random_state=int(seed)
            )
            f.predict_mean()  # start it: its epoch and grid exist from the outset
            self.forecasters_.append(f)
        self.n_samples_seen_ = 0
        if scores is None:
            scores = self.estimator_.predict_proba(X)[:, 1]
        return scores

    def _encode(self, y):
        classes = self.classes_
        index = np.searchsorted(classes, y)
        index = np.minimum(index, classes.shape[0] - 1)
        if not np.all(classes[index] == y):
            raise ValueError(
                f"y has labels {np.setdiff1d(y, classes).tolist()} that are not "
                f"in classes_ {classes.tolist()}."
            )
        return index

    def _bins(self, scores):
        return np.minimum((scores * self.n_bins).astype(np.intp), self.n_bins - 1)

    def predict_mean(self, X: ArrayLike) -> NDArray[np.float64]:
        """The mean forecast of each sample's bucket (no random draw).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input samples, in any form the base estimator accepts.

        Returns
        -------
        proba : ndarray of shape (n_samples, 2)
            Column 1 is the bucket's mean forecast ``p~`` of ``classes_[1]``.
        """
        check_is_fitted(self)
        scores = self.estimator_.predict_proba(X)[:, 1]
        current = np.array([f.predict_mean() for f in self.forecasters_])
        p = current[self._bins(scores)]
        return np.column_stack([1.0 - p, p])

    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """Forecasts for the samples ``X``: a fresh random rounding per row.

        Row ``i`` gets its bucket's mean :meth:`predict_mean` rounded at
        random to a neighbouring grid point ``k/m`` (mean preserved), with
        coins of its own (seeded by ``random_state``), never the
        forecasters' internal draws. See the class docstring for what this
        guarantees.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input samples, in any form the base estimator accepts.

        Returns
        -------
        proba : ndarray of shape (n_samples, 2)
            Column 1 is the forecast probability of ``classes_[1]``.
        """
        mean = self.predict_mean(X)[:, 1]
        scores_bins = self._bins(self.estimator_.predict_proba(X)[:, 1])
        m = np.array([f.n_buckets_ for f in self.forecasters_])[scores_bins]
        x = mean * m
        k = np.minimum(np.floor(x), m - 1)
        up = self._serve_rng.random_sample(mean.shape[0]) < x - k
        p = (k + up) / m
        return np.column_stack([1.0 - p, p])

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """The class with the larger forecast probability (ties: ``classes_[0]``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input samples, in any form the base estimator accepts.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Predicted class of each sample.
        """
        proba = self.predict_proba(X)
        return self.classes_[(proba[:, 1] > proba[:, 0]).astype(np.intp)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags
