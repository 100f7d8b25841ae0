"""``python -m skcal report`` end to end, on files the tests write."""

import base64
import doctest
import json
import subprocess
import sys
from html.parser import HTMLParser

import numpy as np
import pytest

import skcal._report as report
from skcal import metrics
from skcal.__main__ import main
from skcal._report import MEASURES


def _write(path, header, rows):
    path.write_text(
        ",".join(header) + "\n" + "\n".join(",".join(map(str, r)) for r in rows) + "\n"
    )
    return path


def _binary_file(tmp_path, n=300, seed=0, shift=0.0, weights=False):
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < np.clip(p + shift, 0, 1)).astype(int)
    w = rng.uniform(0.5, 2, size=n)
    header = ["y", "p"] + (["w"] if weights else [])
    rows = [
        [a, repr(float(b))] + ([repr(float(c))] if weights else [])
        for a, b, c in zip(y, p, w)
    ]
    return _write(tmp_path / "preds.csv", header, rows), y, p, w


def _run(argv, capsys):
    status = main(["report", *map(str, argv)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_table_has_every_measure_equal_to_direct_calls(tmp_path, capsys):
    path, y, p, w = _binary_file(tmp_path, weights=True)
    status, out, err = _run(
        [path, "--label", "y", "--proba", "p", "--weight", "w", "--resamples", "20"],
        capsys,
    )
    assert status == 0, err
    lines = out.splitlines()
    assert max(map(len, lines)) <= 80
    for _, label, func, _ in MEASURES:
        row = next(line for line in lines if line.startswith(label))
        value = float(row[len(label) :].split()[0])
        assert abs(value - getattr(metrics, func)(y, p, sample_weight=w)) < 5e-5
    assert "calibrated? (test)" in out
    assert err == ""  # no progress off a terminal


def test_json_values_and_gate(tmp_path, capsys):
    path, y, p, _ = _binary_file(tmp_path)
    status, out, _ = _run(
        [
            path,
            "--label",
            "y",
            "--proba",
            "p",
            "--json",
            "--resamples",
            "10",
            "--fail-if-miscalibrated",
            "0",
        ],
        capsys,
    )
    data = json.loads(out)
    for key, _, func, _ in MEASURES:
        assert data["measures"][key]["value"] == getattr(metrics, func)(y, p)
        assert data["measures"][key]["null_95"] >= data["measures"][key]["null_median"]
    assert data["n"] == 300 and data["test"]["measure"] == "smce"
    assert status == (0 if data["gate"]["calibrated"] else 1)


def test_gate_exit_status(tmp_path, capsys):
    path, *_ = _binary_file(tmp_path, n=2000, shift=0.2)
    status, _, err = _run(
        [
            path,
            "--label",
            "y",
            "--proba",
            "p",
            "--resamples",
            "0",
            "--fail-if-miscalibrated",
            "0.01",
        ],
        capsys,
    )
    assert status == 1 and "not calibrated within 0.01" in err
    # a loose tolerance passes the same data
    status, out, _ = _run(
        [
            path,
            "--label",
            "y",
            "--proba",
            "p",
            "--resamples",
            "0",
            "--fail-if-miscalibrated",
            "0.15",
        ],
        capsys,
    )
    assert status == 0 and "pass" in out
    path, *_ = _binary_file(tmp_path, n=2000, shift=0.0, seed=5)
    status, _, _ = _run(
        [
            path,
            "--label",
            "y",
            "--proba",
            "p",
            "--resamples",
            "0",
            "--fail-if-miscalibrated",
            "0",
        ],
        capsys,
    )
    assert status == 0


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.values, self.images, self.verdict = {}, [], None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "td" and "data-measure" in attrs:
            self.values[attrs["data-measure"]] = float(attrs["data-value"])
        if tag == "img":
            self.images.append(attrs["src"])
        if attrs.get("id") == "verdict":
            self.verdict = attrs["data-calibrated"]


def test_html_page_is_self_contained_with_exact_values(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    path, y, p, w = _binary_file(tmp_path, weights=True)
    page = tmp_path / "r.html"
    status, _, _ = _run(
        [
            path,
            "--label",
            "y",
            "--proba",
            "p",
            "--weight",
            "w",
            "--resamples",
            "10",
            "--html",
            page,
        ],
        capsys,
    )
    assert status == 0
    parser = _Page()
    parser.feed(page.read_text())
    assert set(parser.values) == {m[0] for m in MEASURES}
    for key, _, func, _ in MEASURES:
        assert parser.values[key] == getattr(metrics, func)(y, p, sample_weight=w)
    assert len(parser.images) == 2
    for src in parser.images:
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1])[:4] == b"\x89PNG"
    assert parser.verdict in ("true", "false")
    assert "http" not in page.read_text()  # nothing fetched from elsewhere


def test_multiclass_columns_top_label(tmp_path, capsys):
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(3), size=200)
    y = np.array([rng.choice(["a", "b", "c"], p=q) for q in P])
    path = _write(
        tmp_path / "m.csv",
        ["label", "pa", "pb", "pc"],
        [[lab, *map(repr, map(float, q))] for lab, q in zip(y, P)],
    )
    status, out, _ = _run(
        [
            path,
            "--label",
            "label",
            "--proba",
            "pa",
            "pb",
            "pc",
            "--json",
            "--resamples",
            "5",
        ],
        capsys,
    )
    assert status == 0
    data = json.loads(out)
    direct = metrics.smooth_calibration_error(y, P, labels=["a", "b", "c"])
    assert abs(data["measures"]["smce"]["value"] - direct) < 1e-12


@pytest.mark.parametrize(
    "header, rows, argv, message",
    [
        (["y", "p"], [[0, 0.2]], ["--proba", "q"], "no column 'q'"),
        (["y", "p"], [[0, 0.2], [1, "abc"]], [], "'abc' is not a finite number"),
        (["y", "p"], [[0, 0.2], [1, ""]], [], "'' is not a finite number"),
        (["y", "p"], [[0, 0.2], [1, 1.5]], [], "outside [0, 1]"),
        (["y", "p"], [[0, -0.1]], [], "outside [0, 1]"),
        (["y", "p"], [[0, "nan"]], [], "not a finite number"),
        (
            ["y", "p0", "p1"],
            [[0, 0.2, 0.8], [1, 0.5, 0.6]],
            ["--proba", "p0", "p1"],
            "sum to",
        ),
        (["y", "p"], [], [], "no data rows"),
        (["y", "p"], [[0, 0.2, 3]], [], "3 cells"),
        (["y", "p"], [["cat", 0.2], ["dog", 0.4]], [], "--pos-label"),
        (["y", "p", "w"], [[0, 0.2, -1]], ["--weight", "w"], "negative weight"),
        (["y", "p"], [["", 0.2]], [], "label is empty"),
    ],
)
def test_bad_files_give_clear_errors(tmp_path, capsys, header, rows, argv, message):
    path = _write(tmp_path / "bad.csv", header, rows)
    if "--proba" not in argv:
        argv = [*argv, "--proba", "p"]
    status, out, err = _run([path, "--label", "y", *argv], capsys)
    assert status == 2
    assert message in err and "Traceback" not in err
    assert out == ""


def test_missing_and_empty_files(tmp_path, capsys):
    status, _, err = _run(
        [tmp_path / "nope.csv", "--label", "y", "--proba", "p"], capsys
    )
    assert status == 2 and "no such file" in err
    (tmp_path / "empty.csv").write_text("")
    status, _, err = _run(
        [tmp_path / "empty.csv", "--label", "y", "--proba", "p"], capsys
    )
    assert status == 2 and "empty" in err


def test_progress_only_on_a_terminal():
    class Tty:
        def __init__(self):
            self.text = ""

        def isatty(self):
            return True

        def write(self, s):
            self.text += s

        def flush(self):
            pass

    tty = Tty()
    progress = report._progress_printer(tty)
    progress(1, 2)
    progress(2, 2)
    assert "2/2" in tty.text and tty.text.endswith("\n")
    progress(0, 0)
    assert tty.text.endswith("resamples)...\n")
    assert report._progress_printer(open(__file__)) is None


def test_command_line_subprocess_and_help(tmp_path):
    path, *_ = _binary_file(tmp_path)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "skcal",
            "report",
            str(path),
            "--label",
            "y",
            "--proba",
            "p",
            "--resamples",
            "5",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,  # outside the source tree, which would shadow the package
    )
    assert proc.returncode == 0 and "smooth calibration error" in proc.stdout
    assert proc.stderr == ""
    helptext = subprocess.run(
        [sys.executable, "-m", "skcal", "report", "--help"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,  # outside the source tree, which would shadow the package
    ).stdout
    for option in (
        "--label",
        "--proba",
        "--weight",
        "--html",
        "--json",
        "--fail-if-miscalibrated",
        "exit status",
    ):
        assert option in helptext
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "skcal",
            "report",
            str(path),
            "--label",
            "y",
            "--proba",
            "p",
            "--fail-if-miscalibrated",
            "1.5",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,  # outside the source tree, which would shadow the package
    )
    assert bad.returncode == 2 and "[0, 1)" in bad.stderr


def test_docstring_examples_of_the_module():
    result = doctest.testmod(report, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_parquet_when_pandas_and_pyarrow_are_installed(tmp_path, capsys):
    pd = pytest.importorskip("pandas")
    try:
        import pyarrow  # noqa: F401
    except ImportError as error:  # absent, or built for another numpy
        pytest.skip(f"pyarrow cannot be imported: {error}")
    rng = np.random.default_rng(0)
    p = rng.uniform(size=100)
    y = (rng.uniform(size=100) < p).astype(int)
    pd.DataFrame({"y": y, "p": p}).to_parquet(tmp_path / "x.parquet")
    status, out, _ = _run(
        [tmp_path / "x.parquet", "--label", "y", "--proba", "p", "--json"], capsys
    )
    assert status == 0
    value = json.loads(out)["measures"]["smce"]["value"]
    assert value == metrics.smooth_calibration_error(y, p)


def test_gate_tolerance_that_can_never_reject_is_an_error(tmp_path, capsys):
    path, *_ = _binary_file(tmp_path, n=300, shift=0.0, seed=6)
    status, _, err = _run(
        [path, "--label", "y", "--proba", "p", "--resamples", "0",
         "--fail-if-miscalibrated", "0.6"],
        capsys,
    )
    assert status == 2 and "could never reject" in err
