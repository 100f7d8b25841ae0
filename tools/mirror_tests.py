"""Move the tests into folders that mirror skcal's packages (issue 25, item 5).

Idempotent: run it from anywhere inside the repository, as often as wanted::

    python tools/mirror_tests.py          # do it
    python tools/mirror_tests.py --check  # only report what it would do
    python tools/mirror_tests.py --private  # list private imports of public names

What it does, each step skipping what is already done:

1. ``git mv`` every test file of ``MOVES`` that is still at its old path.
   Layout: ``tests/<package>/test_<module>.py`` for skcal's packages (the
   leading underscore dropped: ``skcal/_input`` -> ``tests/input``,
   ``skcal/_kernels`` -> ``tests/kernels``); a folder per area where several
   top-level modules form one (``tests/report`` for ``_report*.py`` and the
   CLI, ``tests/interval`` for ``_interval*.py``); ``tests/test_<module>.py``
   for a single top-level module (``_grouped``, ``_held``, ``_specs``,
   ``monitor``, ``scorers``, ``_demo``); tests of the whole library (docs,
   public API, fuzzing, messages, import) stay in ``tests/``.
2. Split ``tests/reference.py`` (the slow twins of every branch, in one
   file) into ``reference_<module>.py`` files beside the tests of what each
   twin checks (``TWINS``); a twin already in its target file is replaced by
   the version in ``tests/reference.py`` (so a ``reference.py`` brought back
   by a merge wins); ``tests/reference.py`` is then removed (no shim).
3. Rewrite every ``from reference import ...`` / ``import reference as ref``
   (and ``tests.reference``) in tests/ with the name -> module map read off
   the twin files, and every import of a renamed test module, so test files
   added after a run are rewritten too.
4. Put every folder of tests/ on ``sys.path`` in ``tests/conftest.py`` (the
   one mechanism for helpers: pytest's default ``prepend`` import mode, no
   ``__init__.py``; helper and test module basenames must therefore be
   unique across tests/, which it checks).
5. Replace the old paths in README, CONTRIBUTING, ``.ci/run``,
   ``pyproject.toml``, doc/, benchmarks/ and comments in skcal/ and tests/.
6. Sort the rewritten imports (``ruff check --select I --fix``, when ruff is
   on PATH).

Test files in tests/ that no table mentions (added after this script was
written) are left where they are and listed, with the folder their skcal
imports suggest; add them to ``MOVES`` and re-run.
"""

import argparse
import ast
import collections
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"

# old path -> new path, relative to tests/
MOVES = {
    # skcal/metrics/
    "test_cdl.py": "metrics/test_cdl.py",
    "test_cutoff.py": "metrics/test_cutoff.py",
    "test_ece.py": "metrics/test_ece.py",
    "test_ece_onepass.py": "metrics/test_ece_onepass.py",
    "test_ldtc.py": "metrics/test_ldtc.py",
    "test_ldtc_solver.py": "metrics/test_ldtc_solver.py",
    "test_multiclass.py": "metrics/test_multiclass.py",
    "test_top_class_path.py": "metrics/test_top_class_path.py",
    "test_scdl.py": "metrics/test_scdl.py",
    "test_scdl_onepass.py": "metrics/test_scdl_onepass.py",
    "test_smce.py": "metrics/test_smce.py",
    "test_uc_binary.py": "metrics/test_uc_binary.py",
    # skcal/_kernels/ (test_ldtc_kernels: metrics/test_ldtc.py holds the name)
    "test_kernels.py": "kernels/test_kernels.py",
    "test_ldtc_kernels.py": "kernels/test_ldtc_kernels.py",
    # skcal/_input/
    "test_boundary.py": "input/test_boundary.py",
    "test_validation.py": "input/test_checks.py",
    "test_input_variants.py": "input/test_input_variants.py",
    # skcal/tester/
    "test_tester.py": "tester/test_tester.py",
    "test_tolerant.py": "tester/test_tolerant.py",
    "test_smce_null.py": "tester/test_smce_null.py",
    "test_tester_interval.py": "tester/test_result.py",
    # skcal/sketch/
    "test_sketch.py": "sketch/test_sketch.py",
    "test_sketch_bounded_build.py": "sketch/test_sketch_bounded_build.py",
    "test_sketch_hardening.py": "sketch/test_sketch_hardening.py",
    "test_dask.py": "sketch/test_dask.py",
    # skcal/utilities/
    "test_utilities.py": "utilities/test_utilities.py",
    # skcal/_interval*.py: one area, three modules
    "test_interval.py": "interval/test_interval.py",
    "test_interval_bounds.py": "interval/test_interval_bounds.py",
    "test_interval_utility.py": "interval/test_interval_utility.py",
    # skcal/_report*.py and skcal/__main__.py: one area, the CLI
    "test_report.py": "report/test_report.py",
    "test_cli_input.py": "report/test_report_input.py",
    "test_report_fast_paths.py": "report/test_report_fast_paths.py",
    # single top-level modules
    "test_spec_registry.py": "test_specs.py",
}

# test files that stay in tests/ (top-level modules, or the whole library)
STAY = {
    "test_common.py",  # properties every public measure shares
    "test_demo.py",  # skcal/_demo.py
    "test_doc_build.py",  # doc/
    "test_docs.py",  # README and doc/ examples
    "test_docstrings.py",  # every public docstring
    "test_fuzz.py",  # every public measure
    "test_grouped.py",  # skcal/_grouped.py
    "test_held.py",  # skcal/_held.py
    "test_import.py",  # importing skcal
    "test_lazy_init.py",  # skcal/__init__.py
    "test_messages.py",  # every public entry point's messages
    "test_monitor.py",  # skcal/monitor.py
    "test_public_api.py",  # skcal.__all__
    "test_repro_table2.py",  # benchmarks/repro_scdl_table2.py
    "test_scorers.py",  # skcal/scorers.py
    "test_silent_errors.py",  # every public entry point
    "test_specs.py",  # skcal/_specs.py
}

# twin in tests/reference.py -> its file, relative to tests/, beside the tests
# of what it checks
_T = {
    "metrics/reference_cutoff.py": ["residuals", "cutoff_bruteforce"],
    "metrics/reference_smce.py": ["smce_linprog"],
    "metrics/reference_scdl.py": [
        "scdl_m_reference",
        "scdl_reference",
        "hard_binned_scdl_reference",
        "class_soft_bins_reference",
    ],
    "metrics/reference_ece.py": [
        "binned_ece_reference",
        "uniform_bin_sums_reference",
        "plain_rows_reference",
    ],
    "metrics/reference_cdl.py": [
        "_cdl_groups",
        "prediction_swap_regret",
        "cdl_dense_lp",
        "cfdl_bruteforce",
        "cdl_three_action_bruteforce",
        "cdl_sparse_lp",
        "decision_profile_reference",
        "task_swap_regret_reference",
        "best_responses_reference",
        "cdl_task_search_bruteforce",
    ],
    "metrics/reference_ldtc.py": [
        "ldtc_dense_lp",
        "ldtc_dual_objective",
        "ldtc_solve_on_grid_arrays",
    ],
    "metrics/reference_multiclass.py": [
        "utility_calibration_bruteforce",
        "family_calibration_bruteforce",
        "comb_calibration_bruteforce",
    ],
    "utilities/reference_utilities.py": [
        "rank_bruteforce",
        "_first_argmax",
        "utility_vector_bruteforce",
        "predicted_and_realised_bruteforce",
    ],
    "decisions/reference_task.py": ["best_response_bruteforce", "swap_regret_bruteforce"],
    "recalibration/reference_patching.py": [
        "simplex_projection_bisection",
        "simplex_projection_sort_numpy",
        "brier_multiclass",
        "patching_reference",
        "worst_interval_sorted_reference",
        "patching_fit_reference",
    ],
    "recalibration/reference_auto_choice.py": ["auto_choice_reference"],
    "reference_grouped.py": ["grouped_reference"],
    "sketch/reference_sketch.py": ["exact_grouped_reference", "compacted_rows_reference"],
    "display/reference_reliability.py": ["soft_bins_reference", "null_bin_frequencies_reference"],
    "tester/reference_null.py": [
        "row_null_draw_reference",
        "exact_null_law_reference",
        "smce_bernoulli_reference",
    ],
    "tester/reference_tester.py": ["smce_move_gap_bruteforce", "coupling_failures_reference"],
    "tester/reference_tolerant.py": [
        "design_gap_reference",
        "interval_noise_reference",
        "null_tolerance_reference",
    ],
    "online/reference_oracle.py": [
        "online_in_interval",
        "online_weighted_gain",
        "online_h",
        "online_step3_bruteforce",
        "online_oracle_replay",
        "online_oracle_bound",
    ],
}
TWINS = {name: path for path, names in _T.items() for name in names}

# what each new twin file checks (its docstring)
_DOC = {
    "metrics/reference_cutoff.py": "the cutoff calibration error (skcal/metrics/_cutoff.py)",
    "metrics/reference_smce.py": "the smooth calibration error (skcal/metrics/_smce.py)",
    "metrics/reference_scdl.py": "SCDL (skcal/metrics/_scdl.py)",
    "metrics/reference_ece.py": "the binned ECE and the one-pass input check "
    "(skcal/metrics/_ece.py)",
    "metrics/reference_cdl.py": "the calibration decision loss (skcal/metrics/_cdl.py)",
    "metrics/reference_ldtc.py": "the distance to calibration (skcal/metrics/_ldtc.py)",
    "metrics/reference_multiclass.py": "the utility calibration error "
    "(skcal/metrics/_multiclass.py)",
    "utilities/reference_utilities.py": "utilities and families (skcal/utilities/)",
    "decisions/reference_task.py": "decision tasks (skcal/decisions/_task.py)",
    "recalibration/reference_patching.py": "patching (skcal/recalibration/_patching.py)",
    "recalibration/reference_auto_choice.py": "the automatic choice of a recalibrator "
    "(skcal/recalibration/_auto.py)",
    "reference_grouped.py": "the grouped statistic (skcal/_grouped.py)",
    "sketch/reference_sketch.py": "CalibrationSketch (skcal/sketch/)",
    "display/reference_reliability.py": "the reliability display's bands "
    "(skcal/display/_reliability.py)",
    "tester/reference_null.py": "the tester's resampling null (skcal/tester/_null.py)",
    "tester/reference_tester.py": "CalibrationTester (skcal/tester/_tester.py)",
    "tester/reference_tolerant.py": "the tolerant test (skcal/tester/_tolerant.py)",
    "online/reference_oracle.py": "the online oracle (skcal/online/_oracle.py)",
}

# files outside tests/ whose mentions of test paths are brought up to date
DOC_FILES = ["README.md", "CONTRIBUTING.md", "pyproject.toml", ".ci/run"]
DOC_GLOBS = ["doc/**/*.md", "doc/**/*.rst", "doc/**/*.py", "benchmarks/**/*.py", "skcal/**/*.py"]

# mentions of tests/reference.py outside tests/, each with its new wording
EXTRA_MENTIONS = {
    "skcal/metrics/_cdl.py": [("``tests/reference.py``", "``tests/metrics/reference_cdl.py``")],
    # the kernel tests of the bounds-checked build, by the new layout
    ".ci/run": [
        (
            "kernel_tests=(tests/test_kernels.py tests/test_*kernels*.py "
            """tests/test_*onepass*.py
    tests/test_grouped.py tests/test_fuzz.py tests/test_smce.py tests/test_cutoff.py
    tests/test_ldtc.py tests/test_cdl.py tests/test_sketch*.py tests/*/test_*kernels*.py
    tests/*/test_sketch*.py tests/*/test_patching*.py tests/test_patching*.py)""",
            "kernel_tests=(tests/kernels/test_*.py tests/*/test_*kernels*.py "
            """tests/*/test_*onepass*.py
    tests/test_grouped.py tests/test_fuzz.py tests/metrics/test_smce.py
    tests/metrics/test_cutoff.py tests/metrics/test_ldtc.py tests/metrics/test_cdl.py
    tests/*/test_sketch*.py tests/*/test_patching*.py)""",
        )
    ],
    "README.md": [
        (
            "the test suite (`tests/reference.py` has the slow, obviously-correct versions\n"
            "the fast paths are checked against), `benchmarks/` the timing scripts,",
            "the test suite, mirroring the package (the slow, obviously-correct versions\n"
            "the fast paths are checked against are in `reference_*.py` files beside the\n"
            "tests), `benchmarks/` the timing scripts,",
        )
    ],
    # test files that import twins of several files: the one meant
    "tests/kernels/test_kernels.py": [("the LP of reference.py)", "the LP of reference_ldtc.py)")],
    "tests/metrics/test_scdl_onepass.py": [
        ("slow twin in ``reference.py``", "slow twin in ``reference_scdl.py``")
    ],
    "tests/recalibration/test_patching.py": [
        ("references in tests/reference.py (", "references in reference_*.py ("),
        ("projection of tests/reference.py,", "projection of reference_patching.py,"),
    ],
    "tests/test_repro_table2.py": [("of ``tests/reference.py``;", "of ``reference_*.py``;")],
    "tests/tester/test_smce_null.py": [
        ("program of ``reference.py``", "program of ``reference_smce.py``"),
        ("the LP of reference.py,", "the LP of reference_smce.py,"),
    ],
    # the helpers sort as local modules (ruff's isort)
    "pyproject.toml": [
        (
            'known-local-folder = ["adapters", "cases", "reference"]',
            'known-local-folder = ["adapters", "cases", "decisions_helpers", "reference_*", '
            '"test_*"]',
        )
    ],
}

SHARED_HELPERS = {"conftest.py", "adapters.py", "cases.py"}

CONFTEST_OLD = "sys.path.insert(0, os.path.dirname(__file__))\n"
CONFTEST_NEW = """\
_here = os.path.dirname(os.path.abspath(__file__))
for _folder, _subfolders, _files in sorted(os.walk(_here), reverse=True):
    _subfolders[:] = [s for s in _subfolders if not s.startswith((".", "_"))]
    if _folder not in sys.path:
        sys.path.insert(0, _folder)
"""
CONFTEST_DOC_OLD = """\
* ``tests/`` is put on ``sys.path`` so that the shared helpers
  (``reference.py``, ``cases.py``) import the same way under every pytest
  import mode, not only under the default ``prepend`` mode.
"""
CONFTEST_DOC_NEW = """\
* ``tests/`` and every folder in it are put on ``sys.path``, so that the
  shared helpers (``adapters.py``, ``cases.py``) and the slow twins beside
  the tests (``tests/<package>/reference_<module>.py``) import by their
  basename from any test file, whichever was collected first. Basenames are
  therefore unique across tests/ (``tools/mirror_tests.py`` checks it).
"""

PACKAGE_FOLDERS = {
    "metrics": "metrics",
    "tester": "tester",
    "recalibration": "recalibration",
    "sketch": "sketch",
    "display": "display",
    "online": "online",
    "decisions": "decisions",
    "utilities": "utilities",
    "_input": "input",
    "_kernels": "kernels",
}


class Plan:
    def __init__(self, check):
        self.check = check
        self.notes = []
        self.problems = []

    def say(self, text):
        self.notes.append(text)
        print(("would: " if self.check else "") + text)

    def write(self, path, text):
        if path.exists() and path.read_text() == text:
            return
        self.say(f"write {path.relative_to(ROOT)}")
        if not self.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)


def git(*args):
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True)


# --- 1. moves -----------------------------------------------------------------


def move_files(plan):
    for old, new in MOVES.items():
        src, dst = TESTS / old, TESTS / new
        if not src.exists():
            continue
        if dst.exists():
            plan.problems.append(
                f"tests/{old} and tests/{new} both exist: merge them by hand, then re-run"
            )
            continue
        plan.say(f"git mv tests/{old} tests/{new}")
        if not plan.check:
            dst.parent.mkdir(parents=True, exist_ok=True)
            git("mv", str(src), str(dst))


def unmapped(plan):
    """Test files directly in tests/ that no table mentions, with a suggestion."""
    for path in sorted(TESTS.glob("test_*.py")):
        if path.name in MOVES or path.name in STAY:
            continue
        text = path.read_text()
        packages = collections.Counter(
            m for m in re.findall(r"skcal\.([a-z_]+)", text) if m in PACKAGE_FOLDERS
        )
        where = (
            f"tests/{PACKAGE_FOLDERS[packages.most_common(1)[0][0]]}/"
            if packages
            else "tests/ (no skcal package imported)"
        )
        plan.say(f"left in place, not in MOVES: tests/{path.name} (its imports suggest {where})")


# --- 2. split tests/reference.py ---------------------------------------------


def _segments(text):
    """Top-level definitions of a module: name -> (first line, last line), 1-based."""
    tree = ast.parse(text)
    out = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            out[node.name] = (first, node.end_lineno)
    return out, tree


def _import_bindings(tree):
    """Top-level import statements of a module: bound name -> statement source."""
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for a in node.names:
                stmt = f"import {a.name}" + (f" as {a.asname}" if a.asname else "")
                out[a.asname or a.name.split(".")[0]] = stmt
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            for a in node.names:
                stmt = f"from {node.module} import {a.name}" + (
                    f" as {a.asname}" if a.asname else ""
                )
                out[a.asname or a.name] = stmt
    return out


def _names_used(node):
    """Names a definition reads that it does not import itself."""
    local = {
        a.asname or a.name.split(".")[0]
        for n in ast.walk(node)
        if isinstance(n, (ast.Import, ast.ImportFrom))
        for a in n.names
    }
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} - local


def _users(name):
    """Test files that import ``name`` from reference (after the moves)."""
    pattern = re.compile(r"\b" + re.escape(name) + r"\b")
    out = []
    for path in sorted(TESTS.rglob("*.py")):
        if path.name == "reference.py" or "__pycache__" in path.parts:
            continue
        text = path.read_text()
        if re.search(r"^\s*(from (tests\.)?reference import|import (tests\.)?reference)\b",
                     text, re.M) and pattern.search(text):
            out.append(path)
    return out


def split_reference(plan):
    ref = TESTS / "reference.py"
    if not ref.exists():
        return
    text = ref.read_text()
    lines = text.splitlines(keepends=True)
    segments, tree = _segments(text)
    imports = _import_bindings(tree)
    nodes = {
        n.name: n
        for n in tree.body
        if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
    }
    other = [
        n
        for n in tree.body
        if not isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef, ast.Import,
                              ast.ImportFrom))
        and not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))
    ]
    if other:
        plan.problems.append(
            "tests/reference.py has top-level statements other than definitions and imports "
            f"(lines {[n.lineno for n in other]}): move them by hand, then re-run"
        )
        return
    # where each twin goes: the table, else beside its first user, else beside
    # the first twin it calls
    target = {}
    for name in segments:
        if name in TWINS:
            target[name] = TWINS[name]
    for name in segments:
        if name in target:
            continue
        users = _users(name)
        if users:
            folder = users[0].parent.relative_to(TESTS)
            stem = users[0].stem.removeprefix("test_")
            target[name] = str(folder / f"reference_{stem}.py").removeprefix("./")
            plan.say(f"twin {name} is not in TWINS: put beside its user, in tests/{target[name]}")
    for _ in range(len(segments)):
        for name in segments:
            if name not in target:
                deps = sorted(_names_used(nodes[name]) & set(target))
                if deps:
                    target[name] = target[deps[0]]
                    plan.say(f"twin {name} (no user) put beside {deps[0]}: tests/{target[name]}")
    missing = sorted(set(segments) - set(target))
    if missing:
        plan.problems.append(f"twins with no user and no place in TWINS: {missing}")
        return
    by_file = collections.defaultdict(list)
    for name in segments:  # file order
        by_file[target[name]].append(name)
    for rel, names in by_file.items():
        path = TESTS / rel
        body = path.read_text() if path.exists() else None
        if body is None:
            what = _DOC.get(rel, "skcal")
            title = f"Slow, obviously-correct twins of {what}."
            if len(title) > 96 and " (" in title:
                head, _, tail = title.partition(" (")
                title = f"{head}\n({tail}"
            body = f'"""{title}\n\n'
            body += (
                "Each is written straight from a definition in the papers, with no\n"
                "attempt at speed, so that the fast paths can be checked against it.\n"
                '"""\n'
            )
        # definitions: replace the ones already there, append the others
        for name in names:
            source = "".join(lines[segments[name][0] - 1: segments[name][1]])
            there, _ = _segments(body)
            if name in there:
                blines = body.splitlines(keepends=True)
                a, b = there[name]
                body = "".join(blines[: a - 1]) + source + "".join(blines[b:])
            else:
                body = body.rstrip("\n") + "\n\n\n" + source
        # imports: what the definitions use, from reference.py's imports or
        # from the other twin files
        there, btree = _segments(body)
        have = _import_bindings(btree)
        used = set()
        for node in btree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
                used |= _names_used(node)
        needed = []
        for name in sorted(used - set(there) - set(have)):
            if name in imports:
                needed.append(imports[name])
            elif name in target:
                needed.append(f"from {Path(target[name]).stem} import {name}")
        if needed:
            body = _add_imports(body, btree, needed)
        plan.write(path, body)
    plan.say("git rm tests/reference.py")
    if not plan.check:
        git("rm", "-q", str(ref))


def _add_imports(body, tree, statements):
    """Insert import statements after the module docstring and its imports."""
    blines = body.splitlines(keepends=True)
    after = 0
    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and after == 0:
            after = node.end_lineno
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            after = node.end_lineno
        else:
            break
    block = "".join(s + "\n" for s in sorted(set(statements)))
    head = "".join(blines[:after]).rstrip("\n")
    tail = "".join(blines[after:]).lstrip("\n")
    return head + "\n\n" + block + "\n\n" + tail


# --- 3. imports -----------------------------------------------------------------


def twin_map():
    """Name -> module (basename) of every ``reference_*.py`` twin under tests/."""
    out = {}
    for path in sorted(TESTS.rglob("reference_*.py")):
        segments, _ = _segments(path.read_text())
        for name in segments:
            out.setdefault(name, path.stem)
    return out


def renamed_modules():
    return {
        Path(old).stem: Path(new).stem
        for old, new in MOVES.items()
        if Path(old).stem != Path(new).stem
    }


def rewrite_imports(plan):
    names = twin_map()
    renames = renamed_modules()
    for path in sorted(TESTS.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        text = path.read_text()
        new = _rewrite(text, names, renames, path, plan)
        if new != text:
            plan.say(f"rewrite imports in {path.relative_to(ROOT)}")
            if not plan.check:
                path.write_text(new)


def _rewrite(text, names, renames, path, plan):
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    edits = []  # (first line, last line, replacement)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0:
            module = node.module
            if module in ("reference", "tests.reference"):
                groups = collections.defaultdict(list)
                lost = [a.name for a in node.names if a.name not in names]
                if lost:
                    plan.problems.append(
                        f"{path.relative_to(ROOT)}:{node.lineno}: {lost} in no "
                        "tests/**/reference_*.py"
                    )
                    continue
                for a in node.names:
                    groups[names[a.name]].append(
                        a.name + (f" as {a.asname}" if a.asname else "")
                    )
                edits.append((node, _from_statements(groups, node, lines)))
            elif module in renames:
                groups = {renames[module]: [
                    a.name + (f" as {a.asname}" if a.asname else "") for a in node.names
                ]}
                edits.append((node, _from_statements(groups, node, lines)))
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name in ("reference", "tests.reference"):
                    alias = a.asname or a.name
                    used = {
                        n.attr
                        for n in ast.walk(tree)
                        if isinstance(n, ast.Attribute)
                        and isinstance(n.value, ast.Name)
                        and n.value.id == alias
                    }
                    modules = {names.get(u) for u in used}
                    if len(modules) != 1 or None in modules or len(node.names) != 1 or "." in alias:
                        plan.problems.append(
                            f"{path.relative_to(ROOT)}:{node.lineno}: import {a.name} uses "
                            f"twins of several files ({sorted(used)}): rewrite by hand"
                        )
                        continue
                    stmt = f"import {modules.pop()} as {alias}"
                    edits.append((node, _keep_comment(stmt, node, lines)))
                elif a.name in renames and len(node.names) == 1:
                    alias = a.asname or a.name
                    stmt = f"import {renames[a.name]} as {alias}"
                    edits.append((node, _keep_comment(stmt, node, lines)))
    for node, replacement in sorted(edits, key=lambda e: -e[0].lineno):
        lines[node.lineno - 1: node.end_lineno] = [replacement]
    return "".join(lines)


def _keep_comment(statement, node, lines):
    first = lines[node.lineno - 1]
    indent = first[: len(first) - len(first.lstrip())]
    last = lines[node.end_lineno - 1].rstrip("\n")
    comment = ""
    if "#" in last[node.end_col_offset:]:
        comment = "  " + last[node.end_col_offset:].strip()
    elif node.end_lineno > node.lineno and re.search(r"\(\s*#", first):
        comment = "  " + first[first.index("#"):].strip()
    if statement.endswith(")") and "(\n" in statement:
        head, _, rest = statement.partition("(\n")
        return f"{indent}{head}({comment}\n{rest}\n"
    return indent + statement + comment + "\n"


def _from_statements(groups, node, lines):
    first = lines[node.lineno - 1]
    indent = first[: len(first) - len(first.lstrip())]
    out = []
    for module in sorted(groups):
        stmt = f"from {module} import {', '.join(groups[module])}"
        if len(indent + stmt) > 80:
            inner = "".join(f"{indent}    {n},\n" for n in groups[module])
            stmt = f"from {module} import (\n{inner}{indent})"
        out.append(_keep_comment(stmt, node, lines).rstrip("\n"))
    return "\n".join(out) + "\n"


# --- 4. conftest and unique basenames -------------------------------------------


def fix_conftest(plan):
    path = TESTS / "conftest.py"
    text = path.read_text()
    new = text.replace(CONFTEST_OLD, CONFTEST_NEW).replace(CONFTEST_DOC_OLD, CONFTEST_DOC_NEW)
    if CONFTEST_NEW not in new:
        plan.problems.append("tests/conftest.py: the sys.path line was not found; check it by hand")
    plan.write(path, new)


def check_basenames(plan):
    seen = collections.defaultdict(list)
    for path in TESTS.rglob("*.py"):
        if "__pycache__" in path.parts or path.name in ("conftest.py", "__init__.py"):
            continue
        seen[path.name].append(str(path.relative_to(ROOT)))
    for name, paths in sorted(seen.items()):
        if len(paths) > 1:
            plan.problems.append(f"basename {name} is not unique: {sorted(paths)}")


# --- 5. mentions of the old paths -----------------------------------------------


def fix_mentions(plan):
    files = [ROOT / f for f in DOC_FILES if (ROOT / f).exists()]
    for pattern in DOC_GLOBS:
        files += sorted(ROOT.glob(pattern))
    files += sorted(p for p in TESTS.rglob("*.py") if "__pycache__" not in p.parts)
    replacements = [
        (re.compile(r"tests/" + re.escape(old) + r"\b"), f"tests/{new}")
        for old, new in MOVES.items()
    ]
    for path in files:
        text = path.read_text()
        new = text
        for pattern, replacement in replacements:
            new = pattern.sub(replacement, new)
        if new != text:
            plan.write(path, new)


def fix_reference_mentions(plan):
    """``tests/reference.py`` / ``reference.py`` in a test file: the twin file it imports."""
    if (TESTS / "reference.py").exists():
        return
    where = {p.stem: p for p in TESTS.rglob("reference_*.py")}
    mention = re.compile(r"(?<![\w/])(tests/)?reference\.py\b")
    for path in sorted(TESTS.rglob("*.py")):
        if "__pycache__" in path.parts or path.name == "mirror_tests.py":
            continue
        text = path.read_text()
        if not mention.search(text):
            continue
        imported = sorted(
            set(re.findall(r"^\s*(?:from|import) (reference_\w+)", text, re.M)) & set(where)
        )
        if len(imported) != 1:
            plan.say(
                f"left alone: {path.relative_to(ROOT)} mentions reference.py and imports "
                f"{imported or 'no twin file'}"
            )
            continue
        twin = where[imported[0]]

        def replace(match, twin=twin):
            if match.group(1):
                return str(twin.relative_to(ROOT))
            return twin.name

        out = []
        for line in text.splitlines(keepends=True):
            new = mention.sub(replace, line)
            if len(new.rstrip("\n")) > 100:
                new = mention.sub(twin.name, line)
            out.append(new)
        plan.write(path, "".join(out))


def fix_extra_mentions(plan):
    for rel, pairs in EXTRA_MENTIONS.items():
        path = ROOT / rel
        if not path.exists():
            continue
        text = path.read_text()
        for old, new in pairs:
            text = text.replace(old, new)
        plan.write(path, text)


def report_private_imports(plan):
    """Imports of a public name through a private module (``skcal._x``, ``skcal.y._z``)."""
    import importlib

    public = ["skcal"] + [f"skcal.{p}" for p in PACKAGE_FOLDERS if not p.startswith("_")]
    modules = {m: importlib.import_module(m) for m in public}
    for path in sorted(TESTS.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.ImportFrom) and node.module
                    and node.module.startswith("skcal")
                    and any(part.startswith("_") for part in node.module.split("."))):
                continue
            source = importlib.import_module(node.module)
            for a in node.names:
                obj = getattr(source, a.name, None)
                if a.name.startswith("_") or obj is None:
                    continue
                where = [m for m, mod in modules.items()
                         if getattr(mod, a.name, None) is obj
                         and a.name in getattr(mod, "__all__", [a.name])]
                if where:
                    plan.say(f"{path.relative_to(ROOT)}:{node.lineno}: {a.name} from "
                             f"{node.module}: public in {', '.join(where)}")


# --- main -----------------------------------------------------------------------


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say what would be done")
    parser.add_argument("--no-ruff", action="store_true", help="do not sort the imports")
    parser.add_argument("--private", action="store_true",
                        help="only list private imports of public names (imports skcal)")
    args = parser.parse_args(argv)
    plan = Plan(args.check)
    if args.private:
        report_private_imports(plan)
        return 0
    move_files(plan)
    if not args.check:
        split_reference(plan)
        rewrite_imports(plan)
    else:
        if (TESTS / "reference.py").exists():
            plan.say("split tests/reference.py and rewrite the imports of its twins")
    fix_conftest(plan)
    fix_extra_mentions(plan)
    fix_mentions(plan)
    fix_reference_mentions(plan)
    check_basenames(plan)
    unmapped(plan)
    ruff = shutil.which("ruff")
    if not args.check and not args.no_ruff and ruff:
        subprocess.run([ruff, "check", "-q", "--select", "I", "--fix", str(TESTS)], cwd=ROOT)
    if plan.problems:
        print("\nproblems (fix, then re-run):", *plan.problems, sep="\n  ")
        return 1
    if not plan.notes:
        print("nothing to do: the tests already mirror the packages")
    return 0


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(main())
