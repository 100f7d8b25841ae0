"""ReliabilityDisplay: the diagram, its band and overlays, and the gallery scripts."""

import doctest
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.collections import PolyCollection  # noqa: E402

import skcal.display._reliability as reliability  # noqa: E402
from skcal import (  # noqa: E402
    ReliabilityDisplay,
    binned_ece,
    cutoff_calibration_error,
    smooth_calibration_error,
    soft_binned_cdl,
)
from skcal.display._band import null_bin_frequencies, soft_bins  # noqa: E402

from reference_reliability import (  # noqa: E402
    null_bin_frequencies_reference,
    soft_bins_reference,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _data(n=400, seed=0, power=1.5):
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p**power).astype(int)
    return y, p


def _random_case(rng):
    """Small weighted cases with ties, n = 1, p in {0, 1} and one class."""
    n = int(rng.integers(1, 30))
    kind = rng.integers(4)
    if kind == 0:
        p = rng.choice([0.0, 0.25, 0.5, 1.0], size=n)
    elif kind == 1:
        p = rng.uniform(size=n)
    elif kind == 2:
        p = np.round(rng.uniform(size=n), 1)
    else:
        p = rng.choice([0.0, 1.0], size=n)
    y = (rng.uniform(size=n) < 0.5).astype(float)
    if rng.integers(3) == 0:
        y[:] = y[0]
    w = rng.uniform(0.1, 3, size=n) if rng.integers(2) else np.ones(n)
    return y, p, w


def test_soft_bins_match_definition_on_random_cases():
    rng = np.random.default_rng(1)
    for _ in range(300):
        y, p, w = _random_case(rng)
        m = int(rng.integers(1, 70))
        centers, pi, q = soft_bins(y, p, w, m)
        c_ref, pi_ref, q_ref = soft_bins_reference(y, p, w, m)
        np.testing.assert_allclose(centers, c_ref)
        np.testing.assert_allclose(pi, pi_ref, atol=1e-12)
        np.testing.assert_allclose(q, q_ref, atol=1e-12, equal_nan=True)
        assert abs(pi.sum() - 1) < 1e-12  # every prediction's weight lands once


def test_null_bin_frequencies_match_reference_on_random_cases():
    rng = np.random.default_rng(2)
    for seed in range(60):
        y, p, w = _random_case(rng)
        n_bins = int(rng.integers(1, 5))
        bin_of_row = rng.integers(0, n_bins, size=p.shape[0])
        fast = null_bin_frequencies(p, w, bin_of_row, n_bins, 7, seed)
        slow = null_bin_frequencies_reference(p, w, bin_of_row, n_bins, 7, seed)
        np.testing.assert_allclose(fast, slow, atol=1e-12, equal_nan=True)


def test_band_covers_calibrated_points_at_its_level():
    # calibrated data: each bin's frequency falls in its 90% band about 90%
    # of the time (at least, with discreteness); far less for biased data
    rng = np.random.default_rng(3)
    inside = []
    for rep in range(40):
        p = rng.uniform(size=300)
        y = rng.uniform(size=300) < p
        d = ReliabilityDisplay.from_predictions(
            y, p, n_bins=10, band_level=0.9, n_resamples=300, random_state=rep
        )
        inside.append((d.band[0] <= d.prob_true) & (d.prob_true <= d.band[1]))
        plt.close("all")
    coverage = np.mean(inside)
    assert 0.86 <= coverage <= 0.97, coverage
    y, p = _data(3000, power=2.0)
    d = ReliabilityDisplay.from_predictions(
        y, p, n_bins=10, band_level=0.9, random_state=0
    )
    assert np.mean((d.band[0] <= d.prob_true) & (d.prob_true <= d.band[1])) < 0.5


def test_curve_is_weighted_bin_mean_and_artists_match_direct_calls():
    y, p = _data()
    w = np.random.default_rng(4).uniform(0.5, 2, size=p.shape[0])
    d = ReliabilityDisplay.from_predictions(
        y, p, sample_weight=w, n_bins=6, name="m", random_state=0
    )
    # the curve: equal-weight bins of binned_ece's quantile strategy
    _, det = binned_ece(
        y, p, sample_weight=w, n_bins=6, strategy="quantile", return_details=True
    )
    for k in range(6):
        rows = (p >= det.bin_lower[k]) & (p <= det.bin_upper[k])
        assert abs(d.prob_true[k] - np.sum(w[rows] * y[rows]) / np.sum(w[rows])) < 1e-12
        assert abs(d.prob_pred[k] - np.sum(w[rows] * p[rows]) / np.sum(w[rows])) < 1e-12
    np.testing.assert_allclose(d.line_.get_xdata(), d.prob_pred)
    np.testing.assert_allclose(d.line_.get_ydata(), d.prob_true)
    assert isinstance(d.band_, PolyCollection)
    assert np.all(d.band[0] <= d.band[1])

    smce, sd = smooth_calibration_error(y, p, sample_weight=w, return_details=True)
    cutoff, cd = cutoff_calibration_error(y, p, sample_weight=w, return_details=True)
    scdl, scd = soft_binned_cdl(y, p, sample_weight=w, return_details=True)
    label = d.line_.get_label()
    assert label.startswith("m: ")
    for text, value in (("smCE", smce), ("cutoff", cutoff), ("SCDL", scdl)):
        assert f"{text} {value:.3f}" in label
    # the worst interval, shaded along the bottom
    span = d.cutoff_span_
    if hasattr(span, "get_width"):  # a Rectangle from matplotlib 3.9 on
        x0, x1 = span.get_x(), span.get_x() + span.get_width()
    else:
        xs = np.asarray(span.get_xy())[:, 0]
        x0, x1 = xs.min(), xs.max()
    a, b = cd.interval
    assert x0 <= a and x1 >= b and x1 - x0 <= b - a + 0.01
    # the soft bins at SCDL's grid
    centers, pi, q = soft_bins_reference(y, p, w, scd.m)
    keep = pi * d.n_effective >= 5
    np.testing.assert_allclose(d.scdl_points_.get_offsets()[:, 0], centers[keep])
    np.testing.assert_allclose(d.scdl_points_.get_offsets()[:, 1], q[keep])
    # the witness
    np.testing.assert_allclose(d.witness_line_.get_xdata(), sd.points)
    np.testing.assert_allclose(d.witness_line_.get_ydata(), sd.witness)
    # the histogram: all the weight, a labelled count axis
    assert abs(sum(r.get_height() for r in d.hist_) - w.sum()) < 1e-9
    assert d.ax_hist_.get_ylabel() == "total weight"
    assert d.ax_witness_.get_ylabel() == "smCE witness"
    legend = [t.get_text() for t in d.ax_.get_legend().get_texts()]
    assert "95% band if calibrated" in legend
    assert "perfectly calibrated" in legend
    assert any(t.startswith("worst interval [") for t in legend)
    assert f"SCDL soft bins (m = {scd.m})" in legend
    assert any(t.startswith("smCE witness") for t in legend)
    assert d.figure_ is d.ax_.figure


def test_unweighted_count_axis_and_histogram_counts():
    y, p = _data(250)
    d = ReliabilityDisplay.from_predictions(y, p, random_state=0)
    assert d.ax_hist_.get_ylabel() == "number of predictions"
    assert sum(r.get_height() for r in d.hist_) == 250
    assert d.ax_hist_.get_xlabel() == "predicted probability"


def test_several_models_on_one_axes_share_panels():
    y, p = _data()
    _, ax = plt.subplots()
    d1 = ReliabilityDisplay.from_predictions(y, p, name="a", ax=ax, random_state=0)
    d2 = ReliabilityDisplay.from_predictions(
        y, np.sqrt(p), name="b", ax=ax, random_state=0
    )
    assert d1.ax_ is d2.ax_ and d1.ax_hist_ is d2.ax_hist_
    assert d1.ax_witness_ is d2.ax_witness_
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert sum(t.startswith("a: ") for t in labels) == 1
    assert sum(t.startswith("b: ") for t in labels) == 1
    assert labels.count("perfectly calibrated") == 1
    assert d1.line_.get_color() != d2.line_.get_color()


def test_overlays_can_be_switched_off_and_are_checked():
    y, p = _data()
    d = ReliabilityDisplay.from_predictions(y, p, overlays=(), n_resamples=0)
    assert d.band_ is None and d.cutoff_span_ is None
    assert d.scdl_points_ is None and d.witness_line_ is None
    with pytest.raises(ValueError, match="overlays"):
        ReliabilityDisplay.from_predictions(y, p, overlays=("witness",))
    with pytest.raises(ValueError, match="band_level"):
        ReliabilityDisplay.from_predictions(y, p, band_level=1.0)
    with pytest.raises(ValueError, match="n_resamples"):
        ReliabilityDisplay.from_predictions(y, p, n_resamples=-1)
    with pytest.raises(ValueError, match="y_prob"):
        ReliabilityDisplay.from_predictions(y, p + 1)


def test_multiclass_is_top_label_and_from_estimator():
    from sklearn.datasets import load_iris
    from sklearn.linear_model import LogisticRegression

    X, y = load_iris(return_X_y=True)
    clf = LogisticRegression(max_iter=500).fit(X, y)
    d = ReliabilityDisplay.from_estimator(clf, X, y, random_state=0)
    assert d.ax_.get_ylabel() == "observed accuracy"
    assert d.ax_hist_.get_xlabel() == "top-label confidence"
    assert d.line_.get_label().startswith("LogisticRegression: ")
    P = clf.predict_proba(X)
    assert abs(d.measures["smce"] - smooth_calibration_error(y, P)) < 1e-12


def test_calibrated_constant_predictions_draw_without_soft_bins():
    # exactly calibrated data: SCDL = 0 with m* = 2**40, so no soft bins
    y = np.array([0, 1] * 10)
    p = np.full(20, 0.5)
    d = ReliabilityDisplay.from_predictions(y, p, random_state=0)
    assert d.measures["scdl"] == 0.0
    assert d.scdl_points_ is None and d.cutoff_span_ is None


def test_missing_matplotlib_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    y, p = _data(50)
    with pytest.raises(ImportError, match="pip install matplotlib"):
        ReliabilityDisplay.from_predictions(y, p)


def test_docstring_examples_of_the_module():
    result = doctest.testmod(reliability, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_from_estimator_checks_parameters_before_predicting():
    class Spy:
        def __init__(self):
            self.classes_ = np.array([0, 1])

        def fit(self):
            return self

        def predict_proba(self, X):
            raise AssertionError("predict_proba called before the checks")

    X, y = np.zeros((4, 1)), np.array([0, 1, 0, 1])
    for bad, match in (
        ({"n_bins": 0}, "n_bins"),
        ({"band_level": 1.5}, "band_level"),
        ({"n_resamples": -1}, "n_resamples"),
        ({"overlays": ("witness",)}, "overlays"),
        ({"name": 3}, "name"),
    ):
        with pytest.raises((ValueError, TypeError), match=match):
            ReliabilityDisplay.from_estimator(Spy(), X, y, **bad)
        with pytest.raises((ValueError, TypeError), match=match):
            ReliabilityDisplay.from_predictions(y, [0.2, 0.8, 0.3, 0.6], **bad)
    with pytest.raises(TypeError, match="predict_proba"):
        ReliabilityDisplay.from_estimator(object(), X, y)


def test_gallery_example_runs_headless(tmp_path):
    out = tmp_path / "diagram.png"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "examples" / "plot_reliability_diagram.py"),
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={"MPLBACKEND": "Agg", "PATH": "", "HOME": str(tmp_path)},
    )
    assert proc.returncode == 0, proc.stderr
    assert "logistic: smce" in proc.stdout
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "script", sorted((ROOT / "examples").glob("*.py")), ids=lambda p: p.name
)
def test_every_example_runs_headless_and_draws(script, tmp_path):
    out = tmp_path / "figure.png"
    proc = subprocess.run(
        [sys.executable, str(script), str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,  # outside the source tree, which would shadow the package
        env={"MPLBACKEND": "Agg", "PATH": "", "HOME": str(tmp_path)},
    )
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
