"""Time utility calibration over large utility families against np.argsort.

Synthetic Dirichlet predictions over C classes with labels drawn from a
sharper (over-confident) version of them. Each utility costs one sort of its
n predicted utilities plus one pass, so the figure of merit is the time per
utility as a ratio to one ``np.argsort`` of n random floats, timed just
before each case so that both see the same machine load. Times are the
median of ``--repeat`` runs of the full public call, validation included.

    python benchmarks/bench_multiclass.py                 # n = 50 000, C = 1000
    python benchmarks/bench_multiclass.py --n 5000 --n-classes 100 --repeat 5
"""

import argparse
import platform
import time

import numpy as np

import skcal
from skcal import utility_calibration_ecdf, utility_calibration_error

# Target of the issue: each family at n = 50 000, C = 1000 within this.
BUDGET_SECONDS = 60.0


def median_time(func, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        func()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def make_data(n, n_classes, seed=0):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.full(n_classes, 0.05), size=n)
    # the truth is a sharper version of P: the model is over-confident
    Q = P**1.5
    Q /= Q.sum(axis=1, keepdims=True)
    u = rng.random(n)[:, None]
    y = np.minimum((np.cumsum(Q, axis=1) < u).sum(axis=1), n_classes - 1)
    return y, P


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=50_000)
    parser.add_argument("--n-classes", type=int, default=1000)
    parser.add_argument("--n-utilities", type=int, default=1500)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    n, C, M = args.n, args.n_classes, args.n_utilities
    y, P = make_data(n, C)
    labels = np.arange(C)
    x = np.random.default_rng(1).random(n)

    def error(utility):
        return lambda: utility_calibration_error(y, P, utility, labels=labels)

    def ecdf(family):
        return lambda: utility_calibration_ecdf(
            y, P, family, n_utilities=M, random_state=0, labels=labels
        )

    cases = [
        ("top-class", 1, error("top-class")),
        ("comb (class-wise + top-K)", 2 * C, error("comb")),
        (f"linear, {M} sampled (eCDF)", M, ecdf("linear")),
        (f"rank, {M} sampled (eCDF)", M, ecdf("rank")),
    ]

    machine = platform.processor() or platform.machine()
    print(f"skcal {skcal.__version__}, numpy {np.__version__}, {machine}")
    print(f"n = {n}, C = {C}; median of {args.repeat} runs")
    print("ratio = time per utility / np.argsort(n)\n")
    header = f"{'family':<28} {'utilities':>9} {'time [s]':>9} {'per utility [ms]':>17}"
    print(f"{header} {'argsort [ms]':>13} {'ratio':>6}")
    for name, count, func in cases:
        t_sort = median_time(lambda: np.argsort(x), 7)
        t = median_time(func, args.repeat)
        per = t / count
        verdict = "" if t < BUDGET_SECONDS else f"  over the {BUDGET_SECONDS:.0f} s budget"
        print(
            f"{name:<28} {count:>9} {t:>9.2f} {per * 1e3:>17.2f} "
            f"{t_sort * 1e3:>13.2f} {per / t_sort:>6.2f}{verdict}"
        )


if __name__ == "__main__":
    main()
