"""Fit time of every recalibrator family, against isotonic regression.

For each family in ``FAMILIES`` (one line each: add yours there), print the
wall time of one ``fit`` on generated probabilities at n = 1e5 rows with
C = 10 and C = 2 classes, and its ratio to the time of fitting one
``sklearn.isotonic.IsotonicRegression`` per class (column ``k`` against
``y == k``) on the same data. The issue's bar is a fit of at most 1 s at
n = 1e5, C = 10. Each time is the best of ``--repeat`` runs (default 3).

Run: ``python benchmarks/bench_recalibrators.py [--n 100000] [--repeat 3]
[--only name ...] [--classes 10 2] [--before DIR]``. The issue's other bar,
``AutoRecalibrator().fit`` within 10 times ``IsotonicCalibration().fit`` at
n = 1e5, C = 5: ``--only isotonic-skcal auto --classes 5`` (the ratio is
printed below the table). With ``--before DIR`` (a directory
holding another build of skcal, e.g. the Python files of an older commit
with the compiled kernels copied in) every family is also timed by that
build, in a separate process run first, and both are printed with the
ratio after / before. With ``--rounds R`` (and ``--before``) both builds
are timed in ``R`` alternating pairs of processes (before, after, before,
...) and each time is the best over the rounds: on a loaded machine the
load drifts over a run, and alternating spreads it over both builds.
"""

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np
from sklearn.isotonic import IsotonicRegression

if "--path" in sys.argv:  # a worker timing another build (see --before)
    # an editable install's import hook would shadow the other build
    sys.meta_path[:] = [f for f in sys.meta_path if "Mesonpy" not in type(f).__name__]
    sys.path.insert(0, sys.argv[sys.argv.index("--path") + 1])

import skcal.recalibration as rc  # noqa: E402

# name -> factory; one line per family
FAMILIES = {
    "sigmoid": lambda: rc.SigmoidCalibration(),
    "beta": lambda: rc.BetaCalibration(),
    "temperature": lambda: rc.TemperatureScaling(),
    "vector": lambda: rc.VectorScaling(),
    "matrix": lambda: rc.MatrixScaling(),
    "dirichlet-odir": lambda: rc.DirichletCalibration(random_state=0),
    "dirichlet-l2": lambda: rc.DirichletCalibration(reg="l2", random_state=0),
    "isotonic": lambda: rc.IsotonicCalibration(random_state=0),
    "histogram": lambda: rc.HistogramBinning(random_state=0),
    "scaling-binning": lambda: rc.ScalingBinning(random_state=0),
    "spline": lambda: rc.SplineCalibration(random_state=0),
    "venn-abers": lambda: rc.VennAbersCalibration(),
    # the first bar: auto within 10 x skcal's isotonic fit (n = 1e5, C = 5)
    "isotonic-skcal": lambda: rc.IsotonicCalibration(random_state=0),
    "auto": lambda: rc.AutoRecalibrator(random_state=0),
}


# the key of scikit-learn's one-vs-rest isotonic regression (the reference of
# the ratios) in a timing table; not "isotonic", which is skcal's family
# (before, the family's time overwrote the reference's under that key, so the
# printed ratios were to skcal's IsotonicCalibration)
REFERENCE = "sklearn-isotonic-per-class"


def make_data(n, C, seed=0):
    """Overconfident, slightly class-biased probabilities and labels drawn from the truth."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, C)) * 2.0 + np.linspace(0, 0.5, C)
    truth = np.exp(logits - logits.max(1, keepdims=True))
    truth /= truth.sum(1, keepdims=True)
    u = rng.uniform(size=(n, 1))
    y = np.minimum((truth.cumsum(1) < u).sum(1), C - 1)
    shown = np.exp(2.0 * (logits - logits.max(1, keepdims=True)))
    return shown / shown.sum(1, keepdims=True), y


def best_time(fit, repeat):
    """Best wall time and best CPU time (of this process) over ``repeat`` runs."""
    walls, cpus = [], []
    for _ in range(repeat):
        start, cpu = time.perf_counter(), time.process_time()
        fit()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return min(walls), min(cpus)


def isotonic_per_class(P, y):
    for k in range(P.shape[1]):
        IsotonicRegression(out_of_bounds="clip").fit(P[:, k], y == k)


def timings(names, n, repeat, classes=(10, 2)):
    """``{C: {REFERENCE: (wall, cpu), name: (wall, cpu)}}`` for C in ``classes``."""
    out = {}
    for C in classes:
        P, y = make_data(n, C)
        res = {REFERENCE: best_time(lambda P=P, y=y: isotonic_per_class(P, y), repeat)}
        for name in names:
            factory = FAMILIES[name]
            res[name] = best_time(lambda f=factory, P=P, y=y: f().fit(P, y), repeat)
        out[C] = res
    return out


def _best(tables):
    """Elementwise best (smallest) wall and CPU times over several runs' tables."""
    out = {}
    for table in tables:
        for C, res in table.items():
            for name, (wall, cpu) in res.items():
                old = out.setdefault(C, {}).get(name)
                out[C][name] = (wall, cpu) if old is None else (min(old[0], wall),
                                                                 min(old[1], cpu))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--classes", nargs="*", type=int, default=[10, 2])
    parser.add_argument("--before", default=None, help="directory with another skcal build")
    parser.add_argument("--rounds", type=int, default=1,
                        help="with --before: alternating (before, after) process pairs")
    parser.add_argument("--path", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    names = args.only or list(FAMILIES)
    if args.path is not None or args.worker:
        known = [name for name in names if name in FAMILIES]
        print(json.dumps({str(C): r for C, r in
                          timings(known, args.n, args.repeat, args.classes).items()}))
        return
    before = None
    if args.before is not None:
        def worker(path):
            cmd = [sys.executable, os.path.abspath(__file__), "--n", str(args.n), "--repeat",
                   str(args.repeat), "--classes", *map(str, args.classes), "--only", *names]
            cmd += ["--path", os.path.abspath(path)] if path else ["--worker"]
            result = subprocess.run(cmd, capture_output=True, text=True, check=True,
                                    cwd=os.path.expanduser("~") if path else None)
            return json.loads(result.stdout.strip().splitlines()[-1])

        if args.rounds > 1:
            runs = [(worker(args.before), worker(None)) for _ in range(args.rounds)]
            before = _best(r[0] for r in runs)
            after = {int(C): r for C, r in _best(r[1] for r in runs).items()}
        else:
            before = worker(args.before)
    if args.before is None or args.rounds <= 1:
        after = timings(names, args.n, args.repeat, args.classes)
    rounds = f" in each of {args.rounds} alternating rounds" if args.rounds > 1 else ""
    print(f"n = {args.n}; best of {args.repeat}{rounds}; ratio = fit / isotonic fit per class")
    print("wall and CPU (this process) seconds; on a shared machine the CPU time is "
          "closer to the wall time of a quiet one")
    extra = f"{'before cpu':>11}{'after/before':>13}" if before else ""
    print(f"{'family':<18}{'C':>4}{'fit wall':>10}{'fit cpu':>9}{'iso wall':>10}"
          f"{'iso cpu':>9}{'ratio wall':>12}{'ratio cpu':>11}{extra}")
    for C, res in after.items():
        iso, iso_cpu = res[REFERENCE]
        for name in names:
            t, cpu = res[name]
            flag = "  > 1 s" if min(t, cpu) > 1.0 else ""
            cells = ""
            if before is not None:
                old = before[str(C)].get(name)
                cells = (f"{old[1]:>11.3f}{cpu / old[1]:>13.2f}" if old
                         else f"{'-':>11}{'-':>13}")
            print(f"{name:<18}{C:>4}{t:>10.3f}{cpu:>9.3f}{iso:>10.3f}{iso_cpu:>9.3f}"
                  f"{t / iso:>12.1f}{cpu / iso_cpu:>11.1f}{cells}{flag}")
        if "auto" in res and "isotonic-skcal" in res:
            for label, table in (("after", res), ("before", before and before[str(C)])):
                if table and "auto" in table and "isotonic-skcal" in table:
                    print(f"  C = {C}, {label}: auto / IsotonicCalibration fit = "
                          f"{table['auto'][0] / table['isotonic-skcal'][0]:.1f} (wall), "
                          f"{table['auto'][1] / table['isotonic-skcal'][1]:.1f} (CPU); "
                          "auto / scikit-learn's isotonic per class = "
                          f"{table['auto'][0] / table[REFERENCE][0]:.1f} (wall), "
                          f"{table['auto'][1] / table[REFERENCE][1]:.1f} (CPU); "
                          "the issue's bar is 10")


if __name__ == "__main__":
    main()
