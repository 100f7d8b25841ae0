"""A measure called in a loop, alone in a fresh process: time and page faults per call.

``bench_binary.py`` times every measure in one process, after the baselines
and the other measures, so the allocator's state at each call depends on
what ran before. A user's loop (a measure per model, per fold, per batch)
calls one measure again and again; whether the memory of one call is kept
by the allocator for the next, or given back to the system and faulted in
again, then decides a good part of the time at 10**5 rows. Here each
measure runs in its own fresh process: ``--repeat`` calls after one untimed
call, then ``np.sort(p)`` in the same process as the yardstick. Printed per
call: median wall and CPU time (``time.thread_time``), minor page faults
(``getrusage``), and the ratio of the median wall time to ``np.sort``'s;
and the first call's wall time, page faults and system time (on a virtual
machine a first touch of memory the host has not backed yet is slow, the
more so in huge pages).

    python benchmarks/bench_faults.py
    python benchmarks/bench_faults.py --sizes 1e4 1e5 1e6 --before /tmp/skcal_before

With ``--before DIR`` (another build, ``pip install --no-deps --target DIR
<old checkout>``) both builds run each case, taking turns.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time

from bench_binary import MEASURES, cpu_features, cpu_name, make_data


def worker(name, n, repeat, path=None):
    """Time ``repeat`` calls of one measure in this (fresh) process; print JSON."""
    import numpy as np

    if path is not None:
        # an editable install's import hook would shadow the other build
        sys.meta_path[:] = [f for f in sys.meta_path if "Mesonpy" not in type(f).__name__]
        sys.path.insert(0, path)
    import skcal

    y, p = make_data(n)
    func = getattr(skcal, name)
    # the first call of the process: fresh memory everywhere
    before = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    func(y, p)
    first = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_SELF)
    wall, cpu = [], []
    start = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.thread_time()
        func(y, p)
        wall.append(time.perf_counter() - t0)
        cpu.append(time.thread_time() - c0)
    faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - start) / repeat
    sort = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        np.sort(p)
        sort.append(time.perf_counter() - t0)
    print(json.dumps({
        "first": first, "first_faults": after.ru_minflt - before.ru_minflt,
        "first_sys": after.ru_stime - before.ru_stime,
        "wall": float(np.median(wall)), "cpu": float(np.median(cpu)),
        "faults": faults, "sort": float(np.median(sort)),
        "path": os.path.dirname(skcal.__file__),
    }))


def run_worker(name, n, repeat, path):
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", name, str(n)]
    cmd += ["--repeat", str(repeat)]
    if path is not None:
        cmd += ["--path", path]
    # outside the source tree, so the installed (or --before) build is used;
    # this script's directory on the path for bench_binary
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.abspath(__file__)))
    result = subprocess.run(cmd, capture_output=True, text=True, check=True,
                            cwd=os.path.expanduser("~"), env=env)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=float, default=[1e4, 1e5, 1e6])
    parser.add_argument("--repeat", type=int, default=101)
    parser.add_argument("--measures", nargs="+", default=[m[0] for m in MEASURES])
    parser.add_argument("--before", default=None, help="directory with another skcal build")
    parser.add_argument("--worker", nargs=2, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--path", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        worker(args.worker[0], int(args.worker[1]), args.repeat, args.path)
        return
    import numpy as np

    print(f"numpy {np.__version__}, CPU: {cpu_name()}")
    print(f"numpy CPU features (baseline, then dispatched): {cpu_features()}")
    print(f"each row: one fresh process, one untimed call, then {args.repeat} calls of the "
          "measure alone; medians per call; /sort = wall / np.sort(p) wall in that process\n")
    builds = [("after", None)] if args.before is None else [
        ("before", os.path.abspath(args.before)), ("after", None)]
    print(f"{'n':>9} {'build':7} {'measure':31} {'wall [ms]':>10} {'cpu [ms]':>9} "
          f"{'faults':>8} {'/sort':>6} | {'first [ms]':>10} {'faults':>7} {'sys [ms]':>8}")
    for n in (int(s) for s in args.sizes):
        for name in args.measures:
            # fewer calls of the larger sizes
            repeat = args.repeat if n <= 10**5 else max(5, args.repeat // (10 * (1 + (n > 10**6))))
            for build, path in builds:
                r = run_worker(name, n, repeat, path)
                print(f"{n:>9} {build:7} {name:31} {r['wall'] * 1e3:10.3f} "
                      f"{r['cpu'] * 1e3:9.3f} {r['faults']:8.0f} {r['wall'] / r['sort']:6.2f} | "
                      f"{r['first'] * 1e3:10.3f} {r['first_faults']:7d} "
                      f"{r['first_sys'] * 1e3:8.1f}", flush=True)
        print()


if __name__ == "__main__":
    main()
