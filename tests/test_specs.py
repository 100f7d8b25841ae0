"""One spec per measure: a measure registered in one place appears everywhere.

A toy measure, the weighted mean of ``|y - p|``, is declared by one
``MeasureSpec`` (a core on the boundary's canonical form and one on the
grouped statistic) and registered; it must then be a function, an
estimator-style class, a scorer that ``cross_validate`` accepts, and a
measure of ``python -m skcal report``; and be gone once unregistered.
"""

import ast
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_validate

import skcal
from skcal import _specs, measures, metrics

TOY = textwrap.dedent(
    '''
    import numpy as np

    from skcal._specs import MeasureSpec, register


    def toy_core(data, scale=1.0, return_details=False):
        y, p, w = data.canonical_rows()
        value = scale * float(np.sum(w * np.abs(y - p)) / np.sum(w))
        return (value, {}) if return_details else value


    def toy_grouped(statistic, scale=1.0, **_):
        v, W, P = statistic.values, statistic.weights, statistic.positives
        return scale * float(np.sum(P * (1 - v) + (W - P) * v) / statistic.total)


    register(
        MeasureSpec(
            name="toy_abs_error",
            class_name="ToyAbsError",
            core=toy_core,
            grouped_core=toy_grouped,
            options={"scale": 1.0},
            tester_name="toy",
            label="toy mean |y - p|",
            docs="mean absolute gap between outcome and prediction",
        )
    )
    '''
)


@pytest.fixture
def toy():
    namespace = {}
    exec(compile(TOY, "<toy measure>", "exec"), namespace)
    try:
        yield _specs.get_spec("toy_abs_error")
    finally:
        _specs.unregister("toy_abs_error")


def _reference(y, p, w):
    return float(np.sum(w * np.abs(y - p)) / np.sum(w))


def test_toy_measure_is_function_class_and_scorer(toy):
    rng = np.random.default_rng(0)
    p = rng.uniform(size=50)
    y = (rng.uniform(size=50) < p).astype(int)
    w = rng.uniform(0.1, 2, size=50)
    # a function
    f = metrics.toy_abs_error
    assert f(y, p, sample_weight=w) == pytest.approx(_reference(y, p, w), rel=1e-12)
    assert f(y, p, scale=2.0) == pytest.approx(2 * _reference(y, p, np.ones(50)))
    # a class, estimator-style
    cls = measures.ToyAbsError
    assert cls in list(measures.MEASURE_CLASSES)
    m = cls(scale=3.0)
    assert m.get_params()["scale"] == 3.0
    assert clone(m).get_params() == m.get_params()
    assert m(y, p, w) == pytest.approx(3 * _reference(y, p, w), rel=1e-12)
    # its grouped core agrees with its core (the tester and the report read it)
    from skcal._input import binary_input

    data = binary_input(y, p, w)
    assert m._grouped_core(data.canonical_statistic()) == pytest.approx(m(data), rel=1e-12)
    # a scorer, in cross_validate
    assert "neg_toy_abs_error" in skcal.get_scorer_names()
    X, target = load_breast_cancer(return_X_y=True)
    X = X[:, :5]
    result = cross_validate(
        LogisticRegression(max_iter=500), X, target, cv=3,
        scoring=skcal.make_scorers(["neg_toy_abs_error", "accuracy"]),
    )
    assert np.all(result["test_neg_toy_abs_error"] < 0)
    # the docs table lists it
    assert "`toy_abs_error`" in _specs.docs_table()


def test_toy_measure_is_gone_after_unregistering(toy):
    _specs.unregister("toy_abs_error")
    try:
        assert not hasattr(metrics, "toy_abs_error")
        assert "neg_toy_abs_error" not in skcal.get_scorer_names()
        assert all(c.__name__ != "ToyAbsError" for c in measures.MEASURE_CLASSES)
        with pytest.raises(AttributeError):
            measures.ToyAbsError  # noqa: B018
    finally:
        exec(compile(TOY, "<toy measure>", "exec"), {})


def test_toy_measure_in_the_cli_report(tmp_path):
    """The report lists a measure that a plugin module registers (sitecustomize)."""
    (tmp_path / "sitecustomize.py").write_text(TOY)
    rng = np.random.default_rng(1)
    p = rng.uniform(size=200)
    y = (rng.uniform(size=200) < p).astype(int)
    (tmp_path / "preds.csv").write_text(
        "y,p\n" + "".join(f"{int(a)},{float(b)!r}\n" for a, b in zip(y, p))
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")])
    out = subprocess.run(
        [sys.executable, "-m", "skcal", "report", "preds.csv", "--label", "y",
         "--proba", "p", "--json", "--resamples", "20"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    toy = summary["measures"]["toy"]
    assert toy["value"] == pytest.approx(_reference(y, p, np.ones(200)), rel=1e-9)


def test_toy_measure_is_a_cli_option(tmp_path):
    """``report --measure toy`` selects the plugin's measure; a wrong name lists it."""
    (tmp_path / "sitecustomize.py").write_text(TOY)
    rng = np.random.default_rng(2)
    p = rng.uniform(size=200)
    y = (rng.uniform(size=200) < p).astype(int)
    (tmp_path / "preds.csv").write_text(
        "y,p\n" + "".join(f"{int(a)},{float(b)!r}\n" for a, b in zip(y, p))
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")])

    def report(*options):
        return subprocess.run(
            [sys.executable, "-m", "skcal", "report", "preds.csv", "--label", "y",
             "--proba", "p", "--resamples", "20", *options],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
        )

    # by report key and by function name: only what is asked for
    for names in (["toy", "cutoff"], ["toy_abs_error", "cutoff_calibration_error"]):
        out = report("--json", "--measure", *names)
        assert out.returncode == 0, out.stderr
        summary = json.loads(out.stdout)
        assert list(summary["measures"]) == ["cutoff", "toy"]
        assert set(summary["measure_labels"]) == {"cutoff", "toy"}
        value = summary["measures"]["toy"]["value"]
        assert value == pytest.approx(_reference(y, p, np.ones(200)), rel=1e-9)
        assert summary["test"]["measure"] == "smce"  # the test reads smCE anyway
    # the table lists the chosen measures only
    out = report("--measure", "toy")
    assert out.returncode == 0, out.stderr
    assert "toy mean |y - p|" in out.stdout
    assert "smooth calibration error" not in out.stdout.split("calibrated?")[0]
    # a wrong name: exit 2, and the choices, the plugin's among them
    out = report("--measure", "nope")
    assert out.returncode == 2
    assert "nope" in out.stderr and "toy" in out.stderr and "smce" in out.stderr


def test_toy_measure_selectable_in_process(toy):
    """The choices are read off the registry: registered -> a choice; gone after."""
    from skcal._report import calibration_summary
    from skcal._report_measures import measure_choices, selected_measures

    assert ("toy", "toy_abs_error") in measure_choices()
    assert selected_measures(["toy_abs_error", "toy", "smce"]) == ["smce", "toy"]
    rng = np.random.default_rng(3)
    p = rng.uniform(size=100)
    y = (rng.uniform(size=100) < p).astype(float)
    s = calibration_summary(y, p, np.ones(100), n_resamples=0, measures=["toy"])
    assert list(s["measures"]) == ["toy"]
    assert s["measures"]["toy"]["value"] == pytest.approx(_reference(y, p, np.ones(100)))
    _specs.unregister("toy_abs_error")
    try:
        with pytest.raises(ValueError, match="toy"):
            selected_measures(["toy"])
    finally:
        exec(compile(TOY, "<toy measure>", "exec"), {})


def test_docs_table_is_generated_from_the_specs(toy, tmp_path):
    """doc/conf.py writes the measures table from the registry (the toy included)."""
    import runpy
    import types

    conf = _ROOT.parent / "doc" / "conf.py"
    if not conf.is_file():
        pytest.skip("no doc/ beside the package (an installed copy)")
    pytest.importorskip("tomllib")
    write = runpy.run_path(str(conf))["write_measures_table"]
    path = write(types.SimpleNamespace(srcdir=str(tmp_path)))
    text = path.read_text(encoding="utf-8")
    assert text.endswith(_specs.docs_table())
    for spec in _specs.specs():
        assert f"| `{spec.name}` | `{spec.class_name}` | `{spec.score_name}` " in text
    assert "`toy_abs_error`" in text and "mean absolute gap" in text
    # the page includes it
    page = (_ROOT.parent / "doc" / "measures.md").read_text(encoding="utf-8")
    assert "_generated/measures_table.md" in page


def test_builtin_specs_derive_the_public_names():
    names = [s.name for s in _specs.specs()]
    assert names == [c._function_name for c in measures.MEASURE_CLASSES]
    for spec in _specs.specs():
        assert getattr(skcal, spec.name) is _specs.function_of(spec)
        assert getattr(skcal, spec.class_name)._spec is spec


# --- no import circle ---------------------------------------------------------

_ROOT = pathlib.Path(skcal.__file__).parent


def _module_name(path):
    rel = path.relative_to(_ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _top_level_imports(path, name):
    """skcal modules imported at module level (not inside functions)."""
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in tree.body:
        nodes = [node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue  # read by type checkers only, never imported at run time
        if isinstance(node, (ast.If, ast.Try)):
            nodes = list(ast.walk(node))
        for sub in nodes:
            if isinstance(sub, ast.ImportFrom):
                if sub.level:
                    base = package.split(".")
                    base = base[: len(base) - sub.level + 1]
                    target = ".".join(base + ([sub.module] if sub.module else []))
                else:
                    target = sub.module or ""
                if target.startswith("skcal"):
                    found.add(target)
                    for alias in sub.names:
                        found.add(f"{target}.{alias.name}")
            elif isinstance(sub, ast.Import):
                found.update(a.name for a in sub.names if a.name.startswith("skcal"))
    return found


def test_no_import_circle():
    modules = {
        _module_name(p): p for p in _ROOT.rglob("*.py") if "_kernels" not in p.parts
    }
    graph = {}
    for name, path in modules.items():
        deps = {d for d in _top_level_imports(path, name) if d in modules and d != name}
        # importing a.b.c runs the __init__ of a.b first
        graph[name] = deps | {
            ".".join(d.split(".")[:k]) for d in deps for k in range(2, d.count(".") + 1)
            if ".".join(d.split(".")[:k]) in modules and ".".join(d.split(".")[:k]) != name
        }
    # a package's __init__ importing its own submodules is not a circle
    state, stack = {}, []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for dep in graph[node]:
            if node.startswith(dep + "."):
                continue  # a submodule of a package whose __init__ is loading
            if state.get(dep) == 1:
                raise AssertionError(" -> ".join(stack[stack.index(dep):] + [dep]))
            elif dep not in state:
                visit(dep)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)


def _package_of(module):
    """The subpackage of skcal a module belongs to ("" for the top-level modules)."""
    parts = module.split(".")
    package = parts[1] if len(parts) > 1 else ""
    return package if (_ROOT / package / "__init__.py").exists() else ""


def test_no_private_name_is_imported_across_packages():
    """``from x import _name`` only within one package (issue 25).

    The private packages ``_kernels`` and ``_input`` are the library's shared
    internals, and ``skcal._compat`` re-exports scikit-learn's own private
    helpers under their names: those are the exceptions.
    """
    import ast

    wrong = []
    for path in _ROOT.rglob("*.py"):
        name = _module_name(path)
        here = name.split(".")[: -1 if path.name != "__init__.py" else None]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = here[: len(here) - (node.level - 1)]
                target = ".".join(base + (node.module.split(".") if node.module else []))
            elif node.module and node.module.split(".")[0] == "skcal":
                target = node.module
            else:
                continue
            if _package_of(target) in ("_kernels", "_input") or target == "skcal._compat":
                continue
            if _package_of(target) == _package_of(name):
                continue
            wrong += [
                f"{name} imports {alias.name} from {target}"
                for alias in node.names
                if alias.name.startswith("_") and not alias.name.startswith("__")
            ]
    assert not wrong, "\n".join(sorted(wrong))
