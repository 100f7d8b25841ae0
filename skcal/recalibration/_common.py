"""Small internals shared by the recalibrator modules.

The scikit-learn recalibrators on probability matrices (temperature, sigmoid,
isotonic through :class:`~sklearn.calibration.CalibratedClassifierCV` around
a frozen pass-through model), the weighted sum every fit uses, and the
fitting of a recalibrator on column indices.
"""

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.frozen import FrozenEstimator
from sklearn.utils.validation import has_fit_parameter

__all__ = []


def weighted_sum(w, x):
    """``sum_i w_i x_i`` by numpy's pairwise summation.

    Not ``np.dot``: a threaded BLAS splits a long dot product among its
    threads and adds the parts in another order, so a fit's last bits (and
    with them which patch wins a near tie) would depend on the number of
    BLAS threads.
    """
    return float(np.sum(w * x))




# --- effective numbers of rows (Kish) ---------------------------------------------


def effective_rows(w):
    """Kish's effective number of rows ``(sum w)^2 / sum w^2``.

    The number of rows for unit weights, unchanged when every weight is
    scaled; rows of weight 0 do not count.
    """
    w = np.asarray(w, dtype=np.float64)
    return float(w.sum()) ** 2 / float(np.dot(w, w))


def uniform_weight(w):
    """``1 / (n + 1)`` for the effective number ``n`` of rows (:func:`effective_rows`).

    The weight of the uniform distribution in the output of a candidate of
    :class:`AutoRecalibrator` fitted on rows of weights ``w``.
    """
    return 1.0 / (effective_rows(w) + 1.0)


def smoothed_targets(y, w, K):
    """Platt's smoothed targets (1999), one row per observed class.

    A row of class ``k`` puts ``(N_k + 1) / (N_k + 2)`` on its class and
    ``1 / (N_k + 2)`` shared evenly by the others; for two classes these are
    exactly Platt's targets ``(N+ + 1) / (N+ + 2)`` and ``1 / (N- + 2)``. The
    counts are those of the effective number of rows ``n``
    (:func:`effective_rows`): ``N_k = n * (weight of class k) / (total
    weight)``, the plain counts for unit weights and unchanged when every
    weight is scaled. A fit to these targets cannot make the rows of a
    small, separable set certain.
    """
    w = np.asarray(w, dtype=np.float64)
    counts = effective_rows(w) * np.bincount(y, weights=w, minlength=K) / float(w.sum())
    own = (counts + 1.0) / (counts + 2.0)
    T = np.repeat(((1.0 - own) / (K - 1))[y][:, None], K, axis=1)
    T[np.arange(y.shape[0]), y] = own[y]
    return T


# --- scikit-learn's recalibrators on probability matrices ---------------------------

SKLEARN_METHODS = ("temperature", "isotonic", "sigmoid")


class ProbabilityPassthrough(ClassifierMixin, BaseEstimator):
    """A "classifier" whose input is its ``predict_proba`` output."""

    def fit(self, P, y=None):
        self.classes_ = np.arange(np.asarray(P).shape[1])
        return self

    def predict_proba(self, P):
        return np.asarray(P, dtype=np.float64)

    def predict(self, P):
        return np.argmax(self.predict_proba(P), axis=1)


def sklearn_has_temperature():
    from sklearn.calibration import CalibratedClassifierCV

    constraint = CalibratedClassifierCV._parameter_constraints["method"][0]
    return "temperature" in getattr(constraint, "options", ())


class LogLossTemperatureScaling(BaseEstimator):
    """``softmax(log p / T)`` with ``T`` minimising the weighted log-loss.

    Used when scikit-learn has no ``method="temperature"`` (before 1.8).
    """

    def fit(self, P, y, sample_weight=None):
        from scipy.optimize import minimize_scalar

        logits = np.log(np.clip(P, 1e-300, None))
        w = np.ones(P.shape[0]) if sample_weight is None else sample_weight
        rows = np.arange(P.shape[0])

        def loss(log_t):
            Z = logits / np.exp(log_t)
            Z = Z - Z.max(axis=1, keepdims=True)
            log_norm = np.log(np.exp(Z).sum(axis=1))
            return weighted_sum(w, log_norm - Z[rows, y])

        # bounded Brent never evaluates the bounds themselves: an optimum on a
        # bound (e.g. one-hot rows, half of them wrong: T -> infinity) would
        # end a few 1e-6 inside it, at a point that depends on the rows' order
        # and the scipy version; the bounds are candidates too
        inside = float(minimize_scalar(loss, bounds=(-5, 5), method="bounded").x)
        log_t = min((inside, -5.0, 5.0), key=loss)
        self.temperature_ = float(np.exp(log_t))
        return self

    def predict_proba(self, P):
        Z = np.log(np.clip(P, 1e-300, None)) / self.temperature_
        Z = Z - Z.max(axis=1, keepdims=True)
        E = np.exp(Z)
        return E / E.sum(axis=1, keepdims=True)


class SklearnRecalibrator(BaseEstimator):
    """scikit-learn's temperature, isotonic or sigmoid recalibration of ``P``.

    :class:`~sklearn.calibration.CalibratedClassifierCV` around a
    :class:`~sklearn.frozen.FrozenEstimator` whose ``predict_proba`` is its
    input; ``y`` are column indices.
    """

    def __init__(self, method="temperature"):
        self.method = method

    def fit(self, P, y, sample_weight=None):
        from sklearn.calibration import CalibratedClassifierCV

        P = np.asarray(P, dtype=np.float64)
        y = np.asarray(y)
        if self.method == "temperature" and not sklearn_has_temperature():
            self.calibrator_ = LogLossTemperatureScaling().fit(P, y, sample_weight)
        else:
            # classes missing from y: calibrate the columns present (the
            # others get probability 0); one class present: it gets 1
            self.columns_ = np.unique(y)
            if self.columns_.shape[0] < 2:
                self.calibrator_ = None
                return self
            Q = P if self.columns_.shape[0] == P.shape[1] else P[:, self.columns_]
            frozen = FrozenEstimator(ProbabilityPassthrough().fit(Q))
            # one "split" holding every row: the frozen model is never refitted
            rows = np.arange(P.shape[0])
            self.calibrator_ = CalibratedClassifierCV(
                frozen, method=self.method, cv=[(rows, rows)]
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                self.calibrator_.fit(
                    Q, np.searchsorted(self.columns_, y), sample_weight=sample_weight
                )
        return self

    def predict_proba(self, P):
        P = np.asarray(P, dtype=np.float64)
        if getattr(self, "columns_", None) is None:
            return self.calibrator_.predict_proba(P)
        full = np.zeros_like(P)
        if self.calibrator_ is None:
            full[:, self.columns_] = 1.0
        elif self.columns_.shape[0] == P.shape[1]:
            full = self.calibrator_.predict_proba(P)
        else:
            full[:, self.columns_] = self.calibrator_.predict_proba(P[:, self.columns_])
        return full


def with_column_labels(recalibrator, n_columns):
    """Say that ``y`` holds column indices, for a recalibrator that asks.

    Inside skcal the recalibrators are fitted on column indices 0..C-1; a
    recalibrator with a ``labels`` parameter would otherwise refuse a fold in
    which some class is absent (the columns are then ambiguous to it).
    """
    params = recalibrator.get_params(deep=False)
    if "labels" in params and params["labels"] is None:
        recalibrator.set_params(labels=np.arange(n_columns))
    return recalibrator


def cross_fit_folds(y, n_splits, rng):
    """The ``(train, test)`` folds of a cross-fitting over the rows of ``y``.

    Stratified by class when every class present has at least ``n_splits``
    rows, plain shuffled folds otherwise (at most one per row). Folds are
    drawn over rows, whatever their weights: a row of weight ``k`` is one
    row of one fold, while ``k`` repeated rows may fall in different folds.
    Shared by :class:`AutoRecalibrator` and :class:`RecalibrationChain`.
    """
    from sklearn.model_selection import KFold, StratifiedKFold

    counts = np.bincount(y)
    if counts[counts > 0].min() >= n_splits:
        splitter = StratifiedKFold(n_splits, shuffle=True, random_state=rng)
    else:
        splitter = KFold(min(n_splits, y.shape[0]), shuffle=True, random_state=rng)
    return list(splitter.split(np.zeros((y.shape[0], 1)), y))


def draw_seed(random_state):
    """One integer seed drawn from ``random_state`` (int, RandomState or None).

    Drawn once per fit by the estimators that hold other estimators
    (:class:`AutoRecalibrator`, :class:`RecalibrationChain`,
    :class:`RecalibratedClassifier`) and handed to every inner estimator
    whose ``random_state`` is None (:func:`seed_random_states`), so that an
    integer ``random_state`` fixes every inner fold and subsample, none of
    which then reads the global ``np.random`` state.
    """
    from sklearn.utils import check_random_state

    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def seed_random_states(estimator, seed):
    """Set ``random_state=seed`` wherever it is None in ``estimator``, recursively.

    The estimator itself, every estimator among its parameters (e.g. the
    ``init`` of utility patching) and every estimator in a list or tuple
    parameter (the ``steps`` of a chain); a ``random_state`` given already
    (an int or a RandomState) is left alone. Mutates ``estimator`` and the
    estimators it holds: call it on a clone. Returns ``estimator``.
    """
    get_params = getattr(estimator, "get_params", None)
    if get_params is None or isinstance(estimator, type):
        return estimator
    updates = {}
    for key, value in get_params(deep=False).items():
        if key == "random_state":
            if value is None:
                updates[key] = seed
        elif isinstance(value, (list, tuple)):
            for item in value:
                seed_random_states(item, seed)
        else:
            seed_random_states(value, seed)
    if updates:
        estimator.set_params(**updates)
    return estimator


def fit_recalibrator(recalibrator, P, y, w, public=False):
    """Fit ``recalibrator`` on column indices ``y``; returns it.

    ``P`` is canonical (see ``_base.py``) when it comes from skcal's own
    entry points or outputs. skcal's recalibrators (those with a private
    ``_fit_canonical``) take it as it is, without validating it again (the
    entry point did, once); any other object, or any with ``public=True``
    (``P`` is foreign: a base estimator's output), gets its public ``fit``.
    """
    with_column_labels(recalibrator, P.shape[1] if np.ndim(P) == 2 else 2)
    canonical = None if public else getattr(recalibrator, "_fit_canonical", None)
    if canonical is not None:
        return canonical(P, y, np.ones(P.shape[0]) if w is None else w)
    if w is not None and has_fit_parameter(recalibrator, "sample_weight"):
        return recalibrator.fit(P, y, sample_weight=w)
    return recalibrator.fit(P, y)


def predict_recalibrator(model, P, check=True):
    """``model``'s probabilities on the canonical ``P``.

    skcal's recalibrators (a private ``_predict_canonical``) map ``P``
    without validating it again. The output of any other object is checked
    when ``check`` (it is then the input of the next step), else returned as
    float64 (:class:`AutoRecalibrator` scores it as it is).
    """
    canonical = getattr(model, "_predict_canonical", None)
    if canonical is not None:
        return canonical(P)
    if not check:
        return np.asarray(model.predict_proba(P), dtype=np.float64)
    from ._base import check_probability_input

    name = f"{type(model).__name__}.predict_proba(P)"
    return check_probability_input(model.predict_proba(P), name=name,
                                   n_classes=P.shape[1], owner=type(model).__name__)[0]
