import numpy as np
import pytest

from skcal import cutoff_calibration_error

from cases import over_cases, random_case, random_cases, repeat_rows
from reference_cutoff import cutoff_bruteforce, residuals


@over_cases("case", random_cases(0, 300, max_n=40))
def test_matches_bruteforce(case):
    y, p, w = case
    value, details = cutoff_calibration_error(
        y, p, sample_weight=w, return_details=True
    )
    (a, b), sign = details.interval, details.sign
    assert value == pytest.approx(cutoff_bruteforce(y, p, w), abs=1e-12)
    # the returned interval attains the value, with the stated sign
    s = residuals(y, p, w)[(p >= a) & (p <= b)].sum()
    assert abs(s) == pytest.approx(value, abs=1e-12)
    if value > 0:
        assert np.sign(s) == sign
    else:
        assert sign == 0


def test_point_mass():
    # all predictions equal: the only intervals are that point, so the value
    # is the absolute bias |E[y] - p|
    y = np.array([1, 1, 0, 1.0])
    assert cutoff_calibration_error(y, np.full(4, 0.5)) == pytest.approx(0.25)


def test_integer_weights_equal_repetition():
    rng = np.random.default_rng(1)
    for _ in range(50):
        y, p, _ = random_case(rng, int(rng.integers(1, 30)))
        w = rng.integers(0, 4, y.shape[0]).astype(float)
        w[0] += 1
        yr, pr = repeat_rows(y, p, w)
        assert cutoff_calibration_error(y, p, sample_weight=w) == pytest.approx(
            cutoff_calibration_error(yr, pr), abs=1e-12
        )


def test_invariances():
    rng = np.random.default_rng(2)
    y, p, w = random_case(rng, 50)
    v = cutoff_calibration_error(y, p, sample_weight=w)
    perm = rng.permutation(50)
    assert cutoff_calibration_error(y[perm], p[perm], sample_weight=w[perm]) == (
        pytest.approx(v, abs=1e-14)
    )
    assert cutoff_calibration_error(y, p, sample_weight=7.5 * w) == pytest.approx(
        v, abs=1e-14
    )
    assert 0.0 <= v <= 1.0


def test_calibrated_is_zero_and_extremes_are_one():
    # outcomes exactly match predictions in 0/1 -> zero; fully wrong -> one
    assert cutoff_calibration_error([0, 1], [0.0, 1.0]) == 0.0
    assert cutoff_calibration_error([1, 1], [0.0, 0.0]) == 1.0
    # weights making q(v) = v at every distinct prediction
    y = np.array([1, 0, 1, 0.0])
    p = np.array([0.25, 0.25, 0.5, 0.5])
    w = np.array([1, 3, 1, 1.0])
    assert cutoff_calibration_error(y, p, sample_weight=w) == pytest.approx(0, abs=1e-15)


def test_multiclass_top_label_matches_explicit():
    rng = np.random.default_rng(3)
    P = rng.dirichlet(np.ones(4), size=80)
    labels = rng.integers(0, 4, 80)
    conf = P.max(axis=1)
    correct = (P.argmax(axis=1) == labels).astype(float)
    assert cutoff_calibration_error(labels, P) == pytest.approx(
        cutoff_calibration_error(correct, conf), abs=1e-15
    )


def test_does_not_mutate_inputs():
    y = np.array([0, 1, 1, 0])
    p = np.array([0.3, 0.1, 0.9, 0.5])
    w = np.array([1.0, 2.0, 1.0, 1.0])
    copies = y.copy(), p.copy(), w.copy()
    cutoff_calibration_error(y, p, sample_weight=w)
    for a, b in zip((y, p, w), copies):
        np.testing.assert_array_equal(a, b)
