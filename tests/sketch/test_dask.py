"""Dask input: one sketch per partition, merged in a tree, on a real LocalCluster.

Every comparison is with the in-memory path on the same (concatenated)
data: the grouped statistic bit for bit, every binary measure exactly.
"""

import doctest
import os
import subprocess
import sys

import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
try:  # dataframes need pandas, which the dask extra installs (the test extra does not)
    import dask.dataframe as dd
    import pandas as pd
except ImportError:
    dd = pd = None
needs_dataframe = pytest.mark.skipif(dd is None, reason="needs dask.dataframe and pandas")

import skcal  # noqa: E402
from skcal import CalibrationTester  # noqa: E402
from skcal import metrics as skcal_metrics  # noqa: E402
from skcal._grouped import GroupedStatistic, binary_statistic  # noqa: E402
from skcal.measures import MEASURE_CLASSES  # noqa: E402
from skcal.sketch import CalibrationSketch, dask_sketch  # noqa: E402
from skcal.sketch._dask import _plan  # noqa: E402

from cases import random_cases  # noqa: E402

BINARY_MEASURES = [cls for cls in MEASURE_CLASSES if cls._proba == "binary"]


@pytest.fixture(scope="module")
def client():
    """Two worker processes, one thread each: partitions really travel."""
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


@pytest.fixture
def no_collection(monkeypatch):
    """Turning a Dask collection into one in-memory array fails the test."""

    def collected(self, *args, **kwargs):
        raise AssertionError(f"the rows of a {type(self).__name__} were collected")

    classes = [da.Array]
    if dd is not None:
        classes.append(type(dd.from_pandas(pd.Series([1.0]), npartitions=1)))
    for cls in classes:
        owner = next(c for c in cls.__mro__ if "__array__" in vars(c))
        monkeypatch.setattr(owner, "__array__", collected)


def _cuts(rng, n):
    """Uneven chunk sizes summing to ``n``, often with one-row chunks."""
    if n == 1:
        return (1,)
    k = int(rng.integers(1, min(n, 6) + 1))
    inner = np.sort(rng.choice(np.arange(1, n), size=k - 1, replace=False))
    if n > 2 and rng.random() < 0.5:  # force a one-row chunk
        inner = np.unique(np.concatenate([inner, [1, 2]]))
    edges = np.concatenate([[0], inner, [n]])
    return tuple(int(c) for c in np.diff(edges))


def _as_dask_arrays(rng, y, p, w):
    """Dask arrays with chunks that differ between the three inputs."""
    n = y.shape[0]
    return (
        da.from_array(y, chunks=(_cuts(rng, n),)),
        da.from_array(p, chunks=(_cuts(rng, n),)),
        None if w is None else da.from_array(w, chunks=(_cuts(rng, n),)),
    )


def _as_frame_columns(rng, y, p, w):
    """Columns of one dask dataframe, cut into uneven partitions."""
    n = y.shape[0]
    frame = pd.DataFrame({"y": y, "p": p, "w": np.ones(n) if w is None else w})
    ddf = dd.from_pandas(frame, npartitions=1, sort=True)
    if n > 1:
        divisions = np.concatenate([[0], np.cumsum(_cuts(rng, n))[:-1], [n - 1]])
        ddf = ddf.repartition(divisions=[int(d) for d in divisions])
    return ddf["y"], ddf["p"], None if w is None else ddf["w"]


def _positive_groups(g):
    keep = g.weights > 0
    return GroupedStatistic(g.values[keep], g.weights[keep], g.positives[keep])


def _assert_same_statistic(a, b):
    """Bit for bit, on the groups of positive weight (every measure ignores
    the others, and a partition of weight zero sends no sketch)."""
    a, b = _positive_groups(a), _positive_groups(b)
    for name in ("values", "weights", "positives"):
        x, z = getattr(a, name), getattr(b, name)
        # bit for bit, dtype and shape included (assert_array_equal's
        # strict= needs numpy 1.24)
        assert x.dtype == z.dtype and x.shape == z.shape, name
        assert x.tobytes() == z.tobytes(), name
    assert a.total == b.total


def _expected(y, p, w=None, **options):
    """The in-memory statistic: of one sketch of all rows (exact sums, the
    sketch's own guarantee), which for integer weights is also bit for bit
    the one every in-memory measure builds."""
    statistic = CalibrationSketch(y, p, w, **options).grouped_statistic()
    if w is None or np.all(w == np.round(w)):
        _assert_same_statistic(statistic, binary_statistic(y, p, w, **options))
    return statistic


CASES = random_cases(1101, 12, max_n=80)


def _sketches(inputs, split_every):
    """The sketches of several (y, p, w) Dask inputs, computed in one go."""
    plans = [
        _plan(*args, max_size=None, pos_label=None, multiclass="top-label", labels=None,
              split_every=k)
        for args, k in zip(inputs, split_every)
    ]
    roots = dask.compute(*(root for root, _ in plans))
    return [finish(root) for (_, finish), root in zip(plans, roots)]


def test_statistic_of_dask_input_is_the_in_memory_one(client):
    # every case three ways: Dask arrays chunked differently (with weights and
    # without) and columns of a dask dataframe, in uneven partitions, merged
    # 2 to 5 at a time
    rng = np.random.default_rng(0)
    inputs, expected = [], []
    for y, p, w in CASES:
        inputs += [_as_dask_arrays(rng, y, p, w), _as_dask_arrays(rng, y, p, None)]
        expected += [_expected(y, p, w), _expected(y, p)]
        if dd is not None:
            inputs.append(_as_frame_columns(rng, y, p, w))
            expected.append(expected[-2])
    ways = 3 if dd is not None else 2
    sketches = _sketches(inputs, rng.integers(2, 6, len(inputs)).tolist())
    for i, (sketch, stat) in enumerate(zip(sketches, expected)):
        y, p, w = CASES[i // ways]
        try:
            assert sketch.exact
            _assert_same_statistic(sketch.grouped_statistic(), stat)
        except AssertionError as error:
            error.add_note(f"case {i // ways} way {i % ways}: y={y!r}, p={p!r}, w={w!r}")
            raise


@needs_dataframe
def test_mixed_inputs_are_cut_alike(client):
    # a dataframe column with a Dask array and an in-memory array: all are
    # cut like y_prob, whatever their own partitions
    rng = np.random.default_rng(3)
    n = 500
    p = np.round(rng.random(n), 1)
    y = (rng.random(n) < p).astype(np.int64)
    w = rng.integers(0, 4, n).astype(float)
    w[0] = 1.0
    dy = dd.from_pandas(pd.Series(y), npartitions=3)
    dp = da.from_array(p, chunks=((1, 199, 300),))
    got = dask_sketch(dy, dp, w).grouped_statistic()
    _assert_same_statistic(got, binary_statistic(y, p, w))


def _data(seed=0, n=2000):
    rng = np.random.default_rng(seed)
    p = np.round(rng.beta(2, 3, n), 3)
    y = (rng.random(n) < p**1.2).astype(np.int64)
    w = rng.integers(0, 5, n).astype(float)
    w[0] = 1.0
    return y, p, w


@pytest.mark.parametrize("cls", BINARY_MEASURES, ids=lambda c: c.__name__)
def test_every_binary_measure_takes_dask_input(client, no_collection, cls):
    y, p, w = _data()
    rng = np.random.default_rng(1)
    measure = cls()
    # SCDL and binned ECE sum rows in one pass in memory and groups on the
    # sketch: the same sums in another order, equal up to the last bits
    one_pass = cls.__name__ in ("SoftBinnedCDL", "BinnedECE")

    def same(value):
        return pytest.approx(value, rel=1e-13, abs=1e-16) if one_pass else value

    expected = measure(y, p, w)
    assert measure(*_as_dask_arrays(rng, y, p, w)) == same(expected)
    if dd is not None:
        assert measure(*_as_frame_columns(rng, y, p, w)) == same(expected)
    assert measure(*_as_dask_arrays(rng, y, p, None)) == same(measure(y, p))


def test_functions_with_options_take_dask_input(client, no_collection):
    y, p, w = _data(1, 800)
    dy, dp, dw = _as_dask_arrays(np.random.default_rng(2), y, p, w)
    assert skcal_metrics.maximum_swap_regret(dy, dp) == skcal_metrics.maximum_swap_regret(
        y, p
    )
    value, details = skcal_metrics.cutoff_calibration_error(
        dy, dp, sample_weight=dw, return_details=True
    )
    value_np, details_np = skcal_metrics.cutoff_calibration_error(
        y, p, sample_weight=w, return_details=True
    )
    assert value == value_np
    assert details.keys() == details_np.keys()
    for key in details:
        np.testing.assert_array_equal(details[key], details_np[key])


def test_positive_label_and_columns_from_all_partitions(client):
    rng = np.random.default_rng(5)
    n = 300
    # string labels; the first partition holds only "no"
    p1 = np.round(rng.random(n), 2)
    y = np.where(rng.random(n) < p1, "yes", "no")
    y[:50] = "no"
    P2 = np.column_stack([1 - p1, p1])
    chunks = ((50, 100, 150),)
    dy = da.from_array(y.astype(object), chunks=chunks)
    for pos_label in ("yes", "no"):
        expected = binary_statistic(y, P2, pos_label=pos_label)
        got = dask_sketch(
            dy, da.from_array(P2, chunks=(chunks[0], 1)), pos_label=pos_label
        ).grouped_statistic()
        _assert_same_statistic(got, expected)
        got = dask_sketch(dy, da.from_array(p1, chunks=chunks), pos_label=pos_label)
        _assert_same_statistic(
            got.grouped_statistic(), binary_statistic(y, p1, pos_label=pos_label)
        )
    # top-label with three classes, one partition missing two of them
    P3 = rng.dirichlet([1, 2, 3], n)
    y3 = np.array(["a", "b", "c"])[rng.integers(0, 3, n)]
    y3[:50] = "c"
    got = dask_sketch(
        da.from_array(y3, chunks=chunks), da.from_array(P3, chunks=(chunks[0], 2))
    ).grouped_statistic()
    _assert_same_statistic(got, binary_statistic(y3, P3))
    if dd is None:
        return
    frame = pd.DataFrame(P3, columns=["pa", "pb", "pc"]).assign(y=y3)
    ddf = dd.from_pandas(frame, npartitions=4, sort=True)
    got = dask_sketch(ddf["y"], ddf[["pa", "pb", "pc"]]).grouped_statistic()
    _assert_same_statistic(got, binary_statistic(y3, P3))


def test_compacted_sketch_is_the_in_memory_one_within_its_bounds(client):
    # the compacted state depends on the data and max_size only, not on the
    # partitions: the Dask sketch is the in-memory sketch bit for bit, and its
    # measures are within the reported bounds of the in-memory values
    rng = np.random.default_rng(6)
    n = 3000
    p = rng.random(n) ** 2
    p[:400] = np.round(p[:400], 2)  # ties across cell edges too
    y = (rng.random(n) < p**1.3).astype(np.int64)
    w = rng.integers(0, 4, n).astype(float)
    w[0] = 1.0
    dy, dp, dw = _as_dask_arrays(rng, y, p, w)
    sketch = dask_sketch(dy, dp, dw, max_size=128)
    assert not sketch.exact
    in_memory = CalibrationSketch(y, p, w, max_size=128)
    assert sketch.level == in_memory.level
    _assert_same_statistic(sketch.grouped_statistic(), in_memory.grouped_statistic())
    bounds = sketch.error_bounds()
    assert bounds == in_memory.error_bounds()
    for name in ("smooth_calibration_error", "cutoff_calibration_error",
                 "lower_distance_to_calibration", "calibration_decision_loss"):
        func = getattr(skcal_metrics, name)
        assert abs(func(sketch) - func(y, p, sample_weight=w)) <= bounds[name] + 1e-12, name
    # exact under compaction: SCDL, and binned ECE with 2**k <= 2**level bins
    scdl = skcal_metrics.soft_binned_cdl
    assert abs(scdl(sketch) - scdl(y, p, sample_weight=w)) <= bounds["soft_binned_cdl"] + 1e-15
    for m in 2 ** np.arange(1, sketch.level + 1):
        np.testing.assert_allclose(
            scdl(sketch, m=int(m)), scdl(y, p, sample_weight=w, m=int(m)),
            rtol=1e-12, atol=1e-15,
        )
    for n_bins in (1, 2, 4, 2**sketch.level):
        for norm in ("l1", "l2", "max"):
            np.testing.assert_allclose(
                skcal_metrics.binned_ece(sketch, n_bins=n_bins, norm=norm),
                skcal_metrics.binned_ece(y, p, sample_weight=w, n_bins=n_bins, norm=norm),
                rtol=1e-12, atol=1e-15,
            )


def _in_memory_error(*args, **kwargs):
    with pytest.raises((ValueError, TypeError)) as info:
        binary_statistic(*args, **kwargs)
    return info.type, str(info.value)


def test_errors_name_the_partition(client):
    y, p, _ = _data(2, 100)
    bad_y = y.copy()
    bad_y[73] = 2
    with pytest.raises(ValueError, match=r"partition 7 of 10, rows 70 to 79: y_true"):
        dask_sketch(da.from_array(bad_y, chunks=10), da.from_array(p, chunks=10))
    bad_p = p.copy()
    bad_p[31] = 1.5
    with pytest.raises(ValueError, match=r"partition 3 of 10, rows 30 to 39: .*y_prob"):
        dask_sketch(da.from_array(y, chunks=10), da.from_array(bad_p, chunks=10))
    if dd is not None:
        frame = pd.DataFrame({"y": bad_y, "p": p})
        ddf = dd.from_pandas(frame, npartitions=4, sort=True)
        with pytest.raises(ValueError, match=r"partition \d of 4: y_true"):
            dask_sketch(ddf["y"], ddf["p"])
    neg = np.ones(100)
    neg[55] = -1.0
    with pytest.raises(ValueError, match="partition 5 of 10.*sample_weight has negative"):
        dask_sketch(da.from_array(y, chunks=10), da.from_array(p, chunks=10), neg)


def test_errors_that_need_every_partition_are_the_in_memory_ones(client):
    y, p, _ = _data(3, 40)
    # {0} in one partition and {-1} in another: each alone is fine
    y2 = np.where(np.arange(40) < 20, 0, -1)
    kind, message = _in_memory_error(y2, p)
    with pytest.raises(kind) as info:
        dask_sketch(da.from_array(y2, chunks=20), da.from_array(p, chunks=20))
    assert str(info.value) == message
    # three labels over the partitions, at most two in each, pos_label given
    y3 = np.repeat([0, 1, 2, 1], 10)
    kind, message = _in_memory_error(y3, p, pos_label=1)
    with pytest.raises(kind) as info:
        dask_sketch(da.from_array(y3, chunks=20), da.from_array(p, chunks=20), pos_label=1)
    assert str(info.value) == message
    # lengths
    with pytest.raises(ValueError, match="inconsistent numbers of samples: 40 and 39"):
        dask_sketch(da.from_array(y[:39], chunks=20), da.from_array(p, chunks=20))
    # the total weight, not each partition's, must be positive
    w = np.zeros(40)
    w[25] = 2.0
    got = dask_sketch(da.from_array(y, chunks=10), da.from_array(p, chunks=10), w)
    assert got.grouped_statistic().total == 2.0
    assert skcal.smooth_calibration_error(got) == skcal.smooth_calibration_error(
        y, p, sample_weight=w
    )
    kind, message = _in_memory_error(y, p, np.zeros(40))
    with pytest.raises(kind, match=message):
        dask_sketch(da.from_array(y, chunks=10), da.from_array(p, chunks=10), np.zeros(40))
    # options
    with pytest.raises(ValueError, match="split_every"):
        dask_sketch(da.from_array(y, chunks=10), p, split_every=1)
    with pytest.raises(TypeError, match="needs Dask input"):
        dask_sketch(y, p)


@needs_dataframe
def test_empty_partitions_are_skipped(client):
    y, p, w = _data(4, 60)
    frame = pd.DataFrame({"y": y, "p": p, "w": w})
    ddf = dd.from_pandas(frame, npartitions=3, sort=True)
    ddf = ddf[ddf["p"] >= 0.0]  # unknown partition lengths
    sliced = ddf.partitions[[0, 1, 2]]
    parts = [sliced.partitions[i] for i in range(3)]
    with_empty = dd.concat([parts[0], parts[0][parts[0]["p"] > 2.0], parts[1], parts[2]])
    assert with_empty.npartitions == 4
    got = dask_sketch(with_empty["y"], with_empty["p"], with_empty["w"])
    _assert_same_statistic(got.grouped_statistic(), binary_statistic(y, p, w))
    empty = da.from_array(np.zeros(0), chunks=1)
    kind, message = _in_memory_error(np.zeros(0), np.zeros(0))
    with pytest.raises(kind, match=message):
        dask_sketch(empty, empty)


def test_tester_takes_the_merged_sketch(client):
    y, p, _ = _data(5, 1500)
    sketch = dask_sketch(da.from_array(y, chunks=400), da.from_array(p, chunks=400))
    on_sketch = CalibrationTester(random_state=0).decide(sketch)
    in_memory = CalibrationTester(random_state=0).decide(y, p)
    assert on_sketch.statistic == in_memory.statistic
    assert on_sketch.threshold == in_memory.threshold
    assert on_sketch.calibrated == in_memory.calibrated
    assert on_sketch.n == in_memory.n == 1500


def test_docstring_example_runs(client, monkeypatch):
    # the example imports the name skcal will export
    monkeypatch.setattr(skcal, "dask_sketch", dask_sketch, raising=False)
    import skcal.sketch._dask as module

    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    (test,) = finder.find(module.dask_sketch, "dask_sketch", module=module)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


def test_importing_skcal_does_not_import_dask(tmp_path):
    code = (
        "import sys, skcal\n"
        "skcal.smooth_calibration_error([0, 1, 1], [0.2, 0.6, 0.9])\n"
        "assert not [m for m in sys.modules if m.split('.')[0] in "
        "('dask', 'distributed')], 'dask imported'\n"
    )
    subprocess.run(
        [sys.executable, "-c", code], check=True, cwd=tmp_path, env=dict(os.environ)
    )
