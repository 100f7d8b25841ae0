"""
Reliability diagrams before and after recalibration
====================================================

Two models that are miscalibrated in opposite ways, recalibrated with
:class:`~skcal.RecalibratedClassifier` at its default
``recalibrator="auto"`` (:class:`~skcal.AutoRecalibrator`: the candidate with
the best cross-fitted log-loss, ties to the simplest, never worse than the
model left alone):

* Gaussian naive Bayes on scikit-learn's breast cancer data: its
  independence assumption makes it far too confident;
* an MLP with 200 hidden units, no weight decay and 300 epochs on the digits
  data: overfitted, it puts probability near 1 on the training classes and
  is over-confident on new rows (top-label diagram: the largest probability
  against whether that class was right).

Each model is frozen (:class:`~sklearn.frozen.FrozenEstimator`) after training
on one third of the rows; the recalibrator is fitted on the second third and
every diagram is drawn on the last third. Each panel shows the binned
reliability curve, the band a calibrated model stays in, and the measures in
the legend; the printed summary says what "auto" compared and chose.

Run it as ``python examples/plot_recalibration_before_after.py [out.png]``.
"""

import sys
import warnings

import matplotlib

matplotlib.use("Agg")  # draw to a file, with or without a display
import matplotlib.pyplot as plt
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.frozen import FrozenEstimator
from sklearn.metrics import log_loss
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skcal import RecalibratedClassifier, ReliabilityDisplay

cases = {
    "naive Bayes, breast cancer": (load_breast_cancer(return_X_y=True), GaussianNB()),
    "overfitted MLP, digits (top label)": (
        load_digits(return_X_y=True),
        make_pipeline(
            StandardScaler(),
            MLPClassifier((200,), alpha=0.0, max_iter=300, random_state=0),
        ),
    ),
}

fig, axes = plt.subplots(2, 2, figsize=(13, 12), gridspec_kw={"hspace": 0.45, "wspace": 0.35})
for row, (name, ((X, y), model)) in zip(axes, cases.items()):
    X_train, X_rest, y_train, y_rest = train_test_split(
        X, y, train_size=1 / 3, stratify=y, random_state=0
    )
    X_cal, X_test, y_cal, y_test = train_test_split(
        X_rest, y_rest, train_size=0.5, stratify=y_rest, random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the MLP is meant not to converge
        model.fit(X_train, y_train)
    recalibrated = RecalibratedClassifier(FrozenEstimator(model)).fit(X_cal, y_cal)
    print(f"{name}:\n{recalibrated.recalibrator_.summary()}")
    for ax, (when, clf) in zip(row, [("before", model), ("after", recalibrated)]):
        P = clf.predict_proba(X_test)
        print(f"  test log-loss {when}: {log_loss(y_test, P, labels=clf.classes_):.4f}")
        if P.shape[1] == 2:
            y_bin, p = y_test, P[:, 1]
        else:  # top label: the largest probability and whether it was right
            y_bin = (clf.classes_[P.argmax(axis=1)] == y_test).astype(int)
            p = P.max(axis=1)
        ReliabilityDisplay.from_predictions(
            y_bin, p, n_bins=8, random_state=0, name=when, ax=ax
        )
        weights = recalibrated.recalibrator_.weights_
        chosen = "" if when == "before" else (
            f" ({next(iter(weights))})" if len(weights) == 1
            else f" (a mixture of {len(weights)}, most {recalibrated.recalibrator_.chosen_})"
        )
        ax.set_title(f"{name}\n{when}{chosen}", fontsize=10)
fig.suptitle("Reliability on held-out rows, before and after RecalibratedClassifier()")

if len(sys.argv) > 1:
    fig.savefig(sys.argv[1], dpi=90, bbox_inches="tight")
