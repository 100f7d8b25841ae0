"""The patches of utility patching: the step, its replay and the incremental audit.

What :class:`~skcal.UtilityPatchingRecalibrator` does to the predictions
(Hegazy, Jordan and Dieuleveut, *Scalable Utility-Aware Multiclass
Calibration*, Appendix A): the stored :class:`Patch`, the exact Euclidean
projection onto the simplex, the replay of a patch on new rows, and the audit
of a family kept up to date row by row after each patch.
"""


from typing import NamedTuple

import numpy as np

from .._kernels._interval import max_abs_interval_rows
from .._kernels._patching import (
    interval_upper_bounds,
    project_shifted,
    rank_utilities,
    step_project,
    top_k_rows,
)
from ..utilities import ClassWise, TopClass, TopK
from ..utilities._engine import Predictions

__all__ = [
    "EXACT_V",
    "INCREMENTAL_MAX_ELEMENTS",
    "IncrementalAudit",
    "Patch",
    "apply_patch",
    "patch_rows",
    "predicted_utility",
    "project_simplex",
    "row_brier",
    "top_k_indicator",
    "utility_rows",
]



class Patch(NamedTuple):
    """One step of :class:`UtilityPatchingRecalibrator`.

    Rows whose predicted utility ``v_u(p)`` lies in the closed interval
    ``[interval[0], interval[1]]`` move to
    ``proj_simplex(p + step * sign * u_vec(p))``, with ``u_vec(p)`` the
    utility vector ``(u(p, e_1), ..., u(p, e_C))`` at the current ``p``.

    Attributes
    ----------
    utility : Utility
        The audited utility ``u``.
    interval : tuple of float
        ``(a, b)``: smallest and largest ``v_u`` of the fitted rows (with
        positive weight) in the worst interval of the audit.
    sign : int
        +1 when realised utility exceeded predicted utility on the interval
        (so ``v_u`` is increased), -1 when it fell short.
    step : float
        The step size ``eta > 0``.
    """

    utility: object
    interval: tuple
    sign: int
    step: float


# --- the simplex projection ------------------------------------------------------


def project_simplex(X):
    """Euclidean projection of each row of ``X`` onto the probability simplex.

    The sort-based algorithm of Held, Wolfe and Crowder (1974), also in
    Wang and Carreira-Perpinan (2013) and Duchi et al. (2008): with the row
    sorted decreasingly, ``s_1 >= ... >= s_C``, let ``rho`` be the largest
    ``k`` with ``s_k - (sum_{i<=k} s_i - 1)/k > 0`` and
    ``theta = (sum_{i<=rho} s_i - 1)/rho``; the projection is
    ``max(x - theta, 0)``. Vectorised over rows: O(n C log C).

    Each row is first shifted by its maximum (the projection is invariant
    to adding a constant to every coordinate), which keeps the arithmetic
    accurate for large entries. Rows whose every coordinate stays positive
    after the uniform shift ``theta = (sum(x) - 1) / C`` need no sort.
    Results are clipped to ``[0, 1]`` to remove rounding excursions of the
    last bit. The rows are projected by a compiled loop.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_classes)
        Finite rows, any values.

    Returns
    -------
    P : ndarray of shape (n_samples, n_classes)
        Non-negative rows summing to 1 (up to rounding).

    Examples
    --------
    >>> from skcal.recalibration import project_simplex
    >>> project_simplex([[0.5, 0.5], [1.0, 1.0], [2.0, 0.5]])
    array([[0.5, 0.5],
           [0.5, 0.5],
           [1. , 0. ]])
    >>> project_simplex([[1.0, 0.0, 0.5]])
    array([[0.75, 0.  , 0.25]])
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-dimensional, got shape {X.shape}.")
    n, C = X.shape
    if C == 0:
        raise ValueError("X must have at least one column.")
    if n == 0:
        return np.empty((0, C))
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinity.")
    shifted = np.ascontiguousarray(X - X.max(axis=1, keepdims=True))
    project_shifted(shifted, shifted.sum(axis=1))
    return shifted


# --- patches: computed the same way in fit and in replay -----------------------

# Built-in utilities whose private single-utility evaluation is row by row and
# the very arithmetic of the audit, so the interval it reports selects exactly
# the audited rows.
EXACT_V = (TopClass, ClassWise, TopK)


def predicted_utility(utility, P):
    """``v_u(p)`` of every row, row by row (a row's value ignores the others)."""
    if type(utility) in EXACT_V:
        return utility._evaluate(Predictions(P, np.zeros(P.shape[0], np.intp)))[0]
    # a row-wise numpy sum (not BLAS): each row's value depends on that row only
    return (P * utility._checked_matrix(P)).sum(axis=1)


def utility_rows(utility, P):
    """``u_vec(p)`` of every row of ``P``: ``utility._checked_matrix(P)``, faster for TopK."""
    if type(utility) is TopK:
        return top_k_indicator(P, utility._top(P.shape[1]))
    return utility._checked_matrix(P)


def top_k_indicator(P, k):
    """``1{rank(p, j) <= k}``: the ``k`` largest entries of each row, ties to lower columns.

    The entries above the ``k``-th largest value are in and, of the entries
    equal to it, the lowest columns fill the remaining places (compiled,
    row by row). The same 0/1 matrix as ``TopK(k)._checked_matrix(P)``,
    without a stable argsort of every row.
    """
    U = np.empty_like(P)
    top_k_rows(np.ascontiguousarray(P), k, U)
    return U


def patch_rows(P_rows, U, sign, step):
    """The patched rows: ``proj_simplex(p + step * sign * u_vec(p))``.

    ``project_simplex(P_rows + (step * sign) * U)`` with the step, the shift,
    the row sums (numpy's pairwise summation) and the projection in compiled
    loops (the same arithmetic, bit for bit).
    """
    P_rows = np.ascontiguousarray(P_rows, dtype=np.float64)
    out = np.empty_like(P_rows)
    sums = np.empty(P_rows.shape[0])
    if not step_project(P_rows, np.ascontiguousarray(U, dtype=np.float64),
                        step * sign, out, sums):
        raise ValueError("X contains NaN or infinity.")
    return out


def apply_patch(P, patch):
    """``P`` with ``patch`` applied (a new array; ``P`` is not modified)."""
    a, b = patch.interval
    v = predicted_utility(patch.utility, P)
    mask = (v >= a) & (v <= b)
    out = P.copy()
    if mask.any():
        rows = P[mask]
        U = utility_rows(patch.utility, rows)
        out[mask] = patch_rows(rows, U, patch.sign, patch.step)
    return out


# The incremental audit keeps three (m, n) arrays; above this many elements
# per array the audit is recomputed from scratch in bounded memory instead.
INCREMENTAL_MAX_ELEMENTS = 1 << 23


class IncrementalAudit:
    """``utility_calibration_error`` of a family, updated row by row after patches.

    Keeps, for every utility of the family, the predicted utility ``v`` and the
    residual ``u(p, e_y) - v`` of every row and the permutation sorting ``v``.
    After a patch only the patched rows are re-evaluated: they are removed from
    each permutation and merged back at their new values (O(n) per utility
    instead of a sort). Only for utilities evaluated row by row
    (:data:`EXACT_V`), whose value on a row does not depend on the others;
    the worst interval of each utility is then that of a full audit (equal
    ``v`` are grouped whatever their order).
    """

    def __init__(self, utilities, P, y, w):
        self.utilities = utilities
        kinds = {ClassWise: 0, TopK: 1, TopClass: 2}
        self.kind = np.array([kinds[type(u)] for u in utilities], dtype=np.intp)
        self.param = np.array(
            [
                u._column(P.shape[1]) if type(u) is ClassWise
                else u._top(P.shape[1]) if type(u) is TopK
                else 1
                for u in utilities
            ],
            dtype=np.intp,
        )
        self.y = np.ascontiguousarray(y, dtype=np.intp)
        m = len(utilities)
        self.w = w
        self.W = float(w.sum())
        self.V, self.R = self._evaluate(P)
        self.order = np.empty(self.V.shape, dtype=np.intp)
        self._unsorted = np.ones(m, dtype=bool)

    def _sort(self, k):
        """Sort utility ``k``: ``np.argsort(self.V, axis=1)[k]``, when first needed.

        Utilities are sorted lazily, but always on the ``V`` that a sort of
        all of them right after the last full evaluation would have seen
        (``V`` changes only in :meth:`update`, which sorts what is left
        unsorted before merging), so the orders, ties included, are those of
        sorting every utility after every full evaluation.
        """
        if self._unsorted[k]:
            self.order[k] = np.argsort(self.V[k])
            self._unsorted[k] = False

    @staticmethod
    def applies(utilities, n_samples):
        return (
            all(type(u) in EXACT_V for u in utilities)
            and len(utilities) * n_samples <= INCREMENTAL_MAX_ELEMENTS
        )

    def _evaluate(self, P, rows=None):
        """``(V, R)``: ``v_u`` and ``u(p, e_y) - v_u`` of every utility on every row of ``P``.

        Compiled, with the arithmetic of the utilities' own evaluation, bit
        for bit (see ``rank_utilities`` in ``skcal._kernels._patching``);
        ``rows`` (used by :meth:`update`) re-evaluates those rows only, in
        place: a row's values do not depend on the other rows.
        """
        if rows is None:
            m, n = len(self.utilities), P.shape[0]
            V, R = np.empty((m, n)), np.empty((m, n))
            rows = np.arange(n)
        else:
            V, R = self.V, self.R
        rank_utilities(
            np.ascontiguousarray(P), self.y, self.kind, self.param, V, R,
            np.ascontiguousarray(rows, dtype=np.intp),
        )
        return V, R

    def update(self, P, rows):
        """Re-evaluate the rows ``rows`` (sorted indices) of the new ``P``."""
        if rows.shape[0] == 0:
            return
        if 4 * rows.shape[0] > self.V.shape[1]:
            # most rows moved: a fresh sort is cheaper than the merges
            self._evaluate(P, rows)
            self._unsorted[:] = True
            return
        for j in np.flatnonzero(self._unsorted):
            self._sort(j)  # the orders the merges start from
        self._evaluate(P, rows)
        V_rows = self.V[:, rows]
        changed = np.zeros(self.V.shape[1], dtype=bool)
        changed[rows] = True
        k = rows.shape[0]
        slots = np.arange(k)
        for j in range(self.V.shape[0]):
            order = self.order[j]
            kept = order[~changed[order]]
            new = rows[np.argsort(V_rows[j])]
            # new rows go before kept rows of equal v: ties are grouped anyway
            position = np.searchsorted(self.V[j, kept], self.V[j, new]) + slots
            merged = np.empty_like(order)
            is_new = np.zeros(order.shape[0], dtype=bool)
            is_new[position] = True
            merged[position] = new
            merged[~is_new] = kept
            self.order[j] = merged

    def audit(self):
        """``(UC, details)`` as ``utility_calibration_error(return_details=True)``.

        Only the utilities that can be the worst are sorted and audited
        exactly: an upper bound on every utility's worst run, from sums of
        residuals over bins of ``v`` (no sort,
        :func:`skcal._kernels._patching.interval_upper_bounds`), rules out a
        utility whose bound is below an exact value already found. The
        worst utility, its value, interval and sign are those of the exact
        audit of every utility (a ruled-out utility's exact value is below
        the maximum, so it can be neither the maximum nor a tie for it).
        """
        m = self.V.shape[0]
        bound = np.empty(m)
        interval_upper_bounds(self.V, self.R, self.w, bound)
        value = np.full(m, -np.inf)
        lower = np.empty(m)
        upper = np.empty(m)
        sign = np.empty(m, dtype=np.int8)
        best = -np.inf
        for k in np.argsort(-bound, kind="stable"):
            if bound[k] < best:
                break  # this bound and all the next are below an exact value
            self._sort(k)
            row = slice(k, k + 1)
            max_abs_interval_rows(
                self.V[row], self.R[row], self.w, self.order[row],
                value[row], lower[row], upper[row], sign[row],
            )
            best = max(best, value[k])
        # a bound exceeds the exact value by a factor 1 + 1e-12 at least, so a
        # ruled-out value stays below the maximum after the division too
        value /= self.W
        worst = int(np.argmax(value))
        return float(value[worst]), {
            "index": worst,
            "utility": self.utilities[worst],
            "interval": (float(lower[worst]), float(upper[worst])),
            "sign": int(sign[worst]),
        }


def row_brier(P, y):
    """``||p_i - e_{y_i}||^2`` of every row."""
    loss = np.einsum("ij,ij->i", P, P)
    rows = np.arange(P.shape[0])
    return loss - 2.0 * P[rows, y] + 1.0


def audit_family(utilities, P, y, w, return_details=True):
    """``utility_calibration_error`` of ``utilities`` on the canonical ``(P, y, w)``.

    The same computation as :func:`skcal.utility_calibration_error` with
    ``labels=arange(C)`` after its input checks, without repeating them:
    the patching fit audits its own rows (checked once at its entry) on
    every iteration. Returns ``UC`` or ``(UC, details)``; the details are
    those the patching reads (``utility``, ``interval``, ``sign``), not the
    error of every member: only the members that may be the worst are
    computed (``worst_intervals(maximum_only=True)``), which gives the same
    worst member, interval and sign.
    """
    from ..metrics._multiclass import worst_member

    return worst_member(utilities, Predictions(P, y), w, details=return_details)
