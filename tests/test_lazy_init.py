"""skcal/__init__.py imports its public names on first use (PEP 562)."""

import subprocess
import sys

import skcal


def test_every_public_name_resolves_and_is_listed():
    assert len(set(skcal.__all__)) == len(skcal.__all__)
    listed = dir(skcal)
    for name in skcal.__all__:
        assert name in listed
        value = getattr(skcal, name)
        assert value is not None
        if name != "__version__":
            # the object of the module that defines it, not a copy
            module = sys.modules[value.__module__]
            assert getattr(module, name) is value
    namespace = {}
    exec("from skcal import *", namespace)
    assert set(skcal.__all__) <= set(namespace)


def test_unknown_name_is_an_attribute_error():
    try:
        skcal.not_a_name  # noqa: B018
    except AttributeError as exc:
        assert "not_a_name" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("skcal.not_a_name resolved")


def test_subpackages_are_attributes():
    assert skcal.metrics.binned_ece is skcal.binned_ece
    assert skcal.sketch.CalibrationSketch is skcal.CalibrationSketch


def test_import_skcal_loads_no_estimators(tmp_path):
    # the report path must not pay for the recalibrators, displays, matplotlib
    code = (
        "import sys, skcal; "
        "bad = [m for m in ('skcal.recalibration', 'skcal.display', 'skcal.decisions', "
        "'matplotlib', 'sklearn') if m in sys.modules]; print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, check=True).stdout
    assert out.strip() == "[]"
