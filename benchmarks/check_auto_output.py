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

With ``--jitter`` the older build is also fitted on the calibration
probabilities moved by rounding only (every entry times ``1 - 4e-16``: ties,
orders and exact zeros kept): the distance between those two fits is the noise floor of
the optimisers (L-BFGS stops where the last bits of its sums take it; on
flat objectives, e.g. inputs with exact 0 and 1, that moves its stopping
point by far more than 1e-15), the yardstick for "changed by the
optimisers' tolerance only".

Run: ``python benchmarks/check_auto_output.py --before DIR [--jitter] [--only name ...]``.
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


def _jitter(P):
    """``P`` moved by rounding: every entry times ``1 - 4e-16`` (two units in the last place).

    One factor for all entries keeps every tie a tie and every order (the
    binning methods see the same data); exact zeros stay zeros (an exact 1
    does not stay 1, so "sigmoid-probability" may leave the table); only
    the last bits of the logarithms, and of every sum over them, change.
    """
    return P * (1.0 - 2.0 * np.finfo(np.float64).eps)


def fit_all(names, jitter=False):
    """``{case: {...}}``: the fitted auto's choice, weights, scores and outputs.

    ``jitter``: also fit on the calibration probabilities moved by rounding
    only (``_jitter``), under ``"jitter"``: how far the optimisers' stopping
    points move when the last bits of their sums change, i.e. the noise
    floor of any change of the arithmetic.
    """
    out = {}
    table = cases()
    for name in names:
        P, y, P_test = table[name]()
        start = time.process_time()
        auto = rc.AutoRecalibrator(random_state=0).fit(P, y)
        cpu = time.process_time() - start
        out[name] = _summary(auto, P, P_test, cpu)
        if jitter:
            # predicted on the moved input too: a step map (isotonic, Venn-ABERS)
            # fitted on it has its steps at the moved values
            moved = rc.AutoRecalibrator(random_state=0).fit(_jitter(P), y)
            out[name]["jitter"] = _summary(moved, _jitter(P), _jitter(P_test), None)
    return out


def _summary(auto, P, P_test, cpu):
    return {
        "chosen": auto.chosen_,
        "weights": auto.weights_,
        "scores": {k: v["score"] for k, v in auto.scores_.items()},
        "Q_cal": auto.predict_proba(P).tolist(),
        "Q_test": auto.predict_proba(P_test).tolist(),
        "cpu": cpu,
    }


def _compare(b, a):
    """``(same choice, max |d weight|, {candidate: |d score|}, max |d predict_proba|)``."""
    keys_equal = sorted(a["weights"]) == sorted(b["weights"])
    dw = (max(abs(a["weights"][k] - b["weights"][k]) for k in a["weights"])
          if keys_equal else np.inf)
    # a candidate in one table only (e.g. "sigmoid-probability", there when
    # the input has an exact 0 or 1) counts as a change
    per = {k: _max_diff(b["scores"][k], a["scores"][k]) if k in a["scores"] else np.inf
           for k in set(b["scores"]) | set(a["scores"])}
    dq = max(_max_diff(b["Q_cal"], a["Q_cal"]), _max_diff(b["Q_test"], a["Q_test"]))
    return keys_equal and a["chosen"] == b["chosen"], dw, per, dq


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
    parser.add_argument("--jitter", action="store_true",
                        help="also fit the before build on input moved by rounding (noise floor)")
    parser.add_argument("--path", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--out", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    names = args.only or list(cases())
    if args.path is not None:
        with open(args.out, "w") as f:
            json.dump(fit_all(names, args.jitter), f)
        return
    if args.before is None:
        parser.error("--before DIR is required (the build to compare with)")
    out = os.path.join(os.path.expanduser("~"), f".check_auto_output_{os.getpid()}.json")
    subprocess.run([sys.executable, os.path.abspath(__file__), "--path",
                    os.path.abspath(args.before), "--out", out, "--only", *names]
                   + (["--jitter"] if args.jitter else []),
                   check=True, cwd=os.path.expanduser("~"))
    with open(out) as f:
        before = json.load(f)
    os.remove(out)
    after = fit_all(names)
    worst = 0.0
    same = True
    for name in names:
        b, a = before[name], after[name]
        ok, dw, per, dq = _compare(b, a)
        same &= ok
        worst = max(worst, dq)
        print(f"{name}: chosen {b['chosen']!r} -> {a['chosen']!r}; weights "
              f"{ {k: round(v, 4) for k, v in b['weights'].items()} } -> "
              f"{ {k: round(v, 4) for k, v in a['weights'].items()} }")
        print(f"    after vs before: max |d weight| {dw:.2e}, max |d out-of-fold score| "
              f"{max(per.values()):.2e}, max |d predict_proba| {dq:.2e}; "
              f"fit CPU {b['cpu']:.3f} -> {a['cpu']:.3f} s")
        moved = ", ".join(f"{k} {d:.1e}" for k, d in sorted(per.items(), key=lambda x: -x[1])
                          if d > 1e-9)
        if moved:
            print(f"    out-of-fold scores that moved by more than 1e-9: {moved}")
        if "jitter" in b:
            ok, dw, per, dq = _compare(b, b["jitter"])
            moved = ", ".join(f"{k} {d:.1e}" for k, d in
                              sorted(per.items(), key=lambda x: -x[1]) if d > 1e-9)
            print(f"    noise floor (before, input times 1 - 4e-16): same choice {ok}, "
                  f"max |d weight| {dw:.2e}, max |d out-of-fold score| {max(per.values()):.2e}, "
                  f"max |d predict_proba| {dq:.2e}" + (f"; moved: {moved}" if moved else ""))
    print(f"same choices and weight supports in every case: {same}; "
          f"largest |d predict_proba|: {worst:.2e}")


if __name__ == "__main__":
    main()
