"""Calibration report of a file of predictions: ``python -m skcal report``.

The same content three ways: a terminal table (80 columns), a self-contained
HTML page with the pictures embedded, and JSON. The scale of every measure
comes from the resampling null: outcomes redrawn as ``y* ~ Bernoulli(p)``
from the predictions themselves, i.e. what a perfectly calibrated model with
exactly these predictions would score.
"""

import base64
import html
import io
import json
import os
import sys
import textwrap

import numpy as np
from sklearn.utils import check_random_state

from . import metrics
from ._report_input import ReportInputError, read_report_input, safe_text
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
        Binary outcomes, predictions and weights, already validated; or
        ``y`` an exact :class:`~skcal.sketch.CalibrationSketch` of rows of
        one weight and ``p = w = None``: then the measures, their scale and
        the test are computed from its grouped statistic (the calibrated
        null draws each value's positive weight as ``c Binomial(count, v)``,
        the law of the sum of ``y* ~ Bernoulli(p)`` over its rows), in memory
        proportional to the number of distinct predictions.
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
    null = {key: np.empty(n_resamples) for key in funcs}
    if p is None:  # a sketch: everything from the grouped statistic
        sketch = y
        G = sketch.grouped_statistic()
        c = sketch.total_weight / sketch.n_samples  # the one row weight
        counts = np.rint(G.weights / c)
        if not sketch.exact or counts.sum() != sketch.n_samples:
            raise ValueError(
                "The sketch must be exact and hold rows of one weight: the "
                "calibrated null redraws each row's outcome."
            )
        values = {key: float(f(sketch)) for key, f in funcs.items()}
        int_counts = counts.astype(np.int64)
        for b in range(n_resamples):
            held = _Held(G.with_positives(rng.binomial(int_counts, G.values) * c))
            for key, f in funcs.items():
                null[key][b] = f(held)
            if progress is not None:
                progress(b + 1, n_resamples)
        n = sketch.n_samples
        data = (sketch,)
    else:
        values = {key: float(f(y, p, sample_weight=w)) for key, f in funcs.items()}
        for b in range(n_resamples):
            y_star = (rng.uniform(size=p.shape[0]) < p).astype(np.float64)
            for key, f in funcs.items():
                null[key][b] = f(y_star, p, sample_weight=w)
            if progress is not None:
                progress(b + 1, n_resamples)
        n = int(p.shape[0])
        data = (y, p, w)
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
        "n": n,
        "measures": measures,
        "test": _result_dict(tester.fit(*data).result_),
    }
    if tolerance is not None:
        gate = CalibrationTester(
            tolerance=tolerance,
            n_resamples=n_test_resamples,
            resampling_risk=None,
            random_state=seed,
        )
        summary["gate"] = _result_dict(gate.fit(*data).result_)
    summary["_tester"] = tester
    return summary


class _Held:
    """A grouped statistic passed to a measure in place of rows."""

    def __init__(self, statistic):
        self.statistic = statistic

    def grouped_statistic(self):
        return self.statistic


def _result_dict(result):
    out = {}
    for name in result.__dataclass_fields__:
        value = getattr(result, name)
        out[name] = value.item() if isinstance(value, np.generic) else value
    return out


def _cell(value, width):
    return f"{value:>{width}.4f}"


def format_table(summaries, *, title=None, notes=()):
    """The terminal report: one column per model, every line <= 80 columns.

    Parameters
    ----------
    summaries : dict
        Model name to :func:`calibration_summary`.
    title : str, default=None
        First line.
    notes : sequence of str, default=()
        Lines after the title (how the file was read).

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
    # user-given names: escaped, and cut so that a line keeps to 80 columns
    shown = [_short(safe_text(n), 80 - label_w - 2) for n in names]
    # each model: its value and the 95% level of a calibrated model
    col_w = max(17, *(len(n) for n in shown))
    lines = [] if title is None else [safe_text(title)]
    lines += [safe_text(line) for line in notes]
    if lines:
        lines.append("")
    head1 = " " * label_w + "".join(f"  {n:>{col_w}}" for n in shown)
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


def _short(text, width):
    return text if len(text) <= width else text[: width - 3] + "..."


def input_notes(notes, width=80):
    """Lines saying how the file was read: classes, their order, the columns."""
    classes = notes["classes"]
    shown = ", ".join(classes[:20])
    if len(classes) > 20:
        shown += f", ... ({len(classes)} in all)"
    text = f"labels in '{notes['label_column']}' ({notes['class_order']}): {shown}"
    if "pos_label" in notes:
        text += f"; positive class: {notes['pos_label']}"
    lines = textwrap.wrap(text, width, subsequent_indent="  ", break_on_hyphens=False)
    if "column_classes" in notes:
        pairs = list(notes["column_classes"].items())
        text = f"class of each --proba column (from {notes['columns_matched_by']}): " + ", ".join(
            f"{c}={k}" for c, k in pairs[:20]
        ) + (", ..." if len(pairs) > 20 else "")
        lines += textwrap.wrap(text, width, subsequent_indent="  ", break_on_hyphens=False)
    return lines


# --- reading a file ------------------------------------------------------------


def read_predictions(path, label, proba, weight=None, classes=None, pos_label=None):
    """Read and check a file of labels and predicted probabilities.

    Parameters
    ----------
    path : str
        CSV (or Parquet, with pyarrow installed).
    label : str
        Column of observed labels.
    proba : list of str
        One column (probability of the positive class) or one per class.
    weight : str, default=None
        Column of sample weights.
    classes : list of str, default=None
        The class of each probability column (several columns), in the order
        of ``proba``; by default read off the column names (``cat``,
        ``p_cat``, ``proba_1``...).
    pos_label : str, default=None
        Positive class for one probability column; needed unless the labels
        are 0/1 (or -1/1, or true/false).

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
    data = read_report_input(path, label, proba, weight, classes, pos_label)
    if data.y is None:
        raise ReportInputError(
            f"{safe_text(path)}: {data.n} rows are more than read_predictions keeps "
            "in memory; use skcal._report_input.read_report_input (a sketch)."
        )
    return data.y, data.p, data.w


# --- output --------------------------------------------------------------------


def summary_json(summary, path=None, notes=None):
    """The summary as a JSON string (the tester object left out).

    ``notes`` (how the file was read: classes, their order, the class of
    each column) go under ``"input"``; user text is escaped.
    """
    data = {k: v for k, v in summary.items() if not k.startswith("_")}
    data["measure_labels"] = {m[0]: m[1] for m in MEASURES}
    if path is not None:
        data["file"] = safe_text(os.fspath(path))
    if notes is not None:
        data["input"] = notes
    return json.dumps(data, indent=2)


def _png(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def render_html(
    summary, y, p, w, *, title, table_lines, random_state=0, notes=(), band=True
):
    """One self-contained HTML page: the table, the verdict and the plots.

    ``band=False`` leaves out the reliability diagram's band (for grouped
    rows, whose weights are not the rows' own).
    """
    from ._reliability import ReliabilityDisplay, import_pyplot, plot_test_result

    plt = import_pyplot("skcal report --html")
    images = []
    try:
        display = ReliabilityDisplay.from_predictions(
            y,
            p,
            sample_weight=w,
            random_state=random_state,
            name="predictions",
            **({} if band else {"n_resamples": 0}),
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
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(safe_text(title))}</title>
<style>
body {{ font-family: sans-serif; max-width: 60em; margin: 2em auto; color: #222; }}
table {{ border-collapse: collapse; margin: 1em 0; }}
td, th {{ border-bottom: 1px solid #ddd; padding: 0.3em 0.8em; text-align: left; }}
td.value {{ font-family: monospace; font-size: 1.05em; text-align: right; }}
.verdict {{ font-size: 1.2em; }}
img {{ max-width: 100%; }}
pre {{ background: #f6f6f6; padding: 0.8em; }}
</style></head><body>
<h1>{html.escape(safe_text(title))}</h1>
{"".join(f"<p class='input'>{html.escape(safe_text(n))}</p>" for n in notes)}
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
<pre>{html.escape(chr(10).join(safe_text(line) for line in table_lines))}</pre>
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
    """Carry out ``python -m skcal report``; returns the exit status.

    0: done (and the gate, if any, passed); 1: the gate failed; 2: bad input
    or options, with one line on ``err``.
    """
    err = sys.stderr if err is None else err

    def fail(message):
        err.write(f"skcal report: error: {message}\n")
        return 2

    if args.html:
        problem = _html_target_problem(args.html)
        if problem:
            return fail(problem)
    try:
        data = read_report_input(
            args.file,
            args.label,
            args.proba,
            args.weight,
            args.classes,
            args.pos_label,
        )
    except ReportInputError as exc:
        return fail(exc)
    try:
        rows = (data.y, data.p, data.w) if data.y is not None else (data.sketch, None, None)
        summary = calibration_summary(
            *rows,
            n_resamples=args.resamples,
            tolerance=args.fail_if_miscalibrated,
            random_state=args.random_state,
            progress=_progress_printer(err),
        )
    except ValueError as exc:  # e.g. a gate tolerance no test could ever reject at
        option = "--fail-if-miscalibrated: " if "reject" in str(exc) else ""
        return fail(f"{option}{safe_text(exc)}")
    name = args.name or args.proba[0]
    tail = f", {summary['n']} predictions"
    base = safe_text(os.path.basename(os.fspath(args.file)))
    title = f"skcal report: {_short(base, 80 - len('skcal report: ') - len(tail))}{tail}"
    notes = input_notes(data.notes)
    lines = format_table({name: summary}, title=title, notes=notes)
    if args.html:
        if data.y is not None:
            y, p, w, band = data.y, data.p, data.w, True
        else:  # each distinct prediction as a positive and a negative row
            G = data.sketch.grouped_statistic()
            y = np.repeat([1.0, 0.0], len(G))
            p = np.concatenate([G.values, G.values])
            w = np.concatenate([G.positives, G.weights - G.positives])
            band = False
        page = render_html(
            summary,
            y,
            p,
            w,
            title=title,
            table_lines=lines,
            random_state=args.random_state,
            notes=notes,
            band=band,
        )
        try:
            with open(args.html, "w", encoding="utf-8") as f:
                f.write(page)
        except OSError as exc:
            return fail(
                f"--html {safe_text(args.html)}: cannot write it "
                f"({safe_text(exc.strerror or exc)})."
            )
    if args.json:
        out(summary_json(summary, args.file, data.notes))
    else:
        for line in lines:
            out(line)
    if args.fail_if_miscalibrated is not None and not summary["gate"]["calibrated"]:
        err.write(
            f"skcal report: not calibrated within {args.fail_if_miscalibrated:g} "
            f"(p-value {summary['gate']['p_value']:.3g}).\n"
        )
        return 1
    return 0


def _html_target_problem(path):
    """Why ``--html PATH`` cannot be written, checked before the long work; or None."""
    shown = safe_text(path)
    if os.path.isdir(path):
        return f"--html {shown}: is a directory; give a file name."
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        return f"--html {shown}: the directory {safe_text(folder)} does not exist."
    if not os.access(folder, os.W_OK):
        return f"--html {shown}: the directory {safe_text(folder)} is not writable."
    return None
