"""Importing skcal from an unbuilt source tree says what to do."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import skcal


def test_unbuilt_source_tree_gives_a_clear_error(tmp_path):
    if "editable" in type(skcal.__spec__.loader).__module__:
        pytest.skip("an editable install finds the checkout's own kernels first")
    source = Path(skcal.__file__).parent
    copy = tmp_path / "skcal"
    # the Python files only, as in a fresh checkout before any build
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__"))
    result = subprocess.run(
        [sys.executable, "-c", "import skcal"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "compiled kernels are missing" in result.stderr
    assert "pip install" in result.stderr
