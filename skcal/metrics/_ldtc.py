"""Lower distance to calibration (Definition 1 of Hu, Jambulapati, Tian and Yang)."""

import numbers

import numpy as np
from scipy import sparse
from scipy.optimize import linprog
from sklearn.utils import Bunch

from .._grouped import binary_statistic, sketch_error_bound
from ._common import legacy_details_flag

__all__ = ["grid_points", "ldtc_core", "lower_distance_to_calibration"]

# Up to this many split columns per grid point the linear program is solved
# in one go; beyond it the columns are merged into blocks first (see
# _solve_on_grid), so that every solve stays O(grid) in size.
_MERGE_ABOVE_COLUMNS_PER_POINT = 100

# Reduced costs this close to zero count as zero when the merged blocks are
# checked against the dual solution (HiGHS works to ~1e-9 with the options
# below, in a program whose costs are at most 1).
_REDUCED_COST_TOL = 1e-9

_HIGHS_OPTIONS = {
    # The program is small and well structured; presolve only costs time.
    "presolve": False,
    "primal_feasibility_tolerance": 1e-10,
    "dual_feasibility_tolerance": 1e-10,
}


def lower_distance_to_calibration(
    y_true,
    y_prob=None,
    *,
    sample_weight=None,
    pos_label=None,
    multiclass="top-label",
    labels=None,
    grid=100,
    return_details=False,
    return_bound=False,
):
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

    so the true dCE lies in ``[value - h, value]``; ``return_bound=True``
    returns that interval.

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
    mass leaves ``v`` to the left. That program has ``2 |U|`` rows; HiGHS
    solves it exactly. With many samples, the samples of one grid cell and
    one label are first merged into a single column and the blocks are cut
    where the optimal dual threshold falls inside them (on a line an optimal
    split sends a cell's samples left below a threshold and right above it),
    until every sample's reduced cost has the sign of its bound: the LP
    optimality conditions of the full program. Each solve has ``O(|U|)``
    columns; the cost is one sort plus a few solves of that size.

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
        ``2 * n_points`` rows: ``m`` in the thousands is fine, ``m = 10**4``
        takes a minute.
    return_details : bool, default=False
        Also return the interval ``(value - h, value)`` (lower end clipped at
        0) that contains the exact dCE, ``h`` the largest gap of the grid.
    return_bound : bool, default=False
        Deprecated: use ``return_details``. Returns ``(value, bound)``.

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
    legacy = legacy_details_flag("return_bound", return_bound)
    points = grid_points(grid)
    statistic = binary_statistic(
        y_true,
        y_prob,
        sample_weight,
        pos_label=pos_label,
        multiclass=multiclass,
        labels=labels,
    )
    value = ldtc_core(statistic, points)
    if not (return_details or legacy):
        return value
    h = float(np.max(np.diff(points)))
    bound = (max(value - h, 0.0), value)
    if legacy:
        return value, bound
    details = Bunch(bound=bound)
    error_bound = sketch_error_bound(y_true, "lower_distance_to_calibration")
    if error_bound is not None:
        details["error_bound"] = error_bound
    return value, details


def ldtc_core(statistic, points):
    """dCE on the grid ``points`` of a grouped statistic; no validation."""
    values, wsum, wysum = statistic.values, statistic.weights, statistic.positives
    return _solve_on_grid(values, wsum - wysum, wysum, points)[0]


def grid_points(grid):
    """The grid ``U`` as a float array, from an interval count or the points."""
    if isinstance(grid, numbers.Integral) and not isinstance(grid, bool):
        if grid < 1:
            raise ValueError(
                f"grid must be a positive number of intervals, got {grid!r}."
            )
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


def _solve_on_grid(values, mass0, mass1, u):
    """``dCE^U`` of grouped data, and the optimal node potentials.

    Parameters
    ----------
    values : ndarray of shape (K,)
        Distinct predictions, ascending.
    mass0, mass1 : ndarray of shape (K,)
        Weight of negative and positive outcomes at each prediction.
    u : ndarray of shape (M,)
        The grid, strictly increasing from 0 to 1.

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
    M = u.shape[0]
    # Masses are rescaled to total K so that every number HiGHS sees is of
    # order one, whatever the weights.
    scale = values.shape[0] / (mass0.sum() + mass1.sum())
    # Node rows: (label 0, point j) is row j, (label 1, point j) is M + j.
    # cell[k]: the grid point at or below values[k]; on_grid: exactly on it.
    cell = np.searchsorted(u, values, side="right") - 1
    on_grid = u[cell] == values
    supply = np.zeros(2 * M)
    constant = 0.0
    rows, bounds, costs = [], [], []
    for label, mass in enumerate((mass0, mass1)):
        mass = mass * scale
        here = on_grid & (mass > 0)
        np.add.at(supply, label * M + cell[here], mass[here])
        # A prediction strictly inside [u_k, u_{k+1}] ships a of its mass d
        # to u_k at v - u_k and d - a to u_{k+1} at u_{k+1} - v: the constant
        # d (u_{k+1} - v) plus a (2v - u_k - u_{k+1}), with d at u_{k+1}.
        split = ~on_grid & (mass > 0)
        k, v, d = cell[split], values[split], mass[split]
        constant += float(np.sum(d * (u[k + 1] - v)))
        np.add.at(supply, label * M + k + 1, d)
        rows.append(label * M + k)
        bounds.append(d)
        costs.append(2.0 * v - u[k] - u[k + 1])
    # Ordered by row, then by prediction: each (cell, label) is a contiguous
    # run, sorted by split cost.
    row = np.concatenate(rows)
    mass = np.concatenate(bounds)
    cost = np.concatenate(costs)
    fixed = _fixed_columns(u)

    starts = np.ones(row.shape[0], dtype=bool)
    if row.shape[0] > _MERGE_ABOVE_COLUMNS_PER_POINT * M:
        starts[1:] = row[1:] != row[:-1]
    while True:
        first = np.flatnonzero(starts)
        if first.shape[0]:
            block_mass = np.add.reduceat(mass, first)
            block_cost = np.add.reduceat(mass * cost, first) / block_mass
        else:
            block_mass = block_cost = np.zeros(0)
        result = _solve(row[first], block_mass, block_cost, supply, fixed, M)
        potential = -result.eqlin.marginals
        # A sample goes left (its column at the upper bound) iff its cost is
        # below the potential difference of its two nodes; a merged block is
        # optimal for all its samples iff they agree.
        threshold = potential[row + 1] - potential[row]
        side = np.sign(cost - threshold) * (np.abs(cost - threshold) > _REDUCED_COST_TOL)
        block = np.cumsum(starts) - 1
        has_left = np.zeros(first.shape[0], dtype=bool)
        has_right = np.zeros(first.shape[0], dtype=bool)
        has_left[block[side < 0]] = True
        has_right[block[side > 0]] = True
        torn = (has_left & has_right)[block]
        cuts = np.zeros_like(starts)
        cuts[1:] = torn[1:] & (side[1:] != side[:-1]) & (block[1:] == block[:-1])
        if not cuts.any():
            break
        starts |= cuts
    value = (result.fun + constant) / values.shape[0]
    return min(max(value, 0.0), 1.0), potential.reshape(2, M)


def _fixed_columns(u):
    """The columns that do not depend on the data, as COO parts.

    Per label and grid edge, a flow each way costing the edge length; per
    grid point a calibrated sink ``t_j >= 0`` taking ``(1 - u_j) t_j`` of
    negative and ``u_j t_j`` of positive mass (this replaces the
    calibration constraint of Hu et al., Lemma 18 by a parametrisation).
    """
    M = u.shape[0]
    edge = np.arange(M - 1)
    gap = np.diff(u)
    rows, cols, vals, costs = [], [], [], []
    column = 0
    for label in (0, 1):
        for direction in (1.0, -1.0):
            index = column + edge
            rows += [label * M + edge, label * M + edge + 1]
            cols += [index, index]
            vals += [np.full(M - 1, -direction), np.full(M - 1, direction)]
            costs.append(gap)
            column += M - 1
    point = np.arange(M)
    index = column + point
    rows += [point, M + point]
    cols += [index, index]
    vals += [-(1.0 - u), -u]
    costs.append(np.zeros(M))
    return (
        np.concatenate(rows),
        np.concatenate(cols),
        np.concatenate(vals),
        np.concatenate(costs),
    )


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
    result = linprog(
        np.concatenate([split_cost, f_costs]),
        A_eq=A,
        b_eq=-supply,
        bounds=np.column_stack([np.zeros(n_cols), upper]),
        method="highs",
        options=_HIGHS_OPTIONS,
    )
    if result.status != 0:  # pragma: no cover - the program is always solvable
        raise RuntimeError(f"HiGHS failed on the dCE program: {result.message}")
    return result
