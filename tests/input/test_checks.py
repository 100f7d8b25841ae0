"""Every bad input listed in DESIGN.md section 2 gets a clear error; good
input is converted without touching the caller's arrays."""

import numpy as np
import pytest

from skcal._input import check_binary_calibration_input as check


def test_returns_float_arrays_that_cannot_alias_writes():
    y_true = np.array([0, 1, 1])
    y_prob = np.array([0.1, 0.5, 0.9])
    w_in = np.array([1, 2, 3])
    y, p, w = check(y_true, y_prob, w_in)
    assert y.dtype == p.dtype == w.dtype == np.float64
    assert not np.shares_memory(w, w_in)
    # predictions may be a view of the caller's array, but never a writable one
    with pytest.raises(ValueError, match="read-only"):
        p[:] = -1
    assert y_prob.flags.writeable
    assert np.array_equal(y_prob, [0.1, 0.5, 0.9])
    np.testing.assert_array_equal(y, [0, 1, 1])
    np.testing.assert_array_equal(w, [1, 2, 3])


def test_default_weights_are_ones():
    _, _, w = check([0, 1], [0.2, 0.3])
    np.testing.assert_array_equal(w, [1.0, 1.0])


@pytest.mark.parametrize(
    "labels, expected",
    [([0, 1, 1], [0, 1, 1]), ([-1, 1, 1], [0, 1, 1]), ([True, False, True], [1, 0, 1])],
)
def test_default_pos_label(labels, expected):
    y, _, _ = check(labels, [0.5, 0.5, 0.5])
    np.testing.assert_array_equal(y, expected)


def test_single_class_defaults():
    y, _, _ = check([0, 0], [0.5, 0.5])
    np.testing.assert_array_equal(y, [0, 0])
    y, _, _ = check([1, 1], [0.5, 0.5])
    np.testing.assert_array_equal(y, [1, 1])


def test_string_labels_need_pos_label():
    with pytest.raises(ValueError, match="pos_label"):
        check(["a", "b"], [0.2, 0.8])
    y, _, _ = check(["a", "b"], [0.2, 0.8], pos_label="a")
    np.testing.assert_array_equal(y, [1, 0])


def test_other_numeric_labels_need_pos_label():
    with pytest.raises(ValueError, match="pos_label"):
        check([2, 3], [0.2, 0.8])
    y, _, _ = check([2, 3], [0.2, 0.8], pos_label=3)
    np.testing.assert_array_equal(y, [0, 1])


def test_two_column_input_uses_positive_column():
    P = np.array([[0.8, 0.2], [0.3, 0.7]])
    _, p, _ = check([0, 1], P)
    np.testing.assert_array_equal(p, [0.2, 0.7])
    _, p, _ = check(["a", "b"], P, pos_label="a")
    np.testing.assert_array_equal(p, [0.8, 0.3])
    _, p, _ = check(["a", "a"], P, pos_label="a", labels=["a", "b"])
    np.testing.assert_array_equal(p, [0.8, 0.3])


def test_multiclass_top_label_ties_to_lowest_index():
    P = np.array([[0.4, 0.4, 0.2], [0.1, 0.3, 0.6], [0.5, 0.25, 0.25]])
    y, p, _ = check([1, 2, 0], P)
    np.testing.assert_array_equal(p, [0.4, 0.6, 0.5])
    # row 0: argmax tie -> column 0, label 1 -> incorrect
    np.testing.assert_array_equal(y, [0, 1, 1])


def test_multiclass_string_labels():
    P = np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6]])
    y, p, _ = check(["cat", "dog"], P, labels=["cat", "dog", "eel"])
    np.testing.assert_array_equal(y, [1, 0])
    with pytest.raises(ValueError, match="labels"):
        check(["cat", "dog"], P)
    with pytest.raises(ValueError, match="not in labels"):
        check(["cat", "cow"], P, labels=["cat", "dog", "eel"])
    with pytest.raises(ValueError, match="sorted"):
        check(["cat", "dog"], P, labels=["eel", "dog", "cat"])


def test_multiclass_integer_labels_subset():
    P = np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6]])
    # a class absent from y_true: the columns could be [0, 1, 2] or [0, 2, 5]
    with pytest.raises(ValueError, match="ambiguous; pass labels="):
        check([0, 2], P)
    y, _, _ = check([0, 2], P, labels=[0, 1, 2])
    np.testing.assert_array_equal(y, [1, 1])


def test_multiclass_raise():
    P = np.full((2, 3), 1 / 3)
    with pytest.raises(ValueError, match="multiclass='raise'"):
        check([0, 1], P, multiclass="raise")
    with pytest.raises(ValueError, match="multiclass must be"):
        check([0, 1], P, multiclass="ovr")


@pytest.mark.parametrize(
    "y_true, y_prob, weight, exc, match",
    [
        ([], [], None, ValueError, "empty"),
        ([0, 1], [0.1], None, ValueError, "inconsistent numbers of samples"),
        ([0, 1], [0.1, np.nan], None, ValueError, "NaN or infinity"),
        ([0, 1], [0.1, np.inf], None, ValueError, "NaN or infinity"),
        ([0, 1], [0.1, 1.2], None, ValueError, r"outside \[0, 1\]"),
        ([0, 1], [-0.1, 0.2], None, ValueError, r"outside \[0, 1\]"),
        ([0, 1, 2], [0.1, 0.2, 0.3], None, ValueError, "at most two labels"),
        ([0, 1], [[0.2, 0.9], [0.5, 0.5]], None, ValueError, "sum"),
        ([0, 1], [[0.2], [0.5]], None, ValueError, "single column"),
        ([0, 1], np.zeros((2, 2, 2)), None, ValueError, "dim"),
        ([0, 1], [0.1, 0.2], [1.0], ValueError, "sample_weight has 1"),
        ([0, 1], [0.1, 0.2], [1.0, -1.0], ValueError, "negative"),
        ([0, 1], [0.1, 0.2], [0.0, 0.0], ValueError, "positive sum"),
        ([0, 1], [0.1, 0.2], [1.0, np.nan], ValueError, "NaN or infinity"),
        ([0, 1], [0.1, 0.2], [[1.0, 1.0]], ValueError, "1-dimensional"),
        ([0, 1], [0.1, 0.2], 2.0, TypeError, "scalar"),
        ([0, 1], [0.1, 0.2], ["a", "b"], TypeError, "numeric"),
        ([0, np.nan], [0.1, 0.2], None, ValueError, "y_true contains NaN"),
        ([0, 1], ["a", "b"], None, TypeError, "y_prob must hold probabilities"),
    ],
)
def test_bad_input(y_true, y_prob, weight, exc, match):
    with pytest.raises(exc, match=match):
        check(y_true, y_prob, weight)


def test_no_silent_clipping_near_one():
    with pytest.raises(ValueError, match="outside"):
        check([1], [1.0 + 1e-12])
    y, p, _ = check([1], [1.0])
    assert p[0] == 1.0


def test_y_true_column_vector_accepted():
    y, p, _ = check(np.array([[0], [1]]), [0.3, 0.6])
    np.testing.assert_array_equal(y, [0, 1])


@pytest.mark.parametrize(
    "y_true",
    [[0, 1, 1, 0], [True, False, True, True], [3, 4, 4, 3], [-1, 1, 1, -1],
     np.array([0, 1, 1, 0], dtype=np.uint8), ["a", "b", "b", "a"]],
)
@pytest.mark.parametrize("sample_weight", [None, [1.0, 2.0, 0.0, 3.0]])
def test_compact_form_matches_float_form(y_true, sample_weight):
    p = np.array([0.1, 0.9, 0.5, 0.3])
    pos_label = {3: 4, "a": "b"}.get(y_true[0])
    y, pp, w = check(y_true, p, sample_weight, pos_label=pos_label)
    yc, pc, wc = check(y_true, p, sample_weight, pos_label=pos_label, compact=True)
    assert np.array_equal(y, np.asarray(y_true) == (pos_label or True))
    assert yc.dtype in (np.uint8, np.int64) and y.dtype == np.float64
    np.testing.assert_array_equal(yc, y)
    np.testing.assert_array_equal(pc, pp)
    np.testing.assert_array_equal(wc, w)
    if sample_weight is None:
        assert wc.strides == (0,) and not wc.flags.writeable


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, bool])
@pytest.mark.parametrize("step", [1, 2])
def test_compact_labels_are_contiguous_and_unchanged(dtype, step):
    y = np.array([0, 1, 1, 0, 1, 0, 0, 1], dtype=dtype)[::step]
    p = np.linspace(0.1, 0.9, y.shape[0])
    before = y.copy()
    yc, _, _ = check(y, p, compact=True)
    assert yc.flags.c_contiguous
    if np.shares_memory(yc, y):  # a view of the caller's labels must be read-only
        assert not yc.flags.writeable
    np.testing.assert_array_equal(yc, before.astype(int))
    np.testing.assert_array_equal(y, before)


def test_float_zero_one_labels_kernel():
    # one pass: bytes of y == 1, which classes occur, -1 for any other value
    from skcal._kernels._interval import zero_one_labels

    rng = np.random.default_rng(9)
    for case in range(200):
        n = int(rng.integers(1, 50))
        y = rng.choice([0.0, 1.0, -0.0], n)
        if case % 4 == 0:
            y[int(rng.integers(n))] = rng.choice([np.nan, 0.5, 2.0, -1.0, np.inf, 5e-324])
        out = np.full(n, 7, dtype=np.uint8)
        seen = zero_one_labels(y, out)
        if not np.all((y == 0) | (y == 1)):
            assert seen == -1
            continue
        np.testing.assert_array_equal(out, (y == 1).astype(np.uint8))
        assert seen == int(np.any(y == 0)) + 2 * int(np.any(y == 1))


def test_float_labels_measure_as_integer_labels():
    # float labels in {0, 1} (the fast path) give the integer labels' values;
    # other floats keep the general path (two classes, pos_label, errors)
    from skcal import calibration_decision_loss, cutoff_calibration_error

    rng = np.random.default_rng(10)
    p = rng.random(300)
    y = (rng.random(300) < p).astype(int)
    for f in (cutoff_calibration_error, calibration_decision_loss):
        assert f(y.astype(float), p) == f(y, p)
        assert f(np.where(y == 1, 1.0, -0.0), p) == f(y, p)
        assert f(np.where(y == 1, 2.5, 0.5), p, pos_label=2.5) == f(y, p)
        assert f(np.ones(300), p) == f(np.ones(300, dtype=int), p)
    with pytest.raises(ValueError):
        cutoff_calibration_error(np.where(y == 1, np.nan, 0.0), p)


def test_string_and_object_labels_take_two_comparisons():
    # one or two distinct labels found by comparing with the first and the
    # first other one (no sort of Python objects); the values of integer
    # labels, and the general path's answers for three labels or missing ones
    pd = pytest.importorskip("pandas")
    from skcal import cutoff_calibration_error
    from skcal._input._checks import _two_labels

    rng = np.random.default_rng(11)
    p = rng.random(400)
    y = (rng.random(400) < p).astype(int)
    want = cutoff_calibration_error(y, p)
    names = np.where(y == 1, "yes", "no")
    for labels in (names, names.astype(object), pd.Series(names),
                   pd.Series(names).astype("category")):
        assert cutoff_calibration_error(labels, p, pos_label="yes") == want
    assert _two_labels(np.array(["b", "a", "b"], dtype=object)).tolist() == ["a", "b"]
    assert _two_labels(np.array(["b", "b"], dtype=object)).tolist() == ["b"]
    assert _two_labels(np.array(["b", "a", "c"], dtype=object)) is None
    assert _two_labels(np.array(["b", None, "b"], dtype=object)) is None
    assert _two_labels(np.array(["b", 1], dtype=object)) is None
    with pytest.raises(ValueError, match="3 distinct labels"):
        cutoff_calibration_error(np.array(["a", "b", "c"] * 10, dtype=object),
                                 p[:30], pos_label="a")
    with pytest.raises(TypeError, match="missing label"):
        cutoff_calibration_error(np.array(["a", None, "a"], dtype=object), p[:3],
                                 pos_label="a")
