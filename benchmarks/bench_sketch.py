"""Time and size of a calibration sketch of rows with continuous predictions.

A sketch of rows whose predictions are all distinct keeps exact per-value
sums (``max_size=None``) or compacts onto a dyadic grid (``max_size=4096``),
with exact integer sums of the weights and of the weighted predictions per
cell. Each case is timed as ``CalibrationSketch(max_size=...).update(y, p,
w)`` and compared with ``np.argsort`` of the same predictions; the peak
extra memory of one call is measured with tracemalloc (bytes per row,
``peak``), and the stored size is ``len(sketch.to_bytes())`` per row
(``stored``; what a Dask worker holds and sends, pickling being
``to_bytes``).

With ``--before DIR`` (another build, e.g. ``pip install --no-deps
--no-build-isolation --target DIR <old checkout>``) each size is run by that
build and by the current one in separate processes, so before and after are
measured in one run on one machine.

    python benchmarks/bench_sketch.py
    python benchmarks/bench_sketch.py --sizes 1e6 --before /tmp/skcal_before
    python benchmarks/bench_sketch.py --clock cpu   # on a shared machine

``--clock cpu`` times each call by the CPU time of its thread
(``time.thread_time``), so waiting for a core does not count.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import time
import tracemalloc

CASES = [
    # label, max_size, weighted
    ("exact, unit weights", None, False),
    ("exact, exponential weights", None, True),
    ("exact, exp. weights, p to 1e-3", None, "ties"),
    ("max_size=4096, unit weights", 4096, False),
    ("max_size=4096, exponential weights", 4096, True),
    # predictions rounded to float32, as most models give them (2% of the
    # values repeated at 10**6 rows): the exact sums of some values in limbs
    ("exact, exp. weights, float32 p", None, "float32"),
    ("max_size=4096, exp. w., float32 p", 4096, "float32"),
]


CLOCK = time.perf_counter


def median_time(func, repeat):
    times = []
    for _ in range(repeat):
        t0 = CLOCK()
        func()
        times.append(CLOCK() - t0)
    return sorted(times)[len(times) // 2]


def worker(n, repeat, path=None):
    import numpy as np

    if path is not None:
        sys.meta_path[:] = [f for f in sys.meta_path if "Mesonpy" not in type(f).__name__]
        sys.path.insert(0, path)
    import skcal
    from skcal import CalibrationSketch

    rng = np.random.default_rng(0)
    p = rng.random(n)
    y = (rng.random(n) < p**1.2).astype(np.int64)
    weights = rng.exponential(size=n)
    out = {
        "path": os.path.dirname(skcal.__file__),
        "argsort": median_time(lambda: np.argsort(p), repeat),
        # the direct measure on the rows: what a sketch's build is judged by
        "smce": median_time(lambda: skcal.smooth_calibration_error(y, p), repeat),
        "smce_w": median_time(
            lambda: skcal.smooth_calibration_error(y, p, sample_weight=weights), repeat
        ),
        "cases": {},
    }
    # the direct measure on rounded predictions, for the case with ties
    p_ties = np.round(p, 3)
    out["smce_ties"] = median_time(
        lambda: skcal.smooth_calibration_error(y, p_ties, sample_weight=weights), repeat
    )
    p_32 = p.astype(np.float32).astype(np.float64)
    out["smce_float32"] = median_time(
        lambda: skcal.smooth_calibration_error(y, p_32, sample_weight=weights), repeat
    )
    for label, max_size, weighted in CASES:
        w = weights if weighted else None
        q = {"ties": p_ties, "float32": p_32}.get(weighted, p)

        def build(max_size=max_size, w=w, q=q):
            return CalibrationSketch(max_size=max_size).update(y, q, sample_weight=w)

        t = median_time(build, repeat)
        tracemalloc.start()
        sketch = build()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        stored = len(sketch.to_bytes())
        out["cases"][label] = {
            "time": t, "bytes": peak / n, "stored": stored / n, "weighted": weighted
        }
    # merging two exact sketches of half the rows each: what every task of a
    # Dask tree does (peak extra memory of the merge alone)
    h = n // 2
    for label, weighted in (("merge of exact halves, unit", False),
                            ("merge of exact halves, exponential", True)):
        w = weights if weighted else None
        halves = [
            CalibrationSketch(y[s], p[s], None if w is None else w[s])
            for s in (slice(0, h), slice(h, n))
        ]
        t = median_time(lambda a=halves[0], b=halves[1]: a.merge(b), repeat)
        tracemalloc.start()
        merged = halves[0].merge(halves[1])
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        out["cases"][label] = {
            "time": t, "bytes": peak / n, "stored": len(merged.to_bytes()) / n,
            "weighted": weighted,
        }
    out["cpu"] = cpu_features()
    print(json.dumps(out))


def cpu_features():
    """The SIMD features numpy found on this CPU (``np.show_runtime()``)."""
    import contextlib
    import io

    import numpy as np

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        try:
            np.show_runtime()
        except Exception:  # older numpy: no runtime report
            return "unknown"
    text = buffer.getvalue()
    start = text.find("'found'")
    if start < 0:
        return "unknown"
    end = text.find("]", start)
    found = [f.strip(" '\n") for f in text[text.find("[", start) + 1:end].split(",")]
    return " ".join(f for f in found if f)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=float, default=[1e6])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--before", default=None, help="directory with another skcal build")
    parser.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--path", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                        help="wall time, or the CPU time of the timing thread")
    args = parser.parse_args()
    if args.clock == "cpu":
        global CLOCK
        CLOCK = time.thread_time
    if args.worker is not None:
        worker(args.worker, args.repeat, args.path)
        return
    import numpy as np

    builds = [("after", None)]
    if args.before is not None:
        builds.insert(0, ("before", os.path.abspath(args.before)))
    print(f"numpy {np.__version__}, Python {platform.python_version()}, "
          f"{platform.machine()}, {os.cpu_count()} logical CPUs, load {os.getloadavg()[0]:.1f}")
    print(f"{args.clock} time, median of {args.repeat} builds; "
          "ratio = time / np.argsort time on the same data;")
    print("/smCE = time / a direct smooth_calibration_error of the same rows (and weights)\n")
    print(f"{'n':>9} {'build':<7} {'case':<36} {'time [s]':>9} {'/argsort':>9} "
          f"{'/smCE':>6} {'peak B/row':>10} {'stored B/row':>12}")
    for n in (int(s) for s in args.sizes):
        for label, path in builds:
            cmd = [sys.executable, os.path.abspath(__file__), "--worker", str(n),
                   "--repeat", str(args.repeat), "--clock", args.clock]
            if path is not None:
                cmd += ["--path", path]
            res = subprocess.run(cmd, capture_output=True, text=True, check=True,
                                 cwd=os.path.expanduser("~"))
            res = json.loads(res.stdout.strip().splitlines()[-1])
            print(f"{n:>9} {label:<7} CPU features found by numpy: {res['cpu']}")
            for case, m in res["cases"].items():
                smce = {False: res["smce"], True: res["smce_w"]}.get(
                    m["weighted"], res.get(f"smce_{m['weighted']}", np.nan)
                )
                print(f"{n:>9} {label:<7} {case:<36} {m['time']:>9.3f} "
                      f"{m['time'] / res['argsort']:>9.2f} {m['time'] / smce:>6.2f} "
                      f"{m['bytes']:>10.1f} {m['stored']:>12.1f}")
            print(f"{n:>9} {label:<7} {'(np.argsort [s])':<36} {res['argsort']:>9.3f}"
                  f"   [skcal from {res['path']}]")
            print(f"{n:>9} {label:<7} {'(direct smCE, weighted, ties, f32 [s])':<36} "
                  f"{res['smce']:>9.3f} {res['smce_w']:>9.3f} "
                  f"{res.get('smce_ties', np.nan):>9.3f} "
                  f"{res.get('smce_float32', np.nan):>9.3f}")
        print()


if __name__ == "__main__":
    main()
