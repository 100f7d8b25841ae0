"""The boundary's multiclass canonical form (skcal._input.MulticlassInput).

Its rows are checked once; everything derived from it (the encoded labels,
the top-label rows, the measures read on it) must equal what a plain,
obviously correct computation on the caller's arrays gives, on many small
random cases (ties, weights, n = 1, probabilities 0 and 1, absent classes
with labels=, string labels).
"""

import numpy as np
import pytest

import skcal
from skcal._input import BinaryInput, MulticlassInput, binary_input, multiclass_input


def _twin(y_true, P, w, classes):
    """Column of each label, top-label confidence and correctness, by loops."""
    P = np.asarray(P, dtype=np.float64)
    if P.ndim == 1:
        P = np.column_stack([1 - P, P])
    column = np.array([list(classes).index(label) for label in y_true])
    conf = np.empty(len(y_true))
    correct = np.empty(len(y_true), dtype=np.uint8)
    for i, row in enumerate(P):
        best = 0
        for k in range(1, row.shape[0]):
            if row[k] > row[best]:  # ties to the lowest column
                best = k
        conf[i] = row[best]
        correct[i] = best == column[i]
    weights = np.ones(len(y_true)) if w is None else np.asarray(w, dtype=np.float64)
    return column, P, weights, conf, correct


def _case(rng, case):
    n = int(rng.integers(1, 25))
    k = int(rng.integers(2, 6))
    grid = np.array([0.0, 0.25, 0.5, 1.0])
    P = rng.dirichlet(np.ones(k), size=n)
    if case % 3 == 0:  # ties and exact 0/1 entries
        P = np.zeros((n, k))
        for i in range(n):
            a, b = rng.choice(k, size=2, replace=False)
            P[i, a] = rng.choice(grid)
            P[i, b] = 1.0 - P[i, a]
    y = rng.integers(0, k, size=n)
    w = None if case % 2 else rng.uniform(0, 3, size=n) + (np.arange(n) == 0)
    names = np.array([f"c{j}" for j in range(k)]) if case % 5 == 0 else np.arange(k)
    return names[y], P, w, names


def test_multiclass_input_matches_its_twin():
    rng = np.random.default_rng(0)
    for case in range(300):
        y, P, w, classes = _case(rng, case)
        data = multiclass_input(y, P, w, labels=classes)
        column, P2, w2, conf, correct = _twin(y, P, w, classes)
        np.testing.assert_array_equal(data.y, column)
        np.testing.assert_array_equal(data.P, P2)
        np.testing.assert_array_equal(data.w, w2)
        np.testing.assert_array_equal(data.classes, classes)
        assert (data.n, data.n_classes) == P2.shape
        top = data.top_label()
        assert isinstance(top, BinaryInput) and data.top_label() is top  # cached
        np.testing.assert_array_equal(top.p, conf)
        np.testing.assert_array_equal(top.y, correct)
        # the binary measures read the top-label rows as the rows themselves
        for f in (skcal.smooth_calibration_error, skcal.cutoff_calibration_error,
                  skcal.binned_ece):
            assert f(data) == f(correct, conf, sample_weight=w2), (f.__name__, case)
        if P.shape[1] > 2:
            assert f(data) == f(y, P, sample_weight=w, labels=classes)
        # the utility measures: the form equals the arrays
        for utility in ("top-class", "class-wise"):
            assert skcal.utility_calibration_error(data, None, utility) == (
                skcal.utility_calibration_error(y, P, utility, sample_weight=w,
                                                labels=classes)
            ), (utility, case)


def test_multiclass_input_one_d_and_inferred_labels():
    p = np.array([0.2, 0.7, 1.0])
    data = multiclass_input([0, 1, 1], p)
    np.testing.assert_array_equal(data.P, np.column_stack([1 - p, p]))
    np.testing.assert_array_equal(data.classes, [0, 1])
    assert binary_input(data, None) is data.top_label()


def test_multiclass_input_is_read_only_and_never_copies_back():
    rng = np.random.default_rng(1)
    P = rng.dirichlet(np.ones(3), size=10)
    before = P.copy()
    data = multiclass_input(rng.integers(0, 3, 10), P, labels=[0, 1, 2])
    assert not data.P.flags.writeable
    with pytest.raises(ValueError):
        data.P[0, 0] = 1.0
    np.testing.assert_array_equal(P, before)
    assert P.flags.writeable


def test_multiclass_input_errors():
    P = np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])
    with pytest.raises(ValueError, match="y_prob=None"):
        multiclass_input(multiclass_input([0, 2], P, labels=[0, 1, 2]), P)
    with pytest.raises(ValueError, match="y_prob is required"):
        multiclass_input([0, 1], None)
    with pytest.raises(ValueError, match="sum"):
        multiclass_input([0, 1], P * 1.1, labels=[0, 1, 2])
    with pytest.raises(ValueError, match="labels="):
        multiclass_input([0, 2], P)  # class 1 absent: ambiguous columns
    with pytest.raises(ValueError, match="single column"):
        multiclass_input([0, 1], P[:, :1])


def test_trusted_variants_keep_the_form():
    rng = np.random.default_rng(2)
    P = rng.dirichlet(np.ones(3), size=30)
    y = rng.integers(0, 3, 30)
    data = multiclass_input(y, P, labels=[0, 1, 2])
    other = rng.integers(0, 3, 30).astype(np.intp)
    moved = data.with_outcomes(other)
    assert isinstance(moved, MulticlassInput) and moved.P is data.P
    assert skcal.utility_calibration_error(moved, None) == (
        skcal.utility_calibration_error(other, P, labels=[0, 1, 2])
    )
    w = rng.uniform(0.5, 2, 30)
    reweighted = data.with_weights(w)
    assert skcal.utility_calibration_error(reweighted, None, "comb") == (
        skcal.utility_calibration_error(y, P, "comb", sample_weight=w, labels=[0, 1, 2])
    )


# --- the fused check (skcal/_kernels/_proba.pyx) -------------------------------


def _old_boundary(y_prob):
    """What the boundary did before the fused pass: the check, then np.argmax."""
    from skcal._input._checks import as_probability_array, check_probability_matrix

    input_dtype = getattr(y_prob, "dtype", None)
    P = np.ascontiguousarray(as_probability_array(y_prob, "y_prob"))
    try:
        check_probability_matrix(P, name="y_prob", input_dtype=input_dtype)
    except ValueError as error:
        return str(error), None
    pred = np.argmax(P, axis=1)
    return None, (P[np.arange(P.shape[0]), pred], pred)


def _matrix(rng, n, C):
    """A random probability matrix with ties, zeros, ones and rows at the tolerance."""
    kind = rng.integers(5)
    if kind == 0:  # ties in the largest entry, anywhere in the row
        P = np.zeros((n, C))
        for row in P:
            where = rng.choice(C, size=int(rng.integers(1, C + 1)), replace=False)
            row[where] = 1.0 / where.shape[0]
    elif kind == 1:  # one-hot rows: p in {0, 1}
        P = np.eye(C)[rng.integers(0, C, n)]
    elif kind == 2:  # a grid of values: many ties
        P = rng.integers(0, 3, (n, C)).astype(float) + (np.arange(C) == 0)
        P /= P.sum(axis=1, keepdims=True)
    else:
        P = rng.dirichlet(np.full(C, rng.choice([0.05, 1.0])), size=n)
    return P


def _corrupt(rng, P):
    """The matrix with one kind of fault (or none) at a random entry."""
    P = P.copy()
    n, C = P.shape
    i, j = int(rng.integers(n)), int(rng.integers(C))
    fault = rng.integers(12)
    if fault == 0:
        P[i, j] = np.nan
    elif fault == 1:
        P[i, j] = rng.choice([np.inf, -np.inf])
    elif fault == 2:
        P[i, j] = -rng.choice([1e-300, 0.25])
    elif fault == 3:
        P[i, j] = rng.choice([1.0 + 2**-52, 1.5])
    elif fault == 4:  # a row sum off by about the tolerance (either side of it)
        P[i] *= 1.0 + rng.choice([0.5, 0.999999, 1.0, 1.000001, 2.0, -2.0]) * 1e-6
        P[i] = np.minimum(P[i], 1.0)
    elif fault == 5:
        P[i, j] = -0.0 if P[i, j] == 0 else P[i, j]
    elif fault == 6:  # NaN and an out-of-range entry: NaN is named first
        P[i, j] = 2.0
        P[int(rng.integers(n)), int(rng.integers(C))] = np.nan
    elif fault in (7, 8):  # out of range, but the row sums to 1 within the tolerance
        P[i] = 0.0
        P[i, j] = 1.0 + 2**-52 if fault == 7 else 1.0
        if fault == 8 and C > 1:
            P[i, (j + 1) % C] = -rng.choice([1e-300, 1e-9])
    return P


def _layouts(rng, P):
    """The matrix as the caller might pass it: C or Fortran order, strided, float32."""
    yield P
    yield np.asfortranarray(P)
    wide = np.zeros((P.shape[0], 2 * P.shape[1]))
    wide[:, ::2] = P
    yield wide[:, ::2]  # not contiguous
    yield P.astype(np.float32)  # rows checked at float32's tolerance
    yield P.tolist()


def test_fused_check_accepts_rejects_and_words_as_before():
    rng = np.random.default_rng(26)
    for case in range(400):
        n = int(rng.choice([1, 2, 5, 30]))
        C = int(rng.choice([2, 3, 7, 8, 9, 16, 17, 40]))
        P = _corrupt(rng, _matrix(rng, n, C))
        for y_prob in _layouts(rng, P):
            expected_error, expected_top = _old_boundary(y_prob)
            y = rng.integers(0, C, n)
            if expected_error is not None:
                with pytest.raises(ValueError) as info:
                    multiclass_input(y, y_prob, labels=np.arange(C))
                assert str(info.value) == expected_error, case
                continue
            data = multiclass_input(y, y_prob, labels=np.arange(C))
            conf, pred = data.predictions().top
            np.testing.assert_array_equal(pred, expected_top[1])
            np.testing.assert_array_equal(conf, expected_top[0])
            top = data.top_label()
            np.testing.assert_array_equal(top.p, expected_top[0])
            np.testing.assert_array_equal(top.y, (y == expected_top[1]).astype(np.uint8))


def test_check_top_label_kernel_against_numpy():
    from skcal._kernels._proba import check_top_label

    rng = np.random.default_rng(5)
    for case in range(300):
        n = int(rng.integers(1, 20))
        C = int(rng.choice([1, 2, 3, 7, 8, 9, 15, 16, 17, 33, 1000]))
        P = _matrix(rng, n, C) if C > 1 else np.ones((n, 1))
        P = _corrupt(rng, P) if rng.random() < 0.5 else P
        tol = float(rng.choice([1e-6, 1e-12, 0.0]))
        conf = np.full(n, -1.0)
        pred = np.full(n, -1, dtype=np.intp)
        failed = check_top_label(P, tol, conf, pred)
        bits = P.view(np.uint64)
        valid = bits <= np.float64(1.0).view(np.uint64)  # [+0, 1]: not NaN, inf, -0.0
        row_ok = valid.all(axis=1) & (np.abs(np.sum(P, axis=1) - 1.0) <= tol + 4 * C * 2.0**-52)
        first_bad = np.flatnonzero(~row_ok)
        if failed:
            i = failed - 1
            # the reported row is bad (its sum may be within the rounding of numpy's)
            assert not valid[i].all() or abs(P[i].sum() - 1.0) > tol - 4 * C * 2.0**-52
            assert first_bad.shape[0] == 0 or i <= first_bad[0], case
            done = i
        else:
            assert first_bad.shape[0] == 0, case
            done = n
        np.testing.assert_array_equal(pred[:done], np.argmax(P[:done], axis=1))
        np.testing.assert_array_equal(conf[:done], np.max(P[:done], axis=1))


def test_check_rows_kernel_against_numpy():
    # the check alone (two columns: blocks without a branch, then the row):
    # 0 exactly when every entry is in [+0, 1] and every sum within tol of 1
    # (up to the margin of the sums' order), else the first bad row
    from skcal._kernels._proba import check_rows

    rng = np.random.default_rng(6)
    for case in range(400):
        n = int(rng.integers(1, 3000)) if case % 4 == 0 else int(rng.integers(1, 20))
        C = int(rng.choice([1, 2, 2, 2, 3, 9, 17]))
        P = _matrix(rng, n, C) if C > 1 else np.ones((n, 1))
        P = _corrupt(rng, P) if rng.random() < 0.5 else P
        tol = float(rng.choice([1e-6, 1e-12, 0.0]))
        failed = check_rows(P, tol)
        valid = P.view(np.uint64) <= np.float64(1.0).view(np.uint64)
        margin = 4 * C * 2.0**-52
        row_ok = valid.all(axis=1) & (np.abs(np.sum(P, axis=1) - 1.0) <= tol + margin)
        first_bad = np.flatnonzero(~row_ok)
        if failed:
            i = failed - 1
            assert not valid[i].all() or abs(P[i].sum() - 1.0) > tol - margin, case
            assert first_bad.shape[0] == 0 or i <= first_bad[0], case
            if C == 2:  # the sum p0 + p1, as numpy's: the first bad row exactly
                exact = valid.all(axis=1) & (np.abs(P[:, 0] + P[:, 1] - 1.0) <= tol)
                assert i == np.flatnonzero(~exact)[0], case
        else:
            assert first_bad.shape[0] == 0, case


def test_two_column_probabilities_are_checked_alike():
    # a binary predict_proba goes through the one-read check; what it accepts
    # and how it refuses (messages) are those of the exact check
    from skcal import cutoff_calibration_error

    rng = np.random.default_rng(7)
    p = rng.random(5000)
    y = (rng.random(5000) < p).astype(int)
    P = np.column_stack([1 - p, p])
    assert cutoff_calibration_error(y, P) == cutoff_calibration_error(y, p)
    Q = P.copy()
    Q[1234, 0] = -0.0  # accepted by the exact check (a zero), after the fast one refuses
    Q[1234, 1] = 1.0
    cutoff_calibration_error(y, Q)
    for bad, message in ((np.nan, "NaN or infinity"), (1.5, "outside"),
                         (0.7, "summing to 1")):
        Q = P.copy()
        Q[4321, 0] = bad
        with pytest.raises(ValueError, match=message):
            cutoff_calibration_error(y, Q)


def test_valid_matrix_is_read_once(monkeypatch):
    """A plainly valid matrix: no second check, no np.argmax (fails on the old boundary)."""
    from skcal._input import _checks, _multiclass

    def forbidden(*args, **kwargs):
        raise AssertionError("the matrix was read again")

    rng = np.random.default_rng(3)
    P = rng.dirichlet(np.ones(5), size=40)
    y = rng.integers(0, 5, 40)
    expected = skcal.utility_calibration_error(y, P, labels=np.arange(5))
    for module in (_checks, _multiclass):
        monkeypatch.setattr(module, "check_probability_matrix", forbidden)
        monkeypatch.setattr(module, "top_label", forbidden)
    argmax = np.argmax

    def argmax_of_vectors(a, *args, **kwargs):
        if np.ndim(a) > 1:
            forbidden()
        return argmax(a, *args, **kwargs)

    monkeypatch.setattr(np, "argmax", argmax_of_vectors)
    data = multiclass_input(y, P, labels=np.arange(5))
    assert skcal.utility_calibration_error(data, None) == expected
    data.top_label()
    assert skcal.cutoff_calibration_error(y, P, labels=np.arange(5)) == (
        skcal.cutoff_calibration_error(data)
    )


def test_top_label_measures_as_with_the_exact_check(monkeypatch):
    """The binary measures' top-label input: the fused read changes no value and no message."""
    from skcal._input import _checks

    rng = np.random.default_rng(8)
    cases = []
    for _ in range(150):
        n = int(rng.choice([1, 4, 30]))
        C = int(rng.choice([3, 8, 9, 17]))
        P = _corrupt(rng, _matrix(rng, n, C))
        cases.append((rng.integers(0, C, n), P if rng.random() < 0.8 else P.astype(np.float32)))

    def outcome(y, P):
        try:
            return skcal.cutoff_calibration_error(y, P, labels=np.arange(P.shape[1]))
        except ValueError as error:
            return str(error)

    fused = [outcome(y, P) for y, P in cases]
    monkeypatch.setattr(_checks, "plainly_valid_top_label", lambda P, input_dtype=None: None)
    exact = [outcome(y, P) for y, P in cases]
    assert fused == exact
    assert any(isinstance(v, str) for v in exact) and any(isinstance(v, float) for v in exact)


def test_check_top_label_kernel_checks_shapes():
    from skcal._kernels._proba import check_top_label

    P = np.full((3, 2), 0.5)
    assert check_top_label(P, 1e-6, np.empty(3), np.empty(3, dtype=np.intp)) == 0
    for conf, pred in ((np.empty(2), np.empty(3, dtype=np.intp)),
                       (np.empty(3), np.empty(4, dtype=np.intp))):
        with pytest.raises(ValueError, match="kernel argument shapes do not match"):
            check_top_label(P, 1e-6, conf, pred)
    with pytest.raises(ValueError, match="kernel argument shapes do not match"):
        check_top_label(np.empty((3, 0)), 1e-6, np.empty(3), np.empty(3, dtype=np.intp))



def test_column_major_probabilities_take_the_one_read_in_blocks():
    # a pandas DataFrame's values (column-major) or any other layout: checked
    # and top-labelled in blocks of rows made contiguous; the same values as
    # the C-ordered matrix, and the same acceptance and messages
    from skcal import cutoff_calibration_error
    from skcal._input._checks import plainly_valid_top_label

    rng = np.random.default_rng(12)
    for case in range(60):
        n = int(rng.integers(1, 3000)) if case % 3 == 0 else int(rng.integers(1, 30))
        C = int(rng.choice([3, 7, 9, 40]))
        P = _matrix(rng, n, C)
        P = _corrupt(rng, P) if rng.random() < 0.5 else P
        y = rng.integers(0, C, n)
        F = np.asfortranarray(P)
        a, b = plainly_valid_top_label(P), plainly_valid_top_label(F)
        assert (a is None) == (b is None), case
        if a is not None:
            np.testing.assert_array_equal(a[0], b[0])
            np.testing.assert_array_equal(a[1], b[1])
        outcomes = []
        for M in (P, F, P[::-1][::-1], np.asfortranarray(P)[:, :]):
            try:
                outcomes.append(cutoff_calibration_error(y, M))
            except ValueError as error:
                # the row sum it names is numpy's, whose order of addition
                # depends on the layout (so its last digits may differ)
                outcomes.append(str(error).split(" sums to ")[0])
        assert all(o == outcomes[0] for o in outcomes), (case, outcomes)
