"""The patching fit's fast paths against their slow twins (issue 14: fit time).

The fit must not move when it gets faster: its patches are pinned, bit for
bit, to the fit as first written (``tests/recalibration/reference_patching.py``), and every
compiled kernel it uses is checked against numpy on many random cases.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from skcal.recalibration import UtilityPatchingRecalibrator, project_simplex
from skcal.recalibration._patching import _check_family
from skcal.utilities import ClassWise, TopClass, TopK, UtilityFamily
from skcal.utilities._families import members

from reference_patching import patching_fit_reference


def _softmax(Z):
    E = np.exp(Z - Z.max(axis=1, keepdims=True))
    return E / E.sum(axis=1, keepdims=True)


def _case(rng, n, C, kind):
    """Over-confident predictions and outcomes drawn from calibrated ones."""
    Z = rng.normal(0.0, 1.5, size=(n, C))
    truth = _softmax(Z)
    y = (truth.cumsum(axis=1) > rng.uniform(size=(n, 1))).argmax(axis=1)
    P = _softmax(2.0 * Z)
    if kind == "ties":
        P = np.round(P, 2) + 0.01
        P /= P.sum(axis=1, keepdims=True)
    elif kind == "binary-corners":
        P = np.eye(C)[rng.randint(C, size=n)]  # p in {0, 1}
    elif kind == "one-class":
        y = np.zeros(n, dtype=int)
    return P, y


def test_fit_pins_the_patches_of_the_reference_fit():
    # The fit (incremental, bound-pruned audits; compiled kernels) against
    # the fit as first written: full numpy evaluation and a sorted audit of
    # every utility at every iteration, numpy projection. Patches and
    # predictions equal to the last bit; UC equal up to the order in which
    # tied rows are summed.
    rng = np.random.RandomState(140)
    families = ["comb", "top-k", "class-wise", "top-class"]
    steps = ["armijo", "armijo", "paper", 0.05]
    kinds = ["plain", "plain", "ties", "binary-corners", "one-class"]
    n_patches = n_cases = 0
    for case in range(40):
        C = [2, 3, 4, 6, 10, 12, 17][case % 7]
        n = [1, 2, 40, 300, 900][case % 5]
        P, y = _case(rng, n, C, kinds[case % len(kinds)])
        w = (
            rng.randint(0, 3, size=n).astype(float) if case % 3 == 1
            else rng.uniform(0.5, 2.0, size=n) if case % 3 == 2
            else np.ones(n)
        )
        w[0] = 1.0
        family = families[case % 4]
        step = steps[(case // 4) % 4]
        tol = 0.0 if case % 2 else "auto"
        max_iter = 25
        rec = UtilityPatchingRecalibrator(
            family, tol=tol, step=step, max_iter=max_iter, labels=np.arange(C)
        )
        P_fast = rec.fit_transform(P, y, sample_weight=w)
        utilities = members(_check_family(family), C)
        P_ref, patches, uc, brier = patching_fit_reference(
            P, y, w, utilities, max_iter=max_iter, tol=rec.tol_, step=step
        )
        assert [(repr(p.utility), p.interval, p.sign, p.step) for p in rec.patches_] == [
            (repr(u), interval, sign, eta) for u, interval, sign, eta in patches
        ], case
        assert_array_equal(P_fast, P_ref)
        assert_array_equal(rec.history_["brier"], brier)
        assert_allclose(rec.history_["uc"], uc, rtol=1e-12, atol=1e-15)
        n_patches += len(patches)
        n_cases += 1
    assert n_cases == 40
    assert n_patches > 200  # the pins bite: most cases patch many times


@pytest.mark.parametrize("family", ["comb", "class-wise", "top-k"])
def test_fit_pins_the_reference_on_a_benchmark_sized_problem(family):
    # One problem big enough for many row blocks, most rows moving per patch.
    rng = np.random.RandomState(141)
    P, y = _case(rng, 3000, 10, "plain")
    rec = UtilityPatchingRecalibrator(family, tol=0.0, max_iter=12).fit(P, y)
    utilities = members(_check_family(family), 10)
    P_ref, patches, _, brier = patching_fit_reference(
        P, y, np.ones(3000), utilities, max_iter=12, tol=0.0
    )
    assert len(patches) == 12
    assert [(repr(p.utility), p.interval, p.sign, p.step) for p in rec.patches_] == [
        (repr(u), interval, sign, eta) for u, interval, sign, eta in patches
    ]
    assert_array_equal(rec.transform(P), P_ref)
    assert_array_equal(rec.history_["brier"], brier)


def test_rank_utilities_in_blocks_is_the_utilities_own_evaluation():
    # rank_utilities works on blocks of rows: many blocks, row subsets that
    # straddle them, C on both sides of the rank-sort limit.
    from skcal._kernels._patching import rank_utilities

    rng = np.random.RandomState(142)
    n_cases = 0
    for case in range(30):
        C = [2, 3, 10, 16, 17, 25][case % 6]
        n = [255, 256, 257, 700, 1500][case % 5]
        P = rng.dirichlet(np.full(C, [0.3, 1.0, 3.0][case % 3]), size=n)
        if case % 4 == 0:
            P = np.round(P, 1) + 0.1  # ties
            P /= P.sum(axis=1, keepdims=True)
        y = rng.randint(C, size=n).astype(np.intp)
        utilities = [ClassWise(c) for c in range(C)] + [TopK(k) for k in range(1, C + 1)]
        utilities.append(TopClass())
        kind = np.array([0] * C + [1] * C + [2], dtype=np.intp)
        param = np.array(list(range(C)) + list(range(1, C + 1)) + [1], dtype=np.intp)
        V_numpy, realised = UtilityFamily(utilities).evaluate(P, y)
        rows = np.sort(rng.choice(n, size=rng.randint(1, n + 1), replace=False))
        V = np.full((len(utilities), n), np.nan)
        R = np.full((len(utilities), n), np.nan)
        rank_utilities(P, y, kind, param, V, R, rows.astype(np.intp))
        assert_array_equal(V[:, rows], V_numpy[:, rows])
        assert_array_equal(R[:, rows], realised[:, rows] - V_numpy[:, rows])
        untouched = np.setdiff1d(np.arange(n), rows)
        assert np.isnan(V[:, untouched]).all() and np.isnan(R[:, untouched]).all()
        n_cases += 1
    assert n_cases == 30


def test_scatter_row_brier_is_numpy_bit_for_bit():
    from skcal._kernels._patching import scatter_row_brier

    rng = np.random.RandomState(143)
    for case in range(200):
        C = [1, 2, 3, 10, 40][case % 5]
        n = [1, 2, 9, 150][case % 4]
        N = n + rng.randint(0, 20)
        P = rng.dirichlet(np.full(C, 0.5), size=n)
        if case % 3 == 0:
            P = np.eye(C)[rng.randint(C, size=n)]  # p in {0, 1}
        y = rng.randint(C, size=n).astype(np.intp)
        index = np.sort(rng.choice(N, size=n, replace=False)).astype(np.intp)
        before = rng.uniform(size=N)
        squares = np.einsum("ij,ij->i", P, P)
        expected = before.copy()
        expected[index] = squares - 2.0 * P[np.arange(n), y] + 1.0
        loss = before.copy()
        scatter_row_brier(squares, P, y, index, loss)
        assert_array_equal(loss, expected)
    with pytest.raises(ValueError, match="shapes do not match"):
        scatter_row_brier(np.ones(2), np.ones((3, 2)), np.zeros(3, dtype=np.intp),
                          np.zeros(3, dtype=np.intp), np.ones(3))


def test_parameters_are_declared_and_checked_by_fit_and_fit_transform():
    # issue 10, item 6: scikit-learn's declarative validation, once, at the
    # start of fit and of fit_transform (which does not go through fit)
    import inspect

    from sklearn.utils._param_validation import InvalidParameterError

    declared = set(UtilityPatchingRecalibrator._parameter_constraints)
    assert declared == set(inspect.signature(UtilityPatchingRecalibrator).parameters)
    rng = np.random.RandomState(144)
    P = rng.dirichlet(np.ones(3), size=30)
    y = np.arange(30) % 3
    bad = {
        "max_iter": -1, "tol": -1.0, "step": "newton", "validation_fraction": 1.5,
        "n_iter_no_change": 0, "random_state": "seed", "init_cv": 1, "labels": 3,
    }
    for name, value in bad.items():
        for method in ("fit", "fit_transform"):
            rec = UtilityPatchingRecalibrator(**{name: value})
            with pytest.raises(InvalidParameterError, match=f"'{name}' parameter"):
                getattr(rec, method)(P, y)
    # booleans pass the declared int and float constraints: refused by name
    for name in ("max_iter", "tol", "step", "n_iter_no_change"):
        for method in ("fit", "fit_transform"):
            with pytest.raises(ValueError, match=f"^{name} must be .*, got True"):
                getattr(UtilityPatchingRecalibrator(**{name: True}), method)(P, y)
    # valid values of every kind are accepted (numpy scalars included)
    rec = UtilityPatchingRecalibrator(
        max_iter=np.int64(3), tol=np.float64(0.0), step=np.float32(0.1),
        validation_fraction=0.25, n_iter_no_change=np.int32(2),
        random_state=np.random.RandomState(0), init_cv=None, labels=[0, 1, 2],
    ).fit(P, y)
    assert rec.n_iter_ <= 3


def test_step_project_is_the_three_kernels_with_numpys_sums_bit_for_bit():
    # step_project does the step, numpy's row sums (pairwise summation,
    # repeated in the kernel) and the projection row by row: the same rows
    # and sums to the last bit as the step kernel, out.sum(axis=1) and the
    # projection kernel, for every number of classes that changes numpy's
    # summation (< 8 terms, 8 running sums, the remainder, halves above 128),
    # entries of very different sizes.
    from skcal._kernels._patching import project_shifted, shifted_step, step_project

    rng = np.random.RandomState(145)
    widths = [1, 2, 3, 7, 8, 9, 10, 15, 16, 17, 24, 127, 128, 129, 136, 200, 300, 1000]
    n_rows = 0
    for case, C in enumerate(widths * 3):
        n = [1, 5, 60][case % 3]
        P = rng.dirichlet(np.full(C, 0.3), size=n)
        P *= rng.choice([1e-12, 1.0, 1e6], size=P.shape) if case % 2 else 1.0
        U = rng.choice([-1.0, 0.0, 0.5, 1.0], size=P.shape)
        c = rng.choice([-3.0, -1e-3, 0.02, 0.7])
        out, sums = np.empty_like(P), np.empty(n)
        assert step_project(P, U, c, out, sums)
        shifted = np.empty_like(P)
        assert shifted_step(P, U, c, shifted)
        assert_array_equal(sums, shifted.sum(axis=1))
        project_shifted(shifted, shifted.sum(axis=1))
        assert_array_equal(out, shifted)
        n_rows += n
    assert n_rows > 1000
    out, sums = np.empty((2, 2)), np.empty(2)
    # 0.5 + 1e308 * 2 overflows; the second row does not move
    assert not step_project(np.array([[0.5, 0.5], [0.2, 0.8]]),
                            np.array([[2.0, 0.0], [0.0, 0.0]]), 1e308, out, sums)
    # the finite row is projected
    assert_array_equal(out[1], project_simplex([[0.2, 0.8]])[0])
    with pytest.raises(ValueError, match="shapes do not match"):
        step_project(np.ones((3, 2)), np.ones((3, 2)), 1.0, np.empty((3, 2)),
                     np.empty(2))


def test_fit_does_not_depend_on_the_number_of_blas_threads():
    # Long weighted sums go through numpy's pairwise summation, not a BLAS
    # dot product that a threaded BLAS splits (and adds in another order)
    # above about 10^4 terms: one and two BLAS threads fit the same patches.
    from threadpoolctl import threadpool_limits

    rng = np.random.RandomState(141)
    P, y = _case(rng, 30000, 5, "plain")
    fits = []
    for threads in (1, 2):
        with threadpool_limits(limits=threads, user_api="blas"):
            rec = UtilityPatchingRecalibrator(family="comb", max_iter=6).fit(P, y)
        fits.append(rec)
    a, b = ([(repr(q.utility), q.interval, q.sign, q.step) for q in f.patches_] for f in fits)
    assert len(a) >= 2 and a == b
    assert_array_equal(fits[0].history_["brier"], fits[1].history_["brier"])
    assert_array_equal(fits[0].transform(P), fits[1].transform(P))
