"""Branch and bound over the null draws of the tolerant dCE test.

The tolerant test (``CalibrationTester(measure="dce", tolerance > 0)``)
reads its null only through order statistics: the threshold at level
``a`` is the ``(k - j)``-th largest of ``B`` draws plus a shift, and the
p-value bisects over levels, comparing the statistic with such a
threshold at each (``skcal.tester._tolerant``). Each draw is an exact
linear program (~7 ms at n = 2,000), but the predictions of every draw are
those of the data: a draw only moves mass between the two labels of each
distinct prediction. So certificates of one solved draw bound every other
draw in ``O(n)``:

* **Lower bounds (weak duality).** Any potentials ``psi`` (shape
  ``(2, M)``) with ``(1 - u_j) psi[0, j] + u_j psi[1, j] <= 0`` at every
  grid point give ``dCE^U >= sum_i (d_i / D) min_j (|v_i - u_j| +
  psi[y_i, j])`` (the dual of Hu et al., Lemma 18 with calibrated sinks:
  see ``skcal.metrics._ldtc._solve_on_grid``). With ``g_y[i] = min_j
  (|v_i - u_j| + psi[y, j])`` a table per distinct prediction and label,
  the bound of a draw with positive masses ``m1`` is ``(w . g_0 + m1 .
  (g_1 - g_0)) / D``. The optimal potentials of a solved draw are made
  feasible (a point's two potentials are lowered by its excess, which only
  lowers the bound) and kept.
* **Upper bounds (primal feasibility).** Any calibrated masses ``t >= 0``
  on the grid whose negative total ``sum (1 - u_j) t_j`` and positive
  total ``sum u_j t_j`` equal the draw's ``A`` and ``C`` give a feasible
  plan: ship the draw's label-0 mass onto ``(1 - u_j) t_j`` and its label-1
  mass onto ``u_j t_j``, each by the 1-D optimal transport, whose cost is
  ``int_0^1 |F_y(x) - T_y(x)| dx`` (``F_y``, ``T_y`` the cumulative masses);
  the coupling so built puts at ``u_j`` a fraction ``u_j`` of positive
  mass, so ``(u, y)`` is calibrated and its cost is at least ``dCE^U``. The
  optimal ``t`` of a solved draw (totals ``a`` and ``c``, ``a + c = 1``
  after normalising) is repaired to the draw's totals: if ``C >= c``,
  ``t' = (A / a) t`` plus ``C - (A / a) c >= 0`` at ``u = 1`` (where it is
  all positive); else ``t' = (C / c) t`` plus ``A - (C / c) a >= 0`` at
  ``u = 0`` (all negative). Both ``t' >= 0`` and have the draw's totals.
  (``a = 0`` or ``c = 0``: the same with the scale taken as 0.)

The exact solver is :class:`skcal.metrics._ldtc.FixedStartSession`, whose
values depend on a draw's masses alone (bit for bit), so a draw solved
here, later, or by the full path has the same value. A draw is solved only
if its interval ``[lower - m, upper + m]`` (``m`` a small safety margin for
rounding and the solver's tolerance) does not settle the question asked
(:meth:`_DceNull.largest`, :meth:`_DceNull.exceeds`).
"""

import numpy as np

from .._kernels._ldtc import transport_bounds
from ..measures import LowerDistanceToCalibration
from ..metrics._ldtc import FixedStartSession, grid_points, sessions_available

# Safety margin of the bounds: the solver's values are exact to ~1e-15 in
# these programs (costs at most 1, feasibility tolerance 1e-10 on masses of
# order one); the margin is far wider and costs nothing but a few solves.
_ABSOLUTE_MARGIN = 1e-9
_RELATIVE_MARGIN = 1e-6
# Draws whose bounds are computed together (an array of this many draws
# times the distinct predictions) when the masses of all draws are not kept:
# they are while they take at most _MATRIX_BYTES (999 draws of 2,000
# predictions: 16 MB), until the tester has its answers (release).
_BLOCK = 128
_MATRIX_BYTES = 64 * 2**20


def _margin(x):
    return _ABSOLUTE_MARGIN + _RELATIVE_MARGIN * np.abs(x)


class _DceNull:
    """The ``B`` null draws of a tolerant dCE test, solved only where needed.

    Parameters
    ----------
    resampler : skcal.tester._null._Resampler
        Draws the positive masses of a seed, as the tester's full path does.
    seeds : sequence of SeedSequence
        One per draw.
    points : ndarray
        The dCE grid.
    """

    def __init__(self, resampler, seeds, points):
        self.resampler = resampler
        self.seeds = list(seeds)
        self.points = points
        self.size = len(self.seeds)
        self.values = np.full(self.size, np.nan)
        self.solved = np.zeros(self.size, dtype=bool)
        # every value is in [0, 1] (the solver's values are clipped there)
        self.lower = np.zeros(self.size)
        self.upper = np.ones(self.size)
        self._reset()

    def _reset(self):
        self._session = None
        # per certificate: (w . g0 / D, (g1 - g0) / D, t / sum t or None)
        self._certificates = []
        self._applied = np.zeros(self.size, dtype=np.intp)  # certificates applied
        self._cache = {}  # positive masses of the few draws under scrutiny
        self._matrix = None  # or of every draw, when they fit in _MATRIX_BYTES

    def __getstate__(self):
        # the HiGHS model does not pickle; a new session gives the same values
        state = self.__dict__.copy()
        for key in ("_session", "_certificates", "_applied", "_cache", "_matrix"):
            del state[key]
        for key in ("_w", "_v", "_total"):
            state.pop(key, None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._reset()

    # -- exact solves --------------------------------------------------------

    @property
    def n_solved(self):
        """How many draws have been solved exactly."""
        return int(np.count_nonzero(self.solved))

    def _program(self):
        if self._session is None:
            G = self.resampler.G
            w = np.ascontiguousarray(G.weights, dtype=np.float64)
            v = np.ascontiguousarray(G.values, dtype=np.float64)
            # the start of every solve: the optimal basis of the mean draw
            # (masses w (1 - v) and w v), solved cold
            mean1 = w * v
            self._session = FixedStartSession(v, self.points, (w - mean1, mean1))
            self._w, self._v, self._total = w, v, float(w.sum())
            self._add_certificate(*self._session.certified(w - mean1, mean1)[1:])
        return self._session

    def _positives(self, b):
        if self._matrix is not None:
            return self._matrix[b]
        m1 = self._cache.get(b)
        if m1 is None:
            m1 = self.resampler.positives(self.seeds[b])
        return m1

    def release(self):
        """Drop the draws' masses kept for the bounds (the values stay)."""
        self._cache.clear()
        self._matrix = None

    def _solve(self, b):
        session = self._program()
        m1 = self._positives(b)
        value, psi, t = session.certified(self._w - m1, m1)
        self.values[b] = value
        self.solved[b] = True
        self.lower[b] = self.upper[b] = value
        self._cache.pop(b, None)
        self._add_certificate(psi, t)

    def _add_certificate(self, psi, t):
        u = self.points
        # feasible potentials: lower both of a point by its excess
        excess = np.maximum((1.0 - u) * psi[0] + u * psi[1], 0.0)
        psi = psi - excess
        g0, g1 = (self._envelope(psi[label]) for label in (0, 1))
        total = self._total
        t = np.maximum(t, 0.0)  # HiGHS's values are feasible to 1e-10
        mass = float(t.sum())
        self._certificates.append((
            float(np.dot(self._w, g0)) / total,
            (g1 - g0) / total,
            t / mass if mass > 0 else None,
        ))

    def _envelope(self, psi):
        """``min_j (|v_i - u_j| + psi_j)`` at every prediction, in ``O(K + M)``.

        Over the grid points left of ``v`` the cost is ``v + (psi_j - u_j)``,
        right of it ``(psi_j + u_j) - v``: a running minimum each way.
        """
        u, v = self.points, self._v
        left = np.minimum.accumulate(psi - u)
        right = np.minimum.accumulate((psi + u)[::-1])[::-1]
        below = np.searchsorted(u, v, side="right") - 1  # last u_j <= v (u_0 = 0)
        above = np.searchsorted(u, v, side="left")  # first u_j >= v (u_M = 1)
        return np.minimum(v + left[below], right[above] - v)

    # -- bounds --------------------------------------------------------------

    def _bound(self, draws, m1):
        """Apply the certificates not yet applied to ``draws`` (masses ``m1``)."""
        applied = self._applied[draws]
        low, high = self.lower[draws], self.upper[draws]
        for c in range(int(applied.min()), len(self._certificates)):
            base, slope, t = self._certificates[c]
            fresh = applied <= c
            if not np.any(fresh):  # pragma: no cover - applied.min() <= c
                continue
            low = np.where(fresh, np.maximum(low, base + m1 @ slope), low)
            if t is not None:
                high = np.where(fresh, np.minimum(high, self._upper_bound(m1, t)), high)
        self.lower[draws], self.upper[draws] = low, high
        self._applied[draws] = len(self._certificates)

    def _upper_bound(self, m1, t):
        """The primal bound of calibrated masses ``t`` (sum 1) on each row of ``m1``.

        See the module's docstring: ``t`` scaled, plus the missing mass of
        one label at the end of the grid where it is pure
        (``skcal._kernels._ldtc.transport_bounds``).
        """
        out = np.empty(m1.shape[0])
        transport_bounds(
            np.ascontiguousarray(m1, dtype=np.float64), self._w, self._v, self.points,
            t, self._total, out,
        )
        return out

    def _bound_all(self):
        """Bounds of every open draw from the certificates at hand, in blocks."""
        self._program()
        stale = np.flatnonzero(~self.solved & (self._applied < len(self._certificates)))
        if self._matrix is None and self.size * self._w.shape[0] * 8 <= _MATRIX_BYTES:
            self._matrix = np.array([self._positives(b) for b in range(self.size)])
        if self._matrix is not None:
            self._bound(stale, self._matrix[stale])
            return
        for start in range(0, stale.shape[0], _BLOCK):
            draws = stale[start : start + _BLOCK]
            m1 = np.array([self._positives(b) for b in draws.tolist()])
            self._bound(draws, m1)

    def _refresh(self, draws):
        """Bring the bounds of ``draws`` up to date (keeping their masses if few)."""
        if self._matrix is not None:
            self._bound(draws, self._matrix[draws])
            return
        if draws.shape[0] > _BLOCK:
            self._bound_all()
            return
        for b in draws.tolist():
            if b not in self._cache:
                self._cache[b] = self.resampler.positives(self.seeds[b])
        self._bound(draws, np.array([self._cache[b] for b in draws.tolist()]))

    def _intervals(self):
        low = np.where(self.solved, self.values, self.lower - _margin(self.lower))
        high = np.where(self.solved, self.values, self.upper + _margin(self.upper))
        return low, high

    def _narrow(self, middle, high):
        """Tighten the draws in ``middle``: new certificates first, else solve one."""
        self._program()  # its first call adds the mean draw's certificate
        stale = middle[self._applied[middle] < len(self._certificates)]
        if stale.shape[0]:
            self._refresh(stale)
        else:
            self._solve(int(middle[np.argmax(high[middle])]))

    # -- the questions of the test ------------------------------------------

    def largest(self, r):
        """The ``r``-th largest draw (``1 <= r <= B``), exactly."""
        B = self.size
        while True:
            low, high = self._intervals()
            floor = np.partition(low, B - r)[B - r]  # <= the r-th largest
            ceiling = np.partition(high, B - r)[B - r]  # >= it
            open_ = ~self.solved
            above = open_ & (low > ceiling)
            middle = np.flatnonzero(open_ & ~above & ~(high < floor))
            if middle.shape[0] == 0:
                # every open draw is strictly above or strictly below the r-th
                # largest, which is therefore a solved draw
                rank = r - int(np.count_nonzero(above))
                known = np.sort(self.values[self.solved])
                if not 1 <= rank <= known.shape[0]:  # pragma: no cover - bounds broken
                    return float(self.sorted_values()[B - r])
                return float(known[known.shape[0] - rank])
            self._narrow(middle, high)

    def exceeds(self, statistic, r, shift):
        """``statistic > x + shift`` for ``x`` the ``r``-th largest draw.

        The same floating-point comparison as with ``x`` known: ``x +
        shift`` does not decrease with ``x``, so the draws ``b`` with
        ``statistic <= x_b + shift`` ("large") are the largest ones, and the
        comparison fails iff at least ``r`` draws are large.
        """
        while True:
            low, high = self._intervals()
            large_low = ~(statistic > low + shift)  # certainly large
            large_high = ~(statistic > high + shift)  # possibly large
            if np.count_nonzero(large_low) >= r:
                return False
            if np.count_nonzero(large_high) < r:
                return True
            self._narrow(np.flatnonzero(large_high & ~large_low), high)

    def sorted_values(self):
        """Every draw, solved exactly, sorted (solving the others first)."""
        for b in np.flatnonzero(~self.solved).tolist():
            self._solve(b)
        self.release()
        return np.sort(self.values)


# Off: the tester solves every draw at fit (the full path: the same values,
# the tests and benchmarks compare both).
_BRANCH_AND_BOUND = True


def _dce_null(name, measure, data, seeds):
    """The tolerant dCE test's null as a :class:`_DceNull`, or None.

    None where the tester's draws are not re-solved in a session (the
    conditions of ``skcal.metrics._ldtc._session_for``: HiGHS's own binding,
    at most ``_SESSION_MAX_VALUES`` distinct predictions and a grid at most
    4 times as many points), or for another measure: the draws of
    ``_draw_all`` then. Without branch and bound (``_BRANCH_AND_BOUND``
    off) every draw is solved here, with the same values.
    """
    resampler = getattr(data, "resampler", None)
    if (
        name != "dce"
        or resampler is None
        or type(measure)._spec is not LowerDistanceToCalibration._spec
    ):
        return None
    points = grid_points(measure.grid)
    K = len(resampler.G)
    if not sessions_available(K, points.shape[0]):
        return None
    null = _DceNull(resampler, seeds, points)
    if not _BRANCH_AND_BOUND:
        return null.sorted_values()
    return null


def _bound_checks(null, draws):
    """``(lower, exact, upper)`` of ``draws`` from the certificates at hand (tests)."""
    null._program()
    m1 = np.array([null.resampler.positives(null.seeds[b]) for b in draws])
    lows = np.array([base + m1 @ slope for base, slope, _ in null._certificates]).max(axis=0)
    highs = np.array(
        [null._upper_bound(m1, t) for _, _, t in null._certificates if t is not None]
    ).min(axis=0)
    exact = np.array([null._session.certified(null._w - m, m)[0] for m in m1])
    return lows, exact, highs


