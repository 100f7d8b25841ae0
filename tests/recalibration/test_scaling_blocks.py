"""The affine maps' objective computed in blocks of rows (skcal.recalibration._affine).

A pass over more than ``_affine._BLOCK`` rows adds up the loss and gradient
block by block (for speed: the temporaries stay in the cache); the sums
are the same up to rounding, so L-BFGS follows the same path and the fitted
maps are those of one pass over all the rows. Checked here with tiny blocks
on small random cases: the value against the slow twin, the gradient
against finite differences, and the fitted probabilities against the
one-block fit (the code path of every fit below ``_BLOCK`` rows).
"""

import numpy as np
import pytest
import reference_scaling as ref
from scipy.optimize import check_grad

from skcal.recalibration import (
    DirichletCalibration,
    MatrixScaling,
    StructuredMatrixScaling,
    VectorScaling,
    _affine,
    _scaling,
)

# Fitted probabilities of a blocked and a one-block fit may differ by this
# much: both run L-BFGS-B (gtol 1e-7, ftol 1e-10) on sums that differ in
# rounding only; the optimiser's own tolerance is about 1e-5 in probability.
FIT_ATOL = 1e-7


def _case(rng, n, C, kind):
    """Random probabilities: smooth, rounded (ties, exact 0 and 1) or one-hot."""
    if kind == "onehot":
        P = np.eye(C)[rng.integers(C, size=n)]
    elif kind == "rounded":
        P = np.round(rng.dirichlet(np.ones(C), n) * 4) + 0.0
        P[P.sum(1) == 0, 0] = 1.0
        P /= P.sum(1, keepdims=True)
    else:
        P = rng.dirichlet(np.full(C, 0.8), n)
    y = np.array([rng.choice(C, p=np.full(C, 1.0 / C) * 0.5 + 0.5 * q) for q in P])
    return P, y


def test_blocked_objective_matches_twin_and_one_block(monkeypatch):
    rng = np.random.default_rng(11)
    for case in range(60):
        C = int(rng.integers(2, 5))
        n = int(rng.choice([1, 2, 5, 17, 40]))
        P, y = _case(rng, n, C, ["smooth", "rounded", "onehot"][case % 3])
        if case % 7 == 0:
            y[:] = 0  # one class only
        w = rng.integers(0, 3, n).astype(float) if case % 2 else rng.uniform(0, 2, n)
        w[0] = 1.0
        L = _scaling._log_floor(P)
        penalty, diagonal = [
            (_affine._l2_penalty(0.3), False),
            (_affine._odir_penalty(0.3, 0.7), False),
            (_affine._l2_penalty(0.3), True),
            (None, False),
        ][case % 4]
        whiten = bool(case % 5)
        W = np.diag(rng.normal(size=C)) if diagonal else rng.normal(size=(C, C))
        b = rng.normal(size=C)
        monkeypatch.setattr(_affine, "_BLOCK", 10**9)
        one, to_theta, from_theta = _affine._affine_objective(L, y, w, penalty, diagonal, whiten)
        x = to_theta(W, b)
        monkeypatch.setattr(_affine, "_BLOCK", int(rng.integers(1, 8)))
        fun = _affine._affine_objective(L, y, w, penalty, diagonal, whiten)[0]
        value, grad = fun(x)
        W2, b2 = from_theta(x)
        twin = ref.affine_log_loss(W2, b2, P.tolist(), y, w)
        if penalty is not None:
            twin += penalty(W2, b2)[0]
        assert value == pytest.approx(twin, rel=1e-10), case
        one_value, one_grad = one(x)
        assert value == pytest.approx(one_value, rel=1e-13), case
        np.testing.assert_allclose(grad, one_grad, rtol=1e-12, atol=1e-14)
        err = check_grad(lambda t, f=fun: f(t)[0], lambda t, f=fun: f(t)[1], x)
        assert err < 1e-5 * max(1.0, np.linalg.norm(grad)), case


FITS = [
    lambda C: VectorScaling(labels=np.arange(C)),
    lambda C: MatrixScaling(labels=np.arange(C)),
    lambda C: DirichletCalibration(labels=np.arange(C), random_state=0),
    lambda C: DirichletCalibration(labels=np.arange(C), reg="l2", random_state=0),
    lambda C: StructuredMatrixScaling(labels=np.arange(C)),
]


def _fit_both(monkeypatch, make, C, P, y, w, block):
    monkeypatch.setattr(_affine, "_BLOCK", 10**9)
    one = make(C).fit(P, y, sample_weight=w)
    monkeypatch.setattr(_affine, "_BLOCK", block)
    return one, make(C).fit(P, y, sample_weight=w)


def test_blocked_fits_equal_one_block_fits(monkeypatch):
    # blocks are used above 8192 rows, where the problems are well posed:
    # a few hundred rows in blocks of a few dozen; the same grid choice too
    rng = np.random.default_rng(12)
    for case in range(15):
        C = int(rng.integers(2, 5))
        n = int(rng.choice([200, 300]))
        P, y = _case(rng, n, C, ["smooth", "rounded"][case % 2])
        w = rng.integers(0, 3, n).astype(float)
        w[0] = 1.0
        make = FITS[case % len(FITS)]
        one, blocked = _fit_both(monkeypatch, make, C, P, y, w, int(rng.integers(20, 70)))
        assert getattr(one, "reg_lambda_", 0) == getattr(blocked, "reg_lambda_", 0)
        np.testing.assert_allclose(blocked.predict_proba(P), one.predict_proba(P),
                                   rtol=0, atol=FIT_ATOL, err_msg=str(case))


def test_blocked_fits_reach_the_same_optimum_on_degenerate_data(monkeypatch):
    # tiny, one-hot, one-class or nearly separable data: the optimum is flat
    # or at infinity, and rounding alone moves where L-BFGS-B stops (by up
    # to 1e-2 in probability on such cases); both stops are equally good
    rng = np.random.default_rng(13)
    for case in range(30):
        C = int(rng.integers(2, 5))
        n = int(rng.choice([1, 3, 12, 30]))
        P, y = _case(rng, n, C, ["smooth", "rounded", "onehot"][case % 3])
        if case % 4 == 0:
            y[:] = 1  # one class only
        w = rng.integers(0, 3, n).astype(float)
        w[0] = 1.0
        make = FITS[case % 2]  # one fixed penalty: the objective is comparable
        one, blocked = _fit_both(monkeypatch, make, C, P, y, w, int(rng.integers(1, 5)))
        objective = [
            ref.affine_log_loss(m.coef_, m.intercept_, P.tolist(), y, w)
            + _affine._l2_penalty(m.alpha)(m.coef_, m.intercept_)[0]
            for m in (one, blocked)
        ]
        assert objective[1] == pytest.approx(objective[0], rel=1e-6, abs=1e-8), case
