"""The Python examples of the README and the user guide run as written.

A page's ``python`` blocks run in order in one namespace, as a reader runs
them. Every fenced block is tagged, and a block of Python is tagged
``python``: a block tagged ``py`` or ``pycon``, or not tagged, would never
run here, so it fails the first test (a MyST directive such as
``{include}`` is markup, not a block of code). Pages without Python (the
bibliography, the measures table) get no test of their own that could only
pass.
"""

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "doc").glob("*.md"))]
# a fenced block: its tag (the first word after the fence) and its code
FENCE = re.compile(r"^```[ \t]*(\S*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
# tags of blocks that are not Python and are not run
NOT_PYTHON = {"bash", "console", "csv", "html", "ini", "json", "sh", "shell", "text", "toml",
              "yaml"}


def _is_directive(tag):
    """A MyST directive (``{include}``, ``{eval-rst}``): markup, not code."""
    return tag.startswith("{") and tag.endswith("}")


def _blocks(path):
    return FENCE.findall(path.read_text(encoding="utf-8"))


PAGES = [path for path in DOCS if any(tag == "python" for tag, _ in _blocks(path))]


def test_every_block_is_run_or_not_python():
    wrong = [
        f"{path.name}: a block tagged {tag!r}: tag Python 'python' (it is run), "
        f"anything else with one of {sorted(NOT_PYTHON)}"
        for path in DOCS
        for tag, _ in _blocks(path)
        if tag != "python" and tag not in NOT_PYTHON and not _is_directive(tag)
    ]
    assert not wrong, "\n".join(wrong)
    assert ROOT / "README.md" in PAGES


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_python_blocks_run(path, capsys, tmp_path, monkeypatch):
    # files the examples write (a figure, a report) go to a scratch directory
    monkeypatch.chdir(tmp_path)
    blocks = [code for tag, code in _blocks(path) if tag == "python"]
    namespace = {"__name__": f"doc_{path.stem}"}
    # blocks of one page continue each other, as a reader runs them
    for i, code in enumerate(blocks):
        exec(compile(code, f"{path.name}[block {i}]", "exec"), namespace)
