"""SCDL on plain input: validation fused into the one pass (checked_soft_bin).

The checked kernel is compared with its slow twin in ``reference_scdl.py`` on many
random cases (ties, weights, n = 1, p in {0, 1} and on grid points, one
class, every label dtype it reads), and the public function on plain input
with the same function on input that goes through the full validator.
"""

import numpy as np
import pytest

from skcal import soft_binned_cdl
from skcal._kernels._binning import checked_soft_bin, soft_bin
from skcal.metrics import _scdl

from reference_ece import plain_rows_reference
from reference_scdl import class_soft_bins_reference, scdl_reference

MSG = "kernel argument shapes do not match"
LABEL_DTYPES = [np.bool_, np.uint8, np.int32, np.int64, np.float64]


def plain_case(rng, max_n=40, grid=None):
    """A random plain (y, p, w): labels of a random kernel dtype, ``w`` None
    (unit weights) or float64; predictions with ties, 0, 1, -0.0 and grid
    points ``k / grid`` and their neighbours."""
    n = int(rng.choice([1, 2, 3, int(rng.integers(1, max_n + 1))]))
    grid = grid or int(rng.choice([1, 2, 3, 7, 8, 10, 15, 16, 64]))
    kind = rng.integers(5)
    if kind == 0:
        p = rng.random(n)
    elif kind == 1:  # heavy ties on a coarse grid
        p = rng.integers(0, 6, n) / 5.0
    elif kind == 2:  # end points, -0.0 among them
        p = rng.choice([0.0, -0.0, 1.0, 0.5, rng.random()], n)
    elif kind == 3:  # grid points and the doubles next to them
        edges = np.arange(grid + 1) / grid
        near = np.r_[edges, np.nextafter(edges[1:], 0), np.nextafter(edges[:-1], 1)]
        p = rng.choice(near, n)
    else:  # a single value
        p = np.full(n, rng.random())
    flavour = rng.integers(3)
    if flavour == 0:
        y = rng.random(n) < p
    elif flavour == 1:  # one class
        y = np.full(n, bool(rng.integers(2)))
    else:
        y = rng.random(n) < 1 - p
    y = y.astype(LABEL_DTYPES[rng.integers(len(LABEL_DTYPES))])
    wkind = rng.integers(4)
    if wkind == 0:
        w = None
    elif wkind == 1:
        w = rng.integers(1, 5, n).astype(float)
    elif wkind == 2:
        w = rng.exponential(size=n)
    else:  # zero weights, positive sum
        w = rng.integers(0, 3, n).astype(float)
        w[rng.integers(n)] += 1.0
    return y, p, w


def kernel_labels(y):
    return y.view(np.uint8) if y.dtype == np.bool_ else y


def as_float(y, w):
    return y.astype(float), (np.ones(len(y)) if w is None else w)


def test_checked_soft_bin_matches_reference():
    rng = np.random.default_rng(100)
    for case in range(400):
        y, p, w = plain_case(rng)
        m = int(rng.choice([1, 2, 3, 4, 7, 16, 64]))
        tables = np.zeros((2, m + 1))
        assert checked_soft_bin(p, kernel_labels(y), w, tables), case
        expected = class_soft_bins_reference(y, p, w, m)
        np.testing.assert_allclose(tables, expected, rtol=1e-12, atol=1e-12, err_msg=str(case))
        # against the unchecked kernel: the positive sums bit for bit
        bins = np.zeros((m + 1, 2))
        weights = np.ones(len(p)) if w is None else w
        soft_bin(p, y.astype(np.uint8), weights, bins)
        np.testing.assert_array_equal(tables[1], bins[:, 1])
        np.testing.assert_allclose(tables.sum(axis=0), bins[:, 0], rtol=1e-13, atol=1e-13)


BAD_P = [np.nan, np.inf, -np.inf, -1e-300, -0.5, np.nextafter(1.0, 2.0), 1.5]
BAD_Y = [2, -1, 0.5, np.nan]
BAD_W = [np.nan, np.inf, -1e-300, -1.0]


def corrupt(rng, y, p, w):
    """One row made invalid (prediction, label or weight); returns copies."""
    y, p = y.copy(), p.copy()
    w = None if w is None else w.copy()
    i = int(rng.integers(len(p)))
    what = rng.integers(3 if w is not None else 2)
    if what == 0:
        p[i] = rng.choice(BAD_P)
    elif what == 1:
        bad = [b for b in BAD_Y if y.dtype.kind == "f" or float(b).is_integer()]
        if y.dtype.kind in "bu":
            bad = [2]
        y[i] = rng.choice(bad)
    else:
        w[i] = rng.choice(BAD_W)
    return y, p, w


def test_checked_soft_bin_flags_exactly_the_invalid_rows():
    rng = np.random.default_rng(101)
    for case in range(400):
        y, p, w = plain_case(rng)
        if rng.random() < 0.6:
            y, p, w = corrupt(rng, y, p, w)
        tables = np.zeros((2, 9))
        ok = checked_soft_bin(p, kernel_labels(y), w, tables)
        assert ok == plain_rows_reference(y, p, w), case


def test_public_function_equals_full_validation_and_reference():
    rng = np.random.default_rng(102)
    for case in range(250):
        y, p, w = plain_case(rng, max_n=60)
        value, details = soft_binned_cdl(y, p, sample_weight=w, return_details=True)
        # lists are not plain: the full validator, the path of before
        slow, slow_details = soft_binned_cdl(
            y.tolist(), p.tolist(), sample_weight=None if w is None else w.tolist(),
            return_details=True,
        )
        assert value == slow, case
        assert details.m == slow_details.m and details.exact == slow_details.exact
        np.testing.assert_array_equal(details.scdl_m, slow_details.scdl_m)
        yf, wf = as_float(y, w)
        if 2 * details.m <= 2**10:
            assert value == pytest.approx(scdl_reference(yf, p, wf), abs=1e-9), case
        for m in (1, 3, 8):
            assert soft_binned_cdl(y, p, sample_weight=w, m=m) == soft_binned_cdl(
                y.tolist(), p.tolist(), sample_weight=None if w is None else w.tolist(), m=m
            ), case


def test_n_equal_one_and_one_class():
    for dtype in LABEL_DTYPES:
        for label in (0, 1):
            for v in (0.0, -0.0, 0.25, 1.0):
                y = np.array([label], dtype=dtype)
                p = np.array([v])
                assert soft_binned_cdl(y, p) == soft_binned_cdl([label], [v])
                assert soft_binned_cdl(y, p, m=4) == soft_binned_cdl([label], [v], m=4)


def outcome(func, *args, **kwargs):
    """The value, or the type and message of the error."""
    try:
        return func(*args, **kwargs)
    except (ValueError, TypeError) as error:
        return type(error), str(error)


def test_errors_are_those_of_the_full_validator():
    # one row made invalid: the same error as the full validator gives (or,
    # e.g. labels {-1, 1} or {0, 2} with pos_label=2, the same value)
    rng = np.random.default_rng(103)
    raised = 0
    for case in range(300):
        y, p, w = plain_case(rng)
        y, p, w = corrupt(rng, y, p, w)
        if plain_rows_reference(y, p, w):
            continue
        fast = outcome(soft_binned_cdl, y, p, sample_weight=w)
        slow = outcome(
            soft_binned_cdl, list(y), list(p), sample_weight=None if w is None else list(w)
        )
        assert fast == slow, case
        raised += isinstance(slow, tuple)
    assert raised > 200
    # a bad weight is reported before a bad prediction, as by the validator
    y, p = np.array([0, 1]), np.array([np.nan, 0.5])
    with pytest.raises(ValueError, match="sample_weight contains NaN"):
        soft_binned_cdl(y, p, sample_weight=np.array([np.nan, 1.0]))
    with pytest.raises(ValueError, match="sample_weight must have a positive sum"):
        soft_binned_cdl(y, np.array([0.1, 0.5]), sample_weight=np.zeros(2))


def test_plain_input_skips_the_full_validator(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the full validator was called")

    monkeypatch.setattr(_scdl, "binary_rows", refuse)
    rng = np.random.default_rng(104)
    for _ in range(50):
        y, p, w = plain_case(rng)
        soft_binned_cdl(y, p, sample_weight=w)
    # labels {-1, 1} are valid but not plain: the full validator takes them
    with pytest.raises(AssertionError, match="full validator"):
        soft_binned_cdl(np.array([-1, 1]), np.array([0.2, 0.8]))


def test_valid_input_that_is_not_plain_is_unchanged():
    # labels {-1, 1}, int8 and strings, float32 or strided predictions,
    # big-endian arrays, integer weights, pos_label 0: the full validator
    rng = np.random.default_rng(105)
    p = rng.random(101)
    y = (rng.random(101) < p).astype(np.int64)
    w = rng.integers(1, 4, 101)
    base = soft_binned_cdl(y, p, sample_weight=w.astype(float))
    assert soft_binned_cdl(2 * y - 1, p, sample_weight=w) == base
    assert soft_binned_cdl(y.astype(np.int8), p, sample_weight=w) == base
    assert soft_binned_cdl(np.where(y == 1, "b", "a"), p, sample_weight=w, pos_label="b") == base
    assert soft_binned_cdl(y, p.astype(">f8"), sample_weight=w) == base
    assert soft_binned_cdl(y, np.c_[1 - p, p], sample_weight=w) == base
    assert soft_binned_cdl(1 - y, 1 - p, sample_weight=w, pos_label=0) == soft_binned_cdl(
        list(1 - y), list(1 - p), sample_weight=list(w), pos_label=0
    )
    double = np.repeat(p, 2)[::2]  # strided view
    assert soft_binned_cdl(y, double, sample_weight=w) == base


def test_inputs_are_not_written_and_may_be_read_only():
    rng = np.random.default_rng(106)
    y, p, w = plain_case(rng, max_n=200)
    copies = [a.copy() for a in (y, p) + (() if w is None else (w,))]
    for a in (y, p) + (() if w is None else (w,)):
        a.setflags(write=False)
    value = soft_binned_cdl(y, p, sample_weight=w)
    for a, c in zip((y, p) + (() if w is None else (w,)), copies):
        np.testing.assert_array_equal(a, c)
    assert value == soft_binned_cdl(copies[0], copies[1],
                                    sample_weight=None if w is None else copies[2])


def test_checked_soft_bin_checks_shapes():
    p = np.array([0.0, 0.5, 1.0])
    y = np.array([0, 1, 1], dtype=np.uint8)
    tables = np.zeros((2, 3))
    assert checked_soft_bin(p, y, None, tables)
    np.testing.assert_array_equal(tables, [[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]])
    with pytest.raises(ValueError, match=MSG):
        checked_soft_bin(p, y[:2].copy(), None, np.zeros((2, 3)))
    with pytest.raises(ValueError, match=MSG):
        checked_soft_bin(p, y, np.ones(2), np.zeros((2, 3)))
    with pytest.raises(ValueError, match=MSG):
        checked_soft_bin(p, y, None, np.zeros((2, 1)))
    with pytest.raises(ValueError, match=MSG):
        checked_soft_bin(p, y, None, np.zeros((3, 3)))
