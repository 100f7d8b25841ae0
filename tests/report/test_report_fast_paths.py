"""The report's fast paths against their slow twins: pyarrow's CSV reader
against the standard library's, and the values read off one shared grouped
statistic against each measure function on the rows."""

import json

import numpy as np
import pytest

import skcal._report as report
import skcal._report_files as report_files
import skcal._report_input as report_input


def _read(path, proba, fast, monkeypatch, **options):
    with monkeypatch.context() as m:
        if not fast:
            m.setattr(report_files, "_arrow_csv_chunks", lambda *args: None)
        try:
            return report_input.read_report_input(path, "y", proba, **options)
        except report_input.ReportInputError as exc:
            return str(exc)


def _same(a, b):
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    if a.n != b.n or a.notes != b.notes:
        return False
    if a.y is None:
        ga, gb = a.sketch.grouped_statistic(), b.sketch.grouped_statistic()
        pairs = [(ga.values, gb.values), (ga.weights, gb.weights),
                 (ga.positives, gb.positives)]
    else:
        pairs = [(a.y, b.y), (a.p, b.p), (a.w, b.w)]
    return all(x.dtype == z.dtype and np.array_equal(x, z) for x, z in pairs)


def _cell(rng, value):
    text = repr(float(value)) if rng.uniform() < 0.7 else f"{value:.6g}"
    r = rng.uniform()
    if r < 0.05:
        return f'"{text}"'
    if r < 0.08:
        return f" {text}"
    return text


def test_arrow_csv_reader_matches_the_standard_library(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow", exc_type=ImportError)
    rng = np.random.default_rng(0)
    bad_cells = ["nan", "inf", "abc", "", "NA", "1,5", "0.5 x", "-0.1", "1e400"]
    label_sets = [["0", "1"], ["1", "-1"], ["true", "False"], ["cat", "dog"],
                  [" a", "b ", '"c,d"']]
    for case in range(150):
        n = int(rng.choice([1, 2, 7, 40]))
        k = int(rng.choice([1, 1, 2, 3]))
        weighted = rng.uniform() < 0.3
        proba = ["p"] if k == 1 else [f"p{j}" for j in range(k)]
        labels = label_sets[case % len(label_sets)] if k <= 2 else ["0", "1", "2"]
        header = ["y", *proba] + (["w"] if weighted else []) + ([""] * (case % 3 == 0))
        lines = [",".join(header)]
        for _ in range(n):
            if k == 1:
                P = [rng.choice([0.0, 0.5, 1.0, rng.uniform()])]
            else:
                P = rng.dirichlet(np.ones(k))
                P[-1] = 1.0 - P[:-1].sum()
                P = np.clip(P, 0.0, 1.0)
            row = [labels[int(rng.integers(len(labels)))]]
            row += [_cell(rng, v) for v in P]
            if weighted:
                row.append(_cell(rng, rng.exponential()))
            if case % 3 == 0:
                row.append("")
            lines.append(",".join(row))
            if rng.uniform() < 0.05:
                lines.append("")  # a blank line
        if case % 4 == 1:  # one bad cell or row somewhere
            i = int(rng.integers(1, len(lines)))
            if lines[i]:
                cells = lines[i].split(",")
                if rng.uniform() < 0.2:
                    cells.append("0")
                else:
                    cells[1 + int(rng.integers(k))] = bad_cells[case % len(bad_cells)]
                lines[i] = ",".join(cells)
        newline = "\r\n" if case % 5 == 2 else "\n"
        data = newline.join(lines) + (newline if case % 2 else "")
        path = tmp_path / f"case{case}.csv"
        path.write_bytes((b"\xef\xbb\xbf" if case % 7 == 3 else b"") + data.encode())
        options = {}
        if weighted:
            options["weight"] = "w"
        if k == 1 and labels[0] in ("cat", " a"):
            options["pos_label"] = labels[1].strip().strip('"')
        slow = _read(path, proba, False, monkeypatch, **options)
        fast = _read(path, proba, True, monkeypatch, **options)
        assert _same(slow, fast), (case, data, slow, fast)


def test_arrow_reader_hands_over_in_a_later_chunk(tmp_path, monkeypatch):
    """A bad cell after the first chunk: the standard library reads on from there."""
    pytest.importorskip("pyarrow", exc_type=ImportError)
    monkeypatch.setattr(report_files, "BLOCK_BYTES", 1 << 10)
    rng = np.random.default_rng(1)
    p = rng.uniform(size=3000)
    rows = [f"{int(rng.uniform() < v)},{float(v)!r}" for v in p]
    rows[2500] = "1,nan"
    path = tmp_path / "late.csv"
    path.write_text("y,p\n" + "\n".join(rows) + "\n")
    slow = _read(path, ["p"], False, monkeypatch)
    fast = _read(path, ["p"], True, monkeypatch)
    assert "data row 2501" in slow
    assert fast == slow
    rows[2500] = f"1,{float(p[2500])!r}"
    path.write_text("y,p\n" + "\n".join(rows) + "\n")
    assert _same(_read(path, ["p"], False, monkeypatch), _read(path, ["p"], True, monkeypatch))


def test_values_from_one_statistic_match_each_function():
    objects = {key: report._measure_object(key) for key, *_ in report.MEASURES}
    rng = np.random.default_rng(2)
    for case in range(120):
        n = int(rng.choice([1, 2, 5, 30, 300]))
        p = [rng.uniform(size=n), rng.choice([0.0, 0.25, 0.5, 1.0], size=n),
             np.round(rng.uniform(size=n), 2), rng.choice([0.0, 1.0], size=n)][case % 4]
        y = (rng.uniform(size=n) < p).astype(np.float64)
        if case % 7 == 0:
            y[:] = y[0]  # one class
        w = np.ones(n)
        if case % 3 == 0:
            w = rng.exponential(size=n) * rng.choice([1e-3, 1.0, 1e3])
        elif case % 5 == 0:
            w = np.full(n, 3.0)
        fast = report._row_values(objects, y, p, w)
        for key, m in objects.items():
            slow = float(m._function(y, p, sample_weight=w))
            assert fast[key] == slow, (case, key, fast[key], slow)


@pytest.mark.parametrize("data", [
    b"y,p\n1,0.5\r0,0.2\n1,0.3\n",  # a lone carriage return: refused, as before
    b'y,p\n"1\r",0.5\n0,0.2\n',  # ... read as part of a quoted cell
    b'y,p\n"1\n",0.5\n0,0.2\n',
    b"y,p\r\n1,0.5\n0,0.2\r\n",
    b"y,p\n", b"", b"y,q\n1,0.5\n", b"y,p\n\xe9,0.5\n", b"y,p\n1,1.5\n",
    b"y,p\n1, 0.5 \n0,+.2\n", b"y,p\n1,0_2\n", b"y,p\n1,0.5,\n", b"y,p\n1,0.5\r",
])
def test_arrow_csv_reader_on_odd_files(tmp_path, monkeypatch, data):
    pytest.importorskip("pyarrow", exc_type=ImportError)
    path = tmp_path / "odd.csv"
    path.write_bytes(data)
    slow = _read(path, ["p"], False, monkeypatch)
    fast = _read(path, ["p"], True, monkeypatch)
    assert _same(slow, fast), (slow, fast)


def test_report_measures_are_the_measure_classes():
    # the report reads the registry without skcal.measures (scikit-learn
    # estimators): same options, same function, same grouped core
    from skcal import _specs, measures
    from skcal._input import binary_input

    rng = np.random.default_rng(3)
    p = np.round(rng.uniform(size=200), 2)
    y = (rng.uniform(size=200) < p).astype(float)
    w = rng.exponential(size=200)
    G = binary_input(y, p, w).canonical_statistic()
    keys = [key for key, *_ in report.MEASURES]
    assert keys == [s.tester_name for s in _specs.specs() if s.proba == "binary" and s.report]
    for key in keys:
        ours = report._measure_object(key)
        cls = next(c for c in measures.MEASURE_CLASSES if c._tester_name == key)
        theirs = cls()
        assert ours.get_params() == theirs.get_params(deep=False), key
        for name, value in theirs.get_params(deep=False).items():
            assert getattr(ours, name) == value, (key, name)
        assert ours._function is theirs._function, key
        assert ours._max_value == theirs._max_value, key
        # (dCE re-solves from its last basis: each value from a fresh start)
        report._forget_dce_session()
        value = ours._grouped_core(G)
        report._forget_dce_session()
        assert value == theirs._grouped_core(G), key


def test_dce_solves_in_a_second_thread_give_the_same_summary(monkeypatch):
    # slow twin: every grouped core in this thread, in the same order; the
    # summaries agree bit for bit (dCE's warm starts run in the same order)
    rng = np.random.default_rng(4)
    for case in range(4):
        n = int(rng.choice([40, 300]))
        p = rng.uniform(size=n) if case % 2 else np.round(rng.uniform(size=n), 2)
        y = (rng.uniform(size=n) < np.clip(p + 0.05 * (case % 3), 0, 1)).astype(float)
        w = np.ones(n) if case % 3 else rng.exponential(size=n)
        kwargs = dict(n_resamples=30, max_error=0.05, random_state=case)
        monkeypatch.setattr(report, "_SOLVED_APART", ("dce",))
        fast = report.calibration_summary(y, p, w, **kwargs)
        monkeypatch.setattr(report, "_SOLVED_APART", ())
        slow = report.calibration_summary(y, p, w, **kwargs)
        assert json.dumps(fast) == json.dumps(slow), case
