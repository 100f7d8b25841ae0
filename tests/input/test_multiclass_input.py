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
