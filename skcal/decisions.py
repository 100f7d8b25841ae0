"""Decision tasks, swap regret and the SCDL rounding response.

Everything here follows Bairaktari, Hu, Nguyen and Ullman, *Testable and
Actionable Calibration for Full Swap Regret* (Bairaktari et al.):

* :class:`DecisionTask` is a task ``Z = (A, U)`` with its best-response
  function ``r*_Z`` and the swap regret ``SR_Z`` of equation (1) and
  Definition 4.4;
* :class:`SCDLRounding` is the randomized rounding ``tau_m`` of
  Definition 4.1, with ``m`` chosen from the SCDL of held-out data so that
  Theorem 4.2 bounds the swap regret of ``r*_Z o tau_m`` for *every* task by
  ``2 SCDL_m + 2/m <= 2 SCDL + 2/m``;
* :class:`RoundedResponseClassifier` turns a probabilistic classifier into
  the decisions ``r*_Z o tau_m`` for one task.
"""

import numbers

import numpy as np
from sklearn.base import (
    BaseEstimator,
    OneToOneFeatureMixin,
    TransformerMixin,
)
from sklearn.frozen import FrozenEstimator
from sklearn.preprocessing import LabelEncoder
from sklearn.utils import check_array, check_random_state, column_or_1d
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, indexable

from ._compat import Interval, StrOptions, _check_feature_names, _fit_context
from ._meta import _HeldOutProbaMetaEstimator
from ._validation import (
    check_binary_calibration_input,
    check_probability_matrix,
    check_sample_weight,
)
from .metrics import soft_binned_cdl
from .metrics._scdl import MAX_LEVEL

__all__ = ["DecisionTask", "RoundedResponseClassifier", "SCDLRounding"]

_ROUNDING_OPTIONS = ("random", "floor")


class DecisionTask:
    """A decision task: actions, outcomes and a bounded utility.

    A task ``Z = (A, U)`` of Bairaktari et al. (Section 1.1 and Definition 2.2) with
    ``U[a, y]`` the utility of action ``a`` when outcome ``y`` occurs. The
    paper's outcomes are binary (``n_outcomes = 2``: column 0 for ``y = 0``,
    column 1 for ``y = 1``); any number ``K >= 2`` of outcomes is accepted,
    with predictions then probability vectors over the ``K`` outcomes.

    Parameters
    ----------
    utility : array-like of shape (n_actions, n_outcomes)
        ``U[a, y]``, finite and inside ``[0, 1]`` (the bounded utilities for
        which the guarantees of Bairaktari et al. are stated; rescale a task with
        other bounds affinely, which rescales its swap regret by the same
        factor). At least one action and two outcomes.

    Attributes
    ----------
    utility : ndarray of shape (n_actions, n_outcomes)
        A read-only float64 copy of ``utility``.
    n_actions : int
    n_outcomes : int

    See Also
    --------
    RoundedResponseClassifier : act on a classifier's predictions for a task
        with a swap-regret guarantee.

    Examples
    --------
    Carry an umbrella (action 1) or not (action 0); outcome 1 is rain.

    >>> from skcal import DecisionTask
    >>> task = DecisionTask([[1.0, 0.0], [0.5, 1.0]])
    >>> task.best_response([0.1, 0.5, 0.9])
    array([0, 1, 1])
    >>> task.expected_utility(0.5)
    array([0.5 , 0.75])
    >>> task.swap_regret([0, 0, 1, 1], [1, 1, 0, 1])
    0.5
    """

    def __init__(self, utility):
        try:
            U = np.array(utility, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(
                "utility must be a 2-D array of numbers of shape (n_actions, "
                f"n_outcomes), got {type(utility).__name__} {utility!r:.80}."
            ) from None
        if U.ndim != 2:
            raise ValueError(
                "utility must be a 2-D array of shape (n_actions, n_outcomes), "
                f"got shape {U.shape}."
            )
        if U.shape[0] < 1:
            raise ValueError("utility must have at least one action (row).")
        if U.shape[1] < 2:
            raise ValueError(
                f"utility must have at least two outcomes (columns), got {U.shape[1]}."
            )
        if not np.all(np.isfinite(U)):
            raise ValueError("utility contains NaN or infinity.")
        if np.any(U < 0) or np.any(U > 1):
            raise ValueError("utility has values outside [0, 1].")
        U.setflags(write=False)
        self.utility = U

    @property
    def n_actions(self):
        return self.utility.shape[0]

    @property
    def n_outcomes(self):
        return self.utility.shape[1]

    def __repr__(self):
        A, K = self.utility.shape
        body = self.utility.tolist() if A * K <= 50 else f"<{A} x {K} array>"
        return f"{type(self).__name__}({body})"

    def expected_utility(self, p):
        """Expected utility of every action under the predicted distribution.

        ``E_{y ~ p} U(a, y)``; for binary outcomes ``(1 - p) U[a, 0] + p U[a, 1]``.

        Parameters
        ----------
        p : float or array-like of shape (n_samples,) or (n_samples, n_outcomes)
            For a binary task, the probability of outcome 1 (a scalar, a 1-D
            array, or ``predict_proba`` output with two columns); otherwise
            rows of probabilities over the outcomes.

        Returns
        -------
        utility : ndarray of shape (n_samples, n_actions), or (n_actions,)
            for a scalar ``p``.
        """
        P, scalar = self._check_p(p)
        values = P @ self.utility.T
        return values[0] if scalar else values

    def best_response(self, p):
        """The best-response action ``r*_Z(p)`` of Bairaktari et al. (Section 1.1).

        The action maximising the expected utility when the prediction is
        taken as the true outcome distribution; ties go to the lowest action
        index.

        Parameters
        ----------
        p : float or array-like of shape (n_samples,) or (n_samples, n_outcomes)
            As in :meth:`expected_utility`.

        Returns
        -------
        actions : ndarray of shape (n_samples,) of int, or int for a scalar
            ``p``.
        """
        values = self.expected_utility(p)
        # np.argmax returns the first maximum: ties go to the lowest action.
        if values.ndim == 1:
            return int(np.argmax(values))
        return np.argmax(values, axis=1)

    def swap_regret(self, actions, y, sample_weight=None):
        """Exact swap regret of the actions taken, on the weighted sample.

        Equation (1) of Bairaktari et al., on the weighted empirical distribution::

            SR = max_{sigma: A -> A} sum_i w_i (U[sigma(a_i), y_i] - U[a_i, y_i]) / W.

        The best swap is chosen separately for each action, so this equals
        ``sum_a max_b G[a] . (U[b] - U[a]) / W`` with ``G[a, y]`` the weight
        of outcome ``y`` among the rounds where ``a`` was played: exact, in
        O(n + A^2 K) time instead of a search over the ``A^A`` swap maps.

        For a randomized response (Definition 4.4 of Bairaktari et al.) pass the
        probability of every action in every round as ``actions``: the swap
        regret is then taken in expectation over the actions, with one swap
        map for all rounds.

        Parameters
        ----------
        actions : array-like of shape (n_samples,) or (n_samples, n_actions)
            Action indices in ``{0, ..., n_actions - 1}``, or rows of action
            probabilities.
        y : array-like of shape (n_samples,)
            Outcome indices in ``{0, ..., n_outcomes - 1}`` (the columns of
            ``utility``; ``{0, 1}`` or booleans for a binary task).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights; integer weights equal repeating rows.

        Returns
        -------
        swap_regret : float
            Non-negative, at most ``max U - min U <= 1``.
        """
        y = self._check_outcomes(y)
        n = y.shape[0]
        w = check_sample_weight(sample_weight, n)
        A, K = self.utility.shape
        Q = np.asarray(actions)
        if Q.ndim == 2:
            Q = check_array(Q, dtype=np.float64, input_name="actions")
            if Q.shape != (n, A):
                raise ValueError(
                    f"actions given as probabilities must have shape "
                    f"(n_samples, n_actions) = {(n, A)}, got {Q.shape}."
                )
            check_probability_matrix(Q, name="actions")
            weighted_outcomes = np.zeros((n, K))
            weighted_outcomes[np.arange(n), y] = w
            G = Q.T @ weighted_outcomes
        else:
            a = _check_indices(actions, A, "actions", "n_actions")
            if a.shape[0] != n:
                raise ValueError(f"actions has {a.shape[0]} elements but y has {n}.")
            G = np.bincount(a * K + y, weights=w, minlength=A * K).reshape(A, K)
        # gains[a, b]: utility collected on the rounds of action a had b been
        # played there instead; b = a is the utility actually collected.
        gains = G @ self.utility.T
        regret = gains.max(axis=1) - np.diagonal(gains)
        return float(regret.sum() / w.sum())

    def _check_p(self, p):
        """``p`` as an (n, K) probability matrix, and whether it was a scalar."""
        K = self.n_outcomes
        try:
            P = np.asarray(p, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(
                f"p must be a probability or an array of probabilities, got "
                f"{type(p).__name__}."
            ) from None
        scalar = P.ndim == 0
        if P.size == 0:
            raise ValueError("p is empty: at least one prediction is needed.")
        if K == 2 and P.ndim <= 1:
            p1 = P.reshape(-1)
            check_probability_matrix(p1, name="p")
            P = np.column_stack([1.0 - p1, p1])
        elif P.ndim == 2 and P.shape[1] == K:
            check_probability_matrix(P, name="p")
        elif K == 2:
            raise ValueError(
                "p must be the probability of outcome 1 (a scalar or of shape "
                f"(n_samples,)) or of shape (n_samples, 2), got shape {P.shape}."
            )
        else:
            raise ValueError(
                f"p must be of shape (n_samples, {K}) for a task with {K} "
                f"outcomes, got shape {P.shape} (use p.reshape(1, -1) for a "
                "single prediction)."
            )
        return P, scalar

    def _check_outcomes(self, y):
        y = _check_indices(y, self.n_outcomes, "y", "n_outcomes")
        if y.shape[0] == 0:
            raise ValueError("y is empty: the swap regret needs at least one sample.")
        return y


def _check_outcomes(y):
    """Refuse labels other than the binary outcomes ``SCDLRounding.fit`` reads."""
    y = column_or_1d(y, warn=True)
    if y.dtype.kind == "b" or y.shape[0] == 0:
        return
    try:
        classes = np.unique(y)
        usual = (
            y.dtype.kind in "iuf"
            and (np.all(np.isin(classes, [0, 1])) or np.all(np.isin(classes, [-1, 1])))
        )
    except TypeError:  # labels of mixed types
        classes, usual = np.asarray(sorted(set(map(str, y)))), False
    if not usual:
        shown = classes[:5].tolist() + (["..."] if classes.shape[0] > 5 else [])
        raise ValueError(
            f"y must hold binary outcomes with positive class 1 ({{0, 1}}, "
            f"{{-1, 1}} or booleans), got the labels {shown}; pass "
            "y == positive_label for other labels."
        )


def _check_indices(values, n_values, name, bound_name):
    """1-D integer indices in ``{0, ..., n_values - 1}``, as ``intp``."""
    v = column_or_1d(np.asarray(values), warn=False)
    if v.dtype.kind == "b":
        v = v.astype(np.intp)
    if v.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold integer indices, got dtype {v.dtype}.")
    if v.dtype.kind == "f":
        if not np.all(np.isfinite(v)) or np.any(v != np.round(v)):
            raise ValueError(f"{name} must hold integer indices.")
    if v.shape[0] and (v.min() < 0 or v.max() >= n_values):
        raise ValueError(
            f"{name} must be in {{0, ..., {n_values - 1}}} ({bound_name} = "
            f"{n_values}), got values in [{v.min()}, {v.max()}]."
        )
    return v.astype(np.intp)


# scikit-learn's declarative parameter validation (checked by _fit_context at
# the start of fit); a boolean m, which it would take for the integer 1, is
# refused separately
_ROUNDING_CONSTRAINTS = {
    "m": [StrOptions({"auto"}), Interval(numbers.Integral, 1, None, closed="left")],
    "rounding": [StrOptions(set(_ROUNDING_OPTIONS))],
    "random_state": ["random_state"],
}


def _check_m(owner):
    if isinstance(owner.m, (bool, np.bool_)):
        raise ValueError(
            f"The 'm' parameter of {type(owner).__name__} must be a str among "
            f"{{'auto'}} or an int in the range [1, inf). Got {owner.m!r} instead."
        )
    return owner.m if owner.m == "auto" else int(owner.m)


def _floor_to_grid(p, m):
    """The largest multiple of ``1/m`` not above ``p`` (hard bins)."""
    return np.floor(m * p) / m


def _hard_binned_scdl_m(y, p, w, m):
    """``SCDL_m`` of the floor-rounded distribution (remark after eq. (4)).

    Predictions on the grid fall entirely into one soft bin each, so the soft
    bins of :func:`skcal.soft_binned_cdl` become the hard bins.
    """
    return soft_binned_cdl(
        y, _floor_to_grid(p, m), sample_weight=w, m=m, multiclass="raise"
    )


def _hard_binned_scdl(y, p, w):
    """Hard-binned SCDL, its ``m*`` and ``SCDL_{m*}`` (remark after eq. (4)).

    The self-balancing choice of Definition 3.2 and Lemma 3.3 with ``SCDL_m``
    measured on floor-rounded predictions: ``m*`` is the smallest power of
    two with ``SCDL_{2m} >= 1/m`` and the value is ``max(SCDL_{m*}, 1/m*)``.
    Refining hard bins splits each bin in two, so the Jensen argument of
    Lemma 3.2 again makes ``SCDL_m`` non-decreasing along powers of two and
    Lemma 3.3 carries over. As in :func:`skcal.soft_binned_cdl`, the search
    stops at ``m = 2**40``, whose ``SCDL_m`` is then returned.
    """
    previous = None  # SCDL_m at the current m, measured as SCDL_{2m} one step back
    m = 2
    while m < 2**MAX_LEVEL:
        at_2m = _hard_binned_scdl_m(y, p, w, 2 * m)
        if at_2m >= 1.0 / m:
            at_m = _hard_binned_scdl_m(y, p, w, m) if previous is None else previous
            return max(at_m, 1.0 / m), m, at_m
        previous = at_2m
        m *= 2
    return previous, m, previous


class SCDLRounding(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Round predictions to the ``1/m`` grid, with ``m`` chosen from SCDL.

    The rounding ``tau_m`` of Definition 4.1 of Bairaktari et al.: a prediction
    ``p`` goes to one of its two neighbours on the grid
    ``G_m = {0, 1/m, ..., 1}``, up with probability ``m p - floor(m p)``, so
    that ``E[p'] = p``. Acting on the rounded prediction with the best
    response, ``r*_Z o tau_m``, has swap regret at most
    ``2 SCDL_m(D) + 2/m`` for *every* decision task ``Z`` with utilities in
    ``[0, 1]`` (Theorem 4.2 with Lemmas 4.1 and 4.3), where ``D`` is the
    distribution of (prediction, outcome) the rounding is fitted on. The
    bound is *in expectation* over the rounding's random draws (the swap
    regret of the randomized response, Definition 4.4): the swap regret of
    one draw of rounded predictions is a random variable around it and can
    exceed it (32 of 1,000 single draws did in one measured case); to
    compare with the bound, score the expected actions
    (``RoundedResponseClassifier.predict_action_proba``).

    ``fit`` measures the soft-binned calibration decision loss
    (:func:`skcal.soft_binned_cdl`, Definition 1.1) and with ``m="auto"``
    takes the self-balancing ``m*`` of Lemma 3.3, the power of two with
    ``SCDL in [1/m*, 2/m*)``; the bound is then at most
    ``2 SCDL + 2/m* <= 4 SCDL`` (equation (4)).

    Parameters
    ----------
    m : "auto" or int, default="auto"
        Grid size. ``"auto"``: the ``m*`` of Lemma 3.3. An integer
        ``1 <= m <= 2**40`` is used as given (the bound ``2 SCDL_m + 2/m`` of
        Lemma 4.3 holds for every ``m``, not only powers of two).
    rounding : {"random", "floor"}, default="random"
        ``"random"``: the unbiased randomized rounding of Definition 4.1.
        ``"floor"``: the deterministic "hard-binned" variant of the remark
        after equation (4) of Bairaktari et al., which rounds ``p`` down to the
        largest multiple of ``1/m`` not above it. Its SCDL (and ``m*``) are
        measured on the floor-rounded predictions, and the bound
        ``2 SCDL_m + 2/m`` holds for it by the same analysis (Lemma 4.3
        applies to any distribution on the grid), but it gives up the
        continuity of the randomized version: predictions just below and
        just above a grid point are treated differently.
    random_state : int, RandomState instance or None, default=None
        Draws of the randomized rounding in :meth:`transform`. With an
        integer, every call draws the same numbers (reproducible output);
        with ``None`` or a ``RandomState`` instance, fresh ones.

    Attributes
    ----------
    n_features_in_ : int
        1 for a 1-D ``X``, 2 for two columns.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Column names of a data frame ``X``, if it had string names; the
        output keeps them (:meth:`get_feature_names_out`, ``set_output``).
    m_ : int
        The grid size used. For exactly calibrated data ``m*`` is not found
        below ``2**40`` and ``m_ = 2**40``: rounding then moves predictions
        by less than ``1e-12``, the paper's "use the best response as is"
        for ``SCDL = 0``.
    scdl_ : float
        SCDL of the fitted data (Definition 1.1; for ``rounding="floor"`` its
        hard-binned variant), whatever ``m`` is.
    scdl_m_ : float
        ``SCDL_m`` at ``m = m_``.
    swap_regret_bound_ : float
        ``2 scdl_m_ + 2/m_``: on the distribution the rounding was fitted
        on, the expected swap regret (over the rounding draws) of
        ``r*_Z o tau_m`` is at most this for every task
        ``Z`` with utilities in ``[0, 1]`` (Theorem 4.2; with ``m="auto"`` it
        is at most ``2 scdl_ + 2/m_``). It holds for new data from the same
        distribution up to the sampling error of SCDL (Theorem 1.2:
        ``O(n^{-1/2} log^{3/2} n)`` for ``n`` fitted samples).

    See Also
    --------
    RoundedResponseClassifier : fits this on held-out predictions of a
        classifier and acts for a decision task.
    skcal.soft_binned_cdl : the measure behind the choice of ``m``.

    Notes
    -----
    ``fit(y_prob, y_true)`` follows :class:`sklearn.isotonic.IsotonicRegression`
    (``fit(X, y)`` with the predictions as ``X``), not the
    ``(y_true, y_prob)`` order of skcal's measures: the predictions are what
    :meth:`transform` rounds, so ``fit_transform(y_prob, y_true)`` and
    pipelines work as for any scikit-learn transformer.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal import SCDLRounding
    >>> rng = np.random.RandomState(0)
    >>> p = rng.uniform(size=2000)
    >>> y = rng.uniform(size=2000) < p ** 2   # over-confident predictions
    >>> rounding = SCDLRounding(random_state=0).fit(p, y)
    >>> rounding.m_
    64
    >>> bool(1 / rounding.m_ <= rounding.scdl_ < 2 / rounding.m_)
    True
    >>> rounding.transform([0.1, 0.3, 0.8])
    array([0.09375 , 0.296875, 0.796875])
    """

    def __init__(self, *, m="auto", rounding="random", random_state=None):
        self.m = m
        self.rounding = rounding
        self.random_state = random_state

    _parameter_constraints = dict(_ROUNDING_CONSTRAINTS)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Measure SCDL on ``(y, X)`` and choose the grid.

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 2)
            Predicted probabilities of the positive class (column 1 of
            ``predict_proba`` output), on held-out data.
        y : array-like of shape (n_samples,)
            Binary outcomes, positive class 1 (``{0, 1}``, ``{-1, 1}`` or
            booleans; pass ``y == positive_label`` for other labels).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights; integer weights equal repeating rows.

        Returns
        -------
        self : SCDLRounding
        """
        m = _check_m(self)
        rounding = self.rounding
        if y is None:
            raise ValueError(
                "SCDLRounding requires y to be passed, but the target y is None."
            )
        _check_feature_names(self, X, reset=True)
        self._check_prob(X)  # names X and says what shapes it takes
        _check_outcomes(y)
        try:
            y, p, w = check_binary_calibration_input(
                y, X, sample_weight, multiclass="raise"
            )
        except ValueError as exc:  # the measures' names for fit's arguments
            message = str(exc).replace("y_true", "y").replace("y_prob", "X")
            raise ValueError(message) from None
        if rounding == "floor":
            scdl, m_star, scdl_m = _hard_binned_scdl(y, p, w)
            if m != "auto":
                m_star, scdl_m = m, _hard_binned_scdl_m(y, p, w, m)
        else:
            scdl, details = soft_binned_cdl(
                y, p, sample_weight=w, multiclass="raise", return_details=True
            )
            if m == "auto":
                m_star = int(details.m)
                scdl_m = details.scdl_m[details.levels == m_star][0]
            else:
                m_star = m
                scdl_m = soft_binned_cdl(y, p, sample_weight=w, m=m, multiclass="raise")
        self.n_features_in_ = 1 if np.ndim(X) == 1 else 2
        self.m_ = m_star
        self.scdl_ = float(scdl)
        self.scdl_m_ = float(scdl_m)
        self.swap_regret_bound_ = 2.0 * self.scdl_m_ + 2.0 / self.m_
        return self

    def rounding_distribution(self, X):
        """The distribution ``tau_m(p)`` of each rounded prediction.

        Each prediction goes to ``upper`` with probability ``prob_upper`` and
        to ``lower`` otherwise (Definition 4.1): ``lower = floor(m p)/m``,
        ``upper = lower + 1/m`` (capped at 1) and, for ``rounding="random"``,
        ``prob_upper = m p - floor(m p)``, so that
        ``lower + prob_upper (upper - lower) = p``; for ``rounding="floor"``,
        ``prob_upper = 0``.

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 2)
            Predicted probabilities of the positive class.

        Returns
        -------
        lower, upper, prob_upper : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        return self._distribution(self._check_prob(X)[0])

    def _distribution(self, p):
        m = self.m_
        scaled = m * p
        index = np.floor(scaled)
        lower = index / m
        upper = np.minimum(index + 1, m) / m
        if self.rounding == "floor":
            return lower, upper, np.zeros_like(p)
        return lower, upper, scaled - index

    def transform(self, X):
        """Round each prediction at random (or down, for ``rounding="floor"``).

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 2)
            Predicted probabilities of the positive class.

        Returns
        -------
        X_rounded : ndarray of the shape of ``X``
            Predictions on the grid ``{0, 1/m_, ..., 1}``, drawn independently
            from ``tau_m`` (so ``E[p'] = p``). Two-column input gives
            ``[1 - p', p']``.
        """
        check_is_fitted(self)
        _check_feature_names(self, X, reset=False)
        p, two_columns = self._check_prob(X)
        lower, upper, prob_upper = self._distribution(p)
        if self.rounding == "random":
            rng = check_random_state(self.random_state)
            rounded = np.where(
                rng.random_sample(lower.shape[0]) < prob_upper, upper, lower
            )
        else:
            rounded = lower
        if two_columns:
            return np.column_stack([1.0 - rounded, rounded])
        return rounded

    def _check_prob(self, X):
        """Positive-class probabilities from ``X``, and whether it had two columns."""
        P = check_array(X, ensure_2d=False, dtype=np.float64, input_name="X")
        if P.ndim == 2 and P.shape[1] != 2:
            raise ValueError(
                "X must be of shape (n_samples,) or (n_samples, 2), got shape "
                f"{P.shape}: the rounding response is for binary outcomes."
            )
        check_probability_matrix(P, name="X")
        if P.ndim == 2:
            return np.ascontiguousarray(P[:, 1]), True
        return P, False

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        tags.target_tags.required = True
        return tags


class RoundedResponseClassifier(_HeldOutProbaMetaEstimator):
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
    m : "auto" or int, default="auto"
        Grid size, see :class:`SCDLRounding`.
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
    SCDLRounding : the rounding alone, for predictions you already have.
    DecisionTask : best responses and swap regret.

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
        estimator,
        task,
        *,
        m="auto",
        rounding="random",
        cv=None,
        n_jobs=None,
        random_state=None,
    ):
        self.estimator = estimator
        self.task = task
        self.m = m
        self.rounding = rounding
        self.cv = cv
        self.n_jobs = n_jobs
        self.random_state = random_state

    _parameter_constraints = {
        **_ROUNDING_CONSTRAINTS,
        # checked in fit with messages of their own (a missing predict_proba,
        # a task that is not binary, cv="prefit" deprecated)
        "estimator": "no_validation",
        "task": "no_validation",
        "cv": "no_validation",
        "n_jobs": [numbers.Integral, None],
    }

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, sample_weight=None, **fit_params):
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
        """
        # Parameters first (_fit_context checked the declared constraints):
        # the base estimator's fits can be expensive.
        _check_m(self)
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

    def predict_proba(self, X):
        """The base estimator's class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, 2)
        """
        check_is_fitted(self)
        return self.estimator_.predict_proba(X)

    def predict(self, X):
        """Class labels: the base estimator's most probable class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Labels from ``classes_`` (ties: the first class). For the actions
            of the task, see :meth:`predict_action`.
        """
        check_is_fitted(self)
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    def predict_action(self, X):
        """Actions of the rounding response ``r*_Z o tau_m`` (Definition 4.3).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        actions : ndarray of shape (n_samples,) of int
            Action indices of ``task`` (rows of its utility), not class
            labels. The rounding draws are independent across rows.
        """
        check_is_fitted(self)
        rounded = self.rounding_.transform(self.predict_proba(X)[:, 1])
        return self.task_.best_response(rounded)

    def predict_action_proba(self, X):
        """The distribution of the action :meth:`predict` takes on each row.

        ``r*_Z o tau_m(p)`` of Definition 4.3: the best responses at the two
        grid neighbours of ``p``, weighted by the rounding probabilities. Pass
        it to :meth:`DecisionTask.swap_regret` for the swap regret of the
        randomized response in expectation (Definition 4.4).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        action_proba : ndarray of shape (n_samples, n_actions)
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

    def score(self, X, y, sample_weight=None):
        """Mean utility of the rounding response on ``(X, y)``; greater is better.

        The utility ``U[a, y]`` averaged over rows and, exactly, over the
        rounding draws (:meth:`predict_action_proba`), so the score is not
        itself random.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels (among ``classes_``).
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        score : float
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
