"""Head-to-head of post-hoc recalibrators (issue 21, item 4).

For every case (data set x base model) and each of ``--splits`` random
50/25/25 splits into training, calibration and test rows: the base model is
fitted on the training rows, every recalibrator on the model's probabilities
of the calibration rows, and each is measured on the test rows. Metrics:
log-loss, Brier (``sum_k (p_k - 1{y = k})^2``), accuracy, top-label ECE
(15 equal-mass bins), class-wise ECE (mean over classes of the binned ECE of
``(p_k, 1{y = k})``), top-label smCE and UC over the "comb" family.

Methods: no recalibration; every skcal family at its defaults
(``skcal <name>``); ``skcal auto`` (``AutoRecalibrator()``, the default of
``RecalibratedClassifier``); scikit-learn's sigmoid, isotonic and
temperature (``CalibratedClassifierCV(FrozenEstimator(...))``); and the peer
packages that are installed (betacal, venn-abers, splinecalib:
binary, one-vs-rest then normalised for more classes; dirichletcal's
``FullDirichletCalibrator`` with ODIR, ``reg_lambda = reg_mu = 1e-3``).

The tables are paired over the splits: for "auto vs X" and a metric, the
difference auto - X on each split, its mean and standard error; a win (or
loss) when the mean is better (worse) than 0 by more than 2 standard
errors, a tie otherwise. "best peer" is, per case, the peer (scikit-learn
or another package) with the best mean on that metric.

Data sets (bundled or generated, nothing is downloaded): breast_cancer,
wine, iris, digits; make_classification with 2, 3, 5 and 10 classes
(4,000 to 12,000 rows). Base models: GaussianNB, RandomForest (200 trees),
HistGradientBoosting, and an MLP (200 units, alpha=0, 300 epochs, no early
stopping: overfitted).

Every (case, split) result is cached as JSON under ``--cache`` (default
``benchmarks/results/compare_cache``), so a run can be stopped and resumed,
and a rerun only prints the tables.

    python benchmarks/compare_recalibrators.py --quick     # a subset, minutes
    python benchmarks/compare_recalibrators.py             # the full table
"""

import argparse
import json
import os
import platform
import time
import warnings

import numpy as np
import sklearn
from sklearn.datasets import (
    load_breast_cancer,
    load_digits,
    load_iris,
    load_wine,
    make_classification,
)
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import skcal
from skcal import (
    AutoRecalibrator,
    BetaCalibration,
    DirichletCalibration,
    HistogramBinning,
    IsotonicCalibration,
    ScalingBinning,
    SigmoidCalibration,
    SplineCalibration,
    TemperatureScaling,
    VectorScaling,
    VennAbersCalibration,
    binned_ece,
    smooth_calibration_error,
    utility_calibration_error,
)

METRICS = [
    # key, header, larger is better
    ("log_loss", "log-loss", False),
    ("brier", "Brier", False),
    ("accuracy", "accuracy", True),
    ("ece_top", "top-label ECE", False),
    ("ece_cw", "class-wise ECE", False),
    ("smce", "top-label smCE", False),
    ("uc_comb", "UC comb", False),
]

SKCAL = {
    "skcal temperature": TemperatureScaling,
    "skcal sigmoid": SigmoidCalibration,
    "skcal beta": BetaCalibration,
    "skcal vector": VectorScaling,
    "skcal dirichlet": DirichletCalibration,
    "skcal histogram": HistogramBinning,
    "skcal isotonic": IsotonicCalibration,
    "skcal scaling-binning": ScalingBinning,
    "skcal spline": SplineCalibration,
    "skcal venn-abers": VennAbersCalibration,
}


# --- data and models -------------------------------------------------------------


def datasets(quick):
    out = {
        "breast_cancer": lambda: load_breast_cancer(return_X_y=True),
        "digits": lambda: load_digits(return_X_y=True),
        "synthetic C=3 n=4000": lambda: _synthetic(3, 4000),
    }
    if quick:
        return out
    out.update({
        "wine": lambda: load_wine(return_X_y=True),
        "iris": lambda: load_iris(return_X_y=True),
        "synthetic C=2 n=4000": lambda: _synthetic(2, 4000),
        "synthetic C=5 n=8000": lambda: _synthetic(5, 8000),
        "synthetic C=10 n=12000": lambda: _synthetic(10, 12000),
    })
    return out


def _synthetic(C, n):
    return make_classification(
        n_samples=n, n_features=20, n_informative=10, n_redundant=4, n_classes=C,
        n_clusters_per_class=2, class_sep=0.8, flip_y=0.03, random_state=C,
    )


def models(quick):
    out = {
        "GaussianNB": lambda: make_pipeline(StandardScaler(), GaussianNB()),
        "MLP (overfitted)": lambda: make_pipeline(
            StandardScaler(),
            MLPClassifier((200,), alpha=0.0, max_iter=300, early_stopping=False,
                          random_state=0),
        ),
    }
    if quick:
        return out
    out.update({
        "RandomForest": lambda: RandomForestClassifier(200, random_state=0, n_jobs=1),
        "HistGradientBoosting": lambda: HistGradientBoostingClassifier(random_state=0),
    })
    return out


# --- methods ---------------------------------------------------------------------


def _sklearn(method):
    """CalibratedClassifierCV(FrozenEstimator(identity on P), method=method)."""
    from skcal.recalibration._common import SklearnRecalibrator

    def fit_predict(P_cal, y_cal, P_test):
        return SklearnRecalibrator(method).fit(P_cal, y_cal).predict_proba(P_test)
    return fit_predict


def _one_vs_rest(fit_binary):
    """A binary peer applied to each class against the rest, then normalised."""
    def fit_predict(P_cal, y_cal, P_test):
        C = P_cal.shape[1]
        columns = [1] if C == 2 else range(C)
        out = np.empty((P_test.shape[0], len(columns)))
        for j, k in enumerate(columns):
            out[:, j] = fit_binary(P_cal[:, k], (y_cal == k).astype(int), P_test[:, k])
        if C == 2:
            return np.column_stack([1 - out[:, 0], out[:, 0]])
        return out / out.sum(axis=1, keepdims=True)
    return fit_predict


def peers(quick):
    out = {
        "sklearn sigmoid": _sklearn("sigmoid"),
        "sklearn isotonic": _sklearn("isotonic"),
        "sklearn temperature": _sklearn("temperature"),
    }
    try:
        from betacal import BetaCalibration as PeerBeta

        def beta(p, y, p_test):
            return PeerBeta(parameters="abm").fit(p.reshape(-1, 1), y).predict(
                p_test.reshape(-1, 1))
        out["betacal"] = _one_vs_rest(beta)
    except ImportError:
        pass
    try:
        from venn_abers import VennAbers

        def venn(p, y, p_test):
            model = VennAbers()
            model.fit(np.column_stack([1 - p, p]), y)
            return model.predict_proba(np.column_stack([1 - p_test, p_test]))[0][:, 1]
        out["venn-abers (pkg)"] = _one_vs_rest(venn)
    except ImportError:
        pass
    try:
        if quick:  # about 20 s a fit: left to the full run
            raise ImportError
        from splinecalib import SplineCalib

        def spline(p, y, p_test):
            model = SplineCalib()
            model.fit(p, y)
            return model.calibrate(p_test)
        out["splinecalib"] = _one_vs_rest(spline)
    except ImportError:
        pass
    try:
        from dirichletcal import FullDirichletCalibrator

        def dirichlet(P_cal, y_cal, P_test):
            model = FullDirichletCalibrator(reg_lambda=1e-3, reg_mu=1e-3)
            return model.fit(P_cal, y_cal).predict_proba(P_test)
        out["dirichletcal"] = dirichlet
    except ImportError:
        pass
    return out


def skcal_method(cls_or_factory):
    def fit_predict(P_cal, y_cal, P_test):
        model = cls_or_factory(labels=np.arange(P_cal.shape[1]))
        out = model.fit(P_cal, y_cal).predict_proba(P_test)
        fit_predict.chosen = getattr(model, "chosen_", None)
        return out
    return fit_predict


def methods(quick):
    out = {"none": lambda P_cal, y_cal, P_test: P_test}
    out["skcal auto"] = skcal_method(lambda labels: AutoRecalibrator(labels, random_state=0))
    out.update({name: skcal_method(cls) for name, cls in SKCAL.items()})
    out.update(peers(quick))
    return out


# --- metrics ---------------------------------------------------------------------


def measure(P, y):
    rows = np.arange(y.shape[0])
    C = P.shape[1]
    labels = np.arange(C)
    with np.errstate(divide="ignore"):
        log_loss = float(np.mean(-np.log(P[rows, y])))
    R = P.copy()
    R[rows, y] -= 1.0
    top = P.argmax(axis=1)
    conf = P[rows, top]
    hit = (top == y).astype(int)
    return {
        "log_loss": log_loss,
        "brier": float(np.mean(np.einsum("ij,ij->i", R, R))),
        "accuracy": float(hit.mean()),
        "ece_top": float(binned_ece(hit, conf, n_bins=15, strategy="quantile")),
        "ece_cw": float(np.mean([
            binned_ece((y == k).astype(int), P[:, k], n_bins=15, strategy="quantile")
            for k in range(C)
        ])),
        "smce": float(smooth_calibration_error(hit, conf)),
        "uc_comb": float(utility_calibration_error(y, P, "comb", labels=labels)),
    }


# --- running and caching --------------------------------------------------------


def cache_path(cache, data_name, model_name, split):
    name = f"{data_name}__{model_name}__{split}.json"
    return os.path.join(cache, name.replace(" ", "_").replace("/", "-"))


def run_case(data_name, X, y, model_name, make_model, split, all_methods, cache):
    path = cache_path(cache, data_name, model_name, split)
    done = {}
    if os.path.exists(path):
        with open(path) as f:
            done = json.load(f)
    todo = [m for m in all_methods if m not in done]
    if not todo:
        return done
    classes, y = np.unique(y, return_inverse=True)
    X_train, X_rest, y_train, y_rest = train_test_split(
        X, y, train_size=0.5, stratify=y, random_state=split)
    X_cal, X_test, y_cal, y_test = train_test_split(
        X_rest, y_rest, train_size=0.5, stratify=y_rest, random_state=split)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = make_model().fit(X_train, y_train)
        P_cal = model.predict_proba(X_cal)
        P_test = model.predict_proba(X_test)
        for name in todo:
            start = time.process_time()
            try:
                Q = np.asarray(all_methods[name](P_cal, y_cal, P_test), dtype=float)
                result = measure(Q, y_test)
                chosen = getattr(all_methods[name], "chosen", None)
                if chosen is not None:
                    result["chosen"] = chosen
            except Exception as error:  # noqa: BLE001 -- a peer that fails is noted
                result = {"error": f"{type(error).__name__}: {error}"[:200]}
            result["seconds"] = time.process_time() - start
            done[name] = result
    with open(path, "w") as f:
        json.dump(done, f)
    return done


def paired(a, b, larger_better):
    """win/tie/loss of ``a`` against ``b`` over splits, at 2 standard errors."""
    d = np.asarray(a) - np.asarray(b)
    if not larger_better:
        d = -d
    if np.any(~np.isfinite(d)):
        # an infinite log-loss on some split: compare the counts of such splits
        fin_a, fin_b = np.isfinite(a).sum(), np.isfinite(b).sum()
        return "win" if fin_a > fin_b else "loss" if fin_a < fin_b else "tie"
    se = d.std(ddof=1) / np.sqrt(d.shape[0]) if d.shape[0] > 1 else 0.0
    if d.mean() > 2 * se and d.mean() > 0:
        return "win"
    if d.mean() < -2 * se and d.mean() < 0:
        return "loss"
    return "tie"


def tables(results, peer_names, splits):
    cases = sorted(results)
    print(f"\n{len(cases)} cases x {splits} splits; win/tie/loss of skcal auto, "
          "paired over splits at 2 s.e.\n")
    header = f"{'comparison':<28}" + "".join(f"{h:>16}" for _, h, _ in METRICS)
    print(header)
    for label in ("best peer", "none", "sklearn isotonic", "sklearn temperature"):
        counts = []
        for key, _, larger in METRICS:
            c = {"win": 0, "tie": 0, "loss": 0}
            for case in cases:
                per_method = results[case]
                auto = [r["skcal auto"].get(key, np.nan) for r in per_method]
                if label == "best peer":
                    candidates = [p for p in peer_names
                                  if all(key in r.get(p, {}) for r in per_method)]
                    if not candidates:
                        continue
                    means = {p: np.mean([r[p][key] for r in per_method]) for p in candidates}
                    best = (max if larger else min)(means, key=means.get)
                    other = [r[best][key] for r in per_method]
                else:
                    if not all(key in r.get(label, {}) for r in per_method):
                        continue
                    other = [r[label][key] for r in per_method]
                c[paired(auto, other, larger)] += 1
            counts.append(f"{c['win']}/{c['tie']}/{c['loss']}")
        print(f"{'auto vs ' + label:<28}" + "".join(f"{x:>16}" for x in counts))
    chosen = [r["skcal auto"].get("chosen", "?") for case in cases for r in results[case]]
    print("\nauto chose: " + ", ".join(
        f"{name} {chosen.count(name)}" for name in sorted(set(chosen))))
    print("\nmean fit time per method (s, process time):")
    names = list(next(iter(results.values()))[0])
    for name in names:
        times = [r[name]["seconds"] for case in cases for r in results[case] if name in r]
        errors = sum("error" in r.get(name, {}) for case in cases for r in results[case])
        note = f"  ({errors} failed fits)" if errors else ""
        print(f"  {name:<26} {np.mean(times):8.3f}{note}")
    print("\nmean test log-loss per case (none -> auto; best peer):")
    for case in cases:
        per_method = results[case]
        none = np.mean([r["none"]["log_loss"] for r in per_method])
        auto = np.mean([r["skcal auto"]["log_loss"] for r in per_method])
        finite = [p for p in peer_names
                  if all(np.isfinite(r.get(p, {}).get("log_loss", np.inf)) for r in per_method)]
        best = min((np.mean([r[p]["log_loss"] for r in per_method]), p) for p in finite) \
            if finite else (np.nan, "-")
        print(f"  {case:<48} {none:8.4f} -> {auto:8.4f}; {best[1]} {best[0]:.4f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="3 data sets, 2 models, 3 splits")
    parser.add_argument("--splits", type=int, default=None)
    parser.add_argument("--cached-only", action="store_true",
                        help="print the tables of the cases already in the cache")
    parser.add_argument("--cache", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "results", "compare_cache"))
    args = parser.parse_args()
    splits = args.splits or (3 if args.quick else 10)
    os.makedirs(args.cache, exist_ok=True)
    all_methods = methods(args.quick)
    peer_names = [m for m in all_methods if not m.startswith("skcal") and m != "none"]
    print(f"skcal {skcal.__version__}, scikit-learn {sklearn.__version__}, numpy "
          f"{np.__version__}, Python {platform.python_version()}; peers: {peer_names}")
    results = {}
    for data_name, load in datasets(args.quick).items():
        X, y = load()
        for model_name, make_model in models(args.quick).items():
            case = f"{data_name} / {model_name}"
            if args.cached_only and not all(
                os.path.exists(cache_path(args.cache, data_name, model_name, s))
                for s in range(splits)
            ):
                continue
            results[case] = [
                run_case(data_name, X, y, model_name, make_model, split, all_methods,
                         args.cache)
                for split in range(splits)
            ]
            print(f"done: {case}", flush=True)
    tables(results, peer_names, splits)


if __name__ == "__main__":
    main()
