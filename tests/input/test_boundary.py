"""Every public entry point converts its input once, at the boundary (issue 25).

Counting wrappers replace the boundary (``skcal._input``) and every
validator below or beside it (scikit-learn's ``check_array``,
``check_consistent_length``, ``column_or_1d``, and skcal's own checks)
wherever a module refers to them. A call is counted when it starts outside
any other counted call (the checks the boundary makes itself are its own
work), so one public call must count exactly one; the boundary handed a
canonical form it made (passed down) returns it as it is, which is not
counted. The one-pass fast path
(``plain_binary_rows``, whose kernels check every row as they read it) is a
conversion when it accepts the input; when it declines, nothing was
converted and the full check that follows is the one.

Entry points counted: every measure function (binary, and the utility
ones), every measure object's call and ``interval()`` (binary rows, top-label
rows, single utilities and a family), every scorer, ``CalibrationTester``'s
``fit``, ``decide`` and ``from_estimator`` (binary, top-label and utility
measures), every Display's ``from_predictions`` and ``from_estimator``
(``PatchingHistoryDisplay``: exactly the checks of the one recalibrator fit
it makes, which ``tests/recalibration/test_validate_once.py`` counts), the
CLI report (binary and multiclass files, in this process), the sketch's
``update`` and ``dask_sketch`` (a real ``distributed.LocalCluster`` with
in-process workers, so that the workers' calls are counted). A canonical
form passed down (``BinaryInput``, ``MulticlassInput``) must count nothing.

Also: array-likes of other libraries (polars, pyarrow, Array API arrays)
are converted at the boundary and measured as their numpy twins.
"""

import sys
import threading

import numpy as np
import pytest
import sklearn.utils
import sklearn.utils.validation
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_array, check_consistent_length, column_or_1d

import skcal
from skcal import _input
from skcal._input import _canonical, _checks, _multiclass
from skcal.utilities import _engine

_VALIDATORS = {
    "binary_input": _canonical.binary_input,
    "multiclass_input": _multiclass.multiclass_input,
    "check_proba": _engine.check_proba,
    "check_proba_and_labels": _engine.check_proba_and_labels,
    "check_binary_calibration_input": _checks.check_binary_calibration_input,
    "plain_binary_rows": _checks.plain_binary_rows,
    "check_y_true": _checks.check_y_true,
    "check_sample_weight": _checks.check_sample_weight,
    "as_probability_array": _checks.as_probability_array,
    "check_probability_matrix": _checks.check_probability_matrix,
    "check_array": check_array,
    "check_consistent_length": check_consistent_length,
    "column_or_1d": column_or_1d,
}


_CANONICAL = (_canonical.BinaryInput, _multiclass.MulticlassInput)


class _Counter:
    """Top-level validator calls; the depth is per thread (Dask's threads)."""

    def __init__(self):
        self.local = threading.local()
        self.lock = threading.Lock()
        self.calls = []

    def wrap(self, name, func):
        def counted(*args, **kwargs):
            local = self.local
            local.depth = getattr(local, "depth", 0) + 1
            try:
                result = func(*args, **kwargs)
            finally:
                local.depth -= 1
            declined = (name == "plain_binary_rows" and result is None) or (
                # the boundary handed its own canonical form: returned as it is
                name in ("binary_input", "multiclass_input")
                and isinstance(args[0] if args else kwargs.get("y_true"), _CANONICAL)
            )
            if local.depth == 0 and not declined:
                with self.lock:
                    self.calls.append(name)
            return result

        counted.__wrapped__ = func
        return counted


@pytest.fixture
def counter(monkeypatch):
    """Every module attribute that refers to a validator now counts its calls."""
    # every module loaded before patching
    import skcal._interval  # noqa: F401
    import skcal._interval_utility  # noqa: F401
    import skcal._report  # noqa: F401
    import skcal._report_input  # noqa: F401
    import skcal.display  # noqa: F401
    import skcal.measures  # noqa: F401
    import skcal.monitor  # noqa: F401
    import skcal.recalibration  # noqa: F401
    import skcal.scorers  # noqa: F401
    import skcal.sketch  # noqa: F401
    import skcal.sketch._dask  # noqa: F401
    import skcal.tester  # noqa: F401

    counter = _Counter()
    by_id = {id(f): counter.wrap(name, f) for name, f in _VALIDATORS.items()}
    modules = [
        m for name, m in list(sys.modules.items())
        if m is not None and (name == "skcal" or name.startswith("skcal."))
    ] + [sklearn.utils, sklearn.utils.validation]
    for module in modules:
        for attr, value in list(vars(module).items()):
            if id(value) in by_id and callable(value):
                monkeypatch.setattr(module, attr, by_id[id(value)])
    return counter


def _data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p).astype(np.int64)
    w = rng.uniform(0.5, 2.0, size=n)
    return y, p, w


class _Fixed(ClassifierMixin, BaseEstimator):
    """An 'estimator' whose predict_proba returns the given matrix, unchecked."""

    def __init__(self, P, classes):
        self.P, self.classes_ = P, np.asarray(classes)

    def fit(self, X, y):  # pragma: no cover - never called
        return self

    def predict_proba(self, X):
        return self.P


def _binary_functions():
    from skcal._specs import function_of, specs

    return [function_of(s) for s in specs() if s.proba == "binary"]


def _entries():
    """(id, call) for every public entry point on binary input."""
    y, p, w = _data()
    entries = []
    for f in _binary_functions():
        name = f.__name__
        entries += [
            (f"{name}", lambda f=f: f(y, p)),
            (f"{name}-weights", lambda f=f: f(y, p, sample_weight=w)),
            (f"{name}-list", lambda f=f: f(y.tolist(), p.tolist())),
            (f"{name}-details", lambda f=f: f(y, p, return_details=True)),
        ]
    from skcal.measures import MEASURE_CLASSES

    for cls in MEASURE_CLASSES:
        if cls._proba != "binary":
            continue
        entries.append((f"{cls.__name__}()", lambda cls=cls: cls()(y, p, w)))
    P = np.column_stack([1 - p, p])
    for cls in MEASURE_CLASSES:
        if cls._proba != "binary":
            continue
        scorer = cls().scorer()
        entries.append(
            (f"scorer-{cls.__name__}", lambda s=scorer: s(_Fixed(P, [0, 1]), None, y))
        )
    entries.append(("CalibrationSketch.update", lambda: skcal.CalibrationSketch().update(y, p, w)))
    return entries


def _multiclass_data(n=60, k=3, seed=4):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(k), size=n)
    y = np.array([rng.choice(k, p=row) for row in P])
    y[:k] = np.arange(k)  # every class occurs
    w = rng.uniform(0.5, 2.0, size=n)
    return y, P, w


class _Model(ClassifierMixin, BaseEstimator):
    """A fitted classifier whose predict_proba is a fixed function of X."""

    def __init__(self, k=2):
        self.k = k

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        self.n_features_in_ = np.shape(X)[1]
        return self

    def predict_proba(self, X):
        z = np.asarray(X, dtype=np.float64)[:, : self.k]
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)


def _fitted(k):
    y, P, _ = _multiclass_data(60, k, seed=5)
    X = np.log(np.clip(P, 1e-12, None))
    return _Model(k).fit(X, y), X, y


def _more_entries():
    """(id, call) for the other public entry points, binary and multiclass."""
    y, p, w = _data()
    ym, Pm, wm = _multiclass_data()
    from skcal.measures import MEASURE_CLASSES

    entries = []
    # the multiclass functions and their measure object
    for utility in ("top-class", "comb", skcal.TopK(2)):
        entries += [
            (f"uce-{utility}", lambda u=utility: skcal.utility_calibration_error(ym, Pm, u)),
            (f"uce-{utility}-weights", lambda u=utility: skcal.utility_calibration_error(
                ym, Pm, u, sample_weight=wm, return_details=True)),
            (f"UtilityCalibrationError({utility})", lambda u=utility:
             skcal.UtilityCalibrationError(u)(ym, Pm, wm)),
        ]
    entries.append(("uce-ecdf", lambda: skcal.utility_calibration_ecdf(
        ym, Pm, "linear", n_utilities=20, random_state=0, sample_weight=wm)))
    entries.append(("scorer-UtilityCalibrationError", lambda: skcal.UtilityCalibrationError()
                    .scorer()(_Fixed(Pm, [0, 1, 2]), None, ym)))
    # interval() of every measure object (binary rows, and multiclass top-label)
    for cls in MEASURE_CLASSES:
        if cls._proba == "binary":
            entries.append((f"{cls.__name__}.interval", lambda cls=cls: cls().interval(
                y, p, sample_weight=w, n_resamples=20, random_state=0)))
            entries.append((f"{cls.__name__}.interval-top-label", lambda cls=cls: cls()
                            .interval(ym, Pm, n_resamples=20, random_state=0)))
    for utility in ("top-class", "class-wise"):
        entries.append((f"UtilityCalibrationError({utility}).interval", lambda u=utility:
                        skcal.UtilityCalibrationError(u).interval(
                            ym, Pm, sample_weight=wm, n_resamples=20, random_state=0)))
    # the tester, binary and multiclass, fit / decide / from_estimator
    for measure in ("smce", "cutoff", "utility"):
        tester = lambda m=measure: skcal.CalibrationTester(  # noqa: E731
            measure=m, n_resamples=19, resampling_risk=None, random_state=0)
        if measure != "utility":
            entries.append((f"tester-{measure}-fit", lambda t=tester: t().fit(y, p, w)))
            entries.append((f"tester-{measure}-decide", lambda t=tester: t().decide(y, p)))
        entries.append((f"tester-{measure}-fit-multiclass", lambda t=tester: t().fit(ym, Pm)))
        entries.append((f"tester-{measure}-decide-multiclass",
                        lambda t=tester: t().decide(ym, Pm, wm)))
        entries.append((f"tester-{measure}-from_estimator", lambda m=measure:
                        skcal.CalibrationTester.from_estimator(
                            *_fitted(3), measure=m, n_resamples=19, resampling_risk=None,
                            random_state=0)))
    return entries


def _display_entries():
    """(id, call) of every Display's from_predictions and from_estimator."""
    y, p, w = _data()
    ym, Pm, wm = _multiclass_data()
    D = skcal
    model2, X2, y2 = _fitted(2)
    model3, X3, y3 = _fitted(3)
    return [
        ("ReliabilityDisplay.from_predictions", lambda: D.ReliabilityDisplay.from_predictions(
            y, p, sample_weight=w, n_resamples=20, random_state=0)),
        ("ReliabilityDisplay.from_predictions-top-label", lambda: D.ReliabilityDisplay
         .from_predictions(ym, Pm, n_resamples=20, random_state=0)),
        ("ReliabilityDisplay.from_estimator", lambda: D.ReliabilityDisplay.from_estimator(
            model2, X2, y2, n_resamples=20, random_state=0)),
        ("ClassWiseReliabilityDisplay.from_predictions", lambda: D.ClassWiseReliabilityDisplay
         .from_predictions(ym, Pm, sample_weight=wm, n_resamples=20, random_state=0)),
        ("ClassWiseReliabilityDisplay.from_estimator", lambda: D.ClassWiseReliabilityDisplay
         .from_estimator(model3, X3, y3, n_resamples=20, random_state=0)),
        ("UtilityCalibrationDisplay.from_predictions", lambda: D.UtilityCalibrationDisplay
         .from_predictions(ym, Pm, n_utilities=20, random_state=0, sample_weight=wm)),
        ("UtilityCalibrationDisplay.from_estimator", lambda: D.UtilityCalibrationDisplay
         .from_estimator(model3, X3, y3, n_utilities=20, random_state=0)),
        ("CalibrationTestDisplay.from_predictions", lambda: D.CalibrationTestDisplay
         .from_predictions(y, p, sample_weight=w, tester=D.CalibrationTester(
             n_resamples=19, resampling_risk=None, random_state=0))),
        ("CalibrationTestDisplay.from_estimator", lambda: D.CalibrationTestDisplay
         .from_estimator(model3, X3, y3, tester=D.CalibrationTester(
             n_resamples=19, resampling_risk=None, random_state=0))),
        ("CalibrationMonitorDisplay.from_predictions", lambda: D.CalibrationMonitorDisplay
         .from_predictions(y, p, sample_weight=w)),
        ("CalibrationMonitorDisplay.from_estimator", lambda: D.CalibrationMonitorDisplay
         .from_estimator(model2, X2, y2)),
        ("PatchingHistoryDisplay.from_predictions", lambda: D.PatchingHistoryDisplay
         .from_predictions(ym, Pm, sample_weight=wm)),
        ("PatchingHistoryDisplay.from_estimator", lambda: D.PatchingHistoryDisplay
         .from_estimator(model3, X3, y3)),
    ]


_ENTRIES = _entries() + _more_entries()


@pytest.mark.parametrize("call", [c for _, c in _ENTRIES], ids=[i for i, _ in _ENTRIES])
def test_one_conversion_per_public_call(counter, call):
    call()
    assert len(counter.calls) == 1, counter.calls


@pytest.mark.parametrize("index", range(13))
def test_one_conversion_per_display(counter, index):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    name, call = _display_entries()[index]
    try:
        call()
    finally:
        plt.close("all")
    if name.startswith("PatchingHistoryDisplay"):
        # the display fits the recalibrator and adds nothing: its checks are
        # those of one recalibrator fit (the recalibration package's boundary,
        # each kind of check once: tests/recalibration/test_validate_once.py)
        shown = list(counter.calls)
        counter.calls.clear()
        ym, Pm, wm = _multiclass_data() if name.endswith("predictions") else (None,) * 3
        if ym is None:
            model, X, ym = _fitted(3)
            Pm, ym = model.predict_proba(X), np.searchsorted(model.classes_, ym)
        skcal.UtilityPatchingRecalibrator().fit(Pm, ym, sample_weight=wm)
        assert shown == counter.calls, (name, shown, counter.calls)
        probability = [c for c in shown if c in ("as_probability_array",
                                                 "check_probability_matrix",
                                                 "check_sample_weight")]
        assert len(probability) == len(set(probability)) > 0, shown
        return
    assert len(counter.calls) == 1, (name, counter.calls)


@pytest.mark.parametrize("classes", [2, 3])
def test_one_conversion_per_cli_report(counter, tmp_path, monkeypatch, classes):
    """``python -m skcal report`` (in this process, so that calls are counted)."""
    from skcal.__main__ import main

    if classes == 2:
        y, p, w = _data(80, seed=6)
        columns = {"y": y, "p": p, "w": w}
        proba = ["p"]
    else:
        y, P, w = _multiclass_data(80, 3, seed=6)
        columns = {"y": y, "p0": P[:, 0], "p1": P[:, 1], "p2": P[:, 2], "w": w}
        proba = ["p0", "p1", "p2"]
    path = tmp_path / "preds.csv"
    lines = [",".join(columns)] + [
        ",".join(repr(float(v)) if k != "y" else str(int(v)) for k, v in zip(columns, row))
        for row in zip(*columns.values())
    ]
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.chdir(tmp_path)
    status = main(["report", str(path), "--label", "y", "--proba", *proba, "--weight", "w",
                   "--resamples", "20", "--json"])
    assert status == 0
    assert len(counter.calls) == 1, counter.calls


def test_one_conversion_per_dask_partition(counter):
    """dask_sketch validates each partition once, where the partition is.

    A real ``distributed.LocalCluster``, with in-process workers (two
    workers, one thread each): worker processes could not be counted. The
    count is one per partition, plus one check of the union of the
    partitions' labels at the merge: no partition is checked twice.
    """
    da = pytest.importorskip("dask.array")
    distributed = pytest.importorskip("distributed")
    from skcal.sketch import dask_sketch

    y, p, w = _data(90, seed=7)
    ym, Pm, wm = _multiclass_data(90, 3, seed=7)
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    )
    try:
        with distributed.Client(cluster):
            for yy, pp, ww, chunks in (
                (y, p, w, 30),
                (ym, Pm, wm, (30, 3)),
            ):
                counter.calls.clear()
                size = 30
                dask_sketch(
                    da.from_array(yy, chunks=size),
                    da.from_array(pp, chunks=chunks),
                    da.from_array(ww, chunks=size),
                    labels=None if pp.ndim == 1 else [0, 1, 2],
                )
                # one check per partition (3), where it lives, and one of the
                # union of their label sets at the merge (a row per class,
                # not the data): no partition's rows are checked twice
                assert len(counter.calls) == 3 + 1, counter.calls
    finally:
        cluster.close()


def test_nothing_is_checked_after_the_dask_merge(counter):
    """The merged sketch of Dask input is measured with no check of its own."""
    da = pytest.importorskip("dask.array")
    pytest.importorskip("distributed")
    import dask

    from skcal.sketch import dask_sketch

    y, p, w = _data(90, seed=7)
    with dask.config.set(scheduler="synchronous"):
        sketch = dask_sketch(da.from_array(y, chunks=30), da.from_array(p, chunks=30),
                             da.from_array(w, chunks=30))
    counter.calls.clear()
    for f in _binary_functions():
        f(sketch)
    assert counter.calls == [], counter.calls


def test_canonical_forms_are_not_checked_again(counter):
    """A canonical form passed down counts nothing: it is read as it is."""
    y, p, w = _data()
    ym, Pm, wm = _multiclass_data()
    data = _input.binary_input(y, p, w)
    top = _input.multiclass_input(ym, Pm, wm)
    counter.calls.clear()
    for f in _binary_functions():
        f(data)
        f(top)
    skcal.utility_calibration_error(top, None, "comb")
    skcal.UtilityCalibrationError()(top)
    assert counter.calls == [], counter.calls


def test_scorer_converts_once_on_three_classes(counter):
    rng = np.random.default_rng(1)
    P = rng.dirichlet(np.ones(3), size=40)
    y = rng.integers(0, 3, size=40)
    skcal.get_scorer("neg_smooth_calibration_error")(_Fixed(P, [0, 1, 2]), None, y)
    assert len(counter.calls) == 1, counter.calls


def test_canonical_form_measures_as_the_rows():
    """Every binary function on the canonical form equals the function on the rows."""
    rng = np.random.default_rng(2)
    for case in range(40):
        n = int(rng.integers(1, 30))
        p = rng.choice([0.0, 0.25, 0.5, 1.0, *rng.uniform(size=3)], size=n)
        y = rng.integers(0, 2, size=n)
        w = None if case % 2 else rng.uniform(0, 3, size=n) + (np.arange(n) == 0)
        data = _input.binary_input(y, p, w)
        for f in _binary_functions():
            assert f(data) == f(y, p, sample_weight=w), (f.__name__, case)
        with pytest.raises(ValueError, match="y_prob=None"):
            _binary_functions()[0](data, p)


def _other_arrays(y, p, w):
    """The same data as arrays of each importable library."""
    out = []
    pl = _importorskip("polars")
    if pl is not None:
        out.append(("polars", pl.Series(y), pl.Series(p), pl.Series(w)))
    pa = _importorskip("pyarrow")
    if pa is not None:
        out.append(("pyarrow", pa.array(y), pa.array(p), pa.chunked_array([w])))
    torch = _importorskip("torch")
    if torch is not None:
        out.append(("torch", torch.asarray(y), torch.asarray(p), torch.asarray(w)))
    strict = _importorskip("array_api_strict")
    if strict is not None:
        out.append(("array-api-strict", strict.asarray(y), strict.asarray(p),
                    strict.asarray(w)))
    return out


def _importorskip(name):
    try:
        return pytest.importorskip(name, exc_type=ImportError)
    except pytest.skip.Exception:
        return None


def test_other_libraries_are_converted_at_the_boundary():
    y, p, w = _data(40, seed=3)
    variants = _other_arrays(y, p, w)
    if not variants:
        pytest.skip("none of polars, pyarrow, torch, array-api-strict is importable")
    for library, yy, pp, ww in variants:
        for f in _binary_functions():
            assert f(yy, pp, sample_weight=ww) == f(y, p, sample_weight=w), (library, f)


def test_as_numpy_leaves_numpy_and_pandas_alone():
    a = np.arange(3.0)
    assert _input.as_numpy(a) is a
    assert _input.as_numpy(None) is None
    pd = _importorskip("pandas")
    if pd is not None:
        s = pd.Series(a)
        assert _input.as_numpy(s) is s


def test_integer_labels_by_table_match_unique_and_searchsorted():
    # unique_labels counts integer labels over a short range and
    # label_positions looks them up in a table: np.unique's array (values
    # and dtype) and np.searchsorted's positions, for every integer dtype,
    # near the dtype's ends, with wide ranges (the sort path) and labels
    # that are not classes (the same error as before)
    from skcal._input._checks import label_positions, unique_labels

    rng = np.random.default_rng(0)
    for dt in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.int64, np.uint64):
        info = np.iinfo(dt)
        for i in range(100):
            n = int(rng.integers(1, 50))
            base = int(rng.integers(max(info.min, -1000), min(info.max, 1000) - 60))
            y = (base + rng.integers(0, 50, n)).astype(dt)
            if i % 5 == 0:
                y[0] = info.max if i % 10 else info.min
            u = unique_labels(y)
            ref = np.unique(y)
            assert u.dtype == ref.dtype
            np.testing.assert_array_equal(u, ref)
            extra = (base + rng.integers(0, 60, 3)).astype(dt)
            classes = np.unique(np.concatenate([y, extra]))
            index = label_positions(classes, y)
            assert index.dtype == np.intp
            np.testing.assert_array_equal(index, np.searchsorted(classes, y))
    with pytest.raises(ValueError, match=r"labels \[7\] that are not in labels"):
        label_positions(np.array([0, 1, 2]), np.array([0, 7, 1]))
    with pytest.raises(ValueError, match=r"labels \[1\] that are not in labels"):
        label_positions(np.array([0, 2, 3]), np.array([0, 1, 3]))
