"""Does a change of skcal's recalibration internals change AutoRecalibrator's output?

Fits ``AutoRecalibrator(random_state=0)`` on a few cases with two builds of
skcal -- this one, and another given by ``--before DIR`` (a directory
holding an older build: e.g. ``git archive <commit> skcal | tar -x -C DIR``
with the compiled kernels of ``build/*/skcal/_kernels`` copied in) -- and
prints, per case, both builds' ``chosen_`` and ``weights_``, the largest
difference of the weights, of the out-of-fold scores and of
``predict_proba`` (on the calibration rows and on held-out rows). The
speed work of issue 21 (item 3) may change the fits by the optimisers'
tolerance only: the printed differences should be about 1e-6 or less and
the choices equal.

Cases: ``make_data(100000, 5)`` and ``make_data(20000, 10)`` of
``bench_recalibrators.py``, and scikit-learn's bundled data sets (breast
cancer, wine, digits, iris) with a base model trained on a split of their
rows (no download).

Run: ``python benchmarks/check_auto_output.py --before DIR [--only name ...]``.
"""

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

if "--path" in sys.argv:  # a worker fitting with another build (see --before)
    # an editable install's import hook would shadow the other build
    sys.meta_path[:] = [f for f in sys.meta_path if "Mesonpy" not in type(f).__name__]
    sys.path.insert(0, sys.argv[sys.argv.index("--path") + 1])

import skcal.recalibration as rc  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_recalibrators import make_data  # noqa: E402


def _bundled(loader, model):
    """``(P_cal, y_cal, P_test)``: a base model's probabilities on two splits."""
    from sklearn.model_selection import train_test_split

    X, y = loader(return_X_y=True)
    X_fit, X_rest, y_fit, y_rest = train_test_split(
        X, y, test_size=0.6, random_state=0, stratify=y)
    X_cal, X_test, y_cal, _ = train_test_split(
        X_rest, y_rest, test_size=0.4, random_state=0, stratify=y_rest)
    model.fit(X_fit, y_fit)
    return model.predict_proba(X_cal), y_cal, model.predict_proba(X_test)


def _generated(n, C):
    P, y = make_data(n, C)
    P_test, _ = make_data(5000, C, seed=1)
    return P, y, P_test


def cases():
    from sklearn import datasets
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    def logistic():
        return make_pipeline(StandardScaler(), LogisticRegression(C=100.0, max_iter=2000))

    return {
        "make_data(1e5, 5)": lambda: _generated(100_000, 5),
        "make_data(2e4, 10)": lambda: _generated(20_000, 10),
        "breast_cancer/GaussianNB": lambda: _bundled(datasets.load_breast_cancer, GaussianNB()),
        "wine/RandomForest": lambda: _bundled(
            datasets.load_wine, RandomForestClassifier(50, random_state=0)),
        "digits/GaussianNB": lambda: _bundled(datasets.load_digits, GaussianNB()),
        "digits/LogisticRegression": lambda: _bundled(datasets.load_digits, logistic()),
        "iris/RandomForest": lambda: _bundled(
            datasets.load_iris, RandomForestClassifier(50, random_state=0)),
    }


def fit_all(names):
    """``{case: {...}}``: the fitted auto's choice, weights, scores and outputs."""
    out = {}
    table = cases()
    for name in names:
        P, y, P_test = table[name]()
        start = time.process_time()
        auto = rc.AutoRecalibrator(random_state=0).fit(P, y)
        cpu = time.process_time() - start
        out[name] = {
            "chosen": auto.chosen_,
            "weights": auto.weights_,
            "scores": {k: v["score"] for k, v in auto.scores_.items()},
            "Q_cal": auto.predict_proba(P).tolist(),
            "Q_test": auto.predict_proba(P_test).tolist(),
            "cpu": cpu,
        }
    return out


def _max_diff(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    both = np.isfinite(a) & np.isfinite(b)
    if np.any(np.isfinite(a) != np.isfinite(b)) or np.any(a[~both] != b[~both]):
        return np.inf
    return float(np.max(np.abs(a[both] - b[both]), initial=0.0))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=None, help="directory with another skcal build")
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--path", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--out", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    names = args.only or list(cases())
    if args.path is not None:
        with open(args.out, "w") as f:
            json.dump(fit_all(names), f)
        return
    if args.before is None:
        parser.error("--before DIR is required (the build to compare with)")
    out = os.path.join(os.path.expanduser("~"), f".check_auto_output_{os.getpid()}.json")
    subprocess.run([sys.executable, os.path.abspath(__file__), "--path",
                    os.path.abspath(args.before), "--out", out, "--only", *names],
                   check=True, cwd=os.path.expanduser("~"))
    with open(out) as f:
        before = json.load(f)
    os.remove(out)
    after = fit_all(names)
    worst = 0.0
    same = True
    for name in names:
        b, a = before[name], after[name]
        keys_equal = sorted(a["weights"]) == sorted(b["weights"])
        dw = (max(abs(a["weights"][k] - b["weights"][k]) for k in a["weights"])
              if keys_equal else np.inf)
        ds = _max_diff([b["scores"][k] for k in b["scores"]],
                       [a["scores"][k] for k in b["scores"]])
        dq = max(_max_diff(b["Q_cal"], a["Q_cal"]), _max_diff(b["Q_test"], a["Q_test"]))
        same &= keys_equal and a["chosen"] == b["chosen"]
        worst = max(worst, dq)
        print(f"{name}: chosen {b['chosen']!r} -> {a['chosen']!r}; weights "
              f"{ {k: round(v, 4) for k, v in b['weights'].items()} } -> "
              f"{ {k: round(v, 4) for k, v in a['weights'].items()} }")
        print(f"    max |d weight| {dw:.2e}, max |d out-of-fold score| {ds:.2e}, "
              f"max |d predict_proba| {dq:.2e}; fit CPU {b['cpu']:.3f} -> {a['cpu']:.3f} s")
    print(f"same choices and weight supports in every case: {same}; "
          f"largest |d predict_proba|: {worst:.2e}")


if __name__ == "__main__":
    main()
