import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from skcal import smooth_calibration_error

from cases import over_cases, random_case, random_cases, repeat_rows
from reference_cutoff import residuals
from reference_smce import smce_isotonic, smce_linprog

LP_TOL = 1e-7  # HiGHS feasibility/optimality tolerances


def grouped_residuals(y, p, w, points):
    """b_k: the residuals b_i summed over the rows predicting points[k]."""
    return np.bincount(
        np.searchsorted(points, p), weights=residuals(y, p, w), minlength=points.size
    )


def check_witness(y, p, w, value, points, witness):
    """The witness is feasible and attains the value (002 eq. (3))."""
    np.testing.assert_array_equal(points, np.unique(p))
    assert np.all(np.abs(witness) <= 1 + 1e-12)
    assert np.all(np.abs(np.diff(witness)) <= np.diff(points) + 1e-12)
    b = grouped_residuals(y, p, w, points)
    assert b @ witness == pytest.approx(value, abs=1e-9)


# hundreds of small cases, then fewer up to n = 200 (ties, 0/1, weights, ...)
CASES = random_cases(0, 300, max_n=40) + random_cases(1, 60, max_n=200)


@over_cases("case", CASES)
def test_matches_linprog(case):
    y, p, w = case
    value, details = smooth_calibration_error(
        y, p, sample_weight=w, return_details=True
    )
    points, witness = details.points, details.witness
    assert value == pytest.approx(smce_linprog(y, p, w), abs=LP_TOL)
    assert smooth_calibration_error(y, p, sample_weight=w) == value
    assert 0.0 <= value <= 1.0 + 1e-12
    check_witness(y, p, w, value, points, witness)


@over_cases("case", CASES[:200])
def test_matches_isotonic_twin(case):
    # |B_K| plus an L1 isotonic regression of the clipped prefix sums (see
    # reference_smce.smce_isotonic): the one-sided walk is the slope trick of
    # that regression, checked here against a program with no walk in it
    y, p, w = case
    assert smooth_calibration_error(y, p, sample_weight=w) == pytest.approx(
        smce_isotonic(y, p, w), abs=LP_TOL
    )


def test_bounds_by_constant_and_free_tests():
    # x = +-1 everywhere is a feasible test, x = sign(b_k) is the unconstrained one
    rng = np.random.default_rng(4)
    for _ in range(200):
        y, p, w = random_case(rng, int(rng.integers(1, 50)))
        b = grouped_residuals(y, p, w, np.unique(p))
        value = smooth_calibration_error(y, p, sample_weight=w)
        assert abs(b.sum()) - 1e-12 <= value <= np.abs(b).sum() + 1e-12


def test_single_point():
    # one distinct prediction: only constant tests, so the value is |E[y] - p|
    y = np.array([1, 1, 0, 1.0])
    value, details = smooth_calibration_error(
        y, np.full(4, 0.5), return_details=True
    )
    points, witness = details.points, details.witness
    assert value == pytest.approx(0.25, abs=1e-15)
    assert points.tolist() == [0.5]
    assert witness.tolist() == [1.0]
    assert smooth_calibration_error([0], [0.3]) == pytest.approx(0.3, abs=1e-15)


def test_calibrated_is_zero_and_extremes_are_one():
    assert smooth_calibration_error([0, 1], [0.0, 1.0]) == 0.0
    assert smooth_calibration_error([1, 1], [0.0, 0.0]) == 1.0
    assert smooth_calibration_error([0, 0], [1.0, 1.0]) == 1.0
    # weights making q(v) = v at every distinct prediction
    v = np.linspace(0, 1, 11)
    y = np.repeat([1.0, 0.0], v.size)
    p = np.tile(v, 2)
    w = np.concatenate([v, 1 - v])
    assert smooth_calibration_error(y, p, sample_weight=w) == pytest.approx(
        0, abs=1e-15
    )


def test_integer_weights_equal_repetition():
    rng = np.random.default_rng(1)
    for _ in range(50):
        y, p, _ = random_case(rng, int(rng.integers(1, 30)))
        w = rng.integers(0, 4, y.shape[0]).astype(float)
        w[0] += 1
        yr, pr = repeat_rows(y, p, w)
        assert smooth_calibration_error(y, p, sample_weight=w) == pytest.approx(
            smooth_calibration_error(yr, pr), abs=1e-12
        )


def test_invariances():
    rng = np.random.default_rng(2)
    for _ in range(20):
        n = int(rng.integers(1, 80))
        y, p, w = random_case(rng, n)
        v = smooth_calibration_error(y, p, sample_weight=w)
        perm = rng.permutation(n)
        assert smooth_calibration_error(
            y[perm], p[perm], sample_weight=w[perm]
        ) == pytest.approx(v, abs=1e-14)
        assert smooth_calibration_error(y, p, sample_weight=7.5 * w) == pytest.approx(
            v, abs=1e-14
        )
        # mirror: (1 - p, 1 - y) negates every residual at the mirrored point
        assert smooth_calibration_error(
            1 - y, 1 - p, sample_weight=w
        ) == pytest.approx(v, abs=1e-14)
        assert 0.0 <= v <= 1.0


def test_multiclass_top_label_matches_explicit():
    rng = np.random.default_rng(3)
    P = rng.dirichlet(np.ones(4), size=80)
    labels = rng.integers(0, 4, 80)
    conf = P.max(axis=1)
    correct = (P.argmax(axis=1) == labels).astype(float)
    assert smooth_calibration_error(labels, P) == pytest.approx(
        smooth_calibration_error(correct, conf), abs=1e-15
    )


def test_probability_matrix_uses_positive_column():
    rng = np.random.default_rng(5)
    p = rng.random(40)
    y = (rng.random(40) < p).astype(int)
    assert smooth_calibration_error(y, np.column_stack([1 - p, p])) == (
        pytest.approx(smooth_calibration_error(y, p), abs=1e-15)
    )


def test_bad_input_raises():
    with pytest.raises(ValueError, match="y_prob"):
        smooth_calibration_error([0, 1], [0.5, 1.5])
    with pytest.raises(ValueError, match="sample_weight"):
        smooth_calibration_error([0, 1], [0.5, 0.5], sample_weight=[-1.0, 2.0])


def test_does_not_mutate_inputs():
    y = np.array([0, 1, 1, 0])
    p = np.array([0.3, 0.1, 0.9, 0.5])
    w = np.array([1.0, 2.0, 1.0, 1.0])
    copies = y.copy(), p.copy(), w.copy()
    smooth_calibration_error(y, p, sample_weight=w, return_details=True)
    for a, b in zip((y, p, w), copies):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("seed", range(3))
def test_larger_inputs_witness_attains_value(seed):
    # no LP at this size: the primal witness and the dual value certify each other
    rng = np.random.default_rng(seed)
    n = 20000
    p = np.round(rng.random(n), 3) if seed == 0 else rng.random(n)
    y = (rng.random(n) < p**2).astype(float) if seed == 1 else (rng.random(n) < p)
    w = rng.exponential(size=n)
    value, details = smooth_calibration_error(
        y, p, sample_weight=w, return_details=True
    )
    points, witness = details.points, details.witness
    check_witness(y.astype(float), p, w, value, points, witness)


def test_slope_trick_worst_case():
    # Light rows just below 0.5 leave many light breakpoints; heavy rows just
    # above it with alternating outcomes then swing the stage maximiser across
    # all of them at every step, so a representation split at the maximiser
    # (the "slope trick" with two deques or heaps) does Theta(n^2) work. Here
    # every breakpoint is added once and removed once.
    m = 2000
    p = np.concatenate([0.5 - 1e-7 * np.arange(m, 0, -1), 0.5 + 1e-9 * np.arange(m)])
    y = np.concatenate([np.zeros(m), (np.arange(m) + 1) % 2])
    w = np.concatenate([np.full(m, 1 / (4 * m)), np.ones(m)])
    value, details = smooth_calibration_error(
        y, p, sample_weight=w, return_details=True
    )
    points, witness = details.points, details.witness
    check_witness(y, p, w, value, points, witness)


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
@example(  # residuals below HiGHS's absolute tolerance (the reference scales them)
    rows=[(0.5, False, 0.0), (1.0, False, 0.0), (5.960464477539063e-08, False, 1.0)]
)
def test_property_matches_linprog(rows):
    p = np.array([r[0] for r in rows])
    y = np.array([float(r[1]) for r in rows])
    w = np.array([r[2] for r in rows])
    value, details = smooth_calibration_error(
        y, p, sample_weight=w, return_details=True
    )
    points, witness = details.points, details.witness
    assert value == pytest.approx(smce_linprog(y, p, w), abs=LP_TOL)
    check_witness(y, p, w, value, points, witness)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(0, 1), st.booleans(), st.floats(0.01, 10)),
        min_size=1,
        max_size=40,
    ),
    st.randoms(use_true_random=False),
)
def test_property_depends_on_distribution_only(rows, rnd):
    # splitting a row into two half-weight copies and shuffling leave D-hat as is
    p = np.array([r[0] for r in rows])
    y = np.array([float(r[1]) for r in rows])
    w = np.array([r[2] for r in rows])
    value = smooth_calibration_error(y, p, sample_weight=w)
    y2, p2, w2 = np.append(y, y[0]), np.append(p, p[0]), np.append(w, w[0] / 2)
    w2[0] /= 2
    order = list(range(len(rows) + 1))
    rnd.shuffle(order)
    assert smooth_calibration_error(
        y2[order], p2[order], sample_weight=w2[order]
    ) == pytest.approx(value, abs=1e-12)
    assert 0.0 <= value <= 1.0 + 1e-12
