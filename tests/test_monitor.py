"""Tests of CalibrationMonitor: validity by simulation, power, a slow twin, input."""

import math

import numpy as np
import pytest

from skcal import CalibrationMonitor
from skcal._eprocess import DEFAULT_RESTART, BettingEProcess

# --- the slow, obviously-correct twin ----------------------------------------------


def reference_log_e_path(y, p, w=None, scales=(1, 2, 4, 8), restart=500):
    """``log E_t`` after every row, from scalar loops (the formulas of _eprocess).

    One dictionary of bets per copy; copy ``k`` starts at row 0 (``k = 0``)
    or ``restart * 2^(k-1)``, with prior weight 1/2 or ``1/((k+1)(k+2))``.
    """
    rate = 2.0 / (2.0 - math.log(3.0))
    copies = []  # (prior weight, lam, curv, log wealth per scale)
    path = []
    for t in range(len(y)):
        k = len(copies)
        if t == (0 if k == 0 else restart * 2 ** (k - 1)):
            weight = 0.5 if k == 0 else 1.0 / ((k + 1) * (k + 2))
            copies.append((
                weight,
                {(B, b): 0.0 for B in scales for b in range(B)},
                {(B, b): 1.0 for B in scales for b in range(B)},
                {B: 0.0 for B in scales},
            ))
        z = float(y[t]) - float(p[t])
        wt = 1.0 if w is None else float(w[t])
        for _, lam, curv, log_k in copies:
            for B in scales:
                b = min(int(math.floor(p[t] * B)), B - 1)
                c = min(0.5, max(-0.5, wt * lam[B, b])) if w is not None else lam[B, b]
                factor = 1.0 + c * z
                log_k[B] += math.log(factor)
                d = -wt * z / factor
                curv[B, b] += d * d
                lam[B, b] = min(0.5, max(-0.5, lam[B, b] - rate * d / curv[B, b]))
        started = sum(c[0] for c in copies)
        e = sum(weight * math.exp(v) / len(scales)
                for weight, _, _, log_k in copies for v in log_k.values())
        path.append(math.log(e + (1.0 - started)))
    return np.array(path)


def _random_case(rng):
    n = int(rng.choice([1, 2, 5, 40, 300, 1200], p=[0.15, 0.15, 0.2, 0.2, 0.25, 0.05]))
    kind = rng.integers(4)
    if kind == 0:
        p = rng.uniform(size=n)
    elif kind == 1:  # ties and the end points
        p = rng.choice([0.0, 0.25, 0.5, 1.0], size=n)
    elif kind == 2:
        p = rng.beta(0.5, 4.0, size=n)
    else:
        p = np.full(n, rng.uniform())
    if rng.uniform() < 0.2:  # one class only
        y = np.full(n, int(rng.integers(2)))
    else:
        y = (rng.uniform(size=n) < np.clip(p + rng.uniform(-0.2, 0.2), 0, 1)).astype(int)
    w = None
    if rng.uniform() < 0.4:
        w = rng.choice([0.0, 0.5, 1.0, 3.0], size=n)
        w[0] = 1.0  # a positive total
    return y, p, w


def test_matches_reference_on_random_cases():
    rng = np.random.default_rng(0)
    for _ in range(120):
        y, p, w = _random_case(rng)
        path = reference_log_e_path(y, p, w)
        monitor = CalibrationMonitor(alpha=0.2).update(y, p, sample_weight=w)
        assert math.isclose(math.log(monitor.e_value_), path[-1], rel_tol=1e-9,
                            abs_tol=1e-12)
        cum = np.cumsum(np.ones(len(y)) if w is None else w)
        crossed = np.flatnonzero(path >= math.log(1 / 0.2))
        if crossed.size:
            assert monitor.alarm_ and monitor.alarm_at_ == cum[crossed[0]]
        else:
            assert not monitor.alarm_ and monitor.alarm_at_ is None
        bias = CalibrationMonitor(method="bias").update(y, p, sample_weight=w)
        ref = reference_log_e_path(y, p, w, scales=(1,))[-1]
        assert math.isclose(math.log(bias.e_value_), ref, rel_tol=1e-9, abs_tol=1e-12)


def test_vectorised_process_equals_monitor_per_stream():
    rng = np.random.default_rng(1)
    p = rng.uniform(size=(1100, 4))
    y = (rng.uniform(size=(1100, 4)) < p).astype(float)
    process = BettingEProcess(4, restart=DEFAULT_RESTART)
    for t in range(1100):
        process.step(y[t], p[t])
    for s in range(4):
        e = CalibrationMonitor().update(y[:, s], p[:, s]).e_value_
        assert math.isclose(math.log(e), process.log_e()[s], rel_tol=1e-9, abs_tol=1e-12)


# --- validity and power by simulation ----------------------------------------------


def _alarm_rate(n_streams, n_rows, draw, seed, alpha=0.05, look=100):
    rng = np.random.default_rng(seed)
    process = BettingEProcess(n_streams, restart=DEFAULT_RESTART)
    alarmed = np.zeros(n_streams, dtype=bool)
    for t in range(n_rows):
        p, y = draw(rng, n_streams)
        process.step(y, p)
        if (t + 1) % look == 0:
            alarmed |= process.log_e() >= math.log(1 / alpha)
    return alarmed.mean()


def _calibrated_uniform(rng, n):
    p = rng.uniform(size=n)
    return p, (rng.uniform(size=n) < p).astype(float)


def _calibrated_rare(rng, n):
    p = rng.beta(0.5, 8.0, size=n)
    return p, (rng.uniform(size=n) < p).astype(float)


def _calibrated_extremes(rng, n):
    p = rng.choice([0.0, 0.02, 0.5, 0.98, 1.0], size=n)
    return p, (rng.uniform(size=n) < p).astype(float)


@pytest.mark.parametrize(
    "draw", [_calibrated_uniform, _calibrated_rare, _calibrated_extremes]
)
def test_false_alarm_rate_under_continuous_monitoring(draw):
    # looks every 100 rows for 3,000 rows; Ville's inequality bounds the rate by
    # alpha; the tolerance is 3 binomial standard errors of 400 streams
    n, alpha = 400, 0.05
    rate = _alarm_rate(n, 3000, draw, seed=3, alpha=alpha)
    assert rate <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / n)


def test_detects_a_shift_of_005_and_a_tempered_model():
    def shifted(rng, n):
        p = rng.uniform(size=n)
        return p, (rng.uniform(size=n) < np.clip(p + 0.05, 0, 1)).astype(float)

    def tempered(rng, n):
        p = rng.uniform(0.01, 0.99, size=n)
        truth = 1 / (1 + np.exp(-1.5 * np.log(p / (1 - p))))
        return p, (rng.uniform(size=n) < truth).astype(float)

    assert _alarm_rate(100, 5000, shifted, seed=4) >= 0.9
    assert _alarm_rate(100, 5000, tempered, seed=5) >= 0.9


def test_alarm_mid_stream_through_the_public_api():
    rng = np.random.default_rng(6)
    p = rng.uniform(0.0, 0.85, size=6000)
    truth = np.where(np.arange(6000) < 2000, p, p + 0.15)
    y = (rng.uniform(size=6000) < truth).astype(int)
    monitor = CalibrationMonitor()
    for start in range(0, 6000, 250):
        monitor.update(y[start:start + 250], p[start:start + 250])
    assert monitor.alarm_ and 2000 < monitor.alarm_at_ <= 6000
    assert monitor.e_value_ >= 20


# --- the protocol ------------------------------------------------------------------


def test_batches_do_not_matter_and_history():
    rng = np.random.default_rng(7)
    p = rng.uniform(size=700)
    y = (rng.uniform(size=700) < np.clip(p + 0.1, 0, 1)).astype(int)
    w = rng.uniform(0, 2, size=700)
    whole = CalibrationMonitor(alpha=0.1).update(y, p, sample_weight=w)
    parts = CalibrationMonitor(alpha=0.1)
    cuts = np.sort(rng.choice(np.arange(1, 700), size=30, replace=False))
    for a, b in zip(np.r_[0, cuts], np.r_[cuts, 700]):
        parts.update(y[a:b], p[a:b], sample_weight=w[a:b])
    assert parts.e_value_ == whole.e_value_
    assert parts.alarm_at_ == whole.alarm_at_
    assert math.isclose(parts.n_seen_, w.sum()) and parts.n_rows_ == 700
    assert parts.history_.shape == (32, 2)
    assert parts.history_[0].tolist() == [0.0, 1.0]
    assert parts.history_[-1, 1] == parts.e_value_


def test_one_row_at_a_time_and_reset():
    monitor = CalibrationMonitor()
    for y, p in [(1, 0.9), (0, 0.2), (1, 0.5)]:
        monitor.update([y], [p])
    assert monitor.n_rows_ == 3 and monitor.n_seen_ == 3.0
    assert monitor.e_value_ != 1.0
    monitor.reset()
    assert monitor.e_value_ == 1.0 and monitor.n_seen_ == 0 and not monitor.alarm_
    assert monitor.alarm_at_ is None and monitor.history_.shape == (1, 2)


def test_zero_weight_rows_count_for_nothing():
    rng = np.random.default_rng(8)
    p = rng.uniform(size=200)
    y = (rng.uniform(size=200) < p).astype(int)
    w = (rng.uniform(size=200) < 0.7).astype(float)
    w[0] = 1.0
    keep = w > 0
    weighted = CalibrationMonitor().update(y, p, sample_weight=w)
    dropped = CalibrationMonitor().update(y[keep], p[keep])
    assert math.isclose(weighted.e_value_, dropped.e_value_, rel_tol=1e-12)
    assert weighted.n_seen_ == keep.sum() and weighted.n_rows_ == 200


def test_multiclass_top_label_and_labels():
    rng = np.random.default_rng(9)
    P = rng.dirichlet(np.ones(3), size=300)
    y = np.array(["a", "b", "c"])[[rng.choice(3, p=row) for row in P]]
    monitor = CalibrationMonitor(labels=["a", "b", "c"])
    for i in range(0, 300, 7):
        monitor.update(y[i:i + 7], P[i:i + 7])
    conf = P.max(axis=1)
    correct = (np.array(["a", "b", "c"])[P.argmax(axis=1)] == y).astype(int)
    binary = CalibrationMonitor().update(correct, conf)
    assert monitor.e_value_ == binary.e_value_
    # without labels, the first batch must show every class, then they are kept
    inferred = CalibrationMonitor().update(["a", "b", "c"], P[:3])
    inferred.update(["c"], P[3:4])
    assert inferred.labels_.tolist() == ["a", "b", "c"]
    with pytest.raises(ValueError, match="labels="):
        CalibrationMonitor().update(["a"], P[:1])
    with pytest.raises(ValueError, match="multiclass='raise'"):
        CalibrationMonitor(multiclass="raise", labels=["a", "b", "c"]).update(
            y[:5], P[:5])


def test_bad_input_and_parameters():
    with pytest.raises(ValueError, match="alpha"):
        CalibrationMonitor(alpha=1.5).update([1], [0.5])
    with pytest.raises(ValueError, match="method"):
        CalibrationMonitor(method="kernel").update([1], [0.5])
    with pytest.raises(ValueError, match="multiclass"):
        CalibrationMonitor(multiclass="classwise").update([1], [0.5])
    with pytest.raises(ValueError, match="y_prob"):
        CalibrationMonitor().update([1, 0], [0.5, 1.5])
    with pytest.raises(ValueError, match="sample_weight"):
        CalibrationMonitor().update([1, 0], [0.5, 0.5], sample_weight=[1, -1])
    with pytest.raises(ValueError, match="inconsistent"):
        CalibrationMonitor().update([1, 0, 1], [0.5, 0.5])
    with pytest.raises(ValueError, match="update"):
        CalibrationMonitor().plot()
    # a failed update leaves the state as it was
    monitor = CalibrationMonitor().update([1], [0.5])
    before = monitor.e_value_
    with pytest.raises(ValueError):
        monitor.update([1, 0], [0.5, np.nan])
    assert monitor.e_value_ == before and monitor.n_rows_ == 1


def test_caller_arrays_untouched():
    y = np.array([1, 0, 1, 1])
    p = np.array([0.9, 0.1, 0.6, 0.7])
    w = np.array([1.0, 2.0, 0.5, 1.0])
    copies = y.copy(), p.copy(), w.copy()
    CalibrationMonitor().update(y, p, sample_weight=w)
    for a, b in zip((y, p, w), copies):
        assert np.array_equal(a, b)


def test_plot():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    rng = np.random.default_rng(10)
    p = rng.uniform(size=2000)
    y = (rng.uniform(size=2000) < np.clip(p + 0.2, 0, 1)).astype(int)
    monitor = CalibrationMonitor()
    for i in range(0, 2000, 200):
        monitor.update(y[i:i + 200], p[i:i + 200])
    display = monitor.plot()
    ax = display.ax_
    assert display.line_ in ax.get_lines()
    assert ax.get_yscale() == "log" and len(ax.get_lines()) == 3


def test_dask_partitions_in_order():
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(11)
    p = rng.uniform(size=900)
    y = (rng.uniform(size=900) < p).astype(int)
    yd, pd = da.from_array(y, chunks=200), da.from_array(p, chunks=200)
    monitor = CalibrationMonitor()
    for yb, pb in zip(yd.to_delayed(), pd.to_delayed()):
        monitor.update(yb.compute(), pb.compute())
    assert monitor.e_value_ == CalibrationMonitor().update(y, p).e_value_
