"""Tests for skcal.recalibration: utility patching (paper 001, Appendix A).

Expected values come from the slow references in reference_*.py (the
simplex projection by bisection on the KKT threshold, Algorithm 1 by brute
force over all intervals, the Brier score by loops) or are derived by hand in
the comments.
"""


import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from skcal import (
    ClassWise,
    LinearFamily,
    TopK,
    TopKFamily,
    UtilityFamily,
    UtilityPatchingRecalibrator,
    utility_calibration_error,
)
from skcal.recalibration import Patch, project_simplex

from reference_patching import (
    brier_multiclass,
    patching_reference,
    simplex_projection_bisection,
)

# --- data -------------------------------------------------------------------------



def softmax(Z):
    Z = Z - Z.max(axis=1, keepdims=True)
    E = np.exp(Z)
    return E / E.sum(axis=1, keepdims=True)


def overconfident(n, n_classes, seed, temperature=3.0):
    """Predictions softmax(T z) for outcomes drawn from softmax(z): over-confident."""
    rng = np.random.RandomState(seed)
    Z = rng.normal(scale=1.5, size=(n, n_classes))
    truth = softmax(Z)
    y = (truth.cumsum(axis=1) > rng.uniform(size=(n, 1))).argmax(axis=1)
    return softmax(temperature * Z), y


def assert_same_patches(a, b, rtol=0.0):
    """Same utilities (by repr: they compare by identity), intervals, signs, steps."""
    assert len(a) == len(b)
    for p, q in zip(a, b):
        assert repr(p.utility) == repr(q.utility)
        assert p.sign == q.sign
        assert_allclose(p.interval, q.interval, rtol=rtol, atol=0)
        assert_allclose(p.step, q.step, rtol=rtol, atol=0)


def _brier(P, y, w=None):
    w = np.ones(P.shape[0]) if w is None else np.asarray(w, dtype=float)
    return brier_multiclass(P, y, w)


def _projection_cases():
    rng = np.random.RandomState(0)
    cases = []
    for C in (1, 2, 3, 5, 10):
        for _ in range(40):
            cases.append(rng.normal(size=C))
            cases.append(rng.uniform(-3, 3, size=C) * 10.0 ** rng.randint(-3, 4))
        cases.append(rng.dirichlet(np.ones(C)))  # already in the simplex
        cases.append(np.eye(C)[rng.randint(C)])  # a vertex
        cases.append(np.full(C, 7.0))  # all tied
        cases.append(rng.randint(-2, 3, size=C).astype(float))  # ties
        cases.append(rng.normal(size=C) * 1e6)  # large values
        cases.append(np.full(C, -1e6) + rng.randint(0, 2, size=C))
    return cases


def test_projection_matches_bisection_reference():
    cases = _projection_cases()
    for x in cases:
        expected = simplex_projection_bisection(x)
        got = project_simplex(x[None, :])[0]
        scale = max(1.0, np.abs(x).max())
        assert_allclose(got, expected, rtol=0, atol=1e-12 * scale)
    # vectorised: a batch of rows of one width gives the row-by-row answers
    rng = np.random.RandomState(1)
    X = rng.normal(size=(500, 6)) * rng.choice([0.01, 1.0, 100.0], size=(500, 1))
    expected = np.array([simplex_projection_bisection(x) for x in X])
    assert_allclose(project_simplex(X), expected, rtol=0, atol=1e-10)


def test_projection_is_in_simplex_and_satisfies_the_variational_inequality():
    # pi = proj(x) iff pi is in the simplex and <x - pi, z - pi> <= 0 for every
    # z in the simplex; the left side is linear in z, so vertices suffice.
    for x in _projection_cases():
        pi = project_simplex(x[None, :])[0]
        scale = max(1.0, np.abs(x).max())
        assert np.all(pi >= 0) and np.all(pi <= 1)
        assert abs(pi.sum() - 1.0) < 1e-12 * x.shape[0] * scale
        for j in range(x.shape[0]):
            vertex = np.eye(x.shape[0])[j]
            assert np.dot(x - pi, vertex - pi) <= 1e-9 * scale


def test_projection_fixes_points_of_the_simplex():
    rng = np.random.RandomState(2)
    for C in (2, 3, 7):
        P = rng.dirichlet(np.ones(C) * 0.5, size=200)
        assert_allclose(project_simplex(P), P, rtol=0, atol=1e-15)
    assert_array_equal(
        project_simplex([[0.25, 0.75], [1.0, 0.0]]), [[0.25, 0.75], [1, 0]]
    )
    # hand-derived: [1, 0, 0.5] -> theta = 0.25 -> [0.75, 0, 0.25]
    assert_allclose(project_simplex([[1.0, 0.0, 0.5]]), [[0.75, 0.0, 0.25]])
    assert_array_equal(project_simplex([[3.0]]), [[1.0]])


def test_projection_errors():
    with pytest.raises(ValueError, match="2-dimensional"):
        project_simplex([0.5, 0.5])
    with pytest.raises(ValueError, match="NaN or infinity"):
        project_simplex([[np.nan, 1.0]])


# Ten predictions [0.9, 0.1]; the top class (0) occurs half of the time.
# Top-class audit: v = 0.9 on every row, realised utility 1/2 on average, so
# UC = 0.4 on the interval [0.9, 0.9] with sign -1 (over-promised); u_vec =
# e_0 on every row, E||u_vec||^2 = 1. Brier: rows y = 0 lose 0.01 + 0.01,
# rows y = 1 lose 0.81 + 0.81: mean 0.82.
HAND_P = np.array([[0.9, 0.1]] * 10)


HAND_Y = np.array([0, 1] * 5)


def test_armijo_patch_by_hand():
    # eta* = 0.4 / 1; start 4 eta* = 1.6: proj([-0.7, 0.1]) = [0, 1], Brier 1.0,
    # above 0.82 - 2 * 0.25 * 1.6 * 0.4 = 0.5: rejected. eta = 0.8:
    # proj([0.1, 0.1]) = [0.5, 0.5], Brier 0.5 <= 0.82 - 0.16: accepted. The
    # predictions are then calibrated (UC = 0) and fitting stops.
    rec = UtilityPatchingRecalibrator("top-class").fit(HAND_P, HAND_Y)
    assert len(rec.patches_) == 1
    patch = rec.patches_[0]
    assert isinstance(patch, Patch)
    assert patch.utility.__class__.__name__ == "TopClass"
    assert patch.interval == (0.9, 0.9)
    assert patch.sign == -1
    assert patch.step == pytest.approx(0.8)
    assert_allclose(rec.transform(HAND_P), np.full((10, 2), 0.5))
    assert_allclose(rec.history_["uc"], [0.4, 0.0], atol=1e-15)
    assert_allclose(rec.history_["brier"], [0.82, 0.5])
    assert rec.stopping_reason_ == "tol"
    assert rec.n_iter_ == 1
    # tol="auto": sqrt(log(4 * 1) / (2 * 10)) for one utility and n = 10
    assert rec.tol_ == pytest.approx(np.sqrt(np.log(4) / 20))
    # a prediction outside [0.9, 0.9] is untouched; one inside is patched
    assert_allclose(rec.transform([[0.7, 0.3], [0.1, 0.9]]), [[0.7, 0.3], [0.5, 0.5]])


def test_paper_step_by_hand():
    # eta = err / C = 0.4 / 2 = 0.2: proj([0.7, 0.1]) = [0.8, 0.2]; then
    # err = 0.8 - 0.5 = 0.3, eta = 0.15: proj([0.65, 0.2]) = [0.725, 0.275].
    rec = UtilityPatchingRecalibrator("top-class", step="paper", tol=0.0, max_iter=2)
    rec.fit(HAND_P, HAND_Y)
    assert [p.step for p in rec.patches_] == pytest.approx([0.2, 0.15])
    assert_allclose(rec.transform(HAND_P[:1]), [[0.725, 0.275]])
    assert rec.stopping_reason_ == "max_iter"
    # Brier: 0.5 * (2 * 0.275^2) + 0.5 * (2 * 0.725^2)
    assert rec.history_["brier"][-1] == pytest.approx(0.275**2 + 0.725**2)


def test_constant_step_that_raises_brier_is_not_taken():
    # eta = 50: proj([-49.1, 0.1]) = [0, 1], Brier 1.0 > 0.82: no patch.
    rec = UtilityPatchingRecalibrator("top-class", step=50.0).fit(HAND_P, HAND_Y)
    assert rec.patches_ == []
    assert rec.stopping_reason_ == "no_decrease"
    assert_allclose(rec.history_["brier"], [0.82])
    assert_array_equal(rec.transform(HAND_P), HAND_P)


def test_calibrated_input_gets_no_patch():
    # every row [0.5, 0.5] with balanced outcomes: UC = 0 for every utility
    P = np.full((8, 2), 0.5)
    rec = UtilityPatchingRecalibrator(tol=0.0).fit(P, [0, 1] * 4)
    assert rec.patches_ == [] and rec.stopping_reason_ == "tol"


_FAMILY_SPECS = {
    "top-class": lambda C: [("top-class", None)],
    "class-wise": lambda C: [("class-wise", c) for c in range(C)],
    "top-k": lambda C: [("top-k", k) for k in range(1, C + 1)],
    "comb": lambda C: [("class-wise", c) for c in range(C)]
    + [("top-k", k) for k in range(1, C + 1)],
}


@pytest.mark.parametrize("family", list(_FAMILY_SPECS))
def test_matches_algorithm_1_reference(family):
    rng = np.random.RandomState(4)
    for case in range(4):
        C = 3 if case % 2 else 4
        n = 25
        P, y = overconfident(n, C, seed=100 + case)
        w = rng.randint(1, 4, size=n).astype(float) if case >= 2 else np.ones(n)
        n_steps = 4
        expected_P, expected_steps = patching_reference(
            _FAMILY_SPECS[family](C), P, y, w, n_steps
        )
        rec = UtilityPatchingRecalibrator(
            family, step="paper", tol=0.0, max_iter=n_steps
        ).fit(P, y, sample_weight=w)
        assert len(rec.patches_) == len(expected_steps)
        for patch, (spec, sign, eta) in zip(rec.patches_, expected_steps):
            name = type(patch.utility).__name__
            expected_name = {"top-class": "TopClass", "class-wise": "ClassWise"}.get(
                spec[0], "TopK"
            )
            assert name == expected_name
            if spec[0] == "class-wise":
                assert patch.utility.c == spec[1]
            if spec[0] == "top-k":
                assert patch.utility.k == spec[1]
            assert patch.sign == sign
            assert patch.step == pytest.approx(eta, rel=1e-9)
        assert_allclose(rec.transform(P), expected_P, atol=1e-9)


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"family": "top-class", "tol": 0.0, "max_iter": 30},
        {"family": "class-wise", "step": "paper", "tol": 0.0, "max_iter": 30},
        {"step": 0.05, "tol": 0.0, "max_iter": 30},
        {"tol": 0.0, "validation_fraction": 0.3, "random_state": 0},
        {"family": UtilityFamily([TopK(2), ClassWise(0)]), "tol": 0.0, "max_iter": 20},
        {
            "family": LinearFamily(4).sample(6, random_state=0),
            "tol": 0.0,
            "max_iter": 20,
        },
    ],
)
def test_replay_on_fit_data_is_bit_for_bit(params):
    P, y = overconfident(600, 4, seed=5)
    rng = np.random.RandomState(5)
    w = rng.uniform(0.5, 2.0, size=600)
    rec = UtilityPatchingRecalibrator(**params)
    fitted = rec.fit_transform(P, y, sample_weight=w)
    assert len(rec.patches_) > 0
    replayed = rec.transform(P)
    assert_array_equal(replayed, fitted)
    # each row is patched on its own: any subset, in any order, gives its rows
    rows = rng.permutation(600)[:137]
    assert_array_equal(rec.transform(P[rows]), fitted[rows])
    # the last Brier score of the history is that of the fitted predictions
    if "validation_fraction" not in params:
        assert rec.history_["brier"][-1] == pytest.approx(
            _brier(replayed, y, w), rel=1e-12
        )
        uc = utility_calibration_error(y, replayed, rec.family, sample_weight=w)
        assert rec.history_["uc"][-1] == pytest.approx(uc, rel=1e-12)


@pytest.mark.parametrize("step", ["armijo", "paper", 0.02, 0.5, 3.0])
@pytest.mark.parametrize("family", ["comb", "top-class", "class-wise"])
def test_brier_never_increases(step, family):
    P, y = overconfident(400, 5, seed=6)
    rec = UtilityPatchingRecalibrator(family, step=step, tol=0.0, max_iter=40)
    fitted = rec.fit_transform(P, y)
    brier = rec.history_["brier"]
    assert brier.shape == (rec.n_iter_ + 1,) == rec.history_["uc"].shape
    assert np.all(np.diff(brier) < 0)
    assert brier[0] == pytest.approx(_brier(P, y), rel=1e-12)
    assert brier[-1] == pytest.approx(_brier(fitted, y), rel=1e-12)
    if rec.n_iter_ < 40:
        # only a constant step too large to lower the Brier score stops early
        assert isinstance(step, float) and step >= 0.5
        assert rec.stopping_reason_ == "no_decrease"
    if step == "armijo" and rec.n_iter_ > 0:
        # the accepted step is >= eta* = err / S, and Armijo's condition then
        # gives a drop >= eta* err / 2 = err^2 / (2 S) >= err^2 / (2 C)
        drops = -np.diff(brier)
        errs = rec.history_["uc"][:-1]
        assert np.all(drops >= errs**2 / (2 * 5) * (1 - 1e-9))


def test_paper_step_decreases_brier_as_proposition_a1():
    # Proposition A.1: with eta = err / C the Brier score drops by >= err^2 / C
    P, y = overconfident(500, 3, seed=7)
    rec = UtilityPatchingRecalibrator(step="paper", tol=0.0, max_iter=25).fit(P, y)
    drops = -np.diff(rec.history_["brier"])
    errs = rec.history_["uc"][:-1]
    assert rec.n_iter_ == 25
    assert np.all(drops >= errs**2 / 3 * (1 - 1e-9))


@pytest.mark.parametrize("family", ["comb", "top-class", "class-wise"])
def test_uc_decreases_on_overconfident_softmax(family):
    P_cal, y_cal = overconfident(4000, 5, seed=8)
    P_test, y_test = overconfident(20000, 5, seed=9)
    rec = UtilityPatchingRecalibrator(family).fit(P_cal, y_cal)
    before = utility_calibration_error(y_test, P_test, family)
    after = utility_calibration_error(y_test, rec.transform(P_test), family)
    assert before > 0.05
    assert after < 0.5 * before
    assert rec.history_["uc"][-1] <= rec.tol_ < rec.history_["uc"][0]
    assert _brier(rec.transform(P_test), y_test) < _brier(P_test, y_test)


def test_validation_fraction_early_stopping():
    P, y = overconfident(1500, 4, seed=10)
    rec = UtilityPatchingRecalibrator(
        tol=0.0, max_iter=200, validation_fraction=0.25, n_iter_no_change=3,
        random_state=0,
    )
    fitted = rec.fit_transform(P, y)
    hist = rec.history_
    assert set(hist) == {"uc", "brier", "validation_uc", "validation_brier"}
    for values in hist.values():
        assert values.shape == (rec.n_iter_ + 1,)
    # the patches kept are those up to the first best held-out Brier score
    best = int(np.argmin(hist["validation_brier"]))
    assert len(rec.patches_) == best
    if rec.stopping_reason_ == "early_stopping":
        assert rec.n_iter_ == best + 3
    assert_array_equal(rec.transform(P), fitted)
    # the held-out rows are 25% of the samples, stratified
    again = clone(rec).fit(P, y)
    assert_same_patches(again.patches_, rec.patches_)


def test_max_iter_zero_is_the_identity():
    P, y = overconfident(200, 3, seed=11)
    rec = UtilityPatchingRecalibrator(max_iter=0).fit(P, y)
    assert rec.patches_ == [] and rec.stopping_reason_ == "max_iter"
    out = rec.transform(P)
    assert_array_equal(out, P)
    assert out is not P


def test_binary_one_and_two_columns_agree():
    rng = np.random.RandomState(12)
    p = rng.uniform(size=800)
    y = (rng.uniform(size=800) < 0.5 + 0.6 * (p - 0.5)).astype(int)  # over-confident
    P2 = np.column_stack([1.0 - p, p])
    rec1 = UtilityPatchingRecalibrator(tol=0.0, max_iter=15).fit(p, y)
    rec2 = UtilityPatchingRecalibrator(tol=0.0, max_iter=15).fit(P2, y)
    assert len(rec1.patches_) > 0
    assert_same_patches(rec1.patches_, rec2.patches_)
    out1 = rec1.transform(p)
    assert out1.shape == (800,)
    assert_array_equal(out1, rec2.transform(P2)[:, 1])
    assert_array_equal(rec1.predict_proba(p), np.column_stack([1 - out1, out1]))
    assert rec1.predict_proba(p).shape == (800, 2)
    assert rec1.n_features_in_ == 1 and rec2.n_features_in_ == 2
    # either layout is accepted once fitted
    assert_array_equal(rec1.transform(P2), rec2.transform(P2))
    assert_array_equal(rec2.transform(p), out1)
    assert_array_equal(rec1.predict(p), (rec1.predict_proba(p)[:, 1] > 0.5).astype(int))


def test_string_labels_and_missing_classes():
    P, y = overconfident(300, 3, seed=13)
    labels = np.array(["ant", "bee", "cat"])
    rec = UtilityPatchingRecalibrator().fit(P, labels[y])
    assert_array_equal(rec.classes_, labels)
    assert set(rec.predict(P)) <= set(labels)
    same = UtilityPatchingRecalibrator().fit(P, y)
    assert_array_equal(rec.transform(P), same.transform(P))
    # a class absent from y: the columns are ambiguous (they could be
    # classes [0, 1, 2] or [1, 2, 3]) unless labels= names them
    keep = y != 2
    for y_kept in (y[keep], labels[y[keep]], y[keep] + 1):
        with pytest.raises(ValueError, match="ambiguous; pass labels="):
            UtilityPatchingRecalibrator().fit(P[keep], y_kept)
    rec = UtilityPatchingRecalibrator(labels=[0, 1, 2]).fit(P[keep], y[keep])
    assert_array_equal(rec.classes_, [0, 1, 2])
    named = UtilityPatchingRecalibrator(labels=labels).fit(P[keep], labels[y[keep]])
    assert_array_equal(named.classes_, labels)
    assert_array_equal(named.transform(P), rec.transform(P))


def test_predict_ties_go_to_the_lowest_class():
    rec = UtilityPatchingRecalibrator(max_iter=0).fit(
        np.array([[0.5, 0.5], [0.2, 0.8]]), ["b", "a"]
    )
    assert_array_equal(rec.predict([[0.5, 0.5], [0.3, 0.7]]), ["a", "b"])


@pytest.mark.parametrize("step", ["armijo", "paper"])
def test_integer_weights_equal_repetition(step):
    P, y = overconfident(300, 4, seed=14)
    w = np.random.RandomState(14).randint(0, 4, size=300)
    repeated = np.repeat(np.arange(300), w)
    params = dict(step=step, max_iter=25)
    weighted = UtilityPatchingRecalibrator(**params).fit(P, y, sample_weight=w)
    plain = UtilityPatchingRecalibrator(**params).fit(P[repeated], y[repeated])
    assert weighted.tol_ == pytest.approx(plain.tol_)
    assert len(weighted.patches_) > 0
    assert_same_patches(weighted.patches_, plain.patches_, rtol=1e-9)
    assert_allclose(weighted.history_["brier"], plain.history_["brier"], rtol=1e-12)
    P_new, _ = overconfident(100, 4, seed=15)
    assert_allclose(weighted.transform(P_new), plain.transform(P_new), atol=1e-12)


def test_weights_change_the_fit():
    P, y = overconfident(300, 3, seed=16)
    w = np.where(y == 0, 5.0, 1.0)
    a = UtilityPatchingRecalibrator().fit(P, y)
    b = UtilityPatchingRecalibrator().fit(P, y, sample_weight=w)
    assert b.history_["brier"][0] == pytest.approx(_brier(P, y, w))
    assert not np.allclose(a.transform(P), b.transform(P))


def test_inputs_are_not_modified_and_read_only_inputs_work():
    P, y = overconfident(300, 3, seed=17)
    w = np.random.RandomState(17).uniform(0.5, 2, size=300)
    copies = P.copy(), y.copy(), w.copy()
    for array in (P, y, w):
        array.setflags(write=False)
    rec = UtilityPatchingRecalibrator(tol=0.0, max_iter=10).fit(P, y, sample_weight=w)
    rec.fit_transform(P, y, sample_weight=w)
    out = rec.transform(P)
    rec.predict(P)
    rec.predict_proba(P)
    assert_array_equal(P, copies[0])
    assert_array_equal(y, copies[1])
    assert_array_equal(w, copies[2])
    assert out.flags.writeable
    p1 = np.ascontiguousarray(P[:, 1] / P[:, :2].sum(axis=1))
    p1_copy = p1.copy()
    UtilityPatchingRecalibrator().fit(p1, (y == 1).astype(int)).transform(p1)
    assert_array_equal(p1, p1_copy)


_P3 = np.array([[0.2, 0.3, 0.5], [0.6, 0.2, 0.2], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4]])


_Y3 = np.array([0, 1, 2, 2])


@pytest.mark.parametrize(
    "P, message",
    [
        (_P3 * 0.9, "X rows must be probability vectors summing to 1"),
        (_P3 - 0.25, r"X has values outside \[0, 1\]"),
        (np.where(_P3 == 0.5, np.nan, _P3), "X contains NaN or infinity"),
        (_P3[:, :1], "X has 1 column"),
        (_P3[:, :, None], "X must be 1- or 2-dimensional"),
        (np.array([1.2, 0.3, 0.5, 0.1]), r"X has values outside \[0, 1\]"),
        (np.empty((0, 3)), "X is empty"),
    ],
)
def test_fit_rejects_bad_probabilities(P, message):
    with pytest.raises(ValueError, match=message):
        UtilityPatchingRecalibrator().fit(P, _Y3[: len(P)])


def test_transform_checks_columns_and_fit():
    rec = UtilityPatchingRecalibrator()
    with pytest.raises(NotFittedError):
        rec.transform(_P3)
    with pytest.raises(NotFittedError):
        rec.predict(_P3)
    rec.fit(_P3, _Y3)
    with pytest.raises(ValueError, match="X has 4 columns but .* fitted on 3 classes"):
        rec.transform(np.full((2, 4), 0.25))
    with pytest.raises(ValueError, match=r"X has a 1-D array \(2 classes\)"):
        rec.transform([0.5, 0.5])
    with pytest.raises(ValueError, match="X rows must be probability vectors"):
        rec.predict_proba([[0.5, 0.5, 0.5]])


def test_fit_checks_y_and_weights():
    with pytest.raises(ValueError, match="X has 4 rows but y has 3"):
        UtilityPatchingRecalibrator().fit(_P3, _Y3[:3])
    with pytest.raises(ValueError, match="requires y"):
        UtilityPatchingRecalibrator().fit(_P3, None)
    with pytest.raises(ValueError, match="sample_weight has negative values"):
        UtilityPatchingRecalibrator().fit(_P3, _Y3, sample_weight=[1, -1, 1, 1])
    with pytest.raises(ValueError, match="sample_weight has 2 elements"):
        UtilityPatchingRecalibrator().fit(_P3, _Y3, sample_weight=[1, 1])
    with pytest.raises(ValueError, match="Unknown label type"):
        UtilityPatchingRecalibrator().fit(_P3, [0.5, 1.5, 0.5, 1.5])


@pytest.mark.parametrize(
    "params, error, message",
    [
        # scikit-learn's parameter validation (_parameter_constraints) words
        # these; booleans, which it takes for integers, are refused by skcal
        ({"max_iter": -1}, ValueError,
         r"'max_iter' parameter of UtilityPatchingRecalibrator must be an int in "
         r"the range \[0, inf\)"),
        ({"max_iter": 2.5}, ValueError, "'max_iter' parameter .* must be an int"),
        ({"max_iter": True}, ValueError, "max_iter must be a non-negative integer"),
        ({"tol": "big"}, ValueError,
         r"'tol' parameter .* must be a str among \{'auto'\} or a float in the "
         r"range \[0.0, inf\)"),
        ({"tol": -0.1}, ValueError, "'tol' parameter .* must be"),
        ({"tol": np.nan}, ValueError, "'tol' parameter .* must be"),
        ({"tol": True}, ValueError, "tol must be 'auto' or a non-negative float"),
        ({"step": "newton"}, ValueError, "'step' parameter .* must be a str among"),
        ({"step": 0.0}, ValueError, r"'step' parameter .* float in the range \(0.0, inf\)"),
        ({"step": np.inf}, ValueError, "'step' parameter .* must be"),
        ({"step": True}, ValueError, "step must be one of"),
        ({"validation_fraction": 1.0}, ValueError,
         r"'validation_fraction' parameter .* must be a float in the range "
         r"\(0.0, 1.0\) or None"),
        ({"validation_fraction": 0}, ValueError, "'validation_fraction' parameter"),
        ({"n_iter_no_change": 0}, ValueError, "'n_iter_no_change' parameter .* must be"),
        ({"n_iter_no_change": True}, ValueError, "n_iter_no_change must be a positive"),
        ({"random_state": "seed"}, ValueError, "'random_state' parameter"),
        ({"init_cv": 1}, ValueError, "'init_cv' parameter .* must be an int in the range"),
        ({"labels": 3}, ValueError, "'labels' parameter .* must be an array-like"),
        ({"family": "everything"}, ValueError, "Unknown family 'everything'"),
        ({"family": "linear"}, ValueError, "family='linear' names a continuous"),
        ({"family": LinearFamily(3)}, TypeError, "family: LinearFamily is a contin"),
        ({"family": 3}, TypeError, "family must be a name"),
        ({"family": TopK(5)}, ValueError, "TopK"),
    ],
)
def test_bad_parameters_are_named(params, error, message):
    with pytest.raises(error, match=message):
        UtilityPatchingRecalibrator(**params).fit(_P3, _Y3)


def test_validation_fraction_too_large_for_the_data():
    with pytest.raises(ValueError, match="validation_fraction=0.1 leaves no sample"):
        UtilityPatchingRecalibrator(validation_fraction=0.1, labels=[0, 1, 2]).fit(
            _P3[:1], [1]
        )
    with pytest.raises(ValueError, match="validation_fraction=0.9 leaves no sample"):
        UtilityPatchingRecalibrator(validation_fraction=0.9).fit(_P3, _Y3)


def test_family_objects_and_clone():
    P, y = overconfident(500, 4, seed=18)
    families = {
        "TopK(2)": (TopK(2), {"TopK(k=2)"}),
        "TopKFamily": (TopKFamily([1, 3]), {"TopK(k=1)", "TopK(k=3)"}),
        "union": (
            UtilityFamily(["top-class", ClassWise(1)]),
            {"TopClass()", "ClassWise(c=1)"},
        ),
    }
    for family, members in families.values():
        rec = UtilityPatchingRecalibrator(family, tol=0.0, max_iter=5).fit(P, y)
        assert len(rec.patches_) == 5
        assert {repr(p.utility) for p in rec.patches_} <= members
        cloned = clone(rec)
        assert repr(cloned.family) == repr(family)
        assert_array_equal(cloned.fit(P, y).transform(P), rec.transform(P))


def test_transform_reports_column_count_before_row_sums():
    rng = np.random.default_rng(5)
    P = rng.dirichlet(np.ones(5), 200)
    y = rng.integers(0, 5, 200)
    rec = UtilityPatchingRecalibrator().fit(P, y)
    # dropping a column also breaks the row sums; the column count is the news
    with pytest.raises(ValueError, match="has 4 columns but .* fitted on 5 classes"):
        rec.transform(P[:, :4])


def test_incremental_audit_matches_full_audit_on_random_patches():
    # The twin is utility_calibration_error on the whole matrix, recomputed
    # from scratch after every update (ties, weights with zeros, n = 1, one
    # class, p in {0, 1}, patches of few and of most rows).
    from skcal.metrics import utility_calibration_error
    from skcal.recalibration._patch_ops import IncrementalAudit as _IncrementalAudit
    from skcal.utilities._families import members as _members

    rng = np.random.RandomState(11)
    n_cases = 0
    for case in range(60):
        C = rng.randint(2, 6)
        n = rng.choice([1, 2, 7, 40, 200])
        if case % 3 == 0:
            P = np.eye(C)[rng.randint(C, size=n)]  # p in {0, 1}
        elif case % 3 == 1:
            P = rng.dirichlet(np.ones(C), size=n).round(1)  # ties
            P /= P.sum(axis=1, keepdims=True)
        else:
            P = rng.dirichlet(np.ones(C) * 0.5, size=n)
        y = np.zeros(n, dtype=np.intp) if case % 7 == 0 else rng.randint(C, size=n)
        w = rng.randint(0, 3, size=n).astype(float)
        w[0] = 1.0
        family = ["comb", "top-class", "class-wise", "top-k"][case % 4]
        utilities = _members(_check_family_for_test(family), C)
        audit = _IncrementalAudit(utilities, P.copy(), y, w)
        for _ in range(4):
            value, details = audit.audit()
            expected, exp_details = utility_calibration_error(
                y, P, family, sample_weight=w, labels=np.arange(C),
                return_details=True,
            )
            assert value == pytest.approx(expected, rel=1e-12, abs=1e-15)
            errors = exp_details["errors"]
            # the worst utility may differ only between (near-)ties
            worst = [repr(u) for u, e in zip(utilities, errors)
                     if e >= expected - 1e-12]
            assert repr(details["utility"]) in worst
            n_cases += 1
            # move a random subset of rows (sometimes most, sometimes one)
            k = rng.choice([1, max(1, n // 5), n])
            rows = np.sort(rng.choice(n, size=k, replace=False))
            P = P.copy()
            P[rows] = rng.dirichlet(np.ones(C), size=k)
            audit.update(P, rows)
    assert n_cases == 240


def _check_family_for_test(family):
    from skcal.recalibration._patching import _check_family

    return _check_family(family)


def test_incremental_and_full_audits_give_the_same_fit(monkeypatch):
    import skcal.recalibration._patch_ops as ops

    for seed in range(6):
        P, y = overconfident(300, 3 + seed % 3, seed=40 + seed)
        incremental = UtilityPatchingRecalibrator(tol=0.0, max_iter=15).fit(P, y)
        with monkeypatch.context() as patched:
            patched.setattr(ops, "INCREMENTAL_MAX_ELEMENTS", 0)
            full = UtilityPatchingRecalibrator(tol=0.0, max_iter=15).fit(P, y)
        assert_same_patches(incremental.patches_, full.patches_, rtol=1e-9)
        assert_allclose(incremental.history_["uc"], full.history_["uc"], rtol=1e-9)


def test_warm_start_patches_what_the_start_leaves():
    P, y = overconfident(3000, 4, seed=21)
    for init in ("temperature", "isotonic", "sigmoid"):
        for init_cv in (None, 3):
            rec = UtilityPatchingRecalibrator(
                init=init, init_cv=init_cv, random_state=0
            ).fit(P, y)
            start = rec.init_.predict_proba(P)
            Q = start
            for patch in rec.patches_:
                from skcal.recalibration._patch_ops import apply_patch as _apply_patch

                Q = _apply_patch(Q, patch)
            # transform = the refitted start, then the patches in order
            assert_array_equal(rec.transform(P), Q)
            assert_array_equal(rec.fit_transform(P, y), rec.transform(P))
    # a callable start is applied as it is, without fitting
    half = UtilityPatchingRecalibrator(init=lambda Q: 0.5 * Q + 0.5 / Q.shape[1])
    half.fit(P, y)
    plain = UtilityPatchingRecalibrator().fit(0.5 * P + 0.125, y)
    assert_same_patches(half.patches_, plain.patches_)


def test_warm_start_temperature_beats_the_start_on_overconfident_data():
    P, y = overconfident(6000, 5, seed=22)
    rec = UtilityPatchingRecalibrator(init="temperature", random_state=0)
    rec.fit(P[:3000], y[:3000])
    from skcal.metrics import utility_calibration_error

    start = utility_calibration_error(y[3000:], rec.init_.predict_proba(P[3000:]),
                                      "comb")
    after = utility_calibration_error(y[3000:], rec.transform(P[3000:]), "comb")
    uncalibrated = utility_calibration_error(y[3000:], P[3000:], "comb")
    assert after <= start < uncalibrated


def test_fallback_temperature_takes_an_optimum_on_its_bound():
    # Used when scikit-learn has no method="temperature" (before 1.8). One-hot
    # rows, half of them wrong: the log-loss falls as T grows, so the optimum
    # over log T in [-5, 5] is the bound 5 itself, whatever the rows' order
    # (bounded Brent alone ends a few 1e-6 inside it, row-order dependent).
    from skcal.recalibration._common import LogLossTemperatureScaling

    P = np.eye(2)[[0, 1, 0, 1, 1, 0]]
    y = np.array([1, 1, 0, 0, 0, 1])
    for order in (np.arange(6), np.array([5, 3, 1, 0, 2, 4])):
        fitted = LogLossTemperatureScaling().fit(P[order], y[order])
        assert fitted.temperature_ == np.exp(5.0)
    # an interior optimum stays where Brent found it: two-class rows with
    # p = 0.8 right 80% of the time are calibrated, so T = 1 (to Brent's
    # tolerance, 1e-5 in log T)
    P = np.tile([[0.8, 0.2]], (10, 1))
    y = np.array([0] * 8 + [1] * 2)
    assert abs(np.log(LogLossTemperatureScaling().fit(P, y).temperature_)) < 1e-4


def test_bad_init_is_named():
    P, y = overconfident(100, 3, seed=0)
    with pytest.raises(ValueError, match="init must be None"):
        UtilityPatchingRecalibrator(init="platt").fit(P, y)
    with pytest.raises(TypeError, match="init must be None"):
        UtilityPatchingRecalibrator(init=3).fit(P, y)
    # scikit-learn's parameter validation words this one (_parameter_constraints)
    with pytest.raises(ValueError, match="'init_cv' parameter .* int in the range"):
        UtilityPatchingRecalibrator(init="isotonic", init_cv=1).fit(P, y)


def test_feature_names_out_and_set_output():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(6)
    P = rng.dirichlet(np.ones(3), 300)
    y = rng.integers(0, 3, 300)
    frame = pd.DataFrame(P, columns=["cat", "dog", "fish"])
    rec = UtilityPatchingRecalibrator().set_output(transform="pandas").fit(frame, y)
    np.testing.assert_array_equal(rec.feature_names_in_, ["cat", "dog", "fish"])
    np.testing.assert_array_equal(rec.get_feature_names_out(), ["cat", "dog", "fish"])
    out = rec.transform(frame)
    assert list(out.columns) == ["cat", "dog", "fish"]
    expected = UtilityPatchingRecalibrator().fit(P, y).transform(P)
    np.testing.assert_array_equal(out.to_numpy(), expected)
    with pytest.raises(ValueError, match="feature names should match"):
        rec.transform(frame.rename(columns={"cat": "cow"}))
    # fitted on an array: the default names
    plain = UtilityPatchingRecalibrator().fit(P, y)
    np.testing.assert_array_equal(plain.get_feature_names_out(), ["x0", "x1", "x2"])


def _kernel_cases(seed, n_cases):
    """Probability matrices with ties, zeros, p in {0, 1}, n = 1, one class, many classes."""
    rng = np.random.RandomState(seed)
    for case in range(n_cases):
        C = [1, 2, 3, 5, 10, 12, 40][case % 7] if case % 11 else 2
        n = [1, 2, 9, 150][case % 4]
        kind = case % 5
        if kind == 0:
            P = np.eye(C)[rng.randint(C, size=n)]  # p in {0, 1}
        elif kind == 1:
            P = np.round(4 * rng.dirichlet(np.ones(C), size=n)) + 1.0  # ties
            P /= P.sum(axis=1, keepdims=True)
        elif kind == 2:
            P = rng.dirichlet(np.full(C, 0.2), size=n)  # near-zero entries
        elif kind == 3:
            P = np.full((n, C), 1.0 / C)  # every entry tied
        else:
            P = rng.dirichlet(np.ones(C), size=n)
        y = np.zeros(n, dtype=np.intp) if case % 6 == 0 else rng.randint(C, size=n)
        yield case, P, y


def test_projection_kernel_is_bit_for_bit_the_numpy_sort_projection():
    from reference_patching import simplex_projection_sort_numpy

    rng = np.random.RandomState(21)
    cases = _projection_cases()
    for C in (1, 2, 3, 10, 40):
        cases.append(rng.normal(size=(200, C)))  # many rows at once
        cases.append(np.round(rng.normal(size=(50, C)), 1))  # ties
        cases.append(np.zeros((3, C)))
    n_rows = 0
    for x in cases:
        X = np.atleast_2d(x)
        assert_array_equal(project_simplex(X), simplex_projection_sort_numpy(X))
        n_rows += X.shape[0]
    assert n_rows > 1500


def test_patch_step_kernel_is_bit_for_bit_numpy():
    from skcal.recalibration._patch_ops import patch_rows as _patch_rows

    from reference_patching import simplex_projection_sort_numpy

    rng = np.random.RandomState(22)
    n_cases = 0
    for _case, P, _ in _kernel_cases(22, 140):
        U = rng.choice([-1.0, -0.5, 0.0, 1.0], size=P.shape)
        for step in (1e-3, 0.05, 0.8, 3.0):
            for sign in (1, -1):
                got = _patch_rows(P, U, sign, step)
                expected = simplex_projection_sort_numpy(P + (step * sign) * U)
                assert_array_equal(got, expected)
                n_cases += 1
    assert n_cases == 140 * 8
    with pytest.raises(ValueError, match="NaN or infinity"):
        _patch_rows(np.array([[0.5, 0.5]]), np.array([[1.0, 0.0]]), 1, np.inf)


def test_rank_utilities_kernel_is_bit_for_bit_the_utilities_own_evaluation():
    from skcal.recalibration._patch_ops import IncrementalAudit as _IncrementalAudit
    from skcal.utilities import ClassWise as CW
    from skcal.utilities import TopClass
    from skcal.utilities import TopK as TK

    from reference_utilities import predicted_and_realised_bruteforce

    n_cases = 0
    for _case, P, y in _kernel_cases(23, 154):
        C = P.shape[1]
        if C < 2:
            continue  # a utility needs two classes
        utilities = [CW(c) for c in range(C)] + [TK(k) for k in range(1, C + 1)]
        utilities.append(TopClass())
        audit = _IncrementalAudit(utilities, P, y, np.ones(P.shape[0]))
        V, R = audit._evaluate(P)
        # the twin: the utilities' own (numpy) evaluation, as the audit had it
        V_numpy, realised = UtilityFamily(utilities).evaluate(P, y)
        assert_array_equal(V, V_numpy)
        assert_array_equal(R, realised - V_numpy)
        # and the definitions, row by row (sums in another order: close), on
        # the first rows (the definitions are slow)
        head = slice(0, 6)
        for row, u in enumerate(utilities):
            spec = (
                ("class-wise", u.c) if isinstance(u, CW)
                else ("top-k", u.k) if isinstance(u, TK)
                else ("top-class", None)
            )
            v_ref, realised_ref = predicted_and_realised_bruteforce(
                spec, P[head], y[head]
            )
            assert_allclose(V[row, head], v_ref, rtol=0, atol=1e-12)
            assert_array_equal(R[row, head] + V[row, head], realised_ref)
        # a subset of rows moved, as after a patch: re-evaluated in place
        rows = np.flatnonzero(np.arange(P.shape[0]) % 2 == 0)
        moved = P.copy()
        moved[rows] = P[::-1][rows]
        audit.V, audit.R = V.copy(), R.copy()
        V_moved, R_moved = audit._evaluate(moved, rows)
        V_numpy, realised = UtilityFamily(utilities).evaluate(moved, y)
        assert_array_equal(V_moved, V_numpy)
        assert_array_equal(R_moved, realised - V_numpy)
        n_cases += 1
    assert n_cases > 130


def test_top_k_indicator_is_the_top_k_utility_matrix():
    from skcal.recalibration._patch_ops import top_k_indicator as _top_k_indicator

    from reference_utilities import utility_vector_bruteforce

    n_cases = 0
    for _case, P, _ in _kernel_cases(24, 154):
        C = P.shape[1]
        if C < 2:
            continue
        for k in sorted({1, 2, C // 2 + 1, C} & set(range(1, C + 1))):
            got = _top_k_indicator(P, k)
            assert_array_equal(got, TopK(k)._checked_matrix(P))
            expected = [utility_vector_bruteforce(("top-k", k), p) for p in P]
            assert_array_equal(got, np.array(expected).reshape(P.shape))
            n_cases += 1
    assert n_cases > 400


def test_patching_kernels_check_shapes():
    from skcal._kernels._patching import (
        interval_upper_bounds,
        project_shifted,
        rank_utilities,
        shifted_step,
        top_k_rows,
    )

    P = np.full((3, 2), 0.5)
    with pytest.raises(ValueError, match="shapes do not match"):
        shifted_step(P, np.zeros((3, 3)), 1.0, np.empty((3, 2)))
    with pytest.raises(ValueError, match="shapes do not match"):
        shifted_step(P, np.zeros((3, 2)), 1.0, np.empty((2, 2)))
    with pytest.raises(ValueError, match="shapes do not match"):
        project_shifted(np.zeros((3, 2)), np.zeros(2))
    index = np.zeros(1, dtype=np.intp)
    rows = np.arange(3)
    with pytest.raises(ValueError, match="shapes do not match"):
        rank_utilities(P, np.zeros(2, dtype=np.intp), index, index + 1,
                       np.empty((1, 3)), np.empty((1, 3)), rows)
    with pytest.raises(ValueError, match="shapes do not match"):
        rank_utilities(P, np.zeros(3, dtype=np.intp), index, index + 1,
                       np.empty((1, 2)), np.empty((1, 3)), rows)
    with pytest.raises(ValueError, match="shapes do not match"):
        interval_upper_bounds(np.zeros((2, 3)), np.zeros((2, 3)), np.ones(3),
                              np.empty(1))
    with pytest.raises(ValueError, match="shapes do not match"):
        top_k_rows(P, 1, np.empty((3, 3)))


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"tol": 0.0, "max_iter": 40},
        {"family": "top-k", "tol": 0.0, "max_iter": 40, "step": 0.05},
        {"family": "top-class", "step": "paper", "tol": 0.0, "max_iter": 30},
        {"tol": 0.0, "max_iter": 30, "validation_fraction": 0.25, "random_state": 1},
    ],
)
def test_fast_fit_is_bit_for_bit_the_numpy_fit(params, monkeypatch):
    # The fit with the compiled kernels against the same fit with their numpy
    # twins: the projection of reference_patching.py, the utilities' own
    # evaluation and utility matrices, v_u recomputed for every patch. The
    # patches (utilities, intervals, signs, steps), the fitted and replayed
    # predictions and the history must be equal to the last bit.
    import skcal.recalibration._patch_ops as ops
    import skcal.recalibration._patching as module

    from reference_patching import simplex_projection_sort_numpy

    def numpy_evaluate(self, P, rows=None):
        if rows is None:
            V, realised = UtilityFamily(self.utilities).evaluate(P, self.y)
            return V, realised - V
        V, realised = UtilityFamily(self.utilities).evaluate(P[rows], self.y[rows])
        self.V[:, rows] = V
        self.R[:, rows] = realised - V
        return self.V, self.R

    original_patch = module.UtilityPatchingRecalibrator._patch

    def patch_recomputing_v(self, *args):
        return original_patch(self, *args[:8])  # v = None: recomputed

    rng = np.random.RandomState(25)
    for case in range(4):
        C = [3, 4, 7, 10][case]
        n = [300, 800, 500, 1200][case]
        P, y = overconfident(n, C, seed=250 + case, temperature=2.0)
        if case == 2:
            P = np.round(P, 2)  # ties
            P /= P.sum(axis=1, keepdims=True)
        w = rng.randint(0, 3, size=n).astype(float) if case % 2 else None
        fast = UtilityPatchingRecalibrator(**params)
        P_fast = fast.fit_transform(P, y, sample_weight=w)
        with monkeypatch.context() as slow:
            # the fit calls them from both modules: replace them in both
            for where in (ops, module):
                slow.setattr(
                    where, "patch_rows",
                    lambda rows, U, sign, step: simplex_projection_sort_numpy(
                        rows + (step * sign) * U
                    ),
                )
            slow.setattr(
                module, "utility_rows", lambda u, rows: u._checked_matrix(rows)
            )
            slow.setattr(ops, "utility_rows", lambda u, rows: u._checked_matrix(rows))
            slow.setattr(ops.IncrementalAudit, "_evaluate", numpy_evaluate)
            slow.setattr(
                module.UtilityPatchingRecalibrator, "_patch", patch_recomputing_v
            )
            numpy_fit = UtilityPatchingRecalibrator(**params)
            P_numpy = numpy_fit.fit_transform(P, y, sample_weight=w)
            replayed_numpy = numpy_fit.transform(P)
        assert len(fast.patches_) > 0
        assert [(repr(p.utility), p.interval, p.sign, p.step) for p in fast.patches_] == [
            (repr(p.utility), p.interval, p.sign, p.step) for p in numpy_fit.patches_
        ]
        assert_array_equal(P_fast, P_numpy)
        assert_array_equal(fast.transform(P), replayed_numpy)
        for key in fast.history_:
            assert_array_equal(fast.history_[key], numpy_fit.history_[key])


def test_interval_upper_bounds_are_upper_bounds_of_the_exact_audit():
    # The twin of the bound is the exact audit (sorted order, the kernel the
    # full audit uses) and, on small cases, the brute force over all
    # intervals; the bound must hold on every case (ties, zero weights,
    # n = 1, one class, p in {0, 1}, tiny and large v) and be tight when
    # every bin holds one distinct value.
    from skcal._kernels._interval import max_abs_interval_rows
    from skcal._kernels._patching import interval_upper_bounds

    rng = np.random.RandomState(26)
    n_cases = 0
    for case in range(300):
        m = rng.randint(1, 5)
        n = [1, 2, 7, 60, 500][case % 5]
        kind = case % 6
        if kind == 0:
            V = rng.randint(0, 2, size=(m, n)).astype(float)  # {0, 1}
        elif kind == 1:
            V = np.round(rng.uniform(size=(m, n)), 2)  # ties
        elif kind == 2:
            V = rng.uniform(size=(m, n)) ** 20  # crowded near 0
        elif kind == 3:
            V = 1.0 + rng.uniform(-1e-15, 1e-15, size=(m, n))  # top-K(C): about 1
        elif kind == 4:
            V = rng.uniform(-0.5, 1.5, size=(m, n))  # outside [0, 1] too
        else:
            V = rng.uniform(size=(m, n))
        realised = rng.randint(0, 2, size=(m, n)).astype(float)
        R = np.ascontiguousarray(realised - V)
        w = rng.randint(0, 3, size=n).astype(float) if case % 2 else np.ones(n)
        order = np.argsort(V, axis=1)
        value = np.empty(m)
        lower, upper, sign = np.empty(m), np.empty(m), np.empty(m, dtype=np.int8)
        max_abs_interval_rows(V, R, w, order, value, lower, upper, sign)
        bound = np.empty(m)
        interval_upper_bounds(V, R, w, bound)
        assert np.all(bound >= value * (1 + 1e-12)), (case, bound, value)
        if n <= 7:
            for k in range(m):  # brute force over intervals of distinct v
                values = np.unique(V[k])
                best = 0.0
                for lo in range(values.shape[0]):
                    for hi in range(lo, values.shape[0]):
                        inside = (V[k] >= values[lo]) & (V[k] <= values[hi])
                        best = max(best, abs(np.dot(w[inside], R[k, inside])))
                assert bound[k] >= best
        n_cases += 1
    # one distinct value per bin: the bound is the exact value (up to its margin)
    V = np.array([[0.125, 0.25, 0.5, 0.75]])
    R = np.array([[0.5, -0.25, 0.5, 0.25]])
    bound = np.empty(1)
    interval_upper_bounds(V, R, np.ones(4), bound)
    assert bound[0] == pytest.approx(1.0, rel=1e-9)
    assert n_cases == 300


def test_no_patch_on_a_small_set_is_said_with_the_size_needed():
    # an over-confident model (temperature 1/2) on 30 rows: its UC is
    # below tol="auto" at this size, so no patch is made, which is said
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(30, 3))
    P_true = np.exp(Z) / np.exp(Z).sum(axis=1, keepdims=True)
    y = np.array([rng.choice(3, p=row) for row in P_true])
    P = np.exp(2 * Z) / np.exp(2 * Z).sum(axis=1, keepdims=True)
    with pytest.warns(UserWarning, match="made no patch") as record:
        model = UtilityPatchingRecalibrator().fit(P, y)
    assert model.patches_ == []
    message = str(record[0].message)
    needed = int(message.split("from a total weight of about ")[1].split(";")[0])
    uc = model.history_["uc"][0]
    # the size needed is where tol="auto", sqrt(log(4|U|) / (2 n)), falls to
    # the error found (tol_ is its value at n = 30)
    assert model.tol_ > uc
    assert model.tol_ * np.sqrt(30 / needed) <= uc < model.tol_ * np.sqrt(30 / (needed - 1))
    # with that many rows (the same predictions repeated) patches are made
    reps = int(np.ceil(needed / 30)) + 1
    fitted = UtilityPatchingRecalibrator().fit(np.tile(P, (reps, 1)), np.tile(y, reps))
    assert fitted.patches_


@pytest.mark.filterwarnings("ignore:UtilityPatchingRecalibrator made no patch")
def test_random_state_seeds_an_init_whose_own_random_state_is_none():
    # HistogramBinning picks its bins by inner cross-validation: with its
    # random_state None it read the global state, so two fits with
    # random_state=0 differed; now it gets a seed drawn from random_state
    from skcal.recalibration import HistogramBinning

    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.full(3, 0.7), size=400)
    y = np.array([rng.choice(3, p=row) for row in P])
    outputs = []
    for global_seed in (1, 2):
        np.random.seed(global_seed)
        model = UtilityPatchingRecalibrator(init=HistogramBinning(), random_state=0)
        outputs.append(model.fit(P, y).predict_proba(P))
    assert_array_equal(outputs[0], outputs[1])
    # the caller's init is not changed, and a seed given to it is kept
    init = HistogramBinning()
    UtilityPatchingRecalibrator(init=init, random_state=0).fit(P, y)
    assert init.random_state is None
    kept = UtilityPatchingRecalibrator(init=HistogramBinning(random_state=5), random_state=0)
    assert kept.fit(P, y).init_.random_state == 5
