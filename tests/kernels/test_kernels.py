"""Kernels check their argument shapes at entry and raise instead of reading
or writing out of bounds (a mismatch from a future caller must fail loudly,
also in the release build where Cython bounds checks are off)."""

import numpy as np
import pytest

from skcal._kernels._binning import (
    checked_top_label,
    coarsen,
    scdl_level,
    soft_bin,
    uniform_bin_sums,
)
from skcal._kernels._flow import backtrack, dual_frontiers, smce_value
from skcal._kernels._interval import (
    decision_hull,
    group_sorted,
    group_two_sorted,
    max_abs_interval,
    max_abs_interval_grouped,
    max_abs_interval_rows,
)

MSG = "kernel argument shapes do not match"


def _group_args(n=5):
    p = np.linspace(0, 1, n)
    return [p, np.ones(n), np.ones(n), np.argsort(p), np.empty(n), np.empty(n), np.empty(n)]


def test_group_sorted_accepts_matching_shapes():
    k = group_sorted(*_group_args())
    assert k == 5


@pytest.mark.parametrize("index", [0, 1, 2, 3])
def test_group_sorted_rejects_short_inputs(index):
    args = _group_args()
    args[index] = args[index][:-1].copy()
    with pytest.raises(ValueError, match=MSG):
        group_sorted(*args)


@pytest.mark.parametrize("index", [4, 5, 6])
def test_group_sorted_rejects_short_outputs(index):
    args = _group_args()
    args[index] = args[index][:2].copy()
    with pytest.raises(ValueError, match=MSG):
        group_sorted(*args)


def _rows_args(m=3, n=4):
    v = np.arange(m * n, dtype=float).reshape(m, n)
    return [
        v,
        np.zeros((m, n)),
        np.ones(n),
        np.argsort(v, axis=1),
        np.empty(m),
        np.empty(m),
        np.empty(m),
        np.empty(m, dtype=np.int8),
    ]


def test_max_abs_interval_rows_accepts_matching_shapes():
    args = _rows_args()
    max_abs_interval_rows(*args)
    assert np.all(args[4] == 0.0)


@pytest.mark.parametrize("index", [1, 2, 3, 4, 5, 6, 7])
def test_max_abs_interval_rows_rejects_mismatch(index):
    args = _rows_args()
    bad = args[index]
    args[index] = np.ascontiguousarray(bad[:-1])
    with pytest.raises(ValueError, match=MSG):
        max_abs_interval_rows(*args)


def test_soft_bin_checks_shapes():
    p = np.array([0.0, 0.5, 1.0])
    y = np.array([0, 1, 1], dtype=np.uint8)
    w = np.ones(3)
    bins = np.zeros((3, 2))
    soft_bin(p, y, w, bins)
    np.testing.assert_allclose(bins, [[1.0, 0.0], [1.0, 1.0], [1.0, 1.0]])
    with pytest.raises(ValueError, match=MSG):
        soft_bin(p, y[:2].copy(), w, np.zeros((3, 2)))
    with pytest.raises(ValueError, match=MSG):
        soft_bin(p, y, w[:2].copy(), np.zeros((3, 2)))
    with pytest.raises(ValueError, match=MSG):
        soft_bin(p, y, w, np.zeros((1, 2)))  # m = 0 grid points past the first
    with pytest.raises(ValueError, match=MSG):
        soft_bin(p, y, w, np.zeros((3, 1)))


def test_coarsen_checks_shapes():
    fine = np.arange(10, dtype=float).reshape(5, 2)
    coarse = np.empty((3, 2))
    coarsen(fine, coarse)
    # w_0 = f_0 + f_1 / 2, w_1 = f_2 + (f_1 + f_3) / 2, w_2 = f_4 + f_3 / 2
    np.testing.assert_allclose(coarse[:, 0], [0 + 1, 4 + (2 + 6) / 2, 8 + 3])
    with pytest.raises(ValueError, match=MSG):
        coarsen(fine[:4].copy(), np.empty((3, 2)))
    with pytest.raises(ValueError, match=MSG):
        coarsen(fine, np.empty((4, 2)))
    with pytest.raises(ValueError, match=MSG):
        coarsen(np.empty((1, 2)), np.empty((1, 2)))


def test_scdl_level_checks_shapes():
    bins = np.array([[1.0, 0.0], [0.0, 0.0], [1.0, 1.0]])
    assert scdl_level(bins, np.empty((3, 4))) == 0.0
    with pytest.raises(ValueError, match=MSG):
        scdl_level(bins, np.empty((3, 3)))
    with pytest.raises(ValueError, match=MSG):
        scdl_level(bins, np.empty((2, 4)))
    with pytest.raises(ValueError, match=MSG):
        scdl_level(np.empty((1, 2)), np.empty((3, 3)))


def test_uniform_bin_sums_checks_shapes():
    p = np.array([0.1, 0.6])
    y = np.array([0, 1], dtype=np.uint8)
    w = np.ones(2)
    edges = np.array([0.0, 0.5, 1.0])
    sums = np.zeros((2, 2))
    uniform_bin_sums(p, y, w, edges, sums)
    np.testing.assert_allclose(sums, [[1.0, -0.1], [1.0, 0.4]])
    with pytest.raises(ValueError, match=MSG):
        uniform_bin_sums(p, y[:1].copy(), w, edges, np.zeros((2, 2)))
    with pytest.raises(ValueError, match=MSG):
        uniform_bin_sums(p, y, w[:1].copy(), edges, np.zeros((2, 2)))
    with pytest.raises(ValueError, match=MSG):
        uniform_bin_sums(p, y, w, edges[:2].copy(), np.zeros((2, 2)))
    with pytest.raises(ValueError, match=MSG):
        uniform_bin_sums(p, y, w, edges, np.zeros((0, 2)))


def _flow_args(K=4, witness=True):
    B = np.array([0.5, -0.25, 0.25, 0.0])[:K]
    d = np.full(K - 1, 0.1)
    if witness:
        positions = np.sort(np.concatenate(([0.0], B[:-1])))
        tree, peak = np.zeros(K + 1), np.empty(K)
    else:
        positions = tree = peak = np.empty(0)
    return [B, d, positions, np.empty((2, 2 * K)), tree, np.empty((2, K - 1)), peak]


@pytest.mark.parametrize("witness", [False, True])
def test_flow_kernels_accept_matching_shapes(witness):
    args = _flow_args(witness=witness)
    dual_frontiers(*args)
    B, d, front, x = args[0], args[1], args[5], args[6]
    assert np.isfinite(backtrack(B, d, front, x))


@pytest.mark.parametrize("index", [1, 2, 3, 4, 5, 6])
def test_dual_frontiers_rejects_mismatch(index):
    args = _flow_args()
    bad = args[index]
    args[index] = np.ascontiguousarray(bad[..., :-1]) if bad.ndim == 2 else bad[:-1].copy()
    with pytest.raises(ValueError, match=MSG):
        dual_frontiers(*args)


def test_flow_kernels_reject_empty_B():
    empty = np.empty(0)
    with pytest.raises(ValueError, match=MSG):
        dual_frontiers(empty, empty, empty, np.empty((2, 0)), empty, np.empty((2, 0)), empty)
    with pytest.raises(ValueError, match=MSG):
        backtrack(empty, empty, np.empty((2, 0)), empty)


def test_backtrack_rejects_mismatch():
    B, d = np.array([0.5, 0.0]), np.array([0.1])
    with pytest.raises(ValueError, match=MSG):
        backtrack(B, np.empty(0), np.zeros((2, 1)), np.empty(0))
    with pytest.raises(ValueError, match=MSG):
        backtrack(B, d, np.zeros((2, 0)), np.empty(0))
    with pytest.raises(ValueError, match=MSG):
        backtrack(B, d, np.zeros((2, 1)), np.empty(1))


def _grouped_args(K=4):
    values = np.linspace(0.1, 0.9, K)
    return [values, np.ones(K), np.full(K, 0.5), float(K)]


def test_smce_value_checks_shapes():
    values, weights, positives, total = _grouped_args()
    assert np.isfinite(smce_value(values, weights, positives, total, np.empty(8)))
    with pytest.raises(ValueError, match=MSG):
        smce_value(values, weights, positives, total, np.empty(7))
    with pytest.raises(ValueError, match=MSG):
        smce_value(values, weights[:3].copy(), positives, total, np.empty(8))
    with pytest.raises(ValueError, match=MSG):
        smce_value(values, weights, positives[:3].copy(), total, np.empty(8))
    empty = np.empty(0)
    with pytest.raises(ValueError, match=MSG):
        smce_value(empty, empty, empty, 1.0, empty)


def test_max_abs_interval_grouped_checks_shapes():
    values, weights, positives, total = _grouped_args()
    max_abs_interval_grouped(values, weights, positives, total)
    with pytest.raises(ValueError, match=MSG):
        max_abs_interval_grouped(values, weights[:3].copy(), positives, total)
    with pytest.raises(ValueError, match=MSG):
        max_abs_interval_grouped(values, weights, positives[:3].copy(), total)


def test_group_two_sorted_checks_shapes():
    p0, p1 = np.array([0.1, 0.2]), np.array([0.2])
    out = [np.empty(3), np.empty(3), np.empty(3)]
    assert group_two_sorted(p0, p1, *out) == 2
    for index in range(3):
        short = [np.empty(3), np.empty(3), np.empty(3)]
        short[index] = np.empty(2)
        with pytest.raises(ValueError, match=MSG):
            group_two_sorted(p0, p1, *short)


def _two_class_cases(rng, count):
    """Unit-weight 0/1 data: ties, ends, -0.0, n = 1, one class, empty sides."""
    for i in range(count):
        n = int(rng.integers(1, 40)) if i % 10 else 1
        grid = [rng.random(n), rng.integers(0, 5, n) / 4.0, np.full(n, rng.random())][i % 3]
        p = np.where(rng.random(n) < 0.1, -0.0, grid)
        y = [rng.integers(0, 2, n), np.zeros(n, int), np.ones(n, int)][(i // 3) % 3]
        yield y.astype(float), p


def test_group_two_sorted_equals_group_sorted_bit_for_bit():
    rng = np.random.default_rng(7)
    for y, p in _two_class_cases(rng, 400):
        n = p.shape[0]
        slow = [np.empty(n), np.empty(n), np.empty(n)]
        k = group_sorted(p, y, np.ones(n), np.argsort(p, kind="stable"), *slow)
        fast = [np.empty(n), np.empty(n), np.empty(n)]
        k2 = group_two_sorted(np.sort(p[y == 0]), np.sort(p[y == 1]), *fast)
        assert k2 == k
        for a, b in zip(slow, fast):
            # bit for bit, the sign of zero included
            assert a[:k].tobytes() == b[:k].tobytes(), (y, p)
        assert not np.signbit(fast[0][:k]).any()


def test_smce_value_matches_the_frontier_backtrack():
    # the forward-pass value against the frontier-and-backtrack value of the
    # same dual (its own test compares that one with the LP of reference_ldtc.py)
    rng = np.random.default_rng(8)
    for i in range(400):
        n = int(rng.integers(1, 50))
        values = np.unique(np.round(rng.random(n), 2 if i % 2 else 6))
        K = values.shape[0]
        weights = rng.random(K) + (i % 3 == 0)
        positives = weights * rng.choice([0.0, 1.0, rng.random()], K)
        total = float(weights.sum())
        B = np.cumsum((positives - values * weights) / total)
        d = np.diff(values)
        front = np.empty((2, max(K - 1, 0)))
        empty = np.empty(0)
        dual_frontiers(B, d, empty, np.empty((2, 2 * K)), empty, front, empty)
        expected = backtrack(B, d, front, empty)
        got = smce_value(values, weights, positives, total, np.empty(2 * K))
        assert got == pytest.approx(expected, abs=1e-14)


def test_max_abs_interval_grouped_equals_it_on_residuals():
    rng = np.random.default_rng(9)
    for _i in range(300):
        K = int(rng.integers(1, 30))
        values = np.sort(rng.random(K))
        weights = rng.random(K)
        positives = weights * (rng.random(K) < 0.5)
        total = float(weights.sum())
        residuals = (positives - values * weights) / total
        assert max_abs_interval_grouped(values, weights, positives, total) == (
            max_abs_interval(residuals)
        )


def test_checked_top_label_matches_numpy():
    # argmax (first maximum), row sums and the range check, on random
    # matrices with ties, every width mod 4, and entries outside [0, 1]
    rng = np.random.default_rng(10)
    for i in range(400):
        n, K = int(rng.integers(1, 8)), int(rng.integers(1, 14))
        P = rng.integers(0, 4, (n, K)) / 4.0 if i % 2 else rng.random((n, K))
        expect_ok = True
        if i % 5 == 0:
            P[rng.integers(n), rng.integers(K)] = rng.choice(
                [np.nan, np.inf, -np.inf, -0.25, 1.5, -0.0]
            )
            expect_ok = bool(np.all((P >= 0) & (P <= 1)))
        conf, pred, sums = np.empty(n), np.empty(n, dtype=np.intp), np.empty(n)
        ok = checked_top_label(P, conf, pred, sums)
        assert ok == expect_ok, P
        if ok:
            np.testing.assert_array_equal(pred, np.argmax(P, axis=1))
            np.testing.assert_array_equal(conf, P.max(axis=1))
            np.testing.assert_allclose(sums, P.sum(axis=1), rtol=1e-15, atol=1e-15)


def test_checked_top_label_checks_shapes():
    P = np.full((3, 4), 0.25)
    with pytest.raises(ValueError, match=MSG):
        checked_top_label(P, np.empty(2), np.empty(3, dtype=np.intp), np.empty(3))
    with pytest.raises(ValueError, match=MSG):
        checked_top_label(P, np.empty(3), np.empty(2, dtype=np.intp), np.empty(3))
    with pytest.raises(ValueError, match=MSG):
        checked_top_label(P, np.empty(3), np.empty(3, dtype=np.intp), np.empty(2))


def test_decision_hull_checks_shapes():
    values, weights, positives, total = _grouped_args()
    hull_x, hull_h, _, _ = decision_hull(values, weights, positives, total)
    assert hull_x[0] == 0.0 and hull_x[-1] == 1.0 and hull_h.shape == hull_x.shape
    for index in range(3):
        args = [values, weights, positives]
        args[index] = args[index][:3].copy()
        with pytest.raises(ValueError, match=MSG):
            decision_hull(*args, total)


def test_index_arguments_are_checked_at_entry():
    # entries out of range are refused before any is read (one check over
    # the array, not one per row)
    from skcal._kernels._flow import smce_null_bracket_rows
    from skcal._kernels._members import rank_of_label, top_k_mass_bound

    P = np.full((3, 2), 0.5)
    for bad in (-1, 2):
        y = np.array([0, bad, 1], dtype=np.intp)
        with pytest.raises(ValueError, match=r"y must be in \[0, n_classes\)"):
            rank_of_label(P, y, np.empty(3, dtype=np.intp))
    out = np.empty(3, dtype=np.intp)
    rank_of_label(P, np.array([0, 1, 1], dtype=np.intp), out)
    assert out.tolist() == [1, 2, 2]
    for bad in (0, 3):
        rank = np.array([1, bad, 2], dtype=np.intp)
        with pytest.raises(ValueError, match=r"rank must be in \[1, n_classes\]"):
            top_k_mass_bound(P, rank, np.empty(0), np.empty(3))
    top_k_mass_bound(P, np.array([1, 2, 2], dtype=np.intp), np.empty(0), np.empty(3))
    p = np.array([0.2, 0.5, 0.9])
    for bad in (-1, 2):
        group = np.array([0, bad, 1], dtype=np.intp)
        with pytest.raises(ValueError, match="group out of range"):
            smce_null_bracket_rows(p, np.ones(3), np.zeros(3), group,
                                   np.random.PCG64(0), np.empty(2))
    smce_null_bracket_rows(p, np.ones(3), np.zeros(3), np.array([0, 1, 1], dtype=np.intp),
                           np.random.PCG64(0), np.empty(2))
