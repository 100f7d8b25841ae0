"""Time the patching recalibrator's fit against scikit-learn's isotonic recalibration.

Two kinds of over-confident predictions ``P`` over ``C`` classes:

* ``sqrt``: ``P = softmax(z)`` with ``z ~ N(0, 2^2)``, outcomes drawn from
  ``sqrt(P)`` renormalised (the data of the fit timing in
  ``compare_recalibrators.py``, where the issue's 17.5x was measured);
* ``noisy``: outcomes drawn from ``softmax(z)`` with ``z ~ N(0, 1.5^2)``,
  predictions ``softmax(1.8 z + noise)``.

On the same data, in the same process and taking turns, it times

* ``patching``: ``UtilityPatchingRecalibrator().fit(P, y)`` (the defaults:
  the "comb" family, ``tol="auto"``, Armijo steps);
* ``isotonic``: one-vs-rest isotonic recalibration as
  :class:`~sklearn.calibration.CalibratedClassifierCV` (``method="isotonic"``)
  fits it: one :class:`~sklearn.isotonic.IsotonicRegression`
  (``out_of_bounds="clip"``) per class on ``(P[:, c], y == c)``;
* ``CalibratedClassifierCV``: scikit-learn's own
  ``CalibratedClassifierCV(FrozenEstimator(...), method="isotonic")`` on the
  probabilities (the same fit with its validation and bookkeeping).

The ratio is patching time / isotonic time, each the median of ``--repeat``
fits, in CPU time of the process (``time.process_time``: on a shared machine
wall time mostly measures the other processes) and in wall time. Peak
memory of one fit (tracemalloc, numpy's allocations traced) is reported in
MB. The fitted patches are fingerprinted (utilities, intervals,
signs and steps to the last bit, and the fitted predictions) so that
before/after runs can be checked to fit the same model.

With ``--before DIR`` (a directory holding another build of skcal, e.g.
``pip install --no-deps --no-build-isolation --target DIR <old checkout>``)
each size is run by that build and by the current one, in separate processes
taking turns, so before and after are measured in one run on one machine.

    python benchmarks/bench_recalibration.py
    python benchmarks/bench_recalibration.py --before /tmp/skcal_before --rounds 2

``--auto`` times instead ``AutoRecalibrator().fit`` (every candidate of its
default table, the choice on a subsample of 10,000 rows, the refit of the
choice on all the rows) and each candidate's own fit on all the rows,
against one-vs-rest isotonic (one IsotonicRegression per class), on the
``noisy`` data at n = 1e5 with 5 and 10 classes (issue 21: auto within 10x
isotonic at 5 classes; every family <= 1 s at 10 classes):

    python benchmarks/bench_recalibration.py --auto
    python benchmarks/bench_recalibration.py --auto --before /tmp/skcal_before --repeat 1

(``--before`` here: each build in its own process, one after the other;
the candidates are timed with ``random_state=0``.)
"""

import argparse
import hashlib
import json
import os
import platform
import subprocess
import sys
import time
import tracemalloc

SIZES = ["100000x10xsqrt", "100000x10xnoisy", "10000x10xnoisy"]


def make_data(n, C, kind, seed=0):
    import numpy as np

    rng = np.random.default_rng(seed)
    if kind == "sqrt":
        Z = rng.normal(scale=2.0, size=(n, C))
        P = np.exp(Z)
        P /= P.sum(axis=1, keepdims=True)
        Q = np.sqrt(P)
        Q /= Q.sum(axis=1, keepdims=True)
        y = (Q.cumsum(axis=1) > rng.uniform(size=(n, 1))).argmax(axis=1)
        return P, y
    Z = rng.normal(0.0, 1.5, size=(n, C))
    truth = np.exp(Z - Z.max(axis=1, keepdims=True))
    truth /= truth.sum(axis=1, keepdims=True)
    y = (truth.cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)
    Zp = 1.8 * Z + rng.normal(0.0, 0.3, size=(n, C))
    P = np.exp(Zp - Zp.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    return P, y


def isotonic_ovr(P, y):
    """What CalibratedClassifierCV(method="isotonic") fits: one regression per class."""
    from sklearn.isotonic import IsotonicRegression

    return [
        IsotonicRegression(out_of_bounds="clip").fit(P[:, c], (y == c).astype(float))
        for c in range(P.shape[1])
    ]


def sklearn_isotonic(P, y):
    """CalibratedClassifierCV(FrozenEstimator(identity), method="isotonic") on ``P``."""
    from skcal.recalibration._common import SklearnRecalibrator

    return SklearnRecalibrator("isotonic").fit(P, y)


def fingerprint(rec, P):
    digest = hashlib.sha256()
    for patch in rec.patches_:
        a, b = patch.interval
        digest.update(
            f"{patch.utility!r} {a.hex()} {b.hex()} {patch.sign} "
            f"{float(patch.step).hex()};".encode()
        )
    digest.update((rec.transform(P) + 0.0).tobytes())  # -0.0 as 0.0
    return digest.hexdigest()[:16]


def peak_mb(func):
    tracemalloc.start()
    tracemalloc.reset_peak()
    func()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def worker(n, C, kind, repeat, path=None):
    """Time one size with the skcal found on sys.path (or in ``path``); print JSON."""
    if path is not None:
        # an editable install's import hook would shadow the other build
        sys.meta_path[:] = [f for f in sys.meta_path if "Mesonpy" not in type(f).__name__]
        sys.path.insert(0, path)
    import skcal
    from skcal.recalibration import UtilityPatchingRecalibrator

    P, y = make_data(n, C, kind)
    fits = {
        "patching": lambda: UtilityPatchingRecalibrator().fit(P, y),
        "isotonic": lambda: isotonic_ovr(P, y),
        "CalibratedClassifierCV": lambda: sklearn_isotonic(P, y),
    }
    fits["patching"]()  # warm up (imports, the compiled kernels)
    times = {name: [] for name in fits}
    cpu = {name: [] for name in fits}
    for _ in range(repeat):
        for name, fit in fits.items():  # taking turns: one load for all three
            c0, t0 = time.process_time(), time.perf_counter()
            fit()
            times[name].append(time.perf_counter() - t0)
            cpu[name].append(time.process_time() - c0)
    rec = fits["patching"]()
    out = {
        "skcal": skcal.__version__,
        "path": os.path.dirname(skcal.__file__),
        "times": times,
        "cpu": cpu,
        "peak_mb": {name: peak_mb(fit) for name, fit in fits.items()},
        "n_patches": len(rec.patches_),
        "fingerprint": fingerprint(rec, P),
    }
    print(json.dumps(out))


def run_worker(n, C, kind, repeat, path):
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", str(n), str(C), kind]
    cmd += ["--repeat", str(repeat)]
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


def median(values):
    values = sorted(values)
    return values[len(values) // 2]


def auto_worker(size, repeat, path=None):
    """Time AutoRecalibrator and every candidate at one size; print JSON."""
    if path is not None:
        # an editable install's import hook would shadow the other build
        sys.meta_path[:] = [f for f in sys.meta_path if "Mesonpy" not in type(f).__name__]
        sys.path.insert(0, path)
    import numpy as np
    from sklearn.base import clone

    import skcal
    from skcal.recalibration import AutoRecalibrator
    from skcal.recalibration._auto import _CANDIDATES

    n, C, kind = size.lower().split("x")
    n, C = int(float(n)), int(C)
    P, y = make_data(n, C, kind)
    labels = np.arange(C)

    def timed(func):
        cpu = []
        for _ in range(repeat):
            start = time.process_time()
            out = func()
            cpu.append(time.process_time() - start)
        return median(cpu), out

    iso, _ = timed(lambda: isotonic_ovr(P, y))
    auto_s, auto = timed(lambda: AutoRecalibrator(random_state=0).fit(P, y))
    out = {"path": os.path.dirname(skcal.__file__), "isotonic": iso, "auto": auto_s,
           "chosen": auto.chosen_, "rows": auto.n_selection_samples_, "candidates": {}}
    for name, factory in _CANDIDATES.items():
        est = factory()
        if name == "identity" or name in ("temperature+patching", "isotonic+patching"):
            continue
        params = est.get_params()
        if "labels" in params:
            est.set_params(labels=labels)
        if "random_state" in params:
            est.set_params(random_state=0)
        out["candidates"][name], _ = timed(lambda est=est: clone(est).fit(P, y))
    print(json.dumps(out))


def auto_timings(sizes, repeat, before=None):
    """Print AutoRecalibrator's and every candidate's fit time / isotonic's.

    With ``before`` (a directory with another build), each size is timed by
    that build and by this one, in separate processes, one after the other.
    """
    builds = [("after", None)] if before is None else [
        ("before", os.path.abspath(before)), ("after", None)]
    print(f"load average {os.getloadavg()[0]:.1f}; CPU seconds (process time), median "
          f"of {repeat}; ratio = fit / one-vs-rest isotonic (IsotonicRegression per class)")
    for size in sizes:
        runs = {}
        for label, path in builds:
            cmd = [sys.executable, os.path.abspath(__file__), "--auto-worker", size,
                   "--repeat", str(repeat)]
            if path is not None:
                cmd += ["--path", path]
            result = subprocess.run(cmd, capture_output=True, text=True, check=True,
                                    cwd=os.path.expanduser("~"))
            runs[label] = json.loads(result.stdout.strip().splitlines()[-1])
        print(f"\n{size}: isotonic " + ", ".join(
            f"{label} {r['isotonic']:.3f} s" for label, r in runs.items()))
        header = "".join(f"{label + ' s':>12}{'ratio':>8}" for label in runs)
        print(f"  {'fit':<18}{header}")

        def line(name, get, runs=runs):
            cells = ""
            for r in runs.values():
                t = get(r)
                cells += f"{t:>12.3f}{t / r['isotonic']:>7.1f}x"
            flag = "  > 1 s" if get(runs["after"]) > 1.0 and name != "auto" else ""
            print(f"  {name:<18}{cells}{flag}")

        line("auto", lambda r: r["auto"])
        print("  auto chose " + ", ".join(
            f"{label}: {r['chosen']!r} on {r['rows']} rows" for label, r in runs.items()))
        for name in runs["after"]["candidates"]:
            line(name, lambda r, name=name: r["candidates"].get(name, float("nan")))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--auto", action="store_true",
                        help="time AutoRecalibrator and every candidate instead")
    parser.add_argument("--sizes", nargs="+", default=SIZES,
                        help="n x C x data, e.g. 100000x10xsqrt")
    parser.add_argument("--repeat", type=int, default=3, help="fits per process")
    parser.add_argument("--rounds", type=int, default=1, help="processes per build")
    parser.add_argument("--before", default=None, help="directory with another skcal build")
    parser.add_argument("--worker", nargs=3, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--path", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--auto-worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.auto_worker is not None:
        auto_worker(args.auto_worker, args.repeat, args.path)
        return
    if args.auto:
        sizes = args.sizes if args.sizes != SIZES else ["100000x5xnoisy", "100000x10xnoisy"]
        auto_timings(sizes, args.repeat, args.before)
        return
    if args.worker is not None:
        n, C, kind = args.worker
        worker(int(n), int(C), kind, args.repeat, args.path)
        return

    import numpy as np
    import sklearn

    builds = [("after", None)] if args.before is None else [
        ("before", os.path.abspath(args.before)),
        ("after", None),
    ]
    print(f"numpy {np.__version__}, scikit-learn {sklearn.__version__}, Python "
          f"{platform.python_version()}, {platform.machine()}, "
          f"{os.cpu_count()} logical CPUs, load average {os.getloadavg()[0]:.1f} at start")
    print(f"numpy CPU features (baseline, then dispatched): {cpu_features()}")
    print(f"fit times: median of {args.repeat} fits x {args.rounds} process(es) per build, "
          "the three fits taking turns; CPU = process time, wall = elapsed time;")
    print("ratio = patching / isotonic (IsotonicRegression per class), /CCCV = patching / "
          "CalibratedClassifierCV(method='isotonic'), same process;")
    print("peak MB = tracemalloc peak of one fit (patching / isotonic); fingerprint = the "
          "fitted patches and predictions, bit for bit\n")
    print(f"{'n':>7} {'C':>3} {'data':<6} {'build':<7} {'patching CPU':>12} "
          f"{'isotonic CPU':>12} {'CCCV CPU':>9} {'ratio':>6} {'/CCCV':>6} "
          f"{'wall ratio':>10} {'patches':>7} {'peak MB':>15} {'fingerprint':>16}")
    for size in args.sizes:
        n, C, kind = size.lower().split("x")
        n, C = int(float(n)), int(C)
        runs = {label: [] for label, _ in builds}
        for _ in range(args.rounds):
            for label, path in builds:
                runs[label].append(run_worker(n, C, kind, args.repeat, path))
        for label, _ in builds:
            res = runs[label]
            c = {k: median([x for r in res for x in r["cpu"][k]]) for k in res[0]["cpu"]}
            t = {k: median([x for r in res for x in r["times"][k]]) for k in res[0]["times"]}
            mem = res[-1]["peak_mb"]
            prints = {r["fingerprint"] for r in res}
            print(f"{n:>7} {C:>3} {kind:<6} {label:<7} {c['patching']:>12.3f} "
                  f"{c['isotonic']:>12.3f} {c['CalibratedClassifierCV']:>9.3f} "
                  f"{c['patching'] / c['isotonic']:>6.2f} "
                  f"{c['patching'] / c['CalibratedClassifierCV']:>6.2f} "
                  f"{t['patching'] / t['isotonic']:>10.2f} "
                  f"{res[-1]['n_patches']:>7} "
                  f"{mem['patching']:>6.1f} / {mem['isotonic']:>5.1f} "
                  f"{'/'.join(sorted(prints)):>16}")
        if len(builds) == 2:
            before = {r["fingerprint"] for r in runs["before"]}
            after = {r["fingerprint"] for r in runs["after"]}
            print(f"{'':>18} same patches and predictions before and after: {before == after}")
        print()
    for label, _ in builds:
        print(f"{label}: skcal {runs[label][0]['skcal']} from {runs[label][0]['path']}")
    print(f"load average {os.getloadavg()[0]:.1f} at the end; OPENBLAS_NUM_THREADS="
          f"{os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}")


if __name__ == "__main__":
    main()
