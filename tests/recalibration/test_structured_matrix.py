"""Tests for StructuredMatrixScaling and the scaling outputs' floor at the tiniest normal.

The fit is compared with a slow twin: the paper's objective written plainly
(loops over rows, a numerical gradient, scipy's default minimiser) on the
tempered probabilities of skcal's TemperatureScaling (tested on its own), mixed
with the uniform distribution at weight 1 / (n + 1).
"""

import math

import numpy as np
from numpy.testing import assert_allclose
from scipy.optimize import minimize

from skcal.recalibration import (
    DirichletCalibration,
    MatrixScaling,
    StructuredMatrixScaling,
    TemperatureScaling,
    VectorScaling,
)

TINY = np.finfo(np.float64).tiny


def _sms_objective_reference(theta, Z, y, w, K):
    """Weighted mean cross-entropy of softmax(z + D z + b) plus the paper's penalty."""
    D = np.asarray(theta[: K * K]).reshape(K, K)
    b = theta[K * K:]
    n_eff = sum(w) ** 2 / sum(wi * wi for wi in w)
    total = 0.0
    for z, yi, wi in zip(Z, y, w):
        s = [z[k] + sum(D[k, j] * z[j] for j in range(K)) + b[k] for k in range(K)]
        m = max(s)
        total += wi * (m + math.log(sum(math.exp(v - m) for v in s)) - s[yi])
    loss = total / sum(w)
    diag = sum(D[k, k] ** 2 for k in range(K))
    off = sum(D[i, j] ** 2 for i in range(K) for j in range(K) if i != j)
    bb = sum(v * v for v in b)
    return loss + K / n_eff * (bb + diag) + K * (K - 1) / n_eff * off


def test_fit_matches_the_plain_objective_on_random_small_cases():
    rng = np.random.default_rng(0)
    for case in range(40):
        K = int(rng.integers(2, 5))
        n = int(rng.integers(1, 25))
        P = rng.dirichlet(np.full(K, 0.7), n)
        if case % 5 == 0:
            P[0, 0] = 0.0  # an exact zero (floored in the logarithm)
            P[0] /= P[0].sum()
        y = rng.integers(0, K, n)
        if case % 3 == 0:
            y[y == K - 1] = 0  # one class missing in y
        w = rng.choice([0.5, 1.0, 3.0], n) if case % 2 else np.ones(n)
        sms = StructuredMatrixScaling(labels=np.arange(K)).fit(P, y, sample_weight=w)
        T = TemperatureScaling(labels=np.arange(K)).fit(P, y, sample_weight=w).temperature_
        assert_allclose(sms.temperature_, T, rtol=1e-12)
        if not np.isfinite(T):
            continue
        L = np.log(np.maximum(P, np.finfo(float).eps)) / T
        tempered = np.exp(L - L.max(axis=1, keepdims=True))
        tempered /= tempered.sum(axis=1, keepdims=True)
        a = 1.0 / (w.sum() ** 2 / (w @ w) + 1.0)  # the uniform's weight, Kish's n
        assert_allclose(sms.mixture_, a, rtol=1e-12)
        Z = np.log((1.0 - a) * tempered + a / K)
        args = (Z, y, w.tolist(), K)
        ref = minimize(_sms_objective_reference, np.zeros(K * K + K), args=args)
        fitted = np.concatenate([(sms.coef_ - np.eye(K)).ravel(), sms.intercept_])
        f_fit = _sms_objective_reference(fitted, *args)
        assert f_fit <= ref.fun + 1e-7 * max(1.0, abs(ref.fun))
        Dr, br = ref.x[: K * K].reshape(K, K), ref.x[K * K:]
        Q_ref = np.exp(Z + Z @ Dr.T + br)
        Q_ref /= Q_ref.sum(axis=1, keepdims=True)
        assert_allclose(sms.predict_proba(P), Q_ref, atol=2e-4)


def test_weights_scale_invariant_and_binary_input():
    rng = np.random.default_rng(1)
    P = rng.dirichlet(np.ones(3), 200)
    y = rng.integers(0, 3, 200)
    w = rng.uniform(0.5, 2.0, 200)
    a = StructuredMatrixScaling().fit(P, y, sample_weight=w).predict_proba(P)
    b = StructuredMatrixScaling().fit(P, y, sample_weight=7 * w).predict_proba(P)
    assert_allclose(a, b, atol=1e-6)
    p = rng.uniform(0.01, 0.99, 300)
    yb = (rng.uniform(size=300) < p ** 2).astype(int)
    one = StructuredMatrixScaling().fit(p, yb).predict_proba(p)
    two = StructuredMatrixScaling().fit(np.column_stack([1 - p, p]), yb).predict_proba(
        np.column_stack([1 - p, p])
    )
    assert_allclose(one, two, atol=1e-8)


def test_scaling_outputs_are_never_exactly_zero():
    # GaussianNB-like input: exact zeros and near-certain rows, so a steep
    # fitted map drives exp below the smallest double
    rng = np.random.default_rng(2)
    n, K = 300, 4
    y = rng.integers(0, K, n)
    P = np.full((n, K), 0.0)
    P[np.arange(n), y] = 1.0
    flip = rng.uniform(size=n) < 0.1
    P[flip] = rng.dirichlet(np.ones(K), flip.sum())
    for est in [
        DirichletCalibration(random_state=0),
        MatrixScaling(alpha=0.0),
        VectorScaling(alpha=0.0),
        TemperatureScaling(),
        StructuredMatrixScaling(),
    ]:
        Q = est.fit(P, y).predict_proba(P)
        # make the map steeper still, as an unregularised fit on separable data may
        if hasattr(est, "coef_"):
            est.coef_ = est.coef_ * 50
            Q = est.predict_proba(P)
        assert Q.min() >= TINY, type(est).__name__
        assert_allclose(Q.sum(axis=1), 1.0, rtol=1e-12)
        assert np.isfinite(np.log(Q)).all()
