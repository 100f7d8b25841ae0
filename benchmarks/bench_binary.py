"""Time every binary measure against numpy baselines on the same data.

Every measure is timed as a user calls it (the public function, validation
included) and compared with three numpy baselines on the same predictions:
``np.sort``, ``np.argsort`` and one weighted ``np.bincount`` into 1024 bins
of precomputed bin indices. Sorting measures (smCE, cutoff, CDL, dCE) are
judged against the sorts, one-pass ones (SCDL, binned ECE) against the
bincount. The peak extra memory of one call is measured with tracemalloc
(numpy's allocations are traced) and reported in bytes per sample.

With ``--before DIR`` (a directory holding another build of skcal, e.g.
``pip install --no-deps --target DIR <old checkout>``) each size is run
once by that build and once by the current one, in separate processes
taking turns, so before and after are measured in one run on one machine.

    python benchmarks/bench_binary.py                 # n = 2^20 and 10^7
    python benchmarks/bench_binary.py --sizes 1e3 1e5 --repeat 3
    python benchmarks/bench_binary.py --sizes 1e4 1e5 --repeat 15 --clock cpu  # fixed costs
    python benchmarks/bench_binary.py --before /tmp/skcal_before
    python benchmarks/bench_binary.py --clock cpu   # on a shared, loaded machine
    python benchmarks/bench_binary.py --weighted     # sample_weight ~ U(0.5, 1.5)

With ``--weighted`` every measure gets random weights (the sorting measures'
yardstick is then ``np.argsort``: a weighted grouping must carry the weights).

``--clock cpu`` times each call by the CPU time of the calling thread
(``time.thread_time``) instead of wall time: on a machine shared with other
jobs, time spent waiting for a core then does not count. Every timed
function here (numpy's baselines and skcal's kernels) runs on that one thread.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import time
import tracemalloc

MEASURES = [
    # name, baseline it is judged against, largest n to run
    ("smooth_calibration_error", "argsort", 10**7),
    ("cutoff_calibration_error", "argsort", 10**7),
    ("soft_binned_cdl", "bincount", 10**7),
    ("binned_ece", "bincount", 10**7),
    ("calibration_decision_loss", "argsort", 10**7),
    # an LP on the grid h = 0.01
    ("lower_distance_to_calibration", "argsort", 10**7),
]


CLOCK = time.perf_counter


def median_time(func, repeat):
    """Median time of ``repeat`` calls, after one call untimed.

    The first call of a process pays for first touches of memory (on the
    VMs measured here, 80 MB of fresh pages cost up to 0.24 s of system
    time once), which no later call pays; it would be the median of two.
    """
    func()
    times = []
    for _ in range(repeat):
        t0 = CLOCK()
        func()
        times.append(CLOCK() - t0)
    times.sort()
    return times[len(times) // 2]


def paired_ratio(func, base, repeat):
    """Median of ``func`` time / ``base`` time, the two called in turn.

    Each call of ``func`` is paired with a call of ``base`` just before it,
    so a change of load during the run moves both alike.
    """
    ratios = []
    for _ in range(repeat):
        t0 = CLOCK()
        base()
        t1 = CLOCK()
        func()
        t2 = CLOCK()
        ratios.append((t2 - t1) / (t1 - t0))
    ratios.sort()
    return ratios[len(ratios) // 2]


def peak_bytes(func):
    """Peak memory allocated during ``func()`` above what existed before."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    func()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def make_data(n, seed=0):
    import numpy as np

    rng = np.random.default_rng(seed)
    p = rng.random(n)
    # mildly miscalibrated, the common case in practice
    y = (rng.random(n) < p**1.2).astype(np.int64)
    return y, p


def worker(n, repeat, names, path=None, weighted=False):
    """Measure one size with the skcal found on sys.path (or in ``path``); print JSON."""
    import numpy as np

    if path is not None:
        # an editable install's import hook would shadow the other build
        sys.meta_path[:] = [f for f in sys.meta_path if "Mesonpy" not in type(f).__name__]
        sys.path.insert(0, path)
    import skcal

    y, p = make_data(n)
    w = np.ones(n)
    kwargs = {}
    if weighted:
        kwargs["sample_weight"] = np.random.default_rng(1).random(n) + 0.5
    idx = np.minimum((p * 1024).astype(np.intp), 1023)
    rep = repeat if n <= 2**20 else max(1, (repeat + 1) // 2)
    rep += 1 - rep % 2  # odd: a median is one call, not the larger of two
    out = {
        "skcal": skcal.__version__,
        "path": os.path.dirname(skcal.__file__),
        "base": {
            "sort": median_time(lambda: np.sort(p), rep),
            "argsort": median_time(lambda: np.argsort(p), rep),
            "bincount": median_time(lambda: np.bincount(idx, weights=w, minlength=1024), rep),
        },
        "measures": {},
    }
    for name, _, max_n in MEASURES:
        if n > max_n or name not in names:
            continue
        func = getattr(skcal, name)
        t = median_time(lambda func=func: func(y, p, **kwargs), rep)
        paired = paired_ratio(
            lambda func=func: func(y, p, **kwargs),
            lambda: np.bincount(idx, weights=w, minlength=1024),
            rep,
        )
        # the sorting measures' own yardstick, paired the same way
        paired_sort = paired_ratio(
            lambda func=func: func(y, p, **kwargs),
            (lambda: np.argsort(p)) if weighted else (lambda: np.sort(p)),
            rep,
        )
        out["measures"][name] = {
            "time": t,
            "paired": paired,
            "paired_sort": paired_sort,
            "bytes": peak_bytes(lambda func=func: func(y, p, **kwargs)) / n,
        }
    print(json.dumps(out))


def run_worker(n, repeat, names, path, clock="wall", weighted=False):
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", str(n)]
    cmd += ["--repeat", str(repeat), "--measures", *names, "--clock", clock]
    if weighted:
        cmd += ["--weighted"]
    if path is not None:
        cmd += ["--path", path]
    # run outside the source tree, so the installed (or --before) build is used
    result = subprocess.run(
        cmd, capture_output=True, text=True, check=True, cwd=os.path.expanduser("~")
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def cpu_features():
    import numpy as np

    try:
        from numpy.lib._utils_impl import _opt_info  # numpy >= 2

        return _opt_info()
    except ImportError:  # pragma: no cover - numpy 1.x
        cfg = np.__config__.CONFIG if hasattr(np.__config__, "CONFIG") else {}
        simd = cfg.get("SIMD Extensions", {})
        return f"baseline {simd.get('baseline')}, found {simd.get('found')}"


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:  # pragma: no cover - not Linux
        pass
    return platform.processor() or platform.machine()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=float, default=[2**20, 1e7])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--measures", nargs="+", default=[m[0] for m in MEASURES])
    parser.add_argument("--before", default=None, help="directory with another skcal build")
    parser.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                        help="wall time, or CPU time of the calling thread")
    parser.add_argument("--weighted", action="store_true",
                        help="random sample_weight; /sort pair is then against np.argsort")
    parser.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--path", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    global CLOCK
    CLOCK = time.thread_time if args.clock == "cpu" else time.perf_counter
    if args.worker is not None:
        worker(args.worker, args.repeat, args.measures, args.path, args.weighted)
        return

    import numpy as np

    builds = [("after", None)] if args.before is None else [
        ("before", os.path.abspath(args.before)),
        ("after", None),
    ]
    print(f"numpy {np.__version__}, Python {platform.python_version()}, "
          f"{platform.machine()}, {os.cpu_count()} logical CPUs")
    print(f"CPU: {cpu_name()}")
    print(f"numpy CPU features (baseline, then dispatched): {cpu_features()}")
    big = max(1, (args.repeat + 1) // 2)
    big += 1 - big % 2
    print(f"median {args.clock} time of {args.repeat + 1 - args.repeat % 2} calls ({big} above "
          "2^20), after one untimed call, of the public function, "
          "validation included; ratio = time / baseline time on the same data;")
    print("bytes/sample = tracemalloc peak of one call / n (the inputs excluded);")
    print("/bc pair = median over calls of (call time / time of the bincount baseline "
          "called just before it); /sort pair: the same with np.sort(p) as the baseline"
          + (" (np.argsort(p) with --weighted: random sample_weight)" if args.weighted else "")
          + "\n")
    head = (f"{'n':>9} {'build':<7} {'measure':<30} {'time [s]':>9} {'/sort':>7} "
            f"{'/argsort':>8} {'/bincount':>9} {'B/sample':>9} {'/bc pair':>8} {'/sort pair':>10}")
    print(head)
    for n in (int(s) for s in args.sizes):
        results = [
            (label, run_worker(n, args.repeat, args.measures, path, args.clock, args.weighted))
            for label, path in builds
        ]
        for name, _, _ in MEASURES:
            for label, res in results:
                if name not in res["measures"]:
                    continue
                m, b = res["measures"][name], res["base"]
                print(f"{n:>9} {label:<7} {name:<30} {m['time']:>9.4f} "
                      f"{m['time'] / b['sort']:>7.2f} {m['time'] / b['argsort']:>8.2f} "
                      f"{m['time'] / b['bincount']:>9.2f} {m['bytes']:>9.1f} "
                      f"{m['paired']:>8.2f} {m.get('paired_sort', float('nan')):>10.2f}")
        for label, res in results:
            b = res["base"]
            print(f"{n:>9} {label:<7} {'(baselines [s])':<30} sort {b['sort']:.4f}  "
                  f"argsort {b['argsort']:.4f}  bincount {b['bincount']:.4f}  "
                  f"[skcal {res['skcal']} from {res['path']}]")
        print()


if __name__ == "__main__":
    main()
