"""The Python examples of the README and the user guide run as written."""

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "doc").glob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_python_blocks_run(path, capsys, tmp_path, monkeypatch):
    # files the examples write (a figure, a report) go to a scratch directory
    monkeypatch.chdir(tmp_path)
    blocks = BLOCK.findall(path.read_text(encoding="utf-8"))
    namespace = {"__name__": f"doc_{path.stem}"}
    # blocks of one page continue each other, as a reader runs them
    for i, code in enumerate(blocks):
        exec(compile(code, f"{path.name}[block {i}]", "exec"), namespace)
