"""The SCDL rounding response (Bairaktari et al., Definition 4.1 and Theorem 4.2)."""

from __future__ import annotations

import numbers
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils import check_array, check_random_state, column_or_1d
from sklearn.utils.validation import check_is_fitted

from .._compat import Interval, StrOptions, _check_feature_names, _fit_context
from .._input import check_binary_calibration_input, check_probability_matrix
from ..metrics import soft_binned_cdl
from ..metrics._scdl import MAX_LEVEL

__all__ = ["ROUNDING_CONSTRAINTS", "SCDLRounding", "check_m"]

_ROUNDING_OPTIONS = ("random", "floor")


# scikit-learn's declarative parameter validation (checked by _fit_context at
# the start of fit); a boolean m, which it would take for the integer 1, is
# refused separately
ROUNDING_CONSTRAINTS = {
    "m": [
        StrOptions({"auto"}),
        Interval(numbers.Integral, 1, None, closed="left"),
        None,
    ],
    "rounding": [StrOptions(set(_ROUNDING_OPTIONS))],
    "random_state": ["random_state"],
}


def check_m(owner: Any) -> Literal["auto"] | int:
    """``owner.m`` checked: ``"auto"`` (None means the same) or an int.

    Parameters
    ----------
    owner : SCDLRounding or RoundedResponseClassifier
        The estimator whose ``m`` is checked (named in the message).

    Returns
    -------
    m : "auto" or int
        ``"auto"`` for ``"auto"`` and None, else ``m`` as an int.
    """
    if isinstance(owner.m, (bool, np.bool_)):
        raise ValueError(
            f"The 'm' parameter of {type(owner).__name__} must be a str among "
            f"{{'auto'}}, None or an int in the range [1, inf). Got {owner.m!r} instead."
        )
    # None is "auto", as soft_binned_cdl's m=None is the self-balancing m*
    return "auto" if owner.m is None or owner.m == "auto" else int(owner.m)


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
    m : "auto", None or int, default="auto"
        Grid size. ``"auto"`` (or None, which means the same, as for
        :func:`skcal.soft_binned_cdl`): the ``m*`` of Lemma 3.3. An integer
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
    RoundedResponseClassifier : Fits this on held-out predictions of a
        classifier and acts for a decision task.
    skcal.soft_binned_cdl : The measure behind the choice of ``m``.

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

    def __init__(
        self,
        *,
        m: str | int | None = "auto",
        rounding: str = "random",
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        self.m = m
        self.rounding = rounding
        self.random_state = random_state

    _parameter_constraints = dict(ROUNDING_CONSTRAINTS)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(
        self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> SCDLRounding:
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
            The estimator itself.
        """
        m = check_m(self)
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

    def rounding_distribution(
        self, X: ArrayLike
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
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
            The grid points below and above each prediction, and the
            probability of rounding up to ``upper`` (Definition 4.1).
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

    def transform(self, X: ArrayLike) -> NDArray[np.float64]:
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
        try:
            P = check_array(X, ensure_2d=False, dtype=np.float64, input_name="X")
        except ValueError as exc:  # e.g. "could not convert string to float"
            message = str(exc)
            if "X" not in message:
                message = f"X must hold probabilities, numbers in [0, 1]: {message}"
            raise ValueError(message) from None
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
