"""Coverage and width of the measures' confidence intervals, on generators with known truth.

For each measure, generator and n, draw ``--reps`` data sets, compute the
measure's ``interval(confidence=0.95)`` on each, and print the share that
contains the population value (coverage) and the median width.

Generators (binary unless said; ``mu(p)`` is the true P(y = 1 | p)):

* ``calibrated``: ``p ~ U(0, 1)``, ``mu(p) = p`` (every measure is 0);
* ``shifted``: ``p ~ U(0, 0.9)``, ``mu(p) = p + 0.05``;
* ``tempered``: ``p ~ U(0.02, 0.98)``, ``mu(p) = sigmoid(1.6 logit p)``
  (an under-confident model);
* ``multiclass``: 3 classes, logits ``z ~ N(0, 2 I)``, true law
  ``softmax(z)``, model ``softmax(z / 1.5)`` (over-confident), measured
  top-label from the ``(n, 3)`` probability matrix;
* ``weighted``: ``shifted`` with weights ``w = 0.5 + 2 p`` (the measure of
  the weighted law, density proportional to ``w``).

**Population values** are computed once per generator by numeric
integration on a fine grid: 4 * 10**6 draws of the predictions (top-label
confidences) are summed into 2**16 equal cells of [0, 1], each cell
holding its weight, its mean prediction and, as positive weight, the sum of
``w mu`` (the *expected* outcome: no outcome noise). The measure of that
grouped statistic is the population value up to the cell width (2**-16)
and the Monte Carlo error of the predictions' law (relative 1e-3).
For CDL, which the plug-in does not estimate on continuous predictions,
only the lower end is checked (``low <= CDL``; the upper end is 1).
SCDL's default interval is finite-sample *given the predictions*; here it
is scored against the population value like every other measure.

Methods (``auto``): smCE and the binned ECE by the basic bootstrap on the
grouped statistic, cutoff by the uniform bootstrap band, SCDL by its
finite-sample bound, CDL by SCDL's one-sided lower end (see
doc/intervals.md). dCE (one linear program per resample) is left to its own
``--measures dCE`` runs. ``UCE`` (the utility calibration error, top-class)
is run on the ``multiclass`` generator only (its population value is the
cutoff error of (confidence, correctness), Hegazy et al., Example 3.4),
by the Bayesian bootstrap on its grouped statistic.

Usage: python benchmarks/interval_coverage.py [--reps 500] [--resamples 200]
       python benchmarks/interval_coverage.py --speed [--speed-n 1000000]

``--speed`` prints, per measure, the time of the measure and of its
``interval`` (200 resamples) on one shifted data set, and their ratio
(target: at most 20 at n = 10**6); best of 3 runs each.
"""

import argparse
import time

import numpy as np

from skcal._grouped import GroupedStatistic
from skcal.measures import (
    BinnedECE,
    CalibrationDecisionLoss,
    CutoffCalibrationError,
    LowerDistanceToCalibration,
    SmoothCalibrationError,
    SoftBinnedCDL,
    UtilityCalibrationError,
)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def draw(name, n, rng):
    """``(y, y_prob, sample_weight, p_binary, mu)`` of one data set."""
    w = None
    if name == "multiclass":
        z = rng.normal(scale=np.sqrt(2.0), size=(n, 3))
        true, model = _softmax(z), _softmax(z / 1.5)
        u = rng.uniform(size=(n, 1))
        y = (u > np.cumsum(true, axis=1)).sum(axis=1)
        top = model.argmax(axis=1)
        p = model[np.arange(n), top]
        mu = true[np.arange(n), top]
        return y, model, None, p, mu
    if name == "calibrated":
        p = rng.uniform(size=n)
        mu = p
    elif name in ("shifted", "weighted"):
        p = rng.uniform(0, 0.9, size=n)
        mu = p + 0.05
        if name == "weighted":
            w = 0.5 + 2 * p
    elif name == "tempered":
        p = rng.uniform(0.02, 0.98, size=n)
        mu = _sigmoid(1.6 * np.log(p / (1 - p)))
    y = (rng.uniform(size=n) < mu).astype(np.int64)
    return y, p, w, p, mu


def population(name, rng, n=4 * 10**6, cells=1 << 16):
    """The generator's law as a grouped statistic on a fine grid (see above)."""
    _, _, w, p, mu = draw(name, n, rng)
    w = np.ones(n) if w is None else w
    key = np.minimum((p * cells).astype(np.int64), cells - 1)
    W = np.bincount(key, w, cells)
    keep = W > 0
    vw = np.bincount(key, w * p, cells)[keep]
    P = np.bincount(key, w * mu, cells)[keep]
    W = W[keep]
    return GroupedStatistic(vw / W, W, P)


MEASURES = {
    "smCE": SmoothCalibrationError(),
    "cutoff": CutoffCalibrationError(),
    "SCDL": SoftBinnedCDL(),
    "ECE": BinnedECE(),
    "CDL": CalibrationDecisionLoss(),
    "dCE": LowerDistanceToCalibration(),
    "UCE": UtilityCalibrationError(),
}
# the population value of each measure's grouped core (UCE top-class: cutoff's)
CORE = {"UCE": CutoffCalibrationError()}
DEFAULT_MEASURES = ("smCE", "cutoff", "SCDL", "ECE", "CDL")
GENERATORS = ("calibrated", "shifted", "tempered", "multiclass", "weighted")


def _best(f, repeat=3):
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - start)
    return best


def speed(n, names, rng):
    binary = draw("shifted", n, rng)[:2]
    print(f"n = {n}, shifted generator (UCE: multiclass); seconds, best of 3")
    print(f"{'measure':7s} {'measure s':>10s} {'interval s':>11s} {'ratio':>7s} method")
    for name in names:
        measure = MEASURES[name]
        y, p = draw("multiclass", n, rng)[:2] if name == "UCE" else binary
        t_measure = _best(lambda m=measure, y=y, p=p: m(y, p))
        ci = measure.interval(y, p, random_state=0)
        t_interval = _best(lambda m=measure, y=y, p=p: m.interval(y, p, random_state=0))
        print(
            f"{name:7s} {t_measure:10.3f} {t_interval:11.3f} "
            f"{t_interval / t_measure:7.1f} {ci.method}",
            flush=True,
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=500)
    parser.add_argument("--resamples", type=int, default=200)
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 2000, 10000])
    parser.add_argument("--measures", nargs="+", default=list(DEFAULT_MEASURES))
    parser.add_argument("--generators", nargs="+", default=list(GENERATORS))
    parser.add_argument("--reps-large", type=int, default=None,
                        help="repetitions at n >= 10000 (default: --reps)")
    parser.add_argument("--dce-reps", type=int, default=100,
                        help="repetitions for dCE (one linear program per resample)")
    parser.add_argument("--speed", action="store_true")
    parser.add_argument("--speed-n", type=int, default=10**6)
    args = parser.parse_args()
    rng = np.random.default_rng(20261125)
    if args.speed:
        speed(args.speed_n, args.measures, rng)
        return
    truth = {}
    for g in args.generators:
        G = population(g, rng)
        truth[g] = {
            name: float(CORE.get(name, m)._grouped_core(G))
            for name, m in MEASURES.items()
            if name in args.measures and (name != "UCE" or g == "multiclass")
        }
    print("population values (numeric integration, 2**16 cells):")
    for g in args.generators:
        print(f"  {g:11s} " + "  ".join(f"{k} {v:.4f}" for k, v in truth[g].items()))
    print(
        f"\nconfidence 0.95, method auto, {args.resamples} resamples; reps per row")
    print(f"{'measure':7s} {'generator':11s} {'n':>6s} {'reps':>5s} {'coverage':>9s} "
          f"{'median width':>13s} {'mean est':>9s} {'mean debiased':>14s} {'truth':>7s}"
          f" {'s/interval':>10s}")
    for name in args.measures:
        measure = MEASURES[name]
        for g in args.generators:
            if name not in truth[g]:
                continue
            theta = truth[g][name]
            for n in args.sizes:
                reps = args.dce_reps if name == "dCE" else args.reps
                if n >= 10000 and args.reps_large is not None and name != "dCE":
                    reps = args.reps_large
                hit, width, est, deb = [], [], [], []
                start = time.perf_counter()
                for _ in range(reps):
                    y, y_prob, w, _, _ = draw(g, n, rng)
                    ci = measure.interval(
                        y, y_prob, sample_weight=w, n_resamples=args.resamples,
                        random_state=rng.integers(2**32),
                    )
                    hit.append(ci.low <= theta <= ci.high)
                    width.append(ci.high - ci.low)
                    est.append(ci.estimate if name != "CDL" else ci.plug_in)
                    deb.append(np.nan if ci.debiased is None else ci.debiased)
                deb = deb if not np.all(np.isnan(deb)) else [np.nan]
                seconds = (time.perf_counter() - start) / reps
                mean_deb = np.nanmean(deb) if len(deb) > 1 else np.nan
                print(
                    f"{name:7s} {g:11s} {n:6d} {reps:5d} {np.mean(hit):9.3f} "
                    f"{np.median(width):13.4f} {np.mean(est):9.4f} {mean_deb:14.4f} "
                    f"{theta:7.4f} {seconds:10.3f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
