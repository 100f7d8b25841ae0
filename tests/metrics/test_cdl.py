import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skcal import (
    calibration_decision_loss,
    calibration_fixed_decision_loss,
    maximum_swap_regret,
)
from skcal._grouped import group
from skcal.metrics._cdl import _profile_hull, _upper_hull

from cases import over_cases, random_case, random_cases, repeat_rows
from reference_cdl import (
    _cdl_groups,
    best_responses_reference,
    cdl_dense_lp,
    cdl_sparse_lp,
    cdl_task_search_bruteforce,
    cdl_three_action_bruteforce,
    cfdl_bruteforce,
    decision_profile_reference,
    prediction_swap_regret,
    task_swap_regret_reference,
)

# HiGHS solves the reference LP to its default feasibility tolerance (1e-7).
LP_TOL = 1e-7


def lemma22_function(v, pi, q, mu):
    """The function of mu in 000 Lemma 2.2, with the paper's 1{p <= mu}, 1{p > mu}."""
    return np.sum(
        pi * (np.maximum(q - mu, 0) * (v <= mu) + np.maximum(mu - q, 0) * (v > mu))
    )


@over_cases("case", random_cases(10, 300, max_n=60))
def test_matches_dense_lp(case):
    y, p, w = case
    assert calibration_decision_loss(y, p, sample_weight=w) == pytest.approx(
        cdl_dense_lp(y, p, w), abs=LP_TOL
    )


def _large_case(seed, n, flavour):
    rng = np.random.default_rng(seed)
    p = rng.random(n)
    shift = {"near": 0.0, "shifted": 0.1, "bad": None}[flavour]
    rate = 1 - p if shift is None else np.clip(p + shift, 0, 1)
    y = (rng.random(n) < rate).astype(float)
    return y, p, rng.exponential(size=n)


@pytest.mark.parametrize("flavour", ["near", "shifted", "bad"])
@pytest.mark.parametrize("n", [300, 1000, pytest.param(3000, marks=pytest.mark.slow)])
def test_matches_sparse_lp_at_scale(n, flavour):
    y, p, w = _large_case(n, n, flavour)
    assert calibration_decision_loss(y, p, sample_weight=w) == pytest.approx(
        cdl_sparse_lp(y, p, w), abs=LP_TOL
    )


@over_cases("case", random_cases(21, 100, max_n=60))
def test_sparse_lp_matches_dense_lp(case):
    # the two references agree with each other, not only with the closed form
    y, p, w = case
    assert cdl_sparse_lp(y, p, w) == pytest.approx(cdl_dense_lp(y, p, w), abs=LP_TOL)


@over_cases("case", random_cases(11, 200, max_n=12))
def test_matches_three_action_bruteforce(case):
    y, p, w = case
    assert calibration_decision_loss(y, p, sample_weight=w) == pytest.approx(
        cdl_three_action_bruteforce(y, p, w), abs=1e-12
    )


@over_cases("case", random_cases(12, 300, max_n=60))
def test_fixed_decision_loss_matches_bruteforce(case):
    y, p, w = case
    value, details = calibration_fixed_decision_loss(
        y, p, sample_weight=w, return_details=True
    )
    mu = details.threshold
    assert value == pytest.approx(cfdl_bruteforce(y, p, w), abs=1e-12)
    # the threshold attains the supremum, or it is approached from below
    v, pi, q = _cdl_groups(y, p, w)
    attained = max(
        lemma22_function(v, pi, q, mu),
        lemma22_function(v, pi, q, np.nextafter(mu, -np.inf)),
    )
    assert attained == pytest.approx(value, abs=1e-12)


@over_cases("case", random_cases(13, 300, max_n=60))
def test_details_describe_a_maximising_task(case):
    y, p, w = case
    value, details = calibration_decision_loss(
        y, p, sample_weight=w, return_details=True
    )
    utility = details.utility
    assert utility.shape[1] == 2 and 2 <= np.unique(utility, axis=0).shape[0] <= 3
    assert np.all((utility >= 0) & (utility <= 1))
    a, b = details.thresholds
    assert 0 <= a <= 0.5 <= b <= 1
    # the reported task attains the CDL: each reported response is a best
    # response, and the action swap regret of the decision maker taking it,
    # from the definition, is the value (with the best swaps and the reported)
    v, pi, q = _cdl_groups(y, p, w)
    np.testing.assert_array_equal(details.predictions, v)
    best = best_responses_reference(utility, v, tol=1e-12)
    assert all(r in ok for r, ok in zip(details.response.tolist(), best))
    response_of = dict(zip(v.tolist(), details.response.tolist()))
    yi = y.astype(int)
    assert task_swap_regret_reference(utility, response_of, yi, p, w) == pytest.approx(
        value, abs=1e-12
    )
    assert task_swap_regret_reference(
        utility, response_of, yi, p, w, swap=details.swap
    ) == pytest.approx(value, abs=1e-12)
    assert prediction_swap_regret(utility, v, pi, q) == pytest.approx(value, abs=1e-12)
    # 000 Lemma 2.2
    s = calibration_fixed_decision_loss(y, p, sample_weight=w)
    assert details.lower_bound == s
    assert details.upper_bound == 2 * s
    assert s - 1e-15 <= value <= 2 * s + 1e-15
    assert lemma22_function(v, pi, q, details.threshold) <= s + 1e-15


def test_reported_task_attains_cdl_with_action_swaps():
    # Before: the three-action task needed one swap per prediction; with one
    # swap per action (the definition) it fell short, here 0.0 against 0.25.
    y, p, w = np.array([0, 1]), np.array([0.25, 0.3]), np.array([3.0, 1.0])
    value, details = calibration_decision_loss(y, p, sample_weight=w, return_details=True)
    # by hand: the 0.25 rows (mass 3/4, outcome 0) gain at most
    # (3/4) (1/3) = 1/4 from a swap, when their action is (2/3, 1) beside (1, 0)
    assert value == pytest.approx(0.25, abs=1e-15)
    response_of = dict(zip(details.predictions.tolist(), details.response.tolist()))
    attained = task_swap_regret_reference(details.utility, response_of, y, p, w)
    assert attained == pytest.approx(value, abs=1e-12)


def test_no_small_task_exceeds_cdl_by_exhaustive_search():
    # tiny inputs: every task of at most 3 actions on a grid of utilities,
    # every tie choice; the closed form is the supremum, so none exceeds it,
    # and the reported task reaches it
    rng = np.random.default_rng(15)
    for _ in range(4):
        n = int(rng.integers(1, 4))
        y = rng.integers(0, 2, n)
        p = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], n)
        w = rng.integers(1, 3, n).astype(float)
        value = calibration_decision_loss(y, p, sample_weight=w)
        assert cdl_task_search_bruteforce(y, p, w, levels=3) <= value + 1e-12


def test_no_task_exceeds_cdl():
    # CDL is a supremum over tasks: random tasks with up to 8 actions stay below
    rng = np.random.default_rng(14)
    for _ in range(200):
        y, p, w = random_case(rng, int(rng.integers(1, 40)))
        value = calibration_decision_loss(y, p, sample_weight=w)
        v, pi, q = _cdl_groups(y, p, w)
        for _ in range(20):
            utility = rng.random((int(rng.integers(2, 9)), 2))
            assert prediction_swap_regret(utility, v, pi, q) <= value + 1e-12


@over_cases("case", random_cases(15, 300, max_n=60))
def test_relations_to_ece_and_k2(case):
    # 000 Lemma 2.1: ECE^2 <= CDL <= 2 ECE; 003 Theorem 4.1 / Lemma 2.19:
    # K2 / T (the quadratic rule's swap regret) <= CDL
    y, p, w = case
    value = calibration_decision_loss(y, p, sample_weight=w)
    v, pi, q = _cdl_groups(y, p, w)
    ece = np.sum(pi * np.abs(q - v))
    k2 = np.sum(pi * (q - v) ** 2)
    assert ece**2 - 1e-15 <= value <= 2 * ece + 1e-15
    assert k2 - 1e-15 <= value
    assert 0 <= value <= 1


def test_calibrated_is_exactly_zero():
    # q_k = v_k at every distinct prediction, including the end points
    y = np.array([0, 0, 0, 1, 0, 1, 1, 0, 1.0])
    p = np.array([0, 0.25, 0.25, 0.25, 0.5, 0.5, 0.75, 0.75, 1.0])
    w = np.array([2, 1, 2, 1, 3, 3, 3, 1, 5.0])
    assert calibration_decision_loss(y, p, sample_weight=w) == 0.0
    assert calibration_fixed_decision_loss(y, p, sample_weight=w) == 0.0
    assert maximum_swap_regret(y, p, sample_weight=w) == 0.0
    assert calibration_decision_loss([1], [1.0]) == 0.0


def test_closed_forms():
    # one prediction 1/2 with outcome rate q: the threshold task at 1/2 gives
    # 2 |q - 1/2| = 2 ECE, the upper bound of 000 Lemma 2.1
    y = np.array([1, 1, 0, 1.0])
    assert calibration_decision_loss(y, np.full(4, 0.5)) == pytest.approx(0.5)
    # 003 Example 4.2(a): outcome always 1, prediction v >= 1/2: the threshold
    # task at v with kink 1 / v gives (1 - v) / v
    for v in (0.5, 0.6, 0.9, 0.99):
        assert calibration_decision_loss(np.ones(3), np.full(3, v)) == pytest.approx(
            (1 - v) / v, abs=1e-14
        )
    # always wrong with certainty: the whole utility range is lost
    assert calibration_decision_loss([1, 0], [0.0, 1.0]) == pytest.approx(1.0)


def test_finite_sample_of_calibrated_predictor():
    # 000 Example 2: distinct predictions from a calibrated predictor on
    # [1/3, 2/3]; the quadratic task alone already loses at least 1/9
    rng = np.random.default_rng(16)
    p = rng.uniform(1 / 3, 2 / 3, 2000)
    y = (rng.random(2000) < p).astype(float)
    assert calibration_decision_loss(y, p) >= 1 / 9


def test_integer_weights_equal_repetition():
    rng = np.random.default_rng(17)
    for _ in range(50):
        y, p, _ = random_case(rng, int(rng.integers(1, 30)))
        w = rng.integers(0, 4, y.shape[0]).astype(float)
        w[0] += 1
        yr, pr = repeat_rows(y, p, w)
        for f in (calibration_decision_loss, calibration_fixed_decision_loss):
            assert f(y, p, sample_weight=w) == pytest.approx(f(yr, pr), abs=1e-14)
        assert maximum_swap_regret(y, p, sample_weight=w) == pytest.approx(
            maximum_swap_regret(yr, pr), abs=1e-12
        )


def test_invariances():
    rng = np.random.default_rng(18)
    for _ in range(20):
        n = int(rng.integers(1, 60))
        y, p, w = random_case(rng, n)
        v = calibration_decision_loss(y, p, sample_weight=w)
        perm = rng.permutation(n)
        assert calibration_decision_loss(
            y[perm], p[perm], sample_weight=w[perm]
        ) == pytest.approx(v, abs=1e-14)
        assert calibration_decision_loss(y, p, sample_weight=7.5 * w) == pytest.approx(
            v, abs=1e-14
        )
        # relabelling the outcomes and mirroring the predictions is a symmetry
        assert calibration_decision_loss(
            1 - y, 1 - p, sample_weight=w
        ) == pytest.approx(v, abs=1e-12)
        # zero-weight rows are not part of the distribution
        y0 = np.concatenate([y, [1.0, 0.0]])
        p0 = np.concatenate([p, rng.random(2)])
        w0 = np.concatenate([w, [0.0, 0.0]])
        assert calibration_decision_loss(y0, p0, sample_weight=w0) == pytest.approx(
            v, abs=1e-14
        )


def test_msr_is_total_weight_times_cdl():
    rng = np.random.default_rng(19)
    for _ in range(30):
        y, p, w = random_case(rng, int(rng.integers(1, 50)))
        cdl = calibration_decision_loss(y, p, sample_weight=w)
        assert maximum_swap_regret(y, p, sample_weight=w) == pytest.approx(
            w.sum() * cdl, rel=1e-12, abs=1e-14
        )
        assert maximum_swap_regret(y, p) == pytest.approx(
            y.shape[0] * calibration_decision_loss(y, p), rel=1e-12, abs=1e-14
        )


def test_multiclass_top_label_matches_explicit():
    rng = np.random.default_rng(20)
    P = rng.dirichlet(np.ones(4), size=80)
    labels = rng.integers(0, 4, 80)
    conf = P.max(axis=1)
    correct = (P.argmax(axis=1) == labels).astype(float)
    for f in (
        calibration_decision_loss,
        calibration_fixed_decision_loss,
        maximum_swap_regret,
    ):
        assert f(labels, P) == pytest.approx(f(correct, conf), abs=1e-15)
    with pytest.raises(ValueError, match="multiclass"):
        calibration_decision_loss(labels, P, multiclass="raise")


def test_pos_label_and_predict_proba_input():
    y = np.array(["no", "yes", "yes", "no", "yes"])
    p = np.array([0.1, 0.4, 0.8, 0.7, 0.9])
    expected = calibration_decision_loss((y == "yes").astype(float), p)
    assert calibration_decision_loss(y, p, pos_label="yes") == expected
    assert calibration_decision_loss(
        y, np.column_stack([1 - p, p]), pos_label="yes"
    ) == pytest.approx(expected, abs=1e-15)
    with pytest.raises(ValueError, match="pos_label"):
        calibration_decision_loss(y, p)


def test_does_not_mutate_inputs():
    y = np.array([0, 1, 1, 0])
    p = np.array([0.3, 0.1, 0.9, 0.5])
    w = np.array([1.0, 2.0, 1.0, 1.0])
    copies = y.copy(), p.copy(), w.copy()
    calibration_decision_loss(y, p, sample_weight=w, return_details=True)
    for a, b in zip((y, p, w), copies):
        np.testing.assert_array_equal(a, b)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(
                st.sampled_from([0.0, 0.5, 1.0, 0.25]),
                st.floats(0, 1, allow_subnormal=False),
            ),
            st.booleans(),
            st.sampled_from([0.0, 1.0, 2.0, 0.3]),
        ),
        min_size=1,
        max_size=25,
    ).filter(lambda rows: sum(r[2] for r in rows) > 0)
)
def test_property_matches_dense_lp(rows):
    p = np.array([r[0] for r in rows])
    y = np.array([float(r[1]) for r in rows])
    w = np.array([r[2] for r in rows])
    value = calibration_decision_loss(y, p, sample_weight=w)
    assert value == pytest.approx(cdl_dense_lp(y, p, w), abs=LP_TOL)
    s = calibration_fixed_decision_loss(y, p, sample_weight=w)
    assert s - 1e-15 <= value <= 2 * s + 1e-15


@pytest.mark.parametrize("tie", [None, "lowest", "highest"])
@pytest.mark.parametrize("shift", [0.0, 0.15])
def test_profile_hull_over_many_blocks(tie, shift):
    # more points than one block of the sweep's filter (1024), so the hull is
    # built from several filtered blocks; with a tie of both outcomes (a group
    # of rate 1/2) at the lowest or the highest prediction, the first sweep
    # stops at once or after every block and starts over with the rate stream
    rng = np.random.default_rng(2026)
    n = 5000
    p = rng.random(n)
    y = (rng.random(n) < np.clip(p + shift, 0, 1)).astype(float)
    if tie is not None:
        j = int(np.argmin(p) if tie == "lowest" else np.argmax(p))
        p = np.append(p, p[j])
        y = np.append(y, 1.0 - y[j])
    statistic = group(y, p, np.ones(p.shape[0]))
    assert np.any((statistic.positives > 0) & (statistic.positives < statistic.weights)) == (
        tie is not None
    )
    x, h, _ = decision_profile_reference(statistic)
    hull_x, hull_h, h_max, x_max = _profile_hull(statistic)
    # the same vertices as the monotone chain over every stored point; the
    # values up to the rounding of two running sums over 5000 terms (the
    # reference's differ from the sweep's by about 1e-14 here)
    ref = _upper_hull(x, h)
    np.testing.assert_array_equal(hull_x, x[ref])
    np.testing.assert_allclose(hull_h, h[ref], rtol=0, atol=1e-13)
    assert h_max == pytest.approx(h.max(), abs=1e-13)
    assert h[np.searchsorted(x, x_max)] == pytest.approx(h_max, abs=1e-13)


@over_cases("case", random_cases(12, 300, max_n=60))
def test_profile_hull_matches_the_stored_profile(case):
    # the one-sweep hull against the profile by difference arrays: the same
    # maximum, a majorant of every point, through points of the profile,
    # and the same value of the majorant at 1/2 (up to rounding)
    y, p, w = case
    statistic = group(y, p, w)
    x, h, _ = decision_profile_reference(statistic)
    hull_x, hull_h, h_max, x_max = _profile_hull(statistic)
    assert h_max == pytest.approx(h.max(), abs=1e-15)
    assert h[np.searchsorted(x, x_max)] == pytest.approx(h_max, abs=1e-15)
    assert np.all(np.isin(hull_x, x))
    assert np.all(np.interp(x, hull_x, hull_h) >= h - 1e-15)
    ref = _upper_hull(x, h)
    assert np.interp(0.5, hull_x, hull_h) == pytest.approx(
        np.interp(0.5, x[ref], h[ref]), abs=1e-15
    )



def test_infinite_weight_sums_are_refused():
    # a statistic whose weight sums overflowed (a merged sketch of huge
    # weights) or hold a NaN: its total is not finite, and the sweep is
    # never reached
    from skcal._grouped import GroupedStatistic
    from skcal.metrics._cdl import cdl_core

    values = np.array([0.1, 0.5, 0.9])
    for bad in (np.inf, np.nan):
        statistic = GroupedStatistic(
            values, np.array([1.0, bad, 2.0]), np.array([0.0, 1.0, 2.0])
        )
        with pytest.raises(ValueError, match="needs finite weights"):
            cdl_core(statistic)


def test_rates_are_ordered_stably():
    # the sweep's rate stream: groups by rate, ties in index order (one sort
    # of prefix keys, or a stable argsort when distinct rates share a prefix
    # out of order): the order of np.argsort(kind="stable") exactly
    from skcal._kernels._interval import _by_rate

    rng = np.random.default_rng(8)
    ulp = 2.0**-54  # the spacing of doubles in [0.25, 0.5)
    for i in range(200):
        m = int(rng.integers(1, 3000)) if i > 2 else i + 1
        kind = i % 4
        if kind == 0:
            rates = rng.random(m) + 1e-300
        elif kind == 1:
            # groups of a few rows: few distinct rates, many ties
            rates = rng.integers(1, 4, m) / rng.integers(4, 7, m)
        elif kind == 2:
            # distinct rates sharing prefixes, in any order
            rates = 0.3 + rng.integers(0, 2**14, m) * ulp
        else:
            rates = np.sort(0.3 + rng.integers(0, 2**14, m) * ulp)
        np.testing.assert_array_equal(_by_rate(rates), np.argsort(rates, kind="stable"))
