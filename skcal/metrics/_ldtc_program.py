"""The flow program of the lower distance to calibration, in HiGHS.

:mod:`skcal.metrics._ldtc` builds the program (its data-dependent split
columns, merged into blocks); this module holds what does not depend on
the data (:func:`_fixed_columns`), the solver options, and the program kept
in one HiGHS model across refinements (:class:`_HighsProgram`).

A fresh solve (the public function) no longer starts here: it goes to the
primal simplex of :mod:`skcal._kernels._dce_simplex` (issue 26, item 2),
which solves this same program with each (cell, label) run of split
columns as one free flow of convex piecewise linear cost: ``2M`` rows and
``3M - 2`` columns of at most two nonzeros (a generalized network; each
basis a pseudo-forest, solved by traversal in ``O(M)``), a long-step ratio
test through the breakpoints, and a certificate checked by
``_ldtc._solve_by_simplex`` (primal cost = dual objective, dual
feasibility, sinks >= 0). HiGHS stays for the sessions (tester re-solves,
warm-started from a basis) and for a solve the simplex does not certify.
130 to 300 iterations of about 3 us on the default grid at n = 10^4
(0.4 to 0.8 ms in all), against HiGHS's 0.45 ms for a warm ``run`` that
moves nothing.

Why a linear program (issue 26; for whoever tries next). No exact
combinatorial algorithm was found; what is known of the structure:

* Primal. Each label's transport is a 1-D W1, so with ``t_j`` the
  calibrated mass at ``u_j``, ``A_k = sum_{j<=k} (1 - u_j) t_j`` and
  ``B_k = sum_{j<=k} u_j t_j``, the value is
  ``min sum_k phi0_k(A_k) + phi1_k(B_k)``, ``phi_y,k(c) =
  int_{u_k}^{u_k+1} |F_y(x) - c| dx`` (convex, piecewise linear, a kink per
  prediction in the cell). The path ``(A_k, B_k)`` steps along the rays
  ``(1 - u_j, u_j)``, whose slope grows with ``j`` (a convex chain), but a
  DP along ``k`` needs the 2-D state ``(A_k, B_k)``.
* Dual (of Hu et al., Lemma 18): max over free ``beta`` in ``R^M`` of
  ``sum_i d_i min_j (|v_i - u_j| + beta_j (u_j - y_i))``, i.e. node
  potentials ``psi0 = beta u``, ``psi1 = -beta (1 - u)`` with the sink rows
  tight (they were tight in every probe, not proved WLOG). With ``psi``
  1-Lipschitz on the grid (then ``min_j`` is over the two neighbours) it is
  a chain with a 1-D state ``beta_k``, but the transition
  ``max_b V(b) + G0(u_k+1 b' - u_k b) + G1((1 - u_k+1) b' - (1 - u_k) b)``
  (``G0``, ``G1`` concave, a kink per prediction) mixes two scalings: not an
  inf-convolution, so the slope trick of smCE does not carry over.
* HiGHS on this 2M-row program: ~200-500 simplex iterations cold, tens of
  microseconds each; a resample of the tester moves the optimum ~400 dual
  pivots from the previous basis, so warm starts save little (measured: a
  session keeping merged blocks across draws was slower than fresh solves;
  primal vs dual simplex, crash, scaling, IPM: no gain).
* The 1-D dual chain above needs the sink rows tight, and that is not
  WLOG with 1-Lipschitz potentials. In the direct program of Hu et al.,
  Lemma 18 (no grid edges) it is: the dual objective
  ``sum_i d_i min_j (|v_i - u_j| + psi[y_i, j])`` does not decrease in any
  ``psi``, so each sink row can be raised to equality (but ``min_j`` then
  runs over every grid point: no chain). With the grid edges
  (``psi`` 1-Lipschitz, so that ``min_j`` is over the two neighbours), tight
  rows mean sinks free in sign, a relaxation that is strictly lower: on the
  grid {0, 1/4, 1/2, 3/4, 1} with negative masses 0.8 at 0.17 and 0.1 at
  0.69 and positive mass 0.8 at 0.69 (the test
  ``test_free_sinks_are_a_strict_relaxation``), and on 4 of 12 resamples
  of the tester's data at n = 2,000 (by 2e-8 to 1.5e-6). Equivalently, in the
  primal with ``S_k = t_0 + ... + t_k`` and ``Z_k = sum_{j<k} (u_{j+1} -
  u_j) S_j``, ``A_k = (1 - u_k) S_k + Z_k`` and ``B_k = u_k S_k - Z_k``: the
  cost is a chain in ``Z`` (cell ``k`` sees ``Z_k, Z_k+1`` only), but
  ``t >= 0`` asks ``Z`` to be convex, and that second-order constraint is
  the second dimension of the state.
* Where the time goes in a session re-solve (n = 2,000 distinct
  predictions, default grid, CPU): ``run`` is ~90%; ~140 dual simplex
  pivots with devex (~175 with steepest edge), ~44 us each: a warm HiGHS
  iteration costs ~16 us plus ~7 us per 1,000 columns (26 us at 1,500
  columns, 44 at 4,500 here, 77 at 8,500), so merging columns gains at
  most ~2.5 times before refinement solves; a ``run`` that moves nothing costs
  0.45 ms, a new model started from its optimal basis 0.6 ms (1,800
  columns). A draw within 0.4 ms (the tolerant tester in 0.5 s) therefore
  needs a solver of its own, not HiGHS: the simplex of
  :mod:`skcal._kernels._dce_simplex` (above) is that solver for fresh
  solves; the sessions do not use it yet (a warm start of it from the
  previous draw's basis is not written). (The tolerant tester instead solves few of its draws:
  ``skcal.tester._dcebound`` bounds the others by the duals and the
  calibrated sinks of the draws it solves, about 10 of 999 at n = 2,000.)
"""

import numpy as np
from scipy import sparse

try:  # SciPy >= 1.15 ships HiGHS's own Python binding (private module)
    from scipy.optimize._highspy._core import HighsLp as _HighsLp
    from scipy.optimize._highspy._core import HighsModelStatus as _HighsModelStatus
    from scipy.optimize._highspy._core import MatrixFormat as _MatrixFormat
    from scipy.optimize._highspy._core import _Highs
    from scipy.optimize._highspy._core import kHighsInf as _HIGHS_INF
except ImportError:  # pragma: no cover - older SciPy: linprog for every solve
    _Highs = _HighsLp = _HighsModelStatus = _MatrixFormat = _HIGHS_INF = None
if _Highs is not None and not all(  # a private binding: check what is used
    hasattr(_Highs, name)
    for name in ("addCols", "changeColsBounds", "changeRowBounds", "getInfo",
                 "getModelStatus", "getSolution", "passModel", "run", "setOptionValue")
):  # pragma: no cover
    _Highs = None

__all__ = ["_HIGHS_OPTIONS", "_Highs", "_HighsModelStatus", "_HighsProgram", "_fixed_columns"]

_HIGHS_OPTIONS = {
    # The program is small and well structured; presolve only costs time.
    "presolve": False,
    "primal_feasibility_tolerance": 1e-10,
    "dual_feasibility_tolerance": 1e-10,
}


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


class _HighsProgram:
    """The flow program in one HiGHS model, refined in place.

    The data-independent columns (``_fixed_columns``) come first; block
    columns are appended by :meth:`add` and retired by :meth:`drop` (upper
    bound 0), so that every :meth:`solve` after the first starts from the
    previous optimal basis (HiGHS keeps it across these changes) instead of
    from scratch as a new ``linprog`` call would. Same program, same
    options as :func:`_solve`.
    """

    def __init__(self, supply, fixed, M):
        f_rows, f_cols, f_vals, f_costs = fixed
        n = f_costs.shape[0]
        A = sparse.csc_array((f_vals, (f_rows, f_cols)), shape=(2 * M, n))
        A.sort_indices()
        lp = _HighsLp()
        lp.num_col_, lp.num_row_ = n, 2 * M
        lp.col_cost_ = f_costs
        lp.col_lower_ = np.zeros(n)
        lp.col_upper_ = np.full(n, _HIGHS_INF)
        lp.row_lower_ = lp.row_upper_ = -supply
        matrix = lp.a_matrix_
        matrix.format_ = _MatrixFormat.kColwise
        matrix.num_col_, matrix.num_row_ = n, 2 * M
        matrix.start_ = A.indptr.astype(np.int32)
        matrix.index_ = A.indices.astype(np.int32)
        matrix.value_ = A.data.astype(np.float64)
        h = _Highs()
        h.setOptionValue("output_flag", False)
        for key, value in _HIGHS_OPTIONS.items():
            h.setOptionValue(key, "off" if value is False else value)
        h.passModel(lp)
        self.highs, self.n_cols = h, n

    def add(self, rows, bound, cost):
        """Split columns ``+1`` at ``rows``, ``-1`` at ``rows + 1``; their indices."""
        k = rows.shape[0]
        if k == 0:
            return np.empty(0, dtype=np.intp)
        index = np.empty(2 * k, dtype=np.int32)
        index[0::2], index[1::2] = rows, rows + 1
        value = np.empty(2 * k)
        value[0::2], value[1::2] = 1.0, -1.0
        start = np.arange(0, 2 * k, 2, dtype=np.int32)
        self.highs.addCols(
            k, np.ascontiguousarray(cost, dtype=np.float64), np.zeros(k),
            np.ascontiguousarray(bound, dtype=np.float64), 2 * k, start, index, value,
        )
        cols = np.arange(self.n_cols, self.n_cols + k, dtype=np.intp)
        self.n_cols += k
        return cols

    def drop(self, cols):
        """Retire columns (upper bound 0: the basis stays valid)."""
        k = cols.shape[0]
        self.highs.changeColsBounds(
            k, cols.astype(np.int32), np.zeros(k), np.zeros(k)
        )

    def solve(self):
        """The optimal objective and node potentials (``-`` row duals)."""
        h = self.highs
        h.run()
        if h.getModelStatus() != _HighsModelStatus.kOptimal:
            # as in _solve: an unfinished verdict is retried with presolve
            h.setOptionValue("presolve", "on")
            h.run()
            h.setOptionValue("presolve", "off")
        if h.getModelStatus() != _HighsModelStatus.kOptimal:  # pragma: no cover
            raise RuntimeError(
                "HiGHS failed on the dCE program: "
                f"{h.modelStatusToString(h.getModelStatus())}"
            )
        fun = h.getInfo().objective_function_value
        return fun, -np.asarray(h.getSolution().row_dual, dtype=np.float64)
