"""Head-to-head of post-hoc recalibrators (issue 21, item 4).

For every case (data set x base model) and each of ``--splits`` random
50/25/25 splits into training, calibration and test rows: the base model is
fitted on the training rows, every recalibrator on the model's probabilities
of the calibration rows, and each is measured on the test rows. Metrics:
log-loss, Brier (``sum_k (p_k - 1{y = k})^2``), accuracy, top-label ECE
(15 equal-mass bins), class-wise ECE (mean over classes of the binned ECE of
``(p_k, 1{y = k})``), top-label smCE and UC over the "comb" family.

Methods: no recalibration; every skcal family at its defaults
(``skcal <name>``); ``skcal auto`` (``AutoRecalibrator(random_state=0)``,
the default of ``RecalibratedClassifier``); scikit-learn's sigmoid, isotonic
and temperature (``CalibratedClassifierCV(FrozenEstimator(...))``); and the
peer packages that are installed, each with its documented multiclass
handling: betacal (binary; one-vs-rest then normalised, as in the beta
calibration paper), venn-abers (``VennAbersCalibrator``, inductive; its
default one-vs-one reduction), splinecalib (its own one-vs-rest, normalised),
dirichletcal (``FullDirichletCalibrator``, ``reg_lambda = reg_mu = 1e-3``),
netcal's BBQ (its own one-vs-all) and probmetrics' ``logistic`` (affine for
2 classes, structured matrix scaling for more) and ``ts-mix``. Methods named
``auto-variant ...`` are prototypes of a selection rule, not skcal's (none
at present; ``auto_argmin`` and ``auto_argmin_plus`` build them).

The tables are paired over the splits: for "auto vs X" and a metric, the
difference auto - X on each split, its mean and standard error; a win (or
loss) when the mean is better (worse) than 0 by more than 2 standard
errors, a tie otherwise. "best peer" is, per case and metric, the peer
(scikit-learn or another package) with the best mean.

Data sets (bundled or generated, nothing is downloaded): breast_cancer
(569 rows, 2 classes), digits (1,797, 10), make_classification with 2, 3, 5
and 10 classes (3,000 to 12,000 rows), make_hastie_10_2 (20,000 rows, 2
classes), make_gaussian_quantiles (6,000 rows, 4 classes). Base models:
GaussianNB, RandomForest (100 trees), HistGradientBoosting, and an MLP
(200 units, alpha=0, 100 epochs at a step of 0.01, no early stopping:
overfitted, capped so that a fit takes seconds).

``--check-peers`` compares the peers that implement the same method as an
skcal family against a reference (see ``check_peers``);
``--check-temperature`` compares both temperature scalings with the maximum
of the calibration rows' likelihood (see ``check_temperature``).

Base-model rows whose sum is off 1 by more than ``1e-9`` (GaussianNB on
digits, split 9: ``1 + 2.2e-5``) are divided by their sums, for every method
alike, with a printed note (skcal rejects such rows instead of renormalising
them silently).

Every (case, split) result is cached as JSON under ``--cache`` (default
``benchmarks/results/compare_cache``), so a run can be stopped and resumed,
and a rerun only prints the tables.

    python benchmarks/compare_recalibrators.py --quick     # a subset, minutes
    python benchmarks/compare_recalibrators.py             # the full table
"""

import argparse
import contextlib
import io
import json
import os
import platform
import time
import warnings

import numpy as np
import scipy
import sklearn
import sklearn.base
from sklearn.datasets import (
    load_breast_cancer,
    load_digits,
    make_classification,
    make_gaussian_quantiles,
    make_hastie_10_2,
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
    MatrixScaling,
    ScalingBinning,
    SigmoidCalibration,
    SplineCalibration,
    StructuredMatrixScaling,
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
    "skcal matrix": MatrixScaling,
    "skcal structured matrix": StructuredMatrixScaling,
    "skcal histogram": HistogramBinning,
    "skcal isotonic": IsotonicCalibration,
    "skcal scaling-binning": ScalingBinning,
    "skcal spline": SplineCalibration,
    "skcal venn-abers": VennAbersCalibration,
}

SKCAL_NAMES = [name.split(" ", 1)[1] for name in SKCAL]


# --- data and models -------------------------------------------------------------


def datasets(quick):
    """name -> loader of ``(X, y)``: 2 bundled and 6 generated data sets."""
    out = {
        "breast_cancer": lambda: load_breast_cancer(return_X_y=True),
        "digits": lambda: load_digits(return_X_y=True),
        "synthetic C=3 n=3000": lambda: _synthetic(3, 3000),
    }
    if quick:
        return out
    out.update({
        "synthetic C=2 n=4000": lambda: _synthetic(2, 4000),
        "hastie C=2 n=20000": lambda: make_hastie_10_2(20000, random_state=0),
        "quantiles C=4 n=6000": lambda: make_gaussian_quantiles(
            n_samples=6000, n_features=8, n_classes=4, random_state=0),
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
    """name -> factory of an unfitted base model."""
    out = {
        "GaussianNB": lambda: make_pipeline(StandardScaler(), GaussianNB()),
        # overfitted on purpose: no weight decay, no early stopping; 100 epochs
        # at a step of 0.01 (a fit takes seconds) reach what 300 epochs at
        # scikit-learn's default step of 0.001 would: on the 10-class data,
        # 93% training accuracy and a test log-loss of 1.81 that temperature
        # scaling brings to 1.10 (at the default step the MLP stays near
        # calibrated: 1.10 -> 1.10)
        "MLP (overfitted)": lambda: make_pipeline(
            StandardScaler(),
            MLPClassifier((200,), alpha=0.0, max_iter=100, learning_rate_init=0.01,
                          early_stopping=False, random_state=0),
        ),
    }
    if quick:
        return out
    out.update({
        "RandomForest": lambda: RandomForestClassifier(100, random_state=0, n_jobs=1),
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
        from venn_abers import VennAbersCalibrator

        def venn(P_cal, y_cal, P_test):
            # inductive Venn-ABERS; more than 2 classes: the package's
            # documented reduction (one-vs-one, va_type="one_vs_one")
            return VennAbersCalibrator().predict_proba(
                p_cal=P_cal, y_cal=y_cal, p_test=P_test)
        out["venn-abers (pkg)"] = venn
    except ImportError:
        pass
    try:
        from splinecalib import SplineCalib

        def spline(P_cal, y_cal, P_test):
            # binary: the positive column; more classes: the package's own
            # one-vs-rest then normalised
            binary = P_cal.shape[1] == 2
            model = SplineCalib()  # its fit returns None
            model.fit(P_cal[:, 1] if binary else P_cal, y_cal)
            if binary:
                q = model.calibrate(P_test[:, 1])
                return np.column_stack([1 - q, q])
            return model.calibrate(P_test)
        out["splinecalib"] = spline
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
    try:
        from netcal.binning import BBQ

        def bbq(P_cal, y_cal, P_test):
            # binary: the positive column; more classes: netcal's own
            # one-vs-all models, then normalised by netcal
            binary = P_cal.shape[1] == 2
            with contextlib.redirect_stderr(io.StringIO()):  # its progress bars
                model = BBQ().fit(P_cal[:, 1] if binary else P_cal, y_cal)
                q = np.asarray(model.transform(P_test[:, 1] if binary else P_test))
            return np.column_stack([1 - q, q]) if binary else q
        out["netcal BBQ"] = bbq
    except ImportError:
        pass
    try:
        from probmetrics.calibrators import get_calibrator

        def probmetrics(method):
            def fit_predict(P_cal, y_cal, P_test):
                with contextlib.redirect_stdout(io.StringIO()):
                    model = get_calibrator(method).fit(P_cal, y_cal)
                    return model.predict_proba(P_test)
            return fit_predict
        # "logistic": affine (binary) or structured matrix scaling
        # (multiclass; Berta et al. 2025); "ts-mix": temperature scaling with
        # a mixture towards the uniform distribution
        out["probmetrics logistic"] = probmetrics("logistic")
        out["probmetrics ts-mix"] = probmetrics("ts-mix")
    except ImportError:
        pass
    return out


def skcal_method(cls_or_factory):
    def fit_predict(P_cal, y_cal, P_test):
        model = cls_or_factory(labels=np.arange(P_cal.shape[1]))
        out = model.fit(P_cal, y_cal).predict_proba(P_test)
        fit_predict.chosen = getattr(model, "chosen_", None)
        fit_predict.scores = getattr(model, "scores_", None)
        fit_predict.tau = getattr(model, "tau_", None)
        fit_predict.P_cal = P_cal
        return out
    return fit_predict


class LaplaceMixed(sklearn.base.BaseEstimator):
    """Prototype (not skcal's): ``estimator`` fitted on, and applied to,
    ``(1 - a) P + a / C`` with ``a = 1 / (n + 1)`` for the ``n`` rows it was
    fitted on (Laplace's rule of succession: no class gets less than about
    ``1 / (n C)`` before the map), so that a probability of exactly 0, or
    below what ``n`` rows can resolve, does not enter a log-linear map as
    ``log(2.2e-16)``. No constant is chosen from the data."""

    def __init__(self, estimator=None, labels=None):
        self.estimator = estimator
        self.labels = labels

    def _mix(self, P):
        return (1.0 - self.alpha_) * P + self.alpha_ / P.shape[1]

    def fit(self, P, y, sample_weight=None):
        P = np.asarray(P, dtype=float)
        self.alpha_ = 1.0 / (P.shape[0] + 1.0)
        self.estimator_ = sklearn.base.clone(self.estimator).set_params(labels=self.labels)
        self.estimator_.fit(self._mix(P), y, sample_weight=sample_weight)
        return self

    def predict_proba(self, P):
        return self.estimator_.predict_proba(self._mix(np.asarray(P, dtype=float)))


def auto_plus(auto_fit_predict, name, extra):
    """Prototype (not skcal's default): ``AutoRecalibrator(random_state=0)``
    with one more candidate ``extra`` (an unfitted recalibrator), last in
    order. Reuses the out-of-fold scores of the ``skcal auto`` fit of the
    same split (cached) and scores ``extra`` on the same folds, replicated
    from ``random_state=0`` (valid up to 10,000 calibration rows, unit
    weights); the chosen candidate is refitted as auto refits it (same
    seed), so when ``extra`` does not win the output is auto's."""
    from sklearn.base import clone
    from sklearn.utils import check_random_state

    from skcal.recalibration._auto import _CANDIDATES
    from skcal.recalibration._common import (
        cross_fit_folds,
        draw_seed,
        seed_random_states,
        with_column_labels,
    )

    def fit_predict(P_cal, y_cal, P_test):
        if getattr(auto_fit_predict, "P_cal", None) is not P_cal:
            raise RuntimeError(f"{name} needs the cached skcal auto fit of this split")
        if y_cal.shape[0] > 10000:
            raise ValueError("more rows than auto's selection subsample: folds not replicated")
        C = P_cal.shape[1]
        rng = check_random_state(0)
        seed = draw_seed(rng)
        Q = np.empty_like(P_cal)
        for train, test in cross_fit_folds(y_cal, 5, rng):
            model = with_column_labels(clone(extra), C).fit(P_cal[train], y_cal[train])
            Q[test] = model.predict_proba(P_cal[test])
        with np.errstate(divide="ignore"):
            score = -float(np.mean(-np.log(Q[np.arange(y_cal.shape[0]), y_cal])))
        scores = {k: v["score"] for k, v in auto_fit_predict.scores.items()}
        best = max(scores.values())
        # ties (1e-12 relative) go to the simpler, the default candidates
        if score > best + 1e-12 * abs(best):
            chosen, model = name, with_column_labels(clone(extra), C)
        else:
            chosen = next(k for k, v in scores.items() if v >= best - 1e-12 * abs(best))
            if chosen == "identity":
                fit_predict.chosen = chosen
                return P_test.copy()
            model = seed_random_states(with_column_labels(clone(_CANDIDATES[chosen]()), C), seed)
        fit_predict.chosen = chosen
        fit_predict.scores = {**{k: {"score": v, "se": np.nan} for k, v in scores.items()},
                              name: {"score": score, "se": np.nan}}
        return model.fit(P_cal, y_cal).predict_proba(P_test)
    return fit_predict


def methods(quick, variants=False):
    out = {"none": lambda P_cal, y_cal, P_test: P_test}
    auto = skcal_method(lambda labels: AutoRecalibrator(labels, random_state=0))
    out["skcal auto"] = auto
    # (the single best candidate, ensemble=False, was a method here until the
    # run of the Newton affine fits; its tables are in
    # results/compare_recalibrators_single.txt)
    if variants:
        # the stacked mixture raised to the out-of-fold power tau
        out["skcal auto (sharpened)"] = skcal_method(
            lambda labels: AutoRecalibrator(labels, random_state=0, sharpen=True))
    out.update({name: skcal_method(cls) for name, cls in SKCAL.items()})
    out.update(peers(quick))
    if variants:
        out["auto-variant +laplace-sms"] = auto_plus(
            auto, "laplace-sms", LaplaceMixed(StructuredMatrixScaling()))
    return out


# --- peers against skcal on the same-named method --------------------------------


def _ivap_reference(s_cal, y_cal, s_test):
    """Inductive Venn-ABERS by its definition, slowly: for each test score,
    two isotonic regressions with the test point added as label 0, resp. 1."""
    from sklearn.isotonic import IsotonicRegression

    out = np.empty((s_test.shape[0], 2))
    for i, s in enumerate(s_test):
        for label in (0, 1):
            iso = IsotonicRegression(out_of_bounds="clip").fit(
                np.append(s_cal, s), np.append(y_cal, label))
            out[i, label] = iso.predict([s])[0]
    return out[:, 1] / (1.0 - out[:, 0] + out[:, 1])


def _binary_nll(q, y):
    q = np.clip(q, 1e-300, 1.0)
    return float(-np.mean(np.where(y == 1, np.log(q), np.log1p(-np.minimum(q, 1 - 1e-16)))))


def check_peers(n_cases=200, seed=0):
    """Where a peer and skcal's same-named method differ, which one is right.

    Venn-ABERS (binary): both against the definition (``_ivap_reference``),
    on small random problems with and without tied scores. Beta calibration
    and temperature scaling are maximum-likelihood fits: the one with the
    smaller log-loss on the calibration data is the better optimiser of the
    same model (beta: under ``a, b >= 0``).
    """
    from betacal import BetaCalibration as PeerBeta
    from venn_abers import VennAbers

    rng = np.random.default_rng(seed)
    worst = {"skcal venn-abers": 0.0, "venn-abers (pkg)": 0.0}
    beta = {"skcal lower": 0, "betacal lower": 0, "equal": 0}
    beta_gap = 0.0
    for case in range(n_cases):
        n = int(rng.integers(5, 40))
        s_cal = rng.uniform(size=n)
        if case % 2:  # tied scores
            s_cal = np.round(s_cal, 1)
        y_cal = (rng.uniform(size=n) < s_cal ** rng.uniform(0.3, 3)).astype(int)
        s_test = np.concatenate([rng.uniform(size=10), s_cal[:3]])
        if case % 2:
            s_test = np.round(s_test, 1)
        ref = _ivap_reference(s_cal, y_cal, s_test)
        ours = VennAbersCalibration().fit(
            np.column_stack([1 - s_cal, s_cal]), y_cal, ).predict_proba(
            np.column_stack([1 - s_test, s_test]))[:, 1] if len(set(y_cal)) == 2 else ref
        pkg = VennAbers()
        pkg.fit(np.column_stack([1 - s_cal, s_cal]), y_cal)
        theirs = pkg.predict_proba(np.column_stack([1 - s_test, s_test]))[0][:, 1]
        worst["skcal venn-abers"] = max(worst["skcal venn-abers"], np.max(np.abs(ours - ref)))
        worst["venn-abers (pkg)"] = max(worst["venn-abers (pkg)"],
                                        np.max(np.abs(theirs - ref)))
        if len(set(y_cal)) == 2 and n >= 10:
            p = np.clip(rng.uniform(size=4 * n), 0.01, 0.99)
            yb = (rng.uniform(size=4 * n) < p ** rng.uniform(0.3, 3)).astype(int)
            a = BetaCalibration().fit(np.column_stack([1 - p, p]), yb).predict_proba(
                np.column_stack([1 - p, p]))[:, 1]
            b = PeerBeta(parameters="abm").fit(p.reshape(-1, 1), yb).predict(p.reshape(-1, 1))
            la, lb = _binary_nll(a, yb), _binary_nll(b, yb)
            key = "equal" if abs(la - lb) < 1e-6 else "skcal lower" if la < lb else \
                "betacal lower"
            beta[key] += 1
            beta_gap = max(beta_gap, lb - la)
    print(f"Venn-ABERS against its definition, {n_cases} small binary problems "
          "(half with tied scores): largest |difference| "
          + ", ".join(f"{k} {v:.2e}" for k, v in worst.items()))
    print("Beta calibration, log-loss on the fitted data (same abm model): "
          + ", ".join(f"{k} {v}" for k, v in beta.items())
          + f"; largest betacal - skcal {beta_gap:.2e}")


# (data set, model, split): the (case, split) pairs of the 5-split run where
# the two temperature scalings differed most in test log-loss, of each kind
# (exact zeros from GaussianNB / random forests; the overfitted MLP)
TEMPERATURE_PAIRS = [
    ("breast_cancer", "GaussianNB", 1),
    ("breast_cancer", "RandomForest", 3),
    ("digits", "GaussianNB", 1),
    ("synthetic C=10 n=12000", "RandomForest", 1),
    ("synthetic C=2 n=4000", "MLP (overfitted)", 1),
    ("synthetic C=3 n=3000", "MLP (overfitted)", 2),
    ("synthetic C=5 n=8000", "MLP (overfitted)", 4),
    ("synthetic C=10 n=12000", "MLP (overfitted)", 2),
]


def _temperature_nll(L, y, beta):
    """Mean of ``-log softmax(beta * L)[i, y_i]`` over the rows, computed
    directly (``L`` may hold ``-inf``: a class of probability 0 stays at 0)."""
    from scipy.special import logsumexp

    rows = np.arange(y.shape[0])
    with np.errstate(invalid="ignore"):
        S = beta * L
    return float(np.mean(logsumexp(S, axis=1) - S[rows, y]))


def _argmin_beta(L, y):
    """The inverse temperature minimising ``_temperature_nll``: a grid of 2,401
    points over ``log beta`` in [-8, 4], then a bounded Brent search between
    the best grid point's neighbours (the loss is convex in ``beta``)."""
    from scipy.optimize import minimize_scalar

    grid = np.linspace(-8.0, 4.0, 2401)
    values = [_temperature_nll(L, y, np.exp(t)) for t in grid]
    i = int(np.argmin(values))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.shape[0] - 1)]
    result = minimize_scalar(lambda t: _temperature_nll(L, y, np.exp(t)), bounds=(lo, hi),
                             method="bounded", options={"xatol": 1e-10})
    return float(np.exp(result.x))


def check_temperature(pairs=None):
    """skcal's and scikit-learn's temperature scaling against the maximum of
    the calibration rows' likelihood in the temperature.

    The model is ``softmax(log(P) / T)``. Exactly, a probability of 0 stays 0
    for every finite ``T`` and a row whose observed class has probability 0
    has likelihood 0 whatever ``T``: such rows are counted and left out of
    the exact objective (they add the same infinite loss at every ``T``).
    The two implementations floor the logarithm instead: skcal uses
    ``log(max(p, 2.2e-16))``, scikit-learn ``log(p + 1e-12)`` (and, for 2
    classes, the columns ``1 - p_1, p_1``). For each pair: the fitted
    inverse temperatures, the minimiser of each floored objective and of the
    exact one (found here by a grid and Brent's method, not by either
    implementation), and the exact calibration-row log-loss at each.
    """
    from skcal.recalibration._common import SklearnRecalibrator

    pairs = TEMPERATURE_PAIRS if pairs is None else pairs
    data = datasets(False)
    all_models = models(False)
    print(f"{'case, split':<42}{'rows':>6}{'p<1e-12':>9}{'p_y=0':>7}"
          f"{'beta skcal':>12}{'own opt':>10}{'beta sklearn':>13}{'own opt':>10}"
          f"{'beta exact':>12}{'exact log-loss: skcal':>23}{'sklearn':>10}{'optimum':>10}"
          f"{'test: skcal':>13}{'sklearn':>10}")
    for data_name, model_name, split in pairs:
        X, y = data[data_name]()
        P_cal, y_cal, P_test, y_test, _ = case_probabilities(
            X, y, all_models[model_name], split)
        rows = np.arange(y_cal.shape[0])
        ours = TemperatureScaling(labels=np.arange(P_cal.shape[1])).fit(P_cal, y_cal)
        theirs = SklearnRecalibrator("temperature").fit(P_cal, y_cal)
        b_ours = 1.0 / ours.temperature_
        b_theirs = float(theirs.calibrator_.calibrated_classifiers_[0].calibrators[0].beta_)
        # the floored objectives, rebuilt here from their definitions
        L_ours = np.log(np.maximum(P_cal, np.finfo(np.float64).eps))
        Q = P_cal if P_cal.shape[1] > 2 else np.column_stack([1 - P_cal[:, 1], P_cal[:, 1]])
        L_theirs = np.log(Q + 1e-12)
        with np.errstate(divide="ignore"):
            L_exact = np.log(P_cal)
        keep = P_cal[rows, y_cal] > 0
        exact = _argmin_beta(L_exact[keep], y_cal[keep])
        nll = [_temperature_nll(L_exact[keep], y_cal[keep], b) for b in (b_ours, b_theirs, exact)]
        with np.errstate(divide="ignore"):
            test = [float(np.mean(-np.log(m.predict_proba(P_test)[
                np.arange(y_test.shape[0]), y_test]))) for m in (ours, theirs)]
        print(f"{data_name + ' / ' + model_name + ', ' + str(split):<42}"
              f"{y_cal.shape[0]:>6}{np.mean(P_cal < 1e-12):>9.3f}{np.sum(~keep):>7}"
              f"{b_ours:>12.5f}{_argmin_beta(L_ours, y_cal):>10.5f}"
              f"{b_theirs:>13.5f}{_argmin_beta(L_theirs, y_cal):>10.5f}{exact:>12.5f}"
              f"{nll[0]:>23.6f}{nll[1]:>10.6f}{nll[2]:>10.6f}"
              f"{test[0]:>13.6f}{test[1]:>10.6f}", flush=True)
        # the test log-loss of the map softmax(beta * log(floored P)), for each
        # floor and each of the three inverse temperatures: which of the two
        # (floor, temperature) explains the difference on the test rows
        Qt = P_test if P_test.shape[1] > 2 else np.column_stack(
            [1 - P_test[:, 1], P_test[:, 1]])
        with np.errstate(divide="ignore"):
            floors = {"exact log": np.log(P_test),
                      "max(p, 2.2e-16)": np.log(np.maximum(P_test, np.finfo(np.float64).eps)),
                      "p + 1e-12": np.log(Qt + 1e-12)}
        cells = []
        for floor, L in floors.items():
            values = [_temperature_nll(L, y_test, b) for b in (b_ours, b_theirs, exact)]
            cells.append(f"{floor} " + "/".join(f"{v:.6f}" for v in values))
        # floored only where the log is -inf: log(max(p, 2.2e-308)), fitted by
        # its own maximum likelihood on all the calibration rows
        tiny = np.finfo(np.float64).tiny
        b_tiny = _argmin_beta(np.log(np.maximum(P_cal, tiny)), y_cal)
        cells.append(f"max(p, 2.2e-308) at its own optimum beta {b_tiny:.5f}: "
                     f"{_temperature_nll(np.log(np.maximum(P_test, tiny)), y_test, b_tiny):.6f}")
        print("    test log-loss at beta skcal/sklearn/exact, log of: " + "; ".join(cells)
              + f" ({np.sum(P_test[np.arange(y_test.shape[0]), y_test] == 0)} test rows "
              "with p_y = 0)", flush=True)


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


def case_probabilities(X, y, make_model, split):
    """The base model's probabilities of split ``split``: ``(P_cal, y_cal,
    P_test, y_test, n_train)``, ``y`` encoded as column indices."""
    classes, y = np.unique(y, return_inverse=True)
    X_train, X_rest, y_train, y_rest = train_test_split(
        X, y, train_size=0.5, stratify=y, random_state=split)
    X_cal, X_test, y_cal, y_test = train_test_split(
        X_rest, y_rest, train_size=0.5, stratify=y_rest, random_state=split)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = make_model().fit(X_train, y_train)
        return (_sums_to_one(model.predict_proba(X_cal)), y_cal,
                _sums_to_one(model.predict_proba(X_test)), y_test, int(y_train.shape[0]))


def _sums_to_one(P):
    """``P`` with every row whose sum is off 1 by more than ``1e-9`` divided by its sum.

    skcal (and the metrics) reject rows that do not sum to 1 within ``1e-6``
    rather than renormalise them silently; scikit-learn's GaussianNB on the
    digits (split 9) emits rows summing to ``1 + 2.2e-5`` (its joint
    log-likelihoods reach magnitudes where ``jll - logsumexp(jll)`` loses
    that much), which made every skcal method and the metrics of "none" fail
    there. The harness renormalises such rows for every method alike, and
    says so; rows within ``1e-9`` of 1 (every other case) are left untouched.
    """
    P = np.asarray(P, dtype=np.float64)
    sums = P.sum(axis=1, keepdims=True)
    off = np.abs(sums[:, 0] - 1.0) > 1e-9
    if not off.any():
        return P
    print(f"  note: {int(off.sum())} rows of the base model's probabilities summed to "
          f"1 +- {float(np.abs(sums - 1).max()):.2g}: divided by their sums", flush=True)
    P = P.copy()
    P[off] /= sums[off]
    return P


def cached_probabilities(X, y, make_model, split, path):
    """:func:`case_probabilities`, kept in the ``.npz`` file ``path`` (or None).

    A method re-run on a cache whose entry for it was deleted then reuses
    the base model's probabilities of the split instead of refitting the
    model (its fit is seeded: the same arrays either way).
    """
    if path is not None and os.path.exists(path):
        with np.load(path) as f:
            return (f["P_cal"], f["y_cal"], f["P_test"], f["y_test"], int(f["n_train"]))
    out = case_probabilities(X, y, make_model, split)
    if path is not None:
        np.savez(path, P_cal=out[0], y_cal=out[1], P_test=out[2], y_test=out[3],
                 n_train=out[4])
    return out


def run_case(data_name, X, y, model_name, make_model, split, all_methods, cache,
             probabilities=None):
    path = cache_path(cache, data_name, model_name, split)
    done = {}
    if os.path.exists(path):
        with open(path) as f:
            done = json.load(f)
    todo = [m for m in all_methods if m not in done]
    if not todo:
        return done
    P_cal, y_cal, P_test, y_test, n_train = cached_probabilities(
        X, y, make_model, split,
        None if probabilities is None else cache_path(probabilities, data_name, model_name,
                                                      split)[:-len(".json")] + ".npz")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        auto = all_methods.get("skcal auto")
        if "skcal auto" in done and "scores" in done["skcal auto"] and auto is not None:
            # the variants read auto's out-of-fold scores of this split
            auto.scores = {k: {"score": v} for k, v in done["skcal auto"]["scores"].items()}
            auto.P_cal = P_cal
        for name in todo:
            start = time.process_time()
            try:
                Q = np.asarray(all_methods[name](P_cal, y_cal, P_test), dtype=float)
                result = measure(Q, y_test)
                chosen = getattr(all_methods[name], "chosen", None)
                if chosen is not None:
                    result["chosen"] = chosen
                tau = getattr(all_methods[name], "tau", None)
                if tau is not None:  # AutoRecalibrator's power of its pool
                    result["tau"] = tau
                scores = getattr(all_methods[name], "scores", None)
                if scores is not None:
                    result["scores"] = {k: v["score"] for k, v in scores.items()}
                    result["ses"] = {k: v["se"] for k, v in scores.items()}
            except Exception as error:  # noqa: BLE001 -- a peer that fails is noted
                result = {"error": f"{type(error).__name__}: {error}"[:200]}
            result["seconds"] = time.process_time() - start
            done[name] = result
        done["_sizes"] = {"train": n_train, "cal": int(y_cal.shape[0]),
                          "test": int(y_test.shape[0]), "classes": int(P_cal.shape[1])}
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


def _values(per_method, name, key):
    return [r.get(name, {}).get(key, np.nan) for r in per_method]


def best_peer(per_method, peer_names, key, larger):
    """The peer with the best mean of ``key`` over the splits (fits that
    failed on some split are left out), or None."""
    means = {}
    for p in peer_names:
        values = _values(per_method, p, key)
        if not np.any(np.isnan(values)):
            means[p] = np.mean(values)
    if not means:
        return None
    return (max if larger else min)(means, key=means.get)


def summary_table(results, peer_names, subject, against):
    """win/tie/loss counts of ``subject`` over the cases, one column a metric."""
    cases = sorted(results)
    header = f"{'comparison':<40}" + "".join(f"{h:>16}" for _, h, _ in METRICS)
    lines = [header]
    for label in against:
        counts = []
        for key, _, larger in METRICS:
            c = {"win": 0, "tie": 0, "loss": 0}
            for case in cases:
                per_method = results[case]
                other = best_peer(per_method, peer_names, key, larger) \
                    if label == "best peer" else label
                mine = subject
                if subject == "best skcal family":  # chosen on the test means, as the peer
                    mine = best_peer(per_method, ["skcal " + n for n in SKCAL_NAMES], key,
                                     larger)
                a, b = _values(per_method, mine, key), _values(per_method, other, key)
                if other is None or np.any(np.isnan(a)) or np.any(np.isnan(b)):
                    continue
                c[paired(a, b, larger)] += 1
            counts.append(f"{c['win']}/{c['tie']}/{c['loss']}")
        lines.append(f"{subject + ' vs ' + label:<40}" + "".join(f"{x:>16}" for x in counts))
    return "\n".join(lines)


def case_table(case, per_method, peer_names):
    """Means over the splits of every method and metric, and auto's verdicts."""
    names = [name for name in per_method[0] if not name.startswith("_")]
    sizes = per_method[0].get("_sizes", {})
    lines = [f"== {case} " + ", ".join(f"{k} {v}" for k, v in sizes.items()),
             f"{'method':<26}" + "".join(f"{h:>16}" for _, h, _ in METRICS) + f"{'fit s':>9}"]
    for name in names:
        row = f"{name:<26}"
        errors = sum("error" in r.get(name, {}) for r in per_method)
        for key, _, _ in METRICS:
            values = _values(per_method, name, key)
            row += f"{np.mean(values):>16.4f}" if not np.any(np.isnan(values)) else f"{'-':>16}"
        times = [r[name]["seconds"] for r in per_method if name in r]
        row += f"{np.mean(times):>9.3f}"
        if errors:
            first = next(r[name]["error"] for r in per_method if "error" in r[name])
            row += f"  ({errors} failed: {first[:60]})"
        lines.append(row)
    variants = [name for name in names if name.startswith("auto-variant")]
    for subject in ["skcal auto"] + variants:
        for label in ("best peer", "none"):
            row = f"{subject.replace('auto-variant', 'var.')[:16] + ' vs ' + label:<26}"
            for key, _, larger in METRICS:
                other = best_peer(per_method, peer_names, key, larger) \
                    if label == "best peer" else label
                a, b = _values(per_method, subject, key), _values(per_method, other, key)
                if other is None or np.any(np.isnan(a)) or np.any(np.isnan(b)):
                    row += f"{'-':>16}"
                    continue
                verdict = paired(a, b, larger)
                if label == "best peer":
                    verdict = f"{verdict} {other.split()[-1][:10]}"
                row += f"{verdict:>16}"
            lines.append(row)
    for subject in ["skcal auto"] + variants:
        chosen = [r.get(subject, {}).get("chosen", "?") for r in per_method]
        lines.append(f"{subject} chose: " + ", ".join(chosen))
    return "\n".join(lines)


def losses_report(results, peer_names):
    """Every case where auto loses on log-loss or Brier (to the best peer or
    to no recalibration): who won, what auto chose on each split, and the
    candidates' out-of-fold scores (mean over the splits of auto's selection
    score, the negative log-loss: greater is better)."""
    lines = []
    for case in sorted(results):
        per_method = results[case]
        verdicts = []
        for key, header, larger in METRICS[:2]:
            for label in ("best peer", "none"):
                other = best_peer(per_method, peer_names, key, larger) \
                    if label == "best peer" else label
                a, b = _values(per_method, "skcal auto", key), _values(per_method, other, key)
                if paired(a, b, larger) == "loss":
                    verdicts.append(f"{header}: loses to {other} "
                                    f"({np.mean(a):.4f} vs {np.mean(b):.4f})")
        if not verdicts:
            continue
        lines.append(f"== {case}: " + "; ".join(verdicts))
        chosen = [r["skcal auto"].get("chosen", "?") for r in per_method]
        lines.append("  auto chose: " + ", ".join(chosen))
        scores = [r["skcal auto"].get("scores", {}) for r in per_method]
        names = list(scores[0])
        means = {n: np.mean([s.get(n, np.nan) for s in scores]) for n in names}
        ses = {n: np.mean([r["skcal auto"].get("ses", {}).get(n, np.nan)
                           for r in per_method]) for n in names}
        order = sorted(names, key=lambda n: -means[n] if np.isfinite(means[n]) else np.inf)
        lines.append("  out-of-fold score (mean over splits; mean s.e. to the best): " + ", ".join(
            f"{n} {means[n]:.4f} ({ses[n]:.4f})" for n in order))
    return "\n".join(lines) if lines else "(none)"


def markdown(results, peer_names):
    """The summary and a per-case table of log-loss and Brier, as Markdown."""
    names = [name for name in next(iter(results.values()))[0] if not name.startswith("_")]
    subjects = ["skcal auto", "best skcal family"] + [
        n for n in names if n.startswith("auto-variant")]
    lines = ["| comparison | " + " | ".join(h for _, h, _ in METRICS) + " |",
             "| --- |" + " --- |" * len(METRICS)]
    for subject in subjects:
        against = ("best peer", "none") if subject == "skcal auto" else \
            ("best peer",) if subject == "best skcal family" else \
            ("best peer", "none", "skcal auto")
        for row in summary_table(results, peer_names, subject, against).split("\n")[1:]:
            cells = row.split()
            label = row[:40].strip()
            lines.append(f"| {label} | " + " | ".join(cells[-len(METRICS):]) + " |")
    lines += ["", "| case | none | auto | best peer | auto vs best peer | auto vs none "
              "| auto chose (splits) |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for case in sorted(results):
        per_method = results[case]
        for key, header, larger in METRICS[:2]:
            best = best_peer(per_method, peer_names, key, larger)
            auto = _values(per_method, "skcal auto", key)
            none = _values(per_method, "none", key)
            other = _values(per_method, best, key)
            chosen = [r["skcal auto"].get("chosen", "?") for r in per_method]
            counts = ", ".join(f"{c} {chosen.count(c)}" for c in sorted(set(chosen)))
            lines.append(
                f"| {case} ({header}) | {np.mean(none):.4f} | {np.mean(auto):.4f} | "
                f"{best} {np.mean(other):.4f} | {paired(auto, other, larger)} | "
                f"{paired(auto, none, larger)} | {counts if key == 'log_loss' else ''} |")
    return "\n".join(lines)


def tables(results, peer_names, splits):
    cases = sorted(results)
    print(f"\n{len(cases)} cases x {splits} splits; win/tie/loss, paired over splits "
          "at 2 s.e. ('best peer': per case and metric, the peer with the best mean)\n")
    against = ("best peer", "none", "sklearn isotonic", "sklearn temperature")
    print(summary_table(results, peer_names, "skcal auto", against))
    print(summary_table(results, peer_names, "best skcal family", ("best peer",))
          .split("\n", 1)[1])
    names = [name for name in next(iter(results.values()))[0] if not name.startswith("_")]
    variants = [name for name in names if name.startswith("auto-variant")]
    for variant in variants:
        print(summary_table(results, peer_names, variant, ("best peer", "none", "skcal auto"))
              .split("\n", 1)[1])
    for subject in ["skcal auto"] + variants:
        chosen = [r.get(subject, {}).get("chosen", "?")
                  for case in cases for r in results[case]]
        print(f"\n{subject} chose: " + ", ".join(
            f"{name} {chosen.count(name)}" for name in sorted(set(chosen))))
    print("\nbest peer per case (log-loss; Brier):")
    for case in cases:
        print(f"  {case:<48} {best_peer(results[case], peer_names, 'log_loss', False)}; "
              f"{best_peer(results[case], peer_names, 'brier', False)}")
    print("\nmean fit time per method (s, process time):")
    for name in names:
        times = [r[name]["seconds"] for case in cases for r in results[case] if name in r]
        errors = sum("error" in r.get(name, {}) for case in cases for r in results[case])
        note = f"  ({errors} failed fits)" if errors else ""
        print(f"  {name:<26} {np.mean(times):8.3f}{note}")
    print("\ncases where skcal auto loses on log-loss or Brier:\n")
    print(losses_report(results, peer_names))
    print("\nper case: means over the splits\n")
    for case in cases:
        print(case_table(case, results[case], peer_names) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="3 data sets, 2 models, 3 splits")
    parser.add_argument("--splits", type=int, default=None)
    parser.add_argument("--first-split", type=int, default=0,
                        help="compute splits from this one on (to share a run between "
                        "processes; each (case, split) is cached separately)")
    parser.add_argument("--cached-only", action="store_true",
                        help="print the tables of the cases already in the cache")
    parser.add_argument("--cache", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "results", "compare_cache"))
    parser.add_argument("--probabilities", default=None,
                        help="a directory keeping the base models' probabilities of each "
                        "(case, split), so that re-running a method does not refit them")
    parser.add_argument("--markdown", action="store_true",
                        help="with --cached-only: the summary tables as Markdown")
    parser.add_argument("--check-peers", action="store_true",
                        help="compare peers and skcal's same-named methods to references")
    parser.add_argument("--variants", action="store_true",
                        help="also the auto-variant prototypes (on splits whose skcal auto "
                        "result is cached)")
    parser.add_argument("--check-temperature", action="store_true",
                        help="both temperature scalings against the likelihood's maximum")
    args = parser.parse_args()
    if args.check_peers:
        check_peers()
        return
    if args.check_temperature:
        check_temperature()
        return
    splits = args.splits or (3 if args.quick else 10)
    os.makedirs(args.cache, exist_ok=True)
    if args.probabilities is not None:
        os.makedirs(args.probabilities, exist_ok=True)
    all_methods = methods(args.quick, args.variants)
    peer_names = [m for m in all_methods
                  if not m.startswith(("skcal", "auto-variant")) and m != "none"]
    print(f"skcal {skcal.__version__}, scikit-learn {sklearn.__version__}, numpy "
          f"{np.__version__}, scipy {scipy.__version__}, Python "
          f"{platform.python_version()}; {platform.platform()}, {_cpu()}, "
          f"{os.cpu_count()} logical CPUs")
    print("peers: " + ", ".join(peer_names))
    print("peer packages: " + ", ".join(_versions()))
    data = {name: load() for name, load in datasets(args.quick).items()}
    results = {}
    cached = {}  # --cached-only: split -> case -> result
    # split by split over every case, so that an interrupted run has every
    # case on its first splits
    for split in range(0 if args.cached_only else args.first_split, splits):
        for data_name, (X, y) in data.items():
            for model_name, make_model in models(args.quick).items():
                case = f"{data_name} / {model_name}"
                path = cache_path(args.cache, data_name, model_name, split)
                if args.cached_only:  # read only, compute nothing
                    if os.path.exists(path):
                        with open(path) as f:
                            cached.setdefault(split, {})[case] = json.load(f)
                    continue
                results.setdefault(case, []).append(run_case(
                    data_name, X, y, model_name, make_model, split, all_methods, args.cache,
                    args.probabilities))
        if not args.cached_only:
            print(f"done: split {split} ({time.strftime('%H:%M:%S')})", flush=True)
    if args.cached_only:
        # the splits that every case has (two processes may fill different
        # splits): each case is then paired over the same splits
        n_cases = len(data) * len(models(args.quick))
        # a split is complete when every case has every method of the
        # script (a cached file whose method was removed to be recomputed,
        # e.g. after a change to it, is not)
        complete = [k for k in sorted(cached) if len(cached[k]) == n_cases and all(
            name in result for result in cached[k].values() for name in all_methods)]
        for k in complete:
            for case, result in cached[k].items():
                results.setdefault(case, []).append(result)
        splits = len(complete)
        print(f"splits complete for all {n_cases} cases: {complete}"
              + (f"; partial: {sorted(set(cached) - set(complete))}"
                 if set(cached) - set(complete) else ""))
        if not results:
            return
        seconds = sum(r[m]["seconds"] for rs in results.values() for r in rs
                      for m in r if not m.startswith("_"))
        print(f"{sum(len(r) for r in results.values())} (case, split) results read; the "
              f"recalibrators' fits took {seconds / 60:.1f} min of process time in all "
              "(the base models' fits not counted)")
    if args.markdown:
        print(markdown(results, peer_names))
        return
    tables(results, peer_names, splits)


def _cpu():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _versions():
    from importlib.metadata import PackageNotFoundError, version

    out = []
    for name in ("betacal", "venn-abers", "splinecalib", "dirichletcal", "netcal",
                 "probmetrics"):
        try:
            out.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            out.append(f"{name} not installed")
    return out


if __name__ == "__main__":
    main()
