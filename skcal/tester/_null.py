"""The resampling null of the calibration tester: the data of one test, its
calibrated redraws and the sequential Monte Carlo rank test."""

import inspect
import math

import numpy as np
from joblib import effective_n_jobs
from scipy.stats import binom
from sklearn.utils import check_random_state
from sklearn.utils.parallel import Parallel, delayed

from .._grouped import canonical_statistic, group
from .._held import HeldStatistic
from .._input import (
    binary_input,
    canonical_weights,
    check_binary_calibration_input,
    multiclass_input,
    power_of_two_scale,
)
from .._kernels._flow import smce_bernoulli, smce_null_draw, smce_null_draw_counts
from ..measures import MEASURE_CLASSES, SmoothCalibrationError, UtilityCalibrationError
from ..metrics._multiclass import utility_calibration_error

_THEOREMS = {
    "theorem 3": 'Theorem 3 of Hu, Jambulapati, Tian and Yang, "Testing '
    'calibration in nearly-linear time"',
    "theorem 4": 'Theorem 4 of Hu, Jambulapati, Tian and Yang, "Testing '
    'calibration in nearly-linear time"',
}


# smCE draws on distinct predictions of one weight go straight from the
# uniforms to the kernel (benchmarks/bench_tester.py turns this off to time
# the generic path of earlier versions)
_BERNOULLI_DRAWS = True
# ... and the kernel draws their uniforms from the generator itself (same
# numbers; benchmarks/bench_tester.py turns this off to time the draw of the
# previous version, an array of uniforms first)
_KERNEL_DRAWS = True
# smCE's sequential test may reject on McDiarmid's bound before its draws
# settle (benchmarks/bench_tester.py turns this off to time the rule alone)
_TAIL_BOUND = True
# Ties among rows of one weight: up to this many rows per distinct prediction
# on average, a draw takes one uniform per row (in the order of the values:
# the counts of ``rng.random(n) < np.repeat(values, counts)`` per value);
# beyond it, numpy's binomial per value. The same law, Binomial(count, v);
# each costs what it reads (about 2.5 ns a row, 25 ns a value): on predictions
# rounded to float32 (about one row per value) at 10**6 rows the binomial
# alone took 28 ms a draw, and a draw with its walk 49 ms by the binomial,
# 10 ms by the rows' uniforms in the kernel.
_ROW_DRAWS_MAX_MEAN = 8


def _registry():
    """Short name -> measure class, from the classes of skcal.measures."""
    return {cls._tester_name: cls for cls in MEASURE_CLASSES}


# -- data prepared once; one null draw per seed --------------------------------


class _CustomMeasure:
    """A user's function ``f(y_true, y_prob, sample_weight, **params)``.

    ``sample_weight`` is passed by keyword when the function names it (or takes
    ``**kwargs``), else as the third positional argument; a function of two
    arguments is accepted for unweighted data.
    """

    def __init__(self, function, params):
        self.function = function
        self.params = params
        self.weight_style = "keyword"
        try:
            signature = inspect.signature(function)
        except (TypeError, ValueError):  # builtins without a signature
            return
        kinds = [p.kind for p in signature.parameters.values()]
        named = signature.parameters.get("sample_weight")
        if inspect.Parameter.VAR_KEYWORD in kinds or (
            named is not None and named.kind != inspect.Parameter.POSITIONAL_ONLY
        ):
            return
        positional = [
            k
            for k in kinds
            if k
            in (
                inspect.Parameter.POSITIONAL_ONLY,
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
            )
        ]
        if len(positional) >= 3 or inspect.Parameter.VAR_POSITIONAL in kinds:
            self.weight_style = "positional"
        else:
            self.weight_style = "none"

    def __call__(self, y, p, w, unit_weights, where="on the data"):
        if self.weight_style == "keyword":
            value = self.function(y, p, sample_weight=w, **self.params)
        elif self.weight_style == "positional":
            value = self.function(y, p, w, **self.params)
        elif unit_weights:
            value = self.function(y, p, **self.params)
        else:
            raise TypeError(
                "The measure function takes no sample_weight, but the weights "
                "are not all equal; give it a third argument sample_weight."
            )
        return _as_value(value, where)


def _as_value(value, where="on the data"):
    if np.ndim(value) != 0:
        raise TypeError(
            f"The measure returned {type(value).__name__}, not a single number."
        )
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(
            f"The measure returned {value} {where}; the test needs a finite statistic."
        )
    return value


def _in_tester_terms(message):
    """A measure function's input error, in the arguments of the tester.

    The functions take ``labels=``; ``CalibrationTester.fit`` sets labels
    through the measure.
    """
    return message.replace(
        "pass labels= (the estimator's classes_)",
        "set the measure's labels to the estimator's classes_ "
        "(measure_params={'labels': classes_}, or labels= of the measure "
        "object), or use CalibrationTester.from_estimator,",
    )


def _prepare(measure, y_true, y_prob, sample_weight, pos_label, labels):
    """Validate once; return the statistic and a null sampler."""
    if isinstance(measure, UtilityCalibrationError):
        return _UtilityData(measure, y_true, y_prob, sample_weight, labels)
    if isinstance(measure, _CustomMeasure):
        return _CustomData(measure, y_true, y_prob, sample_weight, pos_label, labels)
    return _BinaryData(measure, y_true, y_prob, sample_weight, pos_label, labels)


def _weight_summary(data, w):
    total = float(np.sum(w))
    data.n_eff = total**2 / float(np.sum(np.square(w)))
    data.max_share = float(np.max(w) / total)


class _BinaryData:
    """A binary measure of the skcal.measures classes, on grouped data.

    The null redraws the positive weight of each distinct prediction: for
    equal weights ``c`` a ``c * Binomial(count, v)`` per value (exactly the law
    of the group sum of ``y* ~ Bernoulli(p)``; drawn as ``count`` uniforms
    when the values hold few rows each, ``_ROW_DRAWS_MAX_MEAN``), otherwise
    one Bernoulli per row summed into its group through an index computed
    once. A calibration
    sketch of rows of one weight ``c`` gets the same exact law from its counts
    (``CalibrationSketch`` refuses compacted or mixed-weight sketches).
    """

    def __init__(self, measure, y_true, y_prob, sample_weight, pos_label, labels):
        if callable(getattr(y_true, "grouped_statistic", None)):
            if y_prob is not None or sample_weight is not None:
                raise ValueError(
                    f"y_true is a {type(y_true).__name__}, which already holds the "
                    "predictions and weights: pass y_prob=None and sample_weight=None."
                )
            G = y_true.grouped_statistic()
            # the measures' weight scale (exact): the statistic and the
            # resampled positive weights are both multiplied by 2**e
            e = power_of_two_scale(G.weights.max()) if len(G) else 0
            G = canonical_statistic(G)
            null_counts = getattr(y_true, "_null_counts", None)
            if callable(null_counts):
                # a CalibrationSketch: rows of one weight c, so a value's
                # positive weight is exactly c Binomial(count, v) (it raises
                # for compacted sketches and for rows of different weights)
                counts, scale = null_counts()
                scale = float(np.ldexp(scale, e))
            else:
                counts = np.ldexp(np.asarray(G.weights, dtype=np.float64), -e)
                scale = float(np.ldexp(1.0, e))
                if not np.all(counts == np.round(counts)):
                    raise ValueError(
                        f"The {type(y_true).__name__} has non-integer weights; the "
                        "tester reads a summary's weights as counts of unit-weight "
                        "samples (the null law of weighted rows needs the rows)."
                    )
            n = float(counts.sum())
            self.n = int(n)
            self.p = self.w = None
            self.data = y_true  # what the interval reads: the sketch itself
            self.scale = scale
            self.counts = counts
            self.n_eff = n
            self.max_share = 1.0 / n
        else:
            params = measure.get_params(deep=False)
            if pos_label is not None:
                params["pos_label"] = pos_label
            if labels is not None and params.get("labels") is None:
                params["labels"] = labels
            # the boundary, once: the canonical form is also what the
            # tester's interval reads (CalibrationTester._fit)
            self.data = binary_input(
                y_true,
                y_prob,
                sample_weight,
                pos_label=params.get("pos_label"),
                multiclass=params.get("multiclass", "top-label"),
                labels=params.get("labels"),
            )
            y, p, w = self.data.canonical_rows()
            # the measures' weight scale (exact), one weight per row
            w = canonical_weights(np.ascontiguousarray(w, dtype=np.float64))
            G = group(y, p, w)
            self.n = y.shape[0]
            _weight_summary(self, w)
            w0 = float(w[0])
            if np.all(w == w0):
                self.p = self.w = None
                self.scale = w0
                self.counts = np.round(G.weights / w0)
            else:
                self.p = np.ascontiguousarray(p, dtype=np.float64)
                self.w = np.ascontiguousarray(w, dtype=np.float64)
                self.index = np.searchsorted(G.values, self.p)
        self.G = G
        self.core = measure._grouped_core
        self.row_draws = False
        if self.p is None:
            self.int_counts = self.counts.astype(np.int64)
            self.single = bool(np.all(self.int_counts == 1))
            # few rows per value: a uniform per row (see _ROW_DRAWS_MAX_MEAN)
            self.row_draws = bool(
                not self.single
                and self.int_counts.sum() <= _ROW_DRAWS_MAX_MEAN * len(G)
            )
        self.resampler = _Resampler(self)
        # smCE on distinct predictions of one weight: a draw is its uniforms
        # and one kernel call, which releases the GIL (so threads can share
        # the draws); the same numbers as the generic path below
        self.smce = type(measure)._spec is SmoothCalibrationError._spec
        self.bernoulli = bool(
            self.p is None
            and self.single
            and self.smce
            and np.all(G.weights == self.scale)
        )
        # ... and on values of a few such rows each: one kernel call too
        self.count_draws = bool(self.row_draws and self.smce)
        # The public function checks the options and gives the statistic.
        options = {
            k: v
            for k, v in measure.get_params(deep=False).items()
            if k not in ("pos_label", "multiclass", "labels")
        }
        held = HeldStatistic(G, canonical=True)
        self.statistic = _as_value(measure._function(held, None, **options))
        # a bound on the ideal p-value, from the statistic alone (smCE only)
        self.q_bound = (
            _smce_tail_bound(self.statistic, self.n_eff)
            if _TAIL_BOUND and type(measure)._spec is SmoothCalibrationError._spec
            else 1.0
        )

    def draw(self, seed):
        rng = np.random.default_rng(seed)
        G = self.G
        if self.bernoulli and _BERNOULLI_DRAWS:
            if _KERNEL_DRAWS:
                # the uniforms of rng.random(len(G)), drawn inside the kernel
                value = smce_null_draw(
                    G.values, rng.bit_generator, self.scale, G.total,
                    np.empty(2 * len(G)),
                )
                return _as_value(value, "on a resample")
            uniforms = rng.random(len(G))
            value = smce_bernoulli(
                G.values, uniforms, self.scale, G.total, np.empty(2 * len(G))
            )
            return _as_value(value, "on a resample")
        if self.count_draws and _KERNEL_DRAWS:
            # the resampler's positives and smce_core of them, in one call
            value = smce_null_draw_counts(
                G.values, G.weights, self.int_counts, rng.bit_generator, self.scale,
                G.total, np.empty(2 * len(G)), np.empty(len(G)),
            )
            return _as_value(value, "on a resample")
        return _as_value(
            self.core(G.with_positives(self.resampler(rng))),
            "on a resample",
        )


class _Resampler:
    """The positive weight of each distinct prediction in one null draw.

    What :meth:`_BinaryData.draw` draws before its measure, kept apart (and
    light enough to pickle with a fitted tester) for the dCE branch and
    bound, which redraws the same masses from the same seeds
    (:mod:`skcal.tester._dcebound`).
    """

    def __init__(self, data):
        self.G = data.G
        self.p, self.w = data.p, data.w
        self.index = getattr(data, "index", None)
        self.scale = getattr(data, "scale", None)
        self.int_counts = getattr(data, "int_counts", None)
        self.single = getattr(data, "single", False)
        self.row_draws = getattr(data, "row_draws", False)
        if self.row_draws:
            self.starts = np.concatenate(([0], np.cumsum(self.int_counts)[:-1]))
            self.n_rows = int(self.int_counts.sum())

    def __call__(self, rng):
        G = self.G
        if self.p is not None:
            hits = rng.random(self.p.shape[0]) < self.p
            positives = np.bincount(self.index, weights=self.w * hits, minlength=len(G))
        elif self.single:
            positives = (rng.random(len(G)) < G.values) * self.scale
        elif self.row_draws:
            hits = rng.random(self.n_rows) < np.repeat(G.values, self.int_counts)
            positives = np.add.reduceat(hits, self.starts, dtype=np.int64) * self.scale
        else:
            positives = rng.binomial(self.int_counts, G.values) * self.scale
        return positives.astype(np.float64)

    def positives(self, seed):
        """The positive weights of the draw of ``seed``."""
        return self(np.random.default_rng(seed))


class _CustomData:
    """A user's function, called on the rows (binary or top-label)."""

    def __init__(self, measure, y_true, y_prob, sample_weight, pos_label, labels):
        y, p, w = check_binary_calibration_input(
            y_true, y_prob, sample_weight, pos_label=pos_label, labels=labels
        )
        self.measure = measure
        self.p = np.ascontiguousarray(p, dtype=np.float64)
        # the measures' weight scale (exact; a new array either way)
        self.w = np.array(canonical_weights(w), dtype=np.float64)
        self.unit = bool(np.all(self.w == self.w[0]))
        self.n = y.shape[0]
        _weight_summary(self, self.w)
        self.statistic = measure(
            np.asarray(y, dtype=np.float64), self.p, self.w, self.unit
        )

    def draw(self, seed):
        rng = np.random.default_rng(seed)
        y_star = (rng.random(self.n) < self.p).astype(np.float64)
        return self.measure(y_star, self.p, self.w, self.unit, "on a resample")


class _UtilityData:
    """Multiclass utility calibration error; null ``y* ~ Categorical(p_i)``."""

    def __init__(self, measure, y_true, y_prob, sample_weight, labels):
        if labels is not None and measure.labels is None:
            measure.set_params(labels=labels)
        # the boundary, once: the statistic and every draw read the canonical form
        data = multiclass_input(y_true, y_prob, sample_weight, labels=measure.labels)
        self.statistic = _as_value(measure(data))
        self.data = data
        P = data.P
        self.w = data.w
        self.cumulative = np.cumsum(np.asarray(P, dtype=np.float64), axis=1)
        self.last = P.shape[1] - 1
        self.utility = measure.utility
        self.n = P.shape[0]
        _weight_summary(self, np.asarray(self.w, dtype=np.float64))

    def draw(self, seed):
        u = np.random.default_rng(seed).random(self.n)
        y_star = np.count_nonzero(self.cumulative <= u[:, None], axis=1)
        np.minimum(y_star, self.last, out=y_star)
        return _as_value(
            utility_calibration_error(
                self.data.with_outcomes(y_star.astype(np.intp, copy=False)),
                None,
                utility=self.utility,
            ),
            "on a resample",
        )


# -- Monte Carlo ---------------------------------------------------------------


def _smce_tail_bound(statistic, n_eff):
    """An upper bound on ``q = P(T* >= statistic | predictions)`` for smCE.

    ``T*`` is smCE of ``y* ~ Bernoulli(p)`` (independent rows, normalised
    weights ``w_i``, ``sum w_i^2 = 1 / N`` with ``N = n_eff``). Its mean is at
    most ``2 / sqrt(N)``: by Abel summation smCE is at most twice the largest
    ``|S_k|``, ``S_k`` the partial sums of ``w_i (y*_i - p_i)`` in the order of
    ``p``, a martingale, so ``E max_k |S_k| <= 2 sqrt(E S_n^2) <= 1 / sqrt(N)``
    (Doob's L2 inequality; ``E S_n^2 = sum w_i^2 p_i (1 - p_i) <= 1 / (4 N)``).
    Changing one ``y*_i`` moves every test function's sum by at most ``w_i``,
    so ``P(T* >= E T* + t) <= exp(-2 N t^2)`` (McDiarmid). Returns 1.0 when
    the statistic is not above the mean's bound. The statistic is first
    lowered by a relative 1e-9, far more than the rounding of the computed
    smCE values (``statistic`` and the draws it is compared with).
    """
    excess = statistic * (1.0 - 1e-9) - 2.0 / math.sqrt(n_eff)
    if not excess > 0.0:
        return 1.0
    return math.exp(-2.0 * n_eff * excess * excess)


# Checkpoints of the sequential test: the first after this many draws, then
# each about this factor later.
_FIRST_CHECK = 20
_CHECK_GROWTH = 1.25


def _seeds(random_state, n_resamples):
    """One seed per draw, so the draws do not depend on how jobs split them."""
    rng = check_random_state(random_state)
    return np.random.SeedSequence(rng.randint(np.iinfo(np.int32).max, size=4)).spawn(
        n_resamples
    )


def _draw_all(draw, seeds, n_jobs):
    if len(seeds) == 0:
        return np.empty(0)
    n_chunks = min(len(seeds), effective_n_jobs(n_jobs))
    if n_chunks == 1:
        return np.array([draw(seed) for seed in seeds])
    chunks = np.array_split(np.arange(len(seeds)), n_chunks)
    # draws that release the GIL share one process: no copy of the data
    owner = getattr(draw, "__self__", None)
    releases = getattr(owner, "bernoulli", False) or getattr(owner, "count_draws", False)
    prefer = "threads" if releases else None
    parts = Parallel(n_jobs=n_jobs, prefer=prefer)(
        delayed(_draw_chunk)(draw, [seeds[i] for i in chunk]) for chunk in chunks
    )
    return np.concatenate(parts)


def _draw_chunk(draw, seeds):
    return np.array([draw(seed) for seed in seeds])


def _checkpoints(max_draws):
    """Numbers of draws after which the sequential test looks at its count."""
    points = []
    n = min(_FIRST_CHECK, max_draws)
    while n < max_draws:
        points.append(n)
        n = max(n + 1, math.ceil(n * _CHECK_GROWTH))
    points.append(max_draws)
    return points


def _can_reject(max_draws, alpha, risk):
    """Whether zero exceedances in ``max_draws`` draws would reject."""
    return (1 - alpha) ** max_draws <= risk / len(_checkpoints(max_draws))


def _sequential_test(
    draw, statistic, alpha, seeds, risk, n_jobs, q_bound=1.0, bracketed=None
):
    """Sequential Monte Carlo test of ``p <= alpha``; see CalibrationTester Notes.

    ``q_bound`` is an upper bound on the ideal p-value ``q`` known without
    drawing (``_smce_tail_bound``); at most ``risk / J`` (``J`` looks) it
    rejects at the first look. Returns the sorted null draws and the
    decision: True (reject), False (accept) or None (undecided after all
    draws; the tester then takes the fixed test's decision on them). With
    ``bracketed`` (an empty ``skcal.tester._smcebound.SmceNull``) the draws
    are bracketed and counted exactly through it, and it is returned in
    place of the sorted draws (the same counts, so the same decision).
    """
    checkpoints = _checkpoints(len(seeds))
    delta = risk / len(checkpoints)
    parts, done = [], 0
    for n in checkpoints:
        if bracketed is not None:
            bracketed.extend(seeds[done:n], lambda d, s: _draw_all(d, s, n_jobs))
            null = bracketed
        else:
            parts.append(_draw_all(draw, seeds[done:n], n_jobs))
            null = np.concatenate(parts)
        done = n
        if q_bound <= delta:
            return _sorted(null), True
        exceed = _at_least(null, statistic)
        if binom.cdf(exceed, n, alpha) <= delta:
            return _sorted(null), True
        if binom.sf(exceed - 1, n, alpha) <= delta:
            return _sorted(null), False
    return _sorted(null), None


def _sorted(null):
    return null if hasattr(null, "at_least") else np.sort(null)


def _at_least(null, statistic):
    """``#{draws >= statistic}`` of sorted draws or of bracketed ones (exact)."""
    if hasattr(null, "at_least"):
        return null.at_least(statistic)
    return int(np.count_nonzero(null >= statistic))


def _rejection_counts(max_draws, alpha, risk):
    """``(n_j, c_j)`` per checkpoint: the largest count that rejects there (-1: none)."""
    checkpoints = _checkpoints(max_draws)
    delta = risk / len(checkpoints)
    out = []
    for n in checkpoints:
        counts = np.arange(n + 1)
        passing = counts[binom.cdf(counts, n, alpha) <= delta]
        out.append((n, int(passing[-1]) if passing.size else -1))
    return out


def _bound_rejection_excess(max_draws, alpha, risk):
    """What rejections by ``q_bound <= d`` can add to the fixed test's level.

    Such a rejection needs ``q <= d`` (``d = risk / J``), which has
    probability at most ``d`` under calibration (``q`` is the ideal test's
    p-value); given it, the fixed test fails to reject only if ``S_J >= k``,
    with probability at most ``P(Binomial(B, d) >= k)`` (it grows with
    ``q``). The product bounds the excess: at most ``d <= risk``.
    """
    k = math.floor(alpha * (max_draws + 1) + 1e-9)
    delta = risk / len(_checkpoints(max_draws))
    return float(delta * binom.sf(k - 1, max_draws, delta))


def _early_rejection_excess(max_draws, alpha, risk, grid=2000):
    """``eta``: how much early rejections can add to the fixed test's level.

    ``sup_q sum_j P(S_j <= c_j, S_J >= k | q)`` over the checkpoints before
    the last (see the Notes of CalibrationTester), with ``S_j ~ Binomial(n_j,
    q)`` and ``S_J - S_j ~ Binomial(B - n_j, q)`` independent, evaluated on
    ``grid`` values of ``q`` in ``(0, min(1, 10 alpha))`` (above that no
    early rejection is possible in practice: each term is at most
    ``P(S_j <= c_j | q)``, which falls with ``q``, and it is checked at
    the grid's end).
    """
    k = math.floor(alpha * (max_draws + 1) + 1e-9)
    looks = [(n, c) for n, c in _rejection_counts(max_draws, alpha, risk)[:-1] if c >= 0]
    q = np.linspace(0.0, min(1.0, 10 * alpha), grid + 1)[1:]
    total = np.zeros_like(q)
    for n, c in looks:
        s = np.arange(c + 1)[:, None]
        total += np.sum(
            binom.pmf(s, n, q) * binom.sf(k - 1 - s, max_draws - n, q), axis=0
        )
    tail = sum(binom.cdf(c, n, q[-1]) for n, c in looks)
    return float(max(total.max(initial=0.0), tail))
