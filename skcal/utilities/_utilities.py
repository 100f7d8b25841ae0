"""The utility functions of multiclass utility calibration (Hegazy, Jordan and
Dieuleveut, *Scalable Utility-Aware Multiclass Calibration*, Section 3 and
Appendix C)."""

from __future__ import annotations

import numbers

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._engine import (
    Parametrized,
    Predictions,
    check_int,
    check_length,
    check_proba,
    check_proba_and_labels,
    check_square,
    check_values,
    expand,
    ranks,
)

__all__ = [
    "ClassWise",
    "DCG",
    "DecisionUtility",
    "GainMatrix",
    "Linear",
    "Rank",
    "SimilarityUtility",
    "TopClass",
    "TopK",
    "Utility",
]


class Utility(Parametrized):
    """Base class of the utility functions ``u(p, e_j)`` in ``[-1, 1]``.

    A utility maps a probability vector ``p`` over ``C`` classes and an
    outcome ``e_j`` to a payoff in ``[-1, 1]`` (Hegazy et al., Section 3). Its
    predicted utility is ``v_u(p) = sum_j p_j u(p, e_j)`` (eq. 3.1).

    To define a new utility, subclass ``Utility``, store the constructor
    arguments unchanged and implement ``_utility_matrix(P)``, returning the
    ``(n, C)`` matrix of ``u(p_i, e_j)`` for a validated probability matrix
    ``P``; its values are checked to lie in ``[-1, 1]``. The built-in
    utilities also override the private ``_evaluate`` for speed.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal import Utility
    >>> class Hedge(Utility):
    ...     '''Gain 1 on the top class, 0.5 on the runner-up.'''
    ...     def _utility_matrix(self, P):
    ...         order = np.argsort(-P, axis=1, kind="stable")
    ...         U = np.zeros_like(P)
    ...         rows = np.arange(P.shape[0])
    ...         U[rows, order[:, 0]] = 1.0
    ...         U[rows, order[:, 1]] = 0.5
    ...         return U
    >>> v, realised = Hedge().evaluate([[0.6, 0.3, 0.1]], [1])
    >>> float(v[0]), float(realised[0])
    (0.75, 0.5)
    """

    def __init__(self) -> None:
        pass

    def utility_matrix(self, y_prob: ArrayLike) -> NDArray[np.float64]:
        """The matrix ``U[i, j] = u(p_i, e_j)``.

        Parameters
        ----------
        y_prob : array-like of shape (n_samples, n_classes)
            Probability vectors, one per row.

        Returns
        -------
        U : ndarray of shape (n_samples, n_classes)
            The utility of each outcome (column) for each row, in ``[-1, 1]``.
        """
        P = check_proba(y_prob)
        self._check_n_classes(P.shape[1])
        return self._checked_matrix(P)

    def evaluate(
        self, y_prob: ArrayLike, y: ArrayLike
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Predicted and realised utility of each row, in one vectorised pass.

        Parameters
        ----------
        y_prob : array-like of shape (n_samples, n_classes)
            Probability vectors, one per row.
        y : array-like of int, shape (n_samples,)
            Column of the observed class in each row.

        Returns
        -------
        v : ndarray of shape (n_samples,)
            Predicted utility ``v_u(p_i) = sum_j p_ij u(p_i, e_j)``.
        realised : ndarray of shape (n_samples,)
            Realised utility ``u(p_i, e_{y_i})``.
        """
        data = Predictions(*check_proba_and_labels(y_prob, y))
        self._check_n_classes(data.n_classes)
        return self._evaluate(data)

    # Hooks ----------------------------------------------------------------
    def _check_n_classes(self, n_classes):
        """Raise ValueError if this utility cannot apply to ``n_classes`` classes."""

    def _utility_matrix(self, P):
        raise NotImplementedError(
            f"{type(self).__name__} must implement _utility_matrix(P)."
        )

    def _checked_matrix(self, P):
        U = np.asarray(self._utility_matrix(P), dtype=np.float64)
        if U.shape != P.shape:
            raise ValueError(
                f"{type(self).__name__} returned a utility matrix of shape "
                f"{U.shape} for y_prob of shape {P.shape}."
            )
        if not np.all(np.isfinite(U)) or np.any(np.abs(U) > 1):
            raise ValueError(
                f"{type(self).__name__} returned utility values outside [-1, 1]."
            )
        return U

    def _evaluate(self, data):
        U = self._checked_matrix(data.P)
        # a row-wise numpy sum (not BLAS) gives equal rows equal v
        v = (data.P * U).sum(axis=1)
        return v, U[np.arange(data.n_samples), data.y]

    @classmethod
    def _evaluate_many(cls, utilities, data):
        """``(V, realised)`` of shape ``(len(utilities), n)`` for utilities of this class."""
        pairs = [u._evaluate(data) for u in utilities]
        return (
            np.array([v for v, _ in pairs], dtype=np.float64),
            np.array([r for _, r in pairs], dtype=np.float64),
        )


class TopClass(Utility):
    """Top-class utility: 1 if the predicted (argmax) class occurs, else 0.

    ``u(p, e_j) = 1{j = argmax_i p_i}``, so ``v_u(p) = max_i p_i``: the
    utility class ``U_TCE`` of Hegazy et al., Example 3.4, whose calibration
    error is the cutoff calibration error of (confidence, correctness). Ties
    in the argmax go to the lowest column.

    Examples
    --------
    >>> from skcal import TopClass
    >>> v, realised = TopClass().evaluate([[0.2, 0.5, 0.3], [0.4, 0.4, 0.2]], [1, 1])
    >>> v.tolist(), realised.tolist()
    ([0.5, 0.4], [1.0, 0.0])
    """

    def _utility_matrix(self, P):
        U = np.zeros_like(P)
        U[np.arange(P.shape[0]), np.argmax(P, axis=1)] = 1.0
        return U

    def _evaluate(self, data):
        confidence, predicted = data.top
        return confidence.copy(), (predicted == data.y).astype(np.float64)


class _PayoffUtility(Utility):
    """A utility with a fixed payoff per outcome: ``u(p, e_j) = a_j``.

    Subclasses say how their payoffs are given (``_payoffs``); the matrix,
    the evaluation and the class-count check follow from it.
    """

    def _payoffs(self, n_classes=None):
        raise NotImplementedError

    def _check_n_classes(self, n_classes):
        self._payoffs(n_classes)

    def _utility_matrix(self, P):
        return np.tile(self._payoffs(P.shape[1]), (P.shape[0], 1))

    def _evaluate(self, data):
        V, realised = self._evaluate_many([self], data)
        return V[0], realised[0]

    @classmethod
    def _evaluate_many(cls, utilities, data):
        A = np.array([u._payoffs(data.n_classes) for u in utilities])
        distinct, inverse = data.distinct_rows
        V = expand(A @ distinct.T, inverse)
        return np.ascontiguousarray(V), A[:, data.y]


class Linear(_PayoffUtility):
    """Linear utility: a fixed payoff ``a_j`` for each outcome.

    ``u_a(p, e_j) = a_j`` with ``a`` in ``[-1, 1]^C``, so
    ``v_u(p) = <p, a>`` is linear in ``p`` (Hegazy et al., Example 3.5).

    Parameters
    ----------
    a : array-like of shape (n_classes,)
        Payoff of each class, in ``[-1, 1]``.

    Examples
    --------
    >>> from skcal import Linear
    >>> v, realised = Linear([1.0, -1.0, 0.5]).evaluate([[0.5, 0.25, 0.25]], [2])
    >>> float(v[0]), float(realised[0])
    (0.375, 0.5)
    """

    def __init__(self, a: ArrayLike) -> None:
        self.a = a
        self._validate_params()

    def _validate_params(self):
        self._payoffs()

    def _payoffs(self, n_classes=None):
        a = check_values(self.a, "a", type(self).__name__, ndim=1)
        if n_classes is not None:
            check_length(a.shape[0], n_classes, "payoffs", type(self).__name__)
        return a


class ClassWise(_PayoffUtility):
    """Class-wise utility: 1 if class ``c`` occurs, else 0.

    ``u(p, e_j) = 1{j = c}``, so ``v_u(p) = p_c``: a member of ``U_CWE``
    (Hegazy et al., Example 3.4), the linear utility with ``a = e_c``. Its
    calibration error is the cutoff calibration error of ``(p_c, 1{y = c})``.

    Parameters
    ----------
    c : int
        The class, as a column of ``y_prob`` (position in ``classes_``).

    Examples
    --------
    >>> from skcal import ClassWise
    >>> v, realised = ClassWise(2).evaluate([[0.5, 0.25, 0.25], [0.1, 0.1, 0.8]], [2, 0])
    >>> v.tolist(), realised.tolist()
    ([0.25, 0.8], [1.0, 0.0])
    """

    def __init__(self, c: int) -> None:
        self.c = c
        self._validate_params()

    def _validate_params(self):
        self._column()

    def _column(self, n_classes=None):
        c = check_int(self.c, "c", "ClassWise", minimum=0)
        if n_classes is not None and c >= n_classes:
            raise ValueError(
                f"ClassWise(c={c}) needs at least {c + 1} classes but the "
                f"predicted probabilities have {n_classes} columns; c is a "
                f"column index in [0, {n_classes - 1}]."
            )
        return c

    def _payoffs(self, n_classes=None):
        c = self._column(n_classes)
        a = np.zeros(c + 1 if n_classes is None else n_classes)
        a[c] = 1.0
        return a

    @classmethod
    def _evaluate_many(cls, utilities, data):
        cols = np.array([u._column(data.n_classes) for u in utilities], dtype=np.intp)
        V = np.ascontiguousarray(data.P[:, cols].T)
        return V, (cols[:, None] == data.y[None, :]).astype(np.float64)


class _RankUtility(Utility):
    """A utility paying ``theta_r`` for rank ``r`` of the observed class.

    Subclasses say how their rank payoffs are given (``_theta``).
    """

    def _theta(self, n_classes=None):
        raise NotImplementedError

    def _check_n_classes(self, n_classes):
        self._theta(n_classes)

    def _utility_matrix(self, P):
        return self._theta(P.shape[1])[ranks(P) - 1]

    def _evaluate(self, data):
        V, realised = self._evaluate_many([self], data)
        return V[0], realised[0]

    @classmethod
    def _evaluate_many(cls, utilities, data):
        Theta = np.array([u._theta(data.n_classes) for u in utilities])
        distinct, inverse = data.distinct_sorted_rows
        V = expand(Theta @ distinct.T, inverse)
        return np.ascontiguousarray(V), Theta[:, data.rank_of_y - 1]


class Rank(_RankUtility):
    """Rank-based utility: a payoff for each rank of the observed class.

    ``u_theta(p, e_j) = theta_{rank(p, j)}`` with ``theta`` in ``[-1, 1]^C``
    and ``rank(p, j) = 1 + #{i: p_i > p_j} + #{i < j: p_i = p_j}`` (Hegazy et
    al., Example 3.6; ties, which the paper breaks arbitrarily, go to the
    lower column). ``v_u(p) = sum_r theta_r p_(r)`` with ``p_(1) >= p_(2) >=
    ...`` the sorted probabilities, whatever the tie-breaking.

    Parameters
    ----------
    theta : array-like of shape (n_classes,)
        Payoff of each rank (``theta[0]`` for the top rank), in ``[-1, 1]``.

    Examples
    --------
    >>> from skcal import Rank
    >>> v, realised = Rank([1.0, 0.5, 0.0]).evaluate([[0.25, 0.25, 0.5]], [1])
    >>> float(v[0]), float(realised[0])
    (0.625, 0.0)
    """

    def __init__(self, theta: ArrayLike) -> None:
        self.theta = theta
        self._validate_params()

    def _validate_params(self):
        self._theta()

    def _theta(self, n_classes=None):
        theta = check_values(self.theta, "theta", type(self).__name__, ndim=1)
        if n_classes is not None:
            check_length(theta.shape[0], n_classes, "rank payoffs", type(self).__name__)
        return theta


class TopK(_RankUtility):
    """Top-K utility: 1 if the observed class is among the ``k`` most probable.

    ``u_K(p, e_j) = 1{rank(p, j) <= K}`` (Hegazy et al., Example 3.6, the rank
    utility with ``theta_r = 1{r <= K}``), so ``v_u(p)`` is the sum of the
    ``K`` largest probabilities. Ranks break ties to the lower column, so
    ``TopK(1)`` is :class:`TopClass`.

    Parameters
    ----------
    k : int
        Number of top-ranked classes that count, ``1 <= k <= n_classes``.

    Examples
    --------
    >>> from skcal import TopK
    >>> v, realised = TopK(2).evaluate([[0.5, 0.25, 0.125, 0.125]], [2])
    >>> float(v[0]), float(realised[0])
    (0.75, 0.0)
    """

    def __init__(self, k: int) -> None:
        self.k = k
        self._validate_params()

    def _validate_params(self):
        self._top()

    def _top(self, n_classes=None):
        k = check_int(self.k, "k", "TopK", minimum=1)
        if n_classes is not None and k > n_classes:
            raise ValueError(
                f"TopK(k={k}) needs at least {k} classes but the predicted "
                f"probabilities have {n_classes} columns; use k <= {n_classes}."
            )
        return k

    def _theta(self, n_classes=None):
        k = self._top(n_classes)
        return (np.arange(1, (k if n_classes is None else n_classes) + 1) <= k).astype(
            np.float64
        )

    @classmethod
    def _evaluate_many(cls, utilities, data):
        ks = np.array([u._top(data.n_classes) for u in utilities], dtype=np.intp)
        # cumulative sums of the sorted rows: exact ties for equal sorted rows
        V = np.ascontiguousarray(data.top_k_sums[:, ks - 1].T)
        return V, (data.rank_of_y[None, :] <= ks[:, None]).astype(np.float64)


class DCG(_RankUtility):
    """Discounted-cumulative-gain utility of the rank of the observed class.

    ``u_gamma(p, e_j) = theta_{rank(p, j)}`` with the discount
    ``theta_r = log2(1 + r) ** -gamma`` (Hegazy et al., Appendix C.3; the paper's
    family ``U_dcg`` takes ``gamma`` in {0.5, 0.75, 1, 1.25, 1.5, 2}).

    Parameters
    ----------
    gamma : float, default=1.0
        Discount exponent, ``gamma >= 0``.

    Examples
    --------
    >>> from skcal import DCG
    >>> v, realised = DCG(1.0).evaluate([[0.5, 0.5]], [1])
    >>> round(float(v[0]), 4), round(float(realised[0]), 4)
    (0.8155, 0.6309)
    """

    def __init__(self, gamma: float = 1.0) -> None:
        self.gamma = gamma
        self._validate_params()

    def _validate_params(self):
        gamma = self.gamma
        if isinstance(gamma, (bool, np.bool_)) or not isinstance(gamma, numbers.Real):
            raise TypeError(f"DCG: gamma must be a real number, got {gamma!r}.")
        if not (np.isfinite(gamma) and gamma >= 0):
            raise ValueError(f"DCG: gamma must be finite and >= 0, got {gamma!r}.")

    def _theta(self, n_classes=None):
        self._validate_params()
        ranks = np.arange(1, (1 if n_classes is None else n_classes) + 1)
        return np.log2(1.0 + ranks) ** -float(self.gamma)


class _BestAction(Utility):
    """Shared by utilities of a decision maker who best-responds to ``p``.

    With a gain matrix ``G`` (outcomes x actions), the action is
    ``argmax_a sum_j p_j G[j, a]`` (ties to the lowest action), the realised
    utility ``G[y, a]`` and the predicted one the maximal expected gain.
    """

    def _gains(self, n_classes=None):
        raise NotImplementedError

    def _check_n_classes(self, n_classes):
        self._gains(n_classes)

    def _utility_matrix(self, P):
        G = self._gains(P.shape[1])
        actions = np.argmax(P @ G, axis=1)
        return np.ascontiguousarray(G.T[actions])

    def _evaluate(self, data):
        G = self._gains(data.n_classes)
        distinct, inverse = data.distinct_rows
        expected = distinct @ G
        action = np.argmax(expected, axis=1)
        v = expected[np.arange(distinct.shape[0]), action]
        if inverse is not None:
            v, action = v[inverse], action[inverse]
        return v, G[data.y, action]


class DecisionUtility(_BestAction):
    """Utility of the best of ``K`` actions under ``p``, for a loss matrix.

    For a loss ``l(y, a)`` in ``[-1, 1]`` over ``C`` outcomes and ``K``
    actions, the decision maker takes ``delta(p) = argmin_a sum_j p_j
    loss[j, a]`` (ties to the lowest action) and gets ``u(p, e_j) =
    -loss[j, delta(p)]`` (Hegazy et al., Example 3.7; ``U_dec,K`` is the class of
    all such utilities).

    Parameters
    ----------
    loss : array-like of shape (n_classes, n_actions)
        ``loss[j, a]`` is the loss of action ``a`` when class ``j`` occurs,
        in ``[-1, 1]``.

    Examples
    --------
    >>> from skcal import DecisionUtility
    >>> loss = [[0.0, 0.5],   # class 0: action 0 is right, action 1 hedges
    ...         [1.0, 0.5]]   # class 1
    >>> v, realised = DecisionUtility(loss).evaluate([[0.25, 0.75], [0.75, 0.25]], [0, 0])
    >>> v.tolist(), realised.tolist()
    ([-0.5, -0.25], [-0.5, -0.0])
    """

    def __init__(self, loss: ArrayLike) -> None:
        self.loss = loss
        self._validate_params()

    def _validate_params(self):
        self._gains()

    def _gains(self, n_classes=None):
        loss = check_values(self.loss, "loss", "DecisionUtility", ndim=2)
        if n_classes is not None:
            check_length(loss.shape[0], n_classes, "loss rows", "DecisionUtility")
        return -loss


class GainMatrix(_BestAction):
    """Utility of predicting the class with the largest expected gain.

    For a gain matrix ``R`` with ``R[i, j]`` the gain of predicting ``j``
    when the class is ``i``, the agent predicts ``j*(p) = argmax_j sum_i p_i
    R[i, j]`` (ties to the lowest column) and gets ``u_R(p, e_i) = R[i,
    j*(p)]`` (Hegazy et al., Appendix C.2, which takes ``R`` in ``[0, 1]`` with a
    unit diagonal; any square ``R`` in ``[-1, 1]`` is accepted). The
    identity gives :class:`TopClass`.

    Parameters
    ----------
    R : array-like of shape (n_classes, n_classes)
        Gains in ``[-1, 1]``.

    Examples
    --------
    >>> from skcal import GainMatrix
    >>> R = [[1.0, 0.5, 0.0],
    ...      [0.5, 1.0, 0.0],
    ...      [0.0, 0.0, 1.0]]
    >>> v, realised = GainMatrix(R).evaluate([[0.375, 0.25, 0.375]], [1])
    >>> float(v[0]), float(realised[0])
    (0.5, 0.5)
    """

    def __init__(self, R: ArrayLike) -> None:
        self.R = R
        self._validate_params()

    def _validate_params(self):
        self._gains()

    def _gains(self, n_classes=None):
        return check_square(self.R, "R", "GainMatrix", n_classes)


class SimilarityUtility(Utility):
    """Expected similarity between the outcome and a draw from ``p``.

    ``u(p, e_j) = sum_i p_i S[i, j]`` for a similarity matrix ``S`` in
    ``[-1, 1]`` (Hegazy et al., Appendix C.3, with ``S`` the cosine similarity
    of class embeddings), so ``v_u(p) = p^T S p``.

    Parameters
    ----------
    S : array-like of shape (n_classes, n_classes)
        Similarities in ``[-1, 1]``.

    Examples
    --------
    >>> from skcal import SimilarityUtility
    >>> S = [[1.0, 0.5], [0.5, 1.0]]
    >>> v, realised = SimilarityUtility(S).evaluate([[0.5, 0.5]], [0])
    >>> float(v[0]), float(realised[0])
    (0.75, 0.75)
    """

    def __init__(self, S: ArrayLike) -> None:
        self.S = S
        self._validate_params()

    def _validate_params(self):
        self._similarity()

    def _similarity(self, n_classes=None):
        return check_square(self.S, "S", "SimilarityUtility", n_classes)

    def _check_n_classes(self, n_classes):
        self._similarity(n_classes)

    def _utility_matrix(self, P):
        return P @ self._similarity(P.shape[1])

    def _evaluate(self, data):
        distinct, inverse = data.distinct_rows
        U = distinct @ self._similarity(data.n_classes)
        v = (U * distinct).sum(axis=1)
        rows = np.arange(data.n_samples) if inverse is None else inverse
        return expand(v, inverse), U[rows, data.y]
