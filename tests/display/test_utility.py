"""UtilityCalibrationDisplay: the eCDF of UC over a family of utilities."""

import numpy as np
import pytest

from skcal import UtilityCalibrationDisplay, utility_calibration_ecdf


def test_display():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from sklearn.datasets import load_iris
    from sklearn.linear_model import LogisticRegression

    X, y = load_iris(return_X_y=True)
    model = LogisticRegression(max_iter=500).fit(X, y)
    display = UtilityCalibrationDisplay.from_estimator(
        model, X, y, "rank", n_utilities=30, random_state=0
    )
    assert display.line_.get_label() == "LogisticRegression"
    assert display.ax_.get_legend() is not None
    errors, levels, ecdf = utility_calibration_ecdf(
        y, model.predict_proba(X), "rank", n_utilities=30, random_state=0
    )
    np.testing.assert_array_equal(display.errors, errors)
    np.testing.assert_array_equal(display.ecdf, ecdf)
    x_plot, y_plot = display.line_.get_data()
    assert x_plot[0] == 0 and y_plot[0] == 0 and y_plot[-1] == 1
    # a second model on the same axes
    uniform = np.full((150, 3), 1 / 3)
    second = UtilityCalibrationDisplay.from_predictions(
        y, uniform, "rank", n_utilities=30, random_state=0, ax=display.ax_, name="uniform"
    )
    assert second.ax_ is display.ax_ and len(display.ax_.get_lines()) == 2
    plt.close("all")


def test_display_without_matplotlib(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match="requires matplotlib"):
        UtilityCalibrationDisplay.from_predictions([0, 1], [0.25, 0.75], "class-wise")
    with pytest.raises(ImportError, match="requires matplotlib"):
        UtilityCalibrationDisplay(np.array([0.1, 0.2])).plot()

def test_from_estimator_checks_parameters_before_predicting():
    pytest.importorskip("matplotlib").use("Agg")

    class Spy:
        def __init__(self):
            self.classes_ = np.array([0, 1, 2])

        def fit(self):
            return self

        def predict_proba(self, X):
            raise AssertionError("predict_proba called before the checks")

    X, y = np.zeros((3, 1)), np.array([0, 1, 2])
    with pytest.raises(ValueError, match="n_utilities"):
        UtilityCalibrationDisplay.from_estimator(Spy(), X, y, n_utilities=0)
    with pytest.raises(TypeError, match="name"):
        UtilityCalibrationDisplay.from_estimator(Spy(), X, y, name=1)
    with pytest.raises(TypeError, match="predict_proba"):
        UtilityCalibrationDisplay.from_estimator(object(), X, y)
