"""CalibrationMonitorDisplay: the e-process of a monitor against rows seen."""

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from skcal import CalibrationMonitor, CalibrationMonitorDisplay  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_from_predictions_is_the_monitor_fed_the_rows():
    rng = np.random.default_rng(0)
    p = rng.uniform(size=1500)
    y = (rng.uniform(size=1500) < np.clip(p + 0.2, 0, 1)).astype(int)
    display = CalibrationMonitorDisplay.from_predictions(
        y, p, monitor=CalibrationMonitor(alpha=0.01)
    )
    monitor = CalibrationMonitor(alpha=0.01).update(y, p)
    np.testing.assert_array_equal(display.history, monitor.history_)
    assert display.alarm_at == monitor.alarm_at_ and display.alpha == 0.01
    assert display.ax_.get_yscale() == "log"
    # the alarm line and the alarm
    assert len(display.ax_.get_lines()) == 3
    with pytest.raises(ValueError, match="alpha"):
        CalibrationMonitorDisplay.from_predictions(y, p, monitor=CalibrationMonitor(2.0))
    with pytest.raises(TypeError, match="monitor"):
        CalibrationMonitorDisplay.from_predictions(y, p, monitor=0.05)
    with pytest.raises(ValueError, match="update"):
        CalibrationMonitorDisplay.from_monitor(CalibrationMonitor())


def test_from_estimator_and_weighted_axis():
    from sklearn.datasets import load_iris
    from sklearn.linear_model import LogisticRegression

    X, y = load_iris(return_X_y=True)
    model = LogisticRegression(max_iter=500).fit(X, y)
    w = np.random.default_rng(1).uniform(0.5, 2, size=y.shape[0])
    display = CalibrationMonitorDisplay.from_estimator(model, X, y, sample_weight=w)
    direct = CalibrationMonitor(labels=model.classes_).update(
        y, model.predict_proba(X), sample_weight=w
    )
    np.testing.assert_array_equal(display.history, direct.history_)
    assert display.ax_.get_xlabel() == "weight seen"
    with pytest.raises(TypeError, match="predict_proba"):
        CalibrationMonitorDisplay.from_estimator(object(), X, y)
