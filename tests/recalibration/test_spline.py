"""Tests of SplineCalibration: basis, roughness, the penalised fit, and conventions."""

import pickle
import warnings

import numpy as np
import pytest
from scipy.interpolate import CubicSpline
from scipy.special import expit
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

from skcal.recalibration import SplineCalibration
from skcal.recalibration._spline import _NaturalSpline, _newton, _newton_batch, _outer_rows

from reference_binning import OnProbabilities
from reference_spline import newton_one, penalised_logistic, roughness


def test_basis_spans_natural_cubic_splines():
    rng = np.random.default_rng(0)
    for _ in range(20):
        knots = np.sort(rng.uniform(-2, 2, int(rng.integers(3, 9))))
        values = rng.normal(size=knots.shape[0])
        natural = CubicSpline(knots, values, bc_type="natural")
        spline = _NaturalSpline(knots)
        u = np.linspace(knots[0], knots[-1], 400)
        coef, *_ = np.linalg.lstsq(spline.basis(u), natural(u), rcond=None)
        np.testing.assert_allclose(spline.basis(u) @ coef, natural(u), atol=1e-8)
        # linear beyond the outer knots
        outside = np.r_[knots[0] - np.arange(1, 4.0), knots[-1] + np.arange(1, 4.0)]
        f = spline.basis(outside) @ coef
        np.testing.assert_allclose(np.diff(f[:3], 2), 0, atol=1e-8)
        np.testing.assert_allclose(np.diff(f[3:], 2), 0, atol=1e-8)


def test_roughness_matrix_is_the_integral_of_the_squared_second_derivative():
    rng = np.random.default_rng(1)
    for _ in range(5):
        knots = np.sort(rng.uniform(-2, 2, int(rng.integers(3, 7))))
        spline = _NaturalSpline(knots)
        beta = rng.normal(size=knots.shape[0])
        exact = beta @ spline.omega() @ beta
        numeric = roughness(lambda u, s=spline, b=beta: s.basis(u) @ b, knots[0] - 1,
                            knots[-1] + 1)
        np.testing.assert_allclose(exact, numeric, rtol=1e-4)


def test_newton_matches_generic_optimiser():
    rng = np.random.default_rng(2)
    for _ in range(30):
        n = int(rng.integers(5, 60))
        knots = np.sort(rng.normal(size=5))
        spline = _NaturalSpline(knots)
        u = rng.normal(size=n)
        B = spline.basis(u)
        W = rng.integers(1, 4, n).astype(float)
        T = W * rng.uniform(0.05, 0.95, n)
        penalty = 10.0 ** rng.uniform(-3, 1) * spline.omega() + 1e-3 * np.eye(B.shape[1])
        ours = _newton(B, W, T, penalty, np.zeros(B.shape[1]))
        ref = penalised_logistic(B, W, T, penalty)
        np.testing.assert_allclose(B @ ours, B @ ref, atol=1e-5)


def test_batched_newton_follows_each_problem_one_by_one():
    # the inner cross-validation solves its folds' problems together: each
    # must end where Newton's method on it alone ends (the same steps, up to
    # rounding), whatever the others do (separable, tiny, weight-0 rows,
    # one positive, starts far off)
    rng = np.random.default_rng(12)
    for case in range(150):
        m = int(rng.choice([1, 2, 3, 8, 40]))
        knots = np.sort(rng.normal(size=int(rng.integers(2, 7))))
        spline = _NaturalSpline(knots)
        B = spline.basis(rng.normal(size=m) * rng.choice([0.5, 3.0]))
        d = B.shape[1]
        k = int(rng.integers(1, 6))
        W = rng.integers(0, 4, (m, k)).astype(float)
        W[0] = 1.0
        S = W * rng.uniform(0.0, 1.0, (m, k))
        if case % 5 == 0:
            S = W * (rng.uniform(size=(m, 1)) < 0.5)  # hard targets: maybe separable
        penalty = 10.0 ** rng.uniform(-6, 2) * spline.omega() + 1e-8 * np.eye(d)
        start = rng.normal(size=(k, d)) * rng.choice([0.0, 1.0, 5.0])
        ours = _newton_batch(B, _outer_rows(B), W, S, penalty, start)
        for j in range(k):
            twin = newton_one(B, W[:, j], S[:, j], penalty, start[j])
            # the same steps up to rounding; on flat problems (weak penalty,
            # separable rows) rounding may stop one step apart, both at the
            # stopping rule's 1e-12 relative decrease
            value = _objective(B, W[:, j], S[:, j], penalty)
            assert value(ours[j]) <= value(twin) + 1e-11 * max(1.0, abs(value(twin))), case
            # in probability (separable rows: large logits, flat objective)
            np.testing.assert_allclose(expit(B @ ours[j]), expit(B @ twin), atol=1e-7,
                                       err_msg=str(case))
        # _newton is the one-problem case
        one = _newton(B, W[:, 0], S[:, 0], penalty, start[0])
        np.testing.assert_allclose(expit(B @ one), expit(B @ ours[0]), atol=1e-7)


def _objective(B, W, S, penalty):
    def value(b):
        f = B @ b
        return (W @ np.logaddexp(0.0, f) - S @ f) / W.sum() + b @ penalty @ b

    return value


def test_integer_weights_are_repetitions():
    rng = np.random.default_rng(3)
    for _ in range(20):
        C = int(rng.integers(2, 4))
        P = rng.dirichlet(np.ones(C), 20).round(2)
        P /= P.sum(axis=1, keepdims=True)
        y = rng.integers(0, C, 20)
        y[:C] = np.arange(C)
        w = rng.integers(0, 4, 20)
        w[:C] = 1
        rows = np.repeat(np.arange(20), w)
        # cv larger than both sizes: the default penalty, no random folds
        a = SplineCalibration(cv=50).fit(P, y, sample_weight=w).predict_proba(P)
        b = SplineCalibration(cv=50).fit(P[rows], y[rows]).predict_proba(P)
        np.testing.assert_allclose(a, b, atol=1e-7)


def test_recovers_a_smooth_miscalibration():
    rng = np.random.default_rng(4)
    z = rng.normal(scale=2.0, size=8000)
    truth = 1 / (1 + np.exp(-(0.5 * z + 0.3 * np.sin(z))))
    y = (rng.uniform(size=8000) < truth).astype(int)
    p = 1 / (1 + np.exp(-z))
    q = SplineCalibration(random_state=0).fit(p, y).predict_proba(p)[:, 1]
    assert np.sqrt(np.mean((q - truth) ** 2)) < 0.03
    assert np.sqrt(np.mean((p - truth) ** 2)) > 0.05


def test_tiny_and_degenerate_data():
    cases = [
        (np.array([0.3]), np.array([1]), [0, 1]),
        (np.array([0.2, 0.7, 0.9]), np.array([1, 1, 1]), [0, 1]),
        (np.full(8, 0.4), np.array([0, 1] * 4), None),
        (np.array([0.0, 1.0, 0.0, 1.0]), np.array([0, 1, 1, 1]), None),
    ]
    for p, y, labels in cases:
        q = SplineCalibration(labels=labels).fit(p, y).predict_proba(np.r_[p, 0.5])
        assert np.all(np.isfinite(q)) and np.all((q > 0) & (q < 1))
        np.testing.assert_allclose(q.sum(axis=1), 1.0)


def test_multiclass_pickle_clone():
    rng = np.random.default_rng(5)
    P = rng.dirichlet(np.ones(4), 300)
    y = rng.integers(0, 4, 300)
    P_before = P.copy()
    est = SplineCalibration(random_state=0).fit(P, y)
    np.testing.assert_array_equal(P, P_before)
    q = est.predict_proba(P)
    np.testing.assert_allclose(q.sum(axis=1), 1.0)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(est)).predict_proba(P), q)
    assert clone(est).get_params() == est.get_params()
    assert est.alpha_.shape == (4,)


def test_against_splinecalib_if_installed():
    splinecalib = pytest.importorskip("splinecalib")
    rng = np.random.default_rng(6)
    p = rng.uniform(0.02, 0.98, 4000)
    y = (rng.uniform(size=4000) < p ** 1.5).astype(int)
    ours = SplineCalibration(random_state=0).fit(p, y).predict_proba(p)[:, 1]
    peer = splinecalib.SplineCalib()
    peer.fit(p, y)
    theirs = peer.calibrate(p)
    assert np.sqrt(np.mean((ours - theirs) ** 2)) < 0.03
    # and at least as close to the truth (seen: 0.014 against 0.018)
    truth = p ** 1.5
    assert np.mean((ours - truth) ** 2) <= np.mean((theirs - truth) ** 2) * 1.1


@parametrize_with_checks(
    [OnProbabilities(SplineCalibration(random_state=0))],
    expected_failed_checks=lambda e: {
        "check_sample_weight_equivalence_on_dense_data": (
            "the inner folds choosing the penalty are drawn over rows: a repeated row "
            "and one weighted row land in different folds (with cv above the number "
            "of rows, weights equal repetitions: tested)"
        ),
    },
)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        check(estimator)


def test_no_extrapolation_beyond_the_calibration_logits():
    rng = np.random.default_rng(7)
    p = rng.uniform(0.2, 0.8, 500)
    y = (rng.uniform(size=500) < p).astype(int)
    cal = SplineCalibration(random_state=0).fit(p, y)
    low = cal.predict_proba([0.0, 0.01, p.min()])[:, 1]
    high = cal.predict_proba([p.max(), 0.99, 1.0])[:, 1]
    np.testing.assert_allclose(low, low[-1], rtol=1e-3)
    np.testing.assert_allclose(high, high[0], rtol=1e-3)
