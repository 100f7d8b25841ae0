"""Fit time of every recalibrator family, against isotonic regression.

For each family in ``FAMILIES`` (one line each: add yours there), print the
wall time of one ``fit`` on generated probabilities at n = 1e5 rows with
C = 10 and C = 2 classes, and its ratio to the time of fitting one
``sklearn.isotonic.IsotonicRegression`` per class (column ``k`` against
``y == k``) on the same data. The issue's bar is a fit of at most 1 s at
n = 1e5, C = 10. Each time is the best of ``--repeat`` runs (default 3).

Run: ``python benchmarks/bench_recalibrators.py [--n 100000] [--repeat 3]
[--only name ...]``.
"""

import argparse
import time

import numpy as np
from sklearn.isotonic import IsotonicRegression

import skcal.recalibration as rc

# name -> factory; one line per family
FAMILIES = {
    "sigmoid": lambda: rc.SigmoidCalibration(),
    "beta": lambda: rc.BetaCalibration(),
    "temperature": lambda: rc.TemperatureScaling(),
    "vector": lambda: rc.VectorScaling(),
    "matrix": lambda: rc.MatrixScaling(),
    "dirichlet-odir": lambda: rc.DirichletCalibration(random_state=0),
    "dirichlet-l2": lambda: rc.DirichletCalibration(reg="l2", random_state=0),
}


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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args(argv)
    names = args.only or list(FAMILIES)
    print(f"n = {args.n}; best of {args.repeat}; ratio = fit / isotonic fit per class")
    print("wall and CPU (this process) seconds; on a shared machine the CPU time is "
          "closer to the wall time of a quiet one")
    print(f"{'family':<18}{'C':>4}{'fit wall':>10}{'fit cpu':>9}{'iso wall':>10}"
          f"{'iso cpu':>9}{'ratio wall':>12}{'ratio cpu':>11}")
    for C in (10, 2):
        P, y = make_data(args.n, C)
        iso, iso_cpu = best_time(lambda P=P, y=y: isotonic_per_class(P, y), args.repeat)
        for name in names:
            factory = FAMILIES[name]
            t, cpu = best_time(lambda f=factory, P=P, y=y: f().fit(P, y), args.repeat)
            flag = "  > 1 s" if min(t, cpu) > 1.0 else ""
            print(f"{name:<18}{C:>4}{t:>10.3f}{cpu:>9.3f}{iso:>10.3f}{iso_cpu:>9.3f}"
                  f"{t / iso:>12.1f}{cpu / iso_cpu:>11.1f}{flag}")


if __name__ == "__main__":
    main()
