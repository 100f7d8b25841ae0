"""The grouped sufficient statistic and the measures computed from it."""

import pickle

import numpy as np
import pytest
from sklearn.utils import Bunch

import skcal._grouped
from skcal import (
    binned_ece,
    calibration_decision_loss,
    calibration_fixed_decision_loss,
    cutoff_calibration_error,
    lower_distance_to_calibration,
    maximum_swap_regret,
    smooth_calibration_error,
    soft_binned_cdl,
)
from skcal._grouped import GroupedStatistic, binary_statistic, group
from skcal._kernels._interval import (
    argsort_rows,
    group_label_keys,
    group_label_keys32,
    group_prefix_keys,
    group_radix,
    group_sorted,
    index_bits,
    label_keys,
    label_keys32,
    prefix_keys,
)

from cases import random_cases
from reference_grouped import grouped_reference

CASES = random_cases(31, 300, max_n=80)


def test_group_matches_reference():
    for y, p, w in CASES:
        g = group(y, p, w)
        values, weights, positives = grouped_reference(y, p, w)
        np.testing.assert_array_equal(g.values, values)
        np.testing.assert_allclose(g.weights, weights, rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(g.positives, positives, rtol=1e-13, atol=1e-15)
        assert g.total == pytest.approx(w.sum(), rel=1e-13)
        assert np.all(np.diff(g.values) > 0)


@pytest.mark.parametrize("keys", [False, True])
def test_unlabelled_unit_weights_group_exactly(keys, monkeypatch):
    # no sample_weight and 0/1 labels: the radix sort, or (where numpy sorts
    # with AVX-512) one np.sort of keys carrying the outcome; both must give
    # the reference's statistic exactly (the counts are integers)
    monkeypatch.setattr(skcal._grouped, "_KEY_SORT", keys)
    for y, p, _w in CASES:
        for labels in (y.astype(np.int64), y.astype(bool), y.astype(np.uint8)):
            g = binary_statistic(labels, p)
            values, weights, positives = grouped_reference(y, p, np.ones_like(p))
            np.testing.assert_array_equal(g.values, values)
            np.testing.assert_array_equal(g.weights, weights)
            np.testing.assert_array_equal(g.positives, positives)
    # the caller's arrays are untouched
    labels = np.array([1, 0, 1, 0])
    p = np.array([0.4, 0.3, 0.2, 0.1])
    binary_statistic(labels, p)
    np.testing.assert_array_equal(labels, [1, 0, 1, 0])
    np.testing.assert_array_equal(p, [0.4, 0.3, 0.2, 0.1])


def _radix_cases(rng, count):
    """Predictions that stress the radix sort's digits, with 0/1 outcomes and weights."""
    for i in range(count):
        n = int(rng.integers(1, 70)) if i > 2 else i + 1
        kind = i % 8
        if kind == 0:
            p = rng.random(n)
        elif kind == 1:
            p = rng.integers(0, 5, n) / 4.0  # many ties, 0 and 1
        elif kind == 2:
            p = rng.choice([0.0, -0.0, 1.0, 0.5, 1e-300, 5e-324, 2.0**-1022], n)
        elif kind == 3:
            # differ only in the lowest digit, or only in one high digit
            p = 0.5 + rng.integers(0, 4, n) * 2.0**-52
        elif kind == 4:
            p = np.ldexp(1.0, -rng.integers(1, 1000, n))
        elif kind == 5:
            p = np.round(rng.random(n), 2)
        elif kind == 6:
            # float32 values (32-bit keys), over blocks of label_keys32
            n = int(rng.integers(1, 700))
            p = rng.random(n).astype(np.float32).astype(np.float64)
        else:
            # float32 values with ties, -0.0, 0, 1 and float32 subnormals
            n = int(rng.integers(1, 700))
            p = rng.choice(np.array([0.0, -0.0, 1.0, 0.1, 1e-45, 2e-38], np.float32), n)
            p = p.astype(np.float64)
        y = rng.integers(0, 2, n)
        if i % 7 == 0:
            y[:] = y[0]  # one class
        w_kind = i % 3
        if w_kind == 0:
            w = np.ones(n)
        elif w_kind == 1:
            w = rng.integers(0, 3, n).astype(float)
        else:
            w = rng.random(n) * 10.0 ** rng.uniform(-300, 300, n)
        yield y, p, w


@pytest.mark.parametrize("keys", [False, True])
def test_radix_grouping_equals_a_stable_sort_bit_for_bit(keys, monkeypatch):
    # 0/1 outcomes take the radix sort (group_radix), which sums each
    # group's rows in input order: exactly what a stable argsort and the
    # plain grouping loop give, for every outcome type and weight kind; unit
    # weights with keys=True take one np.sort of label_keys and group_label_keys
    monkeypatch.setattr(skcal._grouped, "_KEY_SORT", keys)
    rng = np.random.default_rng(7)
    for y, p, w in _radix_cases(rng, 400):
        order = np.argsort(p, kind="stable")
        n = p.shape[0]
        out = np.empty((3, n))
        k = group_sorted(p, y.astype(float), w, order, out[0], out[1], out[2])
        for labels in (y.astype(np.int64), y.astype(np.uint8), y.astype(bool), y * 1.0):
            for weights in (w, np.broadcast_to(w[0], (n,)) if np.all(w == w[0]) else w):
                g = group(labels, p, weights)
                np.testing.assert_array_equal(g.values, out[0, :k])
                assert not np.any(np.signbit(g.values))  # -0.0 groups as +0.0
                np.testing.assert_array_equal(g.weights, out[1, :k])
                np.testing.assert_array_equal(g.positives, out[2, :k])


def test_radix_kernels_check_shapes():
    p, y, w = np.array([0.2, 0.1, 0.2]), np.array([1, 0, 1], np.uint8), np.ones(3)
    out = [np.empty(3) for _ in range(4)]
    assert group_radix(p, y, w, *out) == 2
    assert group_radix(p, y, np.empty(0), *out) == 2  # unit weights
    with pytest.raises(ValueError, match="shapes"):
        group_radix(p, y[:2].copy(), w, *out)
    with pytest.raises(ValueError, match="shapes"):
        group_radix(p, y, w[:2].copy(), *out)
    with pytest.raises(ValueError, match="shapes"):
        group_radix(p, y, w, out[0], out[1], out[2], np.empty(2))
    with pytest.raises(ValueError, match="shapes"):
        argsort_rows(np.zeros((2, 3)), np.empty((2, 2), dtype=np.intp))


def _check_grouped_keys(k, out, y, p):
    """The first ``k`` entries of ``out`` are the unit-weight statistic of (y != 0, p)."""
    n = p.shape[0]
    values, weights, positives = grouped_reference(
        (y != 0).astype(float), p, np.ones(n)
    ) if n else (np.empty(0),) * 3
    np.testing.assert_array_equal(out[0][:k], values)
    assert not np.any(np.signbit(out[0][:k]))
    np.testing.assert_array_equal(out[1][:k], weights)
    np.testing.assert_array_equal(out[2][:k], positives)


def test_label_key_kernels():
    # label_keys orders rows as (prediction, outcome) in one int64 (-0.0 as
    # +0.0); group_label_keys groups the sorted keys, in place in the memory
    # of values, into the counts of a reference grouping: ties within and
    # across outcomes, -0.0, 0 and 1, subnormals, one class, n = 0 and 1
    rng = np.random.default_rng(12)
    for i in range(300):
        n = int(rng.integers(0, 40)) if i > 1 else i
        p = rng.choice([0.0, -0.0, 0.25, 0.5, 1.0, 5e-324, 0.3], n) if i % 2 else rng.random(n)
        y = (rng.random(n) < 0.5).astype(np.uint8) * rng.integers(1, 4)
        if i % 5 == 0:
            y[:] = 0 if i % 10 else 2  # one class
        p_before, y_before = p.copy(), y.copy()
        out = [np.full(n, np.nan) for _ in range(3)]
        keys = out[0].view(np.uint64)
        assert label_keys(p, y.astype(np.uint8), keys)
        np.testing.assert_array_equal(p, p_before)
        np.testing.assert_array_equal(y, y_before)
        # the key orders as the pair (p, y != 0), and decodes to both
        np.testing.assert_array_equal(keys & 1, y != 0)
        np.testing.assert_array_equal((keys >> np.uint64(1)).view(np.float64), p + 0.0)
        pairs = sorted(zip((p + 0.0).tolist(), (y != 0).tolist()))
        np.testing.assert_array_equal(
            np.sort(keys), [(int(np.float64(a).view(np.uint64)) << 1) | b for a, b in pairs]
        )
        keys.sort()
        _check_grouped_keys(group_label_keys(keys, *out), out, y, p)
    # any finite p >= 0 has a key (p > 1 too: the radix sort's order); a
    # negative, infinite or NaN one makes label_keys decline
    big = np.array([0.5, 1.5, 1e308, 2.0, 1.0])
    keys = np.empty(5, np.uint64)
    assert label_keys(big, np.zeros(5, np.uint8), keys)
    np.testing.assert_array_equal(np.argsort(keys), np.argsort(big))
    for bad in (-0.5, np.nan, np.inf, -np.inf, -5e-324):
        assert not label_keys(np.array([0.1, bad]), np.array([1, 0], np.uint8),
                              np.empty(2, np.uint64))
    with pytest.raises(ValueError, match="one length"):
        label_keys(np.array([0.1, 0.2]), np.array([1], np.uint8), np.empty(2, np.uint64))
    with pytest.raises(ValueError, match="entries"):
        group_label_keys(np.array([2, 4], np.uint64), np.empty(1), np.empty(2), np.empty(2))


def test_label_keys32_kernels():
    # predictions that are all float32 values: label_keys32 writes keys of 32
    # bits (the float's bits, then the outcome), which group_label_keys
    # groups in place in the upper half of values, into the counts of a
    # reference grouping; sizes across its blocks of 256 rows
    rng = np.random.default_rng(32)
    floats = np.array([0.0, -0.0, 0.25, 0.1, 1.0, 1e-45, 3e-39, 0.7], np.float32)
    for i in range(300):
        n = int(rng.choice([0, 1, 2, 17, 255, 256, 257, 600])) if i > 1 else i
        if i % 2:
            p = rng.choice(floats, n).astype(np.float64)
        else:
            p = rng.random(n).astype(np.float32).astype(np.float64)
        y = (rng.random(n) < 0.5).astype(np.uint8) * rng.integers(1, 4)
        if i % 5 == 0:
            y[:] = 0 if i % 10 else 2  # one class
        p_before, y_before = p.copy(), y.copy()
        out = [np.full(n, np.nan) for _ in range(3)]
        keys = out[0].view(np.uint32)[n:]
        assert label_keys32(p, y.astype(np.uint8), keys)
        np.testing.assert_array_equal(p, p_before)
        np.testing.assert_array_equal(y, y_before)
        np.testing.assert_array_equal(keys & 1, y != 0)
        decoded = (keys >> np.uint32(1)).view(np.float32).astype(np.float64)
        np.testing.assert_array_equal(decoded, p + 0.0)
        keys.sort()
        _check_grouped_keys(group_label_keys32(keys, *out), out, y, p)
        # group takes these keys: the same statistic
        g = group(y, p, np.broadcast_to(1.0, (n,)))
        _check_grouped_keys(g.values.shape[0], [g.values, g.weights, g.positives], y, p)
    # one prediction that is no float32, anywhere (first block, last row of
    # the last block), or negative, infinite, NaN, beyond the float range or
    # a double subnormal: label_keys32 declines (and group takes 64-bit keys)
    for bad in (0.1, 1 / 3, -0.5, np.nan, np.inf, 1e39, 5e-324, -5e-324):
        for n, at in ((2, 1), (600, 0), (600, 599), (600, 300)):
            p = np.full(n, 0.5)
            p[at] = bad
            assert not label_keys32(p, np.zeros(n, np.uint8), np.empty(n, np.uint32))
    assert label_keys32(np.empty(0), np.empty(0, np.uint8), np.empty(0, np.uint32))
    with pytest.raises(ValueError, match="one length"):
        label_keys32(np.array([0.5, 0.25]), np.array([1], np.uint8), np.empty(2, np.uint32))
    with pytest.raises(ValueError, match="entries"):
        group_label_keys32(np.array([2, 4], np.uint32), np.empty(1), np.empty(2), np.empty(2))


def test_row_radix_argsort_equals_a_stable_argsort():
    # the per-utility sort of utility calibration (argsort_rows): negative
    # values, -0.0 beside 0.0, ties, subnormals, one column
    rng = np.random.default_rng(11)
    for i in range(200):
        m, n = int(rng.integers(1, 5)), int(rng.integers(1, 60))
        kind = i % 4
        if kind == 0:
            V = rng.random((m, n)) * 2 - 1
        elif kind == 1:
            V = np.round(rng.random((m, n)) * 2 - 1, 1)
        elif kind == 2:
            V = rng.choice([0.0, -0.0, 1.0, -1.0, 5e-324, -5e-324, 0.25], (m, n))
        else:
            V = np.ldexp(rng.choice([-1.0, 1.0], (m, n)), -rng.integers(1, 1000, (m, n)))
        order = np.empty(V.shape, dtype=np.intp)
        argsort_rows(V, order)
        np.testing.assert_array_equal(order, np.argsort(V, axis=1, kind="stable"))


class _Holder:
    """Anything with ``grouped_statistic()`` stands in for the data (a sketch)."""

    def __init__(self, statistic):
        self._statistic = statistic

    def grouped_statistic(self):
        return self._statistic


MEASURES = [
    (smooth_calibration_error, {}),
    (cutoff_calibration_error, {}),
    (calibration_decision_loss, {}),
    (calibration_fixed_decision_loss, {}),
    (maximum_swap_regret, {}),
    (lower_distance_to_calibration, {"grid": 20}),
    (soft_binned_cdl, {}),
    (soft_binned_cdl, {"m": 8}),
    (binned_ece, {}),
    (binned_ece, {"n_bins": 7, "norm": "l2"}),
    (binned_ece, {"n_bins": 5, "strategy": "quantile", "norm": "max"}),
]


@pytest.mark.parametrize(
    "measure, options", MEASURES, ids=[f"{m.__name__}-{o}" for m, o in MEASURES]
)
def test_measures_of_the_statistic_equal_the_measures_of_the_rows(measure, options):
    # SCDL and uniform-bin ECE read rows in one pass without grouping; from
    # the statistic they weigh each distinct value once
    for y, p, w in CASES[:120]:
        expected = measure(y, p, sample_weight=w, **options)
        value = measure(_Holder(group(y, p, w)), **options)
        assert value == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_statistic_input_refuses_rows_beside_it():
    y, p, w = CASES[5]
    holder = _Holder(group(y, p, w))
    with pytest.raises(ValueError, match="pass y_prob=None"):
        smooth_calibration_error(holder, p)
    with pytest.raises(ValueError, match="y_prob is required"):
        smooth_calibration_error(y)


def test_statistic_pickles_and_resamples():
    y, p, w = CASES[10]
    g = binary_statistic(y, p, w)
    h = pickle.loads(pickle.dumps(g))
    assert isinstance(h, GroupedStatistic) and h.total == g.total
    np.testing.assert_array_equal(h.values, g.values)
    r = g.with_positives(np.zeros(len(g)))
    assert r.values is g.values and r.positives.sum() == 0
    assert "n_values" in repr(g)


@pytest.mark.parametrize(
    "measure, flag",
    [
        (smooth_calibration_error, "return_witness"),
        (cutoff_calibration_error, "return_interval"),
        (lower_distance_to_calibration, "return_bound"),
        (calibration_fixed_decision_loss, "return_threshold"),
    ],
)
def test_details_come_one_way(measure, flag):
    # return_details=True -> (value, Bunch) is the one way; the per-measure
    # flags of the unreleased first draft are gone, not deprecated
    y, p = [0, 0, 1, 1], [0.2, 0.4, 0.6, 0.9]
    with pytest.raises(TypeError, match=flag):
        measure(y, p, **{flag: True})
    value, details = measure(y, p, return_details=True)
    assert value == measure(y, p) and isinstance(details, Bunch)


def _stable_grouping(y, p, w):
    """The statistic of a stable argsort and the plain grouping loop."""
    order = np.argsort(p, kind="stable")
    out = np.empty((3, p.shape[0]))
    k = group_sorted(p, (y != 0).astype(float), w, order, out[0], out[1], out[2])
    return out[:, :k]


def _prefix_grouping(y, p, w):
    """``group_prefix_keys`` as ``group`` calls it; None when it declines."""
    n = p.shape[0]
    b = index_bits(n)
    out = [np.full(n, np.nan) for _ in range(3)]
    keys = out[0].view(np.uint64)
    assert prefix_keys(p, keys, b)
    keys.sort()
    k = group_prefix_keys(keys, p, (y != 0).astype(np.uint8), w, *out, b)
    return None if k < 0 else np.array([a[:k] for a in out])


def _spread_bits(p):
    """The number ``prefix_keys`` takes a prefix of, written out: the bits of
    p below 0.5, ``2 bits(0.5) - bits(1 - p)`` on [0.5, 1], the bits above 1
    shifted into what is left."""
    p = np.asarray(p, dtype=np.float64) + 0.0
    half, one = 0x3FE0000000000000, 0x3FF0000000000000
    out = []
    for v in p.tolist():
        u = int(np.float64(v).view(np.uint64))
        if v < 0.5:
            out.append(u)
        elif v <= 1.0:
            out.append(2 * half - int(np.float64(1.0 - v).view(np.uint64)))
        else:
            out.append(2 * half + 1 + ((u - one) >> 9))
    return np.array(out, dtype=np.uint64)


def test_prefix_keys_grow_with_the_prediction():
    # the keys' prefix must order the rows as the predictions: the kernel's
    # prefixes are those of the spread bits written out, which increase
    # strictly with p on [0, 1] and do not decrease above
    tiny = np.nextafter(0.0, 1.0)
    near = [0.0, tiny, 1e-300, 1e-9, 0.25, np.nextafter(0.5, 0.0), 0.5,
            np.nextafter(0.5, 1.0), 0.75, 1 - 2e-9, 1 - 1e-9,
            np.nextafter(1.0, 0.0), 1.0, np.nextafter(1.0, 2.0), 1.5, 3.0,
            1e300, np.finfo(np.float64).max]
    rng = np.random.default_rng(3)
    p = np.sort(np.concatenate([near, rng.random(200), 1 - rng.random(200) ** 8,
                                rng.random(50) * 10]))
    b = index_bits(p.shape[0])
    keys = np.empty(p.shape[0], np.uint64)
    assert prefix_keys(p, keys, b)
    np.testing.assert_array_equal(keys & np.uint64(2**b - 1), np.arange(p.shape[0]))
    prefix = keys >> np.uint64(b)
    np.testing.assert_array_equal(prefix, _spread_bits(p) >> np.uint64(b - 1))
    assert np.all(np.diff(prefix.astype(object)) >= 0)
    inside = p <= 1.0
    distinct = np.diff(p[inside]) > 0
    assert np.all(np.diff(_spread_bits(p[inside]).astype(object))[distinct] > 0)
    assert int(_spread_bits([np.finfo(np.float64).max])[0]) < 2**63
    # a confident model's predictions, piled up just below 1 (distinct, in
    # random order): the prefixes tell them apart as well as those near 0,
    # so the key sort groups them and never declines to the radix sort
    n = 4096
    for p in (1.0 - rng.integers(1, 2**16, n) * 2.0**-53, rng.integers(1, 2**16, n) * 2.0**-53):
        y, w = rng.integers(0, 2, n), rng.random(n)
        got = _prefix_grouping(y, p, w)
        assert got is not None
        np.testing.assert_array_equal(got, _stable_grouping(y, p, w))


def test_prefix_key_kernels(monkeypatch):
    # weighted rows: keys of a prefix of p's bits above the row index, one
    # sort, then rows gathered in order; rows of one prefix sorted by full p
    # (stably: equal predictions summed in input order): the stable
    # grouping bit for bit, or -1 when a prefix is too crowded to sort
    assert [index_bits(n) for n in (1, 2, 3, 4, 5, 1024, 1025)] == [1, 1, 2, 2, 3, 10, 11]
    rng = np.random.default_rng(21)
    ulp = 2.0**-53  # the spacing of predictions in [0.5, 1)
    for i in range(400):
        n = int(rng.integers(1, 200)) if i > 1 else i + 1
        kind = i % 5
        if kind == 0:
            p = rng.random(n)
        elif kind == 1:
            # distinct predictions sharing a prefix, in any input order
            p = 0.5 + rng.integers(0, 2 ** (index_bits(n) - 1), n) * ulp
        elif kind == 2:
            p = rng.choice([0.0, -0.0, 1.0, 0.5, 5e-324, 0.5 + ulp, 0.5 + 2 * ulp], n)
        elif kind == 3:
            p = np.sort(0.5 + rng.integers(0, 8, n) * ulp)  # a prefix in order
        else:
            p = np.round(rng.random(n), 1)  # ties
        y = rng.integers(0, 2, n) * rng.integers(1, 3)
        w = rng.random(n) * 10.0 ** rng.uniform(-5, 5, n)
        w[rng.random(n) < 0.1] = 0.0
        got = _prefix_grouping(y, p, w)
        want = _stable_grouping(y, p, w)
        if got is None:
            # declined only by its rule: the insertions' moves (pairs of rows
            # of one prefix out of order) above 8 per row, plus 64
            prefix = _spread_bits(p) >> np.uint64(index_bits(n) - 1)
            moves = sum(
                int(np.sum(p[i:][prefix[i:] == prefix[i]] < p[i])) for i in range(n)
            )
            assert moves > 8 * n + 64
        else:
            np.testing.assert_array_equal(got, want)
            assert not np.any(np.signbit(got[0]))
    # too crowded: one prefix of more than 4096 rows that are not in order,
    # or too many moves in all; group() then takes the radix sort
    n = 5000
    for p in (
        0.5 + rng.integers(0, 2**12, n) * ulp,
        0.5 + np.concatenate((np.arange(4000)[::-1], np.arange(1000))) * ulp,
    ):
        y, w = rng.integers(0, 2, n), rng.random(n)
        assert _prefix_grouping(y, p, w) is None
        monkeypatch.setattr(skcal._grouped, "_KEY_SORT", True)
        g = group(y, p, w)
        np.testing.assert_array_equal([g.values, g.weights, g.positives],
                                      _stable_grouping(y, p, w))
    assert prefix_keys(np.array([0.1, 1.5]), np.empty(2, np.uint64), 1)
    for bad in (-0.5, np.nan, np.inf):
        assert not prefix_keys(np.array([0.1, bad]), np.empty(2, np.uint64), 1)
    with pytest.raises(ValueError, match="index"):
        prefix_keys(np.array([0.1, 0.2, 0.3]), np.empty(3, np.uint64), 1)
    with pytest.raises(ValueError, match="one length"):
        group_prefix_keys(np.array([0, 1], np.uint64), np.array([0.1]), np.zeros(2, np.uint8),
                          np.ones(2), np.empty(2), np.empty(2), np.empty(2), 1)


def test_key_sorts_match_the_radix_sort_outside_zero_one(monkeypatch):
    # measures of utilities group values above 1 too; both key sorts take
    # them, and a negative value sends the rows to the radix sort: the same
    # statistic either way, weighted or not
    rng = np.random.default_rng(5)
    for p in (rng.random(60) * 3.0, np.append(rng.random(59), -0.25)):
        y, w = rng.integers(0, 2, 60), rng.random(60)
        for weights in (w, np.broadcast_to(1.0, (60,))):
            got = []
            for keys in (False, True):
                monkeypatch.setattr(skcal._grouped, "_KEY_SORT", keys)
                g = group(y, p, weights)
                got.append([g.values, g.weights, g.positives])
            np.testing.assert_array_equal(got[0], got[1])


@pytest.mark.parametrize(
    ("version", "features", "expected"),
    [
        # numpy's AVX-512 sort: from 1.25 on
        ((1, 25), {"AVX512_SKX": True, "AVX2": True}, True),
        ((1, 24), {"AVX512_SKX": True, "AVX2": True}, False),
        # its AVX2 sort: from 2.0 on (numpy 2.4 reports the group as X86_V3)
        ((2, 0), {"AVX512_SKX": False, "AVX2": True}, True),
        ((1, 26), {"AVX512_SKX": False, "AVX2": True}, False),
        ((2, 4), {"AVX512_SKX": False, "AVX2": True, "X86_V3": True}, True),
        # X86_V3 switched off (NPY_DISABLE_CPU_FEATURES): numpy's scalar sort
        ((2, 4), {"AVX512_SKX": False, "AVX2": True, "X86_V3": False}, False),
        ((2, 4), {}, False),
    ],
)
def test_key_sort_where_numpy_has_a_simd_sort(version, features, expected):
    assert skcal._grouped._numpy_simd_sort(version, features) is expected


@pytest.mark.parametrize("keys", [False, True])
def test_work_rows_come_in_the_statistics_block(keys, monkeypatch):
    # group(..., work=r): the three arrays and r work rows are one allocation
    # (the allocator then keeps it between calls); the smCE walk's stack
    # goes there, and neither the statistic nor the value may change
    from skcal.metrics._smce import smce_core

    monkeypatch.setattr(skcal._grouped, "_KEY_SORT", keys)
    for y, p, w in CASES[:120]:
        for weights in (w, np.ones_like(w)):
            plain = group(y, p, weights)
            g = group(y, p, weights, work=2)
            assert plain.work is None
            assert g.work.shape == (2, p.shape[0])
            assert np.shares_memory(g.work, g.values) is False
            assert g.values.base is g.work.base
            kept = [a.copy() for a in (g.values, g.weights, g.positives)]
            assert smce_core(g) == smce_core(plain)
            for before, after in zip(kept, (g.values, g.weights, g.positives)):
                np.testing.assert_array_equal(before, after)
            assert smooth_calibration_error(y, p, sample_weight=weights) == smce_core(
                binary_statistic(y, p, weights, rescale=True)
            )
            assert g.with_positives(g.positives).work is None
            assert pickle.loads(pickle.dumps(g)).work is None
    g = binary_statistic(y, p, w, work=3)
    assert g.work.shape == (3, p.shape[0])


def test_constant_power_of_two_weights_take_the_unit_grouping(monkeypatch):
    # weights all one power of two are 1.0 each on the measures' scale: the
    # statistic of unit weights (the same sums, exact), with its exponent;
    # other constant weights keep the weighted grouping
    rng = np.random.default_rng(41)
    y = rng.integers(0, 2, 500)
    p = np.round(rng.random(500), 2)
    plain = binary_statistic(y, p, None, rescale=True)
    for c in (1.0, 2.0, 0.25, 2.0**-40):
        g, e = binary_statistic(y, p, np.full(500, c), rescale=True, return_scale=True)
        assert e == -int(np.log2(c))
        for a, b in ((g.values, plain.values), (g.weights, plain.weights),
                     (g.positives, plain.positives)):
            np.testing.assert_array_equal(a, b)
        raw = binary_statistic(y, p, np.full(500, c))  # as given: not rescaled
        np.testing.assert_array_equal(raw.weights, plain.weights * c)
    g = binary_statistic(y, p, np.full(500, 0.3), rescale=True)
    assert not np.array_equal(g.weights, plain.weights)
    np.testing.assert_allclose(g.weights / g.total, plain.weights / plain.total, rtol=1e-14)
    w = np.ones(500)
    w[7] = 2.0
    g = binary_statistic(y, p, w, rescale=True)
    assert g.total == pytest.approx(plain.total * 0.5 + 0.5)
