"""Calibration of 10^8 and 10^9 rows on a Dask LocalCluster, against in memory at 10^7.

The rows are generated inside the partitions (a seeded generator per
partition; no process ever holds the whole data): predictions ``p = u**2``,
by default rounded to multiples of ``2**-16`` (``--grid``; ``-1`` keeps them
continuous, nearly every row a distinct value), and outcomes
``y ~ Bernoulli(p (1.2 - 0.2 p))`` (slightly miscalibrated). Each partition builds a
calibration sketch with a budget (``--max-size``; 0 keeps it exact), the
sketches merge in a tree, and smCE, cutoff, SCDL and binned ECE (16 uniform
bins) are computed from the merged sketch. SCDL and binned ECE with a
power-of-two number of bins are exact from a compacted sketch; smCE and
cutoff come with the sketch's bound.

Each configuration runs in its own process (and its own LocalCluster of 2
worker processes, 1 thread each), so the peak memory reported is that run's:
the maximum resident set size (``ru_maxrss``) of the client, the scheduler
and each worker. The in-memory baseline at 10^7 (the public measures on
numpy arrays, ``np.sort`` and ``np.argsort`` of the same predictions) runs
in a process of its own too; at 10^7 every Dask value is checked against it:
within the sketch's bound (0 for SCDL and binned ECE), up to float rounding.

    python benchmarks/bench_scale.py                      # 1e7 and 1e8
    python benchmarks/bench_scale.py --sizes 1e7 1e8 1e9
    python benchmarks/bench_scale.py --max-size 0         # exact sketches
    python benchmarks/bench_scale.py --grid -1 --chunk 1e6 --max-size 65536 --sizes 1e7
"""

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time

SEED = 20261123
N_BINS = 16  # a power of two: binned ECE is exact from a compacted sketch


def generate(seed, index, rows, grid=None):
    """Partition ``index``: outcomes and predictions, the same in every process.

    ``grid=G`` rounds the predictions to multiples of ``2**-G`` (scores as a
    model stored in float16 or rounded reports them): at most ``2**G + 1``
    distinct values.
    """
    import numpy as np

    rng = np.random.default_rng([seed, index])
    p = rng.random(rows)
    p *= p
    if grid is not None:
        p = np.rint(np.ldexp(p, grid), out=p)
        p = np.ldexp(p, -grid, out=p)
    # P(y = 1 | p) = p (1.2 - 0.2 p): overconfident low, a cheap polynomial
    y = rng.random(rows, dtype=np.float32) < p * (1.2 - 0.2 * p)
    return y, p


def measures_of(source, *args):
    """The four measures of a sketch (``source``) or of in-memory rows."""
    from skcal import (
        binned_ece,
        cutoff_calibration_error,
        smooth_calibration_error,
        soft_binned_cdl,
    )

    out = {}
    for name, func, kwargs in (
        ("smooth_calibration_error", smooth_calibration_error, {}),
        ("cutoff_calibration_error", cutoff_calibration_error, {}),
        ("soft_binned_cdl", soft_binned_cdl, {}),
        ("binned_ece", binned_ece, {"n_bins": N_BINS}),
    ):
        t0 = time.perf_counter()
        value = func(source, *args, **kwargs)
        out[name] = {"value": float(value), "time": time.perf_counter() - t0}
    return out


def max_rss_bytes():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


def run_in_memory(n, chunk, grid):
    """The in-memory path on the rows of the first ``n`` (a whole number of partitions)."""
    import numpy as np

    t0 = time.perf_counter()
    pieces = [generate(SEED, i, c, grid) for i, c in enumerate(_chunks(n, chunk))]
    y = np.concatenate([a for a, _ in pieces])
    p = np.concatenate([b for _, b in pieces])
    del pieces
    generation = time.perf_counter() - t0
    base = {}
    for name, func in (("sort", np.sort), ("argsort", np.argsort)):
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            func(p)
            times.append(time.perf_counter() - t0)
        base[name] = sorted(times)[1]
    out = {
        "n": n,
        "generation": generation,
        "base": base,
        "measures": measures_of(y, p),
        "max_rss": max_rss_bytes(),
        "load": os.getloadavg(),
    }
    print(json.dumps(out))


def _chunks(n, chunk):
    sizes = [chunk] * (n // chunk)
    if n % chunk:
        sizes.append(n % chunk)
    return sizes


def run_dask(n, chunk, max_size, split_every, grid):
    import dask
    import dask.array as da
    import numpy as np
    from distributed import Client, LocalCluster

    from skcal import dask_sketch

    load_before = os.getloadavg()
    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
        memory_limit="4GiB",
    )
    client = Client(cluster)
    client.run(lambda: __import__("skcal.sketch"))  # imports are not the measure
    sizes = _chunks(n, chunk)
    parts = [
        dask.delayed(generate, nout=2, pure=True)(SEED, i, c, grid) for i, c in enumerate(sizes)
    ]
    y = da.concatenate(
        [da.from_delayed(part[0], shape=(c,), dtype=bool) for part, c in zip(parts, sizes)]
    )
    p = da.concatenate(
        [da.from_delayed(part[1], shape=(c,), dtype=np.float64) for part, c in zip(parts, sizes)]
    )
    t0 = time.perf_counter()
    sketch = dask_sketch(y, p, max_size=max_size, split_every=split_every)
    sketch_time = time.perf_counter() - t0
    measures = measures_of(sketch)
    wall = time.perf_counter() - t0
    bounds = sketch.error_bounds()
    # error_bounds() is for 15 bins; 16 uniform bins are refined by any grid
    # of 2**level >= 16 cells, and then exact (see CalibrationSketch)
    if sketch.exact or sketch.level >= 4:
        bounds["binned_ece"] = 0.0
    workers = client.run(max_rss_bytes)
    scheduler = client.run_on_scheduler(max_rss_bytes)
    out = {
        "n": n,
        "partitions": len(sizes),
        "chunk": chunk,
        "max_size": max_size,
        "sketch_time": sketch_time,
        "wall": wall,
        "exact": sketch.exact,
        "level": sketch.level,
        "n_values": sketch.n_values,
        "n_samples": sketch.n_samples,
        "sketch_bytes": len(sketch.to_bytes()),
        "measures": measures,
        "bounds": {k: bounds[k] for k in measures},
        "max_rss": {
            "client": max_rss_bytes(),
            "scheduler": scheduler,
            **{f"worker {i}": v for i, v in enumerate(workers.values())},
        },
        "load": [load_before, os.getloadavg()],
    }
    client.close()
    cluster.close()
    print(json.dumps(out))


def run(args):
    cmd = [sys.executable, os.path.abspath(__file__), *args]
    # outside the source tree, so the installed skcal is used
    result = subprocess.run(
        cmd, capture_output=True, text=True, cwd=os.path.expanduser("~")
    )
    if result.returncode:
        sys.stderr.write(result.stderr)
        raise SystemExit(f"{' '.join(args)} failed")
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


def gib(b):
    return b / 2**30


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=float, default=[1e7, 1e8])
    parser.add_argument("--chunk", type=float, default=1e7, help="rows per partition")
    parser.add_argument("--max-size", type=int, default=2**12,
                        help="sketch budget; 0 for an exact sketch")
    parser.add_argument("--grid", type=int, default=16,
                        help="predictions on multiples of 2**-GRID; -1 for continuous")
    parser.add_argument("--split-every", type=int, default=4)
    parser.add_argument("--in-memory", type=float, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--dask", type=float, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    chunk = int(args.chunk)
    grid = None if args.grid < 0 else args.grid
    max_size = args.max_size or None
    if args.in_memory is not None:
        return run_in_memory(int(args.in_memory), chunk, grid)
    if args.dask is not None:
        return run_dask(int(args.dask), chunk, max_size, args.split_every, grid)
    options = ["--chunk", str(chunk), "--grid", str(args.grid)]

    import dask
    import distributed
    import numpy as np

    import skcal

    print(f"skcal {skcal.__version__}, numpy {np.__version__}, dask {dask.__version__}, "
          f"distributed {distributed.__version__}, Python {platform.python_version()}, "
          f"{platform.machine()}, {os.cpu_count()} logical CPUs")
    print(f"numpy CPU features (baseline, then dispatched): {cpu_features()}")
    data = "continuous" if grid is None else f"on the grid of multiples of 2**-{grid}"
    print(f"predictions p = u**2 {data}, outcomes y ~ Bernoulli(p (1.2 - 0.2 p))")
    print(f"LocalCluster: 2 worker processes x 1 thread; {chunk:.0e} rows per partition; "
          f"sketch max_size {max_size}; merged {args.split_every} at a time")
    print("peak memory = max resident set size (ru_maxrss) of each process of that run\n")

    mem = run(["--in-memory", "1e7", *options])
    print(f"in memory, n = 1e7 (one process; load average before "
          f"{mem['load'][0]:.1f}): np.sort {mem['base']['sort']:.3f} s, "
          f"np.argsort {mem['base']['argsort']:.3f} s, generating the rows "
          f"{mem['generation']:.3f} s, peak RSS {gib(mem['max_rss']):.2f} GiB")
    total = 0.0
    for name, m in mem["measures"].items():
        total += m["time"]
        print(f"  {name:<26} {m['value']:.9f}  {m['time']:7.3f} s  "
              f"{m['time'] / mem['base']['sort']:6.2f} x sort  "
              f"{m['time'] / mem['base']['argsort']:6.2f} x argsort")
    print(f"  {'all four':<26} {'':11}  {total:7.3f} s  "
          f"{total / mem['base']['sort']:6.2f} x sort  "
          f"{total / mem['base']['argsort']:6.2f} x argsort\n")

    for n in (int(s) for s in args.sizes):
        res = run(["--dask", str(n), *options, "--max-size", str(args.max_size),
                   "--split-every", str(args.split_every)])
        per = res["wall"] / (n / 1e7)
        rss = res["max_rss"]
        kind = "exact" if res["exact"] else f"compacted to cells of 2**-{res['level']}"
        print(f"Dask, n = {n:.0e} ({res['partitions']} partitions; load average "
              f"{res['load'][0][0]:.1f} before, {res['load'][1][0]:.1f} after)")
        print(f"  wall {res['wall']:.1f} s (sketch {res['sketch_time']:.1f} s, incl. "
              f"generating the rows), {per:.2f} s per 1e7 rows = "
              f"{per / total:.2f} x the four in-memory measures at 1e7, "
              f"{per / mem['base']['sort']:.2f} x np.sort, "
              f"{per / mem['base']['argsort']:.2f} x np.argsort at 1e7")
        print(f"  sketch: {kind}, {res['n_values']} values, {res['n_samples']} rows, "
              f"{res['sketch_bytes'] / 2**20:.1f} MiB as bytes")
        print("  peak RSS [GiB]: " + ", ".join(f"{k} {gib(v):.2f}" for k, v in rss.items())
              + f"; largest {gib(max(rss.values())):.2f}")
        for name, m in res["measures"].items():
            bound = res["bounds"][name]
            line = f"  {name:<26} {m['value']:.9f}  bound {bound:.2e}"
            if n == 10**7 and name in mem["measures"]:
                ref = mem["measures"][name]["value"]
                # exact arithmetic gives |diff| <= bound; both sides round (~1e-15)
                ok = abs(m["value"] - ref) <= bound + 1e-12
                line += f"  in memory {ref:.9f}  diff {m['value'] - ref:+.2e} " + (
                    "(ok)" if ok else "(OUTSIDE)")
            print(line)
        print()


if __name__ == "__main__":
    main()
