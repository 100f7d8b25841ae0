"""``python -m skcal report``: how files, labels and columns are read (issue 22).

Every expected value is computed here from arrays the test generated, with
the public measures, never by the reading code under test.
"""

import json
import os
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest

import skcal._report_files as report_files
import skcal._report_input as report_input
from skcal import metrics
from skcal.__main__ import main
from skcal._report import MEASURES, calibration_summary


def _run(argv, capsys):
    status = main(["report", *map(str, argv)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _write_csv(path, header, rows):
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(",".join(header) + "\n")
        for row in rows:
            f.write(",".join(row) + "\n")
    return path


def _one_error_line(status, out, err):
    assert status == 2, err
    assert out == ""
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert "Traceback" not in err
    return err


def _multiclass_data(rng, n, k):
    P = rng.dirichlet(np.ones(k) * 0.7, size=n)
    # miscalibrated on purpose, so that a wrong column order changes the value
    y = np.array([rng.choice(k, p=np.roll(q, 1) * 0.5 + q * 0.5) for q in P])
    return y, P


def _cells(P):
    return [[repr(float(v)) for v in q] for q in P]


# --- case 1 and 2: labels, their order, and the class of each column -----------


def test_eleven_numeric_classes_are_read_by_value(tmp_path, capsys):
    rng = np.random.default_rng(0)
    y, P = _multiclass_data(rng, 400, 11)
    cols = [f"p{k}" for k in range(11)]
    path = _write_csv(
        tmp_path / "m.csv",
        ["y", *cols],
        [[str(a), *c] for a, c in zip(y, _cells(P))],
    )
    status, out, err = _run(
        [path, "--label", "y", "--proba", *cols, "--json", "--resamples", "0"], capsys
    )
    assert status == 0, err
    data = json.loads(out)
    expected = metrics.smooth_calibration_error(y, P, labels=list(range(11)))
    assert data["measures"]["smce"]["value"] == expected
    assert data["input"]["classes"] == [str(k) for k in range(11)]
    assert data["input"]["class_order"] == "numeric order"
    status, out, _ = _run(
        [path, "--label", "y", "--proba", *cols, "--resamples", "0"], capsys
    )
    assert "(numeric order): 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10" in out


def _label_sets(rng):
    """Label spellings of many kinds, with the class key of each."""
    k = int(rng.integers(3, 7))
    kind = rng.choice(["text", "negative", "float", "padded", "big"])
    if kind == "text":
        words = ["cat", "dog", "bird", "Cow", "ant", "émeu", "10", "9"]
        return kind, [str(v) for v in rng.choice(words, size=k, replace=False)]
    if kind == "negative":
        return kind, [str(v) for v in rng.choice(np.arange(-12, 12), size=k, replace=False)]
    if kind == "float":
        values = rng.choice([0.5, 1.5, -2.25, 10.0, 3.0, 7.75], k, False)
        return kind, [repr(float(v)) for v in values]
    if kind == "padded":
        return kind, [f"{v:03d}" for v in rng.choice(np.arange(0, 15), size=k, replace=False)]
    return kind, [str(v) for v in rng.choice([2, 10, 11, 100, 1, 20, 3], size=k, replace=False)]


def test_columns_in_any_order_named_any_way(tmp_path, capsys):
    rng = np.random.default_rng(1)
    for case in range(40):
        kind, names = _label_sets(rng)
        k = len(names)
        y_idx, P = _multiclass_data(rng, 60, k)
        labels = np.array(names)[y_idx]
        order = rng.permutation(k)  # column j holds class names[order[j]]
        style = rng.choice(["label", "prefix", "suffix", "opaque"])
        cols = {
            "label": [names[i] for i in order],
            "prefix": [f"p_{names[i]}" for i in order],
            "suffix": [f"prob({names[i]})" for i in order],
            "opaque": [f"score{j}x" for j in range(k)],
        }[style]
        P_cols = P[:, order]
        path = _write_csv(
            tmp_path / f"m{case}.csv",
            ["y", *cols],
            [[a, *c] for a, c in zip(labels, _cells(P_cols))],
        )
        argv = [path, "--label", "y", "--proba", *cols, "--json", "--resamples", "0"]
        if style == "opaque":
            # nothing in the names: --classes is required, in any order
            status, out, err = _run(argv, capsys)
            assert "--classes" in _one_error_line(status, out, err)
            argv += ["--classes", *[names[i] for i in order]]
        status, out, err = _run(argv, capsys)
        assert status == 0, (case, kind, style, err)
        data = json.loads(out)
        # class i is names[i], the probability of class i is P[:, i]
        expected = metrics.smooth_calibration_error(y_idx, P, labels=list(range(k)))
        assert data["measures"]["smce"]["value"] == expected, (case, kind, style)
        if kind in ("negative", "float", "padded", "big"):
            values = [float(v) for v in data["input"]["classes"]]
            assert values == sorted(float(v) for v in names)
            assert data["input"]["class_order"] == "numeric order"
        else:
            assert data["input"]["classes"] == sorted(names)


def test_wrong_column_order_no_longer_changes_the_answer(tmp_path, capsys):
    # the case: columns in an order other than the sorted labels
    rng = np.random.default_rng(2)
    y, P = _multiclass_data(rng, 600, 3)
    names = np.array(["bird", "cat", "dog"])
    order = [2, 0, 1]
    cols = [f"p_{names[i]}" for i in order]
    path = _write_csv(
        tmp_path / "m.csv",
        ["y", *cols],
        [[a, *c] for a, c in zip(names[y], _cells(P[:, order]))],
    )
    status, out, _ = _run(
        [path, "--label", "y", "--proba", *cols, "--json", "--resamples", "0"], capsys
    )
    assert status == 0
    expected = metrics.smooth_calibration_error(names[y], P, labels=list(names))
    assert json.loads(out)["measures"]["smce"]["value"] == expected
    data = json.loads(out)["input"]
    assert data["column_classes"] == {"p_dog": "dog", "p_bird": "bird", "p_cat": "cat"}


def test_binary_label_kinds(tmp_path, capsys):
    rng = np.random.default_rng(3)
    cases = [
        (["0", "1"], None, "1"),
        (["0.0", "1.0"], None, "1.0"),
        (["-1", "1"], None, "1"),
        (["False", "True"], None, "True"),
        (["false", "true"], "TRUE", "true"),
        (["no", "yes"], "yes", "yes"),
        (["01", "02"], "2", "02"),
        (["2", "10"], "10", "10"),
        (["-3.5", "2"], "-3.5", "-3.5"),
    ]
    for i, (spellings, pos, shown) in enumerate(cases):
        p = rng.uniform(size=80)
        hit = rng.uniform(size=80) < p
        pos_spelling = spellings[1] if pos is None else next(
            s for s in spellings if s.lower() == pos.lower() or float_eq(s, pos)
        )
        neg_spelling = next(s for s in spellings if s != pos_spelling)
        labels = np.where(hit, pos_spelling, neg_spelling)
        path = _write_csv(
            tmp_path / f"b{i}.csv", ["y", "p"], [[a, repr(float(b))] for a, b in zip(labels, p)]
        )
        argv = [path, "--label", "y", "--proba", "p", "--json", "--resamples", "0"]
        if pos is not None:
            argv += ["--pos-label", pos]
        status, out, err = _run(argv, capsys)
        assert status == 0, (spellings, err)
        data = json.loads(out)
        assert data["measures"]["smce"]["value"] == metrics.smooth_calibration_error(
            hit.astype(int), p
        )
        assert data["input"]["pos_label"] == shown


def float_eq(a, b):
    try:
        return float(a) == float(b)
    except ValueError:
        return False


def test_two_columns_measure_the_positive_class(tmp_path, capsys):
    rng = np.random.default_rng(4)
    P = rng.dirichlet([1, 1], size=200)
    hit = rng.uniform(size=200) < P[:, 0]
    labels = np.where(hit, "spam", "ham")
    path = _write_csv(
        tmp_path / "two.csv",
        ["y", "p_spam", "p_ham"],
        [[a, *c] for a, c in zip(labels, _cells(P))],
    )
    argv = [path, "--label", "y", "--proba", "p_spam", "p_ham", "--json", "--resamples", "0"]
    status, out, err = _run(argv, capsys)
    assert "--pos-label" in _one_error_line(status, out, err)
    status, out, _ = _run([*argv, "--pos-label", "spam"], capsys)
    assert status == 0
    value = json.loads(out)["measures"]["smce"]["value"]
    assert value == metrics.smooth_calibration_error(hit.astype(int), P[:, 0])


# --- case 3: --pos-label must be a label --------------------------------------------


@pytest.mark.parametrize(
    "labels, pos",
    [
        (["cat", "dog"], "Cat"),
        (["cat", "dog"], "bird"),
        (["0", "1"], "2"),
        (["1", "2"], "3"),
        (["cat"], "dgo"),
        (["yes", "no"], "1"),
    ],
)
def test_pos_label_not_in_the_file_is_an_error(tmp_path, capsys, labels, pos):
    rows = [[labels[i % len(labels)], "0.5"] for i in range(6)]
    path = _write_csv(tmp_path / "x.csv", ["y", "p"], rows)
    status, out, err = _run([path, "--label", "y", "--proba", "p", "--pos-label", pos], capsys)
    err = _one_error_line(status, out, err)
    assert "--pos-label" in err and "not one of the labels" in err


def test_pos_label_of_a_one_class_01_file_is_accepted(tmp_path, capsys):
    path = _write_csv(tmp_path / "x.csv", ["y", "p"], [["0", "0.1"], ["0", "0.3"]])
    status, out, err = _run(
        [path, "--label", "y", "--proba", "p", "--pos-label", "1", "--json",
         "--resamples", "0"],
        capsys,
    )
    assert status == 0, err
    assert json.loads(out)["measures"]["smce"]["value"] == metrics.smooth_calibration_error(
        [0, 0], [0.1, 0.3]
    )


# --- case 4 and 10: refused input, one line, exit status 2 ----------------------------


def test_duplicate_column_names_are_refused(tmp_path, capsys):
    path = _write_csv(tmp_path / "d.csv", ["y", "p", "p"], [["1", "0.5", "0.2"]])
    status, out, err = _run([path, "--label", "y", "--proba", "p"], capsys)
    assert "'p' appears twice" in _one_error_line(status, out, err)
    # also when the duplicated column is not one the report reads
    path = _write_csv(tmp_path / "e.csv", ["y", "p", "z", "z"], [["1", "0.5", "1", "2"]])
    status, out, err = _run([path, "--label", "y", "--proba", "p"], capsys)
    assert "'z' appears twice" in _one_error_line(status, out, err)
    # names that differ only by spaces would be merged once stripped
    path = _write_csv(tmp_path / "f.csv", ["y", "p", " p"], [["1", "0.5", "0.2"]])
    status, out, err = _run([path, "--label", "y", "--proba", "p"], capsys)
    assert "'p' appears twice" in _one_error_line(status, out, err)
    # unnamed columns (trailing commas) are no ambiguity
    path = _write_csv(tmp_path / "g.csv", ["y", "p", "", ""], [["1", "0.5", "", ""]])
    status, out, err = _run([path, "--label", "y", "--proba", "p", "--resamples", "0"], capsys)
    assert status == 0, err


def test_duplicate_columns_in_parquet(tmp_path, capsys):
    # pyarrow built for numpy 2 raises ImportError (not ModuleNotFoundError)
    # beside the oldest supported numpy: skip then too
    pa = pytest.importorskip("pyarrow", exc_type=ImportError)
    pq = pytest.importorskip("pyarrow.parquet", exc_type=ImportError)
    table = pa.Table.from_arrays(
        [pa.array([0, 1]), pa.array([0.2, 0.7]), pa.array([0.1, 0.1])], names=["y", "p", "p"]
    )
    pq.write_table(table, tmp_path / "d.parquet")
    status, out, err = _run([tmp_path / "d.parquet", "--label", "y", "--proba", "p"], capsys)
    assert "'p' appears twice" in _one_error_line(status, out, err)


def _has_pyarrow():
    try:
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        return False
    return True


def test_every_bad_input_is_one_line_and_status_2(tmp_path, capsys):
    good = _write_csv(tmp_path / "g.csv", ["y", "p"], [["0", "0.2"], ["1", "0.7"]])
    corrupt = tmp_path / "c.parquet"
    corrupt.write_bytes(b"PAR1" + os.urandom(200) + b"PAR1")
    huge = tmp_path / "huge.csv"
    huge.write_text("y,p\n0," + "9" * (3 << 20) + "\n")
    quoted = tmp_path / "quoted.csv"
    quoted.write_text('y,p\n0,"' + "1\n" * (1 << 20) + '"\n')
    latin = tmp_path / "latin.csv"
    latin.write_bytes("y,p\né,0.5\n".encode("latin-1"))
    header_only = _write_csv(tmp_path / "h.csv", ["y", "p"], [])
    nan_label = _write_csv(tmp_path / "n.csv", ["y", "p"], [["0", "0.2"], ["nan", "0.3"]])
    weights = _write_csv(
        tmp_path / "w.csv", ["y", "p", "w"], [["0", "0.2", "0"], ["1", "0.3", "0"]]
    )
    weights_nan = _write_csv(
        tmp_path / "wn.csv", ["y", "p", "w"], [["0", "0.2", "1"], ["1", "0.3", "nan"]]
    )
    weights_inf = _write_csv(
        tmp_path / "wi.csv", ["y", "p", "w"], [["0", "0.2", "1e308"], ["1", "0.3", "1e308"]]
    )
    cases = [
        ([tmp_path, "--label", "y", "--proba", "p"], "is a directory"),
        (
            [corrupt, "--label", "y", "--proba", "p"],
            # without a usable pyarrow (the oldest numpy) the same one-line error
            # says what Parquet needs
            "not a readable Parquet file" if _has_pyarrow() else "reading Parquet needs",
        ),
        ([huge, "--label", "y", "--proba", "p"], "longer than 1 MiB"),
        ([quoted, "--label", "y", "--proba", "p"], "longer than 1 MiB"),
        ([latin, "--label", "y", "--proba", "p"], "not UTF-8"),
        ([header_only, "--label", "y", "--proba", "p"], "no data rows"),
        ([nan_label, "--label", "y", "--proba", "p"], "not a finite number"),
        ([weights, "--label", "y", "--proba", "p", "--weight", "w"], "sum to 0.0"),
        ([weights_nan, "--label", "y", "--proba", "p", "--weight", "w"], "(--weight)"),
        ([weights_inf, "--label", "y", "--proba", "p", "--weight", "w"], "finite sum"),
        ([good, "--label", "y", "--proba", "p", "--html", tmp_path / "no" / "r.html"],
         "does not exist"),
        ([good, "--label", "y", "--proba", "p", "--html", tmp_path], "is a directory"),
        ([good, "--label", "y", "--proba", "p", "p"], "twice"),
        ([good, "--label", "p", "--proba", "p"], "both --label and --proba"),
        ([good, "--label", "y", "--proba", "p", "--classes", "0"], "--classes"),
        ([good, "--label", "y", "--proba", "q"], "no column 'q' (--proba)"),
    ]
    for argv, message in cases:
        status, out, err = _run(argv, capsys)
        assert message in _one_error_line(status, out, err), (argv, err)


def test_usage_errors_are_one_line(capsys, tmp_path):
    good = _write_csv(tmp_path / "g.csv", ["y", "p"], [["0", "0.2"], ["1", "0.7"]])
    for argv, message in [
        ([good, "--label", "y"], "--proba"),
        ([good, "--label", "y", "--proba", "p", "--random-state", "-1"], "--random-state"),
        ([good, "--label", "y", "--proba", "p", "--resamples", "-1"], "--resamples"),
    ]:
        with pytest.raises(SystemExit) as exit_info:
            main(["report", *map(str, argv)])
        captured = capsys.readouterr()
        assert exit_info.value.code == 2
        assert captured.err.count("\n") == 1 and message in captured.err


def test_byte_order_mark_is_skipped(tmp_path, capsys):
    rng = np.random.default_rng(5)
    p = rng.uniform(size=100)
    y = (rng.uniform(size=100) < p).astype(int)
    rows = [[str(a), repr(float(b))] for a, b in zip(y, p)]
    plain = _write_csv(tmp_path / "plain.csv", ["y", "p"], rows)
    bom = tmp_path / "bom.csv"
    bom.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    outs = []
    for path in (bom, plain):
        status, out, err = _run(
            [path, "--label", "y", "--proba", "p", "--json", "--resamples", "5"], capsys
        )
        assert status == 0, err
        data = json.loads(out)
        data.pop("file")
        data["input"].pop("file")
        outs.append(data)
    assert outs[0] == outs[1]
    assert outs[0]["measures"]["smce"]["value"] == metrics.smooth_calibration_error(y, p)


# --- case 16: user text never reaches the terminal raw -----------------------------------


def test_escape_sequences_are_escaped_everywhere(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    esc = "\x1b[31m"
    rng = np.random.default_rng(6)
    P = rng.dirichlet(np.ones(3), size=60)
    names = [f"a{esc}", "b", "c"]
    y = np.array(names)[rng.integers(0, 3, size=60)]
    cols = [f"p_{n}" for n in names]
    path = _write_csv(
        tmp_path / f"x{esc}.csv", ["y", *cols], [[a, *c] for a, c in zip(y, _cells(P))]
    )
    html_path = tmp_path / "r.html"
    for extra in ([], ["--json"], ["--html", html_path]):
        status, out, err = _run(
            [path, "--label", "y", "--proba", *cols, "--resamples", "0",
             "--name", f"m{esc}", *extra],
            capsys,
        )
        assert status == 0, err
        assert "\x1b" not in out and "\x1b" not in err
        assert "\\x1b[31m" in out or extra[:1] == ["--html"]
    assert "\x1b" not in html_path.read_text()
    # and in error messages
    status, out, err = _run(
        [path, "--label", "y", "--proba", f"q{esc}", *cols[1:]], capsys
    )
    assert "\x1b" not in _one_error_line(status, out, err)
    status, out, err = _run(
        [tmp_path / f"missing{esc}.csv", "--label", "y", "--proba", "p"], capsys
    )
    assert "\x1b" not in _one_error_line(status, out, err)


# --- case 11: bounded memory, and the same numbers ------------------------------------------


def _grid_file(path, n, seed, weights=None):
    """Predictions on a grid of 101 values, so that the sketch stays small."""
    rng = np.random.default_rng(seed)
    p = rng.integers(0, 101, size=n) / 100
    y = (rng.uniform(size=n) < p).astype(int)
    w = None
    with open(path, "w") as f:
        f.write("y,p" + (",w" if weights is not None else "") + "\n")
        if weights is None:
            f.writelines(f"{a},{b!r}\n" for a, b in zip(y, p.tolist()))
        else:
            w = weights(rng, n)
            f.writelines(f"{a},{b!r},{c!r}\n" for a, b, c in zip(y, p.tolist(), w.tolist()))
    return y, p, w


def _traced_peak(run):
    """Peak traced memory of ``run()`` and its result."""
    tracemalloc.start()
    try:
        result = run()
        return tracemalloc.get_traced_memory()[1], result
    finally:
        tracemalloc.stop()


def test_memory_stays_within_a_chunk_and_the_sketch(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(report_files, "BLOCK_BYTES", 1 << 14)
    monkeypatch.setattr(report_files, "CHUNK_ROWS", 500)
    monkeypatch.setattr(report_input, "IN_MEMORY_ROWS", 1000)
    small = tmp_path / "small.csv"
    _grid_file(small, 3000, seed=7)  # read into a sketch too
    _run([small, "--label", "y", "--proba", "p", "--resamples", "3", "--json"], capsys)
    # the fixed cost of a report (imports done): a small file, also sketched
    fixed, _ = _traced_peak(lambda: _run(
        [small, "--label", "y", "--proba", "p", "--resamples", "3", "--json"], capsys
    ))
    peaks, sizes = [], []
    # 40 and 400 chunks: the extra size (1.2 MB) puts a tenth of it well above
    # the run-to-run spread of the dCE solver's working memory (about +-50 kB
    # through linprog, by hash seed), which no file size changes
    for n in (20_000, 200_000):
        path = tmp_path / f"big{n}.csv"
        _grid_file(path, n, seed=7)
        sizes.append(path.stat().st_size)
        tracemalloc.start()  # after a first run, which imported what the report needs
        try:
            status, out, err = _run(
                [path, "--label", "y", "--proba", "p", "--resamples", "3", "--json"], capsys
            )
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
        assert status == 0, err
        assert json.loads(out)["n"] == n
    # the peak does not grow with the file (reading it whole, as bytes or as
    # one float a cell, would add at least a tenth of the extra size) ...
    assert peaks[1] < peaks[0] + (sizes[1] - sizes[0]) / 10, (peaks, sizes)
    # ... and what the file adds to the fixed cost of a report (the dCE
    # solver's working memory: about 0.2 MB with SciPy's HiGHS binding, 1.8 MB
    # through linprog on SciPy 1.10) stays below the file's size (a chunk, the
    # block, the sketch of 101 values and the tester's resamples of it)
    assert peaks[1] - fixed < sizes[1], (peaks, fixed, sizes)


def test_a_file_without_newline_is_refused_early(tmp_path, capsys):
    path = tmp_path / "flat.csv"
    with open(path, "wb") as f:
        f.write(b"y,p" + b"x" * (64 << 20))  # 64 MiB, no newline
    tracemalloc.start()
    try:
        status, out, err = _run([path, "--label", "y", "--proba", "p"], capsys)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "line 1: longer than 1 MiB" in _one_error_line(status, out, err)
    assert peak < 8 << 20, peak


def test_sketch_path_equals_the_rows(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(report_files, "CHUNK_ROWS", 128)
    monkeypatch.setattr(report_input, "IN_MEMORY_ROWS", 300)
    for seed, weights in [
        (8, None),
        (9, lambda rng, n: np.full(n, 2.5)),
    ]:
        path = tmp_path / f"s{seed}.csv"
        y, p, w = _grid_file(path, 1500, seed=seed, weights=weights)
        argv = [path, "--label", "y", "--proba", "p", "--json", "--resamples", "15"]
        if w is not None:
            argv += ["--weight", "w"]
        status, out, err = _run(argv, capsys)
        assert status == 0, err
        data = json.loads(out)
        # the in-memory path on the same rows: the same grouped statistic,
        # hence the same draws and numbers
        reference = {
            key: m["null_95"]
            for key, m in calibration_summary(
                y.astype(float), p, np.full(p.shape[0], 1.0 if w is None else w[0]),
                n_resamples=15, random_state=0,
            )["measures"].items()
        }
        for key, _, func, _ in MEASURES:
            direct = getattr(metrics, func)(y, p, sample_weight=w)
            assert data["measures"][key]["value"] == pytest.approx(direct, abs=1e-12)
            assert data["measures"][key]["null_95"] == pytest.approx(reference[key], abs=1e-12)
        rows = calibration_summary(
            y.astype(float), p, np.ones_like(p) if w is None else w, n_resamples=0
        )
        assert data["test"]["statistic"] == pytest.approx(rows["test"]["statistic"], abs=1e-12)
        assert data["n"] == 1500


def test_files_that_fit_give_the_numbers_of_the_rows(tmp_path, capsys, monkeypatch):
    # up to IN_MEMORY_ROWS the report is computed on the rows, as before this
    # change: same draws, same numbers (larger files of unequal weights: see
    # test_weighted_files_are_read_into_a_sketch)
    monkeypatch.setattr(report_files, "CHUNK_ROWS", 64)
    monkeypatch.setattr(report_input, "IN_MEMORY_ROWS", 400)
    for n, seed in [(300, 10), (400, 11)]:
        path = tmp_path / f"f{seed}.csv"
        y, p, w = _grid_file(
            path, n, seed=seed, weights=lambda rng, n: rng.uniform(0.5, 2, size=n)
        )
        status, out, err = _run(
            [path, "--label", "y", "--proba", "p", "--weight", "w", "--json",
             "--resamples", "20", "--max-error", "0.02"],
            capsys,
        )
        assert status in (0, 1), err
        data = json.loads(out)
        expected = calibration_summary(
            y.astype(float), p, w, n_resamples=20, max_error=0.02, random_state=0
        )
        assert data["measures"] == json.loads(json.dumps(expected["measures"]))
        assert data["test"] == json.loads(json.dumps(expected["test"]))
        assert data["gate"] == json.loads(json.dumps(expected["gate"]))


def test_weighted_files_are_read_into_a_sketch(tmp_path, capsys, monkeypatch):
    # case 11 for --weight: over IN_MEMORY_ROWS rows of unequal weights the
    # rows were kept (24 bytes a row); now a sketch with each prediction's
    # squared weights, which must equal what the report computes from the rows
    from skcal._grouped import group
    from skcal._report import _row_cells

    monkeypatch.setattr(report_files, "CHUNK_ROWS", 64)
    monkeypatch.setattr(report_input, "IN_MEMORY_ROWS", 400)
    for n, seed, weights in [
        (900, 11, lambda rng, n: rng.uniform(0.5, 2, size=n)),
        (1000, 12, lambda rng, n: rng.integers(0, 4, size=n) * 2.0**-600),  # zeros too
        (700, 13, lambda rng, n: np.where(rng.uniform(size=n) < 0.5, 1.0, 3.0)),
    ]:
        path = tmp_path / f"w{seed}.csv"
        y, p, w = _grid_file(path, n, seed=seed, weights=weights)
        data = report_input.read_report_input(path, "y", ["p"], weight="w")
        assert data.y is None and isinstance(data.sketch, report_input.WeightedSketch)
        G = data.sketch.grouped_statistic()
        # the reader brings the weights to the scale of the measures (largest
        # in [1, 2)): exact, and squares of 2**-600 no longer underflow to 0
        w_read = np.ldexp(w, 1 - np.frexp(w.max())[1])
        rows = _row_cells(group(y.astype(float), p, w_read), y.astype(float), p, w_read)
        assert np.all(rows.neg2 + rows.pos2 > 0)
        assert np.array_equal(G.values, rows.G.values)
        for got, want in zip(data.sketch.squared_weights, (rows.neg2, rows.pos2)):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
        status, out, err = _run(
            [path, "--label", "y", "--proba", "p", "--weight", "w", "--json",
             "--resamples", "20"],
            capsys,
        )
        assert status == 0, err
        summary = json.loads(out)
        expected = calibration_summary(y.astype(float), p, w, n_resamples=0)
        for key, entry in summary["measures"].items():
            assert entry["value"] == pytest.approx(expected["measures"][key]["value"],
                                                   rel=1e-12, abs=1e-15)
            assert entry["low"] <= entry["value"] <= entry["high"] or key == "cdl"
        # --html keeps the rows: the page's tester redraws each weighted row
        data = report_input.read_report_input(
            path, "y", ["p"], weight="w", keep_weighted_rows=True
        )
        assert data.sketch is None and data.w.shape == (n,)


def test_weighted_memory_stays_within_a_chunk_and_the_sketch(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(report_files, "BLOCK_BYTES", 1 << 14)
    monkeypatch.setattr(report_files, "CHUNK_ROWS", 500)
    monkeypatch.setattr(report_input, "IN_MEMORY_ROWS", 1000)
    weights = lambda rng, n: rng.integers(1, 9, size=n) / 4  # noqa: E731
    small = tmp_path / "small.csv"
    _grid_file(small, 3000, seed=7, weights=weights)
    argv = ["--label", "y", "--proba", "p", "--weight", "w", "--resamples", "3", "--json"]
    _run([small, *argv], capsys)
    fixed, _ = _traced_peak(lambda: _run([small, *argv], capsys))  # as above
    peaks, sizes = [], []
    for n in (20_000, 100_000):
        path = tmp_path / f"big{n}.csv"
        _grid_file(path, n, seed=7, weights=weights)
        sizes.append(path.stat().st_size)
        tracemalloc.start()
        try:
            status, out, err = _run([path, *argv], capsys)
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
        assert status == 0, err
        assert json.loads(out)["n"] == n
    # kept rows would add 24 bytes a row (1.9 MB from 20,000 to 100,000 rows)
    assert peaks[1] < peaks[0] + 8 * (100_000 - 20_000), (peaks, sizes)
    assert peaks[1] - fixed < sizes[1], (peaks, fixed, sizes)


def test_help_documents_exit_statuses(tmp_path):
    helptext = subprocess.run(
        [sys.executable, "-m", "skcal", "report", "--help"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,  # outside the source tree, which would shadow the package
    ).stdout
    for text in ("0  report done", "1  the gate", "2  bad input or usage", "numeric order"):
        assert text in helptext


def test_a_class_without_rows_keeps_its_column(tmp_path, capsys):
    rng = np.random.default_rng(12)
    P = rng.dirichlet(np.ones(3), size=50)
    y = rng.choice(["a", "b"], size=50)  # no row of class c
    path = _write_csv(
        tmp_path / "m.csv", ["y", "pc", "pa", "pb"], [[a, *c] for a, c in zip(y, _cells(P))]
    )
    status, out, err = _run(
        [path, "--label", "y", "--proba", "pc", "pa", "pb", "--json", "--resamples", "0"],
        capsys,
    )
    assert status == 0, err
    idx = np.array([{"a": 1, "b": 2}[v] for v in y])  # column j is class j
    expected = metrics.smooth_calibration_error(idx, P, labels=[0, 1, 2])
    assert json.loads(out)["measures"]["smce"]["value"] == expected


def test_html_of_a_file_read_into_a_sketch(tmp_path, capsys, monkeypatch):
    pytest.importorskip("matplotlib")
    monkeypatch.setattr(report_files, "CHUNK_ROWS", 100)
    monkeypatch.setattr(report_input, "IN_MEMORY_ROWS", 200)
    path = tmp_path / "s.csv"
    _grid_file(path, 1000, seed=13)
    page = tmp_path / "r.html"
    status, _, err = _run(
        [path, "--label", "y", "--proba", "p", "--resamples", "3", "--html", page], capsys
    )
    assert status == 0, err
    assert page.read_text().count("data:image/png;base64,") == 2


def test_docstring_examples_of_the_reading_module():
    import doctest

    result = doctest.testmod(report_input, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
