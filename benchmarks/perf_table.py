"""The performance page's table: skcal's binary measures, numpy baselines and peers.

For each size n (unweighted binary data, ``p ~ U(0, 1)``, ``y ~ Bernoulli(p^1.2)``)
every skcal measure is timed as a user calls it, with its ratio to
``np.sort(p)`` (sorting measures) or to one weighted ``np.bincount`` into
1024 bins (one-pass measures), its peak extra memory (tracemalloc, bytes
per row) and the nearest peer that is installed: relplot's smECE, MAPIE's
Kuiper statistic and top-label ECE, netcal's ECE, torchmetrics'
binary calibration error, and scikit-learn's ``calibration_curve`` +
``brier_score_loss`` as the baseline every user has. Peers that are not
installed are named as such. Growth exponents are the least-squares slope
of log(time) against log(n) over the sizes that ran.

Times are the median CPU time of this thread (``time.thread_time``) over
``--repeat`` calls: on a shared machine the time spent waiting for a core
does not count. torch is held to one thread so that this is its whole
cost. A call whose predicted time (from the previous size, growth n log n)
exceeds ``--budget`` seconds is skipped and printed as "skipped".

    python benchmarks/perf_table.py --sizes 1e4 1e5 1e6 1e7
    python benchmarks/perf_table.py --sizes 1e4 1e5 1e6 1e7 1e8 --budget 120
    # 10^8 for some measures only, without the peers
    python benchmarks/perf_table.py --sizes 1e4 1e5 1e6 1e7 1e8 --no-peers --no-memory \
        --repeat 1 --measures "binned ECE" SCDL smCE cutoff
"""

import argparse
import datetime
import math
import os
import platform
import time
import tracemalloc

import numpy as np

import skcal

MEASURES = [
    # (label, function name, yardstick)
    ("binned ECE", "binned_ece", "bincount"),
    ("SCDL", "soft_binned_cdl", "bincount"),
    ("smCE", "smooth_calibration_error", "sort"),
    ("cutoff", "cutoff_calibration_error", "sort"),
    ("dCE", "lower_distance_to_calibration", "sort"),
    ("CDL", "calibration_decision_loss", "sort"),
]


def peers():
    """``{measure label: [(peer name, callable(y, p))]}`` of the installed peers."""
    out = {label: [] for label, _, _ in MEASURES}
    missing = []
    try:
        import relplot

        out["smCE"].append(("relplot smECE", lambda y, p: relplot.smECE(p, y)))
    except ImportError as exc:
        missing.append(f"relplot ({exc})")
    try:
        from mapie.metrics.calibration import (
            expected_calibration_error,
            kuiper_statistic,
        )

        out["cutoff"].append(("MAPIE kuiper_statistic", lambda y, p: kuiper_statistic(y, p)))
        out["binned ECE"].append(
            ("MAPIE expected_calibration_error",
             lambda y, p: expected_calibration_error(y, p, num_bins=15))
        )
    except ImportError as exc:
        missing.append(f"MAPIE ({exc})")
    try:
        from netcal.metrics import ECE

        out["binned ECE"].append(
            ("netcal ECE", lambda y, p: ECE(bins=15).measure(p, y))
        )
    except ImportError as exc:
        missing.append(f"netcal ({exc})")
    try:
        import torch
        from torchmetrics.functional.classification import binary_calibration_error

        torch.set_num_threads(1)

        def tm(y, p):
            return binary_calibration_error(
                torch.from_numpy(p), torch.from_numpy(y), n_bins=15
            )

        out["binned ECE"].append(("torchmetrics binary_calibration_error", tm))
    except ImportError as exc:
        missing.append(f"torchmetrics ({exc})")
    from sklearn.calibration import calibration_curve
    from sklearn.metrics import brier_score_loss

    out["binned ECE"].append((
        "sklearn calibration_curve + brier",
        lambda y, p: (calibration_curve(y, p, n_bins=15), brier_score_loss(y, p)),
    ))
    return out, missing


def timed(func, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.thread_time()
        func()
        times.append(time.thread_time() - t0)
    return float(np.median(times))


def peak_bytes(func):
    tracemalloc.start()
    func()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def simd_features():
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as feats
    except ImportError:  # numpy < 2
        from numpy.core._multiarray_umath import __cpu_features__ as feats
    keys = ("AVX2", "AVX512F", "AVX512_SKX", "AVX512_ICL", "AVX512_SPR")
    return ", ".join(k for k in keys if feats.get(k)) or "none of AVX2/AVX-512"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def slope(ns, ts):
    pts = [(math.log(n), math.log(t)) for n, t in zip(ns, ts) if t is not None and t > 0]
    if len(pts) < 2:
        return None
    x, y = np.array(pts).T
    return float(np.polyfit(x, y, 1)[0])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=float, default=[1e4, 1e5, 1e6, 1e7])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--budget", type=float, default=60.0,
                        help="skip a call predicted to take longer (CPU seconds)")
    parser.add_argument("--measures", nargs="+", default=None,
                        choices=[label for label, _, _ in MEASURES],
                        help="time these measures only (default: all)")
    parser.add_argument("--no-peers", action="store_true", help="skcal and numpy only")
    parser.add_argument("--no-memory", action="store_true",
                        help="skip the tracemalloc call (one call less per cell)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes]
    measures = [m for m in MEASURES if args.measures is None or m[0] in args.measures]
    if args.no_peers:
        peer_map, missing = {label: [] for label, _, _ in MEASURES}, []
    else:
        peer_map, missing = peers()

    print(f"# {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; skcal "
          f"{skcal.__version__}, numpy {np.__version__}, Python {platform.python_version()}")
    print(f"# CPU: {cpu_model()}, {os.cpu_count()} logical CPUs; numpy SIMD: "
          f"{simd_features()}; load {os.getloadavg()[0]:.1f}")
    if missing:
        print(f"# peers not installed: {'; '.join(missing)}")
    results = {}  # (name, n) -> seconds or None
    memory = {}
    base = {}
    for n in sizes:
        rng = np.random.default_rng(0)
        p = rng.random(n)
        y = (rng.random(n) < p**1.2).astype(np.int64)
        bins = np.minimum((p * 1024).astype(np.intp), 1023)
        w = np.ones(n)
        base[("sort", n)] = timed(lambda p=p: np.sort(p), args.repeat)
        base[("bincount", n)] = timed(
            lambda b=bins, w=w: np.bincount(b, weights=w, minlength=1024), args.repeat
        )
        calls = []
        for label, name, _ in measures:
            func = getattr(skcal, name)
            calls.append((f"skcal {label}", lambda f=func, y=y, p=p: f(y, p)))
            for peer, pf in peer_map[label]:
                calls.append((peer, lambda pf=pf, y=y, p=p: pf(y, p)))
        for who, call in calls:
            prev = [(m, results.get((who, m))) for m in sizes if m < n]
            prev = [(m, t) for m, t in prev if t is not None]
            if prev:
                m, t = prev[-1]
                guess = t * (n / m) * math.log(n) / math.log(m)
                if guess > args.budget:
                    results[(who, n)] = None
                    continue
            elif any((who, m) in results for m in sizes if m < n):
                results[(who, n)] = None  # skipped before: skip on
                continue
            try:
                results[(who, n)] = timed(call, args.repeat)
                if not args.no_memory:
                    memory[(who, n)] = peak_bytes(call) / n
            except Exception as exc:  # a peer that fails is reported, not fatal
                results[(who, n)] = None
                memory[(who, n)] = f"failed: {type(exc).__name__}"

    print(f"\n# CPU seconds (median of {args.repeat}); x = ratio to np.sort(p) for sorting "
          "measures, to one weighted np.bincount for one-pass ones; peak = tracemalloc "
          "bytes per row at the largest size that ran")
    head = " | ".join(f"n = {n:.0e}" for n in sizes)
    print(f"\n| measure | who | {head} | growth exponent | peak B/row |")
    print("|---|---|" + "---|" * len(sizes) + "---|---|")
    for label, _, yard in measures:
        whos = [f"skcal {label}"] + [peer for peer, _ in peer_map[label]]
        for who in whos:
            cells = []
            ran = []
            for n in sizes:
                t = results.get((who, n))
                if t is None:
                    mem = memory.get((who, n))
                    cells.append(mem if isinstance(mem, str) else "skipped")
                    continue
                ran.append(n)
                ratio = t / base[(yard, n)]
                cells.append(f"{t * 1e3:.3g} ms ({ratio:.3g}x)")
            g = slope(sizes, [results.get((who, n)) for n in sizes])
            mem = memory.get((who, ran[-1])) if ran else None
            mem = f"{mem:.0f}" if isinstance(mem, float) else "-"
            gtxt = "-" if g is None else f"{g:.2f}"
            print(f"| {label} | {who} | {' | '.join(cells)} | {gtxt} | {mem} |")
    cells = " | ".join(f"{base[('sort', n)] * 1e3:.3g} ms" for n in sizes)
    print(f"| (baseline) | np.sort(p) | {cells} | "
          f"{slope(sizes, [base[('sort', n)] for n in sizes]):.2f} | - |")
    cells = " | ".join(f"{base[('bincount', n)] * 1e3:.3g} ms" for n in sizes)
    print(f"| (baseline) | weighted np.bincount | {cells} | "
          f"{slope(sizes, [base[('bincount', n)] for n in sizes]):.2f} | - |")
    print(f"\n# load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
