"""ClassWiseReliabilityDisplay: one-vs-rest diagrams of every class, on a grid."""

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from skcal import (  # noqa: E402
    ClassWiseReliabilityDisplay,
    ReliabilityDisplay,
    smooth_calibration_error,
)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_classwise_view_is_one_vs_rest_per_class():
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(3), size=300)
    y = np.array([rng.choice(["a", "b", "c"], p=q) for q in P])
    display = ClassWiseReliabilityDisplay.from_predictions(
        y, P, random_state=0, n_bins=5, n_resamples=50
    )
    assert [d.ax_.get_title() for d in display.displays] == [
        "class a", "class b", "class c"
    ]
    for k, d in enumerate(display.displays):
        direct = smooth_calibration_error((y == "abc"[k]).astype(int), P[:, k])
        assert abs(d.measures["smce"] - direct) < 1e-12
        assert d.ax_hist_.get_xlabel() == "predicted probability"
        # the same as the class's own binary diagram
        alone = ReliabilityDisplay.from_predictions(
            (y == "abc"[k]).astype(int), P[:, k], n_bins=5, n_resamples=50,
            random_state=0,
        )
        np.testing.assert_array_equal(d.prob_true, alone.prob_true)
        np.testing.assert_array_equal(d.band, alone.band)
    with pytest.raises(ValueError, match="labels"):
        ClassWiseReliabilityDisplay.from_predictions(y, P[:, :2])
    with pytest.raises(ValueError, match="n_classes"):
        ClassWiseReliabilityDisplay.from_predictions(y, P[:, 0])


def test_classwise_view_is_a_grid_of_readable_panels(tmp_path):
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(7), size=400)
    y = np.array([rng.choice(7, p=row) for row in P])
    display = ClassWiseReliabilityDisplay.from_predictions(
        y, P, random_state=0, n_bins=5, n_resamples=20
    )
    assert display.axes_.shape == (3, 3)
    grid = display.displays[0].ax_.get_subplotspec().get_gridspec()
    assert (grid.nrows, grid.ncols) == (3, 3)
    # a 3x3 grid gives each panel about a fifth of the width after spacing
    # (one row of 7 gave each about a tenth)
    for d in display.displays:
        assert d.ax_.get_position().width > 0.15
    # the two cells left over are switched off
    assert sum(not ax.axison for ax in display.figure_.axes) == 2
    display.figure_.savefig(tmp_path / "grid.png")  # draws without error
    with pytest.raises(ValueError, match="one Axes per class"):
        ClassWiseReliabilityDisplay.from_predictions(
            y, P, n_resamples=0, ax=display.figure_.axes[:3]
        )


def test_from_estimator_labels_columns_and_checks_first():
    from sklearn.datasets import load_iris
    from sklearn.linear_model import LogisticRegression

    X, y = load_iris(return_X_y=True)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    model = LogisticRegression(max_iter=500).fit(X, names)
    display = ClassWiseReliabilityDisplay.from_estimator(
        model, X, names, n_resamples=20, random_state=0
    )
    assert [d.ax_.get_title() for d in display.displays] == [
        f"class {c}" for c in model.classes_
    ]
    assert display.displays[0].line_.get_label().startswith("LogisticRegression: ")
    # plot() again on given axes
    _, axes = plt.subplots(1, 3)
    again = display.plot(ax=axes)
    assert again.axes_.shape == (3,) and again.displays[2].ax_ is axes[2]

    class Spy:
        def __init__(self):
            self.classes_ = np.array([0, 1, 2])

        def fit(self):
            return self

        def predict_proba(self, X):
            raise AssertionError("predict_proba called before the checks")

    for bad, match in (({"n_bins": 0}, "n_bins"), ({"band_level": 0}, "band_level")):
        with pytest.raises(ValueError, match=match):
            ClassWiseReliabilityDisplay.from_estimator(Spy(), X, y, **bad)
