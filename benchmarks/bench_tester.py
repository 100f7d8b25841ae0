"""Timing of ``CalibrationTester().decide(y, p)`` (default settings), before and after.

"Before" is ``skcal/tester.py`` of commit 9ffe50e (read with ``git show`` and
run against the installed package's metrics, which that version calls through
the public functions); "after" is the installed version. Both run in the same
process, on the same data, one after the other.

Data: ``p ~ U(0, 1)``, calibrated ``y ~ Bernoulli(p)`` and shifted
``y ~ Bernoulli(min(p + 0.02, 1))``; n = 1e4 and 1e5. The new tester stops
sequentially, so its time depends on the data: it is reported for several
calibrated data sets (seeds) as median and maximum, with the resamples drawn.
The old tester always draws 999 resamples and is timed once per n.

Run: ``python benchmarks/bench_tester.py`` (about two minutes).

``python benchmarks/bench_tester.py --dce-tolerant`` times only the dCE
tolerant test (``measure="dce", tolerance=0.02``, 999 draws) at n = 2,000
(target 0.5 s), before and after in one process: "before" solves every draw
with a new ``scipy.optimize.linprog`` model (``_USE_LINPROG``, one column per
prediction), "after" re-solves one HiGHS model from the previous draw's basis.
Wall and CPU time are printed (CPU is what a loaded machine does not inflate).
"""

import os
import resource
import subprocess
import sys
import time
import types

import numpy as np

from skcal.tester import CalibrationTester

BEFORE = "9ffe50e"


def old_tester():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    source = subprocess.run(
        ["git", "show", f"{BEFORE}:skcal/tester.py"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    module = types.ModuleType("skcal._tester_before")
    module.__package__ = "skcal"
    sys.modules[module.__name__] = module
    exec(compile(source, f"{BEFORE}:skcal/tester.py", "exec"), module.__dict__)
    return module.CalibrationTester


def timed(tester, y, p):
    start = time.perf_counter()
    result = tester.decide(y, p)
    return time.perf_counter() - start, result


def row(n, data, version, seconds, draws, calibrated, note=""):
    print(
        f"{n:>7} {data:>10} {version:>8} {seconds:>9.3f} {draws:>6} "
        f"{calibrated!s:>10}{note}"
    )


def dce_tolerant():
    import skcal.metrics._ldtc as ldtc

    n = 2000
    rng = np.random.default_rng(0)
    p = rng.random(n)
    y = (rng.random(n) < p).astype(float)
    print(f"dCE tolerant test, n = {n}, tolerance 0.02, target 0.5 s")
    print(f"{'version':>8} {'wall s':>8} {'cpu s':>8} {'draws':>6} threshold min_epsilon")
    for version, linprog, merge in [("before", True, 100), ("after", False, 0)]:
        ldtc._USE_LINPROG, ldtc._MERGE_ABOVE_COLUMNS_PER_POINT = linprog, merge
        cpu = time.process_time()
        seconds, result = timed(
            CalibrationTester(measure="dce", tolerance=0.02, random_state=0), y, p
        )
        cpu = time.process_time() - cpu
        print(f"{version:>8} {seconds:>8.2f} {cpu:>8.2f} {result.n_resamples:>6} "
              f"{result.threshold:.6f}  {result.min_epsilon:.6f}", flush=True)


def main():
    if "--dce-tolerant" in sys.argv:
        dce_tolerant()
        return
    print("numpy", np.__version__, "| python", sys.version.split()[0])
    np.show_runtime()
    Old = old_tester()
    print(
        f"\n{'n':>7} {'data':>10} {'version':>8} {'seconds':>9} {'draws':>6} calibrated"
    )
    for n in (10**4, 10**5):
        rng = np.random.default_rng(n)
        p = rng.random(n)
        y = (rng.random(n) < p).astype(float)
        y_bad = (rng.random(n) < np.minimum(p + 0.02, 1)).astype(float)
        before, result = timed(Old(random_state=0), y, p)
        row(n, "calibrated", "before", before, 999, result.calibrated)
        times = []
        for seed in range(5):
            rng_s = np.random.default_rng(1000 + seed)
            y_s = (rng_s.random(n) < p).astype(float)
            seconds, result = timed(CalibrationTester(random_state=seed), y_s, p)
            times.append(seconds)
            row(
                n, "calibrated", "after", seconds, result.n_resamples, result.calibrated
            )
        seconds, result = timed(CalibrationTester(random_state=0), y, p)
        row(
            n,
            "calibrated",
            "after",
            seconds,
            result.n_resamples,
            result.calibrated,
            "  (the data timed before)",
        )
        bad, result = timed(CalibrationTester(random_state=0), y_bad, p)
        row(n, "shifted", "after", bad, result.n_resamples, result.calibrated)
        print(
            f"  n={n}: before {before:.2f} s; after, calibrated: median "
            f"{np.median(times):.3f} s, max {max(times):.3f} s (speed-up "
            f"{before / np.median(times):.0f}x at the median); shifted {bad:.3f} s"
        )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"\npeak resident memory of the process: {peak / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
