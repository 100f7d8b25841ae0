"""Wall and CPU time of ``python -m skcal report`` at n = 1e5 and 1e6.

Writes a binary file of predictions (continuous scores, a shifted model)
and a three-class one (top-label) at each size, runs the report on each in a
fresh process, and prints the wall
time, the process's CPU time (user + system of the child) and the load
average, which matters on a shared machine: wall time under load overstates
the work, CPU time does not. With ``--before`` it also says whether the two
reports printed the same numbers (the whole table, compared as text).

``--before DIR`` also runs the report of another source tree (e.g. an
extracted and built copy of main) on the same files, so that one run prints
before and after::

    python benchmarks/bench_report.py                 # after only
    python benchmarks/bench_report.py --before /tmp/skcal-main --sizes 100000

A source tree is the ``skcal`` folder with the compiled kernels copied in
(``build/cp311/skcal/_kernels/*.so`` of an editable build).

The targets (issue 23): at most 3 s at 1e5 and 15 s at 1e6 on 2 cores.
"""

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

TARGET = {100_000: 3.0, 1_000_000: 15.0}


def write_file(path, n, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.05, 0.95, size=n)
    y = (rng.uniform(size=n) < np.clip(p + 0.02, 0, 1)).astype(np.int8)
    with open(path, "w") as f:
        f.write("y,p\n")
        np.savetxt(f, np.column_stack([y, p]), fmt=["%d", "%.17g"], delimiter=",")


def write_multiclass(path, n, seed=0, k=3):
    rng = np.random.default_rng(seed)
    logits = 1.5 * rng.normal(size=(n, k))
    P = np.exp(logits)
    P /= P.sum(axis=1, keepdims=True)
    y = (P.cumsum(axis=1) > rng.uniform(size=(n, 1))).argmax(axis=1)
    with open(path, "w") as f:
        f.write("y," + ",".join(f"p{j}" for j in range(k)) + "\n")
        np.savetxt(f, np.column_stack([y, P]), fmt=["%d"] + ["%.17g"] * k, delimiter=",")


def run(path, src, extra, proba=("p",)):
    env = dict(os.environ)
    code = "import sys; from skcal.__main__ import main; sys.exit(main())"
    if src is not None:
        # another tree first on the path; an editable install's finder is
        # removed so that it cannot answer for the package
        code = (
            "import sys; sys.meta_path = [f for f in sys.meta_path "
            "if 'editable' not in type(f).__module__ + type(f).__name__.lower()]; "
            f"sys.path.insert(0, {src!r}); " + code
        )
    argv = [sys.executable, "-c", code, "report", path, "--label", "y", "--proba", *proba,
            *extra]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env,
                          cwd=tempfile.gettempdir())
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 1):
        sys.exit(f"report failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return wall, cpu, proc.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--before", metavar="DIR", help="source tree of the old code")
    parser.add_argument("--after", metavar="DIR",
                        help="source tree of the new code (default: the installed skcal)")
    parser.add_argument("--kinds", nargs="+", default=["binary", "multiclass"],
                        choices=["binary", "multiclass"])
    parser.add_argument("--extra", nargs=argparse.REMAINDER, default=[],
                        help="further report options")
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'n':>9} {'file':>10} {'code':>7} {'wall s':>8} {'cpu s':>8} {'target':>7} "
          f"{'load':>5}  same output")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            for kind in args.kinds:
                path = os.path.join(tmp, f"{kind}_{n}.csv")
                if kind == "binary":
                    write_file(path, n)
                    proba = ("p",)
                else:
                    write_multiclass(path, n)
                    proba = ("p0", "p1", "p2")
                # after first: the old code at 1e6 can take minutes under load
                trees = [("after", args.after)]
                trees += [("before", args.before)] if args.before else []
                outputs = []
                for label, src in trees:
                    wall, cpu, out = run(path, src, args.extra, proba)
                    outputs.append(out)
                    target = TARGET.get(n)
                    mark = "" if target is None else f"{target:>6.0f}s"
                    same = ""
                    if len(outputs) == 2:
                        same = "yes" if outputs[0] == outputs[1] else "NO"
                    print(f"{n:>9} {kind:>10} {label:>7} {wall:>8.2f} {cpu:>8.2f} "
                          f"{mark:>7} {os.getloadavg()[0]:>5.1f}  {same}", flush=True)


if __name__ == "__main__":
    main()
