"""Branch and bound over the draws of the tolerant dCE test and of dCE's interval.

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

**Bootstrap resamples** (dCE's ``interval``, which the tester reports)
move both masses of every prediction, so a prediction's weight and the
total ``D`` change from draw to draw; the predictions and the grid stay.
Both bounds still hold, because neither proof uses fixed weights:

* the dual constraint ``(1 - u_j) psi[0, j] + u_j psi[1, j] <= 0`` does
  not involve the masses (they enter the program only through its
  objective weights ``d_i / D`` in the dual), so feasible potentials stay
  feasible for any masses, and the bound is ``(m0 . g_0 + m1 . g_1) /
  D`` (weak duality: for any coupling, ``sum pi (|u - v| + psi[y, u]) >=
  sum_i d_i g_{y_i}(v_i)`` and ``sum pi psi[y, u] = sum_j T_j ((1 - u_j)
  psi[0, j] + u_j psi[1, j]) <= 0``, ``T_j`` the mass calibrated at
  ``u_j``);
* the repaired plan needs only the draw's two label totals ``A`` and
  ``C`` (``A + C = 1`` after dividing by the draw's own ``D``): each
  label's transport is between that label's masses, whatever they are
  per prediction, and the repaired sinks, whose totals are ``A`` and
  ``C`` by construction.

The resamples and the interval's null draws share one pool of certificates
(:class:`_Certificates`, started at the data's own masses, whose value is
the interval's centre); the interval reads order statistics of the
resamples (those ``np.quantile`` interpolates) and whether enough null
draws reach the centre (``skcal._interval._pruned_bootstrap``).

The exact solver is :class:`skcal.metrics._ldtc.FixedStartSession`, whose
values depend on a draw's masses alone (bit for bit), so a draw solved
here, later, or by the full path has the same value. A draw is solved only
if its interval ``[lower - m, upper + m]`` (``m`` a small safety margin for
rounding and the solver's tolerance) does not settle the question asked
(:meth:`_BoundedDraws.largest`, :meth:`_BoundedDraws.exceeds`).
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


class _Certificates:
    """The exact solver of one set of predictions and grid, and its certificates.

    Every draw on these predictions (a null draw, a bootstrap resample) is a
    program with the same columns and costs; only the masses move. So the
    potentials and the calibrated sinks of any solve bound every draw (the
    module's docstring). Kept in the order solved, as ``(g0, g1, t)``: the
    envelopes ``min_j (|v_i - u_j| + psi[y, j])`` of the potentials made
    feasible, at every prediction, and the sinks scaled to sum 1 (None when
    empty).

    Parameters
    ----------
    values : ndarray
        The distinct predictions, ascending.
    points : ndarray
        The dCE grid.
    reference : tuple of ndarray
        ``(mass0, mass1)``: the fixed start of every solve
        (:class:`skcal.metrics._ldtc.FixedStartSession`), solved first.
    """

    def __init__(self, values, points, reference):
        self.values = np.ascontiguousarray(values, dtype=np.float64)
        self.points = points
        self.session = FixedStartSession(self.values, points, reference)
        self.items = []
        self.reference = self.solve(*reference)  # its value

    def __len__(self):
        return len(self.items)

    def solve(self, mass0, mass1):
        """``dCE^U`` of the masses, exactly; its certificates are kept."""
        value, psi, t = self.session.certified(mass0, mass1)
        self.add(psi, t)
        return value

    def add(self, psi, t):
        u = self.points
        # feasible potentials: lower both of a point by its excess
        excess = np.maximum((1.0 - u) * psi[0] + u * psi[1], 0.0)
        psi = psi - excess
        t = np.maximum(t, 0.0)  # HiGHS's values are feasible to 1e-10
        mass = float(t.sum())
        self.items.append(
            (self._envelope(psi[0]), self._envelope(psi[1]), t / mass if mass > 0 else None)
        )

    def _envelope(self, psi):
        """``min_j (|v_i - u_j| + psi_j)`` at every prediction, in ``O(K + M)``.

        Over the grid points left of ``v`` the cost is ``v + (psi_j - u_j)``,
        right of it ``(psi_j + u_j) - v``: a running minimum each way.
        """
        u, v = self.points, self.values
        left = np.minimum.accumulate(psi - u)
        right = np.minimum.accumulate((psi + u)[::-1])[::-1]
        below = np.searchsorted(u, v, side="right") - 1  # last u_j <= v (u_0 = 0)
        above = np.searchsorted(u, v, side="left")  # first u_j >= v (u_M = 1)
        return np.minimum(v + left[below], right[above] - v)


class _BoundedDraws:
    """Draws on the predictions of one :class:`_Certificates`, solved where needed.

    Each draw has an exact value where solved and bounds ``[lower, upper]``
    from the certificates otherwise; :meth:`largest` and :meth:`exceeds`
    answer a question on the order statistics exactly, solving only the
    draws whose bounds do not settle it. Subclasses read the masses:
    ``_certificates()``, ``_solve(b)``, ``_refresh(draws)`` (bring the
    bounds of ``draws`` up to date through :meth:`_bound`), ``_masses(draws)``
    (what the bounds read), ``_masses_of(b)`` (the program's two masses),
    and the bounds of one certificate on given masses, ``_lower(masses,
    g0, g1)`` and ``_upper(masses, t)``.
    """

    def __init__(self, size):
        self.size = size
        self.values = np.full(size, np.nan)
        self.solved = np.zeros(size, dtype=bool)
        # every value is in [0, 1] (the solver's values are clipped there)
        self.lower = np.zeros(size)
        self.upper = np.ones(size)
        self._applied = np.zeros(size, dtype=np.intp)  # certificates applied

    @property
    def n_solved(self):
        """How many draws have been solved exactly."""
        return int(np.count_nonzero(self.solved))

    def _record(self, b, value):
        self.values[b] = value
        self.solved[b] = True
        self.lower[b] = self.upper[b] = value

    def _bound(self, draws, masses):
        """Apply the certificates not yet applied to ``draws`` (masses ``masses``)."""
        certificates = self._certificates().items
        applied = self._applied[draws]
        low, high = self.lower[draws], self.upper[draws]
        for c in range(int(applied.min()), len(certificates)):
            g0, g1, t = certificates[c]
            fresh = applied <= c
            if not np.any(fresh):  # pragma: no cover - applied.min() <= c
                continue
            low = np.where(fresh, np.maximum(low, self._lower(masses, g0, g1)), low)
            if t is not None:
                high = np.where(fresh, np.minimum(high, self._upper(masses, t)), high)
        self.lower[draws], self.upper[draws] = low, high
        self._applied[draws] = len(certificates)

    def _intervals(self):
        low = np.where(self.solved, self.values, self.lower - _margin(self.lower))
        high = np.where(self.solved, self.values, self.upper + _margin(self.upper))
        return low, high

    def _narrow(self, middle, high, low=None):
        """Tighten the draws in ``middle``: new certificates first, else solve one.

        The one solved is the most extreme towards the tail asked about: the
        highest upper end, or with ``low`` given (a lower tail), the lowest
        lower end.
        """
        n = len(self._certificates())  # its first call adds the reference's
        stale = middle[self._applied[middle] < n]
        if stale.shape[0]:
            self._refresh(stale)
        elif low is None:
            self._solve(int(middle[np.argmax(high[middle])]))
        else:
            self._solve(int(middle[np.argmin(low[middle])]))

    def solve_all(self):
        """Solve every draw not solved yet."""
        for b in np.flatnonzero(~self.solved).tolist():
            self._solve(b)

    # -- the questions asked ------------------------------------------------

    def largest(self, r):
        """The ``r``-th largest draw (``1 <= r <= size``), exactly."""
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
                    self.solve_all()
                    return float(np.sort(self.values)[B - r])
                return float(known[known.shape[0] - rank])
            self._narrow(middle, high, low if 2 * r > B else None)

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


class _DceNull(_BoundedDraws):
    """The ``B`` null draws of a tolerant dCE test, solved only where needed.

    A draw keeps the weight ``w`` of every prediction and moves only its
    positive part ``m1``: one certificate's lower bound is ``w . g0 / D +
    m1 . (g1 - g0) / D``, its upper bound the kernel's transport with fixed
    weights.

    Parameters
    ----------
    resampler : skcal.tester._null._Resampler
        Draws the positive masses of a seed, as the tester's full path does
        (anything with ``G`` and ``positives(seed)``).
    seeds : sequence
        One per draw.
    points : ndarray
        The dCE grid.
    certificates : _Certificates, default=None
        Certificates shared with other draws on the same predictions and
        grid; by default the null's own, started at the mean draw.
    """

    def __init__(self, resampler, seeds, points, certificates=None):
        self.resampler = resampler
        self.seeds = list(seeds)
        self.points = points
        super().__init__(len(self.seeds))
        self._shared = certificates
        self._reset()

    def _reset(self):
        G = self.resampler.G
        self._w = np.ascontiguousarray(G.weights, dtype=np.float64)
        self._v = np.ascontiguousarray(G.values, dtype=np.float64)
        self._total = float(self._w.sum())
        self._pool = self._shared
        self._applied = np.zeros(self.size, dtype=np.intp)
        self._cache = {}  # positive masses of the few draws under scrutiny
        self._matrix = None  # or of every draw, when they fit in _MATRIX_BYTES

    def __getstate__(self):
        # the HiGHS model does not pickle; a new session gives the same values
        state = self.__dict__.copy()
        for key in ("_pool", "_shared", "_applied", "_cache", "_matrix", "_w", "_v", "_total"):
            state.pop(key, None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._shared = None
        self._reset()

    def _certificates(self):
        if self._pool is None:
            # the start of every solve: the optimal basis of the mean draw
            # (masses w (1 - v) and w v), solved cold
            mean1 = self._w * self._v
            self._pool = _Certificates(self._v, self.points, (self._w - mean1, mean1))
        return self._pool

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

    def _masses(self, draws):
        return np.array([self._positives(b) for b in draws.tolist()])

    def _masses_of(self, b):
        m1 = self._positives(b)
        return self._w - m1, m1

    def _solve(self, b):
        self._record(b, self._certificates().solve(*self._masses_of(b)))
        self._cache.pop(b, None)

    def _lower(self, m1, g0, g1):
        total = self._total
        return float(np.dot(self._w, g0)) / total + m1 @ ((g1 - g0) / total)

    def _upper(self, m1, t):
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
        n = len(self._certificates())
        stale = np.flatnonzero(~self.solved & (self._applied < n))
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

    def sorted_values(self):
        """Every draw, solved exactly, sorted (solving the others first)."""
        self.solve_all()
        self.release()
        return np.sort(self.values)


class _Resamples(_BoundedDraws):
    """Draws whose weight and positive mass both move: bootstrap resamples.

    ``weights`` and ``positives`` (shape ``(R, K)``) are the draws'
    statistics; a draw is solved with masses ``(weights - positives,
    positives)``, as ``ldtc_core`` reads a grouped statistic. One
    certificate's lower bound is ``((W - m1) . g0 + m1 . g1) / D``, ``D`` the
    draw's total; its upper bound the kernel's transport with the draw's own
    weights (one call per draw). Both are the proofs of the module's
    docstring, which hold for any masses.
    """

    def __init__(self, certificates, weights, positives):
        super().__init__(weights.shape[0])
        self._pool = certificates
        self.weights = np.ascontiguousarray(weights, dtype=np.float64)
        self.positives = np.ascontiguousarray(positives, dtype=np.float64)
        self.total = self.weights.sum(axis=1)

    def _certificates(self):
        return self._pool

    def _masses(self, draws):
        return draws  # read in place

    def _masses_of(self, b):
        m1 = self.positives[b]
        return self.weights[b] - m1, m1

    def _solve(self, b):
        self._record(b, self._pool.solve(*self._masses_of(b)))

    def _refresh(self, draws):
        self._bound(draws, draws)

    def _lower(self, draws, g0, g1):
        W, m1 = self.weights[draws], self.positives[draws]
        return ((W - m1) @ g0 + m1 @ g1) / self.total[draws]

    def _upper(self, draws, t):
        out = np.empty(draws.shape[0])
        v, u = self._pool.values, self._pool.points
        for i, b in enumerate(draws.tolist()):
            transport_bounds(
                self.positives[b : b + 1], self.weights[b], v, u, t, float(self.total[b]),
                out[i : i + 1],
            )
        return out


class _Rows:
    """Positive masses given as rows, read as a resampler is (``G``, ``positives``)."""

    def __init__(self, G, positives):
        self.G = G
        self.rows = positives

    def positives(self, b):
        return self.rows[b]


class DceIntervalDraws:
    """The draws of dCE's bootstrap interval, for :func:`skcal._interval.measure_interval`.

    The resamples and the calibrated-null draws of one interval share the
    predictions (the interval's cells) and the grid, so they share one
    :class:`_Certificates`, started at the data's own masses. The interval
    reads order statistics of the resamples and one count of the null
    (:meth:`_BoundedDraws.largest`, :meth:`_BoundedDraws.exceeds`);
    :func:`dce_interval_draws` builds it.
    """

    def __init__(self, statistic, points):
        self.statistic = statistic
        self.points = points
        self._pool = None
        self.drawn = []  # the draw sets made, resamples first (benchmarks read them)

    def _certificates(self):
        if self._pool is None:
            G = self.statistic
            self._pool = _Certificates(
                G.values, self.points, (G.weights - G.positives, G.positives)
            )
        return self._pool

    def center(self):
        """The statistic's own value (the fixed start's: a function of the data alone)."""
        return self._certificates().reference

    def resamples(self, weights, positives):
        """The bootstrap resamples of statistics ``(weights, positives)`` (rows)."""
        draws = _Resamples(self._certificates(), weights, positives)
        self.drawn.append(draws)
        if not _BRANCH_AND_BOUND:
            draws.solve_all()
        return draws

    def null(self, weights, positives):
        """Null draws of fixed ``weights`` and rows of ``positives``."""
        from .._grouped import GroupedStatistic

        G = GroupedStatistic(self.statistic.values, weights, np.zeros_like(weights))
        rows = np.ascontiguousarray(positives, dtype=np.float64)
        draws = _DceNull(
            _Rows(G, rows), range(rows.shape[0]), self.points, self._certificates()
        )
        draws._matrix = rows
        self.drawn.append(draws)
        if not _BRANCH_AND_BOUND:
            draws.solve_all()
        return draws


# Off: the tester solves every draw at fit (the full path: the same values,
# the tests and benchmarks compare both).
_BRANCH_AND_BOUND = True


def _session_grid(measure, K):
    """The dCE grid of ``measure`` where its draws on ``K`` distinct
    predictions are re-solved in a session, else None (another measure, or
    the conditions of ``skcal.metrics._ldtc.sessions_available``)."""
    if type(measure)._spec is not LowerDistanceToCalibration._spec:
        return None
    points = grid_points(measure.grid)
    return points if sessions_available(K, points.shape[0]) else None


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
    if name != "dce" or resampler is None:
        return None
    points = _session_grid(measure, len(resampler.G))
    if points is None:
        return None
    null = _DceNull(resampler, seeds, points)
    if not _BRANCH_AND_BOUND:
        return null.sorted_values()
    return null


def dce_interval_draws(measure, statistic):
    """The branch and bound of dCE's bootstrap interval on ``statistic``, or None.

    What the tester passes to :func:`skcal._interval.measure_interval`
    (``dce_draws``), which calls it with the interval's cells: a
    :class:`DceIntervalDraws`, or None for another measure and where the
    draws are not re-solved in a session (as :func:`_dce_null`); the
    interval then solves every resample as the public ``interval`` does.
    """
    points = _session_grid(measure, len(statistic))
    return None if points is None else DceIntervalDraws(statistic, points)


def _bound_checks(draws, index):
    """``(lower, exact, upper)`` of the draws ``index``, every certificate at hand (tests)."""
    pool = draws._certificates()
    masses = draws._masses(index)
    lows = np.array([draws._lower(masses, g0, g1) for g0, g1, _ in pool.items]).max(axis=0)
    highs = np.array(
        [draws._upper(masses, t) for _, _, t in pool.items if t is not None]
    ).min(axis=0)
    exact = np.array([pool.session.certified(*draws._masses_of(b))[0] for b in index])
    return lows, exact, highs
