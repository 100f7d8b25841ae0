"""``python -m skcal demo``: every binary measure on held-out predictions."""

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from . import metrics
from .tester import CalibrationTester

# (label, function name, one-line meaning); the function is looked up in
# skcal.metrics so the table lists exactly what the package provides.
MEASURES = [
    (
        "smooth calibration error",
        "smooth_calibration_error",
        "largest bias any 1-Lipschitz reweighting of the predictions can expose",
    ),
    (
        "lower distance to calibration",
        "lower_distance_to_calibration",
        "least mean distance the predictions must move to be calibrated (grid 0.01)",
    ),
    (
        "cutoff calibration error",
        "cutoff_calibration_error",
        "largest |mean(y - p)| mass over any interval of predictions",
    ),
    (
        "soft-binned CDL (SCDL)",
        "soft_binned_cdl",
        "decision loss from miscalibration, testable; 2*SCDL+2/m bounds swap regret",
    ),
    (
        "calibration decision loss",
        "calibration_decision_loss",
        "worst swap regret over all decision tasks with payoffs in [0, 1]",
    ),
    (
        "binned ECE (15 bins)",
        "binned_ece",
        "classic expected calibration error on 15 equal-width bins",
    ),
]


def _models():
    return {
        "logistic": make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)),
        "naive Bayes": GaussianNB(),
    }


def run_demo(random_state=0, out=print):
    """Fit two classifiers on breast cancer and print every measure."""
    X, y = load_breast_cancer(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.5, stratify=y, random_state=random_state
    )
    probs = {}
    for name, model in _models().items():
        probs[name] = model.fit(X_train, y_train).predict_proba(X_test)[:, 1]

    available = [m for m in MEASURES if hasattr(metrics, m[1])]
    names = list(probs)
    out(
        f"skcal demo: breast cancer, {X_train.shape[0]} training and "
        f"{X_test.shape[0]} held-out samples\n"
    )
    label_w = max(len(m[0]) for m in available)
    header = f"{'measure':<{label_w}}  " + "  ".join(f"{n:>11}" for n in names)
    out(header + "  meaning")
    out("-" * (len(header) + 9))
    for label, func_name, meaning in available:
        func = getattr(metrics, func_name)
        cells = "  ".join(f"{func(y_test, probs[n]):>11.4f}" for n in names)
        out(f"{label:<{label_w}}  {cells}  {meaning}")
    accuracy = "  ".join(
        f"{np.mean((probs[n] >= 0.5) == y_test):>11.4f}" for n in names
    )
    out(f"{'accuracy (threshold 0.5)':<{label_w}}  {accuracy}")
    tester = CalibrationTester(alpha=0.05, n_resamples=999, random_state=random_state)
    results = {n: tester.decide(y_test, probs[n]) for n in names}
    verdicts = "  ".join(
        f"{'yes' if results[n].calibrated else 'no':>11}" for n in names
    )
    out(f"{'calibrated? (smCE test)':<{label_w}}  {verdicts}  "
        "CalibrationTester, resampling null, alpha = 0.05")
    p_values = "  ".join(f"{results[n].p_value:>11.3f}" for n in names)
    out(f"{'  p-value':<{label_w}}  {p_values}")
    out("\nAll measures are in probability units: 0 means perfectly calibrated.")
