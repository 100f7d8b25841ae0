"""The 0/1-utility members of a family on the cutoff path (issue 26, item 5).

Class-wise, top-K and top-class members are measured as the cutoff
calibration error of ``(v_u(p), event)`` with the grouped statistic shared
with that measure (``skcal.metrics._uc_binary``). Checked on many random
cases (ties, weights with zeros, one row, one-hot rows so p in {0, 1}, one
class observed) against the brute-force UC of tests/metrics/reference_multiclass.py, against
the general path of every utility (``_general_intervals``), and bit for
bit against ``cutoff_calibration_error`` of the member's binary data (the
general path differs from it in the last bits: that part fails on the old
code, where the family was measured by the general path).
"""

import numpy as np
import pytest

import skcal._grouped
from skcal import (
    ClassWise,
    TopClass,
    TopK,
    UtilityFamily,
    cutoff_calibration_error,
    utility_calibration_error,
)
from skcal._grouped import group
from skcal._kernels._interval import (
    cutoff_label_keys,
    label_keys,
    label_keys32,
    max_abs_interval_grouped,
)
from skcal._kernels._members import cutoff_two_sorted, cutoff_unit
from skcal.metrics._multiclass import _general_intervals
from skcal.utilities._engine import Predictions

from reference_multiclass import utility_calibration_bruteforce
from test_multiclass import random_weights
from test_utilities import random_labels, random_proba


def _case(rng):
    n = int(rng.choice([1, 2, 3, 7, 40, 150]))
    C = int(rng.integers(2, 7))
    P = random_proba(rng, n, C)
    y = random_labels(rng, P)
    w = random_weights(rng, n)
    if rng.random() < 0.2:
        w = np.full(n, 2.5)  # equal weights that are not 1
    return y, P, w


def _members(rng, C):
    pool = [TopClass()] + [ClassWise(c) for c in range(C)] + [TopK(k) for k in range(1, C + 1)]
    pick = rng.permutation(len(pool))[: int(rng.integers(1, len(pool) + 1))]
    return [pool[i] for i in pick]


def _spec(u):
    if type(u) is TopClass:
        return ("top-class", None)
    if type(u) is ClassWise:
        return ("class-wise", u.c)
    return ("top-k", u.k)


@pytest.mark.parametrize("keys", [False, True])
def test_members_match_reference_general_path_and_cutoff(keys, monkeypatch):
    # both ways of sorting unit-weight members (and of grouping in the
    # cutoff error compared with): the radix sort, and one np.sort of label
    # keys with the fused scan (cutoff_label_keys), where numpy has AVX-512
    monkeypatch.setattr(skcal._grouped, "_KEY_SORT", keys)
    rng = np.random.default_rng(2026)
    for _ in range(250):
        y, P, w = _case(rng)
        C = P.shape[1]
        utilities = _members(rng, C)
        labels = np.arange(C)
        value, details = utility_calibration_error(
            y, P, UtilityFamily(utilities), sample_weight=w, labels=labels,
            return_details=True,
        )
        errors = details["errors"]
        general = _general_intervals(utilities, Predictions(P, y), w)[0]
        np.testing.assert_allclose(errors, general, rtol=1e-12, atol=1e-15)
        for u, e in zip(utilities, errors):
            expected = utility_calibration_bruteforce(_spec(u), P, y, w)
            assert np.isclose(e, expected, rtol=1e-12, atol=1e-15)
            # the member's binary data, measured by the cutoff error: bit for bit
            v, realised = u.evaluate(P, y)
            if v.max() <= 1.0:  # a top-K sum may round above 1
                assert e == cutoff_calibration_error(realised, v, sample_weight=w)
        assert value == errors.max()
        # the reported interval attains the value with the reported sign
        v, realised = details["utility"].evaluate(P, y)
        a, b = details["interval"]
        inside = (v >= a) & (v <= b)
        bias = np.sum((w * (realised - v))[inside]) / w.sum()
        assert np.isclose(abs(bias), value, rtol=1e-9, atol=1e-12)
        if value > 1e-12:
            assert details["sign"] == np.sign(bias)


def test_top_class_in_a_family_equals_top_class_alone():
    rng = np.random.default_rng(7)
    for _ in range(100):
        y, P, w = _case(rng)
        labels = np.arange(P.shape[1])
        alone = utility_calibration_error(y, P, "top-class", sample_weight=w, labels=labels)
        _, details = utility_calibration_error(
            y, P, "comb", sample_weight=w, labels=labels, return_details=True
        )
        top1 = [e for u, e in zip(details["utilities"], details["errors"])
                if type(u) is TopK and u.k == 1]
        assert top1 == [alone]


def _brute_runs(p0, p1):
    """Cutoff of unit-weight rows from the definition: every interval of values."""
    v = np.concatenate([p0, p1]) + 0.0
    event = np.r_[np.zeros(len(p0)), np.ones(len(p1))]
    levels = np.unique(v)
    best = 0.0
    for i in range(len(levels)):
        for j in range(i, len(levels)):
            inside = (v >= levels[i]) & (v <= levels[j])
            best = max(best, abs(np.sum(event[inside] - v[inside]) / len(v)))
    return best


def test_kernels_against_the_definition():
    rng = np.random.default_rng(11)
    for _ in range(300):
        n = int(rng.integers(1, 12))
        v = rng.integers(0, 5, n) / 4.0 if rng.random() < 0.6 else rng.random(n)
        if rng.random() < 0.2:
            v[rng.random(n) < 0.5] = -0.0
        event = (rng.random(n) < rng.random()).astype(np.uint8)
        work = np.empty(2 * n, dtype=np.uint64)
        radix = cutoff_unit(v, event, work)
        runs = cutoff_two_sorted(np.sort(v[event == 0]), np.sort(v[event == 1]))
        assert radix == runs
        best = _brute_runs(v[event == 0], v[event == 1])
        assert np.isclose(radix[0], best, rtol=1e-12, atol=1e-15)
        # the reported interval attains the value, with the reported sign
        inside = (v >= radix[1]) & (v <= radix[2])
        bias = np.sum(event[inside] - v[inside]) / n
        assert np.isclose(bias, radix[3] * radix[0], rtol=1e-9, atol=1e-12)
    # outside [0, 2): no answer, the caller sorts by value
    assert cutoff_unit(np.array([2.0]), np.array([1], np.uint8), np.empty(2, np.uint64)) is None


def test_cutoff_of_label_keys_is_the_grouped_scan():
    # the fused scan of sorted label keys against max_abs_interval_grouped on
    # the statistic they group to: value, interval ends and sign bit for
    # bit (ties, n = 1, one class, values 0 and 1 and above 1, no bias)
    rng = np.random.default_rng(44)
    for i in range(400):
        n = int(rng.integers(1, 60)) if i > 2 else i + 1
        kind = i % 5
        if kind == 0:
            v = rng.random(n)
        elif kind == 1:
            v = rng.integers(0, 5, n) / 4.0
        elif kind == 2:
            v = rng.choice([0.0, -0.0, 1.0, 1.5, 0.5], n)
        elif kind == 3:
            v = np.full(n, 0.5)
        else:
            v = rng.random(n).astype(np.float32).astype(np.float64)
        event = (rng.random(n) < 0.5).astype(np.uint8)
        if i % 7 == 0:
            event[:] = event[0]
        if i % 11 == 0:  # no bias at all: every interval sums to 0
            v, event = np.tile([0.0, 1.0], n)[:n] * 0.0, np.zeros(n, np.uint8)
        keys = np.empty(n, np.uint64)
        assert label_keys(v, event, keys)
        keys.sort()
        got = cutoff_label_keys(keys, float(n))
        g = group(event, v, np.ones(n))
        value, lo, hi, sign = max_abs_interval_grouped(g.values, g.weights, g.positives, g.total)
        assert got == (value, g.values[lo], g.values[hi], sign)
        # float32 values also have 32-bit keys (label_keys32): the same scan
        keys32 = np.empty(n, np.uint32)
        assert label_keys32(v, event, keys32) == bool(
            np.all(v.astype(np.float32).astype(np.float64) == v)
        )
        if kind:
            keys32.sort()
            assert cutoff_label_keys(keys32, float(n)) == got
