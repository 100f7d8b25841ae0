"""Utilities and families (skcal.utilities) against the brute force of reference_utilities.py."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone

from skcal import (
    DCG,
    ClassWise,
    ClassWiseFamily,
    DecisionUtility,
    GainMatrix,
    Linear,
    LinearFamily,
    Rank,
    RankFamily,
    SimilarityUtility,
    TopClass,
    TopK,
    TopKFamily,
    Utility,
    UtilityFamily,
)
from skcal.utilities._engine import distinct_rows, ranks

from cases import over_cases
from reference_utilities import (
    predicted_and_realised_bruteforce,
    rank_bruteforce,
    utility_vector_bruteforce,
)


def random_proba(rng, n, C):
    """Probability rows with many ties, or none.

    Coarse dyadic rows (multiples of 1/8 or 1/4, with repeated and permuted
    rows) make every sum exact in floating point, so argmax and rank ties
    are real ties for both the fast path and the reference.
    """
    kind = rng.integers(4)
    if kind == 0:  # dyadic, ties within and across rows
        return rng.multinomial(8, np.ones(C) / C, size=n) / 8.0
    if kind == 1:  # a few distinct rows, repeated
        base = rng.multinomial(4, rng.dirichlet(np.ones(C)), size=3) / 4.0
        return base[rng.integers(0, 3, n)]
    if kind == 2:  # continuous
        return rng.dirichlet(np.ones(C), size=n)
    return np.eye(C)[rng.integers(0, C, n)]  # one-hot rows (0 and 1 exactly)


def random_labels(rng, P):
    kind = rng.integers(3)
    n, C = P.shape
    if kind == 0:  # drawn from P (near calibrated)
        return np.array([rng.choice(C, p=p / p.sum()) for p in P])
    if kind == 1:  # a single class
        return np.full(n, rng.integers(C))
    return rng.integers(0, C, n)


def dyadic(rng, shape, denominator=4, low=-1.0):
    """Entries in [low, 1] on the grid 1/denominator (exact sums with dyadic P)."""
    lo = int(round(low * denominator))
    return rng.integers(lo, denominator + 1, size=shape) / denominator


def random_spec(rng, C):
    """A random (reference spec, skcal utility) pair."""
    kind = rng.integers(9)
    if kind == 0:
        return ("top-class", None), TopClass()
    if kind == 1:
        c = int(rng.integers(C))
        return ("class-wise", c), ClassWise(c)
    if kind == 2:
        k = int(rng.integers(1, C + 1))
        return ("top-k", k), TopK(k)
    if kind == 3:
        a = dyadic(rng, C)
        return ("linear", a), Linear(a)
    if kind == 4:
        theta = dyadic(rng, C)
        return ("rank", theta), Rank(theta)
    if kind == 5:
        gamma = float(rng.choice([0.0, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0]))
        return ("dcg", gamma), DCG(gamma)
    if kind == 6:
        loss = dyadic(rng, (C, int(rng.integers(1, 4))))
        return ("decision", loss), DecisionUtility(loss)
    if kind == 7:
        R = dyadic(rng, (C, C), low=0.0)
        np.fill_diagonal(R, 1.0)
        return ("gain", R), GainMatrix(R)
    S = dyadic(rng, (C, C))
    S = np.triu(S) + np.triu(S, 1).T
    np.fill_diagonal(S, 1.0)
    return ("similarity", S), SimilarityUtility(S)


def cases(seed, count):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        n = [1, 2, 3][i] if i < 3 else int(rng.integers(1, 30))
        C = int(rng.integers(2, 6))
        P = random_proba(rng, n, C)
        spec, utility = random_spec(rng, C)
        out.append((P, random_labels(rng, P), spec, utility))
    return out


# --- every utility against its definition ----------------------------------------


@over_cases("P, y, spec, utility", cases(0, 300))
def test_evaluate_matches_definition(P, y, spec, utility):
    v, realised = utility.evaluate(P, y)
    v_ref, realised_ref = predicted_and_realised_bruteforce(spec, P, y)
    np.testing.assert_allclose(v, v_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(realised, realised_ref, rtol=0, atol=1e-12)
    U = utility.utility_matrix(P)
    U_ref = np.array([utility_vector_bruteforce(spec, p) for p in P])
    np.testing.assert_allclose(U, U_ref, rtol=0, atol=1e-12)
    assert np.all(np.abs(U) <= 1)


def test_ranks_match_definition():
    rng = np.random.default_rng(1)
    for _ in range(50):
        P = random_proba(rng, 10, int(rng.integers(2, 7)))
        R = ranks(P)
        for i in range(P.shape[0]):
            assert R[i].tolist() == [rank_bruteforce(P[i], j) for j in range(P.shape[1])]
            assert sorted(R[i]) == list(range(1, P.shape[1] + 1))


@over_cases("seed", range(20))
def test_special_cases_agree(seed):
    # TopK(1) = TopClass = GainMatrix(I); ClassWise(c) = Linear(e_c);
    # TopK(k) = Rank(1{r <= k}); DCG(0) is the constant utility 1
    rng = np.random.default_rng(seed)
    C = int(rng.integers(2, 6))
    P = random_proba(rng, 25, C)
    y = random_labels(rng, P)
    top = TopClass().evaluate(P, y)
    for other in (TopK(1), GainMatrix(np.eye(C))):
        np.testing.assert_array_equal(other.evaluate(P, y)[1], top[1])
        np.testing.assert_allclose(other.evaluate(P, y)[0], top[0], atol=1e-15)
    c = int(rng.integers(C))
    np.testing.assert_allclose(ClassWise(c).evaluate(P, y), Linear(np.eye(C)[c]).evaluate(P, y))
    k = int(rng.integers(1, C + 1))
    theta = (np.arange(1, C + 1) <= k).astype(float)
    np.testing.assert_allclose(TopK(k).evaluate(P, y), Rank(theta).evaluate(P, y), atol=1e-12)
    v, realised = DCG(0.0).evaluate(P, y)
    np.testing.assert_allclose(v, 1.0, atol=1e-12)
    np.testing.assert_array_equal(realised, 1.0)


def test_rank_utility_depends_on_sorted_probabilities_only():
    # v is the same for permuted rows, exactly: equal v must form one tie group
    rng = np.random.default_rng(2)
    P = rng.dirichlet(np.ones(5), size=40)
    P[10:20] = P[:10, [2, 0, 4, 1, 3]]
    P[20:] = P[:20, ::-1]
    y = rng.integers(0, 5, 40)
    for utility in (Rank(rng.uniform(-1, 1, 5)), DCG(1.5), TopK(3)):
        v, _ = utility.evaluate(P, y)
        assert np.array_equal(v[20:], v[:20])
        assert np.array_equal(v[10:20], v[:10])


@pytest.mark.parametrize("C", [3, 17, 100])
def test_equal_rows_get_equal_predicted_utility(C):
    # BLAS may round equal rows differently depending on their position; the
    # utilities evaluate products on distinct rows only
    rng = np.random.default_rng(C)
    base = rng.dirichlet(np.ones(C), size=7)
    index = rng.integers(0, 7, 3001)
    P = base[index]
    y = rng.integers(0, C, 3001)
    S = rng.uniform(-1, 1, (C, C))
    family = UtilityFamily(
        [Linear(rng.uniform(-1, 1, C)) for _ in range(5)]
        + [Rank(rng.uniform(-1, 1, C)), DecisionUtility(rng.uniform(-1, 1, (C, 4)))]
        + [GainMatrix(rng.uniform(0, 1, (C, C))), SimilarityUtility(S)]
    )
    V, _ = family.evaluate(P, y)
    for k in range(7):
        group = V[:, index == k]
        assert np.all(group == group[:, :1])


def test_distinct_rows():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 3, (200, 4)) / 2.0
    X[5] = -0.0 * X[5]  # -0.0 and 0.0 are the same row
    distinct, inverse = distinct_rows(X)
    np.testing.assert_array_equal(distinct[inverse], X)
    assert distinct.shape[0] == np.unique(X + 0.0, axis=0).shape[0]
    Y = rng.random((50, 3))
    same, inverse = distinct_rows(Y)
    assert same is Y and inverse is None


# --- families ------------------------------------------------------------------


def test_family_members_and_evaluate():
    rng = np.random.default_rng(4)
    P = random_proba(rng, 30, 4)
    y = random_labels(rng, P)
    comb = UtilityFamily([ClassWiseFamily(), TopKFamily()])
    members = comb.members(4)
    assert repr(members) == (
        "[ClassWise(c=0), ClassWise(c=1), ClassWise(c=2), ClassWise(c=3), "
        "TopK(k=1), TopK(k=2), TopK(k=3), TopK(k=4)]"
    )
    V, realised = comb.evaluate(P, y)
    assert V.shape == realised.shape == (8, 30)
    for row, utility in enumerate(members):
        v, r = utility.evaluate(P, y)
        np.testing.assert_array_equal(V[row], v)
        np.testing.assert_array_equal(realised[row], r)
    # nested unions flatten in order; names are accepted as members
    nested = UtilityFamily(["comb", TopClass(), UtilityFamily([Linear([1, 0, 0, 0.5])])])
    assert len(nested.members(4)) == 10
    assert repr(ClassWiseFamily([1, 3]).members(4)) == "[ClassWise(c=1), ClassWise(c=3)]"
    assert repr(TopKFamily([2]).members(4)) == "[TopK(k=2)]"


def test_mixed_family_matches_members():
    rng = np.random.default_rng(5)
    C = 4
    P = random_proba(rng, 40, C)
    y = random_labels(rng, P)
    pairs = [random_spec(rng, C) for _ in range(30)]
    V, realised = UtilityFamily([u for _, u in pairs]).evaluate(P, y)
    for row, (spec, _) in enumerate(pairs):
        v_ref, r_ref = predicted_and_realised_bruteforce(spec, P, y)
        np.testing.assert_allclose(V[row], v_ref, atol=1e-12)
        np.testing.assert_allclose(realised[row], r_ref, atol=1e-12)


@pytest.mark.parametrize("family_class", [LinearFamily, RankFamily])
def test_sampling_on_the_cube_boundary(family_class):
    C, M = 5, 4000
    members = family_class(C).sample(M, random_state=0).members(C)
    assert len(members) == M
    params = np.array([u.a if family_class is LinearFamily else u.theta for u in members])
    assert np.all(np.abs(params) <= 1)
    np.testing.assert_array_equal(np.abs(params).max(axis=1), 1.0)
    if family_class is RankFamily:
        assert np.all(np.diff(params, axis=1) <= 0)
        # sorted boundary points: theta_1 = 1 or theta_C = -1, each half the time
        top = params[:, 0] == 1
        assert np.all(top | (params[:, -1] == -1))
        assert abs(top.mean() - 0.5) < 0.05
    else:
        # each of the 2C faces equally likely; the free coordinates uniform
        on_face = np.abs(params) == 1
        np.testing.assert_allclose(on_face.mean(axis=0), 1 / C, atol=0.03)
        assert abs((params == 1).mean() - (params == -1).mean()) < 0.03
        free = params[~on_face]
        assert abs(free.mean()) < 0.03 and abs((free**2).mean() - 1 / 3) < 0.03
    # reproducible, and different seeds differ
    again = family_class(C).sample(M, random_state=0).members(C)
    other = family_class(C).sample(M, random_state=1).members(C)
    assert repr(again) == repr(members) and repr(other) != repr(members)


# --- parameters, pickling, errors ----------------------------------------------------


def all_objects():
    C = 3
    return [
        TopClass(),
        ClassWise(1),
        TopK(2),
        Linear([1.0, -0.5, 0.0]),
        Rank(np.array([1.0, 0.0, -1.0])),
        DCG(1.5),
        DecisionUtility([[0, 1], [1, 0], [0.5, 0.5]]),
        GainMatrix(np.eye(C)),
        SimilarityUtility(np.full((C, C), 0.5)),
        UtilityFamily([TopClass(), ClassWiseFamily()]),
        ClassWiseFamily(),
        TopKFamily([1, 3]),
        LinearFamily(C),
        RankFamily(C),
    ]


@pytest.mark.parametrize("obj", all_objects(), ids=lambda o: type(o).__name__)
def test_params_pickle_and_clone(obj):
    params = obj.get_params()
    assert set(params) == set(type(obj)._get_param_names())
    copy = pickle.loads(pickle.dumps(obj))
    assert type(copy) is type(obj) and repr(copy) == repr(obj)
    cloned = clone(obj)
    assert cloned is not obj and repr(cloned) == repr(obj)
    assert type(obj)(**params).get_params().keys() == params.keys()
    rng = np.random.default_rng(6)
    P = random_proba(rng, 20, 3)
    y = random_labels(rng, P)
    if hasattr(obj, "evaluate"):
        for a, b in zip(obj.evaluate(P, y), copy.evaluate(P, y)):
            np.testing.assert_array_equal(a, b)


def test_set_params_checks():
    u = TopK(2)
    assert u.set_params(k=3) is u and u.k == 3
    with pytest.raises(ValueError, match="k must be >= 1"):
        u.set_params(k=0)
    with pytest.raises(ValueError, match="Invalid parameter 'c'"):
        TopK(1).set_params(c=1)


def test_repr_is_short():
    family = LinearFamily(1000).sample(1500, random_state=0)
    assert len(repr(family)) < 300
    assert "1500 items" in repr(family)
    assert repr(Linear([1, 0])) == "Linear(a=[1, 0])"


@pytest.mark.parametrize(
    "make, error, match",
    [
        (lambda: Linear([1.5, 0]), ValueError, "outside \\[-1, 1\\]"),
        (lambda: Linear([np.nan, 0]), ValueError, "NaN"),
        (lambda: Linear([[1, 0]]), ValueError, "1-dimensional"),
        (lambda: Linear("ab"), TypeError, "numeric"),
        (lambda: Rank([]), ValueError, "non-empty"),
        (lambda: ClassWise(-1), ValueError, "c must be >= 0"),
        (lambda: ClassWise(1.0), TypeError, "integer"),
        (lambda: TopK(True), TypeError, "integer"),
        (lambda: TopK(0), ValueError, "k must be >= 1"),
        (lambda: DCG(-1.0), ValueError, "gamma"),
        (lambda: DCG("1"), TypeError, "gamma"),
        (lambda: DecisionUtility([1, 0]), ValueError, "2-dimensional"),
        (lambda: DecisionUtility([[2.0]]), ValueError, "outside"),
        (lambda: GainMatrix(np.ones((2, 3))), ValueError, "square"),
        (lambda: SimilarityUtility(np.full((2, 2), -1.5)), ValueError, "outside"),
        (lambda: UtilityFamily([]), ValueError, "empty"),
        (lambda: UtilityFamily(TopClass()), TypeError, "sequence"),
        (lambda: UtilityFamily([LinearFamily(3)]), TypeError, "continuous family"),
        (lambda: UtilityFamily(["nope"]), ValueError, "Unknown utility"),
        (lambda: ClassWiseFamily([0, -2]), ValueError, "c must be"),
        (lambda: TopKFamily([0]), ValueError, "k must be"),
        (lambda: LinearFamily(1), ValueError, "n_classes must be >= 2"),
        (lambda: RankFamily(3).sample(0), ValueError, "n_utilities"),
    ],
)
def test_bad_parameters(make, error, match):
    with pytest.raises(error, match=match):
        make()


@pytest.mark.parametrize(
    "utility, match",
    [
        (Linear([1, 0]), "2 payoffs but the predicted probabilities have 3 columns"),
        (Rank([1, 0, 0, 0]), "4 rank payoffs"),
        (ClassWise(3), "at least 4 classes"),
        (TopK(4), "at least 4 classes"),
        (DecisionUtility(np.zeros((2, 2))), "loss rows"),
        (GainMatrix(np.eye(2)), "rows in R"),
        (SimilarityUtility(np.eye(4)), "rows in S"),
    ],
)
def test_utility_and_class_count_mismatch(utility, match):
    P = np.full((2, 3), 1 / 3)
    with pytest.raises(ValueError, match=match):
        utility.evaluate(P, [0, 1])
    with pytest.raises(ValueError, match=match):
        utility.utility_matrix(P)


def test_evaluate_input_checks():
    P = np.array([[0.5, 0.5], [0.25, 0.75]])
    with pytest.raises(ValueError, match="sum"):
        TopClass().evaluate([[0.5, 0.6], [0.5, 0.5]], [0, 1])
    with pytest.raises(ValueError, match="outside"):
        TopClass().evaluate([[-0.5, 1.5], [0.5, 0.5]], [0, 1])
    with pytest.raises(ValueError, match="shape"):
        TopClass().evaluate(P[0], [0])
    with pytest.raises(ValueError, match="column indices"):
        TopClass().evaluate(P, [0, 2])
    with pytest.raises(TypeError, match="column indices"):
        TopClass().evaluate(P, ["a", "b"])
    with pytest.raises(ValueError, match="one entry per row"):
        TopClass().evaluate(P, [0])


class Hedge(Utility):
    """1 on the top class, 0.5 on the runner-up (a user-defined utility)."""

    def _utility_matrix(self, P):
        order = np.argsort(-P, axis=1, kind="stable")
        U = np.zeros_like(P)
        rows = np.arange(P.shape[0])
        U[rows, order[:, 0]] = 1.0
        U[rows, order[:, 1]] = 0.5
        return U


class TooLarge(Utility):
    def _utility_matrix(self, P):
        return 2 * P


def test_custom_utility():
    rng = np.random.default_rng(7)
    P = random_proba(rng, 30, 4)
    y = random_labels(rng, P)
    theta = np.array([1.0, 0.5, 0.0, 0.0])
    for a, b in zip(Hedge().evaluate(P, y), Rank(theta).evaluate(P, y)):
        np.testing.assert_allclose(a, b, atol=1e-15)
    V, _ = UtilityFamily([Hedge(), TopClass()]).evaluate(P, y)
    np.testing.assert_allclose(V[0], Rank(theta).evaluate(P, y)[0], atol=1e-15)
    with pytest.raises(ValueError, match="outside \\[-1, 1\\]"):
        TooLarge().evaluate(P, y)
    with pytest.raises(NotImplementedError):
        Utility().evaluate(P, y)


def test_inputs_not_mutated():
    rng = np.random.default_rng(8)
    P = random_proba(rng, 20, 3)
    y = random_labels(rng, P)
    a = np.array([1.0, -1.0, 0.5])
    copies = P.copy(), y.copy(), a.copy()
    u = Linear(a)
    UtilityFamily([u, TopClass(), ClassWiseFamily(), TopKFamily(), DCG()]).evaluate(P, y)
    u.utility_matrix(P)
    for before, after in zip(copies, (P, y, a)):
        np.testing.assert_array_equal(before, after)
    assert u.a is a


def test_utilities_have_only_their_own_attributes():
    # ClassWise and TopK are siblings of Linear and Rank, not subclasses that
    # inherit attributes they do not set
    for utility, own, foreign in [
        (ClassWise(1), "c", "a"),
        (TopK(2), "k", "theta"),
        (DCG(1.0), "gamma", "theta"),
    ]:
        assert hasattr(utility, own)
        assert not hasattr(utility, foreign)
        assert not isinstance(utility, (Linear, Rank))
    # and they still evaluate as the linear / rank utilities they equal
    P = np.array([[0.5, 0.25, 0.25], [0.1, 0.2, 0.7]])
    np.testing.assert_array_equal(
        ClassWise(1).utility_matrix(P), Linear([0.0, 1.0, 0.0]).utility_matrix(P)
    )
    np.testing.assert_array_equal(
        TopK(2).utility_matrix(P), Rank([1.0, 1.0, 0.0]).utility_matrix(P)
    )
