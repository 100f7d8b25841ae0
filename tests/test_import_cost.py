"""``python -m skcal report`` does not import scikit-learn (nor SciPy's stats, nor pandas).

Importing scikit-learn imports scipy.stats and pandas, about 1.2 s of the
report's 3 s budget at 1e5 rows; the report needs none of it. Checked in a
fresh interpreter, through ``sys.modules``.
"""

import json
import subprocess
import sys

import numpy as np

_HEAVY = ("sklearn", "scipy.stats", "pandas")

_CHECK = """
import json, sys
{body}
print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)))
"""


def _heavy_modules_after(body, cwd):
    code = _CHECK.format(body=body, heavy=_HEAVY)
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_importing_the_report_imports_no_sklearn(tmp_path):
    assert _heavy_modules_after("import skcal.__main__, skcal._report", tmp_path) == []


def test_the_report_of_a_csv_imports_no_sklearn(tmp_path):
    # binary and three classes; table, JSON and the gate: all in one process
    rng = np.random.default_rng(0)
    calls = []
    for name, k in (("binary.csv", 1), ("three.csv", 3)):
        n = 300
        if k == 1:
            p = rng.uniform(size=(n, 1))
            y = (rng.uniform(size=n) < p[:, 0]).astype(int)
        else:
            p = rng.dirichlet(np.ones(k), size=n)
            y = (p.cumsum(axis=1) > rng.uniform(size=(n, 1))).argmax(axis=1)
        columns = ["p"] if k == 1 else [f"p{j}" for j in range(k)]
        lines = ["y," + ",".join(columns)]
        lines += [f"{a}," + ",".join(repr(float(v)) for v in row) for a, row in zip(y, p)]
        (tmp_path / name).write_text("\n".join(lines) + "\n")
        for extra in ([], ["--json"], ["--max-error", "0.5"]):
            calls.append(["report", name, "--label", "y", "--proba", *columns,
                          "--resamples", "40", *extra])
    body = (
        "import contextlib, io\n"
        "from skcal.__main__ import main\n"
        f"for argv in {calls!r}:\n"
        "    with contextlib.redirect_stdout(io.StringIO()):\n"
        "        assert main(argv) == 0, argv\n"
    )
    assert _heavy_modules_after(body, tmp_path) == []
