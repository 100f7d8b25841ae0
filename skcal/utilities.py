"""Utility functions and families for multiclass utility calibration.

A utility ``u(p, e_j)`` in ``[-1, 1]`` is what a user of the prediction ``p``
gets when the class turns out to be ``j`` (Hegazy, Jordan and Dieuleveut,
*Scalable Utility-Aware Multiclass Calibration*, paper 001, Section 3). The
predicted utility is ``v_u(p) = sum_j p_j u(p, e_j)`` (eq. 3.1) and the
realised one ``u(p, e_y)``; :func:`skcal.utility_calibration_error` measures
how far apart they are on every interval of ``v_u`` (eq. 3.2).

Conventions (DESIGN.md section 4): classes are the columns of ``y_proba``
(``0 .. C-1``); an argmax over classes or actions goes to the lowest index on
ties, and ranks break ties the same way,
``rank(p, j) = 1 + #{i: p_i > p_j} + #{i < j: p_i = p_j}``.

Every utility and family is a plain, picklable object whose constructor only
stores its arguments (so ``get_params``, ``set_params`` and
``sklearn.base.clone`` work); arguments are checked when the object is built
and again when it is used.
"""

import inspect
import numbers
from functools import cached_property

import numpy as np
from sklearn.utils import check_random_state

from ._validation import _check_probability_matrix, top_label

__all__ = [
    "DCG",
    "ClassWise",
    "ClassWiseFamily",
    "DecisionUtility",
    "GainMatrix",
    "Linear",
    "LinearFamily",
    "Rank",
    "RankFamily",
    "SimilarityUtility",
    "TopClass",
    "TopK",
    "TopKFamily",
    "Utility",
    "UtilityFamily",
]


# --- parameters and repr --------------------------------------------------------


def _short_repr(value):
    """repr that stays one short line for long vectors and long families."""
    if isinstance(value, np.ndarray) or (
        isinstance(value, (list, tuple))
        and value
        and all(isinstance(x, numbers.Real) for x in value)
    ):
        return np.array2string(
            np.asarray(value), threshold=6, edgeitems=2, precision=4, separator=", "
        )
    if isinstance(value, (list, tuple)) and len(value) > 4:
        head = ", ".join(repr(x) for x in value[:2])
        return f"[{head}, ..., {value[-1]!r}] ({len(value)} items)"
    return repr(value)


class _Parametrized:
    """``get_params`` / ``set_params`` / ``repr`` read off the constructor, as in sklearn."""

    @classmethod
    def _get_param_names(cls):
        signature = inspect.signature(cls.__init__)
        return [name for name in signature.parameters if name != "self"]

    def get_params(self, deep=True):
        """Constructor arguments of this object.

        Parameters
        ----------
        deep : bool, default=True
            Accepted for scikit-learn compatibility; utilities hold no
            estimators, so it changes nothing.

        Returns
        -------
        params : dict
        """
        return {name: getattr(self, name) for name in self._get_param_names()}

    def set_params(self, **params):
        """Set constructor arguments, then check them.

        Returns
        -------
        self
        """
        names = self._get_param_names()
        for key, value in params.items():
            if key not in names:
                raise ValueError(
                    f"Invalid parameter {key!r} for {type(self).__name__}; "
                    f"valid parameters are {names}."
                )
            setattr(self, key, value)
        self._validate_params()
        return self

    def _validate_params(self):
        """Raise ValueError/TypeError for bad constructor arguments."""

    def __repr__(self):
        args = ", ".join(
            f"{key}={_short_repr(value)}" for key, value in self.get_params().items()
        )
        return f"{type(self).__name__}({args})"


def _check_int(value, name, owner, minimum):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{owner}: {name} must be an integer, got {value!r}.")
    if value < minimum:
        raise ValueError(f"{owner}: {name} must be >= {minimum}, got {value!r}.")
    return int(value)


def _check_values(value, name, owner, ndim):
    """``value`` as a float64 array of ``ndim`` dimensions with entries in [-1, 1]."""
    try:
        array = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{owner}: {name} must be a numeric array, got {value!r}.")
    if array.ndim != ndim or 0 in array.shape:
        raise ValueError(
            f"{owner}: {name} must be a non-empty {ndim}-dimensional array, "
            f"got shape {array.shape}."
        )
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{owner}: {name} contains NaN or infinity.")
    if np.any(np.abs(array) > 1):
        raise ValueError(
            f"{owner}: {name} has entries outside [-1, 1]; utilities take "
            "values in [-1, 1]."
        )
    return array


def _check_square(value, name, owner, n_classes):
    """A square matrix of values in [-1, 1], one row per class when ``n_classes`` is given."""
    M = _check_values(value, name, owner, ndim=2)
    if M.shape[0] != M.shape[1]:
        raise ValueError(f"{owner}: {name} must be square, got shape {M.shape}.")
    if n_classes is not None:
        _check_length(M.shape[0], n_classes, f"rows in {name}", owner)
    return M


def _check_length(n_entries, n_classes, what, owner):
    if n_entries != n_classes:
        raise ValueError(
            f"{owner} has {n_entries} {what} but y_proba has {n_classes} columns."
        )


# --- what every utility of one prediction matrix shares -------------------------


def _distinct_rows(X):
    """Distinct rows of ``X`` and, if some rows repeat, the map back to all rows.

    Products computed by BLAS may differ in the last bit between two equal
    rows (the result depends on where a row falls in the blocking), which
    would split a tie of ``v`` and make the measure depend on row order. So
    matrix products are taken over distinct rows only and copied back. Rows
    are hashed exactly (a fixed random linear form in wrapping uint64
    arithmetic, with -0.0 read as 0.0) and the hash classes are verified.
    """
    n, n_cols = X.shape
    if n < 2:
        return X, None
    rng = np.random.default_rng(0)
    multipliers = rng.integers(1, 2**63, n_cols, dtype=np.uint64) | np.uint64(1)
    keys = np.empty(n, dtype=np.uint64)
    step = max(1, (1 << 21) // n_cols)  # bound the temporaries to ~16 MB
    for lo in range(0, n, step):
        bits = X[lo : lo + step].view(np.uint64) & np.uint64(0x7FFFFFFFFFFFFFFF)
        keys[lo : lo + step] = (bits * multipliers).sum(axis=1)
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    if first.shape[0] == n:
        return X, None
    distinct = X[first]
    for lo in range(0, n, step):
        if not np.array_equal(X[lo : lo + step], distinct[inverse[lo : lo + step]]):
            # a hash collision between different rows: fall back to sorting rows
            distinct, inverse = np.unique(X, axis=0, return_inverse=True)
            return distinct, inverse.reshape(-1)
    return distinct, inverse


def _expand(values, inverse):
    """Values along the last axis (one per distinct row) copied back to every row."""
    return values if inverse is None else values[..., inverse]


def _ranks(P):
    """rank(p, j) for every row and column: stable descending order, ties to lower j."""
    order = np.argsort(-P, axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(
        ranks, order, np.arange(1, P.shape[1] + 1)[None, :].repeat(P.shape[0], 0), axis=1
    )
    return ranks


class _Predictions:
    """A validated probability matrix with the observed columns, and what utilities share.

    Shared quantities (the rows of ``P`` sorted, the rank of the observed
    class, the distinct rows) are computed on first use and then reused by
    every utility of a family, so a family costs one sort of the rows of
    ``P``, not one per member.
    """

    def __init__(self, P, y):
        self.P = P
        self.y = y
        self.n_samples, self.n_classes = P.shape

    @cached_property
    def top(self):
        """Top-class probability and column (ties to the lowest column)."""
        return top_label(self.P)

    @cached_property
    def sorted_desc(self):
        """Each row of ``P`` in decreasing order."""
        return np.ascontiguousarray(np.sort(self.P, axis=1)[:, ::-1])

    @cached_property
    def top_k_sums(self):
        """Column ``k - 1``: the sum of the ``k`` largest probabilities of each row."""
        return np.cumsum(self.sorted_desc, axis=1)

    @cached_property
    def rank_of_y(self):
        """rank(p, y) of the observed class, from 1."""
        P, y = self.P, self.y
        p_y = P[np.arange(self.n_samples), y][:, None]
        before = np.arange(self.n_classes)[None, :] < y[:, None]
        return 1 + (P > p_y).sum(axis=1) + ((P == p_y) & before).sum(axis=1)

    @cached_property
    def distinct_rows(self):
        return _distinct_rows(self.P)

    @cached_property
    def distinct_sorted_rows(self):
        # rank-based utilities depend on p only through its sorted values
        return _distinct_rows(self.sorted_desc)


def _check_proba(y_proba):
    """Check for the public methods: a (n, C) matrix of probability vectors."""
    P = np.asarray(y_proba, dtype=np.float64)
    if P.ndim != 2 or P.shape[0] == 0 or P.shape[1] < 2:
        raise ValueError(
            f"y_proba must be of shape (n_samples, n_classes) with n_samples >= 1 "
            f"and n_classes >= 2, got shape {P.shape}."
        )
    _check_probability_matrix(P, name="y_proba")
    return np.ascontiguousarray(P)


def _check_proba_and_labels(y_proba, y):
    """Checks for the public ``evaluate`` methods: probabilities and observed columns."""
    P = _check_proba(y_proba)
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != P.shape[0]:
        raise ValueError(
            f"y must be 1-dimensional with one entry per row of y_proba "
            f"({P.shape[0]}), got shape {y.shape}."
        )
    if y.dtype.kind not in "iu":
        raise TypeError(
            "y must hold column indices of y_proba (integers); map labels to "
            "columns first, or use utility_calibration_error(..., labels=...)."
        )
    if np.any(y < 0) or np.any(y >= P.shape[1]):
        raise ValueError(f"y has column indices outside [0, {P.shape[1] - 1}].")
    return P, y.astype(np.intp)


# --- utilities ------------------------------------------------------------------


class Utility(_Parametrized):
    """Base class of the utility functions ``u(p, e_j)`` in ``[-1, 1]``.

    A utility maps a probability vector ``p`` over ``C`` classes and an
    outcome ``e_j`` to a payoff in ``[-1, 1]`` (paper 001, Section 3). Its
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

    def __init__(self):
        pass

    def utility_matrix(self, y_proba):
        """The matrix ``U[i, j] = u(p_i, e_j)``.

        Parameters
        ----------
        y_proba : array-like of shape (n_samples, n_classes)
            Probability vectors, one per row.

        Returns
        -------
        U : ndarray of shape (n_samples, n_classes)
        """
        P = _check_proba(y_proba)
        self._check_n_classes(P.shape[1])
        return self._checked_matrix(P)

    def evaluate(self, y_proba, y):
        """Predicted and realised utility of each row, in one vectorised pass.

        Parameters
        ----------
        y_proba : array-like of shape (n_samples, n_classes)
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
        data = _Predictions(*_check_proba_and_labels(y_proba, y))
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
                f"{U.shape} for y_proba of shape {P.shape}."
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
    utility class ``U_TCE`` of paper 001, Example 3.4, whose calibration
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


class Linear(Utility):
    """Linear utility: a fixed payoff ``a_j`` for each outcome.

    ``u_a(p, e_j) = a_j`` with ``a`` in ``[-1, 1]^C``, so
    ``v_u(p) = <p, a>`` is linear in ``p`` (paper 001, Example 3.5).

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

    def __init__(self, a):
        self.a = a
        self._validate_params()

    def _validate_params(self):
        self._payoffs()

    def _payoffs(self, n_classes=None):
        a = _check_values(self.a, "a", type(self).__name__, ndim=1)
        if n_classes is not None:
            _check_length(a.shape[0], n_classes, "payoffs", type(self).__name__)
        return a

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
        V = _expand(A @ distinct.T, inverse)
        return np.ascontiguousarray(V), A[:, data.y]


class ClassWise(Linear):
    """Class-wise utility: 1 if class ``c`` occurs, else 0.

    ``u(p, e_j) = 1{j = c}``, so ``v_u(p) = p_c``: a member of ``U_CWE``
    (paper 001, Example 3.4), the linear utility with ``a = e_c``. Its
    calibration error is the cutoff calibration error of ``(p_c, 1{y = c})``.

    Parameters
    ----------
    c : int
        The class, as a column of ``y_proba`` (position in ``classes_``).

    Examples
    --------
    >>> from skcal import ClassWise
    >>> v, realised = ClassWise(2).evaluate([[0.5, 0.25, 0.25], [0.1, 0.1, 0.8]], [2, 0])
    >>> v.tolist(), realised.tolist()
    ([0.25, 0.8], [1.0, 0.0])
    """

    def __init__(self, c):
        self.c = c
        self._validate_params()

    def _validate_params(self):
        self._column()

    def _column(self, n_classes=None):
        c = _check_int(self.c, "c", "ClassWise", minimum=0)
        if n_classes is not None and c >= n_classes:
            raise ValueError(
                f"ClassWise(c={c}) needs at least {c + 1} classes but y_proba "
                f"has {n_classes} columns."
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


class Rank(Utility):
    """Rank-based utility: a payoff for each rank of the observed class.

    ``u_theta(p, e_j) = theta_{rank(p, j)}`` with ``theta`` in ``[-1, 1]^C``
    and ``rank(p, j) = 1 + #{i: p_i > p_j} + #{i < j: p_i = p_j}`` (paper
    001, Example 3.6; ties, which the paper breaks arbitrarily, go to the
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

    def __init__(self, theta):
        self.theta = theta
        self._validate_params()

    def _validate_params(self):
        self._theta()

    def _theta(self, n_classes=None):
        theta = _check_values(self.theta, "theta", type(self).__name__, ndim=1)
        if n_classes is not None:
            _check_length(theta.shape[0], n_classes, "rank payoffs", type(self).__name__)
        return theta

    def _check_n_classes(self, n_classes):
        self._theta(n_classes)

    def _utility_matrix(self, P):
        return self._theta(P.shape[1])[_ranks(P) - 1]

    def _evaluate(self, data):
        V, realised = self._evaluate_many([self], data)
        return V[0], realised[0]

    @classmethod
    def _evaluate_many(cls, utilities, data):
        Theta = np.array([u._theta(data.n_classes) for u in utilities])
        distinct, inverse = data.distinct_sorted_rows
        V = _expand(Theta @ distinct.T, inverse)
        return np.ascontiguousarray(V), Theta[:, data.rank_of_y - 1]


class TopK(Rank):
    """Top-K utility: 1 if the observed class is among the ``k`` most probable.

    ``u_K(p, e_j) = 1{rank(p, j) <= K}`` (paper 001, Example 3.6, the rank
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

    def __init__(self, k):
        self.k = k
        self._validate_params()

    def _validate_params(self):
        self._top()

    def _top(self, n_classes=None):
        k = _check_int(self.k, "k", "TopK", minimum=1)
        if n_classes is not None and k > n_classes:
            raise ValueError(
                f"TopK(k={k}) needs at least {k} classes but y_proba has "
                f"{n_classes} columns."
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


class DCG(Rank):
    """Discounted-cumulative-gain utility of the rank of the observed class.

    ``u_gamma(p, e_j) = theta_{rank(p, j)}`` with the discount
    ``theta_r = log2(1 + r) ** -gamma`` (paper 001, Appendix C.3; the paper's
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

    def __init__(self, gamma=1.0):
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
    -loss[j, delta(p)]`` (paper 001, Example 3.7; ``U_dec,K`` is the class of
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

    def __init__(self, loss):
        self.loss = loss
        self._validate_params()

    def _validate_params(self):
        self._gains()

    def _gains(self, n_classes=None):
        loss = _check_values(self.loss, "loss", "DecisionUtility", ndim=2)
        if n_classes is not None:
            _check_length(loss.shape[0], n_classes, "loss rows", "DecisionUtility")
        return -loss


class GainMatrix(_BestAction):
    """Utility of predicting the class with the largest expected gain.

    For a gain matrix ``R`` with ``R[i, j]`` the gain of predicting ``j``
    when the class is ``i``, the agent predicts ``j*(p) = argmax_j sum_i p_i
    R[i, j]`` (ties to the lowest column) and gets ``u_R(p, e_i) = R[i,
    j*(p)]`` (paper 001, Appendix C.2, which takes ``R`` in ``[0, 1]`` with a
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

    def __init__(self, R):
        self.R = R
        self._validate_params()

    def _validate_params(self):
        self._gains()

    def _gains(self, n_classes=None):
        return _check_square(self.R, "R", "GainMatrix", n_classes)


class SimilarityUtility(Utility):
    """Expected similarity between the outcome and a draw from ``p``.

    ``u(p, e_j) = sum_i p_i S[i, j]`` for a similarity matrix ``S`` in
    ``[-1, 1]`` (paper 001, Appendix C.3, with ``S`` the cosine similarity
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

    def __init__(self, S):
        self.S = S
        self._validate_params()

    def _validate_params(self):
        self._similarity()

    def _similarity(self, n_classes=None):
        return _check_square(self.S, "S", "SimilarityUtility", n_classes)

    def _check_n_classes(self, n_classes):
        self._similarity(n_classes)

    def _utility_matrix(self, P):
        return P @ self._similarity(P.shape[1])

    def _evaluate(self, data):
        distinct, inverse = data.distinct_rows
        U = distinct @ self._similarity(data.n_classes)
        v = (U * distinct).sum(axis=1)
        rows = np.arange(data.n_samples) if inverse is None else inverse
        return _expand(v, inverse), U[rows, data.y]


# --- families -------------------------------------------------------------------


class _FiniteFamily(_Parametrized):
    """A finite set of utilities, possibly depending on the number of classes."""

    def members(self, n_classes):
        """The utilities of the family for ``n_classes`` classes, in a fixed order.

        Parameters
        ----------
        n_classes : int

        Returns
        -------
        utilities : list of Utility
        """
        raise NotImplementedError

    def evaluate(self, y_proba, y):
        """Predicted and realised utility of every member, sharing one pass over ``y_proba``.

        Parameters
        ----------
        y_proba : array-like of shape (n_samples, n_classes)
        y : array-like of int, shape (n_samples,)
            Column of the observed class in each row.

        Returns
        -------
        V : ndarray of shape (n_utilities, n_samples)
            Predicted utility of each member (rows, in ``members`` order).
        realised : ndarray of shape (n_utilities, n_samples)
        """
        data = _Predictions(*_check_proba_and_labels(y_proba, y))
        utilities = self.members(data.n_classes)
        blocks = list(_evaluate_blocks(utilities, data, len(utilities)))
        return (
            np.concatenate([V for _, V, _ in blocks]),
            np.concatenate([r for _, _, r in blocks]),
        )


class UtilityFamily(_FiniteFamily):
    """A finite union of utilities and finite families.

    ``UC(f, U) = sup_{u in U} UC(f, u)`` (paper 001, eq. 3.5). Nested
    families are flattened in order; the union of the class-wise and top-K
    families is the paper's ``U_comb`` (Section 5), also available as
    ``utility="comb"``.

    Parameters
    ----------
    utilities : sequence of Utility, finite families or names
        Members; names are those accepted by
        :func:`skcal.utility_calibration_error` ("top-class", "class-wise",
        "top-k", "comb").

    Examples
    --------
    >>> from skcal import ClassWiseFamily, TopK, TopKFamily, UtilityFamily
    >>> comb = UtilityFamily([ClassWiseFamily(), TopKFamily()])
    >>> comb.members(2)
    [ClassWise(c=0), ClassWise(c=1), TopK(k=1), TopK(k=2)]
    >>> V, realised = UtilityFamily([TopK(1), TopK(2)]).evaluate([[0.75, 0.25]], [1])
    >>> V.tolist(), realised.tolist()
    ([[0.75], [1.0]], [[0.0], [1.0]])
    """

    def __init__(self, utilities):
        self.utilities = utilities
        self._validate_params()

    def _validate_params(self):
        self._parts()

    def _parts(self):
        if isinstance(self.utilities, (str, _Parametrized)) or not hasattr(
            self.utilities, "__iter__"
        ):
            raise TypeError(
                "UtilityFamily: utilities must be a sequence of utilities or "
                f"families, got {self.utilities!r}."
            )
        parts = [_resolve_utility(u) for u in self.utilities]
        if not parts:
            raise ValueError("UtilityFamily: utilities is empty.")
        return parts

    def members(self, n_classes):
        out = []
        for part in self._parts():
            out.extend(_members(part, n_classes))
        return out


class ClassWiseFamily(_FiniteFamily):
    """The class-wise utilities ``U_CWE = {ClassWise(c)}`` (paper 001, Example 3.4).

    ``UC(f, U_CWE) = sup_c sup_I |E[(1{Y = c} - p_c) 1{p_c in I}]|``: the
    worst class-wise cutoff calibration error.

    Parameters
    ----------
    classes : sequence of int, default=None
        Columns to include; all ``n_classes`` columns by default.

    Examples
    --------
    >>> from skcal import ClassWiseFamily
    >>> ClassWiseFamily().members(3)
    [ClassWise(c=0), ClassWise(c=1), ClassWise(c=2)]
    """

    def __init__(self, classes=None):
        self.classes = classes
        self._validate_params()

    def _validate_params(self):
        for c in () if self.classes is None else self.classes:
            ClassWise(c)  # raises for a bad column

    def members(self, n_classes):
        classes = range(n_classes) if self.classes is None else self.classes
        members = [ClassWise(c) for c in classes]
        for u in members:
            u._check_n_classes(n_classes)
        return members


class TopKFamily(_FiniteFamily):
    """The top-K utilities ``U_topK = {TopK(k)}`` (paper 001, Example 3.6).

    Parameters
    ----------
    ks : sequence of int, default=None
        Values of ``k`` to include; ``1, ..., n_classes`` by default.

    Examples
    --------
    >>> from skcal import TopKFamily
    >>> TopKFamily().members(3)
    [TopK(k=1), TopK(k=2), TopK(k=3)]
    """

    def __init__(self, ks=None):
        self.ks = ks
        self._validate_params()

    def _validate_params(self):
        for k in () if self.ks is None else self.ks:
            TopK(k)  # raises for a bad k

    def members(self, n_classes):
        ks = range(1, n_classes + 1) if self.ks is None else self.ks
        members = [TopK(k) for k in ks]
        for u in members:
            u._check_n_classes(n_classes)
        return members


class _SampledFamily(_Parametrized):
    """A continuous family over ``n_classes`` classes, measured through samples (001 §4)."""

    _utility = None  # the class of the members

    def __init__(self, n_classes):
        self.n_classes = n_classes
        self._validate_params()

    def _validate_params(self):
        _check_int(self.n_classes, "n_classes", type(self).__name__, minimum=2)

    def sample(self, n_utilities, random_state=None):
        """Draw ``n_utilities`` members i.i.d. from the family's distribution.

        Parameters
        ----------
        n_utilities : int
            Number of utilities ``M`` to draw.
        random_state : int, RandomState instance or None, default=None
            Controls the draw; an integer makes it reproducible.

        Returns
        -------
        family : UtilityFamily
            The ``M`` drawn utilities, in the order drawn.
        """
        n_utilities = _check_int(n_utilities, "n_utilities", "sample", minimum=1)
        self._validate_params()
        rng = check_random_state(random_state)
        C = int(self.n_classes)
        # Uniform on the boundary of the cube, {a : max_j |a_j| = 1}: its 2C
        # faces have equal area, so pick one uniformly (a coordinate and a
        # sign) and draw the other coordinates uniformly in [-1, 1].
        params = rng.uniform(-1.0, 1.0, size=(n_utilities, C))
        face = rng.randint(C, size=n_utilities)
        params[np.arange(n_utilities), face] = rng.choice([-1.0, 1.0], size=n_utilities)
        params = self._shape_params(params)
        return UtilityFamily([self._utility(row) for row in params])

    @staticmethod
    def _shape_params(params):
        return params


class LinearFamily(_SampledFamily):
    """Linear utilities ``U_lin = {Linear(a) : a in [-1, 1]^C}`` (paper 001, Example 3.5).

    The supremum over this continuous class is hard to compute (paper 001,
    Section 4), so it is measured through the distribution of
    ``UC(f, u)`` over sampled members: ``sample`` draws ``a`` uniformly on
    the boundary of the cube, ``{a : max_j |a_j| = 1}``, as in paper 001,
    Section 4.

    Parameters
    ----------
    n_classes : int
        Number of classes ``C`` (columns of ``y_proba``).

    Examples
    --------
    >>> from skcal import LinearFamily
    >>> family = LinearFamily(3).sample(2, random_state=0)
    >>> len(family.members(3))
    2
    >>> [float(abs(u.a).max()) for u in family.members(3)]
    [1.0, 1.0]
    """

    _utility = Linear


class RankFamily(_SampledFamily):
    """Rank utilities ``U_rank = {Rank(theta)}`` (paper 001, Example 3.6).

    ``sample`` draws ``theta`` uniformly on the boundary of the cube among
    non-increasing vectors, ``theta_1 >= ... >= theta_C`` (a better rank is
    worth more), as in paper 001, Section 4: a uniform draw on the boundary
    sorted in decreasing order.

    Parameters
    ----------
    n_classes : int
        Number of classes ``C`` (columns of ``y_proba``).

    Examples
    --------
    >>> import numpy as np
    >>> from skcal import RankFamily
    >>> family = RankFamily(4).sample(3, random_state=0)
    >>> all(bool(np.all(np.diff(u.theta) <= 0)) for u in family.members(4))
    True
    """

    _utility = Rank

    @staticmethod
    def _shape_params(params):
        return -np.sort(-params, axis=1)


# --- resolving the ``utility`` argument of the measures -------------------------

_UTILITY_NAMES = ("top-class", "class-wise", "top-k", "comb")


def _resolve_utility(utility):
    """A utility or finite family from a name or an object.

    Parameters
    ----------
    utility : str, Utility or finite family
        One of ``_UTILITY_NAMES``, a :class:`Utility`, or a finite family
        (:class:`UtilityFamily`, :class:`ClassWiseFamily`,
        :class:`TopKFamily`).

    Returns
    -------
    utility : Utility or finite family
    """
    if isinstance(utility, str):
        if utility == "top-class":
            return TopClass()
        if utility == "class-wise":
            return ClassWiseFamily()
        if utility == "top-k":
            return TopKFamily()
        if utility == "comb":
            return UtilityFamily([ClassWiseFamily(), TopKFamily()])
        if utility in ("linear", "rank"):
            raise ValueError(
                f"{utility!r} names a continuous family, whose supremum is not "
                "computable (paper 001, Section 4): use utility_calibration_ecdf, "
                "or measure a sample, e.g. LinearFamily(C).sample(M, random_state)."
            )
        raise ValueError(
            f"Unknown utility {utility!r}; use one of {_UTILITY_NAMES}, a Utility "
            "or a finite family."
        )
    if isinstance(utility, (Utility, _FiniteFamily)):
        return utility
    if isinstance(utility, _SampledFamily):
        raise TypeError(
            f"{type(utility).__name__} is a continuous family: its supremum is "
            "not computable (paper 001, Section 4). Measure a sample of it, "
            f"{type(utility).__name__}(...).sample(n_utilities, random_state), "
            "or its error distribution with utility_calibration_ecdf."
        )
    raise TypeError(
        f"utility must be a name in {_UTILITY_NAMES}, a Utility or a finite "
        f"family, got {utility!r}."
    )


def _members(utility, n_classes):
    """The utilities of a resolved utility or finite family, checked against ``n_classes``."""
    if isinstance(utility, _FiniteFamily):
        return utility.members(n_classes)
    utility._check_n_classes(n_classes)
    return [utility]


def _evaluate_blocks(utilities, data, block_size):
    """Yield ``(start, V, realised)`` for consecutive blocks of same-class utilities.

    Members of one class are evaluated together (one matrix product, one
    gather), at most ``block_size`` at a time so memory stays bounded.
    """
    start = 0
    while start < len(utilities):
        kind = type(utilities[start])
        stop = start + 1
        while (
            stop < len(utilities)
            and stop - start < block_size
            and type(utilities[stop]) is kind
        ):
            stop += 1
        V, realised = kind._evaluate_many(utilities[start:stop], data)
        yield start, V, realised
        start = stop
