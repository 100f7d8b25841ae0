"""Time multiclass utility calibration: comb, top-class, top-label cutoff.

Synthetic Dirichlet predictions over C classes with labels drawn from a
sharper (over-confident) version of them, and for the comb UC also the
other generators of ``GENERATORS`` (calibrated, flat, peaked, shifted,
uniform labels). Printed, in one run:

* the comb family (class-wise + top-K, ``2 C`` members) and its two parts,
  on the cutoff path of their 0/1 members (``skcal.metrics._uc_binary``),
  at ``--n`` rows, every member's error (``worst_intervals``); with
  ``--general`` also the general path every utility can take
  (``_general_intervals``) and the largest difference (rounding);
* ``utility_calibration_error(y, P, "comb")``, the family's largest error,
  whose members are computed exactly only where their bounds allow the
  maximum (branch and bound), with the number of members computed exactly,
  on the over-confident data and on each of ``GENERATORS``;
* the top-class utility and the top-label cutoff error (the same number,
  which is checked) against ``np.argmax`` plus the binary cutoff error of
  ``(confidence, correct)``: what the input boundary adds to the measure,
  at ``--n`` and ``--n-large`` rows (a size whose matrix exceeds
  ``--max-gb`` is skipped), with the peak traced memory of one call;
* with ``--sampled``, the sampled linear and rank families (eCDF), per
  utility, as a ratio to one ``np.argsort`` of n floats.

Times are medians over ``--repeat`` runs of CPU time of this process
(``time.process_time``) and of wall time; on a shared, loaded machine the
CPU time is the one to read. The CPU and numpy's SIMD features
(``np.show_runtime()``) are printed.

``--before DIR`` also runs this script, first, on another build of skcal
installed in ``DIR`` (``pip install --target DIR --no-deps <checkout>``;
an editable install of the current checkout is bypassed) and prints its
times beside the current ones: before and after from one run.

    python benchmarks/bench_multiclass.py                 # n = 50 000, C = 10, 100, 1000
    python benchmarks/bench_multiclass.py --before /tmp/skcal-main --n-classes 1000
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import time
import tracemalloc

if os.environ.get("SKCAL_BENCH_PATH"):
    # the 'before' run: import skcal from that directory, not the editable install
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in type(f).__module__]
    sys.path.insert(0, os.environ["SKCAL_BENCH_PATH"])

import numpy as np  # noqa: E402

import skcal  # noqa: E402
from skcal import (  # noqa: E402
    cutoff_calibration_error,
    utility_calibration_ecdf,
    utility_calibration_error,
)
from skcal.metrics._multiclass import _general_intervals, worst_intervals  # noqa: E402
from skcal.utilities._engine import Predictions  # noqa: E402
from skcal.utilities._families import members, resolve_utility  # noqa: E402


def measure(func, repeat):
    """Median CPU and wall seconds of ``func()``, and its last result."""
    cpu, wall = [], []
    for _ in range(repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        out = func()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return float(np.median(cpu)), float(np.median(wall)), out


def traced_peak(func):
    """Peak memory traced (numpy's allocations included) during one call, in MB."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    func()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


# Other predictions for the comb UC, whose branch and bound depends on how far
# the worst member stands out (labels drawn from the truth named):
# calibrated: Dirichlet(0.05) rows, labels from the rows themselves;
# flat: calibrated Dirichlet(1) rows (every member's error is sampling noise
# of about one size: the hardest case for the bounds);
# peaked: calibrated Dirichlet(0.01) rows;
# shifted: Dirichlet(0.05) rows, labels from the rows reweighted by a label
# shift (class c's odds times 2^(4c/(C-1) - 2));
# uniform: Dirichlet(0.05) rows, labels uniform over the classes.
GENERATORS = ("calibrated", "flat", "peaked", "shifted", "uniform")


def make_data(n, n_classes, seed=0, kind="over-confident"):
    rng = np.random.default_rng(seed)
    alpha = {"flat": 1.0, "peaked": 0.01}.get(kind, 0.05)
    P = rng.dirichlet(np.full(n_classes, alpha), size=n)
    if kind == "uniform":
        return rng.integers(0, n_classes, n), P
    y = np.empty(n, dtype=np.int64)
    step = max(1, 2**22 // n_classes)
    for lo in range(0, n, step):  # in chunks: at 1e6 rows the temporaries stay small
        Q = P[lo : lo + step]
        if kind == "over-confident":  # the truth is a sharper version of P
            Q = Q**1.5
        elif kind == "shifted":
            Q = Q * 2.0 ** np.linspace(-2.0, 2.0, n_classes)
        Q = Q / Q.sum(axis=1, keepdims=True)
        u = rng.random(Q.shape[0])[:, None]
        y[lo : lo + step] = np.minimum((np.cumsum(Q, axis=1) < u).sum(axis=1), n_classes - 1)
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
    simd = "unknown"
    try:
        from numpy._core._multiarray_umath import (
            __cpu_baseline__,
            __cpu_dispatch__,
            __cpu_features__,
        )

        found = [k for k in __cpu_dispatch__ if __cpu_features__.get(k)]
        simd = f"baseline {', '.join(__cpu_baseline__)}; found {', '.join(found)}"
    except ImportError:  # numpy < 2
        pass
    return f"{model}; numpy SIMD (np.show_runtime): {simd}"


def family_rows(y, P, repeat, general):
    n, C = P.shape
    w = np.ones(n)
    rows = {}
    for name in ("comb", "class-wise", "top-k"):
        utilities = members(resolve_utility(name), C)
        cpu, wall, new = measure(
            lambda u=utilities: worst_intervals(u, Predictions(P, y), w), repeat
        )
        row = {"m": len(utilities), "cpu": cpu, "wall": wall}
        if general:
            g_cpu, g_wall, old = measure(
                lambda u=utilities: _general_intervals(u, Predictions(P, y), w), 1
            )
            row.update(general_cpu=g_cpu, diff=float(np.abs(new[0] - old[0]).max()))
        rows[name] = row
    rows["comb UC"] = comb_row(y, P, repeat)
    return rows


def comb_row(y, P, repeat):
    """``utility_calibration_error(y, P, "comb")``: time, value, members computed exactly."""
    n, C = P.shape
    labels = np.arange(C)
    cpu, wall, value = measure(
        lambda: utility_calibration_error(y, P, "comb", labels=labels), repeat
    )
    utilities = members(resolve_utility("comb"), C)
    try:
        pruned = worst_intervals(utilities, Predictions(P, y), np.ones(n), maximum_only=True)[0]
        exact = int(np.isfinite(pruned).sum())
    except TypeError:  # a build without branch and bound computes every member
        exact = len(utilities)
    return {"m": len(utilities), "cpu": cpu, "wall": wall, "exact": exact, "value": value}


def top_class_row(y, P, repeat):
    labels = np.arange(P.shape[1])

    def uc():
        return utility_calibration_error(y, P, "top-class", labels=labels)

    def cut():
        return cutoff_calibration_error(y, P, labels=labels)

    c_uc, _, v_uc = measure(uc, repeat)
    c_cut, _, v_cut = measure(cut, repeat)
    c_arg, _, _ = measure(lambda: np.argmax(P, axis=1), repeat)
    pred = P.argmax(axis=1)
    confidence = P[np.arange(P.shape[0]), pred]
    correct = (pred == y).astype(np.int64)
    c_bin, _, _ = measure(lambda: cutoff_calibration_error(correct, confidence), repeat)
    return {
        "uc": c_uc, "cut": c_cut, "argmax": c_arg, "binary": c_bin,
        "same": bool(v_uc == v_cut), "peak_uc": traced_peak(uc), "peak_cut": traced_peak(cut),
    }


def run(args):
    out = {"skcal": os.path.dirname(skcal.__file__), "families": {}, "top": {}, "sampled": {},
           "comb": {}}
    for C in args.n_classes:
        y, P = make_data(args.n, C)
        out["families"][str(C)] = family_rows(y, P, args.repeat, args.general)
        for kind in GENERATORS:
            y, P = make_data(args.n, C, kind=kind)
            out["comb"][f"{C} {kind}"] = comb_row(y, P, args.repeat)
    for n in (args.n, args.n_large):
        for C in args.n_classes:
            if n * C * 8 > args.max_gb * 2**30:
                continue
            y, P = make_data(n, C)
            out["top"][f"{n} {C}"] = top_class_row(y, P, max(args.repeat, 5) if n == args.n
                                                  else args.repeat)
            del y, P
    if args.sampled:
        C, M = args.n_classes[-1], args.n_utilities
        y, P = make_data(args.n, C)
        labels = np.arange(C)
        x = np.random.default_rng(1).random(args.n)
        c_sort, _, _ = measure(lambda: np.argsort(x), 7)
        for family in ("linear", "rank"):
            c, w, _ = measure(
                lambda f=family: utility_calibration_ecdf(
                    y, P, f, n_utilities=M, random_state=0, labels=labels
                ),
                args.repeat,
            )
            out["sampled"][family] = {"cpu": c, "wall": w, "per_argsort": c / M / c_sort}
    return out


def fmt(after, before, key, width=9, digits=4):
    """``after`` (and ``before -> after`` with the ratio when there is a before run)."""
    a = after[key]
    if before is None:
        return f"{a:>{width}.{digits}f}"
    b = before[key]
    return f"{b:>{width}.{digits}f} -> {a:>{width}.{digits}f} ({b / a:4.2f}x)"


def report(after, before, args):
    b = before or {}
    print(f"n = {args.n}; medians of {args.repeat} runs (5 for the top-class rows at n); "
          "CPU seconds of this process" + ("; before -> after (speed-up)" if before else ""))
    print("\nfamilies on the cutoff path, every member's error; comb UC: "
          "utility_calibration_error(y, P, 'comb'), the largest [CPU s]"
          + (" (general path in brackets)" if args.general else ""))
    for C, rows in after["families"].items():
        for name, row in rows.items():
            old = (b.get("families", {}).get(C, {}) or {}).get(name)
            line = f"{C:>5} {name:<11} {row['m']:>5} members  {fmt(row, old, 'cpu')}"
            if "exact" in row:
                line += f"  exact: {old['exact'] if old else ''}{' -> ' if old else ''}"
                line += f"{row['exact']} members"
                if old:
                    line += f", same value: {old['value'] == row['value']}"
            if args.general and "general_cpu" in row:
                line += f"  [{row['general_cpu']:.3f}, max |diff| {row['diff']:.1e}]"
            print(line)
    print("\ncomb UC on other predictions (see GENERATORS) [CPU s]")
    for key, row in after.get("comb", {}).items():
        C, kind = key.split()
        old = b.get("comb", {}).get(key)
        line = f"{C:>5} {kind:<11} {row['m']:>5} members  {fmt(row, old, 'cpu')}"
        line += f"  exact: {old['exact'] if old else ''}{' -> ' if old else ''}"
        line += f"{row['exact']} members"
        if old:
            line += f", same value: {old['value'] == row['value']}"
        print(line)
    print("\ntop-class UC and the top-label cutoff error against np.argmax + the binary "
          "cutoff error of (confidence, correct) [CPU s]; peak traced memory of one call")
    for key, row in after["top"].items():
        n, C = key.split()
        old = b.get("top", {}).get(key)
        base = row["argmax"] + row["binary"]
        print(f"n = {n:>8}, C = {C:>5}: argmax {row['argmax']:.4f} + binary "
              f"{row['binary']:.4f}; same number: {row['same']}")
        for what in ("uc", "cut"):
            label = "UC top-class " if what == "uc" else "top-label cut"
            ratio = row[what] / base
            before_ratio = "" if old is None else (
                f"{old[what] / (old['argmax'] + old['binary']):.2f} -> ")
            print(f"    {label} {fmt(row, old, what)}   / (argmax + binary): "
                  f"{before_ratio}{ratio:.2f}   peak {row['peak_' + what]:.0f} MB")
    if after["sampled"]:
        print(f"\nsampled families at C = {args.n_classes[-1]}, {args.n_utilities} utilities")
        for family, row in after["sampled"].items():
            old = b.get("sampled", {}).get(family)
            print(f"{family:<8} {fmt(row, old, 'cpu', 7, 2)} s, "
                  f"{row['per_argsort']:.2f} x argsort per utility")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=50_000)
    parser.add_argument("--n-large", type=int, default=1_000_000)
    parser.add_argument("--max-gb", type=float, default=1.0,
                        help="skip a top-class size whose matrix is larger")
    parser.add_argument("--n-classes", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--n-utilities", type=int, default=1500)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--general", action="store_true",
                        help="also time the general path (slow at C = 1000)")
    parser.add_argument("--sampled", action="store_true", help="time linear/rank")
    parser.add_argument("--before", metavar="DIR",
                        help="first run on the skcal installed in DIR, print both")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.json:
        print(json.dumps(run(args)))
        return
    print(f"skcal {skcal.__version__} ({os.path.dirname(skcal.__file__)}), numpy "
          f"{np.__version__}, Python {platform.python_version()}")
    print(f"CPU: {cpu_description()}; {os.cpu_count()} logical CPUs, "
          f"load {os.getloadavg()[0]:.1f}")
    before = None
    if args.before:
        argv = [a for a in sys.argv[1:]]
        i = argv.index("--before")
        del argv[i : i + 2]
        env = dict(os.environ, SKCAL_BENCH_PATH=os.path.abspath(args.before))
        child = subprocess.run([sys.executable, __file__, *argv, "--json"], env=env,
                               capture_output=True, text=True, check=True)
        before = json.loads(child.stdout.strip().splitlines()[-1])
        print(f"before: skcal imported from {before['skcal']}")
    after = run(args)
    report(after, before, args)
    print(f"\nload at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
