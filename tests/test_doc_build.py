"""The documentation site builds with warnings as errors (README's command).

Skipped where Sphinx and the other ``doc`` extras are not installed (the
``test`` extra does not bring them), unless ``SKCAL_DOC_BUILD=required``:
then missing extras fail the test. ``.ci/run`` runs this test that way, in
its documentation part (an environment with the ``doc`` extras), so that it
runs and can fail somewhere; see the README's "Documentation site" section.
"""

import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
NEEDED = ["sphinx", "numpydoc", "sphinx_gallery", "myst_parser", "pydata_sphinx_theme",
          "matplotlib"]
missing = [name for name in NEEDED if importlib.util.find_spec(name) is None]


@pytest.mark.slow
def test_sphinx_build_without_warnings(tmp_path):
    if missing and os.environ.get("SKCAL_DOC_BUILD") == "required":
        pytest.fail(f"SKCAL_DOC_BUILD=required, but doc extras are not installed: {missing}")
    if missing:
        pytest.skip(f"doc extras not installed: {missing}")
    # -P: the installed skcal is imported, not the source tree; -E -a: a full
    # build, whatever a previous build left; the output goes to tmp_path.
    cmd = [sys.executable, "-P", "-m", "sphinx", "-W", "--keep-going", "-E", "-a",
           "-q", "-b", "html", "-d", str(tmp_path / "doctrees"),
           str(ROOT / "doc"), str(tmp_path / "html")]
    run = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-6000:]
    html = tmp_path / "html"
    for page in ["index.html", "guide.html", "api.html", "bibliography.html",
                 "auto_examples/index.html", "generated/skcal.soft_binned_cdl.html"]:
        assert (html / page).is_file(), page
    # the gallery ran its examples and embedded their figures
    assert list((html / "_images").glob("sphx_glr_*.png"))
