"""dCE (``lower_distance_to_calibration``) against ``np.sort`` of the same scores.

Targets of issue 26: 1 ms at n = 10^4, within 3x ``np.sort`` at 10^5 and
2.5x at 10^7; the dCE tolerant tester at n = 2,000 within 0.5 s.

"Before" and "after" run in one process, interleaved, on the same data:
"before" is the HiGHS path (``_ldtc._USE_SIMPLEX = False``: merged blocks
of split columns refined by warm-started HiGHS solves, graded cuts), "after"
the dedicated simplex of ``skcal._kernels._dce_simplex`` (the default; it
falls back to HiGHS when it does not certify a solve: the fallbacks are
counted and printed). Both give the same value (printed: the difference).
Times are CPU seconds (``time.process_time``: what a loaded machine
inflates least), the median of ``--repeats`` runs of the public function
(grouping included); the ratio is to ``np.sort`` of the same scores timed
the same way. The output of the default run is kept in
``benchmarks/results/bench_dce_simplex.txt``.

    python benchmarks/bench_dce.py                 # n = 1e4, 1e5, 1e6
    python benchmarks/bench_dce.py --max-n 1e7     # up to 1e7 (minutes)
    python benchmarks/bench_dce.py --tester        # the dCE tolerant tester too
    python benchmarks/bench_dce.py --draws 200     # only the resample re-solves

``--draws`` times the re-solves of one ``(values, grid)`` with new masses
(``_ldtc._Session``) at n = 2,000 on the default grid: "before" is the
session of commit ``741d6f4`` (read with ``git show`` and run against the
installed package), "after" the installed one, interleaved in one process
on the same draws; the largest difference of the values is printed.
``--tester`` times the dCE tolerant tester's ``fit`` at n = 2,000 with
every draw solved and with the branch and bound over the draws
(``skcal.tester._dcebound``), the draws each solved, and the time of then
reading ``null_statistics_``.
"""

import argparse
import os
import subprocess
import time

import numpy as np

import skcal.metrics._ldtc as ldtc
from skcal import lower_distance_to_calibration
from skcal.tester import CalibrationTester

VERSIONS = (("before", False), ("after", True))  # ldtc._USE_SIMPLEX


def cpu(func):
    t0 = time.process_time()
    out = func()
    return out, time.process_time() - t0


def data(n, seed):
    rng = np.random.default_rng(seed)
    p = rng.random(n)
    y = (rng.random(n) < np.clip(p + 0.03, 0, 1)).astype(np.int64)
    return y, p


def measure(n, repeats):
    y, p = data(n, 0)
    times = {name: [] for name, _ in VERSIONS}
    values = {}
    sort = []
    counts = dict(ldtc.simplex_counts)
    for _ in range(repeats):
        sort.append(cpu(lambda: np.sort(p))[1])
        for name, simplex in VERSIONS:
            ldtc._USE_SIMPLEX = simplex
            values[name], seconds = cpu(lambda: lower_distance_to_calibration(y, p))
            times[name].append(seconds)
    ldtc._USE_SIMPLEX = True
    solves = ldtc.simplex_counts["solves"] - counts["solves"]
    fallbacks = ldtc.simplex_counts["fallbacks"] - counts["fallbacks"]
    s = float(np.median(sort))
    before, after = (float(np.median(times[name])) for name, _ in VERSIONS)
    print(
        f"{n:>9} {s * 1e3:>9.2f} {before * 1e3:>10.2f} {before / s:>7.1f}x "
        f"{after * 1e3:>10.2f} {after / s:>7.1f}x {before / after:>6.2f} "
        f"{abs(values['before'] - values['after']):>9.1e} {fallbacks:>4}/{solves}",
        flush=True,
    )


SESSION_BEFORE = "741d6f4"


def session_before():
    """``_Session`` of ``_ldtc.py`` at ``SESSION_BEFORE``, on today's package."""
    import skcal._specs as specs

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    source = subprocess.run(
        ["git", "show", f"{SESSION_BEFORE}:skcal/metrics/_ldtc.py"],
        cwd=root, capture_output=True, text=True, check=True,
    ).stdout
    namespace = {"__name__": "skcal.metrics._ldtc_before", "__package__": "skcal.metrics"}
    register, specs.register = specs.register, lambda spec: spec  # registered already
    try:
        exec(compile(source, f"{SESSION_BEFORE}:_ldtc.py", "exec"), namespace)
    finally:
        specs.register = register
    return namespace["_Session"]


def versions():
    return (("before", session_before()), ("after", ldtc._Session))


def draws(n_draws):
    rng = np.random.default_rng(0)  # the data of bench_tester.py --dce-tolerant
    p = np.sort(rng.random(2000))
    w = np.full(2000, 1 / 2000)
    u = ldtc.grid_points(100)
    outcomes = [(rng.random(2000) < p).astype(float) for _ in range(n_draws)]
    print(f"\nre-solves of one session, n = 2000, grid 100, {n_draws} resampled outcomes "
          "(target 0.5 ms a draw)")
    print(f"{'version':>8} {'cpu ms/draw':>11} {'speedup':>7} {'max |diff|':>10}")
    sessions = {name: session_class(p, u) for name, session_class in versions()}
    times = {name: 0.0 for name in sessions}
    values = {name: [] for name in sessions}
    for session in sessions.values():
        session.solve(w * (1 - outcomes[0]), w * outcomes[0])  # first solve: cold
    # interleaved in chunks of 10 draws, so that both see the same load
    for start in range(1, n_draws, 10):
        for name, session in sessions.items():
            chunk = outcomes[start:start + 10]
            out, seconds = cpu(lambda s=session, chunk=chunk: [s.solve(w * (1 - y), w * y)
                                                               for y in chunk])
            times[name] += seconds / (n_draws - 1)
            values[name] += out
    values = {name: np.array(out) for name, out in values.items()}
    diff = float(np.max(np.abs(values["before"] - values["after"])))
    for name in times:
        print(f"{name:>8} {times[name] * 1e3:>11.3f} "
              f"{times['before'] / times[name]:>6.2f}x {diff:>10.1e}", flush=True)


def tester(n_resamples):
    import skcal.tester._dcebound as dcebound

    rng = np.random.default_rng(0)  # the data of bench_tester.py --dce-tolerant
    p = rng.random(2000)
    y = (rng.random(2000) < p).astype(float)
    print(f"\ndCE tolerant tester, n = 2000, tolerance 0.02, {n_resamples} draws "
          "(target 0.5 s at 999); every: all draws solved at fit; branch and bound: "
          "only those the answers need (the rest when null_statistics_ is read)")
    print(f"{'version':>16} {'fit cpu s':>9} {'solved':>6} {'null cpu s':>10} decision "
          "threshold min_epsilon")
    nulls = {}
    for name, on in (("every", False), ("branch and bound", True)):
        dcebound._BRANCH_AND_BOUND = on
        test = CalibrationTester(measure="dce", tolerance=0.02, random_state=0,
                                 n_resamples=n_resamples)
        result, seconds = cpu(lambda test=test: test.fit(y, p).result_)
        lazy = test.__dict__.get("_null_statistics")
        solved = lazy.n_solved if isinstance(lazy, dcebound._DceNull) else n_resamples
        nulls[name], null_seconds = cpu(lambda test=test: np.asarray(test.null_statistics_))
        print(f"{name:>16} {seconds:>9.2f} {solved:>6} {null_seconds:>10.2f} "
              f"{result.calibrated!s:>8} {result.threshold:.15g} {result.min_epsilon:.15g}",
              flush=True)
    dcebound._BRANCH_AND_BOUND = True
    print("null_statistics_ identical: "
          f"{np.array_equal(nulls['every'], nulls['branch and bound'])}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-n", type=float, default=1e6)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--tester", action="store_true")
    parser.add_argument("--n-resamples", type=int, default=999)
    parser.add_argument("--draws", type=int, default=0)
    args = parser.parse_args()
    if args.draws:
        draws(args.draws)
        return
    print("CPU ms (median); ratios to np.sort of the same scores; the machine may be loaded")
    print(f"{'n':>9} {'np.sort':>9} {'before':>10} {'ratio':>8} {'after':>10} "
          f"{'ratio':>8} {'speedup':>6} {'|diff|':>9} fallbacks")
    n = 10**4
    while n <= args.max_n:
        measure(n, args.repeats if n < 10**7 else max(1, args.repeats // 2))
        n *= 10
    if args.tester:
        tester(args.n_resamples)


if __name__ == "__main__":
    main()
