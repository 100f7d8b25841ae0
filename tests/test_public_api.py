"""Every public function, constructor and method is annotated (issue 25, item 6).

The public surface is ``skcal.__all__``; for each class it exported, the
constructor and every public method and property defined in skcal (not the
ones inherited from scikit-learn, e.g. ``get_params``) must annotate every
parameter and the return (``__init__``: its parameters; ``-> None`` is
implied). ``*args`` and ``**kwargs`` count as parameters.
Every one is annotated (there is no allow-list); ``mypy skcal`` checks that
the annotations agree with the code (``[tool.mypy]`` in pyproject.toml).
"""

import inspect

import pytest

import skcal


def _defined_in_skcal(func):
    return (getattr(func, "__module__", None) or "").startswith("skcal")


def _public_callables():
    """``(qualified name, function)`` of every public signature to check."""
    for name in skcal.__all__:
        if name.startswith("__"):
            continue
        obj = getattr(skcal, name)
        if inspect.isfunction(obj):
            yield name, obj
        elif inspect.isclass(obj):
            if _defined_in_skcal(obj.__init__):
                yield f"{name}.__init__", obj.__init__
            seen = set()
            # the class's own and inherited attributes, without running
            # descriptors (inspect.getmembers_static is Python >= 3.11)
            for klass in obj.__mro__:
                for attr, raw in vars(klass).items():
                    if attr.startswith("_") or attr in seen:
                        continue
                    seen.add(attr)
                    yield from _member(name, attr, raw)


def _member(owner, attr, raw):
    if isinstance(raw, (classmethod, staticmethod)):
        func = raw.__func__
    elif isinstance(raw, property):
        func = raw.fget
    else:
        func = raw
    if inspect.isfunction(func) and _defined_in_skcal(func):
        yield f"{owner}.{attr}", func


def _missing_annotations(func):
    """Names of the parameters (and ``return``) of ``func`` without annotation."""
    signature = inspect.signature(func)
    missing = []
    params = list(signature.parameters.values())
    if params and params[0].name in ("self", "cls"):
        params = params[1:]
    for param in params:
        if param.annotation is inspect.Parameter.empty:
            missing.append(param.name)
    if func.__name__ != "__init__" and signature.return_annotation is inspect.Signature.empty:
        missing.append("return")
    return missing


PUBLIC = dict(_public_callables())


def test_public_surface_is_found():
    # the walk sees the methods the issue names, so an empty walk cannot pass
    for name in [
        "CalibrationTester.fit",
        "CalibrationTester.decide",
        "CalibrationSketch.update",
        "CalibrationSketch.from_bytes",
        "ReliabilityDisplay.from_predictions",
        "ReliabilityDisplay.from_estimator",
        "ReliabilityDisplay.plot",
        "CalibrationMonitor.update",
        "RoundedResponseClassifier.predict_proba",
        "SCDLRounding.transform",
        "BinnedECE.score" if hasattr(skcal.BinnedECE, "score") else "BinnedECE.__init__",
        "dask_sketch",
    ]:
        assert name in PUBLIC, name
    assert "CalibrationTester.get_params" not in PUBLIC  # inherited from scikit-learn


def test_public_signatures_are_annotated():
    unannotated = {}
    for name, func in PUBLIC.items():
        missing = _missing_annotations(func)
        if missing:
            unannotated[name] = missing
    assert not unannotated, (
        "public signatures without annotations (parameter names, 'return'): "
        + "; ".join(f"{k}: {', '.join(v)}" for k, v in sorted(unannotated.items()))
    )


@pytest.mark.parametrize("func", [lambda a, b=1: None, lambda *args, **kwargs: None])
def test_the_check_can_fail(func):
    assert _missing_annotations(func)


def test_the_check_passes_a_fully_annotated_function():
    def f(a: int, *args: int, b: float = 1.0, **kwargs: str) -> None:
        pass

    class C:
        def __init__(self, a: int):
            pass

    assert _missing_annotations(f) == []
    assert _missing_annotations(C.__init__) == []


def test_literal_options_are_the_accepted_ones():
    # the Literal types of the signatures name exactly the string options the
    # code accepts: each listed one works, an unlisted one is refused
    from typing import get_args

    from skcal import _typing

    y, p = [0, 1, 1, 0], [0.2, 0.7, 0.6, 0.4]
    y_multi = [0, 1, 2, 1]
    p_multi = [[0.6, 0.2, 0.2], [0.2, 0.5, 0.3], [0.1, 0.2, 0.7], [0.3, 0.4, 0.3]]
    for option in get_args(_typing.Multiclass):
        skcal.binned_ece(y, p, multiclass=option)
    with pytest.raises(ValueError, match="multiclass"):
        skcal.binned_ece(y_multi, p_multi, multiclass="class-wise")
    for option in get_args(_typing.UtilityName):
        assert 0 <= skcal.utility_calibration_error(y_multi, p_multi, option) <= 2
    with pytest.raises(ValueError, match="utility"):
        skcal.utility_calibration_error(y_multi, p_multi, "top-two")
