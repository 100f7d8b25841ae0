"""``python -m skcal report`` end to end, on files the tests write."""

import base64
import doctest
import json
import re
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
        value = float(row[len(label) :].split()[0].rstrip("+"))
        assert abs(value - getattr(metrics, func)(y, p, sample_weight=w)) < 5e-5
    assert "calibrated? (test)" in out
    assert err == ""  # no progress off a terminal


def test_json_values_and_gate(tmp_path, capsys):
    path, y, p, _ = _binary_file(tmp_path)
    status, out, _ = _run(
        [path, "--label", "y", "--proba", "p", "--json", "--resamples", "30",
         "--max-error", "0.1"],
        capsys,
    )
    data = json.loads(out)
    for key, _, func, _ in MEASURES:
        m = data["measures"][key]
        assert m["value"] == getattr(metrics, func)(y, p)
        assert m["null_95"] >= m["null_median"]
        assert 0 <= m["low"] <= m["high"]
    assert data["n"] == 300 and data["test"]["measure"] == "smce"
    gate = data["gate"]
    assert gate["mode"] == "certify" and gate["max_error"] == 0.1
    assert (gate["estimate"], gate["low"], gate["high"]) == tuple(
        data["measures"]["dce"][k] for k in ("value", "low", "high")
    )
    assert gate["passed"] == (gate["high"] <= 0.1)
    assert status == (0 if gate["passed"] else 1)


def _known_dce_file(tmp_path, n, dce, seed=0):
    """Predictions uniform on [0.1, 0.85], outcomes ``Bernoulli(p + dce)``.

    Moving every prediction up by ``dce`` calibrates it, so its distance to
    calibration is at most ``dce``; the constant witness 1 shows a smooth
    calibration error of at least ``dce``, and smCE <= dCE (Blasiok et al.):
    the population dCE is exactly ``dce``.
    """
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.1, 0.85, size=n)
    y = (rng.uniform(size=n) < p + dce).astype(int)
    path = _write(tmp_path / f"known_{n}_{seed}.csv", ["y", "p"],
                  [[a, repr(float(b))] for a, b in zip(y, p)])
    return path, y, p


def test_issue_case_fails_in_certify_mode_and_says_why(tmp_path, capsys):
    # issue 23: n = 1,910 predictions at dCE 0.032 passed
    # `--fail-if-miscalibrated 0.02` (the tolerant test only fails at about
    # 0.25 at this n); certify mode must fail, and say why
    path, y, p = _known_dce_file(tmp_path, 1910, 0.032)
    argv = [path, "--label", "y", "--proba", "p", "--resamples", "40"]
    status, out, err = _run(argv + ["--max-error", "0.02"], capsys)
    assert status == 1
    assert "certify mode" in err and "FAILED" in err and "dCE" in err
    assert "do not certify dCE <= 0.02" in err or "significantly above 0.02" in err
    assert "gate (certify mode, max error 0.02): FAILED" in out
    # the old spelling is the same gate now, with a warning
    status_old, out_old, err_old = _run(argv + ["--fail-if-miscalibrated", "0.02"], capsys)
    assert status_old == 1 and "deprecated" in err_old and out_old == out
    # reject mode fails only on significant evidence of dCE > EPS
    status, out, err = _run(argv + ["--max-error", "0.02", "--gate", "reject", "--json"],
                            capsys)
    gate = json.loads(out)["gate"]
    assert gate["mode"] == "reject" and status == (1 if gate["low"] > 0.02 else 0)


def test_gate_exit_status(tmp_path, capsys):
    path, *_ = _binary_file(tmp_path, n=2000, shift=0.2)
    argv = [path, "--label", "y", "--proba", "p", "--resamples", "30"]
    status, out, err = _run(argv + ["--max-error", "0.01"], capsys)
    assert status == 1 and "significantly above 0.01" in err
    status, _, err = _run(argv + ["--max-error", "0.01", "--gate", "reject"], capsys)
    assert status == 1 and "significantly above 0.01" in err
    # a loose bound passes the same data in both modes
    for mode in ("certify", "reject"):
        status, out, _ = _run(argv + ["--max-error", "0.5", "--gate", mode], capsys)
        assert status == 0 and f"({mode} mode, max error 0.5): PASSED" in out
    # a calibrated model at small n: not rejected, but not certified either
    path, *_ = _binary_file(tmp_path, n=200, shift=0.0, seed=5)
    argv = [path, "--label", "y", "--proba", "p", "--resamples", "30", "--max-error"]
    status, out, err = _run(argv + ["0.05"], capsys)
    assert status == 1 and "not enough data to certify" in err + out
    status, _, _ = _run(argv + ["0.05", "--gate", "reject"], capsys)
    assert status == 0
    # the gate needs an interval: too few resamples is a usage error
    status, _, err = _run(argv + ["0.05", "--resamples", "5"], capsys)
    assert status == 2 and "--resamples" in err


def test_gate_decision_reasons():
    entry = {"value": 0.03, "low": 0.01, "high": 0.05}
    certify = report.gate_decision(entry, 0.02, "certify", 0.95)
    assert not certify["passed"] and "do not certify" in certify["reason"]
    assert report.gate_decision(entry, 0.06, "certify", 0.95)["passed"]
    small = report.gate_decision({"value": 0.01, "low": 0.0, "high": 0.05}, 0.02,
                                 "certify", 0.95)
    assert not small["passed"] and small["reason"].startswith("not enough data to certify")
    assert report.gate_decision(entry, 0.02, "reject", 0.95)["passed"]
    assert not report.gate_decision(entry, 0.005, "reject", 0.95)["passed"]
    with pytest.raises(ValueError, match="certify"):
        report.gate_decision(entry, 0.02, "maybe", 0.95)


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


class _Stream:
    def __init__(self, tty):
        self.text, self.tty = "", tty

    def isatty(self):
        return self.tty

    def write(self, s):
        self.text += s

    def flush(self):
        pass


def test_progress_bar_on_a_terminal_plain_lines_otherwise():
    now = [0.0]
    tty = _Stream(True)
    progress = report._Progress(tty, clock=lambda: now[0])
    for done in range(1, 201):
        now[0] += 0.01
        progress(done, 200)
    assert "\r" in tty.text and "200/200" in tty.text and tty.text.endswith("\n")
    assert tty.text.count("\r") <= 25  # at most ten updates a second
    log = _Stream(False)
    now[0] = 0.0
    progress = report._Progress(log, every=5.0, clock=lambda: now[0])
    for done in range(1, 201):
        now[0] += 0.1  # 20 s in all: a line every 5 s, and the last
        progress(done, 200)
    lines = log.text.splitlines()
    assert "\r" not in log.text and 4 <= len(lines) <= 5
    assert re.match(r"skcal report: resampling 5[01]/200 \(5 s\)$", lines[0])
    assert lines[-1].startswith("skcal report: resampling 200/200")
    quick = _Stream(False)
    progress = report._Progress(quick, clock=lambda: 0.0)
    for done in range(1, 11):
        progress(done, 10)
    assert quick.text == ""  # short work prints nothing


def test_multiclass_report_says_top_label(tmp_path, capsys):
    rng = np.random.default_rng(1)
    P = rng.dirichlet(np.ones(3), size=300)
    y = np.array([rng.choice(["a", "b", "c"], p=q) for q in P])
    path = _write(
        tmp_path / "m.csv",
        ["label", "pa", "pb", "pc"],
        [[lab, *map(repr, map(float, q))] for lab, q in zip(y, P)],
    )
    argv = [path, "--label", "label", "--proba", "pa", "pb", "pc", "--resamples", "20",
            "--max-error", "0.5"]
    status, out, _ = _run(argv, capsys)
    assert status == 0
    lines = out.splitlines()
    assert "top-label" in lines[0]
    header = next(line for line in lines if "CI]" in line)
    assert "top-label value" in header
    assert "top-label dCE" in out and "top-label smooth calibration error" in out
    status, out, _ = _run(argv + ["--json"], capsys)
    assert json.loads(out)["target"] == "top-label"


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
        "--max-error",
        "--gate",
        "certify",
        "not enough data to certify",
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


def test_shared_draws_agree_with_slow_twins():
    # the report draws the null and the bootstrap once for every measure;
    # slow twins: the null redrawn row by row (y* ~ Bernoulli(p)) and each
    # measure's own `interval`. Independent draws: agreement within the
    # Monte Carlo error of 200 draws
    from skcal.measures import MEASURE_CLASSES

    classes = {cls._tester_name: cls for cls in MEASURE_CLASSES}
    for seed, shift in [(0, 0.0), (1, 0.08)]:
        rng = np.random.default_rng(seed)
        n = 400
        p = np.round(rng.uniform(0.05, 0.9, size=n), 2)  # ties
        y = (rng.uniform(size=n) < p + shift).astype(float)
        s = report.calibration_summary(y, p, np.ones(n), n_resamples=200, random_state=seed)
        for key in ("smce", "cutoff", "binned_ece"):
            f = getattr(metrics, dict((m[0], m[2]) for m in MEASURES)[key])
            slow = [f((rng.uniform(size=n) < p).astype(float), p) for _ in range(200)]
            m = s["measures"][key]
            spread = np.quantile(slow, 0.9) - np.quantile(slow, 0.1)
            assert abs(m["null_median"] - np.median(slow)) < 0.25 * spread, (seed, key)
            own = classes[key]().interval(y, p, random_state=seed)
            width = own.high - own.low
            assert abs(m["high"] - own.high) < 0.25 * width + 1e-3, (seed, key)
            assert (m["low"] == 0) == (own.low == 0) or abs(m["low"] - own.low) < 0.25 * width


def test_scdl_interval_is_the_measures_finite_sample_bound():
    # the report bootstrapped the plug-in SCDL, whose interval under-covers
    # (it is biased upward); it now gives SoftBinnedCDL.interval's bound, and
    # CDL's lower end on continuous scores is that bound's one-sided end
    from skcal import CalibrationSketch, SoftBinnedCDL

    rng = np.random.default_rng(3)
    n = 3000
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < np.clip(p + 0.04, 0, 1)).astype(float)
    w = np.ones(n)
    summary = report.calibration_summary(y, p, w, n_resamples=40, random_state=0)
    ci = SoftBinnedCDL().interval(y, p, confidence=0.95)
    one_sided = SoftBinnedCDL().interval(y, p, confidence=0.9)
    m = summary["measures"]["scdl"]
    assert m["method"] == "analytic"
    np.testing.assert_allclose([m["low"], m["high"]], [ci.low, ci.high], rtol=1e-9)
    cdl = summary["measures"]["cdl"]
    assert cdl["method"] == "scdl-bound"
    np.testing.assert_allclose(cdl["low"], one_sided.low, rtol=1e-9, atol=1e-15)
    # the same from a sketch of the rows
    sketch = CalibrationSketch().update(y, p)
    from_sketch = report.calibration_summary(sketch, None, None, n_resamples=40)
    np.testing.assert_allclose(
        [from_sketch["measures"]["scdl"]["low"], from_sketch["measures"]["scdl"]["high"]],
        [ci.low, ci.high], rtol=1e-9,
    )
