"""Every public entry point converts its input once, at the boundary (issue 25).

Counting wrappers replace the boundary (``skcal._input``) and every
validator below or beside it (scikit-learn's ``check_array``,
``check_consistent_length``, ``column_or_1d``, and skcal's own checks)
wherever a module refers to them. A call is counted when it starts outside
any other counted call (the checks the boundary makes itself are its own
work), so one public call must count exactly one. The one-pass fast path
(``plain_binary_rows``, whose kernels check every row as they read it) is a
conversion when it accepts the input; when it declines, nothing was
converted and the full check that follows is the one.

Also: array-likes of other libraries (polars, pyarrow, Array API arrays)
are converted at the boundary and measured as their numpy twins.
"""

import sys

import numpy as np
import pytest
import sklearn.utils
import sklearn.utils.validation
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_array, check_consistent_length, column_or_1d

import skcal
from skcal import _input
from skcal._input import _canonical, _checks

_VALIDATORS = {
    "binary_input": _canonical.binary_input,
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


class _Counter:
    def __init__(self):
        self.depth = 0
        self.calls = []

    def wrap(self, name, func):
        def counted(*args, **kwargs):
            self.depth += 1
            try:
                result = func(*args, **kwargs)
            finally:
                self.depth -= 1
            declined = name == "plain_binary_rows" and result is None
            if self.depth == 0 and not declined:
                self.calls.append(name)
            return result

        counted.__wrapped__ = func
        return counted


@pytest.fixture
def counter(monkeypatch):
    """Every module attribute that refers to a validator now counts its calls."""
    import skcal.measures  # noqa: F401  (every module loaded before patching)
    import skcal.scorers  # noqa: F401
    import skcal.sketch  # noqa: F401

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


_ENTRIES = _entries()


@pytest.mark.parametrize("call", [c for _, c in _ENTRIES], ids=[i for i, _ in _ENTRIES])
def test_one_conversion_per_public_call(counter, call):
    call()
    assert len(counter.calls) == 1, counter.calls


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
