"""CalibrationSketch hardening: overflow, threads, compact bytes, fuzzed loading."""

import struct
import subprocess
import sys
import threading
import tracemalloc
import zlib
from fractions import Fraction

import numpy as np
import pytest

import skcal
from skcal import (
    CalibrationTester,
    calibration_decision_loss,
    smooth_calibration_error,
)
from skcal._grouped import ExactSums, GroupedStatistic
from skcal.sketch import CalibrationSketch

_HEADER = struct.Struct("<8sHHqqqdq")


def _with_crc(body):
    body = bytes(body)
    return body + struct.pack("<I", zlib.crc32(body))


def _edit_header(blob, **fields):
    names = ["magic", "version", "flags", "max_size", "level", "n_rows", "common", "size"]
    body = bytearray(blob[:-4])
    values = dict(zip(names, _HEADER.unpack_from(body)))
    values.update(fields)
    body[: _HEADER.size] = _HEADER.pack(*(values[n] for n in names))
    return _with_crc(body)


# --- 7: overflow is an error where it happens -----------------------------------


def test_merge_and_update_that_overflow_raise_and_leave_the_sketch_unchanged():
    a = CalibrationSketch([0, 1], [0.2, 0.7], sample_weight=[1e308, 5e307])
    with pytest.raises(ValueError, match="merge overflows"):
        a.merge(a)
    with pytest.raises(ValueError, match="merge overflows"):
        sum([a, a, a], start=CalibrationSketch())
    before = a.to_bytes()
    with pytest.raises(ValueError, match="update overflows"):
        a.update([1], [0.7], sample_weight=[1e308])
    assert a.to_bytes() == before
    with pytest.raises(ValueError, match="sample_weight sums to more"):
        CalibrationSketch([0, 1], [0.2, 0.7], sample_weight=[1.5e308, 1.5e308])
    # just below the limit: the exact total, correctly rounded
    b = CalibrationSketch([0], [0.2], sample_weight=[8e307])
    assert (b + b).total_weight == 1.6e308


def test_weights_are_kept_as_given_across_batches():
    # a batch whose float sum overflows must not be rescaled on its own:
    # merged with other batches, its rows would weigh the wrong amount
    big = CalibrationSketch([0, 1], [0.2, 0.7], sample_weight=[1e300, 3e300])
    small = CalibrationSketch([1], [0.4], sample_weight=[2.0])
    G = (big + small).grouped_statistic()
    assert G.weights.tolist() == [1e300, 2.0, 3e300]
    assert G.positives.tolist() == [0.0, 2.0, 3e300]


def test_cdl_refuses_non_finite_weights_instead_of_looping(tmp_path):
    # the decision-hull sweep never passed a NaN rate (inf / inf): it looped
    code = (
        "import numpy as np\n"
        "from skcal._grouped import GroupedStatistic\n"
        "from skcal.metrics._cdl import cdl_core\n"
        "G = GroupedStatistic(np.array([0.2, 0.7]), np.array([np.inf, 1.0]),"
        " np.array([np.inf, 1.0]))\n"
        "try:\n"
        "    cdl_core(G)\n"
        "except ValueError as e:\n"
        "    assert 'finite' in str(e), e\n"
        "    print('refused')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,  # outside the source tree, which would shadow the package
    )
    assert out.stdout.strip() == "refused", out.stderr


# --- 12: threads ---------------------------------------------------------------------


def test_concurrent_updates_merges_and_bytes_keep_every_row():
    rng = np.random.default_rng(3)
    batches = []
    for _ in range(8 * 40):
        n = int(rng.integers(1, 6))
        p = np.round(rng.random(n), 2)
        y = (rng.random(n) < p).astype(int)
        w = rng.integers(1, 4, n).astype(float) if rng.random() < 0.5 else None
        batches.append((y, p, w))
    shared = CalibrationSketch()
    blobs, merged = [], []

    def work(k):
        for y, p, w in batches[k::8]:
            shared.update(y, p, w)
            if k == 0:
                blobs.append(shared.to_bytes())
            if k == 1:
                merged.append(shared.merge(CalibrationSketch([1], [0.5])).n_samples)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    serial = CalibrationSketch()
    for y, p, w in batches:
        serial.update(y, p, w)
    assert shared.n_samples == serial.n_samples == sum(len(b[1]) for b in batches)
    assert shared.to_bytes() == serial.to_bytes()
    for blob in blobs:  # every snapshot is an intact sketch
        _check_invariants(CalibrationSketch.from_bytes(blob))
    assert merged == sorted(merged)


# --- 13: compact exact sums -------------------------------------------------------


def _exact_sum(x):
    return sum((Fraction(float(v)) for v in x), Fraction(0))


def test_compact_sums_regroup_is_exact_and_canonical():
    from skcal._grouped import CompactSums

    rng = np.random.default_rng(11)
    pools = [
        np.array([0.1, 0.2, 0.3, 1e-300, 5e-324, 1.0, 2.0, 3.0, 2.0**52, 1e300]),
        rng.integers(0, 5, 20).astype(float),
        rng.exponential(size=20),
    ]
    for _ in range(300):
        pool = pools[rng.integers(len(pools))]
        n, k = int(rng.integers(0, 12)), int(rng.integers(1, 5))
        x = rng.choice(pool, n) * (rng.random(n) < 0.8)
        index = rng.integers(0, k, n)
        # split into 1-3 parts, each already regrouped (as sketches are)
        cuts = np.sort(rng.integers(0, n + 1, rng.integers(0, 3)))
        parts, part_index = [], []
        for a, b in zip([0, *cuts], [*cuts, n]):
            xs, ix = x[a:b], index[a:b]
            sub_k = k
            single = CompactSums.regroup(
                [CompactSums(xs)], ix, sub_k
            )
            parts.append(single)
            part_index.append(np.arange(sub_k))
        got = CompactSums.regroup(parts, np.concatenate(part_index), k)
        direct = CompactSums.from_exact(ExactSums.of_doubles(x, index, k))
        assert got.same_as(direct)
        for g in range(k):
            exact = _exact_sum(x[index == g])
            assert got.doubles[g] == float(exact)  # correctly rounded
            in_big = g in set(got.rows.tolist())
            assert in_big == (Fraction(float(exact)) != exact)


@pytest.mark.parametrize("weighted", [False, True])
def test_exact_sketch_of_continuous_predictions_is_at_most_40_bytes_per_row(weighted):
    rng = np.random.default_rng(0)
    n = 20_000
    p = rng.random(n)
    y = (rng.random(n) < p).astype(int)
    w = rng.exponential(size=n) if weighted else None
    tracemalloc.start()
    sketch = CalibrationSketch(y, p, w)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak / n <= 40  # extra memory of building it, validation included
    assert len(sketch.to_bytes()) / n <= 40
    state = sketch._state
    held = state.values.nbytes + state.neg.nbytes() + state.pos.nbytes()
    assert held / n <= 40


def _v1_blob(sketch):
    """The version-1 bytes of an exact sketch (every sum in limbs)."""
    from skcal.sketch._format import _encode_sums

    state = sketch._state
    body = bytearray(sketch.to_bytes()[:-4])
    head = _HEADER.unpack_from(body)
    parts = [_HEADER.pack(head[0], 1, *head[2:])]
    parts.append(np.ascontiguousarray(state.values, "<f8").tobytes())
    parts += _encode_sums(state.neg.to_exact()) + _encode_sums(state.pos.to_exact())
    return _with_crc(b"".join(parts))


def test_version_1_bytes_still_load_to_the_same_sketch():
    rng = np.random.default_rng(2)
    for _ in range(20):
        n = int(rng.integers(1, 40))
        p = np.round(rng.random(n), 1)
        y = (rng.random(n) < p).astype(int)
        w = rng.exponential(size=n) if rng.random() < 0.7 else None
        s = CalibrationSketch(y, p, w)
        assert CalibrationSketch.from_bytes(_v1_blob(s)).to_bytes() == s.to_bytes()


# --- 15: every invariant checked on load; fuzzing ----------------------------------


def _check_invariants(s):
    """What every loaded sketch must satisfy (fails the test otherwise)."""
    assert s.n_samples >= 0
    if s.n_samples == 0:
        assert s.n_values == 0
        with pytest.raises(ValueError):
            s.grouped_statistic()
        return
    G = s.grouped_statistic()
    v, W, P = G.values, G.weights, G.positives
    assert np.all(np.isfinite(v)) and np.all((v >= 0) & (v <= 1))
    assert np.all(np.diff(v) > 0)
    assert np.all(np.isfinite(W)) and np.all(P >= 0) and np.all(P <= W)
    assert np.isfinite(G.total) and G.total > 0
    assert len(G) <= s.n_samples
    c = s._common_weight
    if s.exact and c is not None and not np.isnan(c):
        counts = np.rint(W / c)
        assert np.all(counts * c == W) and counts.sum() == s.n_samples
    blob = s.to_bytes()
    assert CalibrationSketch.from_bytes(blob).to_bytes() == blob
    for measure in (smooth_calibration_error, calibration_decision_loss):
        value = measure(s)
        assert 0.0 <= value <= 1.0 + 1e-12
    if not s.exact:
        assert all(np.isfinite(b) and b >= 0 for b in s.error_bounds().values())


def _sources():
    rng = np.random.default_rng(4)
    p = np.round(rng.random(30), 1)
    y = (rng.random(30) < p).astype(int)
    w = rng.exponential(size=30)
    return [
        CalibrationSketch(y, p),
        CalibrationSketch(y, p, w),
        CalibrationSketch(y, rng.random(30), w, max_size=6),
        CalibrationSketch(y, p, max_size=4),
        CalibrationSketch(),
        CalibrationSketch([1], [0.3], [0.1]),
    ]


def _try_load(blob):
    try:
        s = CalibrationSketch.from_bytes(blob)
    except ValueError as exc:
        assert "CalibrationSketch" in str(exc) or "blob" in str(exc)
        return None
    _check_invariants(s)
    return s


def test_from_bytes_of_random_bit_flips_with_a_valid_crc():
    rng = np.random.default_rng(8)
    for source in _sources():
        body = bytearray(source.to_bytes()[:-4])
        for _ in range(60):
            mutated = bytearray(body)
            for _ in range(int(rng.integers(1, 4))):
                i = int(rng.integers(8, len(mutated)))
                mutated[i] ^= 1 << int(rng.integers(8))
            _try_load(_with_crc(mutated))


def test_from_bytes_of_structured_edits_with_a_valid_crc():
    specials = [np.nan, np.inf, -np.inf, -1.0, 2.0, 0.0, -0.0, 1e308, 5e-324, 0.5]
    for source in _sources():
        blob = source.to_bytes()
        body = blob[:-4]
        for field, values in {
            "version": [0, 1, 3, 65535],
            "flags": [0, 1, 2, 3, 4, 5, 6, 8],
            "max_size": [-2, -1, 0, 1, 2, 3, 1 << 62],
            "level": [-1, 0, 1, 62, 63],
            "n_rows": [0, 1, 2, 29, 31, -1, 1 << 62],
            "common": [0.5, 2.0, 1.0, 0.0, -1.0, np.nan, np.inf],
            "size": [0, 1, 5, 6, 7, -1, 1 << 40],
        }.items():
            for value in values:
                _try_load(_edit_header(blob, **{field: value}))
        # every float64 slot after the header set to a special value
        for offset in range(_HEADER.size, len(body) - 7, 8):
            for value in specials:
                mutated = bytearray(body)
                mutated[offset : offset + 8] = struct.pack("<d", value)
                _try_load(_with_crc(mutated))
        for cut in (1, 8, 9, len(body) - _HEADER.size):
            _try_load(_with_crc(body[:-cut]))
        _try_load(_with_crc(body + b"\0" * 8))


def test_common_row_weight_must_agree_with_the_sums():
    rng = np.random.default_rng(1)
    p = np.round(rng.random(400), 1)
    y = (rng.random(400) < np.clip(p + 0.1, 0, 1)).astype(int)
    blob = CalibrationSketch(y, p).to_bytes()
    tester = CalibrationTester(random_state=0)
    assert not tester.decide(CalibrationSketch.from_bytes(blob)).calibrated
    # a common row weight of 1/4: four times the rows per value, a tighter
    # null; the verdict could flip, so the load refuses it
    for common in (0.25, 4.0, 0.5):
        with pytest.raises(ValueError, match="common row weight"):
            CalibrationSketch.from_bytes(_edit_header(blob, common=common))
    with pytest.raises(ValueError, match="inconsistent"):
        CalibrationSketch.from_bytes(_edit_header(blob, n_rows=401))


# --- 9: sketch, Dask and in memory agree ---------------------------------------------

_MEASURES = [
    "smooth_calibration_error",
    "cutoff_calibration_error",
    "soft_binned_cdl",
    "calibration_decision_loss",
    "calibration_fixed_decision_loss",
    "maximum_swap_regret",
    "lower_distance_to_calibration",
    "binned_ece",
]


def test_every_measure_of_a_sketch_equals_the_in_memory_value():
    """Bit for bit for integer weights, except binned_ece and soft_binned_cdl:
    their in-memory paths sum the rows of a bin in one pass, the sketch path
    the distinct values, so they agree to within the float rounding of the
    bin sums (documented bound 4 n 2**-53 with n the rows; a few ulps)."""
    rng = np.random.default_rng(6)
    for trial in range(40):
        n = int(rng.integers(1, 60))
        p = np.round(rng.random(n), int(rng.integers(1, 4)))
        p[rng.random(n) < 0.1] = rng.choice([0.0, 1.0])
        y = (rng.random(n) < p).astype(int)
        w = rng.integers(0, 4, n).astype(float) if trial % 2 else None
        if w is not None and w.sum() == 0:
            w[0] = 1.0
        pieces = np.array_split(rng.permutation(n), int(rng.integers(1, 4)))
        sketch = sum(
            (
                CalibrationSketch(y[r], p[r], None if w is None else w[r])
                for r in pieces
                if r.shape[0] and (w is None or w[r].sum() > 0)
            ),
            start=CalibrationSketch(),
        )
        if sketch.n_samples < n:  # a zero-weight piece was left out: add it
            sketch = CalibrationSketch(y, p, w)
        for name in _MEASURES:
            measure = getattr(skcal, name)
            expected, got = measure(y, p, sample_weight=w), measure(sketch)
            if name in ("binned_ece", "soft_binned_cdl"):
                assert abs(got - expected) <= 4 * n * 2.0**-53
            else:
                assert got == expected, (name, got, expected)


def test_dask_partitions_with_mixed_label_dtypes():
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    dask = pytest.importorskip("dask")
    p = np.array([0.2, 0.7, 0.4, 0.9, 0.3])
    pairs = [
        (np.array([0, 1]), np.array([0.0, 1.0, 1.0])),
        (np.array([0, 1]), np.array([False, True, True])),
        (np.array([1.0, 0.0]), np.array([True, False, True])),
    ]
    with dask.config.set(scheduler="synchronous"):
        for y1, y2 in pairs:
            y_dd = dd.concat(
                [dd.from_pandas(pd.Series(y1), npartitions=1),
                 dd.from_pandas(pd.Series(y2), npartitions=1)]
            )
            p_dd = dd.concat(
                [dd.from_pandas(pd.Series(p[:2]), npartitions=1),
                 dd.from_pandas(pd.Series(p[2:]), npartitions=1)]
            )
            y_all = np.concatenate([y1, y2])
            for name in ("smooth_calibration_error", "calibration_decision_loss"):
                measure = getattr(skcal, name)
                assert measure(y_dd, p_dd) == measure(y_all, p)
        # bool labels in every partition: as in memory
        y_bool = np.array([False, True, True, False, True])
        y_dd = dd.from_pandas(pd.Series(y_bool), npartitions=2)
        p_dd = dd.from_pandas(pd.Series(p), npartitions=2)
        assert smooth_calibration_error(y_dd, p_dd) == smooth_calibration_error(y_bool, p)


def test_statistic_of_a_compacted_and_empty_and_one_row_sketch():
    one = CalibrationSketch([1], [1.0], sample_weight=[5e-324])
    _check_invariants(one)
    assert one.grouped_statistic().weights.tolist() == [5e-324]
    _check_invariants(CalibrationSketch())
    assert GroupedStatistic  # the statistic type every sketch returns


def test_dask_measures_equal_the_sketch_measures_bit_for_bit():
    da = pytest.importorskip("dask.array")
    dask = pytest.importorskip("dask")
    rng = np.random.default_rng(9)
    n = 600
    p = rng.random(n)
    p[:200] = np.round(p[:200], 2)
    y = (rng.random(n) < p).astype(int)
    w = rng.exponential(size=n)
    sketch = CalibrationSketch(y, p, w)
    with dask.config.set(scheduler="synchronous"):
        args = [da.from_array(a, chunks=97) for a in (y, p, w)]
        for name in _MEASURES:
            measure = getattr(skcal, name)
            assert measure(*args[:2], sample_weight=args[2]) == measure(sketch), name


def test_dask_sketch_auto_budget_compacts_with_a_warning(monkeypatch):
    da = pytest.importorskip("dask.array")
    dask = pytest.importorskip("dask")
    import skcal.sketch._dask

    rng = np.random.default_rng(10)
    p = rng.random(400)
    y = (rng.random(400) < p).astype(int)
    monkeypatch.setattr(skcal.sketch._dask, "AUTO_MAX_SIZE", 64)
    with dask.config.set(scheduler="synchronous"):
        dy, dp = da.from_array(y, chunks=100), da.from_array(p, chunks=100)
        with pytest.warns(UserWarning, match="max_size=None"):
            small = skcal.dask_sketch(dy, dp)
        assert not small.exact and small.n_values <= 64
        exact = skcal.dask_sketch(dy, dp, max_size=None)
        assert exact.exact
        assert exact.to_bytes() == CalibrationSketch(y, p).to_bytes()
        with pytest.raises(ValueError, match="max_size"):
            skcal.dask_sketch(dy, dp, max_size="big")


def _limbs_value(sums, j):
    """The exact rational held by group ``j`` of ``ExactSums`` ``sums``."""
    return sum(Fraction(int(limb)) * Fraction(2) ** (32 * (sums.offset + c))
               for c, limb in enumerate(sums.limbs[j]))


def test_exact_sums_of_signed_runs_equal_the_sums_by_index():
    # the exact sketch's build sums each value's rows per class straight from
    # the runs (ExactSums.of_signed_runs): the sums of_doubles gives with the
    # index 2 j + signbit over the magnitudes, limb for limb, and the exact
    # rational sums; weights of 0 and -0.0, subnormal, huge and mixed scales
    rng = np.random.default_rng(21)
    specials = np.array([0.0, -0.0, 5e-324, -5e-324, 1e300, -1e300, 2.0**-1000, 1.0])
    for i in range(60):
        g = int(rng.integers(1, 40))
        counts = rng.integers(1, 6, g).astype(np.int64)
        n = int(counts.sum())
        signed = np.exp(rng.uniform(-30, 30, n)) * rng.choice([-1.0, 1.0], n)
        if i % 3 == 0:
            signed[rng.integers(0, n, max(1, n // 4))] = rng.choice(specials, max(1, n // 4))
        got = ExactSums.of_signed_runs(counts, signed)
        index = np.repeat(np.arange(0, 2 * g, 2, dtype=np.int64), counts) + np.signbit(signed)
        want = ExactSums.of_doubles(np.abs(signed), index, 2 * g)
        assert got.offset == want.offset
        np.testing.assert_array_equal(got.limbs, want.limbs)
        exact = [Fraction(0)] * (2 * g)
        for j, x in zip(index, signed):
            exact[j] += Fraction(abs(float(x)))
        for j in range(2 * g):
            assert _limbs_value(got, j) == exact[j]
    with pytest.raises(ValueError, match="finite"):
        ExactSums.of_signed_runs(np.array([2]), np.array([1.0, np.inf]))
    with pytest.raises(ValueError, match="sum to"):
        ExactSums.of_signed_runs(np.array([3]), np.array([1.0, 2.0]))
    assert ExactSums.of_signed_runs(np.array([2]), np.array([0.0, -0.0])).limbs.shape == (2, 0)


def test_exact_sums_of_long_runs_take_the_chunked_index(monkeypatch):
    # a value of more rows than one kernel call may deposit (_CHUNK, here
    # made 3) goes through of_doubles by index, which deposits in chunks:
    # the same limbs
    import skcal._exact_sums as exact_sums

    monkeypatch.setattr(exact_sums, "_CHUNK", 3)
    rng = np.random.default_rng(22)
    counts = np.array([1, 5, 2, 7], dtype=np.int64)
    signed = rng.exponential(size=int(counts.sum())) * rng.choice([-1.0, 1.0], counts.sum())
    got = ExactSums.of_signed_runs(counts, signed)
    index = np.repeat(np.arange(0, 8, 2, dtype=np.int64), counts) + np.signbit(signed)
    exact = [Fraction(0)] * 8
    for j, x in zip(index, signed):
        exact[j] += Fraction(abs(float(x)))
    for j in range(8):
        assert _limbs_value(got, j) == exact[j]
