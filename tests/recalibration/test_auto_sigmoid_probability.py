"""Tests for Platt scaling on the probability, auto's candidate on exact 0/1 input.

The fit is checked against a slow twin (each one-vs-rest problem solved by
scipy's general minimiser on Platt's smoothed log-loss, then the rows
normalised) and against scikit-learn's ``CalibratedClassifierCV(
method="sigmoid")`` on a model's probabilities; auto offers the candidate
exactly when some calibration probability is 0 or 1.
"""

import numpy as np
from numpy.testing import assert_allclose
from scipy.optimize import minimize
from sklearn.base import clone

from skcal.recalibration import AutoRecalibrator
from skcal.recalibration._common import SklearnRecalibrator
from skcal.recalibration._sigmoid_probability import ProbabilitySigmoidCalibration


def _platt_reference(P, y, w):
    """One ``sigmoid(a x + b)`` per problem on ``x = P[:, k]`` by Nelder-Mead and BFGS.

    Targets ``(N+ + 1) / (N+ + 2)`` and ``1 / (N- + 2)`` (weighted counts);
    two classes: the one problem of column 1; more: normalised rows.
    """
    C = P.shape[1]
    problems = [1] if C == 2 else list(range(C))
    scores = []
    for k in problems:
        x, t = P[:, k], (y == k).astype(float)
        n_pos = float(np.sum(w * t))
        n_neg = float(np.sum(w)) - n_pos
        t = np.where(t > 0, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))

        def loss(theta, x=x, t=t):
            s = theta[0] * x + theta[1]
            # -t log sigmoid(s) - (1 - t) log sigmoid(-s)
            return float(np.sum(w * (t * np.logaddexp(0, -s) + (1 - t) * np.logaddexp(0, s))))

        start = minimize(loss, [1.0, 0.0], method="Nelder-Mead",
                         options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 20000}).x
        theta = minimize(loss, start, method="BFGS", options={"gtol": 1e-10}).x
        scores.append((theta[0], theta[1], loss(theta), loss))
    return scores


def _predict_reference(scores, P):
    C = P.shape[1]
    if C == 2:
        a, b = scores[0][:2]
        q = 1 / (1 + np.exp(-(a * P[:, 1] + b)))
        return np.column_stack([1 - q, q])
    Q = np.column_stack([
        1 / (1 + np.exp(-(a * P[:, k] + b))) for k, (a, b, *_) in enumerate(scores)
    ])
    return Q / Q.sum(axis=1, keepdims=True)


def _votes(rng, n, C, trees=10):
    """Vote fractions (exact 0 and 1) and labels drawn from a flattened truth."""
    P = rng.multinomial(trees, rng.dirichlet(np.full(C, 0.5)), size=n) / trees
    truth = 0.7 * P + 0.3 / C
    y = (truth.cumsum(axis=1) > rng.uniform(size=(n, 1))).argmax(axis=1)
    y[:C] = np.arange(C)
    return P, y


def test_matches_the_slow_twin_on_random_cases():
    rng = np.random.default_rng(0)
    for case in range(40):
        n, C = int(rng.integers(8, 150)), int(rng.integers(2, 5))
        P, y = _votes(rng, n, C, trees=int(rng.integers(1, 20)))
        w = rng.choice([0.5, 1.0, 2.0], size=n) if case % 2 else np.ones(n)
        cal = ProbabilitySigmoidCalibration(labels=np.arange(C)).fit(P, y, sample_weight=w)
        scores = _platt_reference(P, y, w)
        # the same minimum of the same objective (the slopes of nearly
        # separable problems are flat directions: compare the objective)
        for k, (_, _, best, loss) in enumerate(scores):
            ours = loss([cal.coef_[k], cal.intercept_[k]])
            assert ours <= best + 1e-6 * (1.0 + abs(best)), (case, k, ours, best)
        assert_allclose(cal.predict_proba(P), _predict_reference(scores, P), atol=2e-3)


def test_agrees_with_scikit_learn_sigmoid_on_probabilities():
    rng = np.random.default_rng(1)
    for C in (2, 3, 5):
        P, y = _votes(rng, 400, C)
        ours = ProbabilitySigmoidCalibration(labels=np.arange(C)).fit(P, y).predict_proba(P)
        theirs = SklearnRecalibrator("sigmoid").fit(P, y).predict_proba(P)
        assert_allclose(ours, theirs, atol=1e-4)
        # and it is not the logit map: on exact 0/1 the two differ
        from skcal.recalibration import SigmoidCalibration

        logit = SigmoidCalibration(labels=np.arange(C)).fit(P, y).predict_proba(P)
        assert np.abs(logit - ours).max() > 1e-3


def test_offered_by_auto_exactly_when_some_probability_is_zero_or_one():
    rng = np.random.default_rng(2)
    P, y = _votes(rng, 300, 3)
    auto = AutoRecalibrator(random_state=0).fit(P, y)
    assert "sigmoid-probability" in auto.scores_
    assert list(auto.scores_).index("sigmoid-probability") == list(auto.scores_).index(
        "sigmoid") + 1
    # strictly inside (0, 1): the logit is defined, the candidate is not offered
    inside = 0.98 * P + 0.02 / 3
    auto = AutoRecalibrator(random_state=0).fit(inside, y)
    assert "sigmoid-probability" not in auto.scores_
    # a 0 only on a row of weight 0 does not count
    w = np.ones(300)
    mixed = inside.copy()
    mixed[0] = [1.0, 0.0, 0.0]
    w[0] = 0.0
    auto = AutoRecalibrator(random_state=0).fit(mixed, y, sample_weight=w)
    assert "sigmoid-probability" not in auto.scores_
    # named explicitly, it is always a candidate
    auto = AutoRecalibrator(candidates=["sigmoid-probability"], random_state=0).fit(inside, y)
    assert "sigmoid-probability" in auto.scores_


def test_clone_and_input_untouched():
    rng = np.random.default_rng(3)
    P, y = _votes(rng, 100, 2)
    before = P.copy()
    cal = ProbabilitySigmoidCalibration().fit(P, y)
    assert np.array_equal(P, before)
    assert clone(cal).get_params() == cal.get_params()
    # binary input as a vector of the second class's probability
    assert_allclose(ProbabilitySigmoidCalibration().fit(P[:, 1], y).predict_proba(P[:, 1]),
                    cal.predict_proba(P))
