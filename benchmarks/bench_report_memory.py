"""Peak memory and wall time of ``python -m skcal report`` on a generated CSV file.

Writes a CSV of ``--rows`` rows (0/1 labels, predictions on a grid of 1001
values, so the sketch stays small) and runs the report in a child process,
printing its peak resident memory (ru_maxrss) and wall time next to the
file's size. ``--module FILE`` runs another version of ``skcal/_report.py``
(for instance ``git show main:skcal/_report.py > /tmp/old_report.py``) for a
before/after comparison; the rest of skcal is the installed one.

    python benchmarks/bench_report_memory.py --rows 3000000
    python benchmarks/bench_report_memory.py --rows 3000000 --module /tmp/old_report.py
    python benchmarks/bench_report_memory.py --rows 5000000 --weighted

``--weighted`` adds a column ``w`` of unequal weights (1 to 8 in steps of
1/4), read with ``--weight w``.
"""

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

_CHILD = """
import importlib.util, sys, types
import skcal
module_file, argv = sys.argv[1], sys.argv[2:]
if module_file:
    spec = importlib.util.spec_from_file_location("skcal._report", module_file)
    module = importlib.util.module_from_spec(spec)
    sys.modules["skcal._report"] = module
    spec.loader.exec_module(module)
from skcal.__main__ import main
sys.exit(main(argv))
"""


def write_file(path, n, seed=0, weighted=False):
    rng = np.random.default_rng(seed)
    with open(path, "w") as f:
        f.write("y,p,w\n" if weighted else "y,p\n")
        for start in range(0, n, 1 << 18):
            m = min(1 << 18, n - start)
            p = rng.integers(0, 1001, size=m) / 1000
            y = (rng.uniform(size=m) < p).astype(int)
            if weighted:
                w = rng.integers(4, 33, size=m) / 4
                f.write("".join(
                    f"{a},{b!r},{c!r}\n" for a, b, c in zip(y.tolist(), p.tolist(), w.tolist())
                ))
            else:
                f.write("".join(f"{a},{b!r}\n" for a, b in zip(y.tolist(), p.tolist())))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=3_000_000)
    parser.add_argument("--resamples", type=int, default=2)
    parser.add_argument("--module", default="", help="another skcal/_report.py to run")
    parser.add_argument("--weighted", action="store_true", help="a column of unequal weights")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "preds.csv")
        write_file(path, args.rows, weighted=args.weighted)
        size = os.path.getsize(path)
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD, args.module, "report", path, "--label", "y",
             "--proba", "p", "--resamples", str(args.resamples), "--json"]
            + (["--weight", "w"] if args.weighted else []),
            capture_output=True,
            text=True,
            cwd=tmp,
        )
        wall = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    print(
        f"rows {args.rows:,}  file {size / 2**20:.1f} MiB  exit {proc.returncode}  "
        f"peak RSS {peak / 2**20:.0f} MiB ({peak / size:.2f} x the file)  "
        f"wall {wall:.1f} s  module {args.module or 'installed'}"
        + ("  weighted" if args.weighted else "")
    )
    if proc.returncode not in (0, 1):
        print(proc.stderr[-2000:])


if __name__ == "__main__":
    main()
