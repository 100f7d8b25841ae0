"""A decision task: best responses and swap regret (Bairaktari et al., eq. (1))."""

from __future__ import annotations

from typing import overload

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.utils import check_array, column_or_1d

from .._input import check_probability_matrix, check_sample_weight

__all__ = ["DecisionTask", "check_indices"]


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
    RoundedResponseClassifier : Act on a classifier's predictions for a task
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

    def __init__(self, utility: ArrayLike) -> None:
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
    def n_actions(self) -> int:
        return self.utility.shape[0]

    @property
    def n_outcomes(self) -> int:
        return self.utility.shape[1]

    def __repr__(self):
        A, K = self.utility.shape
        body = self.utility.tolist() if A * K <= 50 else f"<{A} x {K} array>"
        return f"{type(self).__name__}({body})"

    def expected_utility(self, p: float | ArrayLike) -> NDArray[np.float64]:
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
            The expected utility of each action at each prediction; of shape
            ``(n_actions,)`` for a scalar ``p``.
        """
        P, scalar = self._check_p(p)
        values = P @ self.utility.T
        return values[0] if scalar else values

    @overload
    def best_response(self, p: float) -> int: ...

    @overload
    def best_response(self, p: ArrayLike) -> NDArray[np.intp]: ...

    def best_response(self, p: float | ArrayLike) -> int | NDArray[np.intp]:
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

    def swap_regret(
        self, actions: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> float:
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
            a = check_indices(actions, A, "actions", "n_actions")
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
        y = check_indices(y, self.n_outcomes, "y", "n_outcomes")
        if y.shape[0] == 0:
            raise ValueError("y is empty: the swap regret needs at least one sample.")
        return y


def check_indices(
    values: ArrayLike, n_values: int, name: str, bound_name: str
) -> NDArray[np.intp]:
    """1-D integer indices in ``{0, ..., n_values - 1}``, as ``intp``.

    Parameters
    ----------
    values : array-like of shape (n_samples,)
        Integer (or integral float, or boolean) indices.
    n_values : int
        The number of values an index can take.
    name : str
        The argument's name, for the messages.
    bound_name : str
        The name of ``n_values``, for the messages.

    Returns
    -------
    indices : ndarray of shape (n_samples,) of intp
        The indices.
    """
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
