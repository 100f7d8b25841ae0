"""Utility calibration error, its eCDF and its display (paper 001)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skcal import (
    ClassWise,
    ClassWiseFamily,
    Linear,
    LinearFamily,
    RankFamily,
    TopClass,
    TopK,
    TopKFamily,
    UtilityFamily,
    cutoff_calibration_error,
    utility_calibration_ecdf,
    utility_calibration_error,
)
from skcal._kernels._interval import max_abs_interval, max_abs_interval_rows

from cases import over_cases, random_cases
from reference_multiclass import (
    family_calibration_bruteforce,
    utility_calibration_bruteforce,
)
from test_utilities import random_labels, random_proba, random_spec


def random_weights(rng, n):
    kind = rng.integers(4)
    if kind == 0:
        return np.ones(n)
    if kind == 1:
        return rng.integers(1, 5, n).astype(float)
    if kind == 2:
        return rng.exponential(size=n)
    w = rng.integers(0, 3, n).astype(float)  # zero weights, positive sum
    w[rng.integers(n)] += 1.0
    return w


def weighted_cases(seed, count, max_n=30, max_C=5):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        n = [1, 2, 3][i] if i < 3 else int(rng.integers(1, max_n + 1))
        C = int(rng.integers(2, max_C + 1))
        P = random_proba(rng, n, C)
        out.append((P, random_labels(rng, P), random_weights(rng, n), rng))
    return out


def check_details(P, y, w, value, details):
    """The reported interval attains the value, with the reported sign."""
    v, realised = details["utility"].evaluate(P, y)
    a, b = details["interval"]
    inside = (v >= a) & (v <= b)
    total = (w * (realised - v))[inside].sum() / w.sum()
    assert abs(total) == pytest.approx(value, abs=1e-12)
    if value > 1e-12:
        assert details["sign"] == np.sign(total)
    assert details["errors"].max() == value
    utilities = details["utilities"]
    assert details["utility"] is utilities[int(np.argmax(details["errors"]))]


# --- against the brute force ---------------------------------------------------------


@over_cases("P, y, w, rng", weighted_cases(0, 300))
def test_single_utility_matches_bruteforce(P, y, w, rng):
    spec, utility = random_spec(rng, P.shape[1])
    value, details = utility_calibration_error(
        y, P, utility, sample_weight=w, labels=np.arange(P.shape[1]), return_details=True
    )
    assert value == pytest.approx(utility_calibration_bruteforce(spec, P, y, w), abs=1e-12)
    assert 0.0 <= value <= 2.0
    check_details(P, y, w, value, details)


@over_cases("P, y, w, rng", weighted_cases(1, 100))
def test_family_matches_bruteforce(P, y, w, rng):
    C = P.shape[1]
    pairs = [random_spec(rng, C) for _ in range(int(rng.integers(1, 7)))]
    value, details = utility_calibration_error(
        y,
        P,
        UtilityFamily([u for _, u in pairs]),
        sample_weight=w,
        labels=np.arange(C),
        return_details=True,
    )
    expected = [utility_calibration_bruteforce(spec, P, y, w) for spec, _ in pairs]
    np.testing.assert_allclose(details["errors"], expected, atol=1e-12)
    assert value == pytest.approx(max(expected), abs=1e-12)
    check_details(P, y, w, value, details)


def named_specs(name, C):
    class_wise = [("class-wise", c) for c in range(C)]
    top_k = [("top-k", k) for k in range(1, C + 1)]
    return {
        "top-class": [("top-class", None)],
        "class-wise": class_wise,
        "top-k": top_k,
        "comb": class_wise + top_k,
    }[name]


@pytest.mark.parametrize("name", ["top-class", "class-wise", "top-k", "comb"])
@over_cases("P, y, w, rng", weighted_cases(2, 40))
def test_named_families_match_bruteforce(name, P, y, w, rng):
    C = P.shape[1]
    value = utility_calibration_error(y, P, name, sample_weight=w, labels=np.arange(C))
    expected = family_calibration_bruteforce(named_specs(name, C), P, y, w)
    assert value == pytest.approx(expected, abs=1e-12)


def test_comb_is_the_union_of_class_wise_and_top_k():
    rng = np.random.default_rng(3)
    P = random_proba(rng, 50, 6)
    y = random_labels(rng, P)
    labels = np.arange(6)
    comb = utility_calibration_error(y, P, "comb", labels=labels)
    union = UtilityFamily([ClassWiseFamily(), TopKFamily()])
    assert comb == utility_calibration_error(y, P, union, labels=labels)
    assert comb == max(
        utility_calibration_error(y, P, "class-wise", labels=labels),
        utility_calibration_error(y, P, "top-k", labels=labels),
    )


# --- identities with the cutoff calibration error ----------------------------------


@over_cases("P, y, w, rng", weighted_cases(4, 100))
def test_top_class_is_cutoff_of_confidence_and_correctness(P, y, w, rng):
    C = P.shape[1]
    labels = np.arange(C)
    value, details = utility_calibration_error(
        y, P, sample_weight=w, labels=labels, return_details=True
    )
    confidence = P.max(axis=1)
    correct = (P.argmax(axis=1) == y).astype(float)
    cutoff, found = cutoff_calibration_error(
        correct, confidence, sample_weight=w, pos_label=1, return_details=True
    )
    sign = found.sign
    assert value == pytest.approx(cutoff, abs=1e-14)
    if value > 1e-12:
        assert details["sign"] == sign
    check_details(P, y, w, value, details)
    assert value == utility_calibration_error(y, P, TopK(1), sample_weight=w, labels=labels)


@over_cases("case", random_cases(5, 200, max_n=40))
def test_binary_class_wise_is_cutoff_of_p(case):
    y, p, w = case
    labels = [0, 1]
    cutoff = cutoff_calibration_error(y, p, sample_weight=w, pos_label=1)
    positive = utility_calibration_error(y, p, ClassWise(1), sample_weight=w, labels=labels)
    assert positive == pytest.approx(cutoff, abs=1e-14)
    # the two columns of a binary problem carry the same information
    both = utility_calibration_error(y, p, "class-wise", sample_weight=w, labels=labels)
    assert both == pytest.approx(cutoff, abs=1e-12)
    # (n, 2) input is the same as the 1-D probability of the second class
    P = np.column_stack([1 - p, p])
    assert utility_calibration_error(
        y, P, ClassWise(1), sample_weight=w, labels=labels
    ) == pytest.approx(positive, abs=1e-15)


# --- invariances, edge cases ----------------------------------------------------------


def test_integer_weights_equal_repetition():
    rng = np.random.default_rng(6)
    for _ in range(40):
        n, C = int(rng.integers(1, 25)), int(rng.integers(2, 6))
        P = random_proba(rng, n, C)
        y = random_labels(rng, P)
        w = rng.integers(0, 4, n).astype(float)
        w[0] += 1
        utility = UtilityFamily(["comb", TopClass()] + [random_spec(rng, C)[1] for _ in range(3)])
        weighted = utility_calibration_error(y, P, utility, sample_weight=w, labels=np.arange(C))
        reps = w.astype(int)
        repeated = utility_calibration_error(
            np.repeat(y, reps), np.repeat(P, reps, axis=0), utility, labels=np.arange(C)
        )
        assert weighted == pytest.approx(repeated, abs=1e-12)


def test_invariances_with_continuous_predictions():
    rng = np.random.default_rng(7)
    C = 7
    P = rng.dirichlet(np.ones(C), size=300)
    y = np.array([rng.choice(C, p=p) for p in P])
    w = rng.exponential(size=300)
    family = UtilityFamily(["comb"] + LinearFamily(C).sample(20, 0).members(C))
    value = utility_calibration_error(y, P, family, sample_weight=w)
    perm = rng.permutation(300)
    assert utility_calibration_error(y[perm], P[perm], family, sample_weight=w[perm]) == (
        pytest.approx(value, abs=1e-14)
    )
    assert utility_calibration_error(y, P, family, sample_weight=3.5 * w) == pytest.approx(
        value, abs=1e-14
    )


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 20).flatmap(
        lambda n: st.tuples(
            st.lists(st.lists(st.integers(0, 4), min_size=3, max_size=3), min_size=n, max_size=n),
            st.lists(st.integers(0, 2), min_size=n, max_size=n),
            st.lists(st.integers(0, 3), min_size=n, max_size=n),
            st.randoms(use_true_random=False),
        )
    )
)
def test_property_order_and_scale_invariance(data):
    counts, y, weights, random = data
    counts = np.array(counts) + np.eye(3, dtype=int)[np.array(y)]  # no empty rows
    P = counts / counts.sum(axis=1, keepdims=True)
    y = np.array(y)
    w = np.array(weights, dtype=float) + 0.5
    value = utility_calibration_error(y, P, "comb", sample_weight=w, labels=[0, 1, 2])
    assert 0.0 <= value <= 2.0
    perm = list(range(len(y)))
    random.shuffle(perm)
    assert utility_calibration_error(
        y[perm], P[perm], "comb", sample_weight=2 * w[perm], labels=[0, 1, 2]
    ) == pytest.approx(value, abs=1e-14)


def test_single_row_and_single_class():
    P = np.array([[0.25, 0.5, 0.25]])
    # one atom: the only interval holds it, so UC = |u(p, e_y) - v(p)|
    assert utility_calibration_error([2], P, labels=[0, 1, 2]) == 0.5
    assert utility_calibration_error([1], P, labels=[0, 1, 2]) == 0.5
    assert utility_calibration_error([1], P, Linear([1, -1, 0]), labels=[0, 1, 2]) == 0.75
    # a single class observed: class-wise errors are the mean shortfall of p_c
    P = np.array([[0.5, 0.5], [0.25, 0.75]])
    assert utility_calibration_error([1, 1], P, ClassWise(1)) == 0.375


def test_perfectly_calibrated_is_zero():
    # each distinct prediction occurs with exactly its class frequencies
    P = np.array([[0.5, 0.25, 0.25]] * 4 + [[0.0, 0.0, 1.0]])
    y = np.array([0, 0, 1, 2, 2])
    for utility in ("top-class", "class-wise", "top-k", "comb"):
        assert utility_calibration_error(y, P, utility) == pytest.approx(0.0, abs=1e-15)


def test_labels():
    P = np.array([[0.5, 0.25, 0.25], [0.125, 0.75, 0.125], [0.25, 0.25, 0.5]])
    expected = utility_calibration_error([0, 1, 1], P, "comb", labels=[0, 1, 2])
    named = utility_calibration_error(["a", "b", "b"], P, "comb", labels=["a", "b", "c"])
    assert named == expected
    # all classes observed: the sorted labels name the columns
    assert utility_calibration_error(["b", "c", "a"], P, "comb") == (
        utility_calibration_error([1, 2, 0], P, "comb")
    )
    # classes absent from y_true: the columns are ambiguous (they could be
    # classes [0, 1, 2] or [1, 2, 3]), so labels= is required
    with pytest.raises(ValueError, match="ambiguous; pass labels="):
        utility_calibration_error([0, 1, 1], P, "comb")
    with pytest.raises(ValueError, match="ambiguous; pass labels="):
        utility_calibration_error([1, 2, 2], P, "comb")
    with pytest.raises(ValueError, match="pass labels="):
        utility_calibration_error(["a", "b", "b"], P)
    with pytest.raises(ValueError, match="not in labels"):
        utility_calibration_error(["a", "b", "z"], P, labels=["a", "b", "c"])
    with pytest.raises(ValueError, match="labels has 2 entries"):
        utility_calibration_error([0, 1, 1], P, labels=[0, 1])
    # binary, 1-D: the probability of the second label
    p = np.array([0.25, 0.5, 1.0])
    assert utility_calibration_error(["no", "yes", "yes"], p, ClassWise(1)) == pytest.approx(
        cutoff_calibration_error(["no", "yes", "yes"], p, pos_label="yes")
    )


@pytest.mark.parametrize(
    "y_true, y_prob, kwargs, error, match",
    [
        ([0, 1], [[0.5, 0.6], [0.5, 0.5]], {}, ValueError, "row 0 sums to"),
        ([0, 1], [[-0.5, 1.5], [0.5, 0.5]], {}, ValueError, "outside \\[0, 1\\]"),
        ([0, 1], [[np.nan, 1.0], [0.5, 0.5]], {}, ValueError, "NaN"),
        ([0, 1], [1.5, 0.5], {}, ValueError, "outside"),
        ([0, 1], [[0.5], [0.5]], {}, ValueError, "single column"),
        ([0, 1], np.full((2, 2, 2), 0.5), {}, ValueError, "y_prob"),
        ([0, 1, 1], [[0.5, 0.5], [0.5, 0.5]], {}, ValueError, "inconsistent"),
        ([], np.empty((0, 2)), {}, ValueError, "empty"),
        ([0, 1], [[0.5, 0.5]] * 2, {"utility": "nope"}, ValueError, "Unknown utility"),
        ([0, 1], [[0.5, 0.5]] * 2, {"utility": "linear"}, ValueError, "continuous family"),
        ([0, 1], [[0.5, 0.5]] * 2, {"utility": 3}, TypeError, "utility must be"),
        ([0, 1], [[0.5, 0.5]] * 2, {"utility": LinearFamily(2)}, TypeError, "continuous"),
        ([0, 1], [[0.5, 0.5]] * 2, {"utility": Linear([1, 0, 0])}, ValueError, "3 payoffs"),
        ([0, 1], [[0.5, 0.5]] * 2, {"utility": TopK(3)}, ValueError, "at least 3"),
        ([0, 1], [[0.5, 0.5]] * 2, {"sample_weight": [1, -1]}, ValueError, "negative"),
        ([0, 1], [[0.5, 0.5]] * 2, {"sample_weight": [1]}, ValueError, "sample_weight"),
    ],
)
def test_bad_input(y_true, y_prob, kwargs, error, match):
    with pytest.raises(error, match=match):
        utility_calibration_error(y_true, y_prob, **kwargs)


def test_inputs_not_mutated():
    rng = np.random.default_rng(8)
    P = random_proba(rng, 30, 4)
    y = random_labels(rng, P)
    w = rng.exponential(size=30)
    copies = P.copy(), y.copy(), w.copy()
    utility_calibration_error(y, P, "comb", sample_weight=w, labels=np.arange(4))
    utility_calibration_ecdf(y, P, "rank", n_utilities=5, sample_weight=w, labels=np.arange(4))
    for before, after in zip(copies, (P, y, w)):
        np.testing.assert_array_equal(before, after)
    p = rng.random(30)
    p_copy = p.copy()
    utility_calibration_error(y > 1, p, "class-wise", sample_weight=w)
    np.testing.assert_array_equal(p, p_copy)


# --- the batched kernel ------------------------------------------------------------


def test_batched_kernel_matches_single_run_kernel():
    rng = np.random.default_rng(9)
    for _ in range(50):
        m, n = int(rng.integers(1, 6)), int(rng.integers(1, 40))
        V = np.round(rng.random((m, n)), int(rng.integers(1, 3)))
        R = rng.normal(size=(m, n))
        w = rng.exponential(size=n)
        order = np.argsort(V, axis=1)
        value, lower, upper = np.empty(m), np.empty(m), np.empty(m)
        sign = np.empty(m, dtype=np.int8)
        max_abs_interval_rows(V, R, w, order, value, lower, upper, sign)
        for k in range(m):
            levels, group = np.unique(V[k], return_inverse=True)
            b = np.bincount(group, weights=w * R[k], minlength=levels.shape[0])
            expected, lo, hi, s = max_abs_interval(b)
            assert value[k] == pytest.approx(expected, abs=1e-12)
            if expected > 1e-12:
                assert (lower[k], upper[k], sign[k]) == (levels[lo], levels[hi], s)


def test_batched_kernel_edge_cases():
    out = np.empty(2), np.empty(2), np.empty(2), np.empty(2, dtype=np.int8)
    empty = np.empty((2, 0))
    max_abs_interval_rows(empty, empty, np.empty(0), np.empty((2, 0), dtype=np.intp), *out)
    assert out[0].tolist() == [0.0, 0.0] and out[3].tolist() == [0, 0]
    V = np.array([[0.3, 0.3, 0.3], [0.1, 0.2, 0.3]])
    R = np.array([[1.0, -1.0, 0.0], [0.0, 0.0, 0.0]])
    max_abs_interval_rows(V, R, np.ones(3), np.argsort(V, axis=1), *out)
    assert out[0].tolist() == [0.0, 0.0] and out[3].tolist() == [0, 0]
    assert out[1].tolist() == out[2].tolist() == [0.3, 0.1]


# --- eCDF -------------------------------------------------------------------------------


@pytest.mark.parametrize("name, family_class", [("linear", LinearFamily), ("rank", RankFamily)])
def test_ecdf_of_sampled_family(name, family_class):
    rng = np.random.default_rng(10)
    C = 5
    P = rng.dirichlet(np.ones(C) / 2, size=200)
    y = np.array([rng.choice(C, p=p) for p in P])
    errors, levels, ecdf = utility_calibration_ecdf(y, P, name, n_utilities=40, random_state=3)
    sampled = family_class(C).sample(40, random_state=3)
    _, details = utility_calibration_error(y, P, sampled, return_details=True)
    np.testing.assert_array_equal(errors, details["errors"])
    np.testing.assert_array_equal(levels, np.unique(errors))
    for level, fraction in zip(levels, ecdf):
        assert fraction == np.mean(errors <= level)
    same = utility_calibration_ecdf(y, P, family_class(C), n_utilities=40, random_state=3)
    np.testing.assert_array_equal(same[0], errors)
    # the default sample size is the paper's M = 1500
    assert utility_calibration_ecdf(y, P, name, random_state=0)[0].shape == (1500,)


def test_ecdf_of_finite_family_and_errors():
    rng = np.random.default_rng(11)
    P = rng.dirichlet(np.ones(4), size=100)
    y = rng.integers(0, 4, 100)
    errors, _, ecdf = utility_calibration_ecdf(y, P, "comb")
    _, details = utility_calibration_error(y, P, "comb", return_details=True)
    np.testing.assert_array_equal(errors, details["errors"])
    assert ecdf[-1] == 1.0
    with pytest.raises(ValueError, match="n_utilities applies"):
        utility_calibration_ecdf(y, P, "class-wise", n_utilities=10)
    with pytest.raises(ValueError, match="n_classes=3"):
        utility_calibration_ecdf(y, P, LinearFamily(3))
    with pytest.raises(ValueError, match="n_utilities must be >= 1"):
        utility_calibration_ecdf(y, P, "linear", n_utilities=0)


def test_label_errors_name_y_proba():
    P = [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]
    with pytest.raises(ValueError, match="labels has 2 entries but y_prob has 3"):
        utility_calibration_error([0, 1], P, labels=[0, 1])
    with pytest.raises(ValueError, match="y_prob has 3 columns, so the class"):
        utility_calibration_error(["a", "b"], P)
