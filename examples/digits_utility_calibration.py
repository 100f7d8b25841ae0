"""Utility calibration of two digits classifiers: UC values and the eCDF plot.

Hegazy, Jordan and Dieuleveut (paper 001) measure multiclass calibration
through utilities: for a utility ``u(p, e_y)`` of the prediction ``p`` and
the class ``y``, ``UC(f, u)`` is the worst bias, over an interval of
predicted utility ``v_u(p) = sum_j p_j u(p, e_j)``, between the utility a
user expects and the one they get. This script fits a Gaussian naive Bayes
model (famously over-confident) and a logistic regression on
``load_digits``, then reports, on held-out data,

* top-class (confidence vs. accuracy), class-wise, top-K and their union
  ("comb") utility calibration errors, each with its worst utility;
* the eCDF of ``UC(f, u)`` over 1500 sampled linear and rank utilities
  (paper 001, Section 4), saved as a figure.

    python examples/digits_utility_calibration.py [out.png]
"""

import sys

import matplotlib
import numpy as np

matplotlib.use("Agg")  # write a file, whatever the display
import matplotlib.pyplot as plt
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skcal import UtilityCalibrationDisplay, utility_calibration_ecdf, utility_calibration_error


def main(path="digits_uc_ecdf.png"):
    X, y = load_digits(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.5, stratify=y, random_state=0
    )
    models = {
        "naive Bayes": GaussianNB().fit(X_train, y_train),
        "logistic regression": make_pipeline(
            StandardScaler(), LogisticRegression(C=0.05, max_iter=2000)
        ).fit(X_train, y_train),
    }

    print(f"{'model':<20} {'utility':<11} {'UC':>7}  worst utility, interval of v, sign")
    for name, model in models.items():
        proba = model.predict_proba(X_test)
        for utility in ("top-class", "class-wise", "top-k", "comb"):
            value, details = utility_calibration_error(
                y_test, proba, utility, labels=model.classes_, return_details=True
            )
            a, b = details["interval"]
            print(
                f"{name:<20} {utility:<11} {value:7.4f}  {details['utility']!r}, "
                f"[{a:.3f}, {b:.3f}], {details['sign']:+d}"
            )
        for family in ("linear", "rank"):
            errors, _, _ = utility_calibration_ecdf(
                y_test, proba, family, n_utilities=1500, random_state=0,
                labels=model.classes_,
            )
            print(
                f"{name:<20} {family:<11} median {np.median(errors):.4f}, "
                f"90% {np.quantile(errors, 0.9):.4f}, max {errors.max():.4f} "
                "over 1500 sampled utilities"
            )

    # same sampled utilities (same random_state) for both models
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, family in zip(axes, ("linear", "rank")):
        for name, model in models.items():
            UtilityCalibrationDisplay.from_estimator(
                model, X_test, y_test, family, n_utilities=1500, random_state=0,
                name=name, ax=ax,
            )
        ax.set_title(f"eCDF of UC(f, u) over sampled {family} utilities")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"\neCDF plot saved to {path}")


if __name__ == "__main__":
    main(*sys.argv[1:2])
