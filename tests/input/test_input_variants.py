"""The kinds of input of issue 22, in every variant: every measure function,
measure class and scorer, and a CalibrationSketch fed by ``update``.

For each entry point: weights scaled by 2**-1070 (subnormal), 1 and 2**600
give the same value up to rounding (case 6); non-finite or negative weights
and probabilities outside [0, 1] raise ValueError (no clipping); a 3-column
``y_prob`` with ``pos_label`` raises (case 5); string, bool and pandas
Categorical labels give the value of the 0/1 labels; n = 1 and one class give
a value in [0, 1]; sizes over the limit (``n_bins``, ``grid``) raise a
ValueError that says the limit (case 14); read-only and non-contiguous arrays
are read, never written. A failing check is collected with the entry point
and the input, and all failures are reported together.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin

import skcal
from skcal import metrics
from skcal.measures import MEASURE_CLASSES

BINARY_FUNCTIONS = [
    "binned_ece",
    "calibration_decision_loss",
    "calibration_fixed_decision_loss",
    "cutoff_calibration_error",
    "lower_distance_to_calibration",
    "maximum_swap_regret",
    "smooth_calibration_error",
    "soft_binned_cdl",
]
# parameters whose size costs memory, and the keyword of the entry point
SIZE_PARAMETERS = {
    "binned_ece": "n_bins",
    "BinnedECE": "n_bins",
    "lower_distance_to_calibration": "grid",
    "LowerDistanceToCalibration": "grid",
}


class Fixed(ClassifierMixin, BaseEstimator):
    """A fitted classifier whose ``predict_proba(X)`` is ``X`` itself."""

    def __init__(self, classes):
        self.classes = classes

    def fit(self, X=None, y=None):
        self.classes_ = np.asarray(self.classes)
        return self

    def predict_proba(self, X):
        X = np.asarray(X, dtype=np.float64)
        return np.column_stack([1.0 - X, X]) if X.ndim == 1 else X

    def predict(self, X):
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


def _binary_entry_points():
    """``(name, call(y, p, w, **options), options it accepts)`` of every binary entry."""
    entries = []
    for name in BINARY_FUNCTIONS:
        function = getattr(skcal, name)

        def call(y, p, w, _f=function, **options):
            out = _f(y, p, sample_weight=w, **options)
            return out[0] if isinstance(out, tuple) else out

        entries.append((name, call))
    for cls in MEASURE_CLASSES:
        if cls is skcal.UtilityCalibrationError:
            continue

        def call(y, p, w, _cls=cls, **options):
            return _cls(**options)(y, p, w)

        entries.append((cls.__name__, call))
    for cls in MEASURE_CLASSES:
        if cls is skcal.UtilityCalibrationError:
            continue

        def call(y, p, w, _cls=cls, **options):
            # the measure's scorer on a classifier whose predict_proba is p;
            # its positive class defaults to classes_[-1], as in scikit-learn
            y_array = np.asarray(y)
            labels = np.unique(y_array.astype(str) if y_array.dtype.kind in "OUS" else y_array)
            if labels.shape[0] < 2:
                labels = np.array([0, 1])
            if np.ndim(p) == 2 and p.shape[1] > 2:
                labels = np.arange(p.shape[1])
            scorer = _cls(**options).scorer()
            return -scorer(Fixed(labels).fit(), p, y, sample_weight=w)

        entries.append(("neg_" + cls._score_name, call))

    def sketch(y, p, w, **options):
        size = set(options) & {"n_bins", "grid"}
        if size:
            raise pytest.skip.Exception("a sketch takes the measure's options later")
        s = skcal.CalibrationSketch(**options)
        s.update(y, p, w)
        return skcal.smooth_calibration_error(s)

    entries.append(("CalibrationSketch.update", sketch))
    return entries


ENTRIES = _binary_entry_points()


class Failures(list):
    def check(self, ok, name, what):
        if not ok:
            self.append(f"{name}: {what}")

    def report(self):
        assert not self, "\n".join(self)


def _value(call, *args, **kwargs):
    try:
        return call(*args, **kwargs)
    except pytest.skip.Exception:
        return None


def _raises(call, *args, words=(), **kwargs):
    """None if ``call`` raised a ValueError whose message has all ``words``; else what it did."""
    try:
        out = call(*args, **kwargs)
    except pytest.skip.Exception:
        return None
    except ValueError as exc:
        missing = [w for w in words if w not in str(exc)]
        return f"message {str(exc)!r} lacks {missing}" if missing else None
    except Exception as exc:  # noqa: BLE001 - the kind of error is what is checked
        return f"{type(exc).__name__}: {exc}"
    return f"returned {out!r}"


def _data(rng, n=40):
    p = np.round(rng.random(n), 2)
    y = (rng.random(n) < np.clip(p + 0.15, 0, 1)).astype(np.int64)
    w = rng.integers(1, 5, n).astype(np.float64)
    return y, p, w


def test_weight_scale_is_invisible():
    # case 6: value(c w) == value(w) for c = 2**-1070 (subnormal weights), 2**600
    rng = np.random.default_rng(0)
    failures = Failures()
    for trial in range(3):
        y, p, w = _data(rng)
        if trial == 2:
            w = rng.exponential(size=w.shape[0])
        for name, call in ENTRIES:
            for scale in (2.0**-1070, 2.0**-1000, 1.0, 2.0**600):
                # the weights as stored: subnormal ones keep fewer bits, so the
                # reference is the stored weights scaled back (exactly) by 1/scale
                scaled = w * scale
                base = _value(call, y, p, scaled / scale)
                try:
                    value = _value(call, y, p, scaled)
                except Exception as exc:  # noqa: BLE001
                    failures.check(False, name, f"scale {scale:g}: {type(exc).__name__}: {exc}")
                    continue
                if name == "maximum_swap_regret" and value is not None:
                    if scale < 2.0**-1000:
                        continue  # T * CDL is itself subnormal, with fewer bits
                    value = value / scale  # T * CDL: in units of the weights
                failures.check(
                    value == pytest.approx(base, rel=1e-9, abs=1e-12),
                    name,
                    f"trial {trial}, scale {scale:g}: {value!r} != {base!r}",
                )
    failures.report()


def test_bad_weights_and_probabilities_raise():
    rng = np.random.default_rng(1)
    y, p, w = _data(rng, 10)
    failures = Failures()
    for name, call in ENTRIES:
        for bad in (np.nan, np.inf, -1.0):
            w_bad = w.copy()
            w_bad[3] = bad
            failures.check(
                (r := _raises(call, y, p, w_bad, words=("sample_weight",))) is None,
                name, f"sample_weight with {bad}: {r}",
            )
        for bad in (np.nan, np.inf, -np.inf, -0.1, 1.1, -1e-300, 1 + 2**-52):
            p_bad = p.copy()
            p_bad[3] = bad
            failures.check(
                (r := _raises(call, y, p_bad, w, words=("y_prob",))) is None,
                name, f"y_prob with {bad}: {r}",
            )
        # case 5: three columns have no positive class
        P3 = rng.dirichlet(np.ones(3), 10)
        failures.check(
            (r := _raises(call, y, P3, w, pos_label=1, words=("pos_label",))) is None,
            name, f"3-column y_prob with pos_label=1: {r}",
        )
    failures.report()


def test_labels_of_every_kind_read_as_zero_one():
    rng = np.random.default_rng(2)
    y, p, w = _data(rng, 30)
    strings = np.where(y == 1, "yes", "no")
    failures = Failures()
    for name, call in ENTRIES:
        base = _value(call, y, p, w)
        variants = {
            "bool": (y.astype(bool), {}),
            "float": (y.astype(float), {}),
            "-1/1": (2 * y - 1, {}),
            "strings": (strings, {"pos_label": "yes"}),
            "object strings": (strings.astype(object), {"pos_label": "yes"}),
            "Categorical": (pd.Categorical(strings), {"pos_label": "yes"}),
            "Series of Categorical": (pd.Series(pd.Categorical(strings)), {"pos_label": "yes"}),
            "Series of bool": (pd.Series(y.astype(bool)), {}),
            "bool, pos_label=True": (y.astype(bool), {"pos_label": True}),
            "Int64": (pd.array(y, dtype="Int64"), {}),
            "boolean": (pd.array(y.astype(bool), dtype="boolean"), {}),
            "Categorical with an unused category": (
                pd.Categorical(strings, categories=["maybe", "no", "yes"]),
                {"pos_label": "yes"},
            ),
            "Series with a shuffled index": (
                pd.Series(y, index=np.arange(y.shape[0])[::-1]), {}
            ),
        }
        for label, (labels, options) in variants.items():
            try:
                value = _value(call, labels, p, w, **options)
            except Exception as exc:  # noqa: BLE001
                failures.check(False, name, f"{label} labels: {type(exc).__name__}: {exc}")
                continue
            failures.check(
                value is None or value == pytest.approx(base, rel=1e-12, abs=1e-15),
                name, f"{label} labels: {value!r} != {base!r}",
            )
        # strings with no positive class named: an error that asks for it
        # (scorers take classes_[-1] of the classifier, as scikit-learn's do)
        if not name.startswith("neg_"):
            r = _raises(call, strings, p, w, words=("pos_label",))
            failures.check(r is None, name, f"string labels without pos_label: {r}")
    failures.report()


def test_one_row_and_one_class():
    failures = Failures()
    for name, call in ENTRIES:
        for y, p in [([1], [0.3]), ([0], [0.0]), ([1, 1, 1], [0.2, 0.9, 0.9]),
                     ([0, 0], [1.0, 0.5])]:
            try:
                value = _value(call, np.array(y), np.array(p), None)
            except Exception as exc:  # noqa: BLE001
                failures.check(False, name, f"y={y}, p={p}: {type(exc).__name__}: {exc}")
                continue
            top = len(y) if name == "maximum_swap_regret" else 1.0  # T * CDL
            failures.check(
                value is None or (np.isfinite(value) and 0.0 <= value <= top),
                name, f"y={y}, p={p}: {value!r}",
            )
    failures.report()


def test_sizes_over_the_limit_say_the_limit():
    # case 14: a MemoryError (or minutes of work) before; a ValueError now
    y, p, w = _data(np.random.default_rng(3), 10)
    failures = Failures()
    for name, call in ENTRIES:
        keyword = SIZE_PARAMETERS.get(name)
        if keyword is None:
            continue
        for size in (10**9, 2**40):
            r = _raises(call, y, p, w, **{keyword: size}, words=(keyword, "at most"))
            failures.check(r is None, name, f"{keyword}={size}: {r}")
    failures.report()


def _awkward(array):
    """``array`` as a read-only, non-contiguous view of a larger array."""
    big = np.empty((array.shape[0], 2) + array.shape[1:], dtype=array.dtype)
    big[:, 0] = array
    big[:, 1] = array
    view = big[:, 0]
    view.flags.writeable = False
    assert not view.flags.c_contiguous
    return view


def test_read_only_and_strided_input_is_read_not_written():
    rng = np.random.default_rng(4)
    failures = Failures()
    for kind in ("binary", "two columns", "three columns"):
        y, p, w = _data(rng, 25)
        if kind == "two columns":
            p = np.column_stack([1 - p, p])
        elif kind == "three columns":
            p = rng.dirichlet(np.ones(3), 25)
            y = rng.integers(0, 3, 25)
        for name, call in ENTRIES:
            base = _value(call, y, p, w)
            args = [_awkward(a) for a in (y, p, w)]
            copies = [a.copy() for a in args]
            try:
                value = _value(call, *args)
            except Exception as exc:  # noqa: BLE001
                failures.check(False, name, f"{kind}: {type(exc).__name__}: {exc}")
                continue
            failures.check(value == base, name, f"{kind}: {value!r} != {base!r}")
            for a, c in zip(args, copies):
                failures.check(np.array_equal(a, c), name, f"{kind}: input changed")
    failures.report()


def test_utility_calibration_in_every_variant():
    # the multiclass measure as function, class and scorer
    rng = np.random.default_rng(5)
    P = rng.dirichlet(np.ones(3), 30)
    y = rng.integers(0, 3, 30)
    w = rng.integers(1, 4, 30).astype(float)

    def scorer(y, P, w, labels=None):
        est = Fixed(np.unique(y) if labels is None else labels).fit()
        return -skcal.get_scorer("neg_utility_calibration_error")(est, P, y, sample_weight=w)

    entries = [
        ("utility_calibration_error",
         lambda y, P, w, **o: skcal.utility_calibration_error(y, P, sample_weight=w, **o)),
        ("UtilityCalibrationError",
         lambda y, P, w, **o: skcal.UtilityCalibrationError(**o)(y, P, w)),
        ("neg_utility_calibration_error", scorer),
    ]
    names = np.array(["ant", "bee", "cat"])
    failures = Failures()
    for name, call in entries:
        base = call(y, P, w)
        for scale in (2.0**-1070, 2.0**600):
            value = call(y, P, w * scale)
            failures.check(value == pytest.approx(base, rel=1e-9), name, f"scale {scale:g}")
        for label, labels in [
            ("strings", names[y]),
            ("Categorical", pd.Categorical(names[y])),
            ("Series", pd.Series(names[y])),
        ]:
            try:
                value = call(labels, P, w)
            except Exception as exc:  # noqa: BLE001
                failures.check(False, name, f"{label}: {type(exc).__name__}: {exc}")
                continue
            failures.check(value == pytest.approx(base, rel=1e-12), name, f"{label}: {value}")
        for bad in (np.nan, np.inf, -1.0):
            w_bad = w.copy()
            w_bad[0] = bad
            r = _raises(call, y, P, w_bad, words=("sample_weight",))
            failures.check(r is None, name, f"sample_weight with {bad}: {r}")
        for bad in (np.nan, -0.1, 1.1):
            P_bad = P.copy()
            P_bad[0, 0] = bad
            r = _raises(call, y, P_bad, w)
            failures.check(r is None, name, f"y_prob with {bad}: {r}")
        value = call(np.array([2]), P[:1], None, labels=[0, 1, 2])
        failures.check(0 <= value <= 1, name, f"n = 1: {value}")
        args = [_awkward(a) for a in (y, P, w)]
        copies = [a.copy() for a in args]
        failures.check(call(*args) == base, name, "read-only strided input")
        failures.check(all(np.array_equal(a, c) for a, c in zip(args, copies)), name,
                       "input changed")
    failures.report()


def test_dask_sketch_reads_the_same_variants():
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(6)
    y, p, w = _data(rng, 40)
    base = skcal.smooth_calibration_error(y, p, sample_weight=w)
    failures = Failures()
    for scale in (2.0**-1070, 2.0**600):
        sketch = skcal.dask_sketch(
            da.from_array(y, chunks=10), da.from_array(p, chunks=10),
            da.from_array(w * scale, chunks=10),
        )
        value = skcal.smooth_calibration_error(sketch)
        failures.check(value == pytest.approx(base, rel=1e-9), "dask_sketch", f"scale {scale:g}")
    for bad in (np.nan, -1.0):
        w_bad = w.copy()
        w_bad[15] = bad
        r = _raises(
            lambda w_bad=w_bad: skcal.dask_sketch(
                da.from_array(y, chunks=10), da.from_array(p, chunks=10),
                da.from_array(w_bad, chunks=10),
            ),
            words=("sample_weight",),
        )
        failures.check(r is None, "dask_sketch", f"sample_weight with {bad}: {r}")
    p_bad = p.copy()
    p_bad[25] = 1.5
    r = _raises(
        lambda: skcal.dask_sketch(da.from_array(y, chunks=10), da.from_array(p_bad, chunks=10)),
        words=("y_prob",),
    )
    failures.check(r is None, "dask_sketch", f"y_prob 1.5: {r}")
    labels = np.where(y == 1, "yes", "no")
    sketch = skcal.dask_sketch(
        da.from_array(labels, chunks=10), da.from_array(p, chunks=10),
        da.from_array(w, chunks=10), pos_label="yes",
    )
    value = skcal.smooth_calibration_error(sketch)
    failures.check(value == pytest.approx(base, rel=1e-12), "dask_sketch", f"strings: {value}")
    failures.report()


def test_metrics_module_lists_every_function_checked():
    # a new binary measure function must join the loops above
    public = {name for name in metrics.__all__ if name not in (
        "utility_calibration_error", "utility_calibration_ecdf")}
    assert public <= set(BINARY_FUNCTIONS) | {"binned_ece"}, public - set(BINARY_FUNCTIONS)


def test_intervals_and_the_tester_ignore_the_weight_scale():
    # interval() summed squared weights: ZeroDivisionError for subnormal
    # weights, OverflowError for weights of 2**600
    rng = np.random.default_rng(7)
    y, p, w = _data(rng, 40)
    failures = Failures()
    keys = ("estimate", "low", "high", "n_effective")
    for cls in MEASURE_CLASSES:
        if cls is skcal.UtilityCalibrationError:
            continue
        base = cls().interval(y, p, sample_weight=w, n_resamples=20, random_state=0)
        for scale in (2.0**-1070, 2.0**600):
            try:
                got = cls().interval(y, p, sample_weight=w * scale, n_resamples=20, random_state=0)
            except Exception as exc:  # noqa: BLE001
                failures.check(False, cls.__name__, f"interval, scale {scale:g}: {exc!r}")
                continue
            for key in keys:
                failures.check(
                    np.allclose(got[key], base[key], rtol=1e-9, equal_nan=True),
                    cls.__name__, f"interval {key}, scale {scale:g}: {got[key]} != {base[key]}",
                )
    for measure in ("smce", "dce", "cutoff", "scdl", "cdl", "binned_ece"):
        base = skcal.CalibrationTester(
            measure, n_resamples=199, random_state=0).fit(y, p, w).decide()
        for scale in (2.0**-1070, 2.0**600):
            got = skcal.CalibrationTester(measure, n_resamples=199, random_state=0).fit(
                y, p, w * scale).decide()
            failures.check(
                (got.statistic, got.p_value, got.calibrated)
                == pytest.approx((base.statistic, base.p_value, base.calibrated), rel=1e-9),
                f"CalibrationTester({measure!r})", f"scale {scale:g}: {got} != {base}",
            )
    failures.report()


def test_missing_labels_are_named():
    # pandas columns with gaps: "mixes labels of different types (NAType, bool)"
    p = np.array([0.2, 0.7, 0.4])
    failures = Failures()
    for label, y in [
        ("boolean with NA", pd.array([True, False, pd.NA], dtype="boolean")),
        ("Categorical with NaN", pd.Categorical(["a", "b", None])),
        ("object with None", np.array(["a", "b", None], dtype=object)),
    ]:
        for name, call in ENTRIES:
            if name.startswith("neg_"):
                continue
            try:
                call(y, p, None, pos_label="a" if label != "boolean with NA" else True)
            except (TypeError, ValueError) as exc:
                failures.check("missing label" in str(exc) and "y_true" in str(exc),
                               name, f"{label}: {exc}")
            else:
                failures.check(False, name, f"{label}: no error")
    failures.report()
