"""Lower distance to calibration (Definition 1 of Hu, Jambulapati, Tian and Yang)."""

from __future__ import annotations

import numbers
import threading
from typing import TYPE_CHECKING, overload

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

if TYPE_CHECKING:
    from typing import Literal

    from numpy.typing import ArrayLike
    from sklearn.utils import Bunch

    from .._typing import BinaryLabels, Multiclass, PosLabel, Value

from .._grouped import binary_statistic, sketch_error_bound
from .._input import check_size
from .._kernels import _dce_simplex, _ldtc
from .._specs import MeasureSpec, register
from ._ldtc_program import (  # _HighsModelStatus: read here by the tests
    _HIGHS_OPTIONS,
    _fixed_columns,
    _Highs,
    _HighsModelStatus,  # noqa: F401
    _HighsProgram,
)

__all__ = [
    "FixedStartSession",
    "grid_points",
    "ldtc_core",
    "lower_distance_to_calibration",
    "sessions_available",
]

# Why a linear program, and what is known of its structure: see the notes of
# skcal.metrics._ldtc_program.

# Up to this many split columns per grid point the linear program is solved
# in one go; beyond it the columns are merged into blocks first (see
# _solve_on_grid), so that every solve stays O(grid) in size.
_MERGE_ABOVE_COLUMNS_PER_POINT = 0

# Reduced costs this close to zero count as zero when the merged blocks are
# checked against the dual solution (HiGHS works to ~1e-9 with the options
# of _ldtc_program, in a program whose costs are at most 1).
_REDUCED_COST_TOL = 1e-9

# The sub-grid of a fine grid starts with every (M // this)-th point besides
# the neighbours of the data (_solve_on_sparse_grid).
_SPARSE_GRID_STRIDE = 64

# HiGHS options of a _Session's re-solves on top of _HIGHS_OPTIONS: devex
# pricing in the dual simplex (HiGHS's default there is steepest edge). A
# resample moves the optimum ~175 pivots from the last basis with steepest
# edge and ~140 with devex, each cheaper (measured at n = 2,000 on the
# default grid: 6.4 -> 5.8 ms a draw by this alone, values within 1e-17); a fresh solve
# keeps HiGHS's default, so the public function's values do not move.
_SESSION_OPTIONS = {"simplex_dual_edge_weight_strategy": 1}

# Solve with scipy.optimize.linprog (a new model per solve) even where
# HiGHS's own binding is available; the tests set it to run both.
_USE_LINPROG = False

# Solve a fresh program with the dedicated simplex of skcal._kernels._dce_simplex
# (certified, HiGHS where it is not: _solve_by_simplex); False: HiGHS only,
# the refinement of merged blocks below (the benchmark's "before", and the
# path the tests compare it with). Sessions (_Session) keep HiGHS either way.
_USE_SIMPLEX = True

# The simplex's iteration cap per grid point (measured on the default grid:
# 2 to 6 iterations per point from n = 10^3 to 10^6), its entering threshold
# on reduced costs and the cost per unit of a calibrated sink below 0 (any
# start is then feasible; at an optimum with every sink >= 0 the penalty is
# inactive, and a negative sink fails the certificate).
_SIMPLEX_ITERATIONS_PER_POINT = 40
_SIMPLEX_TOL = 1e-11
_SIMPLEX_PENALTY = 4.0

# Primal and dual objectives of the simplex's solution may differ by this
# much per unit of (rescaled) mass before the solve counts as failed; the
# value is then exact to it, since the optimum lies between them.
_SIMPLEX_GAP_TOL = 1e-11

# Solves by the simplex, and those of them handed to HiGHS (cap reached or
# certificate failed): read by the tests and the benchmark.
simplex_counts = {"solves": 0, "fallbacks": 0}


@overload
def lower_distance_to_calibration(
    y_true: BinaryLabels,
    y_prob: ArrayLike | None = None,
    *,
    sample_weight: ArrayLike | None = None,
    pos_label: PosLabel = None,
    multiclass: Multiclass = "top-label",
    labels: ArrayLike | None = None,
    grid: int | ArrayLike = 100,
    return_details: Literal[False] = False,
) -> float: ...


@overload
def lower_distance_to_calibration(
    y_true: BinaryLabels,
    y_prob: ArrayLike | None = None,
    *,
    sample_weight: ArrayLike | None = None,
    pos_label: PosLabel = None,
    multiclass: Multiclass = "top-label",
    labels: ArrayLike | None = None,
    grid: int | ArrayLike = 100,
    return_details: Literal[True],
) -> tuple[float, Bunch]: ...


def lower_distance_to_calibration(
    y_true: BinaryLabels,
    y_prob: ArrayLike | None = None,
    *,
    sample_weight: ArrayLike | None = None,
    pos_label: PosLabel = None,
    multiclass: Multiclass = "top-label",
    labels: ArrayLike | None = None,
    grid: int | ArrayLike = 100,
    return_details: bool = False,
) -> Value:
    """Lower distance to calibration (LDTC, dCE), exact on a grid.

    On the weighted empirical distribution ``D`` of ``(v, y)`` (``v`` the
    prediction) this is Definition 1 of Hu, Jambulapati, Tian and Yang, due
    to Blasiok, Gopalan, Hu and Nakkiran::

        dCE(D) = inf E|u - v|  over joint laws of (u, v, y) whose (v, y)
                 marginal is D and with (u, y) calibrated, E[y | u] = u,

    the least average distance the predictions must move to become
    calibrated. The value returned is ``dCE^U(D)``, the same infimum with
    ``u`` restricted to the grid ``U`` (Hu et al., Definition 7), computed exactly
    (to solver tolerance). By Hu et al., Lemma 17 (Lemma 7.11 of Blasiok et al.),
    for a grid whose largest gap is ``h`` (an ``h/2``-cover of ``[0, 1]``
    containing 0 and 1)::

        dCE(D) <= value <= dCE(D) + h,

    so the true dCE lies in ``[value - h, value]``; ``return_details=True``
    returns that interval (``details.bound``).

    ``dCE^U`` is the linear program of Hu et al., Lemma 18 over the couplings
    ``Pi(u, v, y)``, ``2 |U| K`` variables for ``K`` distinct predictions.
    It is not solved in that form: because ``|u - v|`` is a distance on a
    line, mass shipped from ``v`` to ``u`` can be routed through the grid
    point on either side of ``v`` and then along the grid at the same cost,
    and any such routing splits back into direct shipments that cost no more
    (triangle inequality). The program is therefore equal to a min-cost flow
    on the path ``U``, one copy per label, with a calibrated sink at each
    grid point (absorbing ``t_j`` of mass, a fraction ``u_j`` of it
    positive) and, per distinct ``(v, y)``, one variable: how much of its
    mass leaves ``v`` to the left. That program has ``2 |U|`` rows. On a
    line an optimal split sends a cell's samples left below a threshold and
    right above it, so the samples of one grid cell and one label form a
    single flow along the grid edge with a convex piecewise linear cost (a
    piece per sample): ``3 |U| - 2`` columns, each with at most two
    nonzeros, whatever the data. A primal simplex of its own solves it
    exactly (``skcal._kernels._dce_simplex``: each basis is solved by
    traversal in ``O(|U|)``, the ratio test runs through the breakpoints),
    and its solution counts only with a certificate: potentials that are
    dual feasible and whose dual objective meets the primal cost. A solve
    it does not certify (none in the tests) goes to HiGHS, on the same
    program with merged blocks of samples cut where the dual threshold
    falls, until the LP optimality conditions hold. The cost is one sort
    plus ``O(n + |U|^2)`` for the simplex (a few hundred iterations on the
    default grid).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Observed labels (binary), or class labels for multiclass ``y_prob``.
    y_prob : array-like of shape (n_samples,) or (n_samples, n_classes)
        Predicted probability of the positive class, or ``predict_proba``
        output (see ``multiclass``).
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights; integer weights equal repeating rows.
    pos_label : int, float, bool or str, default=None
        The positive class; 1 for labels in {0, 1} or {-1, 1}.
    multiclass : {"top-label", "raise"}, default="top-label"
        For ``(n_samples, K)`` input with ``K > 2``: measure the top-label
        confidence ``max_k p_k`` against ``1{argmax_k p_k = y}`` (ties to the
        lowest column), or raise.
    labels : array-like of shape (n_classes,), default=None
        The class of each column of a ``predict_proba`` ``y_prob`` (the
        estimator's ``classes_``). Needed when ``y_true`` does not show
        every class, unless the labels are {0, 1} or {-1, 1}.
    grid : int or array-like of shape (n_points,), default=100
        The grid ``U`` of calibrated values. An integer ``m`` means the
        uniform grid ``{0, 1/m, ..., 1}`` (spacing ``h = 1/m``; the default
        is ``h = 0.01``); an array gives the points themselves, strictly
        increasing, from 0 to 1 inclusive (0 and 1 keep the program feasible:
        ``u = y`` is always a calibrated coupling). A solve has about
        ``2 * n_points`` rows at most: on a grid much finer than the data, the
        program is solved on the grid points next to the data and a coarse
        subset, and other points join only where the dual solution shows
        they can lower the value (exact, see ``_solve_on_sparse_grid``), so
        the cost follows the number of occupied cells.
    return_details : bool, default=False
        Also return the interval ``(value - h, value)`` (lower end clipped at
        0) that contains the exact dCE, ``h`` the largest gap of the grid.

    Returns
    -------
    value : float
        ``dCE^U`` of the data on the grid, in ``[0, 1]``.
    details : Bunch
        Only with ``return_details=True``: ``bound``, the pair
        ``(lower, upper)`` with ``lower <= dCE <= upper = value`` (and
        ``error_bound`` for a compacted ``CalibrationSketch``, see
        ``skcal.sketch.CalibrationSketch``).

    See Also
    --------
    smooth_calibration_error : Within a factor 2 of dCE either way
        (``dCE / 2 <= smCE <= 2 dCE``, Hu et al., Lemma 12), in O(n log n).

    Examples
    --------
    The lower bound of Hu et al., Lemma 1 is attained: a constant prediction
    ``1/2 + eps`` against a fair coin is exactly ``eps`` from calibrated.

    >>> from skcal import lower_distance_to_calibration
    >>> y_true = [0, 1, 0, 1]
    >>> y_prob = [0.55, 0.55, 0.55, 0.55]
    >>> round(lower_distance_to_calibration(y_true, y_prob), 6)
    0.05
    >>> value, details = lower_distance_to_calibration(
    ...     [0, 0, 1, 1], [0.2, 0.4, 0.6, 0.9], return_details=True)
    >>> lower, upper = details.bound
    >>> round(value, 6), round(lower, 6), round(upper, 6)
    (0.071667, 0.061667, 0.071667)
    """
    points = grid_points(grid)
    statistic = binary_statistic(
        y_true,
        y_prob,
        sample_weight,
        pos_label=pos_label,
        multiclass=multiclass,
        labels=labels,
        rescale=True,
    )
    # a fresh solve (never a _Session's): the value does not depend on the
    # calls before it, bit for bit
    value = _solve_on_sparse_grid(
        statistic.values, statistic.weights, statistic.positives, points, totals=True,
        total=_known_total(statistic),
    )[0]
    if not return_details:
        return value
    h = float(np.max(np.diff(points)))
    bound = (max(value - h, 0.0), value)
    from sklearn.utils import Bunch
    details = Bunch(bound=bound)
    error_bound = sketch_error_bound(y_true, "lower_distance_to_calibration")
    if error_bound is not None:
        details["error_bound"] = error_bound
    return value, details


def ldtc_core(statistic, points):
    """dCE on the grid ``points`` of a grouped statistic; no validation.

    A call on the same predictions and grid as the call before it (the
    resamples of the tester and of the report's intervals: only the masses
    change) re-solves the previous program from its optimal basis
    (:class:`_Session`) instead of from scratch: the value is the same to
    solver tolerance (about 1e-15 here), not bit for bit, so this is for
    resamples (``_grouped_core``), not for the public function.
    """
    values, wsum, wysum = statistic.values, statistic.weights, statistic.positives
    session = _session_for(values, points)
    if session is not None:
        return session.solve(wsum - wysum, wysum)
    return _solve_on_sparse_grid(
        values, wsum, wysum, points, totals=True, total=_known_total(statistic)
    )[0]


def _known_total(statistic):
    """The statistic's total weight where it is ``weights.sum()`` of the very
    array the solver sums (contiguous float64), so the solver need not sum it
    again (a pass over the weights: 8 ms at 10**7 values); else None."""
    weights = statistic.weights
    if weights.dtype == np.float64 and weights.flags.c_contiguous:
        return statistic.total
    return None


# The last predictions and grid seen by ldtc_core in this thread, and the
# session built on a repeat; sessions only up to this many values (a column
# per value and label: beyond it the merged blocks of _solve_on_grid are
# cheaper than warm starts).
_SESSION_MAX_VALUES = 20_000
_last = threading.local()


def forget_session():
    """Start this thread's dCE solves afresh: no warm start from an earlier call.

    A warm-started re-solve agrees with a fresh solve to about 1e-15, not bit
    for bit; callers that must print the same digits as a fresh process (the
    report) forget the session first.
    """
    _last.key = _last.session = None


def sessions_available(K, M):
    """Whether programs of ``K`` distinct predictions on ``M`` grid points are
    re-solved in a session (:class:`_Session`, :class:`FixedStartSession`).

    Needs HiGHS's own binding (SciPy >= 1.15), at most
    ``_SESSION_MAX_VALUES`` predictions and a grid at most 4 times as many
    points.
    """
    return not (_Highs is None or _USE_LINPROG or K > _SESSION_MAX_VALUES or 4 * K < M)


def _session_for(values, u):
    """The :class:`_Session` of a repeated ``(values, u)``, else None."""
    if not sessions_available(values.shape[0], u.shape[0]):
        return None
    last = getattr(_last, "key", None)
    if (
        last is not None
        and last[0].shape == values.shape
        and last[1].shape == u.shape
        and np.array_equal(last[0], values)
        and np.array_equal(last[1], u)
    ):
        if _last.session is None:
            _last.session = _Session(last[0], last[1])
        return _last.session
    _last.key = (np.array(values, dtype=np.float64), np.array(u, dtype=np.float64))
    _last.session = None
    return None


class _Session:
    """The flow program of fixed predictions and grid, for many masses.

    One column per split ``(value, label)`` (no merging, so no refinement),
    whatever its mass: a new draw of the masses changes only the supplies
    (row bounds) and the columns' upper bounds, never a cost, so the last
    optimal basis stays dual feasible and HiGHS's dual simplex resumes from
    it. The program is that of :func:`_solve_on_grid` without merging, the
    same min-cost flow, solved to the same tolerances.
    """

    def __init__(self, values, u):
        M, K = u.shape[0], values.shape[0]
        cell = np.searchsorted(u, values, side="right") - 1
        on = values == u[cell]  # on a grid point (1 included): no column
        split = np.flatnonzero(~on)
        up = u[np.minimum(cell + 1, M - 1)]
        self.cell, self.split, self.u, self.M, self.K = cell, split, u, M, K
        self.target = np.where(on, cell, cell + 1)  # supplied at u[cell + 1]
        self.reach = np.where(on, 0.0, up - values)  # distance to it
        k = cell[split]
        cost = 2.0 * values[split] - u[k] - up[split]
        self.program = _HighsProgram(np.zeros(2 * M), _fixed_columns(u), M)
        for key, value in _SESSION_OPTIONS.items():
            self.program.highs.setOptionValue(key, value)
        self.cols = [
            self.program.add(label * M + k, np.zeros(split.shape[0]), cost).astype(np.int32)
            for label in (0, 1)
        ]
        # the columns' upper bounds and the supplies HiGHS holds now
        self.bounds = [np.zeros(split.shape[0]) for _ in (0, 1)]
        self.supply = np.full(2 * M, np.nan)

    def solve(self, mass0, mass1):
        """``dCE^U`` of the masses (as ``_solve_on_grid(...)[0]``)."""
        M, h = self.M, self.program.highs
        scale = self.K / (np.sum(mass0) + np.sum(mass1))
        supply = np.empty(2 * M)
        constant = 0.0
        for label, mass in enumerate((mass0, mass1)):
            d = np.asarray(mass, dtype=np.float64) * scale
            supply[label * M : (label + 1) * M] = np.bincount(
                self.target, weights=d, minlength=M
            )
            constant += float(np.dot(d, self.reach))
            bound = d[self.split]
            # only the bounds that moved: a resample keeps about half of them
            # (a prediction whose outcome is drawn alike), and HiGHS's cost
            # of a change grows with the number of columns passed
            changed = np.flatnonzero(bound != self.bounds[label])
            if changed.shape[0]:
                h.changeColsBounds(
                    changed.shape[0], self.cols[label][changed],
                    np.zeros(changed.shape[0]), bound[changed],
                )
            self.bounds[label] = bound
        rows = np.flatnonzero(supply != self.supply)
        for row, value in zip(rows.tolist(), (-supply[rows]).tolist()):
            h.changeRowBounds(row, value, value)
        self.supply = supply
        fun, _ = self.program.solve()
        return min(max((fun + constant) / self.K, 0.0), 1.0)


class FixedStartSession(_Session):
    """A :class:`_Session` whose every solve starts from one fixed basis.

    A warm start from the previous draw's basis makes the last bits of a
    value depend on the draws solved before it (measured: 29 of 60 draws
    of the tester at n = 2,000 moved by up to 2e-17 when solved in another
    order). Here each :meth:`certified` solve first clears HiGHS's solver
    state and sets the optimal basis of one reference solve (the
    ``reference`` masses, solved cold at construction): the value is then
    a function of the masses alone, bit for bit, whichever draws were
    solved before and in whichever session (the tester's branch and bound
    solves a subset of its draws and may finish the others later). Same
    program, options and value formula as :meth:`_Session.solve`; a solve
    costs 10 to 20% more than one warm-started from the previous draw
    (about 7.5 ms at n = 2,000, ``benchmarks/bench_tester.py``).
    """

    def __init__(self, values, u, reference):
        super().__init__(values, u)
        self.solve(*reference)
        self.basis = self.program.highs.getBasis()
        M = self.M
        # the calibrated sinks t_j follow the 4 (M - 1) edge columns
        self.sinks = slice(4 * (M - 1), 4 * (M - 1) + M)

    def certified(self, mass0, mass1):
        """``(value, psi, t)``: ``dCE^U``, node potentials and calibrated sinks.

        ``psi`` (shape ``(2, M)``, minus the row duals) is a dual solution
        and ``t`` (shape ``(M,)``, in the program's mass scale) the optimal
        calibrated mass at each grid point: the certificates the tester's
        branch and bound reuses as bounds on other draws
        (:mod:`skcal.tester._dcebound`). The value is that of
        :meth:`_Session.solve`, from the fixed start.
        """
        h = self.program.highs
        h.clearSolver()
        h.setBasis(self.basis)
        value = self.solve(mass0, mass1)
        solution = h.getSolution()
        psi = -np.asarray(solution.row_dual, dtype=np.float64).reshape(2, self.M)
        t = np.array(solution.col_value[self.sinks], dtype=np.float64)
        return value, psi, t


def _solve_on_sparse_grid(values, mass0, mass1, u, totals=False, total=None):
    """``dCE^U`` and potentials, with sinks only where they can matter.

    With ``totals=True``, ``mass0`` holds each value's total weight (label
    0's masses are ``mass0 - mass1``): the statistic's weights and positives
    as they are, with no array of their differences where the simplex solves
    on the whole grid (see :func:`_solve_on_grid`).

    A fine grid has far more points than the data occupies. Grid points
    with no data next to them only offer sinks (a path through them costs
    the same as the edge across), so the program is solved on a sub-grid
    ``S``: both grid neighbours of every prediction, 0 and 1, and a coarse
    regular subset. The potentials of ``S`` extend to every other grid point
    ``u`` by the least values that leave the dual objective unchanged,

        R_y(u) = max_i (m_i - |u - v_i|),   m_i = min_{s in S} (|u_s - v_i| + psi[y_i, s]),

    over the predictions ``v_i`` of outcome ``y``. If every extended point
    keeps ``(1 - u) R_0(u) + u R_1(u) <= 0``, the extension is feasible for
    the whole grid with the sub-grid's objective, so by weak duality the
    sub-grid's value is the whole grid's (its program is a restriction, so
    never lower). Otherwise the most violated point of each gap joins ``S``
    and the program is solved again: a column generation that ends exact.
    On a grid the data fills, this is the one solve of ``_solve_on_grid``.
    """
    M = u.shape[0]
    if 4 * values.shape[0] >= M:
        # the data's neighbours alone could fill half the grid: one solve
        return _solve_on_grid(values, mass0, mass1, u, totals, total)
    if totals:
        mass0 = mass0 - mass1
    keep = np.zeros(M, dtype=bool)
    keep[[0, M - 1]] = True
    keep[:: max(1, M // _SPARSE_GRID_STRIDE)] = True
    occupied = (mass0 + mass1) > 0
    cell = np.searchsorted(u, values[occupied], side="right") - 1
    keep[cell] = True
    keep[np.minimum(cell + 1, M - 1)] = True
    if np.count_nonzero(keep) > M // 2:
        return _solve_on_grid(values, mass0, mass1, u)
    while True:
        S = np.flatnonzero(keep)
        value, psi_S = _solve_on_grid(values, mass0, mass1, u[S])
        psi = np.empty((2, M))
        for label, mass in enumerate((mass0, mass1)):
            psi[label] = _least_extension(values[mass > 0], u, S, psi_S[label])
        psi[:, S] = psi_S
        slack = (1.0 - u) * psi[0] + u * psi[1]
        bad = np.flatnonzero(~keep & (slack > _REDUCED_COST_TOL))
        if bad.shape[0] == 0:
            return value, psi
        # the most violated removed point of each gap between points of S
        gap = np.searchsorted(S, bad)
        order = np.lexsort((-slack[bad], gap))
        first = np.ones(order.shape[0], dtype=bool)
        first[1:] = gap[order][1:] != gap[order][:-1]
        keep[bad[order[first]]] = True


def _least_extension(v, u, S, psi_S):
    """``R(u_j) = max_i (m_i - |u_j - v_i|)`` at every grid point (see above).

    Two running extrema each: ``m_i`` is the lower envelope of the cones
    ``psi_S[s] + |v - u_s|``, ``R`` the upper envelope of ``m_i - |u - v_i|``.
    Without predictions of this outcome any value is feasible: -1 is used
    (costs are at most 1), for points strictly inside (0, 1).
    """
    if v.shape[0] == 0:
        return np.full(u.shape[0], -1.0)
    uS = u[S]
    left = np.minimum.accumulate(psi_S - uS)  # min over u_s <= v of psi - u_s
    right = np.minimum.accumulate((psi_S + uS)[::-1])[::-1]  # over u_s >= v
    below = np.searchsorted(uS, v, side="right") - 1  # last u_s <= v (u_0 = 0 <= v)
    above = np.searchsorted(uS, v, side="left")  # first u_s >= v (u_S ends at 1)
    m = np.minimum(v + left[below], right[above] - v)
    up = np.maximum.accumulate(m + v)  # max over v_i <= u of m_i + v_i
    down = np.maximum.accumulate((m - v)[::-1])[::-1]  # over v_i >= u of m_i - v_i
    R = np.full(u.shape[0], -np.inf)
    before = np.searchsorted(v, u, side="right") - 1
    has = before >= 0
    R[has] = up[before[has]] - u[has]
    after = np.searchsorted(v, u, side="left")
    has = after < v.shape[0]
    R[has] = np.maximum(R[has], down[after[has]] + u[has])
    return R


def grid_points(grid):
    """The grid ``U`` as a float array, from an interval count or the points."""
    if isinstance(grid, numbers.Integral) and not isinstance(grid, bool):
        if grid < 1:
            raise ValueError(
                f"grid must be a positive number of intervals, got {grid!r}."
            )
        check_size(grid, "grid", what="grid intervals")
        return np.linspace(0.0, 1.0, int(grid) + 1)
    if isinstance(grid, (numbers.Number, str, bool)):
        raise TypeError(
            "grid must be an int (the number of intervals m, spacing 1/m) or "
            f"an array of grid points, got {grid!r}; for spacing h pass "
            "grid=round(1 / h)."
        )
    points = np.asarray(grid)
    if points.dtype.kind not in "biuf":
        raise TypeError(f"grid must be numeric, got an array of dtype {points.dtype}.")
    points = points.astype(np.float64, copy=True)
    if points.ndim != 1 or points.shape[0] < 2:
        raise ValueError(
            f"grid must be a 1-D array of at least 2 points, got shape {points.shape}."
        )
    if not np.all(np.isfinite(points)):
        raise ValueError("grid contains NaN or infinity.")
    if not np.all(np.diff(points) > 0):
        raise ValueError("grid points must be strictly increasing.")
    if points[0] != 0.0 or points[-1] != 1.0:
        raise ValueError(
            "grid must start at 0 and end at 1 (Hu et al., Definition 7: with them "
            f"the program is feasible), got [{points[0]!r}, ..., {points[-1]!r}]."
        )
    return points


def _solve_on_grid(values, mass0, mass1, u, totals=False, total=None):
    """``dCE^U`` of grouped data, and the optimal node potentials.

    By the dedicated simplex (:func:`_solve_by_simplex`) where it certifies
    its solution, else by HiGHS (:func:`_solve_on_grid_highs`); both solve
    the same program to the same contract below.

    Parameters
    ----------
    values : ndarray of shape (K,)
        Distinct predictions, ascending.
    mass0, mass1 : ndarray of shape (K,)
        Weight of negative and positive outcomes at each prediction.
    u : ndarray of shape (M,)
        The grid, strictly increasing from 0 to 1.
    totals : bool, default=False
        ``mass0`` holds each value's total weight; label 0's masses are
        ``mass0 - mass1``, formed in the simplex's kernel (8 bytes per value
        less) and as an array only for HiGHS.
    total : float, optional
        With ``totals``: ``mass0.sum()`` as the caller already has it (the
        grouped statistic's total), to spare the simplex that pass.

    Returns
    -------
    value : float
    potentials : ndarray of shape (2, M)
        ``psi[y, j]``: a dual solution. For every ``j``,
        ``(1 - u_j) psi[0, j] + u_j psi[1, j] <= 0``, and
        ``sum_i d_i min_j (|u_j - v_i| + psi[y_i, j])`` (``d_i`` the mass of
        the distinct pair ``(v_i, y_i)`` over the total) equals ``value``: a
        certificate, since by weak duality that sum is at most ``dCE^U``
        for any ``psi`` obeying the inequality.

    """
    if _USE_SIMPLEX and not _USE_LINPROG:
        simplex_counts["solves"] += 1
        result = _solve_by_simplex(values, mass0, mass1, u, totals, total)
        if result is not None:
            return result
        simplex_counts["fallbacks"] += 1
    if totals:
        mass0 = mass0 - mass1
    return _solve_on_grid_highs(values, mass0, mass1, u)


def _solve_by_simplex(values, mass0, mass1, u, totals=False, total=None):
    """``_solve_on_grid`` by the primal simplex of ``skcal._kernels._dce_simplex``.

    The program is the flow program of :func:`_solve_on_grid_highs` with
    each (cell, label) run of split columns as one free flow of convex
    piecewise linear cost (a piece per sample, in increasing ``v``), so
    that it has ``2M`` rows and ``3M - 2`` columns whatever the data, each
    column with at most two nonzeros (a generalized network: every basis
    is solved by traversal in ``O(M)``). Nothing is taken on trust: the
    solution counts only if every calibrated sink is ``>= 0``, the
    potentials satisfy the dual constraints (to ``_REDUCED_COST_TOL``) and
    their dual objective meets the primal cost (to ``_SIMPLEX_GAP_TOL``
    per unit of mass), which by weak duality makes both the optimum. Else
    (or at the iteration cap) None: the caller solves it with HiGHS. Memory:
    two doubles per split (value, label) in the kernel, besides ``O(M)``.
    With ``totals=True``, ``mass0`` holds each value's total weight and
    label 0's mass is ``mass0 - mass1``, formed in the kernel; ``total``,
    if given, is ``mass0.sum()`` (see :func:`_solve_on_grid`).
    """
    M, K = u.shape[0], values.shape[0]
    values, u = (np.ascontiguousarray(a, dtype=np.float64) for a in (values, u))
    mass0 = np.ascontiguousarray(mass0, dtype=np.float64)
    mass1 = np.ascontiguousarray(mass1, dtype=np.float64)
    # Masses rescaled to total K, as in _solve_on_grid_highs, but divided by
    # total / K in the kernel (correctly rounded) rather than multiplied by
    # K / total: one row of any weight is then mass 1, exactly as with unit
    # weight (no array per value here: the kernel divides as it reads).
    if not totals:
        total = mass0.sum() + mass1.sum()
    elif total is None:
        total = mass0.sum()
    divisor = total / K
    potentials = np.empty(2 * M)
    out = np.empty(6)
    status = _dce_simplex.simplex(
        values, mass0, mass1, u, divisor, _SIMPLEX_ITERATIONS_PER_POINT * M,
        _SIMPLEX_TOL, _SIMPLEX_PENALTY, potentials, out, totals,
    )
    primal, constant, dual, violation = out[:4].tolist()
    fun = primal + constant
    if status != 0 or not (
        violation <= _REDUCED_COST_TOL and abs(fun - dual) <= _SIMPLEX_GAP_TOL * K
    ):
        return None
    value = fun / K
    return min(max(value, 0.0), 1.0), potentials.reshape(2, M)


def _solve_on_grid_highs(values, mass0, mass1, u):
    """``_solve_on_grid`` by HiGHS, refining merged blocks of split columns.

    Notes
    -----
    No array has an entry per value: the compiled kernels
    (``skcal._kernels._ldtc``) walk the values once per label for the
    supplies and the constant, once per block for its sums, and once per
    torn block to cut it, so the extra memory is ``O(M + blocks)`` (a few
    thousand blocks at 10^7 values on the default grid). They compute
    every product, difference and sum as the array code they replace did
    (kept as ``ldtc_solve_on_grid_arrays`` in the tests' references), sums
    in numpy's pairwise order, so the program and its solution are the same
    bit for bit. A block is a range of values within one cell; a cut only
    splits a block at the value where the sign of the reduced cost changes,
    which is where the array code cut it, because within a cell the split
    cost ``2 v - u_k - u_{k+1}`` (rounded) does not decrease with ``v``.
    """
    M = u.shape[0]
    K = values.shape[0]
    values, u = (np.ascontiguousarray(a, dtype=np.float64) for a in (values, u))
    mass0 = np.ascontiguousarray(mass0, dtype=np.float64)
    mass1 = np.ascontiguousarray(mass1, dtype=np.float64)
    # Masses are rescaled to total K so that every number HiGHS sees is of
    # order one, whatever the weights.
    scale = K / (mass0.sum() + mass1.sum())
    # Node rows: (label 0, point j) is row j, (label 1, point j) is M + j.
    # A prediction v strictly inside [u_k, u_{k+1}] ships a of its mass d to
    # u_k at v - u_k and d - a to u_{k+1} at u_{k+1} - v: the constant
    # d (u_{k+1} - v) plus a (2v - u_k - u_{k+1}), with d supplied at u_{k+1};
    # a prediction on a grid point supplies its mass there. The kernels
    # compute these per value as they go (no per-sample array): a block of
    # split columns is a range [lo, hi) of values within one cell.
    supply = np.zeros(2 * M)
    constant = 0.0
    counts = np.empty((2, M), dtype=np.intp)
    masses = (mass0, mass1)
    for label, mass in enumerate(masses):
        constant += _ldtc.split_supply(
            values, mass, u, scale, supply[label * M : (label + 1) * M], counts[label]
        )
    fixed = _fixed_columns(u)
    merge = int(counts.sum()) > _MERGE_ABOVE_COLUMNS_PER_POINT * M
    blocks = [
        _initial_blocks(values, mass, u, scale, counts[label], merge)
        for label, mass in enumerate(masses)
    ]
    program = None
    if _Highs is not None and not _USE_LINPROG:
        # one HiGHS model for the whole refinement: a cut replaces a block's
        # column by its pieces' and the next solve starts from the last basis
        program = _HighsProgram(supply, fixed, M)
        for label, b in enumerate(blocks):
            b.col = program.add(label * M + b.cell, b.mass, b.cost)
    while True:
        if program is None:
            # Ordered by row, then by prediction: each (cell, label) is a
            # contiguous run of blocks, sorted by split cost.
            result = _solve(
                np.concatenate([label * M + b.cell for label, b in enumerate(blocks)]),
                np.concatenate([b.mass for b in blocks]),
                np.concatenate([b.cost for b in blocks]),
                supply,
                fixed,
                M,
            )
            fun, potential = result.fun, -result.eqlin.marginals
        else:
            fun, potential = program.solve()
        # A sample goes left (its column at the upper bound) iff its cost is
        # below the potential difference of its two nodes; a merged block is
        # optimal for all its samples iff they agree (else it is cut where
        # the side changes: cut_blocks).
        cut = False
        for label, mass in enumerate(masses):
            b = blocks[label]
            row = label * M + b.cell
            threshold = potential[row + 1] - potential[row]
            pieces = np.empty((b.lo.shape[0], 6), dtype=np.intp)
            n_torn = _ldtc.cut_blocks(
                values, mass, u, scale, b.lo, b.hi, b.cell, b.count, threshold,
                _REDUCED_COST_TOL, pieces,
            )
            if n_torn:
                blocks[label], new = _cut(values, mass, u, scale, b, pieces[:n_torn])
                if program is not None:
                    program.drop(b.col[pieces[:n_torn, 0]])
                    nb = blocks[label]
                    nb.col[new] = program.add(
                        label * M + nb.cell[new], nb.mass[new], nb.cost[new]
                    )
                cut = True
        if not cut:
            break
    value = (fun + constant) / K
    return min(max(value, 0.0), 1.0), potential.reshape(2, M)


class _Blocks:
    """Blocks of split columns of one label, in order: per block the value
    range ``[lo, hi)`` (all in one cell), the cell, the number of columns,
    their total mass and mass-weighted mean split cost."""

    __slots__ = ("lo", "hi", "cell", "count", "mass", "cost", "col")

    def __init__(self, lo, hi, cell, count, mass, cost, col=None):
        self.lo, self.hi, self.cell, self.count = lo, hi, cell, count
        self.mass, self.cost = mass, cost
        # the blocks' columns in a _HighsProgram (None without one)
        self.col = col


def _summed_blocks(values, mass, u, scale, lo, hi, cell, count):
    """:class:`_Blocks` with the sums of their columns (``block_sums``)."""
    block_mass = np.empty(lo.shape[0])
    block_cost = np.empty(lo.shape[0])
    _ldtc.block_sums(values, mass, u, scale, lo, hi, cell, count, block_mass, block_cost)
    return _Blocks(lo, hi, cell, count, block_mass, block_cost)


def _initial_blocks(values, mass, u, scale, count, merge):
    """One block per occupied cell (``merge``) or per split column."""
    if merge:
        cell = np.flatnonzero(count)
        start = np.searchsorted(values, u, side="left")  # first value of each cell
        end = np.append(start[1:], values.shape[0])  # one past its last
        return _summed_blocks(
            values, mass, u, scale, start[cell], end[cell], cell, count[cell]
        )
    n = int(count.sum())
    index = np.empty(n, dtype=np.intp)
    cell = np.empty(n, dtype=np.intp)
    _ldtc.split_elements(values, mass, u, scale, index, cell)
    return _summed_blocks(
        values, mass, u, scale, index, index + 1, cell, np.ones(n, dtype=np.intp)
    )


def _cut(values, mass, u, scale, blocks, pieces):
    """Replace each torn block by its pieces (see cut_blocks), graded in size.

    ``cut_blocks`` finds where the dual threshold falls in a torn block: the
    columns left of it, those at it (zero reduced cost) and those right of
    it. The next solve moves the threshold a little, usually into one of
    the two big pieces again, so cutting only there costs a solve per
    halving (17 solves at 10^6 values). Instead each side is cut into
    pieces that grow away from the threshold, ``1, 1, 2, 4, ...``
    columns (each piece ends a power of ``_GRADE`` columns from it), so a
    moved threshold lands in a small piece and a few solves settle it.
    Exact all the same: every block lies in one cell, so any partition is
    a restriction of the program, and the loop of ``_solve_on_grid`` ends
    only when no block is torn.

    Returns the new blocks and the indices of the pieces among them (their
    ``col`` is -1, the others keep their parent's).
    """
    torn, mid, right, n_left, n_mid, n_right = pieces.T
    B = blocks.lo.shape[0]
    # Per torn block, the column offsets where its pieces start, counted from
    # its first column: left side (from the threshold outward), middle, right.
    starts = []
    for t in range(torn.shape[0]):
        b = torn[t]
        lo, hi, c = blocks.lo[b], blocks.hi[b], blocks.cell[b]
        nl, nm, nr = int(n_left[t]), int(n_mid[t]), int(n_right[t])
        left = [nl - e for e in _grades(nl)][::-1]  # starts of the left pieces > 0
        mid_start = [nl] if nm > 0 else []
        right_start = [nl + nm + e for e in [0] + _grades(nr)]
        offsets = np.array([0] + left + mid_start + right_start, dtype=np.intp)
        keep = (mass[lo:hi] * scale > 0) & (values[lo:hi] != u[c])
        index = lo + np.flatnonzero(keep)
        starts.append((index[offsets], np.diff(np.append(offsets, nl + nm + nr))))
    n_pieces = np.ones(B, dtype=np.intp)
    n_pieces[torn] = [len(first) for first, _ in starts]
    parent = np.repeat(np.arange(B), n_pieces)
    first = np.cumsum(n_pieces) - n_pieces  # index of each parent's first piece
    lo, hi = blocks.lo[parent], blocks.hi[parent]
    cell, count = blocks.cell[parent], blocks.count[parent]
    mass_sum, cost = blocks.mass[parent], blocks.cost[parent]
    new = np.concatenate(
        [first[b] + np.arange(n_pieces[b]) for b in torn]
    ).astype(np.intp)
    piece_lo = np.concatenate([first_index for first_index, _ in starts])
    piece_count = np.concatenate([n for _, n in starts])
    piece_hi = piece_lo.copy()
    piece_hi[:-1] = piece_lo[1:]
    # the last piece of each torn block ends where its parent ended
    last = np.cumsum(n_pieces[torn]) - 1
    piece_hi[last] = blocks.hi[torn]
    piece_lo[last - n_pieces[torn] + 1] = blocks.lo[torn]
    lo[new], hi[new], count[new] = piece_lo, piece_hi, piece_count
    part = _summed_blocks(values, mass, u, scale, lo[new], hi[new], cell[new], count[new])
    mass_sum[new], cost[new] = part.mass, part.cost
    col = None
    if blocks.col is not None:
        col = blocks.col[parent]
        col[new] = -1
    return _Blocks(lo, hi, cell, count, mass_sum, cost, col), new


# Pieces of a torn block grow by this factor away from the threshold (_cut).
_GRADE = 2


def _grades(n):
    """``1, G, G^2, ...`` below ``n`` (``G = _GRADE``): where the pieces of a
    side of ``n`` columns end, counted from the threshold (none for
    ``_GRADE = None``: one piece a side, the cut of the earlier version,
    kept for the benchmark's "before")."""
    if _GRADE is None:
        return []
    out, e = [], 1
    while e < n:
        out.append(e)
        e *= _GRADE
    return out


def _solve(split_row, split_bound, split_cost, supply, fixed, M):
    """Solve the flow program with the given split columns first."""
    f_rows, f_cols, f_vals, f_costs = fixed
    n_split = split_row.shape[0]
    index = np.arange(n_split)
    rows = np.concatenate([split_row, split_row + 1, f_rows])
    cols = np.concatenate([index, index, f_cols + n_split])
    vals = np.concatenate([np.ones(n_split), -np.ones(n_split), f_vals])
    n_cols = n_split + f_costs.shape[0]
    A = sparse.csc_array((vals, (rows, cols)), shape=(2 * M, n_cols))
    upper = np.concatenate([split_bound, np.full(f_costs.shape[0], np.inf)])
    # Conservation at every node: inflow from the data and the grid equals
    # outflow into the grid and the sink.
    program = dict(
        c=np.concatenate([split_cost, f_costs]),
        A_eq=A,
        b_eq=-supply,
        bounds=np.column_stack([np.zeros(n_cols), upper]),
        method="highs",
    )
    result = linprog(**program, options=_HIGHS_OPTIONS)
    if result.status == 4:
        # The program is always feasible and bounded. The HiGHS of scipy 1.10
        # can stop without a verdict on it (its status 15, "model_status
        # Unknown") at these tight tolerances; with presolve it solves it.
        result = linprog(**program, options={**_HIGHS_OPTIONS, "presolve": True})
    if result.status != 0:  # pragma: no cover - the program is always solvable
        raise RuntimeError(f"HiGHS failed on the dCE program: {result.message}")
    return result


register(
    MeasureSpec(
        name="lower_distance_to_calibration",
        class_name="LowerDistanceToCalibration",
        # the public function reads the boundary's canonical form as y_true
        core=lower_distance_to_calibration,
        function=lower_distance_to_calibration,
        options={"grid": 100},
        label="distance to calibration",
        docs="mean distance predictions must move to be calibrated",
        grouped_core=lambda statistic, grid=100, **options: ldtc_core(statistic, grid_points(grid)),
        tester_name="dce",
        # dCE^U >= dCE (Lemma 17 of Hu, Jambulapati, Tian and Yang), witnessed by
        # one dual solution with values in [-1, 1]; costs |u - v| are 1-Lipschitz
        # in v, and a flip unbalances a grid point by its mass, which their
        # Lemma 21 repairs at no more cost.
        dce_factor=1.0,
        lipschitz=(1.0, 1.0),
        rank=1,
    )
)
