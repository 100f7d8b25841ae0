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
* **Calibration decision loss.** Its plug-in does not estimate the
  population CDL when predictions are continuous (Bairaktari, Hu, Nguyen
  and Ullman show CDL is not testable; a calibrated model reads about 0.29).
  By their Lemma 3.4, ``SCDL(D) <= CDL(D)`` for every distribution, so the
  lower end of SCDL's interval is a lower confidence bound for CDL; the upper
  end is CDL's largest value, 1. The plug-in is bootstrapped only when every
  distinct prediction carries at least ``_DISCRETE_COUNT`` effective rows.

The lower end near 0: the resamples of a sample see less bias than the
plug-in has (``|x + e| - |x|`` is less biased than ``|e|``), so the basic
lower end is replaced by 0 whenever the calibrated null (outcomes redrawn as
``Bernoulli(v)``, the tester's null, on the same statistic) reaches the
sample's value with probability above ``a / 2`` (a rank test with
``n_resamples`` draws): the interval starts at 0 exactly when a calibrated
model cannot be ruled out at level ``a / 2``.

Large data: numpy input with more rows than ``_Layout.max_groups`` (2**14;
400 for dCE at the default grid, one linear program per resample) is summed
in one pass, with no sort, into equal cells of the predictions (64 per bin,
split at the bin edges, for the uniform binned ECE); a sketch's statistic is
merged into the same cells. A cell keeps the weight, the positive weight
and the residual sum ``P - v W`` of its rows (its value is their mean
prediction), and only the resampled *deviations* ``T* - T`` are read from
the cells; the point estimate is always the measure of the full data.
"""

import math
import numbers

import numpy as np
from sklearn.utils import Bunch, check_random_state

from ._grouped import GroupedStatistic, group
from ._validation import check_binary_calibration_input

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
        "n = 10**4 in the benchmark): the plug-in's upward bias is not corrected"
    ),
    "cutoff": (
        "under-covers when many intervals nearly attain the supremum (0.84 to 0.90 "
        "on a tempered model); method='analytic' gives an upper end that holds"
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
        return _Cells.from_sums(
            add(v * W), add(self.neg), add(self.pos), add(self.neg2), add(self.pos2),
            fallback=v[start],
        )

    @classmethod
    def from_sums(cls, vw, neg, pos, neg2, pos2, fallback=None):
        """Cells of given masses; a cell's value is its mean prediction.

        That keeps each cell's residual sum ``P - v W`` exact.
        """
        W = neg + pos
        keep = W > 0
        if fallback is None:
            vw, neg, pos, neg2, pos2, W = (x[keep] for x in (vw, neg, pos, neg2, pos2, W))
            v = vw / W
        else:
            with np.errstate(invalid="ignore", divide="ignore"):
                v = np.where(keep, vw / W, fallback)
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
            self.n_cells = 64 * measure.n_bins
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


def _binary_cells(measure, y_true, y_prob, sample_weight, params):
    """Validate once; return ``(cells, estimate, target)``.

    ``estimate`` is the measure of the data, or None when ``cells`` is the
    exact grouped statistic (the caller computes it there). Numpy input with
    more rows than the layout resamples as they are is summed into the
    layout's cells in one pass (no sort) and the measure is computed by its
    own function; a sketch or Dask input is grouped, then merged into cells.
    """
    if any(type(a).__module__.startswith("dask") for a in (y_true, y_prob, sample_weight)):
        from ._dask import dask_sketch

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
        if not callable(counts):
            raise TypeError(
                f"An interval needs the rows behind a {type(y_true).__name__}'s "
                "statistic; pass a CalibrationSketch or the arrays."
            )
        try:
            _, c = counts()
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
        G = y_true.grouped_statistic()
        pos = np.asarray(G.positives, np.float64)
        neg = np.maximum(np.asarray(G.weights, np.float64) - pos, 0.0)
        # a sketch does not record whether its rows were top-label reductions
        target = "binary or top-label (as the sketch was built)"
        return _Cells(G, c * neg, c * pos), None, target
    if y_prob is None:
        raise ValueError("y_prob is required (the predicted probabilities).")
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
    unit = w.strides == (0,) or bool(np.all(w == w[0]))
    layout = _Layout(measure)
    if p.shape[0] > layout.max_groups and measure._tester_name != "cdl":
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
    low = min(max(estimate - max(q_hi, -q_lo), 0.0), max_value)
    high = min(max(estimate + max(q_hi, -q_lo), 0.0), max_value)
    debiased = float(min(max(estimate - delta.mean(), 0.0), max_value))
    return float(low), float(high), debiased


def _bootstrap(measure, cells, estimate, confidence, n_resamples, rng):
    """``(low, high, debiased, merged)`` of the basic bootstrap on ``cells``.

    The lower end is 0 when the calibrated null (outcomes redrawn as
    ``Bernoulli(v)`` at every value, the tester's null) reaches the data's
    value with probability above ``a / 2``: near 0 the bootstrap sees less
    bias than the plug-in has (``|x + e| - |x|`` is less biased than
    ``|e|``), and only the null knows the plug-in's law at 0.
    """
    work = cells.blocks(_Layout(measure))
    core = measure._grouped_core
    center = core(work.G)
    draws = np.array([core(work.draw(rng)) for _ in range(n_resamples)])
    low, high, debiased = _basic(estimate, center, draws, confidence, measure._max_value)
    if low > 0:
        # rank test of the null (as in the tester): not rejected at a / 2
        null = np.array([core(work.null_draw(rng)) for _ in range(n_resamples)])
        if (1 + np.count_nonzero(null >= center)) / (n_resamples + 1) > (1 - confidence) / 2:
            low = 0.0
    return low, high, debiased, work.merged


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
):
    """The interval of ``measure`` (a measure object); see ``interval``."""
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
    _check_options(confidence, method, n_resamples, allowed)
    params = measure.get_params(deep=False)
    cells, estimate, target = _binary_cells(measure, y_true, y_prob, sample_weight, params)
    rng = check_random_state(random_state)
    if estimate is None:
        options = {
            k: v for k, v in params.items() if k not in ("pos_label", "multiclass", "labels")
        }
        # the public function checks the options; its value is the estimate
        estimate = float(measure._function(_Held(cells.G), None, **options))
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

        scdl = SoftBinnedCDL()
        scdl_estimate = float(scdl._function(_Held(cells.G), None))
        # one-sided: the whole error probability on the lower end
        low = _bootstrap(scdl, cells, scdl_estimate, 2 * confidence - 1, n_resamples, rng)[0]
        out.update(
            estimate=float("nan"),
            plug_in=estimate,
            low=low,
            high=1.0,
            method="scdl-bound",
            n_resamples=n_resamples,
            guarantee=(
                "lower end only (asymptotic): CDL >= SCDL (Lemma 3.4 of Bairaktari "
                "et al.) and the lower end of SCDL's interval, which can exceed a "
                "small but non-zero SCDL (see SCDL's interval); the upper end is "
                "CDL's largest value. The plug-in CDL of continuous predictions does "
                "not estimate the population CDL and is not reported as an estimate"
            ),
        )
        return out
    if name == "binned_ece" and measure.norm == "l2" and not cells.merged:
        out["debiased_l2"] = _kumar_debiased_l2(cells, measure)
    low, high, debiased, merged = _bootstrap(
        measure, cells, estimate, confidence, n_resamples, rng
    )
    guarantee = (
        "asymptotic: bootstrap on the grouped statistic (hull of the basic and "
        "percentile intervals; 0 when a calibrated model is not ruled out); "
        "coverage measured in benchmarks/interval_coverage.py"
    )
    if name in _CAVEATS:
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


def _kumar_debiased_l2(cells, measure):
    """The debiased l2 binned ECE of Kumar, Liang and Ma, *Verified Uncertainty Calibration* (2019).

    Per bin ``b`` with mass share ``pi_b``, mean outcome ``y_b``, mean
    prediction ``p_b`` and (effective) count ``n_b``, ``(y_b - p_b)**2 -
    y_b (1 - y_b) / (n_b - 1)`` is unbiased for the squared bias given the
    predictions; the estimate is the square root of their ``pi``-weighted
    sum, clipped at 0 (bins with one row are skipped).
    """
    G = cells.G
    # the bins of binned_ece (skcal.metrics._ece), recomputed here
    if measure.strategy == "uniform":
        edges = np.arange(measure.n_bins + 1) / measure.n_bins
        b = np.searchsorted(edges[1:-1], G.values, side="right")
    else:
        before = np.concatenate([[0.0], np.cumsum(G.weights)[:-1]])
        b = np.minimum(
            np.floor(measure.n_bins * before / G.total).astype(np.intp), measure.n_bins - 1
        )
    W = np.bincount(b, G.weights, measure.n_bins)
    P = np.bincount(b, G.positives, measure.n_bins)
    V = np.bincount(b, G.values * G.weights, measure.n_bins)
    S2 = np.bincount(b, cells.pos2 + cells.neg2, measure.n_bins)
    keep = W > 0
    W, P, V, S2 = W[keep], P[keep], V[keep], S2[keep]
    n_b = W**2 / S2
    ybar, pbar = P / W, V / W
    with np.errstate(divide="ignore", invalid="ignore"):
        term = (ybar - pbar) ** 2 - np.where(n_b > 1, ybar * (1 - ybar) / (n_b - 1), 0.0)
    return float(np.sqrt(max(float(np.sum(W * term)) / G.total, 0.0)))


class _Held:
    """Hands a grouped statistic to a public measure function."""

    def __init__(self, statistic):
        self.statistic = statistic

    def grouped_statistic(self):
        return self.statistic


def _row_interval(
    measure, y_true, y_prob, sample_weight, confidence, method, n_resamples, random_state
):
    """Bayesian bootstrap on the rows (the multiclass utility error).

    Each resample multiplies the row weights by independent ``Exp(1)``
    draws and calls the measure with them: one evaluation of the measure
    per resample.
    """
    _check_options(confidence, method, n_resamples, ("auto", "bootstrap"))
    rng = check_random_state(random_state)
    if sample_weight is None:
        n = len(y_true)
        w = np.ones(n)
    else:
        w = np.asarray(sample_weight, dtype=np.float64)
        n = w.shape[0]
    estimate = float(measure(y_true, y_prob, sample_weight=sample_weight))
    draws = np.array(
        [
            measure(y_true, y_prob, sample_weight=w * rng.standard_exponential(n))
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
