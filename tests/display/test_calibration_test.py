"""CalibrationTestDisplay: null distribution, statistic, threshold and verdict."""

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from skcal import CalibrationTestDisplay, CalibrationTester  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=n)
    return (rng.uniform(size=n) < p).astype(int), p


def test_draws_null_statistic_threshold_and_verdict():
    y, p = _data()
    tester = CalibrationTester(n_resamples=99, resampling_risk=None, random_state=0)
    display = CalibrationTestDisplay.from_predictions(y, p, tester=tester)
    ax = display.ax_
    fitted = tester.fit(y, p)  # the display fitted a clone, the same test
    result = fitted.result_
    assert display.result.statistic == result.statistic
    assert sum(patch.get_height() for patch in ax.patches) == 99
    xs = sorted(line.get_xdata()[0] for line in ax.lines)
    assert xs == sorted([result.statistic, result.threshold])
    assert "calibrated" in ax.get_title()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("threshold" in t for t in labels)
    theory = CalibrationTester(threshold="theory", epsilon=0.9).fit(y, p).result_
    d2 = CalibrationTestDisplay.from_tester(theory)
    assert len(d2.ax_.patches) == 0 and len(d2.ax_.lines) == 2 and d2.hist_ is None


def test_plot_methods_of_tester_and_result_return_the_display():
    y, p = _data(400)
    tester = CalibrationTester(random_state=0).fit(y, p)
    display = tester.plot()
    assert isinstance(display, CalibrationTestDisplay)
    assert display.ax_.get_title().startswith("Calibration test: calibrated")
    assert len(display.ax_.patches) > 0  # the null distribution is drawn
    display = tester.decide().plot()
    assert "p-value" in display.ax_.get_title() and display.hist_ is None


def test_from_estimator_and_bad_arguments():
    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import LogisticRegression

    X, y = load_breast_cancer(return_X_y=True)
    model = LogisticRegression(max_iter=5000).fit(X[:300], y[:300])
    tester = CalibrationTester(n_resamples=99, resampling_risk=None, random_state=0)
    display = CalibrationTestDisplay.from_estimator(model, X[300:], y[300:], tester=tester)
    direct = CalibrationTester.from_estimator(
        model, X[300:], y[300:], n_resamples=99, resampling_risk=None, random_state=0
    )
    assert display.result.statistic == direct.result_.statistic
    with pytest.raises(TypeError, match="tester"):
        CalibrationTestDisplay.from_predictions(y[:10], np.full(10, 0.5), tester="smce")
    with pytest.raises(TypeError, match="tester"):
        CalibrationTestDisplay.from_estimator(model, X, y, tester=object())
    with pytest.raises(TypeError, match="predict_proba"):
        CalibrationTestDisplay.from_estimator(object(), X, y)
    with pytest.raises(TypeError, match="CalibrationTester"):
        CalibrationTestDisplay.from_tester("result")
