"""``python -m skcal demo``: every binary measure on held-out predictions."""

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from ._report import MEASURES, calibration_summary, format_table

__all__ = ["MEASURES", "run_demo"]


def _models():
    return {
        "logistic": make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)),
        "naive Bayes": GaussianNB(),
    }


def run_demo(random_state=0, out=print, n_resamples=200):
    """Fit two classifiers on breast cancer and print every measure.

    Each value comes with the level that 95% of data sets drawn from a
    perfectly calibrated model with the same predictions stay below.
    """
    X, y = load_breast_cancer(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.5, stratify=y, random_state=random_state
    )
    summaries = {}
    accuracy = {}
    w = np.ones(y_test.shape[0])
    for name, model in _models().items():
        p = model.fit(X_train, y_train).predict_proba(X_test)[:, 1]
        accuracy[name] = float(np.mean((p >= 0.5) == y_test))
        summaries[name] = calibration_summary(
            y_test.astype(np.float64),
            p,
            w,
            n_resamples=n_resamples,
            random_state=random_state,
        )
    title = (
        f"skcal demo: breast cancer, {X_train.shape[0]} training and "
        f"{X_test.shape[0]} held-out samples"
    )
    lines = format_table(summaries, title=title)
    label_w = max(len(m[1]) for m in MEASURES)
    col_w = max(17, *(len(n) for n in summaries))
    acc = "".join(f"  {accuracy[n]:>{col_w}.4f}" for n in summaries)
    # accuracy goes after the test's p-value line
    at = next(i for i, line in enumerate(lines) if line.startswith("  p-value")) + 1
    lines.insert(at, f"{'accuracy (threshold 0.5)':<{label_w}}" + acc)
    for line in lines:
        out(line)
