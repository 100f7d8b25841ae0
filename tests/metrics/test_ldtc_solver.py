"""dCE's solver paths against linprog and the dense LP of the definition.

``_solve_on_grid`` solves the flow program in one HiGHS model refined in
place (warm starts after each cut); ``ldtc_core`` re-solves a repeated
``(values, grid)`` with new masses from the last basis (``_Session``). Both
must give the value of ``scipy.optimize.linprog`` on the same program
(``_USE_LINPROG``), of the dense LP of Hu et al., Lemma 18
(``reference.ldtc_dense_lp``), and potentials that certify it.

These are the HiGHS paths: a fresh solve here goes to HiGHS
(``_USE_SIMPLEX = False``); the dedicated simplex that the public function
uses first is checked against them in ``test_ldtc_simplex.py``.
"""

import numpy as np
import pytest

import skcal.metrics._ldtc as ldtc_module
from skcal import lower_distance_to_calibration
from skcal._grouped import GroupedStatistic, binary_statistic, group

from cases import random_case
from reference_ldtc import ldtc_dense_lp, ldtc_dual_objective

pytestmark = pytest.mark.skipif(
    ldtc_module._Highs is None, reason="SciPy without HiGHS's own binding: linprog only"
)

TOL = 1e-9  # both solve the same program to HiGHS's tolerances (1e-10)


@pytest.fixture(autouse=True)
def _highs_only(monkeypatch):
    monkeypatch.setattr(ldtc_module, "_USE_SIMPLEX", False)


def _grid(rng):
    kind = rng.integers(4)
    if kind == 0:
        return np.linspace(0, 1, int(rng.choice([1, 2, 5, 10, 37, 100])) + 1)
    if kind == 1:
        m = int(rng.integers(1, 60))
        inner = np.sort(rng.choice(np.arange(1, 100), size=m, replace=False)) / 100
        return np.concatenate([[0.0], inner, [1.0]])
    if kind == 2:
        inner = np.unique(rng.random(int(rng.integers(1, 30))))
        return np.concatenate([[0.0], inner[(inner > 0) & (inner < 1)], [1.0]])
    return np.array([0.0, 1.0])


_REAL_SOLVE = ldtc_module._HighsProgram.solve


def _counted(solves):
    def counted(self):
        solves.append(1)
        return _REAL_SOLVE(self)

    return counted


def _linprog_value(values, mass0, mass1, u, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(ldtc_module, "_USE_LINPROG", True)
        return ldtc_module._solve_on_grid(values, mass0, mass1, u)[0]


def test_highs_program_matches_linprog_and_certifies(monkeypatch):
    rng = np.random.default_rng(26)
    n_cut = 0
    for _ in range(300):
        n = int(rng.choice([1, 2, 3, int(rng.integers(1, 80)), int(rng.integers(100, 3000))]))
        y, p, w = random_case(rng, n)
        if rng.random() < 0.2:
            p = np.round(rng.random(n), 3)
        g = group(y, p, w)
        values, mass0, mass1 = g.values, g.weights - g.positives, g.positives
        u = _grid(rng)
        merge = int(rng.choice([0, 1, 4, 10**9]))
        monkeypatch.setattr(ldtc_module, "_MERGE_ABOVE_COLUMNS_PER_POINT", merge)
        solves = []
        monkeypatch.setattr(ldtc_module._HighsProgram, "solve", _counted(solves))
        value, psi = ldtc_module._solve_on_grid(values, mass0, mass1, u)
        monkeypatch.setattr(ldtc_module._HighsProgram, "solve", _REAL_SOLVE)
        n_cut += len(solves) > 1
        assert value == pytest.approx(_linprog_value(values, mass0, mass1, u, monkeypatch),
                                      abs=TOL)
        # the potentials are dual feasible and meet the value (optimality)
        assert np.all((1 - u) * psi[0] + u * psi[1] <= 1e-8)
        assert ldtc_dual_objective(y, p, w, u, psi) == pytest.approx(value, abs=1e-8)
        if n <= 40 and u.shape[0] <= 40:
            assert value == pytest.approx(ldtc_dense_lp(y, p, w, u), abs=1e-7)
    assert n_cut > 30  # the in-place refinement ran (warm-started re-solves)


def test_session_matches_fresh_solves(monkeypatch):
    # repeated calls on one (values, grid) with new masses, as the tester and
    # the report's resamples make them: each equals a fresh linprog solve
    rng = np.random.default_rng(23)
    n_session = 0
    for _ in range(40):
        n = int(rng.choice([1, 2, int(rng.integers(1, 60)), int(rng.integers(100, 1500))]))
        y, p, w = random_case(rng, n)
        u = _grid(rng)
        if 4 * np.unique(p).shape[0] < u.shape[0]:
            u = np.linspace(0, 1, 11)
        first = binary_statistic(y, p, w, rescale=True)
        ldtc_module._last.key = ldtc_module._last.session = None  # a fresh start
        for _draw in range(int(rng.integers(2, 8))):
            kind = rng.integers(3)
            weights = first.weights
            if kind == 0:  # outcomes redrawn from the predictions
                pos = weights * (rng.random(len(first)) < first.values)
            elif kind == 1:  # Bayesian bootstrap weights
                share = first.positives / np.where(weights > 0, weights, 1.0)
                weights = weights * rng.exponential(size=len(first))
                pos = weights * share
            else:  # one class only
                pos = weights * float(rng.integers(2))
            G = GroupedStatistic(first.values, weights, pos)
            value = ldtc_module.ldtc_core(G, u)
            n_session += getattr(ldtc_module._last, "session", None) is not None
            fresh = _linprog_value(G.values, G.weights - G.positives, G.positives, u,
                                   monkeypatch)
            assert value == pytest.approx(fresh, abs=TOL)
    assert n_session > 60


def test_session_is_not_used_for_other_predictions_or_grids():
    rng = np.random.default_rng(1)
    p = rng.random(50)
    y = (rng.random(50) < p).astype(float)
    w = np.ones(50)
    ldtc_module._last.key = ldtc_module._last.session = None
    u = np.linspace(0, 1, 101)
    a = ldtc_module.ldtc_core(binary_statistic(y, p, w, rescale=True), u)
    assert ldtc_module._last.session is None
    b = ldtc_module.ldtc_core(binary_statistic(y, p, w, rescale=True), u)  # a session
    assert ldtc_module._last.session is not None
    assert a == pytest.approx(b, abs=TOL)
    # another grid, then other predictions: each starts afresh and is right
    for grid, q in [(10, p), (100, np.clip(p + 0.01, 0, 1)), (100, p)]:
        points = np.linspace(0, 1, grid + 1)
        value = ldtc_module.ldtc_core(binary_statistic(y, q, w, rescale=True), points)
        assert value == pytest.approx(ldtc_dense_lp(y, q, w, points), abs=1e-7)


def test_public_function_does_not_depend_on_the_calls_before_it():
    # the public value is a fresh solve: equal bit for bit after resamples
    rng = np.random.default_rng(4)
    p = rng.random(300)
    y = (rng.random(300) < p).astype(float)
    first = lower_distance_to_calibration(y, p)
    G = binary_statistic(y, p, np.ones(300), rescale=True)
    for _ in range(3):
        pos = G.weights * (rng.random(len(G)) < G.values)
        ldtc_module.ldtc_core(GroupedStatistic(G.values, G.weights, pos), grid_points_100)
    assert lower_distance_to_calibration(y, p) == first


grid_points_100 = np.linspace(0, 1, 101)


class _UnknownFirst:
    """A HiGHS instance whose first verdict is 'unknown' (as scipy 1.10's
    HiGHS can give at these tolerances): the program retries with presolve."""

    def __init__(self, highs, log):
        self._highs, self._log, self._runs = highs, log, 0

    def run(self):
        self._runs += 1
        option = self._highs.getOptionValue("presolve")  # (status, value) or value
        self._log.append(option[1] if isinstance(option, tuple) else option)
        return self._highs.run()

    def getModelStatus(self):
        if self._runs == 1:
            return ldtc_module._HighsModelStatus.kUnknown
        return self._highs.getModelStatus()

    def __getattr__(self, name):
        return getattr(self._highs, name)


def test_highs_program_retries_an_unknown_verdict_with_presolve(monkeypatch):
    log = []
    real_init = ldtc_module._HighsProgram.__init__

    def init(self, *args):
        real_init(self, *args)
        self.highs = _UnknownFirst(self.highs, log)

    monkeypatch.setattr(ldtc_module._HighsProgram, "__init__", init)
    rng = np.random.default_rng(9)
    for _ in range(10):
        y, p, w = random_case(rng, int(rng.integers(1, 40)))
        u = np.linspace(0, 1, 11)
        g = group(y, p, w)
        value = ldtc_module._solve_on_grid(g.values, g.weights - g.positives,
                                           g.positives, u)[0]
        assert value == pytest.approx(ldtc_dense_lp(y, p, w, u), abs=1e-7)
    assert log.count("on") > 0 and log.count("off") >= log.count("on")


def test_torn_block_is_cut_into_pieces_growing_from_the_threshold():
    # one cell ([0, 1]), one label, 300 split columns (every third value has
    # no mass: not a column); the dual threshold falls at value 150
    rng = np.random.default_rng(3)
    values = np.sort(rng.random(900))
    mass = np.tile([1.0, 0.0, 2.0], 300)
    u = np.array([0.0, 1.0])
    count = np.zeros(2, dtype=np.intp)
    ldtc_module._ldtc.split_supply(values, mass, u, 1.0, np.zeros(2), count)
    blocks = ldtc_module._initial_blocks(values, mass, u, 1.0, count, True)
    columns = np.flatnonzero(mass > 0)
    at = columns[150]
    threshold = np.array([2.0 * values[at] - 1.0])  # zero reduced cost at `at`
    pieces = np.empty((1, 6), dtype=np.intp)
    assert ldtc_module._ldtc.cut_blocks(values, mass, u, 1.0, blocks.lo, blocks.hi,
                                        blocks.cell, blocks.count, threshold, 1e-9,
                                        pieces) == 1
    new_blocks, new = ldtc_module._cut(values, mass, u, 1.0, blocks, pieces)
    lo, hi, n = new_blocks.lo, new_blocks.hi, new_blocks.count
    # a partition of the parent's range into contiguous pieces ...
    assert lo[0] == blocks.lo[0] and hi[-1] == blocks.hi[0]
    np.testing.assert_array_equal(lo[1:], hi[:-1])
    np.testing.assert_array_equal(new, np.arange(lo.shape[0]))
    # ... whose counts are their columns, sums those of a direct sum
    np.testing.assert_array_equal(n, [np.count_nonzero(mass[a:b]) for a, b in zip(lo, hi)])
    for a, b, m in zip(lo, hi, new_blocks.mass):
        assert m == pytest.approx(mass[a:b].sum(), rel=1e-15)
    # the piece at the threshold, then 1, 1, 2, 4, ... columns outward
    middle = int(np.flatnonzero((lo <= at) & (at < hi))[0])
    assert n[middle] == 1
    left, right = n[:middle][::-1], n[middle + 1 :]
    for side in (left, right):
        expected = [1] + [2**k for k in range(side.shape[0] - 1)]
        np.testing.assert_array_equal(side[:-1], expected[:-1])
        assert 1 <= side[-1] <= expected[-1]


def test_graded_cuts_give_the_unmerged_program_on_larger_data(monkeypatch):
    # many columns per cell, so torn blocks are cut into many pieces: the
    # value is that of the program with one column per (value, label) and no
    # cuts at all (linprog), the previous three-piece cut agrees, and the
    # potentials certify it
    rng = np.random.default_rng(8)
    real_cut = ldtc_module._cut
    cuts = []

    def counting_cut(*args):
        out = real_cut(*args)
        cuts.append(out[1].shape[0] - args[-1].shape[0])  # pieces beyond 1 a block
        return out

    for case in range(8):
        n = int(rng.integers(2000, 8000))
        y, p, w = random_case(rng, n)
        if case % 2:
            p = rng.random(n) ** 2  # continuous, crowded near 0
            y = (rng.random(n) < np.clip(p + 0.05, 0, 1)).astype(float)
        g = group(y, p, w)
        values, mass0, mass1 = g.values, g.weights - g.positives, g.positives
        u = np.linspace(0, 1, 101) if case < 4 else _grid(rng)
        monkeypatch.setattr(ldtc_module, "_MERGE_ABOVE_COLUMNS_PER_POINT", 0)
        monkeypatch.setattr(ldtc_module, "_cut", counting_cut)
        value, psi = ldtc_module._solve_on_grid(values, mass0, mass1, u)
        monkeypatch.setattr(ldtc_module, "_cut", real_cut)
        monkeypatch.setattr(ldtc_module, "_GRADE", None)
        three = ldtc_module._solve_on_grid(values, mass0, mass1, u)[0]
        monkeypatch.setattr(ldtc_module, "_GRADE", 2)
        monkeypatch.setattr(ldtc_module, "_MERGE_ABOVE_COLUMNS_PER_POINT", 10**9)
        unmerged = _linprog_value(values, mass0, mass1, u, monkeypatch)
        assert value == pytest.approx(unmerged, abs=TOL)
        assert value == pytest.approx(three, abs=TOL)
        assert np.all((1 - u) * psi[0] + u * psi[1] <= 1e-8)
        assert ldtc_dual_objective(y, p, w, u, psi) == pytest.approx(value, abs=1e-8)
    assert sum(cuts) > 100  # graded cuts made many pieces


class _CountingHighs:
    """HiGHS with a count of the column bounds passed to it."""

    def __init__(self, highs):
        self.highs, self.passed = highs, 0

    def changeColsBounds(self, k, *args):  # noqa: N802 - HiGHS's name
        self.passed += k
        return self.highs.changeColsBounds(k, *args)

    def __getattr__(self, name):
        return getattr(self.highs, name)


def test_session_passes_only_the_moved_bounds():
    # a resample moves some columns' bounds; the others are not passed again
    # (the cost of a change grows with the columns passed), and the value is
    # still a fresh solve's
    rng = np.random.default_rng(5)
    p = np.sort(rng.random(300))
    w = np.full(300, 1 / 300)
    u = np.linspace(0, 1, 21)
    session = ldtc_module._Session(p, u)
    counting = _CountingHighs(session.program.highs)
    session.program.highs = counting
    y = (rng.random(300) < p).astype(float)
    session.solve(w * (1 - y), w * y)
    first = counting.passed
    assert 0 < first <= 300
    assert session.solve(w * (1 - y), w * y) == pytest.approx(
        ldtc_module._solve_on_grid(p, w * (1 - y), w * y, u)[0], abs=TOL)
    assert counting.passed == first  # the same masses: nothing passed
    flip = rng.choice(300, size=7, replace=False)
    y[flip] = 1 - y[flip]
    value = session.solve(w * (1 - y), w * y)
    assert counting.passed <= first + 2 * 7
    assert value == pytest.approx(ldtc_module._solve_on_grid(p, w * (1 - y), w * y, u)[0],
                                  abs=TOL)


def _edge_program_value(values, mass0, mass1, u, free_sinks):
    """The flow program of ``_ldtc_program`` built densely (data to the two
    grid neighbours, edges along the grid, sinks), the interior sinks free in
    sign on request: the primal side of tight sink rows."""
    from scipy.optimize import linprog

    M = u.shape[0]
    columns, costs, lower = [], [], []

    def column(entries, cost, low=0.0):
        col = np.zeros(2 * M + 2 * values.shape[0])
        for row, value in entries:
            col[row] = value
        columns.append(col)
        costs.append(cost)
        lower.append(low)

    for label in (0, 1):
        for i, v in enumerate(values):
            k = min(int(np.searchsorted(u, v, side="right")) - 1, M - 2)
            for j in (k, k + 1):  # mass of pair (i, label) arriving at u_j
                column([(label * M + j, 1.0), (2 * M + 2 * i + label, 1.0)], abs(v - u[j]))
        for j in range(M - 1):
            for sign in (1.0, -1.0):
                column([(label * M + j, -sign), (label * M + j + 1, sign)], u[j + 1] - u[j])
    for j in range(M):
        free = free_sinks and 0 < j < M - 1
        column([(j, -(1 - u[j])), (M + j, -u[j])], 0.0, -np.inf if free else 0.0)
    A = np.column_stack(columns)
    b = np.concatenate([np.zeros(2 * M), np.column_stack([mass0, mass1]).ravel()])
    bounds = [(low, None) for low in lower]
    result = linprog(costs, A_eq=A, b_eq=b, bounds=bounds, method="highs")
    assert result.status == 0
    return result.fun / (mass0.sum() + mass1.sum())


def test_free_sinks_are_a_strict_relaxation():
    # tight sink rows with 1-Lipschitz potentials (a 1-D dual chain) are not
    # without loss: freeing the sinks lowers the value (the notes of
    # _ldtc_program); with sinks >= 0 the dense program is dCE^U
    u = np.linspace(0, 1, 5)
    values = np.array([0.17, 0.69])
    mass0, mass1 = np.array([0.8, 0.1]), np.array([0.0, 0.8])
    exact = ldtc_module._solve_on_grid(values, mass0, mass1, u)[0]
    y = np.array([0.0, 0.0, 1.0])
    p = np.array([0.17, 0.69, 0.69])
    w = np.array([0.8, 0.1, 0.8])
    assert exact == pytest.approx(ldtc_dense_lp(y, p, w, u), abs=1e-9)
    assert _edge_program_value(values, mass0, mass1, u, False) == pytest.approx(exact, abs=1e-9)
    assert _edge_program_value(values, mass0, mass1, u, True) < exact - 1e-3
