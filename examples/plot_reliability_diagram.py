"""
Reliability diagrams with the measures drawn in
================================================

A logistic regression and a Gaussian naive Bayes model are fitted on half of
scikit-learn's bundled breast cancer data and their held-out predicted
probabilities are drawn side by side with
:class:`~skcal.ReliabilityDisplay`.

Each diagram shows the binned reliability curve (equal-weight bins), the
band a perfectly calibrated model would stay in at each bin with this many
samples (95%, from outcomes redrawn as ``y* ~ Bernoulli(p)``), the interval
of predictions where the cutoff calibration error finds its largest bias,
the soft bins of SCDL at the grid it chose, and, below, the histogram of the
predictions with the optimal test function of the smooth calibration error.

Run it as ``python examples/plot_reliability_diagram.py [out.png]``.
"""

import sys

import matplotlib

matplotlib.use("Agg")  # draw to a file, with or without a display
import matplotlib.pyplot as plt
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skcal import ReliabilityDisplay

X, y = load_breast_cancer(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(
    X, y, test_size=0.5, stratify=y, random_state=0
)
models = {
    "logistic": make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)),
    "naive Bayes": GaussianNB(),
}

fig, axes = plt.subplots(1, 2, figsize=(13, 6.5), gridspec_kw={"wspace": 0.4})
displays = {}
for ax, (name, model) in zip(axes, models.items()):
    model.fit(X_train, y_train)
    displays[name] = ReliabilityDisplay.from_estimator(
        model, X_test, y_test, name=name, n_bins=8, random_state=0, ax=ax
    )
    ax.set_title(name)
fig.suptitle(f"Breast cancer, {len(y_test)} held-out samples")

# %%
# The measures behind each legend entry, in probability units.
for name, display in displays.items():
    values = ", ".join(f"{k} {v:.4f}" for k, v in display.measures.items())
    print(f"{name}: {values}")

if len(sys.argv) > 1:
    fig.savefig(sys.argv[1], dpi=110, bbox_inches="tight")
