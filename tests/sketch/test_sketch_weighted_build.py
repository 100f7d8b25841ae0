"""The exact sketch of rows with real weights, built by one radix sort (issue 26, item 4).

``group_rows_exact`` (``skcal/_kernels/_sketch.pyx``) sorts ``(p, y, w)``
rows and groups equal predictions, handing back the rows of repeated
values for the multi-limb sums; the sketch's build reuses the validator's
copy of the weights as one of its buffers. Checked here against slow twins
on random cases with ties, zero weights, n = 1, p in {0, 1}, -0.0, one
class and several label dtypes; the caller's arrays must stay untouched.
"""

import itertools
import tracemalloc

import numpy as np
import pytest

import skcal.sketch._state as state_module
from skcal._kernels._sketch import group_rows_exact
from skcal.sketch import CalibrationSketch

from cases import random_cases
from reference_sketch import exact_grouped_reference


def rows_grouped_reference(y, p, w):
    """``group_rows_exact`` written plainly: a stable sort, then ``groupby``."""
    order = sorted(range(len(p)), key=lambda i: p[i])  # stable: ties in input order
    values, neg, pos, rows = [], [], [], []
    for v, members in itertools.groupby(order, key=lambda i: p[i]):
        members = list(members)
        values.append(v + 0.0)
        if len(members) == 1:
            i = members[0]
            neg.append(0.0 if y[i] else w[i])
            pos.append(w[i] if y[i] else 0.0)
        else:
            neg.append(-float(len(members)))
            pos.append(0.0)
            rows += [-w[i] if y[i] else w[i] for i in members]
    return [np.array(x, dtype=float) for x in (values, neg, pos, rows)]


def _real_weights(rng, n):
    """Real (mostly non-integer) weights: exponential, with zeros, or of extreme scale."""
    kind = rng.integers(4)
    w = rng.exponential(size=n)
    if kind == 1:
        w[rng.random(n) < 0.4] = 0.0
        w[rng.integers(n)] += 0.5
    elif kind == 2:
        w *= 2.0 ** rng.choice([-1060, -600, 600, 1000])
    elif kind == 3:
        w = np.round(w, 1) + 0.1  # few distinct weights
    return w


def _cases(seed, count):
    """Random cases with real weights, some predictions -0.0."""
    rng = np.random.default_rng(seed)
    out = []
    for y, p, _ in random_cases(seed, count, max_n=90):
        p = p.copy()
        p[(p == 0) & (rng.random(p.shape[0]) < 0.5)] = -0.0
        out.append((y, p, _real_weights(rng, p.shape[0])))
    return out


CASES = _cases(2604, 300)


def test_kernel_equals_its_twin():
    rng = np.random.default_rng(11)
    for y, p, w in CASES:
        n = p.shape[0]
        expected = rows_grouped_reference(y.tolist(), p.tolist(), w.tolist())
        for labels in (y.astype(np.uint8), y.astype(np.int64)):
            out = [np.full(n, np.nan) for _ in range(4)]
            shared = bool(rng.integers(2))
            if shared:  # the weights as the pos buffer, as the sketch passes them
                out[2] = w.copy()
                k, m = group_rows_exact(p, labels, out[2], *out)
            else:
                k, m = group_rows_exact(p, labels, w, *out)
            got = [out[0][:k], out[1][:k], out[2][:k], out[3][:m]]
            for a, b in zip(got, expected):
                np.testing.assert_array_equal(a, b)
                np.testing.assert_array_equal(np.signbit(a), np.signbit(b))
    zeros = np.zeros(0)
    assert group_rows_exact(zeros, np.zeros(0, np.uint8), zeros, *[zeros] * 4) == (0, 0)
    with pytest.raises(ValueError, match="one length"):
        group_rows_exact(np.zeros(2), np.zeros(1, np.uint8), np.zeros(2), *[np.zeros(2)] * 4)
    with pytest.raises(ValueError, match="len"):
        group_rows_exact(np.zeros(2), np.zeros(2, np.uint8), np.zeros(2), *[np.zeros(1)] * 4)


def test_weighted_build_is_the_exact_statistic_and_leaves_inputs_untouched():
    rng = np.random.default_rng(12)
    for y, p, w in CASES:
        if not w.sum() > 0 or not np.isfinite(w.sum()):
            continue
        expected = exact_grouped_reference(y, p, w)
        form = rng.integers(5)
        weights = {
            0: w.copy(),  # float64: the validator's copy becomes a work buffer
            1: w.tolist(),
            2: np.repeat(w, 2)[::2],  # strided
            3: w.copy(),  # read-only
            4: w.copy(),  # float64 twice in a row into one sketch
        }[form]
        if form == 3:
            weights.flags.writeable = False
        labels = [y.astype(int), y.astype(bool), y, y.astype(int).astype(str)][rng.integers(4)]
        before = np.array(weights, dtype=float, copy=True)
        kept_y, kept_p = np.copy(labels), p.copy()
        options = {"pos_label": "1"} if labels.dtype.kind == "U" else {}
        sketch = CalibrationSketch(labels, p, weights, **options)
        g = sketch.grouped_statistic()
        for a, b in zip((g.values, g.weights, g.positives), expected):
            np.testing.assert_array_equal(a, b)
        assert not np.any(np.signbit(g.values))  # -0.0 is held as +0.0
        np.testing.assert_array_equal(np.asarray(weights, dtype=float), before)
        assert np.array_equal(np.signbit(np.asarray(weights, dtype=float)), np.signbit(before))
        np.testing.assert_array_equal(labels, kept_y)
        np.testing.assert_array_equal(np.signbit(p), np.signbit(kept_p))
        if form == 4:
            # a second update of the same array: it was not used up by the first
            sketch.update(labels, p, weights)
            twice = exact_grouped_reference(np.tile(y, 2), np.tile(p, 2), np.tile(w, 2))
            g = sketch.grouped_statistic()
            for a, b in zip((g.values, g.weights, g.positives), twice):
                np.testing.assert_array_equal(a, b)


def test_blocks_of_repeated_values_give_the_same_sketch(monkeypatch):
    # the exact sums of repeated values are taken a block of values at a
    # time: any block size gives the same sketch, byte for byte
    rng = np.random.default_rng(13)
    for y, p, w in CASES[:150]:
        if not w.sum() > 0 or not np.isfinite(w.sum()):
            continue
        monkeypatch.setattr(state_module, "_CHUNK_ROWS", 1 << 30)
        whole = CalibrationSketch(y, p, w)
        monkeypatch.setattr(state_module, "_CHUNK_ROWS", int(rng.integers(1, 9)))
        blocks = CalibrationSketch(y, p, w)
        assert blocks.to_bytes() == whole.to_bytes()
        g = blocks.grouped_statistic()
        for a, b in zip((g.values, g.weights, g.positives), exact_grouped_reference(y, p, w)):
            np.testing.assert_array_equal(a, b)


def _rounded_rows(seed, n, digits):
    """Calibrated rows with predictions rounded to ``digits`` and exponential weights."""
    rng = np.random.default_rng(seed)
    p = np.round(rng.random(n), digits)
    y = (rng.random(n) < p).astype(np.int64)
    return y, p, rng.exponential(size=n)


def test_exact_build_of_many_repeated_values_needs_at_most_40_bytes_per_row():
    # 2 * 10**5 rows on 10**4 values: the multi-limb sums of the repeated
    # values are taken in blocks (at once they needed about 49 bytes a row)
    n = 200_000
    y, p, w = _rounded_rows(1, n, 4)
    tracemalloc.start()
    sketch = CalibrationSketch(y, p, w)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert sketch.n_values == np.unique(p).shape[0]
    assert peak / n <= 40, f"{peak / n:.1f} bytes per row"


def test_minus_zero_predictions_merge_to_the_same_bytes_in_any_order():
    # p = -0.0 and p = +0.0 are one prediction: held as +0.0 whichever piece
    # brought it (the argsort build kept a lone -0.0 as -0.0, so the bytes
    # of a merge depended on the order of the pieces)
    a = CalibrationSketch([1], [-0.0], [0.5])
    b = CalibrationSketch([0], [0.0], [0.25])
    whole = CalibrationSketch([1, 0], [-0.0, 0.0], [0.5, 0.25])
    assert not np.signbit(a.grouped_statistic().values[0])
    assert (a + b).to_bytes() == (b + a).to_bytes() == whole.to_bytes()


def test_exact_weighted_build_needs_at_most_33_5_bytes_per_row():
    # the radix build holds four 8-byte buffers per row, one of them the
    # validator's copy of the weights, and 1 byte per row of radix counts at
    # this size (33.0 in all; the argsort build: 34.0); validation included
    rng = np.random.default_rng(0)
    n = 100_000
    p = rng.random(n)
    y = (rng.random(n) < p).astype(np.int64)
    w = rng.exponential(size=n)
    tracemalloc.start()
    sketch = CalibrationSketch(y, p, w)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert sketch.n_values == n
    assert peak / n <= 33.5, f"{peak / n:.1f} bytes per row"


def test_exact_sums_in_blocks_of_any_size_are_the_same_bytes():
    # the repeated values' exact sums are taken in blocks of a quarter of the
    # rows (at least 2**16): 6 * 10**5 rows at once (blocks of 1.5 * 10**5)
    # and in halves (blocks of 75,000) and quarters (2**16) merge to the
    # same bytes, as exact sums must
    n = 600_000
    y, p, w = _rounded_rows(7, n, 3)
    whole = CalibrationSketch(y, p, w)
    for parts in (2, 4):
        cuts = np.linspace(0, n, parts + 1).astype(int)
        merged = CalibrationSketch(y[: cuts[1]], p[: cuts[1]], w[: cuts[1]])
        for a, b in zip(cuts[1:-1], cuts[2:]):
            merged = merged + CalibrationSketch(y[a:b], p[a:b], w[a:b])
        assert merged.to_bytes() == whole.to_bytes()
