"""Error rates of CalibrationMonitor under continuous monitoring, by simulation.

Streams of 20,000 rows, looked at every 100 rows (200 looks); a stream
"alarms" at the first look where the monitor's e-value is at least 1/alpha.
The monitor's arithmetic is run for all streams at once (the same
``skcal._eprocess.BettingEProcess`` the public ``skcal.CalibrationMonitor``
runs for one stream; the script first checks on a few streams that the two
give identical e-values). Forecasts ``p ~ U[0, 1]`` per row; outcomes:

* ``calibrated``: ``y ~ Bernoulli(p)`` (false-alarm rate, target <= alpha);
* ``shift +0.05`` / ``shift -0.05``: ``y ~ Bernoulli(clip(p +- 0.05))`` from row 1;
* ``tempered``: ``y ~ Bernoulli(sigmoid(1.5 logit p))`` (under-confident
  forecasts, no overall bias);
* ``drift at 10,000``: calibrated, then ``shift +0.05`` from row 10,001 (the
  delay is counted from there);
* multiclass (3 classes, ``P ~ Dirichlet(1, 1, 1)``, top-label): ``calibrated``
  (``y ~ Categorical(P)``) and ``overconfident`` (``y ~ Categorical(0.7 P +
  0.1)``); only ``1{y = argmax P}`` enters the top-label monitor, so it is
  drawn directly as ``Bernoulli`` of the true top-label probability.

Columns: the fraction of streams that alarm by row 20,000 (false-alarm rate
on calibrated streams, power otherwise) with 2 binomial standard errors; the
fraction alarming within 5,000 rows of the onset; the median delay (rows from
the onset to the alarming look, over alarming streams).

The baseline "repeat a fixed-n CalibrationTester at every look" re-runs
``CalibrationTester("cutoff", threshold="resample", n_resamples=199)`` on all
rows so far at every look; it is slow, so it runs on fewer streams and the
first 5,000 rows (50 looks): its false-alarm rate is already inflated there.

Run: ``python benchmarks/monitor_error_rates.py [--quick] [--part PART]``
(``--quick``: 200 streams, fewer tester streams; ``--part monitor`` or
``tester`` runs one half).
"""

import argparse
import math
import platform
import sys
import time

import numpy as np

import skcal
from skcal import CalibrationMonitor, CalibrationTester
from skcal._eprocess import DEFAULT_RESTART, BettingEProcess

ALPHA = 0.05
T = 20_000
LOOK = 100
ONSET = 10_000


def truth(kind, p, t):
    if kind in ("calibrated", "mc-calibrated"):
        return p
    if kind == "shift +0.05":
        return np.clip(p + 0.05, 0.0, 1.0)
    if kind == "shift -0.05":
        return np.clip(p - 0.05, 0.0, 1.0)
    if kind == "tempered":
        logit = np.log(p) - np.log1p(-p)
        return 1.0 / (1.0 + np.exp(-1.5 * logit))
    if kind == "drift at 10,000":
        return p if t < ONSET else np.clip(p + 0.05, 0.0, 1.0)
    raise ValueError(kind)


def draw(kind, n, t, rng):
    """Forecasts and outcomes of row t for n streams (top-label for multiclass)."""
    if kind.startswith("mc-"):
        P = rng.dirichlet(np.ones(3), size=n)
        top = P.argmax(axis=1)
        conf = P[np.arange(n), top]
        true_top = conf if kind == "mc-calibrated" else 0.7 * conf + 0.1
        return conf, (rng.uniform(size=n) < true_top).astype(np.float64)
    p = rng.uniform(size=n)
    return p, (rng.uniform(size=n) < truth(kind, p, t)).astype(np.float64)


def simulate(kind, n_streams, method, seed):
    rng = np.random.default_rng(seed)
    scales = (1, 2, 4, 8) if method == "bins" else (1,)
    process = BettingEProcess(n_streams, scales, DEFAULT_RESTART)
    alarm = np.full(n_streams, -1)
    threshold = math.log(1.0 / ALPHA)
    for t in range(T):
        p, y = draw(kind, n_streams, t, rng)
        process.step(y, p)
        if (t + 1) % LOOK == 0:
            new = (alarm < 0) & (process.log_e() >= threshold)
            alarm[new] = t + 1
    return alarm


def repeated_tester(kind, n_streams, n_rows, seed):
    rng = np.random.default_rng(seed)
    alarm = np.full(n_streams, -1)
    for s in range(n_streams):
        rows = [draw(kind, 1, t, rng) for t in range(n_rows)]
        p = np.array([r[0][0] for r in rows])
        y = np.array([r[1][0] for r in rows])
        tester = CalibrationTester("cutoff", threshold="resample", n_resamples=199,
                                   random_state=s)
        for end in range(LOOK, n_rows + 1, LOOK):
            if not tester.decide(y[:end], p[:end]).calibrated:
                alarm[s] = end
                break
    return alarm


def check_same_as_public(n_streams=3, n_rows=2000):
    """The vectorised process and CalibrationMonitor agree, stream by stream."""
    rng = np.random.default_rng(7)
    p = rng.uniform(size=(n_rows, n_streams))
    y = (rng.uniform(size=(n_rows, n_streams)) < np.clip(p + 0.03, 0, 1)).astype(float)
    process = BettingEProcess(n_streams, restart=DEFAULT_RESTART)
    for t in range(n_rows):
        process.step(y[t], p[t])
    for s in range(n_streams):
        e = CalibrationMonitor().update(y[:, s], p[:, s]).e_value_
        assert math.isclose(e, math.exp(process.log_e()[s]), rel_tol=1e-9), (e, s)


def summary(alarm, onset):
    n = alarm.shape[0]
    hit = alarm > 0
    rate = hit.mean()
    se = math.sqrt(max(rate * (1 - rate), 1e-12) / n)
    within = ((alarm > onset) & (alarm <= onset + 5000)).mean()
    delays = alarm[hit] - onset
    median = f"{np.median(delays):7.0f}" if hit.any() else "      -"
    return rate, se, within, median


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--part", choices=["all", "monitor", "tester"], default="all")
    args = parser.parse_args()
    n_streams = 200 if args.quick else 1000
    n_tester = 20 if args.quick else 100
    check_same_as_public()
    print(f"skcal {skcal.__version__}, numpy {np.__version__}, "
          f"CPython {platform.python_version()}; alpha = {ALPHA}; "
          f"{n_streams} streams x {T} rows, looks every {LOOK} rows")
    print("vectorised process == CalibrationMonitor on 3 streams: checked\n")
    head = (f"{'procedure':34s} {'stream':22s} {'alarm rate':>10s} {'+-2se':>6s} "
            f"{'<=5000 rows':>11s} {'median delay':>12s} {'time':>6s}")
    print(head)
    print("-" * len(head))
    kinds = ["calibrated", "shift +0.05", "shift -0.05", "tempered",
             "drift at 10,000", "mc-calibrated", "mc-overconfident"]
    for method in ("bins", "bias") if args.part != "tester" else ():
        for i, kind in enumerate(kinds):
            if method == "bias" and kind.startswith("mc-"):
                continue
            t0 = time.perf_counter()
            alarm = simulate(kind, n_streams, method, seed=100 + i)
            onset = ONSET if kind.startswith("drift") else 0
            rate, se, within, median = summary(alarm, onset)
            print(f"{'CalibrationMonitor ' + method:34s} {kind:22s} {rate:10.1%} "
                  f"{200 * se:5.1f}  {within:11.1%} {median:>12s} "
                  f"{time.perf_counter() - t0:5.0f}s", flush=True)
    tester_kinds = ["calibrated", "shift +0.05", "mc-calibrated"]
    for i, kind in enumerate(tester_kinds if args.part != "monitor" else ()):
        t0 = time.perf_counter()
        alarm = repeated_tester(kind, n_tester, 5000, seed=900 + i)
        rate, se, within, median = summary(alarm, 0)
        name = f"fixed-n tester at every look ({n_tester} streams, 5000 rows)"
        print(f"{name[:34]:34s} {kind:22s} {rate:10.1%} {200 * se:5.1f}  "
              f"{within:11.1%} {median:>12s} {time.perf_counter() - t0:5.0f}s",
              flush=True)
    print("\n(fixed-n tester: CalibrationTester('cutoff', threshold='resample', "
          f"n_resamples=199) on all rows so far, {n_tester} streams, 50 looks)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
