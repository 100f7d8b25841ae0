"""UC of the top-class utility takes the cutoff error's path (issue 26).

Its fast path (``top_class``: the top-label grouped statistic and the
cutoff core) is checked against the brute-force UC of tests/metrics/reference_multiclass.py
and against the general path of every utility (``worst_intervals``), on
random cases with ties, weights, one row, one-hot rows and one class; and
it must give the top-label cutoff error bit for bit (the general path
differs from it in the last bits: this fails on the old code).
"""

import numpy as np

from skcal import TopClass, TopK, cutoff_calibration_error, utility_calibration_error
from skcal.metrics._multiclass import worst_intervals
from skcal.utilities._engine import Predictions

from reference_multiclass import utility_calibration_bruteforce
from test_utilities import random_labels, random_proba


def _case(rng):
    n = int(rng.choice([1, 2, 5, 30, 200]))
    C = int(rng.integers(3, 7))
    P = random_proba(rng, n, C)
    if rng.random() < 0.2:  # one-hot rows: predictions 0 and 1
        P = np.eye(C)[rng.integers(0, C, n)]
    y = random_labels(rng, P)
    kind = rng.integers(3)
    w = None if kind == 0 else (
        rng.integers(0, 4, n).astype(float) if kind == 1 else rng.exponential(size=n)
    )
    if w is not None and w.sum() == 0:
        w[0] = 1.0
    return y, P, w


def test_top_class_matches_the_reference_and_the_general_path():
    rng = np.random.default_rng(26)
    for _ in range(300):
        y, P, w = _case(rng)
        ww = np.ones(y.shape[0]) if w is None else w
        value, details = utility_calibration_error(
            y, P, "top-class", sample_weight=w, labels=np.arange(P.shape[1]),
            return_details=True,
        )
        expected = utility_calibration_bruteforce(("top-class", None), P, y, ww)
        assert np.isclose(value, expected, rtol=1e-12, atol=1e-15)
        general, lower, upper, sign = worst_intervals([TopClass()], Predictions(P, y), ww)
        assert np.isclose(value, general[0], rtol=1e-12, atol=1e-15)
        # the interval's bias is the value, with the sign reported
        confidence = P.max(axis=1)
        correct = P.argmax(axis=1) == y
        a, b = details["interval"]
        inside = (confidence >= a) & (confidence <= b)
        bias = np.sum((ww * (correct - confidence))[inside]) / ww.sum()
        assert np.isclose(abs(bias), value, rtol=1e-9, atol=1e-12)
        if value > 1e-12:
            assert details["sign"] == np.sign(bias)
        assert details["errors"].tolist() == [value]
        assert [type(u) for u in details["utilities"]] == [TopClass]


def test_top_class_is_the_top_label_cutoff_error_bit_for_bit():
    rng = np.random.default_rng(0)
    for C in (3, 10, 50):
        P = rng.dirichlet(np.ones(C), size=5000)
        y = np.array([rng.choice(C, p=p) for p in P])
        for w in (None, rng.exponential(size=5000)):
            cutoff = cutoff_calibration_error(y, P, sample_weight=w)
            for utility in ("top-class", TopClass(), TopK(1)):
                assert utility_calibration_error(y, P, utility, sample_weight=w) == cutoff
