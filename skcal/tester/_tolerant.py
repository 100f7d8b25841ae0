"""The tolerant test's rules: Bernstein and coupling bounds, the theory
thresholds and the certified ``min_epsilon``."""

import math
import numbers

import numpy as np
from scipy.stats import beta

from ..metrics._smce import smce_core

# With tolerance > 0 the level alpha is split three ways (see the Notes of
# CalibrationTester): the Monte Carlo rank test, how far the nearest
# calibrated predictions can be on this sample, and how many resamples may
# break their per-draw coupling bound.
_MONTE_CARLO_SHARE = 0.8
_DISTANCE_SHARE = 0.1
_COUPLING_SHARE = 0.1
# Multipliers lambda of the Lagrangian bound on how much the smCE of the data
# can exceed that of the nearest calibrated predictions (_SmceMoveBound).
_LAGRANGE_GRID = np.linspace(0.0, 2.0, 81)


def _check_real(name, value, low, high, closed):
    """``value`` is a real number in the interval (low, high) closed as told."""
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"{name} must be a real number, got {value!r}.")
    above = value >= low if closed in ("left", "both") else value > low
    below = value <= high if closed in ("right", "both") else value < high
    if not (above and below and math.isfinite(value)):
        left = "[" if closed in ("left", "both") else "("
        right = "]" if closed in ("right", "both") else ")"
        raise ValueError(
            f"{name} must be in {left}{low:g}, {high:g}{right}, got {value!r}."
        )


def _bernstein(variance, max_share, delta):
    """``t`` with ``P(S >= E S + t) <= delta`` for ``S = sum_i c_i X_i``.

    For independent ``X_i`` in ``[0, 1]``, weights ``0 <= c_i <= max_share``
    and ``sum_i c_i^2 Var X_i <= variance``: Bernstein's inequality
    ``exp(-t^2 / (2 (variance + max_share t / 3)))`` solved for ``t``.
    """
    third = max_share * math.log(1 / delta) / 3
    return third + math.sqrt(third**2 + 2 * variance * math.log(1 / delta))


def _theory_rule(name, eps1, eps2, alpha, n_eff, max_share, h):
    """Threshold and smallest certified epsilon of the paper's Theorems 3 and 4.

    See the Notes of :class:`CalibrationTester` for the bounds used.
    """

    def t_cal(level):  # smCE of a calibrated sample, upper tail
        return math.sqrt(2 * math.log(2 / level) / n_eff)

    t_no = math.sqrt(2 * math.log(1 / alpha) / n_eff)
    if eps2 == 0:
        noise, distance = t_cal(alpha), 0.0
    else:
        noise = t_cal(alpha / 2)
        # E|u - v| <= eps2 and |u - v| <= 1, so Var|u - v| <= eps2.
        distance = _bernstein(eps2 / n_eff, max_share, alpha / 2)
    if name == "smce":
        t_yes = noise + 2 * distance
        return eps1 / 4 + eps2, 4 * eps2 + 4 * max(t_yes, t_no)
    t_yes = 2 * noise + distance
    return (eps1 + eps2 + h) / 2, eps2 + h + 2 * max(t_yes, t_no)


def _resample_threshold(null, level, shifted):
    """Threshold on the statistic: Monte Carlo quantile at a level, plus a shift.

    ``null`` is sorted (or bracketed: its ``largest``); rejecting iff the statistic exceeds the
    ``(B + 1 - k)``-th smallest draw, ``k = floor(level (B + 1))``, is the
    test with p-value ``(1 + #{T* >= T}) / (B + 1) <= level``.
    """
    mc_level, shift = shifted
    k = math.floor(mc_level * (null.size + 1) + 1e-9)
    if k < 1:
        return math.inf
    if hasattr(null, "largest"):  # bracketed draws (skcal.tester._smcebound)
        return null.largest(k) + shift
    return float(null[null.size - k]) + shift


def _interval_noise(scale, delta):
    """``sqrt(s) / 2 + sqrt(s ln(1/delta) / 2)`` with ``s = scale``.

    With ``s = m A``: the bound, failing with probability at most ``delta``,
    on ``R = int_0^1 |sum_i w_i (y*u_i - u_i) s_i(t)| dt`` (``s_i = +-1`` on the
    interval between ``p_i`` and ``u_i``) of the Notes of
    :class:`CalibrationTester`: ``E R <= sqrt(m A) / 2``, and McDiarmid's
    inequality with differences ``w_i |u_i - p_i|``.
    """
    return math.sqrt(scale) / 2 + math.sqrt(scale * math.log(1 / delta) / 2)


def _coupling_plan(level, n_resamples):
    """Rank and per-draw failure probability of the tolerant test at a level.

    Returns ``(k, j, delta)``: the rank test is at ``k = floor(0.8 level
    (B + 1))``; the threshold uses the ``(k - j)``-th largest draw,
    ``j = floor(k / 2)``; and ``delta`` is the largest per-draw probability
    with ``P(Binomial(B, delta) > j) <= 0.1 level``, so that more than ``j``
    of the ``B`` independent coupling bounds fail with probability at most
    ``0.1 level``. None if ``k < 1`` (the test cannot reject).
    """
    k = math.floor(_MONTE_CARLO_SHARE * level * (n_resamples + 1) + 1e-9)
    if k < 1:
        return None
    j = k // 2
    # P(Binomial(B, d) >= j + 1) is the regularised incomplete beta I_d(j + 1, B - j)
    delta = float(beta.ppf(_COUPLING_SHARE * level, j + 1, n_resamples - j))
    return k, j, delta


class _SmceMoveBound:
    """How much larger the smCE of the data can be than at calibrated predictions.

    For the observed ``(p, y)`` with optimal test ``x`` (the smCE witness,
    interpolated linearly, constant beyond the extreme predictions) and any
    predictions ``u`` in [0, 1] at weighted mean distance ``A`` from ``p``::

        smCE(p, y) - smCE(u, y) <= sum_i w_i (phi_{y_i}(p_i) - phi_{y_i}(u_i))
                                <= lambda A + sum_i w_i (phi_{y_i} - psi_lambda)(p_i)

    with ``phi_y(t) = (y - t) x(t)`` and ``psi_lambda(t) = inf_s phi_y(s) +
    lambda |s - t|``, for every ``lambda >= 0`` (``smCE(u, y)`` is at least
    the value of the fixed test ``x`` on ``(u, y)``). On each piece where
    ``x`` is linear, ``phi_y(s) -+ lambda s`` is a quadratic whose minimum is
    found exactly, so ``psi_lambda`` at the predictions is exact.
    """

    def __init__(self, G, statistic):
        _, x = smce_core(G, witness=True)
        v = G.values
        self.v = v
        self.mass = (G.positives / G.total, (G.weights - G.positives) / G.total)
        # pieces [left_i, right_i]: [0, v_1], [v_1, v_2], ..., [v_K, 1]
        self.left = np.concatenate(([0.0], v))
        self.right = np.concatenate((v, [1.0]))
        self.x_left = np.concatenate(([x[0]], x))
        self.x_right = np.concatenate((x, [x[-1]]))
        width = self.right - self.left
        self.slope = np.divide(
            self.x_right - self.x_left,
            width,
            out=np.zeros_like(width),
            where=width > 0,
        )
        self.intercept = self.x_left - self.slope * self.left
        self.phi = [(y - v) * x for y in (1.0, 0.0)]
        excess = statistic - sum(
            float(np.dot(m, f)) for m, f in zip(self.mass, self.phi)
        )
        # floating-point slack: the witness's value and the forward pass differ
        # in the last bits
        self.slack = max(excess, 0.0) + 1e-12
        self.gaps = np.array([self._gap(lam) for lam in _LAGRANGE_GRID])

    def _piece_min(self, y, tilt):
        """Minimum of ``(y - s) x(s) + tilt s`` over each piece."""
        left, right, s, c = self.left, self.right, self.slope, self.intercept
        low = np.minimum(
            (y - left) * self.x_left + tilt * left,
            (y - right) * self.x_right + tilt * right,
        )
        # (y - t)(c + s t) + tilt t is convex for s < 0, least at
        # t = (s y - c + tilt) / (2 s)
        convex = s < 0
        t = np.where(convex, (s * y - c + tilt) / np.where(convex, 2 * s, 1.0), 0.0)
        inside = convex & (t > left) & (t < right)
        vertex = (y - t) * (c + s * t) + tilt * t
        return np.where(inside, np.minimum(low, vertex), low)

    def _gap(self, lam):
        """``sum_i w_i (phi - psi_lambda)(p_i)``."""
        total = 0.0
        for y, mass, phi in zip((1.0, 0.0), self.mass, self.phi):
            # pieces left of v_k (i <= k): min (phi(s) - lam s) + lam v_k;
            # pieces right of it (i >= k + 1): min (phi(s) + lam s) - lam v_k
            from_left = self.v * lam + np.minimum.accumulate(
                self._piece_min(y, -lam)
            )[:-1]
            from_right = (
                -self.v * lam
                + np.minimum.accumulate(self._piece_min(y, lam)[::-1])[::-1][1:]
            )
            psi = np.minimum(from_left, from_right)
            total += float(np.dot(mass, np.maximum(phi - psi, 0.0)))
        return total

    def __call__(self, distance):
        return float(np.min(_LAGRANGE_GRID * distance + self.gaps)) + self.slack


class _TolerantRule:
    """``level -> threshold`` of the resample test of ``dCE <= tolerance``.

    See the Notes of :class:`CalibrationTester` for the proof; ``null`` holds
    the sorted statistics on outcomes drawn from the observed predictions.
    """

    def __init__(self, name, lipschitz, tolerance, data, null):
        self.null = null
        self.tolerance = tolerance
        self.n_eff, self.max_share = data.n_eff, data.max_share
        self.lipschitz = lipschitz
        self.move = None
        if name == "smce":
            G = data.G
            occupied = G.values[G.weights > 0]
            self.spread = float(occupied[-1] - occupied[0])
            self.move = _SmceMoveBound(G, data.statistic)

    def distance(self, level):
        """Bound on the mean distance to the calibrated predictions."""
        return self.tolerance + _bernstein(
            self.tolerance / self.n_eff, self.max_share, _DISTANCE_SHARE * level
        )

    def shift(self, level, delta):
        """Data side plus per-draw coupling bound, at distance bound ``A``."""
        A, share = self.distance(level), self.max_share
        if self.move is not None:
            # smCE(u, y*_u) - smCE(p, y*_p) <= int |M(t)| dt + (1 + spread) max|S|
            noise = _interval_noise(share * A, delta / 2)
            walk = (1 + self.spread) * _bernstein(share * A, share, delta / 4)
            return self.move(A) + noise + walk
        l_v, l_y = self.lipschitz
        flips = A + _bernstein(share * A, share, delta)
        return 2 * l_v * A + l_y * flips

    def __call__(self, level):
        plan = _coupling_plan(level, self.null.size)
        if plan is None:
            return math.inf
        k, j, delta = plan
        if isinstance(self.null, np.ndarray):
            return float(self.null[self.null.size - (k - j)]) + self.shift(level, delta)
        # the dCE null solved by branch and bound (_dcebound): the same draw
        return self.null.largest(k - j) + self.shift(level, delta)

    def rejects(self, statistic, level):
        """``statistic > self(level)``, solving only the draws that decide it."""
        plan = _coupling_plan(level, self.null.size)
        if plan is None:
            return statistic > math.inf
        if isinstance(self.null, np.ndarray):
            return statistic > self(level)
        k, j, delta = plan
        return self.null.exceeds(statistic, k - j, self.shift(level, delta))


def _design_gap(values, weights):
    """``kappa = max_m sum_i w_i |v_i - m| - |m - vbar|`` (normalised weights).

    For every outcome law on these predictions, ``dCE <= sum_i w_i |v_i -
    mbar|`` (all moved to the calibrated mean outcome ``mbar``) and ``smCE >=
    |mbar - vbar|`` (the test function 1 or -1), so ``smCE >= dCE - kappa``.
    The function of ``m`` is piecewise linear, 0 outside the range of the
    predictions, with kinks at the ``v_i`` and at ``vbar``: its largest value
    is at one of them. 0 for a single prediction value.
    """
    keep = weights > 0
    v = np.asarray(values, dtype=np.float64)[keep]
    w = np.asarray(weights, dtype=np.float64)[keep]
    w = w / w.sum()
    mean = float(np.dot(w, v))
    below_w = np.cumsum(w)
    below_s = np.cumsum(w * v)
    # sum_i w_i |v_i - v_k| for each k (v sorted)
    at_values = v * below_w - below_s + (below_s[-1] - below_s) - v * (1 - below_w)
    gaps = at_values - np.abs(v - mean)
    at_mean = float(np.dot(w, np.abs(v - mean)))
    return max(float(np.max(gaps)), at_mean, 0.0)


def _measure_min_epsilon(threshold, alpha, n_eff):
    """``threshold + sqrt(ln(1/alpha) / (2 N))``: ``min_epsilon_measure_``.

    For smCE, dCE and the cutoff error, the statistic is a convex function
    of the outcomes that moves by at most ``w_i`` when ``y_i`` changes, so it
    falls more than ``t`` below the measure of the outcome law on the
    predictions with probability at most ``alpha`` (Jensen, McDiarmid; the
    Notes of :class:`CalibrationTester`).
    """
    return threshold + math.sqrt(math.log(1 / alpha) / (2 * n_eff))


def _tolerant_min_epsilon(name, threshold, alpha, data):
    """Smallest dCE the tolerant test detects with probability ``1 - alpha``.

    Given the predictions, with ``t = sqrt(ln(1/alpha) / (2 N))`` (McDiarmid;
    see the Notes of :class:`CalibrationTester`): ``threshold + t`` for dCE,
    ``min(2 (threshold + t), threshold + t + kappa)`` for smCE with ``kappa``
    of :func:`_design_gap`. None for other measures.
    """
    t = math.sqrt(math.log(1 / alpha) / (2 * data.n_eff))
    if name == "dce":
        return threshold + t
    if name == "smce":
        G = data.G
        kappa = _design_gap(G.values, G.weights)
        return min(2 * (threshold + t), threshold + t + kappa)
    return None


def _smallest_rejecting_level(statistic, threshold_at, tol=1e-6):
    """Smallest level in (0, 1] whose threshold the statistic exceeds (or 1).

    Thresholds fall as the level rises, so bisection finds it. A rule with
    a ``rejects(statistic, level)`` method (:class:`_TolerantRule`) is
    asked that instead of its threshold: the same comparison.
    """
    rejects = getattr(threshold_at, "rejects", None)
    if rejects is None:

        def rejects(statistic, level):
            return statistic > threshold_at(level)

    if not rejects(statistic, 1.0):
        return 1.0
    low, high = 0.0, 1.0
    while high - low > tol:
        mid = (low + high) / 2
        if rejects(statistic, mid):
            high = mid
        else:
            low = mid
    return high
