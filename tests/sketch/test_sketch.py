"""CalibrationSketch: exact merges, compaction bounds, bytes, tester."""

import doctest
import pickle
import struct
import zlib
from fractions import Fraction

import numpy as np
import pytest

import skcal.sketch._sketch
from skcal import (
    CalibrationTester,
    binned_ece,
    calibration_decision_loss,
    calibration_fixed_decision_loss,
    cutoff_calibration_error,
    lower_distance_to_calibration,
    maximum_swap_regret,
    smooth_calibration_error,
    soft_binned_cdl,
)
from skcal._grouped import ExactSums, group
from skcal.sketch import CalibrationSketch

from cases import random_cases
from reference_sketch import compacted_rows_reference, exact_grouped_reference

CASES = random_cases(71, 260, max_n=70)


def _pieces(rng, n, w=None):
    """A random split of ``range(n)`` into 1 to 5 possibly empty, shuffled pieces.

    With ``w``, a piece of zero total weight (which the validator refuses)
    joins the next one (or the previous one, last).
    """
    order = rng.permutation(n)
    cuts = np.sort(rng.integers(0, n + 1, rng.integers(0, 5)))
    pieces = [order[a:b] for a, b in zip([0, *cuts], [*cuts, n])]
    if w is None:
        return pieces
    out, carry = [], order[:0]
    for rows in pieces:
        rows = np.concatenate([carry, rows])
        if rows.shape[0] and w[rows].sum() == 0:
            carry = rows
        else:
            out.append(rows)
            carry = order[:0]
    if carry.shape[0]:
        last = max(i for i, rows in enumerate(out) if rows.shape[0])
        out[last] = np.concatenate([out[last], carry])
    return out


def _sketches(y, p, w, pieces, **options):
    out = []
    for rows in pieces:
        s = CalibrationSketch(**options)
        if rows.shape[0]:
            s.update(y[rows], p[rows], w[rows])
        out.append(s)
    return out


def _three(rng, w):
    pieces = _pieces(rng, len(w), w)
    while len(pieces) < 3:
        pieces.append(pieces[0][:0])
    return pieces[:2] + [np.concatenate(pieces[2:])]


def _merge_in_random_order(rng, sketches):
    sketches = list(sketches)
    while len(sketches) > 1:
        i, j = rng.choice(len(sketches), 2, replace=False)
        merged = sketches[i] + sketches[j]
        sketches = [s for k, s in enumerate(sketches) if k not in (i, j)] + [merged]
    return sketches[0]


def _assert_same_statistic(g, values, weights, positives):
    np.testing.assert_array_equal(g.values, values)
    np.testing.assert_array_equal(g.weights, weights)
    np.testing.assert_array_equal(g.positives, positives)


# --- exact sums ----------------------------------------------------------------


def test_exact_sums_are_correctly_rounded_and_order_free():
    rng = np.random.default_rng(3)
    for trial in range(400):
        n, k = int(rng.integers(1, 25)), int(rng.integers(1, 4))
        kind = trial % 5
        if kind == 0:
            x = rng.random(n)
        elif kind == 1:  # wide exponent range
            x = rng.exponential(size=n) * 10.0 ** rng.integers(-40, 40, n)
        elif kind == 2:  # subnormals
            x = np.ldexp(rng.random(n), rng.integers(-1074, -1010, n))
        elif kind == 3:  # one huge term and tiny ones: ties and sticky bits
            x = np.concatenate([[2.0**53], rng.integers(0, 3, n - 1) * 0.5])
        else:
            x = rng.integers(0, 4, n).astype(float)
        index = rng.integers(0, k, n)
        s = ExactSums.of_doubles(x, index, k)
        exact = [sum(map(Fraction, x[index == g].tolist()), Fraction(0)) for g in range(k)]
        np.testing.assert_array_equal(s.to_float(), [float(e) for e in exact])
        order = rng.permutation(n)
        assert s.same_as(ExactSums.of_doubles(x[order], index[order], k))
        v = rng.random(k)
        product = s.times(v).to_float()
        for g in range(k):
            expected = float(exact[g] * Fraction(float(v[g])))
            assert product[g] == expected or expected < 2.0**-1000
        # exact sums of products of two doubles (the atoms' first moments)
        weights = x[::-1].copy()
        moment = ExactSums.products(x, weights, index, k).to_float()
        for g in range(k):
            rows = np.flatnonzero(index == g)
            expected = sum(
                (Fraction(float(x[i])) * Fraction(float(weights[i])) for i in rows),
                Fraction(0),
            )
            assert moment[g] == float(expected) or float(expected) < 2.0**-1000
    # round half to even at the 53rd bit, and a sticky bit far below
    for terms in ([1.0, 2**-53], [1 + 2**-52, 2**-53], [1.0, 2**-53, 2**-900]):
        x = np.array(terms)
        got = ExactSums.of_doubles(x, np.zeros(len(x), dtype=int), 1).to_float()[0]
        assert got == float(sum(map(Fraction, terms)))


def test_exact_sums_kernel_on_long_inputs_in_chunks(monkeypatch):
    # many rows per group, exponents far apart, and chunks of a few rows (the
    # carried sums of the chunks are added): the Fraction sums, bit for bit
    import skcal._exact_sums as exact_sums

    rng = np.random.default_rng(4)
    for trial, chunk in enumerate((1 << 24, 7, 1)):
        monkeypatch.setattr(exact_sums, "_CHUNK", chunk)
        n, k = (3000, 5) if chunk > 1 else (60, 3)
        x = rng.exponential(size=n) * 10.0 ** rng.integers(-300, 300, n)
        x[rng.random(n) < 0.1] = 0.0
        x[rng.random(n) < 0.05] = np.ldexp(1.0, -1074)
        v = rng.random(n) * 10.0 ** rng.integers(-20, 5, n)
        index = rng.integers(0, k, n)
        sums = ExactSums.of_doubles(x, index, k).to_float()
        moments = ExactSums.products(v, x, index, k).to_float()
        for g in range(k):
            rows = np.flatnonzero(index == g)
            exact = sum((Fraction(float(x[i])) for i in rows), Fraction(0))
            assert sums[g] == float(exact), (trial, g)
            exact = sum(
                (Fraction(float(v[i])) * Fraction(float(x[i])) for i in rows),
                Fraction(0),
            )
            assert moments[g] == float(exact) or float(exact) < 2.0**-1000, (trial, g)
    for bad in (-1.0, np.nan, np.inf, -np.inf):
        with pytest.raises(ValueError, match="finite, non-negative"):
            ExactSums.of_doubles(np.array([1.0, bad]), np.zeros(2, dtype=int), 1)
    # -0.0 is zero, and zeros alone give empty sums
    assert ExactSums.of_doubles(np.array([-0.0, 0.0]), np.zeros(2, int), 1).to_float()[0] == 0


# --- exact merges ----------------------------------------------------------------


def test_merges_of_random_splits_are_the_exact_statistic_bit_for_bit():
    rng = np.random.default_rng(5)
    for y, p, w in CASES:
        whole = CalibrationSketch(y, p, w)
        expected = exact_grouped_reference(y, p, w)
        _assert_same_statistic(whole.grouped_statistic(), *expected)
        for _ in range(3):
            merged = _merge_in_random_order(rng, _sketches(y, p, w, _pieces(rng, len(p), w)))
            _assert_same_statistic(merged.grouped_statistic(), *expected)
            assert merged.to_bytes() == whole.to_bytes()
            assert merged.exact and merged.n_samples == len(p)
        if np.all(w == np.floor(w)):
            # integer weights: also the in-memory statistic, bit for bit
            g = group(y, p, w)
            _assert_same_statistic(whole.grouped_statistic(), g.values, g.weights, g.positives)


def test_merge_is_associative_and_commutative_and_empty_is_the_identity():
    rng = np.random.default_rng(6)
    for y, p, w in CASES[:80]:
        a, b, c = _sketches(y, p, w, _three(rng, w))
        blobs = {
            ((a + b) + c).to_bytes(),
            (a + (b + c)).to_bytes(),
            (c + b + a).to_bytes(),
            sum([b, c, a], start=CalibrationSketch()).to_bytes(),
            sum([a, b, c]).to_bytes(),
        }
        assert len(blobs) == 1
        empty = CalibrationSketch()
        assert (a + empty).to_bytes() == a.to_bytes() == (empty + a).to_bytes()
    assert (CalibrationSketch() + CalibrationSketch()).n_samples == 0


def test_update_equals_merge_and_inputs_are_untouched():
    y = np.array([0, 1, 1, 0])
    p = np.array([0.3, 0.3, 0.8, 0.1])
    w = np.array([1.0, 2.5, 0.5, 1.0])
    copies = y.copy(), p.copy(), w.copy()
    s = CalibrationSketch()
    assert s.update(y[:2], p[:2], w[:2]) is s
    s.update(y[2:], p[2:], w[2:])
    assert s.to_bytes() == CalibrationSketch(y, p, w).to_bytes()
    for a, b in zip((y, p, w), copies):
        np.testing.assert_array_equal(a, b)


MEASURES = [
    (smooth_calibration_error, {}),
    (cutoff_calibration_error, {}),
    (calibration_decision_loss, {}),
    (calibration_fixed_decision_loss, {}),
    (maximum_swap_regret, {}),
    (lower_distance_to_calibration, {"grid": 20}),
    (soft_binned_cdl, {}),
    (soft_binned_cdl, {"m": 8}),
    (binned_ece, {}),
    (binned_ece, {"n_bins": 8, "norm": "l2"}),
    (binned_ece, {"n_bins": 5, "strategy": "quantile", "norm": "max"}),
]


def test_every_measure_of_a_sketch_equals_the_in_memory_value():
    rng = np.random.default_rng(7)
    for y, p, w in CASES[:100]:
        integral = bool(np.all(w == np.floor(w)))
        merged = _merge_in_random_order(rng, _sketches(y, p, w, _pieces(rng, len(p), w)))
        for measure, options in MEASURES:
            expected = measure(y, p, sample_weight=w, **options)
            # from the in-memory statistic: what a sketch of integer weights
            # reproduces bit for bit
            held = measure(_Held(group(y, p, w)), **options)
            value = measure(merged, **options)
            if integral:
                assert value == held, (measure.__name__, options)
            assert value == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_measure_classes_accept_a_sketch():
    from skcal.measures import BinnedECE, SmoothCalibrationError, SoftBinnedCDL

    rng = np.random.default_rng(16)
    p = np.round(rng.random(200), 2)
    y = (rng.random(200) < p).astype(int)
    s = CalibrationSketch(y[:90], p[:90]) + CalibrationSketch(y[90:], p[90:])
    for measure in (SmoothCalibrationError(), SoftBinnedCDL(), BinnedECE(n_bins=8)):
        assert measure(s) == measure(y, p)
        assert measure(s, return_details=True)[0] == measure(y, p)


class _Held:
    def __init__(self, statistic):
        self.statistic = statistic

    def grouped_statistic(self):
        return self.statistic


def test_top_label_multiclass_reduces_to_a_binary_sketch():
    rng = np.random.default_rng(8)
    P = rng.dirichlet(np.ones(4), 60)
    y = rng.integers(0, 4, 60)
    s = CalibrationSketch(y[:25], P[:25], labels=[0, 1, 2, 3])
    s.update(y[25:], P[25:])
    assert smooth_calibration_error(s) == smooth_calibration_error(y, P)
    strings = np.array(["a", "b"])[rng.integers(0, 2, 30)]
    q = rng.random(30)
    t = CalibrationSketch(strings, q, pos_label="b")
    assert binned_ece(t) == binned_ece(strings, q, pos_label="b")


def test_empty_sketch_and_bad_arguments():
    empty = CalibrationSketch()
    assert empty.exact and empty.n_values == 0 and empty.total_weight == 0.0
    with pytest.raises(ValueError, match="empty"):
        smooth_calibration_error(empty)
    with pytest.raises(ValueError, match="empty"):
        empty.error_bounds()
    with pytest.raises(ValueError, match="max_size must be at least 2"):
        CalibrationSketch(max_size=1)
    with pytest.raises(TypeError, match="max_size"):
        CalibrationSketch(max_size=2.5)
    with pytest.raises(TypeError, match="other must be a CalibrationSketch"):
        empty.merge(3)
    with pytest.raises(ValueError, match="y_prob is required"):
        empty.update([0, 1], None)
    with pytest.raises(ValueError, match="sample_weight was given"):
        CalibrationSketch(sample_weight=[1.0])
    with pytest.raises(ValueError, match="pass y_prob=None"):
        smooth_calibration_error(CalibrationSketch([0, 1], [0.2, 0.4]), [0.1, 0.2])
    small = CalibrationSketch([0, 1, 1], [0.1, 0.5, 0.9], max_size=2)
    large = CalibrationSketch([0, 1], [0.2, 0.3], max_size=100)
    assert (small + large).max_size == (large + small).max_size == 2
    assert (large + CalibrationSketch()).max_size == 100


def test_pickle_and_repr():
    s = CalibrationSketch([0, 1, 1], [0.2, 0.2, 0.7], [1.0, 0.5, 2.0], max_size=3)
    t = pickle.loads(pickle.dumps(s))
    assert t.to_bytes() == s.to_bytes() and t.max_size == 3
    assert len(pickle.dumps(s)) < 1000
    assert "n_samples=3" in repr(s)


# --- bytes ---------------------------------------------------------------------


def _resign(body):
    return body + struct.pack("<I", zlib.crc32(body))


def test_bytes_round_trip_and_reject_corruption():
    rng = np.random.default_rng(9)
    y = (rng.random(40) < 0.5).astype(int)
    p = np.round(rng.random(40), 2)
    w = rng.exponential(size=40)
    for s in (
        CalibrationSketch(y, p, w),
        CalibrationSketch(y, p),
        CalibrationSketch(y, p, w, max_size=6),
        CalibrationSketch(),
    ):
        blob = s.to_bytes()
        t = CalibrationSketch.from_bytes(blob)
        assert t.to_bytes() == blob and t.exact == s.exact
        if s.n_samples:
            _assert_same_statistic(
                t.grouped_statistic(),
                s.grouped_statistic().values,
                s.grouped_statistic().weights,
                s.grouped_statistic().positives,
            )
        for cut in range(len(blob)):
            with pytest.raises(ValueError):
                CalibrationSketch.from_bytes(blob[:cut])
        for byte in range(len(blob)):
            for bit in (0, 3, 7):
                bad = bytearray(blob)
                bad[byte] ^= 1 << bit
                with pytest.raises(ValueError):
                    CalibrationSketch.from_bytes(bytes(bad))
    with pytest.raises(ValueError, match="not a CalibrationSketch"):
        CalibrationSketch.from_bytes(pickle.dumps({"a": 1}))
    with pytest.raises(TypeError, match="blob must be bytes"):
        CalibrationSketch.from_bytes("SKCALSKT")
    # intact checksums over invalid content are rejected too
    blob = CalibrationSketch([0, 1, 1], [0.2, 0.4, 0.9]).to_bytes()
    body = bytearray(blob[:-4])
    header = 8 + 2 + 2 + 8 * 3 + 8 + 8
    values = np.frombuffer(bytes(body[header : header + 24]), "<f8").copy()
    bad_values = values[[1, 0, 2]]
    body[header : header + 24] = bad_values.tobytes()
    with pytest.raises(ValueError, match="strictly increasing"):
        CalibrationSketch.from_bytes(_resign(bytes(body)))
    version = bytearray(blob[:-4])
    version[8:10] = struct.pack("<H", 99)
    with pytest.raises(ValueError, match="version 99"):
        CalibrationSketch.from_bytes(_resign(bytes(version)))
    flags = bytearray(blob[:-4])
    flags[10:12] = struct.pack("<H", 64)
    with pytest.raises(ValueError, match="unknown flags"):
        CalibrationSketch.from_bytes(_resign(bytes(flags)))
    trailing = blob[:-4] + b"\0" * 8
    with pytest.raises(ValueError, match="trailing"):
        CalibrationSketch.from_bytes(_resign(trailing))


# --- the tester ----------------------------------------------------------------


def test_tester_on_a_sketch_decides_as_on_the_rows():
    rng = np.random.default_rng(10)
    p = np.round(rng.random(400), 2)
    y = (rng.random(400) < p).astype(int)
    sketch = CalibrationSketch(y[:150], p[:150]) + CalibrationSketch(y[150:], p[150:])
    a = CalibrationTester(random_state=1).decide(y, p)
    b = CalibrationTester(random_state=1).decide(sketch)
    assert a == b
    # equal weights c: the null is c Binomial(count, v), as for the rows
    w = np.full(400, 0.5)
    halves = CalibrationSketch(y, p, w)
    assert CalibrationTester(random_state=2).decide(
        y, p, sample_weight=w
    ) == CalibrationTester(random_state=2).decide(halves)
    with pytest.raises(ValueError, match="different weights"):
        CalibrationTester().decide(CalibrationSketch(y, p, rng.random(400) + 0.5))
    with pytest.raises(ValueError, match="compacted"):
        CalibrationTester().decide(CalibrationSketch(y, p, max_size=10))


# --- docstrings -------------------------------------------------------------------


def test_module_examples_run():
    finder = doctest.DocTestFinder(recurse=True)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(skcal.sketch._sketch) if t.examples]
    assert len(tests) >= 5
    for t in tests:
        runner.run(t)
    assert runner.summarize(verbose=False).failed == 0


# --- compaction --------------------------------------------------------------------


def _adversarial_cases(rng):
    """Rows crowded into one cell, straddling cell edges, extreme weights."""
    cases = []
    for _ in range(12):
        n = int(rng.integers(2, 60))
        # many rows in one cell with mixed outcomes, and a few elsewhere
        p = np.concatenate([0.5 + rng.random(n) * 2.0**-6, rng.random(3)])
        y = (rng.random(n + 3) < 0.5).astype(float)
        cases.append((y, p, np.ones(n + 3)))
        # values on and next to dyadic cell edges
        edges = rng.integers(1, 16, n) / 16.0
        p = np.clip(edges + rng.choice([-1e-12, 0.0, 1e-12, 2.0**-40], n), 0, 1)
        y = (rng.random(n) < p).astype(float)
        cases.append((y, p, rng.exponential(size=n)))
        # extreme weights: one row of almost all the mass per cell
        p = rng.random(n)
        w = 10.0 ** rng.uniform(-6, 6, n)
        y = (rng.random(n) < 1 - p).astype(float)
        cases.append((y, p, w))
        # predictions 0 and 1 and a single class
        p = rng.choice([0.0, 1.0, rng.random(), rng.random()], n)
        cases.append((np.full(n, float(rng.integers(2))), p, np.ones(n)))
    return cases


BOUNDED = [
    (smooth_calibration_error, "smooth_calibration_error", {}),
    (cutoff_calibration_error, "cutoff_calibration_error", {}),
    (lower_distance_to_calibration, "lower_distance_to_calibration", {"grid": 16}),
    (calibration_decision_loss, "calibration_decision_loss", {}),
    (calibration_fixed_decision_loss, "calibration_fixed_decision_loss", {}),
    (maximum_swap_regret, "maximum_swap_regret", {}),
    (binned_ece, "binned_ece", {}),
    (binned_ece, "binned_ece", {"n_bins": 10}),
    (soft_binned_cdl, "soft_binned_cdl", {}),
]


def test_compacted_sketches_stay_within_their_bounds():
    rng = np.random.default_rng(11)
    cases = _adversarial_cases(rng) + CASES[:60]
    checked = 0
    for y, p, w in cases:
        for max_size in (2, 3, 5, 16):
            s = CalibrationSketch(y, p, w, max_size=max_size)
            assert s.n_values <= max_size
            if s.exact:
                assert set(s.error_bounds().values()) == {0.0}
                continue
            checked += 1
            bounds = s.error_bounds()
            for measure, name, options in BOUNDED:
                bound = s._error_bound(name, **options)
                if not options:
                    assert bound == bounds[name]
                value = measure(s, **options)
                expected = measure(y, p, sample_weight=w, **options)
                slack = 1e-9 * max(1.0, abs(expected)) + (
                    1e-6 if name == "lower_distance_to_calibration" else 0.0
                )
                assert abs(value - expected) <= bound + slack, (name, options, max_size)
    assert checked > 100


def test_compaction_moves_rows_as_the_reference_does():
    rng = np.random.default_rng(12)
    for y, p, w in _adversarial_cases(rng) + CASES[:80]:
        s = CalibrationSketch(y, p, w, max_size=int(rng.integers(2, 9)))
        if s.exact:
            continue
        ry, rp, rw, moved = compacted_rows_reference(y, p, w, s.level)
        values = np.concatenate(s._state.atom_values())
        present = np.concatenate(s._state._atom_present())
        order = np.lexsort((ry, rp))
        got_p = values[present]
        got_y = np.repeat([0.0, 1.0], [int(x.sum()) for x in s._state._atom_present()])
        got = np.lexsort((got_y, got_p))
        np.testing.assert_allclose(got_p[got], rp[order], rtol=4e-16, atol=1e-300)
        np.testing.assert_array_equal(got_y[got], ry[order])
        assert s.total_weight == pytest.approx(w.sum(), rel=1e-15)
        assert moved < 2.0**-s.level or (moved == 0 and s.level == 0)
        g = s.grouped_statistic()
        assert np.all(np.diff(g.values) > 0) and len(g) <= s.max_size


def test_compaction_is_order_free():
    rng = np.random.default_rng(13)
    for y, p, w in CASES[:120]:
        max_size = int(rng.integers(2, 12))
        whole = CalibrationSketch(y, p, w, max_size=max_size)
        for _ in range(2):
            pieces = _sketches(y, p, w, _pieces(rng, len(p), w), max_size=max_size)
            merged = _merge_in_random_order(rng, pieces)
            assert merged.to_bytes() == whole.to_bytes()
        # an exact sketch merged into a budget: the same as building within it
        exact = _merge_in_random_order(rng, _sketches(y, p, w, _pieces(rng, len(p), w)))
        assert (CalibrationSketch(max_size=max_size) + exact).to_bytes() == whole.to_bytes()


def test_refined_bins_stay_exact_under_compaction():
    rng = np.random.default_rng(14)
    for _ in range(30):
        n = int(rng.integers(50, 400))
        p = rng.random(n)
        y = (rng.random(n) < p + rng.uniform(-0.2, 0.2)).astype(int)
        w = rng.integers(1, 4, n).astype(float)
        s = CalibrationSketch(y, p, w, max_size=int(rng.integers(8, n // 2)))
        assert not s.exact
        for k in range(s.level + 1):
            for norm in ("l1", "l2", "max"):
                value, details = binned_ece(s, n_bins=2**k, norm=norm, return_details=True)
                assert details.error_bound == 0.0
                expected = binned_ece(y, p, sample_weight=w, n_bins=2**k, norm=norm)
                assert value == pytest.approx(expected, rel=1e-12, abs=1e-15)
        for k in range(1, s.level + 1):
            value = soft_binned_cdl(s, m=2**k)
            assert value == pytest.approx(
                soft_binned_cdl(y, p, sample_weight=w, m=2**k), rel=1e-12, abs=1e-15
            )
        value, details = soft_binned_cdl(s, return_details=True)
        if details.error_bound == 0.0:
            assert np.max(details.levels) <= 2**s.level
            assert value == pytest.approx(soft_binned_cdl(y, p, sample_weight=w), rel=1e-12)


def test_unsupported_options_on_a_compacted_sketch_raise():
    rng = np.random.default_rng(15)
    p = rng.random(300)
    y = (rng.random(300) < p).astype(int)
    s = CalibrationSketch(y, p, max_size=16)
    with pytest.raises(ValueError, match="quantile"):
        binned_ece(s, strategy="quantile")
    with pytest.raises(ValueError, match="norm='l2'"):
        binned_ece(s, n_bins=15, norm="l2")
    with pytest.raises(ValueError, match="m=3"):
        soft_binned_cdl(s, m=3)
    with pytest.raises(ValueError, match="No compaction bound"):
        s._error_bound("utility_calibration_error")
    for measure, name, options in BOUNDED:
        if name != "maximum_swap_regret":
            _, details = measure(s, return_details=True, **options)
            assert details.error_bound == s._error_bound(name, **options)
    exact = CalibrationSketch(y, p)
    _, details = smooth_calibration_error(exact, return_details=True)
    assert "error_bound" not in details


@pytest.mark.parametrize("own", [False, True])
def test_exact_rows_state_cuts_its_buffers_in_place(own):
    # the exact build's four row buffers cut to what they hold (resized in
    # place, or the caller's given-up weights copied): the state of the
    # in-memory grouping, with ties, single rows and zero weights
    from skcal.sketch._state import _exact_of_rows

    rng = np.random.default_rng(31)
    for n in (1, 2, 50, 3000):
        p = np.round(rng.random(n), int(rng.integers(1, 4)))
        y = rng.integers(0, 2, n)
        w = rng.exponential(size=n)
        w[rng.random(n) < 0.1] = 0.0
        state = _exact_of_rows(p, y, w.copy(), own_weights=own)
        g = group(y, p, w)
        np.testing.assert_array_equal(state.values, g.values)
        for sums, want in ((state.neg, g.weights - g.positives), (state.pos, g.positives)):
            got = sums.to_float()
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
            assert got.shape == g.values.shape


def test_exact_state_compacts_as_all_in_limbs():
    # _Exact.at_level takes the values of double sums as weighted points and
    # only those of multi-limb sums through limbs: the atoms of all of them
    # through limbs (Compacted.from_groups, the obviously exact way), exactly
    from skcal._grouped import cells_of
    from skcal.sketch._state import _Compacted, _exact_of_rows

    rng = np.random.default_rng(32)
    for case in range(12):
        n = int(rng.integers(2, 3000))
        p = rng.random(n).astype(np.float32).astype(np.float64)
        p[: n // 3] = np.round(p[: n // 3], 2)  # repeated values: multi-limb sums
        y = rng.integers(0, 2, n)
        w = rng.exponential(size=n) * 10.0 ** rng.uniform(-3, 3, n)
        state = _exact_of_rows(p, y, w)
        if case % 3 == 0:
            assert state.neg.rows.shape[0] + state.pos.rows.shape[0] > 0
        for level in (0, 3, 11, 30):
            got = state.at_level(level)
            want = _Compacted.from_groups(
                cells_of(state.values, level), state.values, state.neg.to_exact(),
                state.pos.to_exact(), level,
            )
            np.testing.assert_array_equal(got.cells, want.cells)
            np.testing.assert_array_equal(got.ranges, want.ranges)
            for a in (0, 1):
                assert got.masses[a].same_as(want.masses[a])
                assert got.moments[a].same_as(want.moments[a])


@pytest.mark.parametrize("label_dtype", [np.int64, np.uint8])
def test_key_sorted_exact_build_is_the_radix_build(label_dtype, monkeypatch):
    # the exact build from one sort of prefix keys (group_keys_exact, the
    # repeated values' rows at the tail of pos) against the radix sort's
    # (group_rows_exact): the same state, exactly, on ties, -0.0, zero
    # weights, single rows and prefixes crowded with distinct predictions
    # (the keys' kernel then declines and the radix sort builds)
    import skcal.sketch._state as state_module
    from skcal._kernels._interval import index_bits, prefix_keys
    from skcal._kernels._sketch import group_keys_exact
    from skcal.sketch._state import _exact_of_rows

    rng = np.random.default_rng(33)
    ulp = 2.0**-53
    for case in range(120):
        n = int(rng.integers(1, 400)) if case > 2 else case + 1
        kind = case % 5
        if kind == 0:
            p = rng.random(n)
        elif kind == 1:
            p = np.round(rng.random(n), int(rng.integers(0, 3)))
        elif kind == 2:
            p = rng.choice([0.0, -0.0, 1.0, 0.5, 5e-324, 0.5 + ulp], n)
        elif kind == 3:
            p = 0.5 + rng.integers(0, 2 ** (index_bits(n) + 2), n) * ulp
        else:
            p = rng.random(n).astype(np.float32).astype(np.float64)
        y = rng.integers(0, 2, n).astype(label_dtype)
        w = rng.exponential(size=n) * 10.0 ** rng.uniform(-4, 4, n)
        w[rng.random(n) < 0.1] = 0.0
        states = []
        for keys in (False, True):
            monkeypatch.setattr(state_module, "key_sort", lambda keys=keys: keys)
            states.append(_exact_of_rows(p, y, w.copy()))
        a, b = states
        np.testing.assert_array_equal(a.values, b.values)
        for x, z in ((a.neg, b.neg), (a.pos, b.pos)):
            np.testing.assert_array_equal(x.doubles, z.doubles)
            np.testing.assert_array_equal(x.rows, z.rows)
            assert x.big.same_as(z.big)
    # the kernel itself: declines on a crowded prefix, checks its shapes
    n = 5000
    p = 0.5 + rng.integers(0, 2**12, n) * ulp
    keys = np.empty(n, np.uint64)
    assert prefix_keys(p, keys, index_bits(n))
    keys.sort()
    out = [np.empty(n) for _ in range(3)]
    y = rng.integers(0, 2, n)
    assert group_keys_exact(keys, p, y, rng.random(n), *out, index_bits(n)) == (-1, 0)
    with pytest.raises(ValueError, match="one length"):
        group_keys_exact(keys, p[:-1].copy(), y, rng.random(n), *out, index_bits(n))
