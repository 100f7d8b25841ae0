"""The sorting measures on other data and other inputs than ``bench_binary.py``'s.

``bench_binary.py`` times one law of predictions (uniform, outcomes from
``p**1.2``) given as the fast path likes it (int64 labels, a contiguous
float64 column). This script times smCE, the cutoff error, dCE and CDL,
as ratios to ``np.sort`` of the same predictions (``np.argsort`` with
``--weighted``), on

* other laws of predictions and outcomes (``--part data``): calibrated and
  miscalibrated uniform predictions, an arcsine law, small probabilities,
  predictions rounded to 10**-3 or to float32 (as most models output them),
  ten distinct values, a confident model (``sigmoid(3 logit q)``), a
  bimodal one, sorted input, outcomes independent of the predictions;
* other forms of the same input (``--part inputs``): labels as bool,
  float, int32, uint8, -1/1, strings, Python objects and a pandas
  categorical (with ``pos_label``), predictions as float32, as a strided
  column, as a binary ``predict_proba``, and ``sample_weight`` of ones or
  of one other constant;
* multiclass ``predict_proba`` in other layouts (``--part multiclass``, 10
  classes): C-ordered, column-major (as a pandas DataFrame holds it), a
  DataFrame, float32, string labels; the top-label cutoff error as a ratio
  to ``np.argmax`` of the matrix plus the binary cutoff error of its top
  label (issue 26 item 5: within 2).

Each build runs in a fresh process; with ``--before DIR`` (another build,
``pip install --no-deps --no-build-isolation --target DIR <checkout>``)
both run, one after the other, on the same data (the same seeds).

    python benchmarks/bench_variants.py --n 1e6
    python benchmarks/bench_variants.py --n 1e7 --part data --before /tmp/before
    python benchmarks/bench_variants.py --n 1e7 --part data --weighted

Times are medians of ``--repeat`` calls after an untimed one, CPU time of
the calling thread (``time.thread_time``): waiting for a core does not count.
"""

import argparse
import json
import os
import subprocess
import sys
import time

MEASURES = ("smooth_calibration_error", "cutoff_calibration_error",
            "lower_distance_to_calibration", "calibration_decision_loss")
SHORT = ("smCE", "cutoff", "dCE", "CDL")


def _data(name, n, rng):
    """``(y, p)`` of the law ``name``."""
    import numpy as np

    def bern(q):
        return (rng.random(n) < q).astype(np.int64)

    u = rng.random(n)
    if name == "uniform, calibrated":
        return bern(u), u
    if name == "uniform, p^1.2":
        return bern(u**1.2), u
    if name == "arcsine, p^2":
        b = rng.beta(0.5, 0.5, n)
        return bern(b**2), b
    if name == "small p, calibrated":
        s = rng.beta(1, 20, n)
        return bern(s), s
    if name == "rounded to 1e-3":
        r = np.round(u, 3)
        return bern(r**1.2), r
    if name == "float32, p^1.2":
        f = u.astype(np.float32).astype(np.float64)
        return bern(f**1.2), f
    if name == "ten values":
        t = np.floor(u * 10) / 10 + 0.05
        return bern(t), t
    if name == "confident model":
        q = rng.random(n)
        return bern(q), 1 / (1 + np.exp(-3 * np.log(q / (1 - q))))
    if name == "bimodal, calibrated":
        m = np.where(rng.random(n) < 0.5, rng.beta(0.3, 5, n), rng.beta(5, 0.3, n))
        return bern(m), m
    if name == "sorted input":
        s = np.sort(u)
        return bern(s**1.2), s
    if name == "y independent of p":
        return bern(0.5), u
    raise ValueError(name)


DATA = ("uniform, calibrated", "uniform, p^1.2", "arcsine, p^2", "small p, calibrated",
        "rounded to 1e-3", "float32, p^1.2", "ten values", "confident model",
        "bimodal, calibrated", "sorted input", "y independent of p")

INPUTS = ("int64 labels", "bool labels", "float labels", "int32 labels", "uint8 labels",
          "-1/1 labels", "string labels", "object labels", "categorical labels",
          "float32 predictions", "strided column", "binary predict_proba",
          "sample_weight ones", "sample_weight 0.3")


def _inputs(name, y, p):
    """``(y_true, y_prob, options)`` of the input form ``name`` of ``(y, p)``."""
    import numpy as np

    if name == "int64 labels":
        return y, p, {}
    if name == "bool labels":
        return y.astype(bool), p, {}
    if name == "float labels":
        return y.astype(np.float64), p, {}
    if name == "int32 labels":
        return y.astype(np.int32), p, {}
    if name == "uint8 labels":
        return y.astype(np.uint8), p, {}
    if name == "-1/1 labels":
        return 2 * y - 1, p, {}
    if name == "string labels":
        return np.where(y == 1, "yes", "no"), p, {"pos_label": "yes"}
    if name == "object labels":
        return np.where(y == 1, "yes", "no").astype(object), p, {"pos_label": "yes"}
    if name == "categorical labels":
        import pandas as pd

        labels = pd.Series(np.where(y == 1, "yes", "no")).astype("category")
        return labels, p, {"pos_label": "yes"}
    if name == "float32 predictions":
        return y, p.astype(np.float32), {}
    if name == "strided column":
        return y, np.column_stack([p, 1 - p])[:, 0], {}
    if name == "binary predict_proba":
        return y, np.column_stack([1 - p, p]), {}
    if name == "sample_weight ones":
        return y, p, {"sample_weight": np.ones(p.shape[0])}
    if name == "sample_weight 0.3":
        return y, p, {"sample_weight": np.full(p.shape[0], 0.3)}
    raise ValueError(name)


MULTICLASS = ("C-ordered float64", "column-major float64", "pandas DataFrame",
              "float32", "string labels")


def _multiclass(name, y, P):
    """``(y_true, y_prob, options)`` of the multiclass input form ``name``."""
    import numpy as np

    if name == "C-ordered float64":
        return y, P, {}
    if name == "column-major float64":
        return y, np.asfortranarray(P), {}
    if name == "pandas DataFrame":
        import pandas as pd

        return y, pd.DataFrame(P), {}
    if name == "float32":
        return y, P.astype(np.float32), {}
    if name == "string labels":
        names = np.array([f"c{j}" for j in range(P.shape[1])])
        return names[y], P, {"labels": names}
    raise ValueError(name)


def multiclass_worker(n, repeat):
    """The top-label cutoff error on multiclass inputs: ratio to argmax + the binary measure."""
    import numpy as np

    import skcal

    rng = np.random.default_rng(0)
    C = 10
    P = rng.dirichlet(np.full(C, 0.5), size=n)
    y = np.minimum((np.cumsum(P, axis=1) < rng.random(n)[:, None]).sum(axis=1), C - 1)
    argmax = median_time(lambda: np.argmax(P, axis=1), repeat)
    confidence = P.max(axis=1)
    correct = (P.argmax(axis=1) == y).astype(np.int64)
    binary = median_time(
        lambda: skcal.cutoff_calibration_error(correct, confidence), repeat
    )
    rows = []
    for name in MULTICLASS:
        y_true, y_prob, options = _multiclass(name, y, P)
        t = median_time(
            lambda a=y_true, q=y_prob, o=options: skcal.cutoff_calibration_error(a, q, **o),
            repeat,
        )
        rows.append({"name": name, "base": argmax + binary, "times": [t]})
    return rows


def median_time(func, repeat):
    func()
    times = []
    for _ in range(repeat):
        t0 = time.thread_time()
        func()
        times.append(time.thread_time() - t0)
    return sorted(times)[len(times) // 2]


def worker(n, repeat, part, weighted, path):
    if path is not None:
        sys.meta_path[:] = [f for f in sys.meta_path if "Mesonpy" not in type(f).__name__]
        sys.path.insert(0, path)
    import numpy as np

    import skcal

    if part == "multiclass":
        print(json.dumps({"path": os.path.dirname(skcal.__file__),
                          "rows": multiclass_worker(n, repeat)}))
        return
    functions = [getattr(skcal, name) for name in MEASURES]
    rows = []
    names = DATA if part == "data" else INPUTS
    for name in names:
        rng = np.random.default_rng(0)
        if part == "data":
            y, p = _data(name, n, rng)
            y_true, y_prob, options = y, p, {}
        else:
            y, p = _data("uniform, p^1.2", n, rng)
            y_true, y_prob, options = _inputs(name, y, p)
        if weighted:
            options = dict(options, sample_weight=np.random.default_rng(1).random(n) + 0.5)
        column = np.ascontiguousarray(p, dtype=np.float64)
        baseline = np.argsort if weighted else np.sort
        base = median_time(lambda b=baseline, c=column: b(c), repeat)
        times = [
            median_time(lambda f=f, a=y_true, q=y_prob, o=options: f(a, q, **o), repeat)
            for f in functions
        ]
        rows.append({"name": name, "base": base, "times": times})
    print(json.dumps({"path": os.path.dirname(skcal.__file__), "rows": rows}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=float, default=1e6)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--part", choices=["data", "inputs", "multiclass", "both"],
                        default="both")
    parser.add_argument("--weighted", action="store_true",
                        help="random sample_weight; ratios to np.argsort")
    parser.add_argument("--before", default=None, help="directory with another skcal build")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--path", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    n = int(args.n)
    if args.worker:
        worker(n, args.repeat, args.part, args.weighted, args.path)
        return
    import numpy as np

    print(f"numpy {np.__version__}, {os.cpu_count()} logical CPUs, load "
          f"{os.getloadavg()[0]:.1f}; n = {n}; CPU time, median of {args.repeat} "
          f"calls after an untimed one; ratio to np.{'argsort' if args.weighted else 'sort'}"
          f" of the predictions{' (random sample_weight)' if args.weighted else ''}"
          " (multiclass: to np.argmax of the matrix plus the binary cutoff error of"
          " its top label)")
    builds = [("after", None)] + ([("before", args.before)] if args.before else [])
    parts = ["data", "inputs"] if args.part == "both" else [args.part]
    for part in parts:
        results = {}
        for label, path in builds:
            cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--n", str(n),
                   "--repeat", str(args.repeat), "--part", part]
            if args.weighted:
                cmd.append("--weighted")
            if path:
                cmd += ["--path", path]
            out = subprocess.run(cmd, capture_output=True, text=True, check=True,
                                 cwd=os.path.expanduser("~"))
            results[label] = json.loads(out.stdout.strip().splitlines()[-1])
        print()
        names = ("top-label cutoff / (argmax + binary)",) if part == "multiclass" else SHORT
        header = "  ".join(f"{s:>14}" for s in names)
        print(f"{part:<22} {'base ms':>8}  {header}")
        after = results["after"]["rows"]
        before = results.get("before", {}).get("rows")
        for i, row in enumerate(after):
            cells = []
            for j in range(len(names)):
                a = row["times"][j] / row["base"]
                if before is not None:
                    b = before[i]["times"][j] / before[i]["base"]
                    cells.append(f"{b:>6.2f} ->{a:>5.2f}")
                else:
                    cells.append(f"{a:>14.2f}")
            print(f"{row['name']:<22} {row['base'] * 1e3:>8.1f}  " + "  ".join(cells))
    if args.before:
        print(f"\nbefore: {results['before']['path']}; after: {results['after']['path']}")


if __name__ == "__main__":
    main()
