"""
Utility calibration of two digits classifiers
=============================================

Hegazy, Jordan and Dieuleveut (*Scalable Utility-Aware Multiclass
Calibration*, see the :doc:`bibliography </bibliography>`) measure multiclass
calibration through utilities: for a utility ``u(p, e_y)`` of the prediction
``p`` and the class ``y``, ``UC(f, u)`` is the worst bias, over an interval of
predicted utility ``v_u(p) = sum_j p_j u(p, e_j)``, between the utility a user
expects and the one they get.

This example fits a Gaussian naive Bayes model (famously over-confident) and a
logistic regression on ``load_digits``, then reports, on held-out data,

* top-class (confidence vs. accuracy), class-wise, top-K and their union
  ("comb") utility calibration errors, each with its worst utility;
* the eCDF of ``UC(f, u)`` over 1500 sampled linear and rank utilities
  (Section 4 of the same paper), drawn with
  :class:`~skcal.UtilityCalibrationDisplay`.

Run as a script, ``python examples/digits_utility_calibration.py [out.png]``
saves the figure to ``out.png`` when a path is given.
"""

import sys

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skcal import (
    UtilityCalibrationDisplay,
    utility_calibration_ecdf,
    utility_calibration_error,
)

# %%
# Two models on held-out digits
# -----------------------------
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

# %%
# Utility calibration errors
# --------------------------
# For each finite family, the error and where it is: the worst utility, the
# interval of predicted utility and the sign of the bias (``+1``: users got
# more than promised). For the continuous linear and rank families, the
# distribution of ``UC(f, u)`` over sampled utilities.
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

# %%
# The eCDF of UC over sampled utilities
# -------------------------------------
# The same sampled utilities (same ``random_state``) for both models: a curve
# further left is better calibrated for more users.
fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
for ax, family in zip(axes, ("linear", "rank")):
    for name, model in models.items():
        UtilityCalibrationDisplay.from_estimator(
            model, X_test, y_test, family, n_utilities=1500, random_state=0,
            name=name, ax=ax,
        )
    ax.set_title(f"eCDF of UC(f, u), sampled {family} utilities")
fig.tight_layout()

if len(sys.argv) > 1:  # run as a script with an output path
    fig.savefig(sys.argv[1], dpi=120)
    print(f"\neCDF plot saved to {sys.argv[1]}")
else:
    plt.show()
