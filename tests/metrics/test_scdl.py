import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skcal import calibration_decision_loss, soft_binned_cdl
from skcal.metrics._scdl import _MAX_LEVEL, _RowSource, _self_balancing_scdl

from cases import over_cases, random_case, random_cases, repeat_rows
from reference_scdl import scdl_m_reference, scdl_reference

# Levels up to 2**12 are checked against the O(n m + m * nnz) reference.
REF_LEVEL = 12

CASES = random_cases(10, 200, max_n=40) + random_cases(11, 100, max_n=300)


def details_of(y, p, w, **kwargs):
    return soft_binned_cdl(y, p, sample_weight=w, return_details=True, **kwargs)


def check_details(y, p, w, value, details):
    """Every reported level against Definition 1.1, and Lemmas 3.2 and 3.3."""
    for m, s in zip(details.levels, details.scdl_m, strict=True):
        if m <= 2**REF_LEVEL:
            assert s == pytest.approx(scdl_m_reference(y, p, w, int(m)), abs=1e-9)
    assert np.all(np.diff(details.levels) > 0)
    assert np.all(np.diff(details.scdl_m) >= -1e-12)  # Lemma 3.2
    m = details.m
    assert details.swap_regret_bound == pytest.approx(2 * value + 2 / m)
    if not details.exact:
        assert m == 2**_MAX_LEVEL and details.upper_bound == 2.0**-_MAX_LEVEL
        assert 0.0 <= value <= details.upper_bound
        return
    assert details.upper_bound == value
    assert 1 / m <= value < 2 / m  # Lemma 3.3
    # SCDL_{m*} is always reported (the rounding response needs it)
    assert m in details.levels.tolist()
    if 2 * m <= 2**REF_LEVEL:
        # m* is the first dyadic m with SCDL_{2m} >= 1/m (Definition 3.2)
        k_star = int(np.log2(m))
        ref = {k: scdl_m_reference(y, p, w, 2**k) for k in range(1, k_star + 2)}
        for k in range(1, k_star):
            assert ref[k + 1] < 2.0**-k + 1e-12
        assert ref[k_star + 1] >= 2.0**-k_star - 1e-12
        # ... and the value is the infimum of Definition 1.1
        assert value == pytest.approx(
            scdl_reference(y, p, w, max_level=k_star + 1), abs=1e-9
        )


@over_cases("case", CASES)
def test_matches_reference(case):
    y, p, w = case
    value, details = details_of(y, p, w)
    check_details(y, p, w, value, details)


@over_cases("case", CASES[:150])
def test_sparse_levels_match_dense(case):
    # one dense level (m = 2) forces every finer level through the sparse
    # path; two small dense passes exercise the hand-over between passes
    y, p, w = case
    value, details = details_of(y, p, w)
    for dense_levels in [(1,), (2, 4)]:
        other = _self_balancing_scdl(_RowSource(y, p, w), dense_levels)
        check_details(y, p, w, other.value, other)
        assert other.value == pytest.approx(value, abs=1e-12)
        assert (other.m, other.exact) == (details.m, details.exact)


@over_cases("case", random_cases(12, 100, max_n=60))
def test_given_m_matches_reference(case):
    y, p, w = case
    rng = np.random.default_rng(len(y))
    # dense for small m, sparse above the dense level chosen for n
    for m in [1, 2, 3, 4, 7, int(rng.integers(5, 100)), int(rng.integers(100, 1500))]:
        value, details = details_of(y, p, w, m=m)
        assert value == pytest.approx(scdl_m_reference(y, p, w, m), abs=1e-9)
        assert details.m == m and details.levels.tolist() == [m]
        assert details.scdl_m.tolist() == [value]
        assert details.swap_regret_bound == pytest.approx(2 * value + 2 / m)


def test_m_one_is_zero():
    # with two grid points no term of Definition 1.1 can be positive
    assert soft_binned_cdl([1, 0, 1], [0.0, 1.0, 0.3], m=1) == 0.0


@over_cases("seed", range(10))
def test_monotone_in_dyadic_m(seed):
    # Lemma 3.2, up to levels far past the dense one
    rng = np.random.default_rng(seed)
    y, p, w = random_case(rng, int(rng.integers(1, 50)))
    values = [soft_binned_cdl(y, p, sample_weight=w, m=2**k) for k in range(1, 31)]
    assert np.all(np.diff(values) >= -1e-12)


def test_single_point_closed_form():
    # One point p = 2**-20 with y = 0: SCDL_m = 2**-20 - 1/m for m >= 2**21
    # and 0 below, so m* = 2**21 and SCDL = 2**-21, past the dense levels.
    value, details = soft_binned_cdl([0], [2.0**-20], return_details=True)
    assert details.exact and details.m == 2**21
    assert value == 2.0**-21
    assert soft_binned_cdl([0], [2.0**-20], m=2**25) == pytest.approx(
        2.0**-20 - 2.0**-25, abs=1e-18
    )


@pytest.mark.parametrize(
    "y, p, w",
    [
        ([0], [0.0], None),
        ([1], [1.0], None),
        ([0, 1, 1, 0], [0.0, 1.0, 1.0, 0.0], [1, 2, 3, 4]),
        ([0, 1, 0, 1], [0.5] * 4, None),
        ([0, 1, 1, 1, 0, 0, 0, 1], [0.75] * 4 + [0.25] * 4, None),
        ([0, 1, 0], [0.25, 0.25, 0.5], [3, 1, 0]),
    ],
)
def test_exactly_calibrated_is_zero(y, p, w):
    value, details = soft_binned_cdl(y, p, sample_weight=w, return_details=True)
    assert value == 0.0
    assert np.all(details.scdl_m == 0.0)
    # m* does not exist; the search stops at 2**40 and says so
    assert not details.exact and details.m == 2**_MAX_LEVEL
    assert details.upper_bound == 2.0**-_MAX_LEVEL
    assert details.swap_regret_bound == 2.0 / 2**_MAX_LEVEL


def test_worst_case_and_bounds():
    # every outcome the opposite of a certain prediction
    y, p = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    value, details = soft_binned_cdl(y, p, return_details=True)
    assert value == pytest.approx(scdl_reference(y, p, np.ones(2), max_level=6))
    assert details.m == 4 and value == pytest.approx(0.375)
    # SCDL_2 <= 1/2, so SCDL <= 1/2 always
    assert soft_binned_cdl(y, p, m=2) <= 0.5


def test_integer_weights_equal_repetition():
    rng = np.random.default_rng(1)
    for _ in range(50):
        y, p, _ = random_case(rng, int(rng.integers(1, 30)))
        w = rng.integers(0, 4, y.shape[0]).astype(float)
        w[0] += 1
        yr, pr = repeat_rows(y, p, w)
        v, d = details_of(y, p, w)
        vr, dr = details_of(yr, pr, None)
        assert v == pytest.approx(vr, abs=1e-12)
        assert d.m == dr.m
        assert soft_binned_cdl(y, p, sample_weight=w, m=5) == pytest.approx(
            soft_binned_cdl(yr, pr, m=5), abs=1e-12
        )


def test_invariances():
    rng = np.random.default_rng(2)
    for _ in range(20):
        n = int(rng.integers(1, 80))
        y, p, w = random_case(rng, n)
        v = soft_binned_cdl(y, p, sample_weight=w)
        perm = rng.permutation(n)
        assert soft_binned_cdl(y[perm], p[perm], sample_weight=w[perm]) == (
            pytest.approx(v, abs=1e-12)
        )
        assert soft_binned_cdl(y, p, sample_weight=7.5 * w) == pytest.approx(
            v, abs=1e-12
        )
        assert 0.0 <= v <= 0.5


def test_zero_weight_rows_are_ignored():
    rng = np.random.default_rng(3)
    y, p, _ = random_case(rng, 30)
    w = np.r_[np.ones(30), np.zeros(5)]
    y2, p2 = np.r_[y, np.ones(5)], np.r_[p, rng.random(5)]
    assert soft_binned_cdl(y2, p2, sample_weight=w) == pytest.approx(
        soft_binned_cdl(y, p), abs=1e-12
    )


def test_multiclass_top_label():
    rng = np.random.default_rng(4)
    P = rng.dirichlet(np.ones(4), 200)
    y = rng.integers(0, 4, 200)
    conf, correct = P.max(axis=1), (P.argmax(axis=1) == y).astype(int)
    assert soft_binned_cdl(y, P) == pytest.approx(
        soft_binned_cdl(correct, conf), abs=1e-15
    )
    with pytest.raises(ValueError, match="multiclass"):
        soft_binned_cdl(y, P, multiclass="raise")


def test_predict_proba_and_labels():
    # (n, 2) input uses column 1; string labels need pos_label
    p = np.array([0.2, 0.7, 0.9, 0.4])
    y = np.array(["no", "yes", "yes", "no"])
    expected = soft_binned_cdl([0, 1, 1, 0], p)
    assert soft_binned_cdl(y, np.c_[1 - p, p], pos_label="yes") == expected


def test_near_calibrated_large_sample():
    # the dense levels resolve m* for a sample of a calibrated predictor
    rng = np.random.default_rng(5)
    p = rng.random(20000)
    y = (rng.random(20000) < p).astype(int)
    value, details = soft_binned_cdl(y, p, return_details=True)
    assert details.exact and 1 / details.m <= value < 2 / details.m
    assert details.levels[-1] == 2 * details.m  # no sparse level was needed
    for dense_levels in [(4,), (4, 8)]:
        other = _self_balancing_scdl(_RowSource(y.astype(float), p, np.ones(20000)), dense_levels)
        assert other.value == pytest.approx(value, abs=1e-12)
        assert other.m == details.m


@over_cases("case", random_cases(13, 50, max_n=40))
def test_below_cdl(case):
    # 000 Lemma 3.4: SCDL_m <= CDL for every m, hence SCDL <= CDL
    y, p, w = case
    cdl = calibration_decision_loss(y, p, sample_weight=w)
    assert soft_binned_cdl(y, p, sample_weight=w) <= cdl + 1e-9
    for m in [2, 3, 16, 1000]:
        assert soft_binned_cdl(y, p, sample_weight=w, m=m) <= cdl + 1e-9


@pytest.mark.parametrize(
    "m, error, match",
    [
        (0, ValueError, "m must be in"),
        (-2, ValueError, "m must be in"),
        (2**41, ValueError, "m must be in"),
        (2.0, TypeError, "positive integer"),
        ("4", TypeError, "positive integer"),
        (True, TypeError, "positive integer"),
    ],
)
def test_bad_m(m, error, match):
    with pytest.raises(error, match=match):
        soft_binned_cdl([0, 1], [0.2, 0.8], m=m)


def test_numpy_integer_m():
    assert soft_binned_cdl([0, 1], [0.2, 0.6], m=np.int64(8)) == soft_binned_cdl(
        [0, 1], [0.2, 0.6], m=8
    )


data = st.integers(1, 30).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 1), min_size=n, max_size=n),
        st.lists(
            st.one_of(st.floats(0, 1), st.sampled_from([0.0, 0.25, 0.5, 1.0])),
            min_size=n,
            max_size=n,
        ),
        st.lists(st.integers(1, 5), min_size=n, max_size=n),
    )
)


@settings(max_examples=100, deadline=None)
@given(data)
def test_property_bounds_and_weights(case):
    y, p, w = (np.asarray(a, dtype=float) for a in case)
    value, details = details_of(y, p, w)
    assert 0.0 <= value <= 0.5
    assert np.all(np.diff(details.scdl_m) >= -1e-12)
    if details.exact:
        assert 1 / details.m <= value < 2 / details.m
    # integer weights are repetitions, and scaling them changes nothing
    yr, pr = repeat_rows(y, p, w)
    assert soft_binned_cdl(yr, pr) == pytest.approx(value, abs=1e-12)
    assert soft_binned_cdl(y, p, sample_weight=3 * w) == pytest.approx(value, abs=1e-12)


@settings(max_examples=50, deadline=None)
@given(data, st.integers(1, 200))
def test_property_given_m(case, m):
    y, p, w = (np.asarray(a, dtype=float) for a in case)
    assert soft_binned_cdl(y, p, sample_weight=w, m=m) == pytest.approx(
        scdl_m_reference(y, p, w, m), abs=1e-9
    )
