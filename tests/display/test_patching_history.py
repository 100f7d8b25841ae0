"""PatchingHistoryDisplay: UC and Brier score after each patch."""

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402

from skcal import PatchingHistoryDisplay, UtilityPatchingRecalibrator  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _data(seed=0):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(3), size=300)
    y = np.array([rng.choice(3, p=np.roll(q, 1)) for q in P])
    return P, y


def test_draws_every_curve():
    P, y = _data()
    rec = UtilityPatchingRecalibrator(max_iter=4, validation_fraction=0.3, random_state=0)
    display = PatchingHistoryDisplay.from_predictions(y, P, recalibrator=rec)
    ax = display.ax_
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == [
        "UC, fitted samples",
        "Brier, fitted samples",
        "UC, held out",
        "Brier, held out",
    ]
    fitted = rec.fit(P, y)  # the display fitted a clone: the same history
    np.testing.assert_allclose(ax.lines[0].get_ydata(), fitted.history_["uc"])
    with pytest.raises(NotFittedError):
        PatchingHistoryDisplay.from_recalibrator(UtilityPatchingRecalibrator())
    with pytest.raises(TypeError, match="UtilityPatchingRecalibrator"):
        PatchingHistoryDisplay.from_recalibrator(object())
    with pytest.raises(TypeError, match="recalibrator"):
        PatchingHistoryDisplay.from_predictions(y, P, recalibrator="comb")


def test_plot_history_method_returns_the_display():
    P, y = _data(1)
    sharpened = P**2 / (P**2).sum(axis=1, keepdims=True)
    rec = UtilityPatchingRecalibrator(max_iter=5).fit(sharpened, y)
    display = rec.plot_history()
    assert isinstance(display, PatchingHistoryDisplay)
    np.testing.assert_allclose(display.lines_[0].get_ydata(), rec.history_["uc"])


def test_from_estimator_maps_labels_to_columns():
    from sklearn.datasets import load_iris
    from sklearn.naive_bayes import GaussianNB

    X, y = load_iris(return_X_y=True)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    model = GaussianNB().fit(X, names)
    display = PatchingHistoryDisplay.from_estimator(
        model, X, names, recalibrator=UtilityPatchingRecalibrator(max_iter=3, tol=0.0)
    )
    direct = UtilityPatchingRecalibrator(max_iter=3, tol=0.0).fit(model.predict_proba(X), y)
    np.testing.assert_allclose(display.history["uc"], direct.history_["uc"])
    with pytest.raises(ValueError, match="classes_"):
        PatchingHistoryDisplay.from_estimator(model, X[:3], ["setosa", "rose", "iris"])
