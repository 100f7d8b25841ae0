"""Confidence intervals for the calibration measures.

Every binary measure is a functional of the grouped statistic
``G = (v_k, W_k, P_k)`` (see :mod:`skcal._grouped`). An interval resamples
``G`` itself, never the rows:

* **Bayesian bootstrap on the grouped statistic** (Rubin, 1981). Each row
  gets an independent ``Exp(1)`` multiplier of its weight. The rows of one
  *cell* (a distinct prediction and one outcome) then carry the mass
  ``sum_i w_i E_i``: for rows of one weight ``c`` this is exactly
  ``c Gamma(count)``, so a draw costs one Gamma variate per cell and no
  per-row copy. For rows of different weights the cell mass is drawn as the
  Gamma variate of the same mean ``sum w`` and variance ``sum w**2`` (a
  moment match, exact when the weights in a cell are equal).
* **Basic (bias-corrected) intervals.** A calibration measure is a
  supremum or a sum of absolute values: its plug-in is biased upwards, and
  a percentile interval around it covers nothing near zero. With ``T`` the
  plug-in and ``T*`` its resamples, the interval is
  ``[T - q(1 - a/2), T - q(a/2)]`` for the quantiles ``q`` of ``T* - T``:
  the resampling bias ``E T* - T`` is subtracted (Efron and Tibshirani,
  *An Introduction to the Bootstrap*, Sections 10.2 and 13.4), clipped to the
  measure's range. ``debiased = 2 T - mean(T*)`` is the bias-corrected point
  estimate.
* **Analytic upper bound** (``method="analytic"``, smCE, dCE and cutoff):
  the sample measure ``T`` is a convex function of the outcomes that moves
  by at most ``w_i / W`` when outcome ``i`` changes, so by Jensen and
  McDiarmid ``P(T <= theta - t) <= a`` with ``t = sqrt(ln(1/a) / (2 N))``
  (``N`` Kish's effective size), ``theta`` the measure of the outcome law on
  these predictions: ``[0, T + t]`` holds for every ``n``, conditionally on
  the predictions (the proof is that of ``min_epsilon_measure_`` in
  :class:`skcal.CalibrationTester`).
* **Cutoff error: a uniform band** (its ``"bootstrap"``): ``[T - q, T + q]``
  with ``q`` the bootstrap quantile of the largest increment of the
  resampled residual process's deviation, which bounds ``|T - theta|`` by
  the triangle inequality (see :mod:`skcal._interval_bounds`).
* **SCDL: finite-sample, both ends** (its ``"analytic"``, the default):
  Jensen and McDiarmid on every level ``SCDL_m`` with a union bound, and a
  bound on the plug-in's upward bias (see :mod:`skcal._interval_bounds`).
* **Calibration decision loss.** Its plug-in does not estimate the
  population CDL when predictions are continuous (Bairaktari, Hu, Nguyen
  and Ullman show CDL is not testable; a calibrated model reads about 0.29).
  By their Lemma 3.4, ``SCDL(D) <= CDL(D)`` for every distribution, so
  SCDL's finite-sample lower end (one-sided, level ``a``) is a lower bound
  for CDL; the upper end is CDL's largest value, 1. The plug-in is
  bootstrapped only when every distinct prediction carries at least
  ``_DISCRETE_COUNT`` effective rows.

The lower end near 0: the resamples of a sample see less bias than the
plug-in has (``|x + e| - |x|`` is less biased than ``|e|``), so the basic
lower end is replaced by 0 whenever the calibrated null (outcomes redrawn as
``Bernoulli(v)``, the tester's null, on the same statistic) reaches the
sample's value with probability above ``a / 2`` (a rank test with
``n_resamples`` draws): the interval starts at 0 exactly when a calibrated
model cannot be ruled out at level ``a / 2``.

Cells and speed: a statistic with more distinct predictions than
``_Layout.max_groups`` is merged into equal cells of the predictions (2**10
for smCE, one flow per resample; 2**12 for cutoff; 400 for dCE, one linear
program per resample, except in the tester, which solves only those its two
ends need (``dce_draws`` of :func:`measure_interval`); always 16 per bin for
the uniform binned ECE, whose bin edges are cell edges). Numpy input with
more than 2**14 rows is summed into the cells in one pass with no sort (the
uniform ECE's by the measure's own one-pass kernel, for plain input of any
size); a sketch's statistic is merged into the same cells. A cell keeps the
weight, the positive weight and the residual sum ``P - v W`` of its rows
(its value is their mean prediction), and only the resampled *deviations*
``T* - T`` are read from the cells; the point estimate is always the measure
of the full data. The uniform ECE and the cutoff band draw all resamples in
one ``(R, K)`` array and evaluate them at once; a Gamma (or null binomial)
variate of variance at least 1000 is drawn by its normal approximation
there.
"""

import math
import numbers

import numpy as np

from ._grouped import GroupedStatistic, canonical_statistic, group
from ._held import HeldStatistic
from ._input import (
    binary_input,
    check_binary_calibration_input,
    power_of_two_scale,
)
from ._interval_bounds import (
    _SCDL_GUARANTEE,
    _cutoff_band,
    _ece_cells,
    _kumar_debiased_l2,
    _plain_ece_cells,
    _scdl_bound,
)

__all__ = ["measure_interval"]

_METHODS = ("auto", "bootstrap", "analytic", "scdl-bound")
# Above this many distinct predictions the bootstrap reads blocks (see above).
_MAX_GROUPS = 1 << 14
# CDL's plug-in is bootstrapped only on predictions with this many
# effective rows at every distinct value (else the SCDL bound is used).
_DISCRETE_COUNT = 20


# Where the coverage benchmark found the bootstrap short (doc/intervals.md).
_CAVEATS = {
    "scdl": (
        "under-covers when the true SCDL is small but not zero (0.28 to 0.60 at "
        "n = 10**4 in the benchmark): the plug-in's upward bias is not corrected; "
        "method='analytic' (the default) holds for every n"
    ),
}


class _Cells:
    """The grouped statistic split by outcome, with what the bootstrap needs.

    ``neg``/``pos``: mass of negative/positive rows per distinct value;
    ``neg2``/``pos2``: their sums of squared weights (``c * mass`` for rows
    of one weight ``c``).
    """

    # True when distinct predictions were merged into cells (large data)
    merged = False

    def __init__(self, statistic, neg2, pos2):
        self.G = statistic
        self.pos = np.asarray(statistic.positives, dtype=np.float64)
        self.neg = np.maximum(np.asarray(statistic.weights, np.float64) - self.pos, 0.0)
        self.neg2 = neg2
        self.pos2 = pos2

    @property
    def n_effective(self):
        return float(self.G.total) ** 2 / float(self.neg2.sum() + self.pos2.sum())

    def min_count(self):
        """Smallest effective number of rows at one distinct prediction."""
        mass = self.neg + self.pos
        sq = self.neg2 + self.pos2
        keep = mass > 0
        return float(np.min(mass[keep] ** 2 / sq[keep]))

    def blocks(self, layout):
        """Consecutive groups merged into the cells of ``layout``, or self."""
        K = len(self.G)
        if K <= layout.max_groups:
            return self
        key = layout.key(self.G.values)
        start = np.flatnonzero(np.concatenate([[True], key[1:] != key[:-1]]))

        def add(x):
            return np.add.reduceat(x, start)

        v, W = self.G.values, self.G.weights
        end = np.append(start[1:], K) - 1
        return _Cells.from_sums(
            add(v * W), add(self.neg), add(self.pos), add(self.neg2), add(self.pos2),
            fallback=v[start], bounds=(v[start], v[end]),
        )

    @classmethod
    def from_sums(cls, vw, neg, pos, neg2, pos2, fallback=None, bounds=None):
        """Cells of given masses; a cell's value is its mean prediction.

        That keeps each cell's residual sum ``P - v W`` exact. ``bounds``:
        per cell, the least and largest value its rows can have (increasing
        and disjoint from cell to cell); the rounded mean is kept within
        them, so that a cell stays in the bin of its rows.
        """
        W = neg + pos
        keep = W > 0
        if fallback is None:
            vw, neg, pos, neg2, pos2, W = (x[keep] for x in (vw, neg, pos, neg2, pos2, W))
            v = vw / W
            if bounds is not None:
                bounds = (bounds[0][keep], bounds[1][keep])
        else:
            with np.errstate(invalid="ignore", divide="ignore"):
                v = np.where(keep, vw / W, fallback)
        if bounds is not None:
            v = np.clip(v, *bounds)
        # means of disjoint increasing cells increase; rounding must not tie
        v = np.maximum.accumulate(np.clip(v, 0.0, 1.0))
        if v.shape[0] > 1 and np.any(v[1:] <= v[:-1]):
            v = _strictly_increasing(v)
        out = cls.__new__(cls)
        out.merged = True
        out.pos, out.neg, out.pos2, out.neg2 = pos, neg, pos2, neg2
        out.G = GroupedStatistic(v, W, pos)
        return out

    def null_draw(self, rng):
        """One draw of the calibrated null: positives ``~ Binomial(count, v)``.

        Exact for rows of one weight (``count`` rows of weight ``scale``);
        for other weights, the count and scale of the same mean and
        variance.
        """
        W = self.pos + self.neg
        sq = self.pos2 + self.neg2
        keep = W > 0
        pos = np.zeros_like(W)
        count = np.maximum(np.rint(W[keep] ** 2 / sq[keep]), 1).astype(np.int64)
        scale = W[keep] / count
        pos[keep] = rng.binomial(count, self.G.values[keep]) * scale
        return GroupedStatistic(self.G.values, W, pos)

    def draw(self, rng):
        """One Bayesian-bootstrap resample of the statistic."""
        pos = _gamma_mass(rng, self.pos, self.pos2)
        neg = _gamma_mass(rng, self.neg, self.neg2)
        return GroupedStatistic(self.G.values, pos + neg, pos)


def _strictly_increasing(v):
    """Nudge ties of a non-decreasing array up by one ulp (cells never share a value)."""
    v = v.copy()
    for i in np.flatnonzero(v[1:] <= v[:-1]) + 1:
        v[i] = np.nextafter(max(v[i], v[i - 1]), 2.0)
    return np.minimum(v, 1.0)


class _Layout:
    """The cells a large statistic is merged into for resampling.

    ``n_cells`` equal cells of ``[0, 1]``, split at the measure's bin edges
    (uniform binned ECE) so that no cell straddles a bin; statistics with at
    most ``max_groups`` distinct predictions are resampled as they are.
    """

    def __init__(self, measure):
        self.edges = None
        self.n_cells = _MAX_GROUPS
        self.max_groups = _MAX_GROUPS
        name = measure._tester_name
        if name == "binned_ece" and measure.strategy == "uniform":
            # the bin sums are all the measure reads: 64 cells per bin keep
            # the spread of the predictions within a bin
            self.edges = np.arange(1, measure.n_bins) / measure.n_bins
            # the bin sums are all the measure reads: resampled always on
            # these cells (in one array, see _vector_core)
            self.n_cells = 16 * measure.n_bins
            self.max_groups = 0
        elif name == "smce":
            # one flow per resample: 2**10 cells move the 1-Lipschitz witness's
            # value by at most a cell width (2**-10) times the mass it shifts
            self.n_cells = self.max_groups = 1 << 10
        elif name == "cutoff":
            # resampled in one array (see _vector_draws): 2**12 cells
            self.n_cells = self.max_groups = 1 << 12
        elif name == "dce":
            # one linear program per resample (about 20 ms): cells a quarter
            # of the grid's gap wide move dCE by at most that (1-Lipschitz)
            from .metrics._ldtc import grid_points

            gap = float(np.max(np.diff(grid_points(measure.grid))))
            self.n_cells = self.max_groups = int(math.ceil(4 / gap))
        self.size = self.n_cells + (0 if self.edges is None else self.edges.shape[0])

    def key(self, p):
        """Cell of each prediction, non-decreasing in ``p``.

        Adding the bin index splits a cell that straddles a bin edge and
        shifts every later cell by one: keys stay distinct and ordered.
        """
        cell = np.minimum((p * self.n_cells).astype(np.int64), self.n_cells - 1)
        if self.edges is not None:
            cell += np.searchsorted(self.edges, p, side="right")
        return cell


def _gamma_mass(rng, mass, sq):
    """``sum_i w_i E_i`` per cell: Gamma of mean ``mass`` and variance ``sq``."""
    out = np.zeros_like(mass)
    keep = mass > 0
    shape = mass[keep] ** 2 / sq[keep]
    out[keep] = rng.standard_gamma(shape) * (sq[keep] / mass[keep])
    return out


def _boundary(y_true, y_prob, sample_weight, params):
    """In-memory rows -> the boundary's ``BinaryInput``, once, for everything below.

    Returns ``(y_true, y_prob, sample_weight, target)``: the canonical form
    with ``y_prob = sample_weight = None`` and the target ("binary" or
    "top-label") for rows; the arguments as given and None for a sketch,
    Dask input or a canonical form (those are read as they are).
    """
    dask = any(type(a).__module__.startswith("dask") for a in (y_true, y_prob, sample_weight))
    if dask or callable(getattr(y_true, "grouped_statistic", None)) or callable(
        getattr(y_true, "canonical_rows", None)
    ):
        return y_true, y_prob, sample_weight, None
    target = "top-label" if np.ndim(y_prob) == 2 and np.shape(y_prob)[1] > 2 else "binary"
    data = binary_input(
        y_true, y_prob, sample_weight, pos_label=params.get("pos_label"),
        multiclass=params.get("multiclass", "top-label"), labels=params.get("labels"),
    )
    return data, None, None, target


def _canonical_plain_rows(data):
    """``(y, p, w)`` of a canonical form as the one-pass kernels read them (w None: unit)."""
    y, p, w = data.canonical_rows()
    if w.strides == (0,) and (w.shape[0] == 0 or w[0] == 1.0):
        w = None
    else:
        w = np.ascontiguousarray(w, dtype=np.float64)
    return y, p, w


def _binary_cells(measure, y_true, y_prob, sample_weight, params):
    """Validate once; return ``(cells, estimate, target)``.

    ``estimate`` is the measure of the data, or None when ``cells`` is the
    exact grouped statistic (the caller computes it there). Numpy input with
    more rows than the layout resamples as they are is summed into the
    layout's cells in one pass (no sort) and the measure is computed by its
    own function; a sketch or Dask input is grouped, then merged into cells.
    """
    if any(type(a).__module__.startswith("dask") for a in (y_true, y_prob, sample_weight)):
        from .sketch._dask import dask_sketch

        y_true = dask_sketch(
            y_true,
            y_prob,
            sample_weight,
            pos_label=params.get("pos_label"),
            multiclass=params.get("multiclass", "top-label"),
            labels=params.get("labels"),
        )
        y_prob = sample_weight = None
    if callable(getattr(y_true, "grouped_statistic", None)):
        if y_prob is not None or sample_weight is not None:
            raise ValueError(
                f"y_true is a {type(y_true).__name__}, which already holds the "
                "predictions and weights: pass y_prob=None and sample_weight=None."
            )
        counts = getattr(y_true, "_null_counts", None)
        # on the measures' weight scale (exact), so that squares do not underflow
        G, e = canonical_statistic(y_true.grouped_statistic(), return_scale=True)
        if callable(counts):
            try:
                _, c = counts()
                c = float(np.ldexp(c, e))
            except ValueError as exc:
                raise ValueError(
                    "An interval resamples the rows a sketch summarises: "
                    + str(exc)
                    .replace("tester's null", "interval's resampling")
                    .replace("to test it", "to take its interval")
                    .replace(
                        "Test sketches of unweighted (or equally weighted) rows.",
                        "Pass the arrays themselves, or a sketch of unweighted (or "
                        "equally weighted) rows.",
                    )
                ) from None
        else:
            # any other summary: its weights are counts of unit-weight rows,
            # as the tester reads them
            W = np.ldexp(np.asarray(G.weights, np.float64), -e)
            if not np.all(W == np.round(W)):
                raise ValueError(
                    f"The {type(y_true).__name__} has non-integer weights; an "
                    "interval reads a summary's weights as counts of unit-weight "
                    "rows. Pass a CalibrationSketch or the arrays."
                )
            c = float(np.ldexp(1.0, e))
        pos = np.asarray(G.positives, np.float64)
        neg = np.maximum(np.asarray(G.weights, np.float64) - pos, 0.0)
        # a sketch does not record whether its rows were top-label reductions
        target = "binary or top-label (as the sketch was built)"
        return _Cells(G, c * neg, c * pos), None, target
    canonical = callable(getattr(y_true, "canonical_rows", None))
    if y_prob is None and not canonical:
        raise ValueError("y_prob is required (the predicted probabilities).")
    layout = _Layout(measure)
    if layout.edges is not None:
        # uniform binned ECE: the measure validates (or reads the canonical
        # form); plain rows are then summed into the cells by its own
        # one-pass kernel
        estimate = float(measure(y_true, y_prob, sample_weight=sample_weight))
        if canonical:
            cells = _ece_cells(*_canonical_plain_rows(y_true), layout)
        else:
            cells = _plain_ece_cells(y_true, y_prob, sample_weight, params, layout)
        if cells is not None:
            return cells, estimate, "binary"
    if canonical:
        y, p, w = y_true.canonical_rows()
    else:
        y, p, w = check_binary_calibration_input(
            y_true,
            y_prob,
            sample_weight,
            pos_label=params.get("pos_label"),
            multiclass=params.get("multiclass", "top-label"),
            labels=params.get("labels"),
            compact=True,
        )
    target = "top-label" if np.ndim(y_prob) == 2 and np.shape(y_prob)[1] > 2 else "binary"
    w = _on_scale(w)
    unit = w.strides == (0,) or bool(np.all(w == w[0]))
    # rows past _MAX_GROUPS are summed into cells unsorted; fewer are grouped
    # exactly (as a sketch's are) and merged by _Cells.blocks (dCE: its own)
    rows_max = layout.max_groups if measure._tester_name == "dce" else _MAX_GROUPS
    if p.shape[0] > max(layout.max_groups, rows_max) and measure._tester_name != "cdl":
        estimate = float(measure(y_true, y_prob, sample_weight=sample_weight))
        return _row_cells(y, p, w, unit, layout), estimate, target
    G = group(y, p, w)
    pos = np.asarray(G.positives, np.float64)
    neg = np.maximum(np.asarray(G.weights, np.float64) - pos, 0.0)
    if unit:
        c = float(w[0])
        return _Cells(G, c * neg, c * pos), None, target
    index = np.searchsorted(G.values, p)
    w = np.asarray(w, np.float64)
    wy = w * np.asarray(y, np.float64)
    pos2 = np.bincount(index, w * wy, len(G))
    neg2 = np.maximum(np.bincount(index, w * w, len(G)) - pos2, 0.0)
    return _Cells(G, neg2, pos2), None, target


def _on_scale(w):
    """Weights times ``2**e`` with the largest in ``[1, 2)`` (exact; every measure
    is unchanged): their squares neither underflow nor overflow."""
    e = power_of_two_scale(np.max(w)) if w.shape[0] and np.max(w) > 0 else 0
    return w if e == 0 else np.ldexp(w, e)


def _row_cells(y, p, w, unit, layout):
    """The layout's cells of validated rows: bincounts, one pass each."""
    key = layout.key(p)
    size = layout.size
    yb = np.asarray(y).astype(bool, copy=False)
    if unit:
        c = float(w[0])
        W = np.bincount(key, minlength=size) * c
        pos = np.bincount(key[yb], minlength=size) * c
        vw = np.bincount(key, p, size) * c
        neg = W - pos
        return _Cells.from_sums(vw, neg, pos, c * neg, c * pos)
    w = np.asarray(w, np.float64)
    W = np.bincount(key, w, size)
    pos = np.bincount(key[yb], w[yb], size)
    vw = np.bincount(key, w * p, size)
    w2 = w * w
    pos2 = np.bincount(key[yb], w2[yb], size)
    neg2 = np.maximum(np.bincount(key, w2, size) - pos2, 0.0)
    return _Cells.from_sums(vw, np.maximum(W - pos, 0.0), pos, neg2, pos2)


def _check_options(confidence, method, n_resamples, allowed):
    if not isinstance(confidence, numbers.Real) or isinstance(confidence, bool) or not (
        0 < confidence < 1
    ):
        raise ValueError(
            f"confidence must be a number strictly between 0 and 1 (e.g. 0.95); "
            f"got {confidence!r}."
        )
    if method not in allowed:
        raise ValueError(
            f"method must be one of {', '.join(map(repr, allowed))} for this "
            f"measure; got {method!r}."
        )
    if (
        not isinstance(n_resamples, numbers.Integral)
        or isinstance(n_resamples, bool)
        or n_resamples < 20
    ):
        raise ValueError(
            f"n_resamples must be an integer >= 20 (200 is the default); got "
            f"{n_resamples!r}."
        )


def _basic(estimate, center, draws, confidence, max_value):
    """The hull of the basic and percentile intervals from ``draws - center``.

    The basic interval ``[T - q_hi, T - q_lo]`` subtracts the bias the
    resamples show; on a non-smooth functional that bias estimate is not
    consistent (it overstates the bias where the supremum is attained by
    one well separated witness and understates it where many nearly tie),
    so the interval also contains the percentile interval
    ``[T + q_lo, T + q_hi]``, which does not correct it.
    """
    a = 1.0 - confidence
    delta = np.asarray(draws) - center
    q_lo, q_hi = np.quantile(delta, [a / 2, 1 - a / 2])
    low, high = _ends(estimate, q_lo, q_hi, max_value)
    debiased = float(min(max(estimate - delta.mean(), 0.0), max_value))
    return low, high, debiased


def _ends(estimate, q_lo, q_hi, max_value):
    """``(low, high)`` of :func:`_basic` from the quantiles of ``draws - center``."""
    low = min(max(estimate - max(q_hi, -q_lo), 0.0), max_value)
    high = min(max(estimate + max(q_hi, -q_lo), 0.0), max_value)
    return float(low), float(high)


def _quantile_ranks(R, levels):
    """The ranks (ascending, from 0) whose values ``np.quantile`` reads at ``levels``.

    Linear interpolation reads the order statistics at ``floor(h)`` and
    ``floor(h) + 1``, ``h = level (R - 1)``; ``h`` is read off the ranks
    themselves (``np.quantile`` of ``0, ..., R - 1``), and where it is within
    rounding of an integer the neighbours on both sides are included.
    """
    ranks = set()
    for h in np.quantile(np.arange(R, dtype=np.float64), levels).tolist():
        k = math.floor(h)
        near = abs(h - round(h)) < 1e-9
        ranks.update(range(k - 1, k + 3) if near else (k, k + 1))
    return sorted(k for k in ranks if 0 <= k < R)


def _pruned_bootstrap(draws, work, estimate, center, confidence, n_resamples, rng, max_value):
    """``(low, high)`` of :func:`_bootstrap` (no ``debiased``) by branch and bound.

    ``draws`` (from the caller's ``dce_draws``) solves a resample only where
    its bounds do not settle what is read: the order statistics of the
    resamples that ``np.quantile`` interpolates, and whether at least a
    given number of null draws reach ``center``. The resamples and null
    draws are drawn from ``rng`` in the same order as :func:`_bootstrap`
    draws them, so they are the same draws.
    """
    a = 1.0 - confidence
    stats = [work.draw(rng) for _ in range(n_resamples)]
    resamples = draws.resamples(
        np.array([s.weights for s in stats]), np.array([s.positives for s in stats])
    )
    levels = [a / 2, 1 - a / 2]
    ranks = _quantile_ranks(n_resamples, levels)
    exact = np.array([resamples.largest(n_resamples - k) for k in ranks])
    # a non-decreasing stand-in for the sorted resamples with the exact
    # values at the ranks np.quantile reads: the same quantiles, bit for bit
    filler = exact[np.maximum(np.searchsorted(ranks, np.arange(n_resamples), "right") - 1, 0)]
    q_lo, q_hi = np.quantile(filler - center, levels)
    low, high = _ends(estimate, q_lo, q_hi, max_value)
    if low > 0:
        # the rank test of _bootstrap: low = 0 iff at least `need` null draws
        # reach center, `need` the least count passing its comparison
        need = next(
            (c for c in range(n_resamples + 1)
             if (1 + c) / (n_resamples + 1) > (1 - confidence) / 2),
            None,
        )
        if need == 0:
            low = 0.0
        elif need is not None:
            stats = [work.null_draw(rng) for _ in range(n_resamples)]
            null = draws.null(stats[0].weights, np.array([s.positives for s in stats]))
            if not null.exceeds(center, need, 0.0):
                low = 0.0
    return low, high


def _bootstrap(measure, cells, estimate, confidence, n_resamples, rng, dce_draws=None):
    """``(low, high, debiased, merged)`` of the basic bootstrap on ``cells``.

    The lower end is 0 when the calibrated null (outcomes redrawn as
    ``Bernoulli(v)`` at every value, the tester's null) reaches the data's
    value with probability above ``a / 2``: near 0 the bootstrap sees less
    bias than the plug-in has (``|x + e| - |x|`` is less biased than
    ``|e|``), and only the null knows the plug-in's law at 0. The uniform
    binned ECE and cutoff draw all resamples in one array (_vector_draws);
    the cutoff interval is the uniform band of :func:`_cutoff_band`.
    ``dce_draws`` (dCE only, see :func:`measure_interval`): ``debiased`` is
    None and the resamples are solved only where needed.
    """
    work = cells.blocks(_Layout(measure))
    name = measure._tester_name
    if name == "cutoff":
        return (*_cutoff_band(work, estimate, confidence, n_resamples, rng), work.merged)
    draws = dce_draws(measure, work.G) if dce_draws is not None and name == "dce" else None
    if draws is not None:
        # the value the resamples deviate from, by the draws' own solver
        center = draws.center()
        low, high = _pruned_bootstrap(
            draws, work, estimate, center, confidence, n_resamples, rng, measure._max_value
        )
        return low, high, None, work.merged
    vector = _vector_core(measure, work)
    if vector is not None:
        pos, W = _vector_draws(work, rng, n_resamples)
        center = float(vector(work.pos[None, :], (work.pos + work.neg)[None, :])[0])
        draws = vector(pos, W)
    else:
        core = measure._grouped_core
        center = core(work.G)
        draws = np.array([core(work.draw(rng)) for _ in range(n_resamples)])
    low, high, debiased = _basic(estimate, center, draws, confidence, measure._max_value)
    if low > 0:
        # rank test of the null (as in the tester): not rejected at a / 2
        if vector is not None:
            W = (work.pos + work.neg)[None, :]
            null = vector(_null_positives(work, rng, n_resamples), W)
        else:
            null = np.array([core(work.null_draw(rng)) for _ in range(n_resamples)])
        if (1 + np.count_nonzero(null >= center)) / (n_resamples + 1) > (1 - confidence) / 2:
            low = 0.0
    return low, high, debiased, work.merged


# Gamma and binomial variates of at least this variance are drawn by their
# normal approximation (skewness 2 / sqrt(shape) <= 0.063; the measures sum
# many cells), which is about ten times faster at n = 10**6.
_NORMAL_FROM = 1000.0


def _vector_draws(work, rng, R):
    """``R`` Bayesian-bootstrap draws of every cell at once: ``(pos, W)``, shape (R, K)."""
    out = []
    for mass, sq in ((work.pos, work.pos2), (work.neg, work.neg2)):
        draw = np.zeros((R, mass.shape[0]))
        keep = mass > 0
        shape = np.zeros_like(mass)
        shape[keep] = mass[keep] ** 2 / sq[keep]
        big = shape >= _NORMAL_FROM
        small = keep & ~big
        scale = np.where(keep, sq / np.where(keep, mass, 1.0), 0.0)
        draw[:, small] = rng.standard_gamma(shape[small], size=(R, int(small.sum())))
        k = shape[big]
        draw[:, big] = k + np.sqrt(k) * rng.standard_normal((R, k.shape[0]))
        out.append(draw * scale)
    return out[0], out[0] + out[1]


def _null_positives(work, rng, R):
    """``R`` draws of :meth:`_Cells.null_draw`'s positives, shape (R, K)."""
    W = work.pos + work.neg
    sq = work.pos2 + work.neg2
    keep = W > 0
    v = work.G.values
    count = np.zeros(W.shape[0], np.int64)
    count[keep] = np.maximum(np.rint(W[keep] ** 2 / sq[keep]), 1)
    var = count * v * (1 - v)
    big = var >= _NORMAL_FROM
    small = keep & ~big
    draw = np.zeros((R, W.shape[0]))
    draw[:, small] = rng.binomial(count[small], v[small], size=(R, int(small.sum())))
    draw[:, big] = count[big] * v[big] + np.sqrt(var[big]) * rng.standard_normal(
        (R, int(big.sum()))
    )
    return draw * np.where(keep, W / np.maximum(count, 1), 0.0)


def _vector_core(measure, work):
    """The measure of many resamples of ``work``'s cells at once, or None.

    The uniform binned ECE only: its bins are fixed by the cell values, so
    ``f(pos, W)`` (arrays of shape (R, K)) sums each bin's residual and
    weight and combines them as ``skcal.metrics._ece`` does (the test
    compares it with the measure's own core on every draw).
    """
    if measure._tester_name != "binned_ece" or measure.strategy != "uniform":
        return None
    v = work.G.values
    edges = np.arange(1, measure.n_bins) / measure.n_bins
    b = np.searchsorted(edges, v, side="right")
    start = np.flatnonzero(np.concatenate([[True], b[1:] != b[:-1]]))
    norm = measure.norm

    def f(pos, W):
        residual = np.add.reduceat(pos - W * v, start, axis=1)
        wsum = np.add.reduceat(W, start, axis=1)
        total = wsum.sum(axis=1)
        bias = np.abs(residual)
        if norm == "l1":
            return bias.sum(axis=1) / total
        with np.errstate(divide="ignore", invalid="ignore"):
            if norm == "l2":
                return np.sqrt(np.where(wsum > 0, bias**2 / wsum, 0.0).sum(axis=1) / total)
            return np.where(wsum > 0, bias / wsum, 0.0).max(axis=1)

    return f


def measure_interval(
    measure,
    y_true,
    y_prob=None,
    *,
    sample_weight=None,
    confidence=0.95,
    method="auto",
    n_resamples=200,
    random_state=None,
    dce_draws=None,
):
    """The interval of ``measure`` (a measure object); see ``interval``.

    ``dce_draws`` (the tester's, ``skcal.tester._dcebound.dce_interval_draws``):
    called with the measure and the cells a dCE bootstrap resamples, it
    returns an object that solves resamples and null draws only where their
    bounds do not settle the interval's ends (or None: every draw solved).
    The ends are then those of solving every draw in that object, and
    ``debiased`` is None (it needs every draw).
    """
    from sklearn.utils import Bunch, check_random_state
    if measure._proba == "full":
        return _row_interval(
            measure, y_true, y_prob, sample_weight, confidence, method, n_resamples,
            random_state,
        )
    name = measure._tester_name
    allowed = ["auto", "bootstrap"]
    if measure._dce_factor is not None:
        allowed.append("analytic")
    if name == "cdl":
        allowed.append("scdl-bound")
    if name == "scdl":
        allowed.append("analytic")
    _check_options(confidence, method, n_resamples, allowed)
    params = measure.get_params(deep=False)
    y_true, y_prob, sample_weight, rows_target = _boundary(
        y_true, y_prob, sample_weight, params
    )
    if name == "scdl" and method in ("auto", "analytic"):
        estimate, low, high, n_eff, target = _scdl_bound(
            measure, y_true, y_prob, sample_weight, params, confidence
        )
        target = rows_target or target
        return Bunch(
            estimate=estimate, low=low, high=high, confidence=float(confidence),
            method="analytic", debiased=None, n_resamples=None, target=target,
            n_effective=n_eff, guarantee=_SCDL_GUARANTEE,
        )
    cells, estimate, target = _binary_cells(measure, y_true, y_prob, sample_weight, params)
    target = rows_target or target
    rng = check_random_state(random_state)
    if estimate is None:
        options = {
            k: v for k, v in params.items() if k not in ("pos_label", "multiclass", "labels")
        }
        # the public function checks the options; its value is the estimate
        estimate = float(measure._function(HeldStatistic(cells.G), None, **options))
    a = 1.0 - confidence
    out = Bunch(
        estimate=estimate,
        confidence=float(confidence),
        target=target,
        n_effective=float(cells.n_effective),
        debiased=None,
        n_resamples=None,
    )
    if method == "auto":
        method = "bootstrap"
        if name == "cdl" and cells.min_count() < _DISCRETE_COUNT:
            method = "scdl-bound"
    if method == "analytic":
        t = math.sqrt(math.log(1 / a) / (2 * out.n_effective))
        out.update(
            low=0.0,
            high=float(min(estimate + t, measure._max_value)),
            method="analytic",
            guarantee=(
                "finite-sample, upper end only: holds for every n, given the "
                "predictions (McDiarmid); the lower end 0 is trivial"
            ),
        )
        return out
    if method == "scdl-bound":
        from .measures import SoftBinnedCDL

        scdl = SoftBinnedCDL(**{k: params[k] for k in ("pos_label", "multiclass", "labels")})
        # one-sided: the whole error probability on the lower end
        low = _scdl_bound(scdl, y_true, y_prob, sample_weight, scdl.get_params(),
                          2 * confidence - 1)[1]
        out.update(
            estimate=float("nan"),
            plug_in=estimate,
            low=low,
            high=1.0,
            method="scdl-bound",
            n_resamples=n_resamples,
            guarantee=(
                "lower end only, finite-sample given the predictions: CDL >= SCDL "
                "(Lemma 3.4 of Bairaktari et al.) and SCDL's finite-sample lower "
                "bound at one-sided level 1 - a; the upper end is CDL's largest "
                "value. The plug-in CDL of continuous predictions does not estimate "
                "the population CDL and is not reported as an estimate"
            ),
        )
        return out
    uniform_cells = _Layout(measure).edges is not None  # cells within the bins
    if name == "binned_ece" and measure.norm == "l2" and (uniform_cells or not cells.merged):
        out["debiased_l2"] = _kumar_debiased_l2(cells, measure)
    low, high, debiased, merged = _bootstrap(
        measure, cells, estimate, confidence, n_resamples, rng, dce_draws
    )
    guarantee = (
        "asymptotic: bootstrap on the grouped statistic (hull of the basic and "
        "percentile intervals; 0 when a calibrated model is not ruled out); "
        "coverage measured in benchmarks/interval_coverage.py"
    )
    if name == "cutoff":
        guarantee = (
            "asymptotic: a uniform bootstrap band [T - q, T + q], q the quantile of "
            "the largest increment of the resampled residual process's deviation, "
            "which bounds |T - cutoff| (triangle inequality); coverage measured in "
            "benchmarks/interval_coverage.py"
        )
    elif name in _CAVEATS:
        guarantee += "; " + _CAVEATS[name]
    out.update(
        low=low,
        high=high,
        method="bootstrap",
        debiased=debiased,
        n_resamples=n_resamples,
        merged=merged,
        guarantee=guarantee,
    )
    return out


def _row_interval(
    measure, y_true, y_prob, sample_weight, confidence, method, n_resamples, random_state
):
    """Bayesian bootstrap of the multiclass utility error.

    One utility: on its grouped statistic (see :mod:`skcal._interval_utility`),
    no row revisited per draw. A finite family: on the rows, each resample
    multiplying the row weights by independent ``Exp(1)`` draws and calling
    the measure with them (one evaluation of the measure per resample).
    """
    from sklearn.utils import check_random_state
    _check_options(confidence, method, n_resamples, ("auto", "bootstrap"))
    rng = check_random_state(random_state)
    from ._input import multiclass_input
    from ._interval_utility import utility_interval

    # the boundary, once: every evaluation below reads the canonical form
    data = multiclass_input(
        y_true, y_prob, sample_weight, measure.get_params(deep=False).get("labels")
    )
    return utility_interval(
        measure, data, confidence, n_resamples, rng, _basic,
        lambda: _family_interval(measure, data, confidence, n_resamples, rng),
    )


def _family_interval(measure, data, confidence, n_resamples, rng):
    """Bayesian bootstrap on the rows: one evaluation of the measure per draw."""
    from sklearn.utils import Bunch

    w = np.asarray(data.w, dtype=np.float64)
    n = data.n
    estimate = float(measure(data))
    draws = np.array(
        [
            measure(data.with_weights(w * rng.standard_exponential(n)))
            for _ in range(n_resamples)
        ]
    )
    low, high, debiased = _basic(estimate, estimate, draws, confidence, measure._max_value)
    utility = measure.get_params(deep=False).get("utility")
    return Bunch(
        estimate=estimate,
        low=low,
        high=high,
        confidence=float(confidence),
        method="bootstrap",
        debiased=debiased,
        n_resamples=n_resamples,
        target=f"utility {utility!s}",
        n_effective=float(w.sum() ** 2 / np.square(w).sum()),
        guarantee=(
            "asymptotic: bootstrap on the rows (hull of the basic and percentile "
            "intervals); coverage "
            "measured in benchmarks/interval_coverage.py"
        ),
    )
