import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skcal import binned_ece

from cases import over_cases, random_case, random_cases, repeat_rows
from reference_ece import binned_ece_reference

NORMS = ["l1", "l2", "max"]
STRATEGIES = ["uniform", "quantile"]


CASES = random_cases(20, 200, max_n=40) + random_cases(21, 60, max_n=300)


@over_cases("case", CASES)
def test_matches_reference(case):
    y, p, w = case
    for strategy in STRATEGIES:
        for n_bins in [1, 2, 3, 5, 10, 15]:
            for norm in NORMS:
                value = binned_ece(
                    y, p, sample_weight=w, n_bins=n_bins, strategy=strategy, norm=norm
                )
                ref = binned_ece_reference(y, p, w, n_bins, strategy, norm)
                assert value == pytest.approx(ref, abs=1e-9)


@over_cases("case", random_cases(22, 100, max_n=60))
def test_norm_order_and_range(case):
    # Jensen: l1 <= l2 <= max, all in [0, 1]
    y, p, w = case
    for strategy in STRATEGIES:
        l1, l2, mx = (
            binned_ece(y, p, sample_weight=w, strategy=strategy, norm=norm)
            for norm in NORMS
        )
        assert 0.0 <= l1 <= l2 + 1e-12
        assert l2 <= mx + 1e-12
        assert mx <= 1.0


def test_uniform_edges_go_up():
    # a prediction on an edge k/B belongs to the bin starting there; 1 to the last
    B = 10
    p = np.arange(B + 1) / B
    _, details = binned_ece(np.zeros(B + 1), p, n_bins=B, return_details=True)
    assert details.bin_count.tolist() == [1] * (B - 1) + [2]
    # doubles just below an edge stay below it, whatever B p rounds to
    for B in [3, 7, 10, 15, 49, 100]:
        edges = np.arange(B + 1) / B
        below = np.nextafter(edges[1:-1], 0)
        _, details = binned_ece(
            np.zeros(2 * (B - 1)),
            np.r_[edges[1:-1], below],
            n_bins=B,
            return_details=True,
        )
        assert details.bin_count.tolist() == [1] + [2] * (B - 2) + [1]


def test_details():
    rng = np.random.default_rng(0)
    y, p, w = random_case(rng, 200)
    w[:5] = 0.0
    for strategy in STRATEGIES:
        value, d = binned_ece(
            y, p, sample_weight=w, strategy=strategy, n_bins=7, return_details=True
        )
        assert d.bin_count.sum() == np.count_nonzero(w)
        assert d.bin_weight.sum() == pytest.approx(1.0)
        full = d.bin_weight > 0
        assert np.array_equal(full, d.bin_count > 0)
        assert np.all(np.isnan(d.bin_accuracy[~full]))
        # l1 ECE = sum_k pi_k |accuracy_k - confidence_k|
        gap = np.abs(d.bin_accuracy[full] - d.bin_confidence[full])
        assert value == pytest.approx((d.bin_weight[full] * gap).sum(), abs=1e-12)
        assert np.all(d.bin_lower[full] <= d.bin_confidence[full] + 1e-12)
        assert np.all(d.bin_confidence[full] <= d.bin_upper[full] + 1e-12)
        # bins are ordered and do not overlap
        lo, hi = d.bin_lower[full], d.bin_upper[full]
        assert np.all(hi[:-1] < lo[1:])


def test_quantile_bins_balance_and_ties():
    # 12 distinct values, unit weights: 4 bins of exactly 3
    p = np.linspace(0.05, 0.95, 12)
    _, d = binned_ece(
        np.zeros(12), p, n_bins=4, strategy="quantile", return_details=True
    )
    assert d.bin_count.tolist() == [3, 3, 3, 3]
    # weights count, not rows
    w = np.r_[6.0, np.ones(11)]
    _, d = binned_ece(
        np.zeros(12),
        p,
        sample_weight=w,
        n_bins=4,
        strategy="quantile",
        return_details=True,
    )
    # preceding weights 0, 6, 7, ..., 16 of 17: bins from floor(4 c / 17)
    assert d.bin_weight.tolist() == pytest.approx([6 / 17, 3 / 17, 4 / 17, 4 / 17])
    # a tie is never split: one value holding 60% of the weight covers the
    # share of three bins and the bins after it stay empty
    p = np.r_[0.1, np.full(6, 0.5), 0.7, 0.8, 0.9]
    _, d = binned_ece(
        np.zeros(10), p, n_bins=5, strategy="quantile", return_details=True
    )
    assert d.bin_count.tolist() == [7, 0, 0, 1, 2]
    # all predictions equal: one bin holds everything, n_bins bins still reported
    value, d = binned_ece(
        [0, 1, 1, 1], [0.5] * 4, n_bins=3, strategy="quantile", return_details=True
    )
    assert d.bin_count.tolist() == [4, 0, 0] and d.bin_weight.shape == (3,)
    assert value == pytest.approx(0.25)


def test_integer_weights_equal_repetition():
    rng = np.random.default_rng(1)
    for _ in range(50):
        y, p, _ = random_case(rng, int(rng.integers(1, 30)))
        w = rng.integers(0, 4, y.shape[0]).astype(float)
        w[0] += 1
        yr, pr = repeat_rows(y, p, w)
        for strategy in STRATEGIES:
            for norm in NORMS:
                kw = dict(strategy=strategy, norm=norm, n_bins=4)
                assert binned_ece(y, p, sample_weight=w, **kw) == pytest.approx(
                    binned_ece(yr, pr, **kw), abs=1e-12
                )


def test_invariances():
    rng = np.random.default_rng(2)
    for _ in range(20):
        n = int(rng.integers(1, 80))
        y, p, w = random_case(rng, n)
        perm = rng.permutation(n)
        for strategy in STRATEGIES:
            for norm in NORMS:
                kw = dict(strategy=strategy, norm=norm)
                v = binned_ece(y, p, sample_weight=w, **kw)
                assert binned_ece(
                    y[perm], p[perm], sample_weight=w[perm], **kw
                ) == pytest.approx(v, abs=1e-12)
                assert binned_ece(y, p, sample_weight=4.5 * w, **kw) == pytest.approx(
                    v, abs=1e-12
                )


def test_calibrated_is_zero_and_extremes():
    assert binned_ece([0, 1], [0.0, 1.0]) == 0.0
    assert binned_ece([0, 1, 0, 1], [0.5] * 4, strategy="quantile") == 0.0
    for norm in NORMS:
        assert binned_ece([1, 0], [0.0, 1.0], norm=norm) == 1.0


def test_multiclass_top_label():
    rng = np.random.default_rng(4)
    P = rng.dirichlet(np.ones(3), 300)
    y = rng.integers(0, 3, 300)
    conf, correct = P.max(axis=1), (P.argmax(axis=1) == y).astype(int)
    for strategy in STRATEGIES:
        assert binned_ece(y, P, strategy=strategy) == pytest.approx(
            binned_ece(correct, conf, strategy=strategy), abs=1e-15
        )


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(n_bins=0), ValueError, "n_bins"),
        (dict(n_bins=-3), ValueError, "n_bins"),
        (dict(n_bins=2.0), TypeError, "n_bins"),
        (dict(n_bins=True), TypeError, "n_bins"),
        (dict(n_bins="10"), TypeError, "n_bins"),
        (dict(strategy="kmeans"), ValueError, "strategy"),
        (dict(norm="l3"), ValueError, "norm"),
        (dict(norm=None), ValueError, "norm"),
    ],
)
def test_bad_options(kwargs, error, match):
    with pytest.raises(error, match=match):
        binned_ece([0, 1], [0.2, 0.8], **kwargs)


data = st.integers(1, 40).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 1), min_size=n, max_size=n),
        st.lists(
            st.one_of(st.floats(0, 1), st.sampled_from([0.0, 0.2, 0.5, 1.0])),
            min_size=n,
            max_size=n,
        ),
        st.lists(st.integers(0, 5), min_size=n, max_size=n),
    )
)


@settings(max_examples=100, deadline=None)
@given(data, st.integers(1, 20), st.sampled_from(STRATEGIES), st.sampled_from(NORMS))
def test_property_matches_reference(case, n_bins, strategy, norm):
    y, p, w = (np.asarray(a, dtype=float) for a in case)
    w[0] += 1
    value = binned_ece(
        y, p, sample_weight=w, n_bins=n_bins, strategy=strategy, norm=norm
    )
    ref = binned_ece_reference(y, p, w, n_bins, strategy, norm)
    assert value == pytest.approx(ref, abs=1e-9)
    assert 0.0 <= value <= 1.0
