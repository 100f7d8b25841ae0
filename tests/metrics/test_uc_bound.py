"""Branch and bound for the largest UC of a family (issue 26, item 5).

``utility_calibration_error(..., return_details=False)`` computes exactly
only the 0/1 members whose upper bound (``cutoff_bounds``: one pass into
fixed value buckets, no sort) reaches the best lower bound or exact value.
Checked here: the bucket map is non-decreasing; the kernel's bounds against
their slow twin (tests/metrics/reference_uc_bound.py) and around the exact
error (the brute force of tests/metrics/reference_cutoff.py), values above
1 included; and the pruned path against the full one on many random cases
(ties, weights with zeros, n = 1, one-hot rows, one class, C = 2, 3, 50,
float32 input, general utilities in the family): the same value, and the
same worst member, interval and sign, bit for bit. Also: the linear bucket
map against its twin, and the bucketed row sort (``sort_rows``) against
``np.sort``, alone and inside the measure at 130 and 300 classes.
"""

import numpy as np

from skcal import (
    ClassWise,
    LinearFamily,
    TopClass,
    TopK,
    UtilityFamily,
    cutoff_calibration_error,
    utility_calibration_error,
)
from skcal._kernels._members import bucket_of, cutoff_bounds, sort_rows, top_k_mass_bound
from skcal.metrics._multiclass import worst_intervals
from skcal.metrics._uc_binary import _sorted_columns, _top_columns
from skcal.recalibration._patch_ops import audit_family
from skcal.utilities._engine import Predictions

from reference_cutoff import cutoff_bruteforce
from reference_uc_bound import (
    bucket,
    cutoff_bounds_slow,
    linear_bucket,
    top_k_mass_bound_slow,
)
from test_multiclass import random_weights
from test_utilities import random_labels, random_proba


def _values(rng, n):
    kind = rng.integers(5)
    if kind == 0:  # ties on a dyadic grid
        return rng.integers(0, 9, n) / 8.0
    if kind == 1:  # near 1, some just above (a top-K sum rounded up)
        return 1.0 - rng.integers(-3, 40, n) * 2.0**-52
    if kind == 2:  # many binades, tiny values and zeros
        v = 2.0 ** -rng.uniform(0, 60, n)
        v[rng.random(n) < 0.2] = 0.0
        return v
    if kind == 3:
        return np.minimum(rng.random(n) * 1.2, 1.3)
    return rng.random(n)


def test_bucket_map_is_non_decreasing_and_matches_its_twin():
    rng = np.random.default_rng(0)
    v = np.sort(np.concatenate([
        _values(rng, 400) for _ in range(20)
    ] + [np.array([0.0, 2.0**-1074, 2.0**-34, 2.0**-33, 0.5 - 2.0**-54, 0.5, 1.0, 1.5, 3.0])]))
    out = np.empty(v.shape[0], dtype=np.intp)
    bucket_of(v, out)
    assert np.all(np.diff(out) >= 0)
    assert out.min() >= 0 and out.max() < 4096
    assert out.tolist() == [bucket(x) for x in v]
    # the linear map, over all values, part of them, or a huge scale (inf products)
    for origin, scale in [(0.0, 4096.0 / 3.0), (0.25, 4096.0 / 0.5), (0.999, 1e9),
                          (0.0, 1e308), (0.5, 1.0)]:
        bucket_of(v, out, origin, scale)
        assert np.all(np.diff(out) >= 0)
        assert out.min() >= 0 and out.max() < 4096
        assert out.tolist() == [linear_bucket(x, origin, scale) for x in v]
    bucket_of(np.array([-0.0, 0.0]), out[:2])
    assert out[0] == out[1] == 0


def test_bounds_against_twin_and_exact_error():
    rng = np.random.default_rng(1)
    for _ in range(300):
        n = int(rng.choice([1, 2, 3, 10, 60]))
        v = _values(rng, n)
        event = (rng.random(n) < rng.random()).astype(np.intp)
        w = random_weights(rng, n)
        unit = rng.random() < 0.4
        if unit:
            w = np.ones(n)
        key = np.where(event == 1, 7, rng.integers(0, 7, n)).astype(np.intp)
        # the binade map, then linear maps: over [min v, max v] as the caller
        # builds them, over part of it (values clamped into the end buckets),
        # and coarse enough to put many values in one bucket
        span = float(v.max() - v.min())
        maps = [(0.0, 0.0), (float(v.min()), 4096.0 / span if span > 0 else 1.0),
                (float(np.median(v)), float(rng.uniform(1.0, 4096.0))), (0.0, 3.0)]
        for origin, scale in maps:
            lower, upper, absolute = cutoff_bounds(
                v, key, 7, 7, np.empty(0) if unit else w, origin, scale
            )
            slow = cutoff_bounds_slow(v, event, w, origin, scale)
            np.testing.assert_allclose([lower, upper, absolute], slow, rtol=1e-12, atol=1e-12)
            # the bounds enclose the exact error (times the total weight)
            exact = cutoff_bruteforce(event, v, w) * w.sum()
            slack = 1e-12 * (1.0 + absolute)
            assert lower <= exact + slack
            assert exact <= upper + slack
        # a range key: events are lo <= key <= hi
        lo, hi = sorted(rng.integers(0, 8, 2))
        e2 = ((key >= lo) & (key <= hi)).astype(float)
        np.testing.assert_allclose(
            cutoff_bounds(v, key, lo, hi, w), cutoff_bounds_slow(v, e2, w), rtol=1e-12, atol=1e-12
        )


def _case(rng):
    n = int(rng.choice([1, 2, 5, 30, 200, 600]))
    C = int(rng.choice([2, 3, 4, 7, 50]))
    kind = rng.integers(4)
    if kind == 3:  # calibrated flat rows: every member's error is noise of one size
        n, C = int(rng.choice([300, 1500])), int(rng.choice([3, 20, 50]))
        P = rng.dirichlet(np.ones(C), size=n)
        y = (np.cumsum(P, axis=1) < rng.random(n)[:, None]).sum(axis=1).clip(0, C - 1)
        return y, P, (np.ones(n) if rng.random() < 0.5 else random_weights(rng, n))
    if kind == 0:
        P = random_proba(rng, n, C)  # ties, one-hot rows
    else:  # sparse rows like a many-class model's; over-confident or not
        P = rng.dirichlet(np.full(C, float(rng.choice([0.05, 0.3, 1.0]))), size=n)
    if kind == 2:  # labels from a sharper (or flatter) truth: miscalibrated
        Q = P ** rng.choice([0.5, 1.5, 3.0])
        Q /= Q.sum(axis=1, keepdims=True)
        y = np.array([rng.choice(C, p=q) for q in Q])
    else:
        y = random_labels(rng, P)
    w = random_weights(rng, n)
    if rng.random() < 0.2:
        P = P.astype(np.float32)
    return y, P, w


def _family(rng, C):
    kind = rng.integers(4)
    if kind == 0:
        return "comb"
    if kind == 1:
        return rng.choice(["class-wise", "top-k"])
    pool = [TopClass()] + [ClassWise(c) for c in range(C)] + [TopK(k) for k in range(1, C + 1)]
    pick = rng.permutation(len(pool))[: int(rng.integers(1, len(pool) + 1))]
    utilities = [pool[i] for i in pick]
    if kind == 3:  # with members of the general path
        linear = LinearFamily(C).sample(int(rng.integers(1, 4)), int(rng.integers(99)))
        utilities += list(linear.members(C))
        utilities = [utilities[i] for i in rng.permutation(len(utilities))]
    return UtilityFamily(utilities)


def test_pruned_maximum_equals_the_full_computation():
    rng = np.random.default_rng(2026)
    evaluated = []
    for _ in range(300):
        y, P, w = _case(rng)
        C = P.shape[1]
        family = _family(rng, C)
        labels = np.arange(C)
        full, details = utility_calibration_error(
            y, P, family, sample_weight=w, labels=labels, return_details=True
        )
        assert utility_calibration_error(y, P, family, sample_weight=w, labels=labels) == full
        # the arrays: the same worst member (the first on ties), interval and sign
        utilities = details["utilities"]
        data = Predictions(np.asarray(P, dtype=np.float64), y)
        w64 = np.asarray(w, dtype=np.float64)
        everything = worst_intervals(utilities, data, w64)
        pruned = worst_intervals(utilities, data, w64, maximum_only=True)
        i = int(np.argmax(everything[0]))
        assert int(np.argmax(pruned[0])) == i
        assert [a[i] for a in pruned] == [a[i] for a in everything]
        # members computed are computed exactly as before; the others are below the maximum
        done = np.isfinite(pruned[0])
        for a, b in zip(pruned, everything):
            assert np.array_equal(a[done], b[done])
        assert np.all(everything[0][~done] < full)
        assert np.all(pruned[0][~done] == -np.inf)
        evaluated.append(done.mean())
        # the patching audit reads the worst member only: the same
        value, worst = audit_family(utilities, data.P, data.y, w64)
        assert value == full
        assert worst["utility"] is details["utility"]
        assert worst["interval"] == details["interval"] and worst["sign"] == details["sign"]
    # the bounds rule out members (else this tests nothing)
    assert np.mean(evaluated) < 0.8


def _rows(rng, n, C):
    kind = rng.integers(4)
    if kind == 0:
        return random_proba(rng, n, C)  # ties, one-hot rows
    P = rng.dirichlet(np.full(C, float(rng.choice([0.02, 0.3, 1.0]))), size=n)
    if kind == 2:  # rows summing to 1 within float32's rounding
        P = P.astype(np.float32).astype(np.float64)
    if kind == 3:  # zeros and subnormal entries
        keep = P.argmax(axis=1)
        P[rng.random(P.shape) < 0.2] = 0.0
        P[rng.random(P.shape) < 0.05] = 2.0**-1070
        P[np.arange(n), keep] += 0.5
        P /= P.sum(axis=1, keepdims=True)
    return P


def test_top_columns_equal_whole_row_sorts():
    rng = np.random.default_rng(3)
    for _ in range(200):
        n = int(rng.choice([1, 2, 7, 300, 700]))
        C = int(rng.choice([2, 3, 9, 40, 120, 300]))
        P = _rows(rng, n, C)
        m = int(rng.integers(1, C + 1))
        expected = -np.sort(-P, axis=1)[:, :m].T
        assert np.array_equal(_top_columns(P, m), expected)
        assert np.array_equal(_sorted_columns(P, m), expected)


def test_top_k_mass_bound_against_twin_and_the_sums():
    rng = np.random.default_rng(4)
    for _ in range(150):
        n = int(rng.choice([1, 2, 5, 20]))
        C = int(rng.choice([2, 3, 6, 30]))
        P = _rows(rng, n, C)
        y = random_labels(rng, P)
        w = random_weights(rng, n)
        unit = rng.random() < 0.4
        if unit:
            w = np.ones(n)
        rank = np.array([1 + np.sum(p > p[c]) + np.sum(p[:c] == p[c]) for p, c in zip(P, y)])
        out = np.empty(C + 1)
        top_k_mass_bound(P, rank.astype(np.intp), np.empty(0) if unit else w, out)
        # the kernel adds steps through a difference array: rounding of the total's size
        np.testing.assert_allclose(out[1:], top_k_mass_bound_slow(P, rank, w)[1:],
                                   rtol=1e-9, atol=1e-13 * w.sum())
        # at least sum_i w_i |e_iK - v_iK|, v the running sum of the sorted rows
        v = np.cumsum(-np.sort(-P, axis=1), axis=1)
        for K in range(1, C + 1):
            exact = np.sum(w * np.abs((rank <= K) - v[:, K - 1]))
            assert exact <= out[K]


def test_sort_rows_equals_np_sort():
    """The bucketed row sort against ``np.sort`` on rows of every shape it meets.

    Flat and peaked Dirichlet rows, ties, zeros, subnormals, values just
    above 1, a row of zeros; rows whose entries share their top bits
    (a narrow band: the insertion budget runs out and the row is flagged),
    and rows with a negative or infinite entry (flagged, left alone).
    """
    rng = np.random.default_rng(5)
    flagged = 0
    for _ in range(200):
        rows = int(rng.choice([1, 2, 9, 40]))
        C = int(rng.choice([1, 2, 3, 17, 200, 1000]))
        P = _rows(rng, rows, C)
        kind = rng.integers(6)
        if kind == 0:  # a band: many entries alike in their top bits, not equal
            P = 0.5 + rng.integers(0, 2**20, P.shape) * 2.0**-50
        elif kind == 1:
            P[0] = 0.0
            P[:, 0] = 1.0 + 2.0**-52
        elif kind == 2 and C > 1:  # entries the kernel leaves to the caller
            P[0, int(rng.integers(C))] = rng.choice([-0.5, np.inf])
        lo = int(rng.integers(0, 3))
        P = np.vstack([rng.random((lo, C)), P])
        out = np.full((rows, C), np.nan)
        failed = np.full(rows, 7, dtype=np.uint8)
        count = sort_rows(P, lo, out, failed)
        assert count == int(np.sum(failed == 1)) and set(failed.tolist()) <= {0, 1}
        done = failed == 0
        assert np.array_equal(out[done], -np.sort(-P[lo:][done], axis=1))
        if kind == 2 and C > 1:
            assert failed[0] == 1
        flagged += count
    assert flagged > 0  # the budget was reached somewhere


def test_wide_rows_sorted_by_sort_rows_give_the_cutoff_numbers():
    """Rows of >= 128 classes, whose whole-row sort is ``sort_rows``: each top-K
    member's error is ``cutoff_calibration_error`` of its binary data (``v`` from
    ``np.sort``) bit for bit, and the pruned maximum is the full one."""
    rng = np.random.default_rng(6)
    for _ in range(8):
        n, C = int(rng.choice([1, 60, 200])), int(rng.choice([130, 300]))
        P = _rows(rng, n, C)
        y = random_labels(rng, P)
        w = np.ones(n) if rng.random() < 0.5 else random_weights(rng, n)
        labels = np.arange(C)
        full, details = utility_calibration_error(
            y, P, "top-k", sample_weight=w, labels=labels, return_details=True
        )
        for u, e in zip(details["utilities"], details["errors"]):
            v, realised = u.evaluate(P, y)
            if v.max() <= 1.0:  # a top-K sum may round above 1
                assert e == cutoff_calibration_error(realised, v, sample_weight=w)
        for family in ("top-k", "comb"):
            every = utility_calibration_error(
                y, P, family, sample_weight=w, labels=labels, return_details=True
            )[0]
            assert utility_calibration_error(
                y, P, family, sample_weight=w, labels=labels
            ) == every
