"""Tests for AutoRecalibrator: the choice by a cross-fitted proper score.

The choice rule is checked against the loops of reference_auto.py; the
out-of-fold scores against the candidates refitted by hand on the same folds.
"""

import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import BaseEstimator, clone
from sklearn.metrics import log_loss
from sklearn.model_selection import StratifiedKFold
from sklearn.utils import check_random_state

from skcal.recalibration import AutoRecalibrator, UtilityPatchingRecalibrator
from skcal.recalibration._auto import choose
from skcal.recalibration._common import draw_seed, with_column_labels

from reference_auto import argmin_choice_reference

FAST = ["temperature", "spline"]


def _overconfident(n, C, seed, power=3.0):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, C))
    truth = np.exp(Z) / np.exp(Z).sum(axis=1, keepdims=True)
    y = (truth.cumsum(axis=1) > rng.uniform(size=(n, 1))).argmax(axis=1)
    P = np.exp(power * Z)
    return P / P.sum(axis=1, keepdims=True), y


class Zeros(BaseEstimator):
    """Puts probability exactly 0 on every class but the model's top one."""

    def fit(self, P, y, sample_weight=None):
        return self

    def predict_proba(self, P):
        return np.eye(P.shape[1])[np.argmax(P, axis=1)]


class Broken(BaseEstimator):
    def fit(self, P, y, sample_weight=None):
        raise RuntimeError("cannot fit")

    def predict_proba(self, P):  # pragma: no cover
        return P


def _mixed(Q, n):
    """``Q`` mixed with the uniform at ``1 / (n + 1)``, by the definition."""
    a = 1.0 / (n + 1.0)
    return (1.0 - a) * Q + a / Q.shape[1]


def test_choice_matches_reference_on_random_cases():
    rng = np.random.default_rng(0)
    for _ in range(300):
        k = int(rng.integers(1, 6))
        n = int(rng.integers(1, 12))
        losses = rng.exponential(size=(k, n))
        if rng.uniform() < 0.3:  # ties between candidates
            losses[rng.integers(k)] = losses[0]
        if rng.uniform() < 0.3:  # small differences, so the rule matters
            losses = losses[:1] + 0.05 * (losses - losses[:1])
        if rng.uniform() < 0.2:  # a tie within rounding: the simplest wins
            j = rng.integers(k)
            losses[j] = losses[rng.integers(k)] * (1 + 1e-14)
        if rng.uniform() < 0.2:  # an infinite loss (a zero probability)
            losses[rng.integers(k), rng.integers(n)] = np.inf
        w = rng.choice([0.5, 1.0, 2.0, 3.0], size=n)
        index, _, _ = choose([str(i) for i in range(k)], losses, w)
        assert index == argmin_choice_reference(losses.tolist(), w.tolist())


def test_choice_is_the_argmin_not_the_one_standard_error_rule():
    # candidate 1 is better than the identity by 10 s.e., candidate 2 better
    # than candidate 1 by far less than one s.e. of their difference: the
    # one-standard-error rule kept 1, the argmin takes 2
    rng = np.random.default_rng(1)
    base = rng.exponential(size=400)
    noise = rng.normal(scale=0.1, size=400)
    losses = np.array([base + 1.0, base, base - 0.001 + noise - noise.mean()])
    index, means, ses = choose(["identity", "a", "b"], losses, np.ones(400))
    assert means[2] < means[1] < ses[1] + means[2]
    assert index == 2
    # a tie within 1e-12 relative goes to the simplest
    losses = np.array([base + 1.0, base * (1 + 1e-14), base])
    assert choose(["identity", "a", "b"], losses, np.ones(400))[0] == 1
    # never a candidate worse than the identity out of fold
    losses = np.array([base, base + 0.5, base + 0.4])
    assert choose(["identity", "a", "b"], losses, np.ones(400))[0] == 0


def test_overconfident_predictions_are_recalibrated_and_scores_are_out_of_fold():
    P, y = _overconfident(600, 3, 0)
    # one candidate (ensemble=False): its output is checked by hand below
    auto = AutoRecalibrator(candidates=FAST, random_state=0, ensemble=False).fit(P, y)
    assert auto.chosen_ != "identity"
    assert list(auto.scores_) == ["identity", *FAST]
    # the identity's and the temperature's out-of-fold log-loss: refitted by
    # hand on the same folds, each fold's output mixed with the uniform at
    # 1 / (n + 1) for the n rows of the other folds
    rng = check_random_state(0)
    draw_seed(rng)  # the candidates' seed is drawn first, then the folds
    folds = StratifiedKFold(5, shuffle=True, random_state=rng).split(P, y)
    temperature = with_column_labels(clone(auto._candidate_table()[1][1]), 3)
    Q = np.empty_like(P)
    identity = np.empty_like(P)
    for train, test in folds:
        fitted = clone(temperature).fit(P[train], y[train])
        Q[test] = _mixed(fitted.predict_proba(P[test]), train.shape[0])
        identity[test] = _mixed(P[test], train.shape[0])
    assert_allclose(auto.scores_["identity"]["score"], -log_loss(y, identity), rtol=1e-12)
    assert_allclose(auto.scores_["temperature"]["score"], -log_loss(y, Q), rtol=1e-10)
    assert auto.scores_[auto.chosen_]["score"] >= auto.scores_["identity"]["score"]
    assert auto.mixture_ == 1.0 / 601.0
    expected = clone(temperature) if auto.chosen_ == "temperature" else None
    if expected is not None:
        assert_allclose(auto.predict_proba(P), _mixed(expected.fit(P, y).predict_proba(P), 600))
    assert "<- chosen" in auto.summary()


def test_calibrated_predictions_are_mostly_left_alone():
    # y drawn from P: the identity is optimal; "auto" must not do worse out of
    # fold, and mostly keeps it
    kept = 0
    for seed in range(6):
        P, y = _overconfident(400, 3, seed, power=1.0)
        rng = np.random.default_rng(seed + 100)
        y = (P.cumsum(axis=1) > rng.uniform(size=(400, 1))).argmax(axis=1)
        auto = AutoRecalibrator(candidates=FAST, random_state=seed).fit(P, y)
        best = max(entry["score"] for entry in auto.scores_.values())
        assert auto.scores_[auto.chosen_]["score"] >= auto.scores_["identity"]["score"]
        assert best - auto.scores_[auto.chosen_]["score"] <= auto.scores_[
            auto.chosen_]["se"] + 1e-12
        kept += auto.chosen_ == "identity"
    assert kept >= 4


def test_a_method_emitting_zeros_has_bounded_log_loss_and_loses():
    # mixed with the uniform at 1 / (n + 1), a zero costs log(K (n + 1)), not
    # infinity: a finite, large out-of-fold log-loss that loses
    P, y = _overconfident(300, 3, 2)
    auto = AutoRecalibrator(candidates={"zeros": Zeros()}, random_state=0).fit(P, y)
    score = auto.scores_["zeros"]["score"]
    assert np.isfinite(score)
    assert -score <= np.log(3 * 241)  # 240 training rows per fold: the bound
    wrong = np.mean(np.argmax(P, axis=1) != y)  # rows whose class gets a zero
    assert -score >= wrong * np.log(3 * 241) - 1e-9
    assert auto.chosen_ == "identity"
    # under the Brier score the same method is finite (and still loses here)
    brier = AutoRecalibrator(
        candidates={"zeros": Zeros()}, selection_scoring="neg_brier_score",
        random_state=0,
    ).fit(P, y)
    assert np.isfinite(brier.scores_["zeros"]["score"])


def test_identity_on_exact_zeros_and_ones_never_gives_an_infinite_log_loss():
    # a random forest's vote fractions: exact 0 and 1, and labels that
    # sometimes fall on a class given probability 0; auto keeps the model
    # (the only candidate) and its output costs each row at most log(K (n + 1))
    rng = np.random.default_rng(12)
    hits = 0  # test rows whose class the model gives probability exactly 0
    for case in range(20):
        n, C = int(rng.integers(5, 200)), int(rng.integers(2, 5))
        votes = rng.multinomial(10, rng.dirichlet(np.full(C, 0.3)), size=2 * n)
        P = votes / 10.0
        truth = 0.8 * P + 0.2 / C
        y = (truth.cumsum(axis=1) > rng.uniform(size=(2 * n, 1))).argmax(axis=1)
        y[:C] = np.arange(C)
        w = rng.choice([0.5, 1.0, 3.0], size=n) if case % 2 else None
        auto = AutoRecalibrator(candidates=[], labels=np.arange(C), random_state=case)
        auto.fit(P[:n], y[:n], sample_weight=w)
        assert auto.chosen_ == "identity"
        Q = auto.predict_proba(P[n:])
        losses = -np.log(Q[np.arange(n), y[n:]])
        hits += np.count_nonzero(P[n:][np.arange(n), y[n:]] == 0.0)
        assert np.all(np.isfinite(losses))
        kish = n if w is None else w.sum() ** 2 / (w @ w)
        assert_allclose(auto.mixture_, 1.0 / (kish + 1.0), rtol=1e-12)
        assert np.all(losses <= np.log(C * (kish + 1.0)) + 1e-9)
        # the output is the model's probabilities mixed with the uniform, no other change
        assert_allclose(Q, (1.0 - auto.mixture_) * P[n:] + auto.mixture_ / C, rtol=1e-13)
        assert_allclose(Q.sum(axis=1), 1.0, rtol=1e-13)
        # out of fold, likewise: finite
        assert np.isfinite(auto.scores_["identity"]["score"])
    assert hits > 0


def test_the_mixture_counts_effective_rows_and_scaling_the_weights_changes_nothing():
    P, y = _overconfident(300, 3, 13)
    w = np.random.default_rng(13).uniform(0.1, 2.0, size=300)
    a = AutoRecalibrator(candidates=["temperature"], random_state=0, ensemble=False).fit(
        P, y, sample_weight=w)
    b = AutoRecalibrator(candidates=["temperature"], random_state=0, ensemble=False).fit(
        P, y, sample_weight=7.0 * w)
    n = w.sum() ** 2 / np.sum(w * w)
    assert 200 < n < 290
    assert_allclose(a.mixture_, 1.0 / (n + 1.0), rtol=1e-12)
    assert_allclose(b.mixture_, a.mixture_, rtol=1e-12)
    assert_allclose(b.predict_proba(P), a.predict_proba(P), rtol=1e-9)
    inner = a.recalibrator_.predict_proba(P)
    assert_allclose(a.predict_proba(P), _mixed(inner, n), rtol=1e-12)
    assert np.all(a.predict_proba(P) >= a.mixture_ / 3)
    assert f"{a.mixture_:.3g}" in a.summary()


def test_a_failing_candidate_loses_and_says_why():
    P, y = _overconfident(200, 2, 3)
    auto = AutoRecalibrator(candidates={"broken": Broken()}, random_state=0).fit(P, y)
    assert auto.chosen_ == "identity"
    assert "cannot fit" in auto.scores_["broken"]["error"]


def test_selection_scoring_names_and_callables():
    P, y = _overconfident(400, 3, 4)
    for scoring in ("neg_brier_score", "neg_utility_calibration_error", "accuracy"):
        auto = AutoRecalibrator(
            candidates=FAST, selection_scoring=scoring, random_state=0
        ).fit(P, y)
        assert auto.chosen_ in auto.scores_

    def neg_mean_top(estimator, X, y, sample_weight=None):
        return -float(np.average(estimator.predict_proba(X).max(axis=1),
                                 weights=sample_weight))

    auto = AutoRecalibrator(
        candidates=FAST, selection_scoring=neg_mean_top, random_state=0
    ).fit(P, y)
    assert "neg_mean_top" in auto.summary()


def test_patching_candidates_only_off_log_loss():
    P, y = _overconfident(300, 3, 5)
    table = AutoRecalibrator()._candidate_table()
    assert [name for name, _ in table][0] == "identity"
    assert not any("patching" in name for name, _ in table)
    table = AutoRecalibrator(selection_scoring="neg_brier_score")._candidate_table()
    assert "temperature+patching" in [name for name, _ in table]
    auto = AutoRecalibrator(
        candidates=["patching"], selection_scoring="neg_brier_score", random_state=0
    ).fit(P, y)
    assert isinstance(auto.recalibrator_, (UtilityPatchingRecalibrator,)) or (
        auto.chosen_ == "identity"
    )


def test_bad_candidates_are_named():
    P, y = _overconfident(50, 2, 6)
    with pytest.raises(ValueError, match="unknown name 'nope'"):
        AutoRecalibrator(candidates=["nope"]).fit(P, y)
    with pytest.raises(TypeError, match=r"candidates\['x'\]"):
        AutoRecalibrator(candidates={"x": object()}).fit(P, y)
    with pytest.raises(ValueError, match="cv"):
        AutoRecalibrator(cv=1).fit(P, y)


def test_zero_weights_are_dropped_rows_and_weights_matter():
    P, y = _overconfident(300, 3, 7)
    w = np.ones(300)
    w[::3] = 0.0
    # the candidates' own fits must treat a zero weight as no row: temperature
    # scaling does
    a = AutoRecalibrator(candidates=["temperature"], random_state=0).fit(
        P, y, sample_weight=w)
    keep = w > 0
    b = AutoRecalibrator(candidates=["temperature"], random_state=0).fit(
        P[keep], y[keep])
    assert a.chosen_ == b.chosen_
    for name in a.scores_:
        assert_allclose(a.scores_[name]["score"], b.scores_[name]["score"], rtol=1e-9)
    c = AutoRecalibrator(candidates=["temperature"], random_state=0).fit(
        P, y, sample_weight=np.linspace(0.1, 3, 300))
    assert c.scores_["identity"]["score"] != b.scores_["identity"]["score"]


def test_subsample_for_the_choice_keeps_every_class():
    P, y = _overconfident(3000, 4, 8)
    y[:3] = 3
    auto = AutoRecalibrator(
        candidates=FAST, max_selection_samples=500, random_state=0, ensemble=False
    ).fit(P, y)
    assert 495 <= auto.n_selection_samples_ <= 505
    # the chosen candidate is refitted on all the rows
    if auto.chosen_ != "identity":
        full = clone(auto.recalibrator_).fit(P, y)
        assert_allclose(auto.predict_proba(P), _mixed(full.predict_proba(P), 3000))


def test_tiny_and_degenerate_data():
    # n = 1, one class, constant predictions, p in {0, 1}
    auto = AutoRecalibrator(candidates=FAST, labels=[0, 1]).fit([[0.3, 0.7]], [1])
    assert auto.chosen_ == "identity"
    assert auto.mixture_ == 0.5  # one row: halfway to the uniform
    assert_allclose(auto.predict_proba([[0.3, 0.7]]), [[0.4, 0.6]], rtol=1e-15)
    P = np.tile([0.2, 0.8], (20, 1))
    auto = AutoRecalibrator(candidates=FAST, labels=[0, 1], random_state=0)
    assert auto.fit(P, np.ones(20, dtype=int)).predict_proba(P).shape == (20, 2)
    y = np.r_[np.zeros(10, dtype=int), np.ones(10, dtype=int)]
    Q = auto.fit(P, y).predict_proba(P)
    assert np.all(np.isfinite(Q))
    corners = np.eye(2)[y]
    fitted = AutoRecalibrator(random_state=0).fit(corners, y)
    assert fitted.chosen_ == "identity"  # perfect: nothing beats it out of fold


def test_clone_params_pickle_and_input_untouched():
    P, y = _overconfident(200, 3, 9)
    P_before = P.copy()
    auto = AutoRecalibrator(candidates=FAST, random_state=0)
    assert clone(auto).get_params() == auto.get_params()
    auto.fit(P, y)
    assert_array_equal(P, P_before)
    again = pickle.loads(pickle.dumps(auto))
    assert_array_equal(again.predict_proba(P), auto.predict_proba(P))
    assert again.chosen_ == auto.chosen_


def test_integer_random_state_makes_the_whole_fit_reproducible():
    # every candidate with inner folds (dirichlet, histogram, scaling-binning,
    # spline, isotonic's interpolation) must take its randomness from the
    # AutoRecalibrator's random_state, not from the global np.random state
    P, y = _overconfident(400, 3, 11)
    names = ["dirichlet", "histogram", "scaling-binning", "spline", "isotonic"]
    first = AutoRecalibrator(candidates=names, random_state=0).fit(P, y)
    np.random.seed(12345)
    np.random.uniform(size=1000)  # consume the global state in between
    second = AutoRecalibrator(candidates=names, random_state=0).fit(P, y)
    np.random.seed(54321)
    third = AutoRecalibrator(candidates=names, random_state=0).fit(P, y)
    for other in (second, third):
        assert other.chosen_ == first.chosen_
        for name in first.scores_:
            assert_array_equal(other.scores_[name]["score"], first.scores_[name]["score"])
            assert_array_equal(other.scores_[name]["se"], first.scores_[name]["se"])
        assert_array_equal(other.predict_proba(P), first.predict_proba(P))
    # an integer random_state reaches the inner estimators, a given one is kept
    from skcal.recalibration import DirichletCalibration

    mine = DirichletCalibration(random_state=7)
    auto = AutoRecalibrator(candidates={"d": mine}, random_state=0).fit(P, y)
    assert auto.recalibrator_.random_state == 7
    assert mine.random_state == 7
    auto = AutoRecalibrator(candidates={"d": DirichletCalibration()}, random_state=0)
    chosen = auto.fit(P, y).recalibrator_
    if auto.chosen_ == "d":
        assert isinstance(chosen.random_state, int)
    # the default table with the patching candidates (patching's init too)
    kw = dict(candidates=["isotonic+patching"], selection_scoring="neg_brier_score",
              random_state=3)
    a = AutoRecalibrator(**kw).fit(P, y)
    np.random.uniform(size=10)
    b = AutoRecalibrator(**kw).fit(P, y)
    for name in a.scores_:
        assert_array_equal(a.scores_[name]["score"], b.scores_[name]["score"])


def _given_folds(monkeypatch, module, fold_of, w, rows):
    """Make ``module``'s cross-fitting use the folds ``fold_of`` of the original rows.

    The weighted fit sees the rows of positive weight, the repeated fit the
    rows ``rows`` (each copy in its original's fold).
    """
    n_weighted = int(np.count_nonzero(w > 0))

    def folds(y, n_splits, rng):
        of = fold_of[w > 0] if y.shape[0] == n_weighted else fold_of[rows]
        assert of.shape[0] == y.shape[0]
        return [(np.flatnonzero(of != f), np.flatnonzero(of == f))
                for f in np.unique(of)]

    monkeypatch.setattr(module, "cross_fit_folds", folds)


def test_integer_weights_equal_repetition_given_the_same_folds(monkeypatch):
    import skcal.recalibration._auto as auto_module
    import skcal.recalibration._common as common_module
    from skcal.recalibration import (
        BetaCalibration,
        HistogramBinning,
        IsotonicCalibration,
        SigmoidCalibration,
        TemperatureScaling,
        VectorScaling,
        VennAbersCalibration,
    )

    rng = np.random.default_rng(3)
    for case in range(3):
        n, C = int(rng.integers(40, 120)), int(rng.integers(2, 4))
        P, y = _overconfident(n, C, 20 + case)
        w = rng.integers(0, 4, size=n)
        w[:C] = 1
        y[:C] = np.arange(C)  # every class present
        rows = np.repeat(np.arange(n), w)
        fold_of = rng.integers(0, 3, size=n)
        fold_of[:3] = [0, 1, 2]
        _given_folds(monkeypatch, auto_module, fold_of, w, rows)
        # the mixture counts effective rows (Kish), not copies, on purpose (as
        # the standard errors do); counted as copies, the fits must agree
        # (the mixture weight and the counts of the smoothed targets of
        # sharpen and of the top-label map)
        monkeypatch.setattr(common_module, "effective_rows", lambda w: float(np.sum(w)))
        candidates = {
            "temperature": TemperatureScaling(),
            "sigmoid": SigmoidCalibration(),
            "beta": BetaCalibration(),
            "vector": VectorScaling(),
            "isotonic": IsotonicCalibration(interpolation="step"),
            "histogram": HistogramBinning(n_bins=3),
            "venn-abers": VennAbersCalibration(),
        }
        kw = dict(candidates=candidates, max_selection_samples=None, random_state=0)
        weighted = AutoRecalibrator(**kw).fit(P, y, sample_weight=w)
        repeated = AutoRecalibrator(**kw).fit(P[rows], y[rows])
        assert weighted.n_selection_samples_ == np.count_nonzero(w)
        for name in weighted.scores_:
            assert_allclose(weighted.scores_[name]["score"],
                            repeated.scores_[name]["score"], rtol=1e-6)
        # the standard errors differ on purpose: effective rows, not copies
        if weighted.chosen_ == repeated.chosen_:
            assert_allclose(weighted.predict_proba(P), repeated.predict_proba(P),
                            rtol=1e-6, atol=1e-9)


def test_chain_integer_weights_equal_repetition_given_the_same_folds(monkeypatch):
    import skcal.recalibration._classifier as classifier_module
    from skcal.recalibration import IsotonicCalibration, TemperatureScaling
    from skcal.recalibration._classifier import RecalibrationChain

    rng = np.random.default_rng(4)
    for case in range(3):
        n = int(rng.integers(40, 120))
        P, y = _overconfident(n, 3, 30 + case)
        w = rng.integers(0, 4, size=n)
        w[:3], y[:3] = 1, np.arange(3)
        rows = np.repeat(np.arange(n), w)
        fold_of = rng.integers(0, 4, size=n)
        _given_folds(monkeypatch, classifier_module, fold_of, np.ones(n), rows)
        # the weighted chain sees every row (zero weights too): all n rows
        steps = [IsotonicCalibration(interpolation="step"), TemperatureScaling()]
        chain = RecalibrationChain(steps, random_state=0)
        weighted = clone(chain).fit(P, y, sample_weight=w)
        repeated = clone(chain).fit(P[rows], y[rows])
        assert_allclose(weighted.predict_proba(P), repeated.predict_proba(P),
                        rtol=1e-6, atol=1e-9)
        # and the folds matter: the chain's own folds over the rows differ
        monkeypatch.undo()
