"""Calibration report of a file of predictions: ``python -m skcal report``.

The same content three ways: a terminal table (80 columns), a self-contained
HTML page with the pictures embedded, and JSON. The scale of every measure
comes from the resampling null: outcomes redrawn as ``y* ~ Bernoulli(p)``
from the predictions themselves, i.e. what a perfectly calibrated model with
exactly these predictions would score.
"""

import base64
import csv
import html
import io
import json
import math
import os
import sys

import numpy as np
from sklearn.utils import check_random_state

from . import metrics
from ._validation import check_binary_calibration_input
from .measures import MEASURE_CLASSES
from .tester import CalibrationTester

__all__ = ["MEASURES", "calibration_summary", "format_table", "read_predictions"]

# (key, short label, function in skcal.metrics, one plain line), read off the
# measure classes (the registry): every binary measure. Each line fits 80
# columns after a two-space indent and the label.
MEASURES = [
    (cls._tester_name, cls._label, cls._function_name, cls._plain)
    for cls in MEASURE_CLASSES
    if cls._proba == "binary"
]


def _measure(key):
    func_name = {m[0]: m[2] for m in MEASURES}[key]
    return getattr(metrics, func_name)


def calibration_summary(
    y,
    p,
    w,
    *,
    n_resamples=200,
    n_test_resamples=999,
    tolerance=None,
    random_state=0,
    progress=None,
):
    """Every measure, its scale under the calibrated null, and the test verdict.

    Parameters
    ----------
    y, p, w : ndarray of shape (n_samples,)
        Binary outcomes, predictions and weights, already validated.
    n_resamples : int, default=200
        Data sets ``y* ~ Bernoulli(p)`` drawn for the scale of each measure.
    n_test_resamples : int, default=999
        Resamples of the calibration test (smooth calibration error,
        ``alpha = 0.05``).
    tolerance : float, default=None
        When given, also test the null "distance to calibration at most
        ``tolerance``" (the CI gate).
    random_state : int, RandomState instance or None, default=0
    progress : callable, default=None
        Called as ``progress(done, total)`` during the resampling, and as
        ``progress(0, 0)`` before the test.

    Returns
    -------
    summary : dict
        ``n``, ``measures`` (key to ``{"value", "null_median", "null_95"}``),
        ``test`` and, with ``tolerance``, ``gate``: each a dict of the
        :class:`~skcal.CalibrationTestResult` fields.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal._report import calibration_summary
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=200)
    >>> y = (rng.uniform(size=200) < p).astype(float)
    >>> s = calibration_summary(y, p, np.ones(200), n_resamples=20,
    ...                         n_test_resamples=99)
    >>> s["test"]["calibrated"], sorted(s["measures"])[:2]
    (True, ['binned_ece', 'cdl'])
    """
    rng = check_random_state(random_state)
    funcs = {key: _measure(key) for key, *_ in MEASURES}
    values = {key: float(f(y, p, sample_weight=w)) for key, f in funcs.items()}
    null = {key: np.empty(n_resamples) for key in funcs}
    for b in range(n_resamples):
        y_star = (rng.uniform(size=p.shape[0]) < p).astype(np.float64)
        for key, f in funcs.items():
            null[key][b] = f(y_star, p, sample_weight=w)
        if progress is not None:
            progress(b + 1, n_resamples)
    measures = {}
    for key in funcs:
        entry = {"value": values[key], "null_median": None, "null_95": None}
        if n_resamples:
            entry["null_median"] = float(np.median(null[key]))
            entry["null_95"] = float(np.quantile(null[key], 0.95))
        measures[key] = entry
    seed = int(rng.randint(2**31 - 1))
    if progress is not None:
        progress(0, 0)  # announces the test, whose resamples come next
    # the fixed Monte Carlo test: exactly n_test_resamples draws, so the
    # p-value is exact at resolution 1 / (n_test_resamples + 1)
    tester = CalibrationTester(
        n_resamples=n_test_resamples, resampling_risk=None, random_state=seed
    )
    summary = {
        "n": int(p.shape[0]),
        "measures": measures,
        "test": _result_dict(tester.fit(y, p, sample_weight=w).result_),
    }
    if tolerance is not None:
        gate = CalibrationTester(
            tolerance=tolerance,
            n_resamples=n_test_resamples,
            resampling_risk=None,
            random_state=seed,
        )
        summary["gate"] = _result_dict(gate.fit(y, p, sample_weight=w).result_)
    summary["_tester"] = tester
    return summary


def _result_dict(result):
    out = {}
    for name in result.__dataclass_fields__:
        value = getattr(result, name)
        out[name] = value.item() if isinstance(value, np.generic) else value
    return out


def _cell(value, width):
    return f"{value:>{width}.4f}"


def format_table(summaries, *, title=None):
    """The terminal report: one column per model, every line <= 80 columns.

    Parameters
    ----------
    summaries : dict
        Model name to :func:`calibration_summary`.
    title : str, default=None
        First line.

    Returns
    -------
    lines : list of str

    Examples
    --------
    >>> import numpy as np
    >>> from skcal._report import calibration_summary, format_table
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=100)
    >>> y = (rng.uniform(size=100) < p).astype(float)
    >>> s = calibration_summary(y, p, np.ones(100), n_resamples=10,
    ...                         n_test_resamples=19)
    >>> max(len(line) for line in format_table({"model": s})) <= 80
    True
    """
    names = list(summaries)
    label_w = max(len(m[1]) for m in MEASURES)
    # each model: its value and the 95% level of a calibrated model
    col_w = max(17, *(len(n) for n in names))
    lines = [] if title is None else [title, ""]
    head1 = " " * label_w + "".join(f"  {n:>{col_w}}" for n in names)
    head2 = " " * label_w + "".join(f"  {'value (calib.)*':>{col_w}}" for _ in names)
    lines += [head1, head2, "-" * len(head2)]
    for key, label, _, _ in MEASURES:
        cells = []
        for n in names:
            m = summaries[n]["measures"][key]
            ref = "" if m["null_95"] is None else f" ({m['null_95']:.3f})"
            cells.append(f"  {m['value']:.4f}{ref}".rjust(col_w + 2))
        lines.append(f"{label:<{label_w}}" + "".join(cells))
    verdict = "".join(
        f"  {'yes' if summaries[n]['test']['calibrated'] else 'NO':>{col_w}}"
        for n in names
    )
    lines.append(f"{'calibrated? (test)':<{label_w}}" + verdict)
    pvals = "".join(f"  {summaries[n]['test']['p_value']:>{col_w}.3f}" for n in names)
    lines.append(f"{'  p-value':<{label_w}}" + pvals)
    if all("gate" in summaries[n] for n in names):
        tol = summaries[names[0]]["gate"]["tolerance"]
        gate = "".join(
            f"  {'pass' if summaries[n]['gate']['calibrated'] else 'FAIL':>{col_w}}"
            for n in names
        )
        lines.append(f"{f'gate: within {tol:g}?':<{label_w}}" + gate)
    n = summaries[names[0]]["n"]
    lines += [
        "",
        "All measures are in probability units; 0 means perfectly calibrated.",
        "* in brackets: what a perfectly calibrated model with these",
        f"  predictions stays below in 95% of samples of this size (n = {n});",
        "  a larger value is more bias than chance alone explains.",
        "calibrated?: smooth calibration error tested against that chance",
        "  level (alpha = 0.05); NO means the bias is statistically clear.",
        "",
    ]
    for _, label, _, meaning in MEASURES:
        lines.append(f"{label:<{label_w}}  {meaning}")
    return lines


# --- reading a file ------------------------------------------------------------


class ReportInputError(ValueError):
    """A problem with the input file, worded for the command line."""


def _read_rows(path):
    if str(path).endswith((".parquet", ".pq")):
        try:
            import pandas as pd

            frame = pd.read_parquet(path)
        except ImportError as exc:
            raise ReportInputError(
                f"{path}: reading Parquet needs pandas and pyarrow "
                "(pip install pandas pyarrow); or save the file as CSV."
            ) from exc
        return list(frame.columns.astype(str)), {
            str(c): frame[c].tolist() for c in frame.columns
        }
    try:
        with open(path, newline="") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            if header is None:
                raise ReportInputError(f"{path}: the file is empty.")
            header = [h.strip() for h in header]
            rows = list(reader)
    except FileNotFoundError as exc:
        raise ReportInputError(f"{path}: no such file.") from exc
    except UnicodeDecodeError as exc:
        raise ReportInputError(f"{path}: not a text (CSV) file.") from exc
    columns = {h: [] for h in header}
    for line_no, row in enumerate(rows, start=2):
        if not row:
            continue
        if len(row) != len(header):
            raise ReportInputError(
                f"{path}, line {line_no}: {len(row)} cells, but the header has "
                f"{len(header)}."
            )
        for h, cell in zip(header, row):
            columns[h].append(cell.strip())
    return header, columns


def _numeric(path, name, cells):
    out = np.empty(len(cells))
    for i, cell in enumerate(cells):
        try:
            out[i] = float(cell)
        except (TypeError, ValueError):
            out[i] = np.nan
        if not math.isfinite(out[i]):
            raise ReportInputError(
                f"{path}, column {name!r}, data row {i + 1}: {cell!r} is not a "
                "finite number."
            )
    return out


def read_predictions(path, label, proba, weight=None, classes=None, pos_label=None):
    """Read and check a file of labels and predicted probabilities.

    Parameters
    ----------
    path : str
        CSV (or Parquet, with pandas and pyarrow installed).
    label : str
        Column of observed labels.
    proba : list of str
        One column (probability of the positive class) or one per class.
    weight : str, default=None
        Column of sample weights.
    classes : list of str, default=None
        The class of each probability column (several columns); by default
        the sorted distinct labels, when there are as many as columns.
    pos_label : str, default=None
        Positive class for one probability column; needed unless the labels
        are 0/1 (or -1/1).

    Returns
    -------
    y, p, w : ndarray
        Binary (or top-label) outcomes, predictions and weights.

    Examples
    --------
    >>> import os, tempfile
    >>> from skcal._report import read_predictions
    >>> path = os.path.join(tempfile.mkdtemp(), "preds.csv")
    >>> _ = open(path, "w").write("y,p\\n0,0.2\\n1,0.7\\n1,0.9\\n")
    >>> y, p, w = read_predictions(path, "y", ["p"])
    >>> y.tolist(), p.tolist(), w.tolist()
    ([0.0, 1.0, 1.0], [0.2, 0.7, 0.9], [1.0, 1.0, 1.0])
    """
    header, columns = _read_rows(path)
    for name in [label, *proba, *([weight] if weight else [])]:
        if name not in columns:
            raise ReportInputError(
                f"{path}: no column {name!r}; the columns are {header}."
            )
    n = len(columns[label])
    if n == 0:
        raise ReportInputError(f"{path}: no data rows.")
    raw_labels = [str(v) for v in columns[label]]
    if any(v == "" for v in raw_labels):
        i = raw_labels.index("")
        raise ReportInputError(
            f"{path}, column {label!r}, data row {i + 1}: the label is empty."
        )
    P = np.column_stack([_numeric(path, c, columns[c]) for c in proba])
    for j, c in enumerate(proba):
        bad = np.flatnonzero((P[:, j] < 0) | (P[:, j] > 1))
        if bad.size:
            raise ReportInputError(
                f"{path}, column {c!r}, data row {bad[0] + 1}: probability "
                f"{P[bad[0], j]!r} is outside [0, 1]."
            )
    w = None if weight is None else _numeric(path, weight, columns[weight])
    if w is not None and np.any(w < 0):
        i = int(np.flatnonzero(w < 0)[0])
        raise ReportInputError(
            f"{path}, column {weight!r}, data row {i + 1}: negative weight {w[i]!r}."
        )
    labels = np.array(raw_labels)
    if len(proba) == 1:
        distinct = sorted(set(raw_labels))
        if pos_label is None:
            if set(distinct) <= {"0", "1", "0.0", "1.0", "-1", "-1.0"}:
                y_bin = np.array([float(v) == 1.0 for v in raw_labels])
                if {"0", "0.0"} & set(distinct) and {"-1", "-1.0"} & set(distinct):
                    raise ReportInputError(
                        f"{path}: the labels in {label!r} are {distinct}; name "
                        "the positive class with --pos-label."
                    )
            else:
                raise ReportInputError(
                    f"{path}: the labels in {label!r} are {distinct[:5]}, not 0/1; "
                    "name the positive class with --pos-label."
                )
        else:
            if len(distinct) > 2:
                raise ReportInputError(
                    f"{path}: column {label!r} has {len(distinct)} distinct labels "
                    "but one probability column; give one column per class."
                )
            y_bin = labels == pos_label
        y_true, y_prob = y_bin.astype(np.float64), P[:, 0]
        labels_arg = None
    else:
        sums = P.sum(axis=1)
        bad = np.flatnonzero(np.abs(sums - 1) > 1e-6)
        if bad.size:
            raise ReportInputError(
                f"{path}, data row {bad[0] + 1}: the probabilities in {proba} sum "
                f"to {sums[bad[0]]!r}, not 1."
            )
        cls = sorted(set(raw_labels)) if classes is None else list(classes)
        if len(cls) != len(proba):
            raise ReportInputError(
                f"{path}: {len(proba)} probability columns but the labels in "
                f"{label!r} are {cls[:10]}; pass --classes, one per column."
            )
        unknown = sorted(set(raw_labels) - set(cls))
        if unknown:
            raise ReportInputError(
                f"{path}: labels {unknown[:5]} in {label!r} are not in --classes {cls}."
            )
        y_true, y_prob, labels_arg = labels, P, np.array(cls)
    try:
        y, p, w = check_binary_calibration_input(y_true, y_prob, w, labels=labels_arg)
    except ValueError as exc:
        raise ReportInputError(f"{path}: {exc}") from exc
    return (
        np.asarray(y, dtype=np.float64),
        np.asarray(p, dtype=np.float64),
        np.asarray(w, dtype=np.float64),
    )


# --- output --------------------------------------------------------------------


def summary_json(summary, path=None):
    """The summary as a JSON string (the tester object left out)."""
    data = {k: v for k, v in summary.items() if not k.startswith("_")}
    data["measure_labels"] = {m[0]: m[1] for m in MEASURES}
    if path is not None:
        data["file"] = str(path)
    return json.dumps(data, indent=2)


def _png(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def render_html(summary, y, p, w, *, title, table_lines, random_state=0):
    """One self-contained HTML page: the table, the verdict and the plots."""
    from ._reliability import ReliabilityDisplay, import_pyplot, plot_test_result

    plt = import_pyplot("skcal report --html")
    images = []
    try:
        display = ReliabilityDisplay.from_predictions(
            y, p, sample_weight=w, random_state=random_state, name="predictions"
        )
        images.append(("Reliability diagram", _png(display.figure_)))
        ax = plot_test_result(summary["_tester"])
        images.append(("Calibration test", _png(ax.figure)))
    finally:
        plt.close("all")
    rows = []
    for key, label, _, meaning in MEASURES:
        m = summary["measures"][key]
        null = "" if m["null_95"] is None else f"{m['null_95']:.4f}"
        rows.append(
            f"<tr><td>{html.escape(label)}</td>"
            f'<td class="value" data-measure="{key}" data-value="{m["value"]!r}">'
            f'{m["value"]:.4f}</td><td class="value">{null}</td>'
            f"<td>{html.escape(meaning)}</td></tr>"
        )
    test = summary["test"]
    verdict = "calibrated" if test["calibrated"] else "not calibrated"
    figures = "\n".join(
        f'<figure><img alt="{html.escape(t)}" src="{src}"><figcaption>'
        f"{html.escape(t)}</figcaption></figure>"
        for t, src in images
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>
body {{ font-family: sans-serif; max-width: 60em; margin: 2em auto; color: #222; }}
table {{ border-collapse: collapse; margin: 1em 0; }}
td, th {{ border-bottom: 1px solid #ddd; padding: 0.3em 0.8em; text-align: left; }}
td.value {{ font-family: monospace; font-size: 1.05em; text-align: right; }}
.verdict {{ font-size: 1.2em; }}
img {{ max-width: 100%; }}
pre {{ background: #f6f6f6; padding: 0.8em; }}
</style></head><body>
<h1>{html.escape(title)}</h1>
<p class="verdict" id="verdict" data-calibrated="{str(test["calibrated"]).lower()}">
Test (smooth calibration error, alpha = {test["alpha"]:g}): <b>{verdict}</b>,
p-value {test["p_value"]:.3f}, n = {summary["n"]}.</p>
<table id="measures">
<tr><th>measure</th><th>value</th><th>95% of calibrated models below</th>
<th>what it says</th></tr>
{chr(10).join(rows)}
</table>
<p>All measures are in probability units; 0 means perfectly calibrated. The
third column is the 95th percentile of the measure over data sets whose
outcomes are redrawn as y* ~ Bernoulli(p) from these predictions: what chance
alone gives a perfectly calibrated model of this size.</p>
{figures}
<h2>Terminal report</h2>
<pre>{html.escape(chr(10).join(table_lines))}</pre>
</body></html>
"""


def _progress_printer(stream):
    if not (hasattr(stream, "isatty") and stream.isatty()):
        return None

    def progress(done, total):
        if total == 0:
            stream.write("testing calibration (999 resamples)...\n")
        else:
            stream.write(f"\rresampling the calibrated null: {done}/{total}")
            if done == total:
                stream.write("\n")
        stream.flush()

    return progress


def run_report(args, out=print, err=None):
    """Carry out ``python -m skcal report``; returns the exit status."""
    err = sys.stderr if err is None else err
    try:
        y, p, w = read_predictions(
            args.file,
            args.label,
            args.proba,
            args.weight,
            args.classes,
            args.pos_label,
        )
    except ReportInputError as exc:
        err.write(f"skcal report: error: {exc}\n")
        return 2
    try:
        summary = calibration_summary(
            y,
            p,
            w,
            n_resamples=args.resamples,
            tolerance=args.fail_if_miscalibrated,
            random_state=args.random_state,
            progress=_progress_printer(err),
        )
    except ValueError as exc:  # e.g. a gate tolerance no test could ever reject at
        err.write(f"skcal report: error: {exc}\n")
        return 2
    name = args.name or args.proba[0]
    title = (
        f"skcal report: {os.path.basename(str(args.file))}, {summary['n']} predictions"
    )
    lines = format_table({name: summary}, title=title)
    if args.json:
        out(summary_json(summary, args.file))
    else:
        for line in lines:
            out(line)
    if args.html:
        page = render_html(
            summary,
            y,
            p,
            w,
            title=title,
            table_lines=lines,
            random_state=args.random_state,
        )
        with open(args.html, "w", encoding="utf-8") as f:
            f.write(page)
    if args.fail_if_miscalibrated is not None and not summary["gate"]["calibrated"]:
        err.write(
            f"skcal report: not calibrated within {args.fail_if_miscalibrated:g} "
            f"(p-value {summary['gate']['p_value']:.3g}).\n"
        )
        return 1
    return 0
