"""Time utility calibration: comb, top-class, class-wise, sampled families.

Synthetic Dirichlet predictions over C classes with labels drawn from a
sharper (over-confident) version of them. Printed, in one run:

* "comb" and "class-wise" by the cutoff path of their 0/1 members
  (``skcal.metrics._uc_binary``) against the general path that every
  utility can take (``_general_intervals``: a radix argsort of each ``v``
  and a gathering scan; what every family took before), with the largest
  difference between the two (rounding only);
* the top-class utility against the top-label cutoff error (the same
  number, which is checked) and against ``np.argmax`` plus that binary
  measure's own cost;
* the sampled linear and rank families (eCDF), per utility, as a ratio to
  one ``np.argsort`` of n floats.

Times are medians over ``--repeat`` runs of CPU time of this process
(``time.process_time``) and of wall time; on a shared, loaded machine the
CPU time is the one to read (wall time counts the time other processes
held the cores). The CPU and numpy's SIMD features are printed.

    python benchmarks/bench_multiclass.py                 # n = 50 000, C = 10, 100, 1000
    python benchmarks/bench_multiclass.py --n-classes 100 --repeat 5
"""

import argparse
import os
import platform
import time

import numpy as np

import skcal
from skcal import cutoff_calibration_error, utility_calibration_ecdf, utility_calibration_error
from skcal.metrics._multiclass import _general_intervals, worst_intervals
from skcal.utilities._engine import Predictions
from skcal.utilities._families import members, resolve_utility


def measure(func, repeat):
    """Median CPU and wall seconds of ``func()``, and its last result."""
    cpu, wall = [], []
    for _ in range(repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        out = func()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return float(np.median(cpu)), float(np.median(wall)), out


def make_data(n, n_classes, seed=0):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.full(n_classes, 0.05), size=n)
    # the truth is a sharper version of P: the model is over-confident
    Q = P**1.5
    Q /= Q.sum(axis=1, keepdims=True)
    u = rng.random(n)[:, None]
    y = np.minimum((np.cumsum(Q, axis=1) < u).sum(axis=1), n_classes - 1)
    return y, P


def cpu_description():
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as feats

        simd = [k for k in ("AVX2", "AVX512F", "AVX512_SKX", "AVX512_ICL", "AVX512_SPR")
                if feats.get(k)]
    except ImportError:  # numpy < 2
        simd = []
    return f"{model}; numpy SIMD: {', '.join(simd) or 'unknown'}"


def family_rows(y, P, repeat):
    n, C = P.shape
    w = np.ones(n)
    rows = []
    for name in ("comb", "class-wise"):
        utilities = members(resolve_utility(name), C)
        c_new, w_new, new = measure(
            lambda u=utilities: worst_intervals(u, Predictions(P, y), w), repeat
        )
        c_old, w_old, old = measure(
            lambda u=utilities: _general_intervals(u, Predictions(P, y), w), repeat
        )
        diff = float(np.abs(new[0] - old[0]).max())
        rows.append((name, len(utilities), c_old, c_new, w_old, w_new, diff))
    return rows


def top_class_row(y, P, repeat):
    labels = np.arange(P.shape[1])
    c_uc, w_uc, uc = measure(
        lambda: utility_calibration_error(y, P, "top-class", labels=labels), repeat
    )
    c_cut, w_cut, cut = measure(
        lambda: cutoff_calibration_error(y, P, labels=labels), repeat
    )
    c_arg, w_arg, _ = measure(lambda: np.argmax(P, axis=1), repeat)
    confidence = P.max(axis=1)
    correct = (P.argmax(axis=1) == y).astype(np.int64)
    c_bin, w_bin, _ = measure(lambda: cutoff_calibration_error(correct, confidence), repeat)
    return c_uc, c_cut, c_arg, c_bin, uc == cut


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=50_000)
    parser.add_argument("--n-classes", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--n-utilities", type=int, default=1500)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-sampled", action="store_true", help="skip linear/rank")
    args = parser.parse_args()

    n = args.n
    print(f"skcal {skcal.__version__}, numpy {np.__version__}, Python "
          f"{platform.python_version()}")
    print(f"CPU: {cpu_description()}; {os.cpu_count()} logical CPUs, "
          f"load {os.getloadavg()[0]:.1f}")
    print(f"n = {n}; medians of {args.repeat} runs; CPU seconds of this process "
          "(wall seconds in brackets)\n")
    print(f"{'C':>5} {'family':<11} {'utilities':>9} {'general path':>20} "
          f"{'cutoff path':>20} {'speed-up':>8} {'max |diff|':>10}")
    for C in args.n_classes:
        y, P = make_data(n, C)
        for name, m, c_old, c_new, w_old, w_new, diff in family_rows(y, P, args.repeat):
            print(f"{C:>5} {name:<11} {m:>9} {c_old:>9.3f} [{w_old:>8.3f}] "
                  f"{c_new:>9.3f} [{w_new:>8.3f}] {c_old / c_new:>8.2f} {diff:>10.1e}")
    print("\ntop-class UC against the top-label cutoff error (same number?) and "
          "against np.argmax + the binary cutoff error of (confidence, correct)")
    print(f"{'C':>5} {'UC top [s]':>10} {'cutoff [s]':>10} {'/cutoff':>8} "
          f"{'argmax [s]':>10} {'binary [s]':>10} {'/(argmax+binary)':>16} {'same':>5}")
    for C in args.n_classes:
        y, P = make_data(n, C)
        c_uc, c_cut, c_arg, c_bin, same = top_class_row(y, P, max(args.repeat, 5))
        print(f"{C:>5} {c_uc:>10.4f} {c_cut:>10.4f} {c_uc / c_cut:>8.2f} {c_arg:>10.4f} "
              f"{c_bin:>10.4f} {c_uc / (c_arg + c_bin):>16.2f} {str(same):>5}")
    if args.no_sampled:
        return
    C, M = args.n_classes[-1], args.n_utilities
    y, P = make_data(n, C)
    labels = np.arange(C)
    x = np.random.default_rng(1).random(n)
    print(f"\nsampled families at C = {C}: time per utility / np.argsort(n)")
    for family in ("linear", "rank"):
        c_sort, _, _ = measure(lambda: np.argsort(x), 7)
        c, w, _ = measure(
            lambda f=family: utility_calibration_ecdf(
                y, P, f, n_utilities=M, random_state=0, labels=labels
            ),
            args.repeat,
        )
        print(f"{family:<8} {M:>5} utilities {c:>8.2f} s [{w:>8.2f}] "
              f"{c / M / c_sort:>6.2f} x argsort")


if __name__ == "__main__":
    main()
