"""The engine behind the utilities: parameters, checks, shared evaluation.

Private to :mod:`skcal.utilities`; its names are plain so that the modules
that share them (the utilities, the families, the multiclass measures and
the recalibrator) import them without reaching for private names.
"""

from __future__ import annotations

import inspect
import numbers
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from .._input import check_probability_matrix, top_label

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = [
    "Parametrized",
    "Predictions",
    "check_int",
    "check_length",
    "check_proba",
    "check_proba_and_labels",
    "check_square",
    "check_values",
    "distinct_rows",
    "evaluate_blocks",
    "expand",
    "ranks",
    "short_repr",
]


# --- parameters and repr --------------------------------------------------------


def short_repr(value):
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


class Parametrized:
    """``get_params`` / ``set_params`` / ``repr`` read off the constructor, as in sklearn."""

    @classmethod
    def _get_param_names(cls):
        signature = inspect.signature(cls.__init__)
        return [name for name in signature.parameters if name != "self"]

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """Constructor arguments of this object.

        Parameters
        ----------
        deep : bool, default=True
            Accepted for scikit-learn compatibility; utilities hold no
            estimators, so it changes nothing.

        Returns
        -------
        params : dict
            Parameter names mapped to their values.
        """
        return {name: getattr(self, name) for name in self._get_param_names()}

    def set_params(self, **params: Any) -> Self:
        """Set constructor arguments, then check them.

        Parameters
        ----------
        **params : dict
            Constructor arguments by name.

        Returns
        -------
        self : object
            This object, with the new arguments.
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
            f"{key}={short_repr(value)}" for key, value in self.get_params().items()
        )
        return f"{type(self).__name__}({args})"


def check_int(value, name, owner, minimum):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{owner}: {name} must be an integer, got {value!r}.")
    if value < minimum:
        raise ValueError(f"{owner}: {name} must be >= {minimum}, got {value!r}.")
    return int(value)


def check_values(value, name, owner, ndim):
    """``value`` as a float64 array of ``ndim`` dimensions with entries in [-1, 1]."""
    try:
        array = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(
            f"{owner}: {name} must be a numeric array, got {value!r}."
        ) from None
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


def check_square(value, name, owner, n_classes):
    """A square matrix of values in [-1, 1], one row per class when ``n_classes`` is given."""
    M = check_values(value, name, owner, ndim=2)
    if M.shape[0] != M.shape[1]:
        raise ValueError(f"{owner}: {name} must be square, got shape {M.shape}.")
    if n_classes is not None:
        check_length(M.shape[0], n_classes, f"rows in {name}", owner)
    return M


def check_length(n_entries, n_classes, what, owner):
    if n_entries != n_classes:
        raise ValueError(
            f"{owner} has {n_entries} {what} but the predicted probabilities have "
            f"{n_classes} columns (classes); give one per class."
        )


# --- what every utility of one prediction matrix shares -------------------------


def distinct_rows(X):
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


def expand(values, inverse):
    """Values along the last axis (one per distinct row) copied back to every row."""
    return values if inverse is None else values[..., inverse]


def ranks(P):
    """rank(p, j) for every row and column: stable descending order, ties to lower j."""
    order = np.argsort(-P, axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(
        ranks, order, np.arange(1, P.shape[1] + 1)[None, :].repeat(P.shape[0], 0), axis=1
    )
    return ranks


class Predictions:
    """A validated probability matrix with the observed columns, and what utilities share.

    Shared quantities (the rows of ``P`` sorted, the rank of the observed
    class, the distinct rows) are computed on first use and then reused by
    every utility of a family, so a family costs one sort of the rows of
    ``P``, not one per member. ``top``, when given, is the top label
    ``(confidence, column)`` already read (ties to the lowest column).
    """

    def __init__(self, P, y, top=None):
        self.P = P
        self.y = y
        self.n_samples, self.n_classes = P.shape
        if top is not None:
            # read at the boundary in its checking pass (``multiclass_input``)
            self.top = top

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
        return distinct_rows(self.P)

    @cached_property
    def distinct_sorted_rows(self):
        # rank-based utilities depend on p only through its sorted values
        return distinct_rows(self.sorted_desc)


def check_proba(y_prob):
    """Check for the public methods: a (n, C) matrix of probability vectors."""
    P = np.asarray(y_prob, dtype=np.float64)
    if P.ndim != 2 or P.shape[0] == 0 or P.shape[1] < 2:
        raise ValueError(
            f"y_prob must be of shape (n_samples, n_classes) with n_samples >= 1 "
            f"and n_classes >= 2, got shape {P.shape}."
        )
    check_probability_matrix(P, name="y_prob")
    return np.ascontiguousarray(P)


def check_proba_and_labels(y_prob, y):
    """Checks for the public ``evaluate`` methods: probabilities and observed columns."""
    P = check_proba(y_prob)
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != P.shape[0]:
        raise ValueError(
            f"y must be 1-dimensional with one entry per row of y_prob "
            f"({P.shape[0]}), got shape {y.shape}."
        )
    if y.dtype.kind not in "iu":
        raise TypeError(
            "y must hold column indices of y_prob (integers); map labels to "
            "columns first, or use utility_calibration_error(..., labels=...)."
        )
    if np.any(y < 0) or np.any(y >= P.shape[1]):
        raise ValueError(f"y has column indices outside [0, {P.shape[1] - 1}].")
    return P, y.astype(np.intp)


def evaluate_blocks(utilities, data, block_size):
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
