"""Calibration report of a file of predictions: ``python -m skcal report``.

The same content three ways: a terminal table (80 columns), a self-contained
HTML page with the pictures embedded, and JSON. The scale of every measure
comes from the resampling null: outcomes redrawn as ``y* ~ Bernoulli(p)``
from the predictions themselves, i.e. what a perfectly calibrated model with
exactly these predictions would score.
"""

import json
import numbers
import os
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ._grouped import binary_statistic, group
from ._held import HeldStatistic
from ._interval import _DISCRETE_COUNT, _basic, _Cells, _Layout
from ._interval_bounds import scdl_bound_of_cells
from ._progress import _Progress
from ._report_input import ReportInputError, read_report_input, safe_text
from ._report_measures import MEASURES, _measure_object, selected_measures

# draws of dCE (one linear program each): the Monte Carlo error of an
# interval end from 80 draws is about 2.5 points of coverage (binomial
# standard error of the 2.5% tail count), against 1.1 points from 200
_DCE_RESAMPLES = 80
# measures whose grouped core runs in a second thread (see calibration_summary)
_SOLVED_APART = ("dce",)
# cells of the merged statistic of the other measures (measure.interval
# uses 2**14): a measure moves by at most about half a cell width, 1.2e-4,
# and the draws cost a quarter
_REPORT_CELLS = 1 << 12

__all__ = [
    "MEASURES",
    "calibration_summary",
    "format_table",
    "gate_decision",
    "read_predictions",
]



def calibration_summary(
    y,
    p,
    w,
    *,
    n_resamples=200,
    n_test_resamples=None,
    confidence=0.95,
    max_error=None,
    gate="certify",
    tolerance=None,
    random_state=0,
    progress=None,
    measures=None,
):
    """Every measure with its interval and scale, the test, and the gate.

    Everything is computed from one grouped statistic (distinct predictions
    with their weight and positive weight; see :mod:`skcal._interval`),
    shared by every measure: each resample draws the statistic once and
    every measure reads it. Two kinds of draws, ``n_resamples`` of each:

    * the **calibrated null**, positives redrawn as ``Binomial(count, v)``
      at each distinct value (outcomes ``y* ~ Bernoulli(p)``): the scale of
      each measure (its median and 95th percentile for a perfectly
      calibrated model with these predictions), the test's null (smooth
      calibration error, ``alpha = 1 - confidence``; a Monte Carlo test
      with ``n_resamples`` draws is exact at that resolution) and the lower
      end of each interval (0 while a calibrated model is not ruled out);
    * the **Bayesian bootstrap** of the statistic: each measure's interval
      (``measure.interval``'s method, drawn once for all measures).

    With more than ``2**12`` distinct predictions (400 for dCE, one linear
    program per draw; 64 cells per bin for the binned ECE), the draws are
    of the statistic merged into equal cells of the predictions (as
    ``measure.interval`` does with ``2**14``): the values are always those
    of the full data and the intervals read only the resampled deviations;
    the scale and the test are those of the merged statistic (each cell at
    its mean prediction; a measure moves by about half a cell width at
    most, 1.2e-4, or 1.3e-3 for dCE, whose grid already reads up to 1e-2
    high). dCE gets ``min(n_resamples, 80)`` draws of each kind (a linear
    program each, about 3 ms of CPU re-solved from the previous draw's
    optimal basis): its interval ends carry a Monte Carlo error
    of about 2.5 points of coverage, against about 1.5 from 200 draws.

    Parameters
    ----------
    y, p, w : ndarray of shape (n_samples,)
        Binary outcomes, predictions and weights, already validated; or
        ``y`` an exact :class:`~skcal.sketch.CalibrationSketch` of rows of
        one weight and ``p = w = None``.
    n_resamples : int, default=200
        Draws of the null and of the bootstrap (at least 20 for intervals,
        40 for the null to set a lower end to 0; 0 leaves out the scale,
        the intervals and the test).
        The Monte Carlo error of a 95% interval end from 200 draws is
        about 1.5 percentage points of coverage.
    n_test_resamples : int, default=None
        Unused: the test reads the shared null draws. Kept for callers.
    confidence : float, default=0.95
        Level of the intervals; the test runs at ``alpha = 1 - confidence``.
    max_error : float, default=None
        The gate on the distance to calibration (dCE): see :func:`gate_decision`.
    gate : {"certify", "reject"}, default="certify"
    tolerance : float, default=None
        Deprecated spelling of ``max_error``.
    random_state : int, RandomState instance or None, default=0
    progress : callable, default=None
        Called as ``progress(done, total)`` during the resampling.
    measures : list of str, default=None
        The measures to report, by report key (``"smce"``) or function name
        (``"smooth_calibration_error"``): any registered measure the report
        lists (:func:`measure_choices`); every one when None. The test reads
        smCE and the gate dCE whether or not they are listed.

    Returns
    -------
    summary : dict
        ``n``, ``measures`` (key to ``{"value", "low", "high", "method",
        "null_median", "null_95"}``, for the measures asked for), ``test``
        (``calibrated``, ``p_value``,
        ``alpha``, ``measure``, ``n_resamples``, ``statistic``), and with
        ``max_error``, ``gate`` (see :func:`gate_decision`).

    Examples
    --------
    >>> import numpy as np
    >>> from skcal._report import calibration_summary
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=200)
    >>> y = (rng.uniform(size=200) < p).astype(float)
    >>> s = calibration_summary(y, p, np.ones(200), n_resamples=50)
    >>> s["test"]["calibrated"], sorted(s["measures"])[:2]
    (True, ['binned_ece', 'cdl'])
    >>> m = s["measures"]["smce"]
    >>> bool(m["low"] <= m["value"] <= m["high"])
    True
    """
    if max_error is None:
        max_error = tolerance
    rng = _check_random_state(random_state)
    _forget_dce_session()
    shown = selected_measures(measures)
    needed = {*shown, "smce"} | ({"dce"} if max_error is not None else set())
    objects = {key: _measure_object(key) for key, *_ in MEASURES if key in needed}
    if p is None:  # a sketch: everything from the grouped statistic
        sketch = y
        G = sketch.grouped_statistic()
        squared = getattr(sketch, "squared_weights", None)  # unequal weights
        if squared is not None:
            cells = _Cells(G, *squared)
        else:
            try:
                _, c = sketch._null_counts()
            except ValueError as exc:
                raise ValueError(
                    "The sketch must be exact and hold rows of one weight: the "
                    f"calibrated null redraws each row's outcome ({exc})"
                ) from None
            cells = _Cells(G, c * _neg(G), c * np.asarray(G.positives, np.float64))
        values = {key: float(m._function(sketch)) for key, m in objects.items()}
        n = sketch.n_samples
    else:
        # the kernels read contiguous float64 (a predict_proba column is not)
        y, p, w = (np.ascontiguousarray(a, dtype=np.float64) for a in (y, p, w))
        G = group(y, p, w)
        cells = _row_cells(G, y, p, w)
        values = _row_values(objects, y, p, w)
        n = int(p.shape[0])
    B = int(n_resamples)
    # one merged statistic per layout; measures of one layout share draws
    works, of = {}, {}
    for key, m in objects.items():
        layout = _Layout(m)
        if layout.edges is None and layout.n_cells > _REPORT_CELLS:
            layout.n_cells = layout.max_groups = layout.size = _REPORT_CELLS
        sig = (layout.n_cells, layout.max_groups, None if layout.edges is None
               else tuple(layout.edges))
        if sig not in works:
            works[sig] = cells.blocks(layout)
        of[key] = sig
    # dCE's solves (a linear program each, most of the draws' CPU) run in a
    # second thread, in the order one thread would run them: each resumes
    # from the optimal basis of the solve before it in its thread (see
    # _forget_dce_session), so every number is bit for bit the same, while
    # this thread draws and measures the rest. HiGHS releases the GIL while
    # it solves: on 2 cores the two overlap (the wall time, not the CPU).
    solver = ThreadPoolExecutor(max_workers=1)
    try:
        summary = _summary(
            objects, values, cells, works, of, n, rng, B, confidence, max_error, gate,
            progress, solver,
        )
    finally:
        solver.shutdown(cancel_futures=True)
    # the measures asked for (--measure); smCE (the test) and dCE (the gate)
    # are computed whatever is shown
    summary["measures"] = {key: summary["measures"][key] for key in shown}
    return summary


def _summary(objects, values, cells, works, of, n, rng, B, confidence, max_error, gate,
             progress, solver):
    """The rest of :func:`calibration_summary`, with dCE's solves on ``solver``."""
    apart = {key for key in objects if key in _SOLVED_APART}
    pending = []  # (array, index, future) of the solves in the other thread
    centers = {
        key: solver.submit(m._grouped_core, works[of[key]].G) if key in apart
        else m._grouped_core(works[of[key]].G)
        for key, m in objects.items()
    }
    # draws per measure: dCE solves a linear program per draw (about 3 ms of
    # CPU: all draws share the values, so each resumes from the last basis),
    # so it gets _DCE_RESAMPLES; CDL of continuous scores is bounded through
    # SCDL's draws and needs no bootstrap of its own
    bound_cdl = B >= 20 and cells.min_count() < _DISCRETE_COUNT
    n_null = {key: B if key != "dce" else min(B, _DCE_RESAMPLES) for key in objects}
    n_boot = dict(n_null)
    # SCDL's interval is its finite-sample bound (the bootstrap of its
    # upward-biased plug-in does not cover): no bootstrap draws of its own
    n_boot["scdl"] = 0
    if bound_cdl and "cdl" in objects:
        n_boot["cdl"] = 0
        if works[of["cdl"]].merged:
            # merged cells are discrete predictions, whose plug-in CDL is
            # small, unlike the rows' (about 0.29 for a calibrated model):
            # no scale is better than a misleading one
            n_null["cdl"] = 0
    null = {key: np.empty(n_null[key]) for key in objects}
    boot = {key: np.empty(n_boot[key]) for key in objects}
    for b in range(B):
        for sig, work in works.items():
            keys = [key for key in objects if of[key] == sig]
            if any(b < n_null[key] for key in keys):
                G_null = work.null_draw(rng)
            if any(b < n_boot[key] for key in keys):
                G_boot = work.draw(rng)
            for key in keys:
                core = objects[key]._grouped_core
                for draws, G, count in ((null, G_null, n_null), (boot, G_boot, n_boot)):
                    if b >= count[key]:
                        continue
                    if key in apart:
                        pending.append((draws[key], b, solver.submit(core, G)))
                    else:
                        draws[key][b] = core(G)
        if progress is not None and b + 1 < B:
            progress(b + 1, B)
    for draws, b, future in pending:
        draws[b] = future.result()
    centers.update({key: centers[key].result() for key in apart})
    if progress is not None and B:
        progress(B, B)
    a = 1.0 - confidence
    measures = {}
    for key, m in objects.items():
        entry = {"value": values[key], "low": None, "high": None, "method": None,
                 "null_median": None, "null_95": None}
        if n_null[key]:
            entry["null_median"] = float(np.median(null[key]))
            entry["null_95"] = float(np.quantile(null[key], 0.95))
        if B >= 20 and n_boot[key]:
            entry.update(_interval(
                m, values[key], centers[key], boot[key], null[key], confidence
            ))
        measures[key] = entry
    if B >= 20 and ("scdl" in objects or "cdl" in objects):
        # SCDL: the finite-sample bound of SCDL's interval (see
        # skcal.SoftBinnedCDL.interval), from the grouped statistic and the
        # squared weights of its values (rows or sketch alike)
        sq = np.asarray(cells.pos2, np.float64) + np.asarray(cells.neg2, np.float64)
        scdl = objects["scdl"] if "scdl" in objects else _measure_object("scdl")
        m_scdl = scdl.get_params(deep=False).get("m")
        if "scdl" in objects:
            low, high = scdl_bound_of_cells(cells.G, sq, m_scdl, confidence)
            measures["scdl"].update(low=low, high=high, method="analytic")
        if bound_cdl and "cdl" in objects:
            # the plug-in CDL of continuous scores estimates nothing: SCDL <= CDL
            # (Lemma 3.4 of Bairaktari et al.) bounds it from below, one-sided
            low = scdl_bound_of_cells(cells.G, sq, m_scdl, 2 * confidence - 1)[0]
            measures["cdl"].update(low=low, high=1.0, method="scdl-bound")
    test = {"measure": "smce", "alpha": round(a, 12), "n_resamples": B,
            "statistic": values["smce"], "calibrated": None, "p_value": None}
    if B:
        hits = np.count_nonzero(null["smce"] >= centers["smce"])
        test["p_value"] = float((1 + hits) / (B + 1))
        test["calibrated"] = bool(test["p_value"] > a)
    summary = {"n": n, "confidence": float(confidence), "measures": measures,
               "test": test}
    if max_error is not None:
        summary["gate"] = gate_decision(measures["dce"], max_error, gate, confidence)
    return summary


def gate_decision(entry, max_error, mode, confidence):
    """Pass or fail ``dCE <= max_error``, and why, from dCE's interval.

    ``"certify"``: passes only when the upper end of the interval is at most
    ``max_error`` (the data certify it, at the upper end's level ``1 - a/2``
    with ``a = 1 - confidence``); when the estimate itself is within it but
    the upper end is not, the reason is "not enough data to certify".
    ``"reject"``: fails only when the lower end is above ``max_error`` (dCE
    above it is significant at level ``a/2``).

    Examples
    --------
    >>> from skcal._report import gate_decision
    >>> entry = {"value": 0.032, "low": 0.018, "high": 0.047}
    >>> gate_decision(entry, 0.02, "certify", 0.95)["passed"]
    False
    >>> gate_decision(entry, 0.02, "reject", 0.95)["passed"]
    True
    """
    value, low, high = entry["value"], entry["low"], entry["high"]
    if low is None:
        raise ValueError(
            "the gate reads dCE's interval: it needs at least 20 resamples "
            "(--resamples)."
        )
    level = 1 - (1 - confidence) / 2
    if mode == "certify":
        passed = high <= max_error
        if passed:
            why = (f"the data certify dCE <= {max_error:g} (upper end {high:.4f} at "
                   f"one-sided confidence {level:g})")
        elif value <= max_error:
            why = (f"not enough data to certify dCE <= {max_error:g}: the estimate is "
                   f"within it but the upper end {high:.4f} is not")
        elif low > max_error:
            why = f"dCE is significantly above {max_error:g} (lower end {low:.4f})"
        else:
            why = (f"the estimate {value:.4f} is above {max_error:g} and the data do "
                   f"not certify dCE <= {max_error:g} (upper end {high:.4f})")
    elif mode == "reject":
        passed = not low > max_error
        if passed:
            why = (f"dCE above {max_error:g} is not significant (lower end {low:.4f} "
                   f"at one-sided confidence {level:g})")
        else:
            why = (f"dCE is significantly above {max_error:g} (lower end {low:.4f} at "
                   f"one-sided confidence {level:g})")
    else:
        raise ValueError(f"gate must be 'certify' or 'reject', got {mode!r}.")
    return {"mode": mode, "max_error": float(max_error), "measure": "dce",
            "estimate": value, "low": low, "high": high, "confidence": confidence,
            "passed": bool(passed), "reason": why}


def _interval(measure, value, center, boot, null, confidence):
    """``low``, ``high`` and ``method`` from shared draws (``measure.interval``)."""
    low, high, _ = _basic(value, center, boot, confidence, measure._max_value)
    rank = (1 + np.count_nonzero(null >= center)) / (null.shape[0] + 1)
    # (with fewer than 2 / a - 1 null draws the rank test cannot reject at
    # a / 2 and the bootstrap's lower end stands)
    resolves = 1 / (null.shape[0] + 1) <= (1 - confidence) / 2
    if low > 0 and resolves and rank > (1 - confidence) / 2:
        low = 0.0  # a calibrated model is not ruled out at a / 2
    return {"low": low, "high": high, "method": "bootstrap"}


# measures whose public function is ``core(binary_statistic(..., rescale=True))``
# and nothing else: their values are read off one statistic, validated and
# grouped once, through the same function (bit for bit the same value)
_SHARED_STATISTIC = ("smce", "dce", "cutoff", "cdl")


def _row_values(objects, y, p, w):
    """Every measure's value on the rows, the shared ones from one statistic.

    Each measure function validates and sorts the rows itself (a sort of
    ``n`` predictions each, about 0.1 s of CPU at 1e6 rows); the functions
    in ``_SHARED_STATISTIC`` read the statistic that ``binary_statistic``
    would build for them, built once here.
    """
    # the rows were checked once, when they were read: the canonical form
    # (trusted) is what every measure reads, with no second check
    from ._input import BinaryInput

    data = BinaryInput(y.astype(np.uint8), p, w)
    # already on the measures' weight scale (rescaled)
    held = HeldStatistic(binary_statistic(data, None, rescale=True), canonical=True)
    return {
        key: float(m._function(held) if key in _SHARED_STATISTIC else m._function(data))
        for key, m in objects.items()
    }


def _forget_dce_session():
    """Start dCE's draws afresh, as in a new process.

    dCE's resamples re-solve the last linear program of the same predictions
    from its optimal basis (``skcal.metrics._ldtc._Session``), which agrees
    with a fresh solve to about 1e-15, not bit for bit; without this a second
    report on the same predictions in one process (a notebook, the tests)
    could differ from the first in the last bits of dCE's interval and scale.
    """
    from .metrics._ldtc import forget_session

    forget_session()


def _check_random_state(seed):
    """``sklearn.utils.check_random_state``, without importing scikit-learn."""
    if seed is None or seed is np.random:
        return np.random.mtrand._rand
    if isinstance(seed, numbers.Integral):
        return np.random.RandomState(seed)
    if isinstance(seed, np.random.RandomState):
        return seed
    raise ValueError(f"{seed!r} cannot be used to seed a numpy.random.RandomState instance")


def _neg(G):
    return np.maximum(
        np.asarray(G.weights, np.float64) - np.asarray(G.positives, np.float64), 0.0
    )


def _row_cells(G, y, p, w):
    """The statistic of validated rows with each group's squared weights."""
    pos = np.asarray(G.positives, np.float64)
    if w.strides == (0,) or bool(np.all(w == w[0])):
        c = float(w[0])
        return _Cells(G, c * _neg(G), c * pos)
    index = np.searchsorted(G.values, p)
    w = np.asarray(w, np.float64)
    w2 = w * w
    pos2 = np.bincount(index, w2 * np.asarray(y, np.float64), len(G))
    neg2 = np.maximum(np.bincount(index, w2, len(G)) - pos2, 0.0)
    return _Cells(G, neg2, pos2)


def _result_dict(result):
    out = {}
    for name in result.__dataclass_fields__:
        value = getattr(result, name)
        out[name] = value.item() if isinstance(value, np.generic) else value
    return out


def _cell(m, interval=True):
    """``value [low, high] (calibrated 95%)`` of one measure, 4 decimals."""
    text = f"{m['value']:.4f}"
    if interval and m.get("low") is not None:
        high = "1" if m.get("method") == "scdl-bound" else f"{m['high']:.4f}"
        star = "+" if m.get("method") == "scdl-bound" else ""
        text = f"{text}{star} [{m['low']:.4f}, {high}]"
    if m.get("null_95") is not None:
        text += f" ({m['null_95']:.3f})"
    return text


def _prefix(summary):
    """"top-label " for multiclass reports: every number is of the top label."""
    return "top-label " if summary.get("target") == "top-label" else ""


def gate_line(summary, width=80):
    """The gate's summary: mode, estimate with interval, verdict and why."""
    g = summary["gate"]
    pct = f"{100 * g['confidence']:g}%"
    text = (
        f"gate ({g['mode']} mode, max error {g['max_error']:g}): "
        f"{'PASSED' if g['passed'] else 'FAILED'}: {_prefix(summary)}dCE "
        f"{g['estimate']:.4f} [{g['low']:.4f}, {g['high']:.4f}] ({pct} interval); "
        f"{_prefix(summary)}{g['reason']}."
    )
    return textwrap.wrap(text, width, subsequent_indent="  ", break_on_hyphens=False)


def format_table(summaries, *, title=None, notes=()):
    """The terminal report: one column per model, every line <= 80 columns.

    Parameters
    ----------
    summaries : dict
        Model name to :func:`calibration_summary` (with ``"target":
        "top-label"`` for multiclass input: every number is then labelled
        top-label).
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
    >>> s = calibration_summary(y, p, np.ones(100), n_resamples=20)
    >>> max(len(line) for line in format_table({"model": s})) <= 80
    True
    """
    names = list(summaries)
    first = summaries[names[0]]
    prefix = _prefix(first)
    rows = [m for m in MEASURES if m[0] in first["measures"]]
    label_w = max([len(m[1]) for m in rows] + [len("calibrated? (test)")])
    # user-given names: escaped, and cut so that a line keeps to 80 columns
    shown = [_short(safe_text(n), 80 - label_w - 2) for n in names]
    pct = f"{100 * first.get('confidence', 0.95):g}%"
    # several models (the demo) do not fit 80 columns with intervals
    interval = len(names) == 1 and any(
        m.get("low") is not None for m in first["measures"].values()
    )
    head = f"{prefix}value [{pct} CI] (calib.)*" if interval else f"{prefix}value (calib.)*"
    col_w = max(len(head), *(len(n) for n in shown))
    lines = [] if title is None else [safe_text(title)]
    lines += [safe_text(line) for line in notes]
    if lines:
        lines.append("")
    head1 = " " * label_w + "".join(f"  {n:>{col_w}}" for n in shown)
    head2 = " " * label_w + "".join(f"  {head:>{col_w}}" for _ in names)
    lines += [head1, head2, "-" * len(head2)]
    for key, label, _, _ in rows:
        cells = [
            f"  {_cell(summaries[n]['measures'][key], interval):>{col_w}}" for n in names
        ]
        lines.append(f"{label:<{label_w}}" + "".join(cells))

    def row(title, f):
        return f"{title:<{label_w}}" + "".join(
            f"  {f(summaries[n]['test']):>{col_w}}" for n in names
        )

    if first["test"]["p_value"] is not None:
        lines.append(row("calibrated? (test)", lambda t: "yes" if t["calibrated"] else "NO"))
        lines.append(row("  p-value", lambda t: f"{t['p_value']:.3f}"))
    n = first["n"]
    lines += [
        "",
        f"All measures are {prefix}calibration errors in probability units; 0 means",
        "  perfectly calibrated.",
    ]
    if interval:
        lines += [
            "In square brackets: a confidence interval; + marks a plug-in that",
            "  estimates no population value (its interval is a bound).",
        ]
    lines += [
        "* in round brackets: what a perfectly calibrated model with these",
        f"  predictions stays below in 95% of samples of this size (n = {n});",
        "  a larger value is more bias than chance alone explains.",
        f"calibrated?: {prefix}smooth calibration error tested against that chance",
        f"  level (alpha = {first['test']['alpha']:g}); NO means the bias is "
        "statistically clear.",
        "",
    ]
    for _, label, _, meaning in rows:
        lines.append(f"{label:<{label_w}}  {meaning}")
    for name in names:
        if "gate" in summaries[name]:
            lines.append("")
            lines += gate_line(summaries[name])
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
    data["measure_labels"] = {m[0]: m[1] for m in MEASURES if m[0] in data["measures"]}
    if path is not None:
        data["file"] = safe_text(os.fspath(path))
    if notes is not None:
        data["input"] = notes
    return json.dumps(data, indent=2)


def _progress_printer(stream):
    """The progress display of ``python -m skcal report`` on ``stream``."""
    return _Progress(stream)


def run_report(args, out=print, err=None):
    """Carry out ``python -m skcal report``; returns the exit status.

    0: done (and the gate, if any, passed); 1: the gate failed; 2: bad input
    or options, with one line on ``err``.
    """
    err = sys.stderr if err is None else err

    def fail(message):
        err.write(f"skcal report: error: {message}\n")
        return 2

    max_error = getattr(args, "max_error", None)
    if getattr(args, "fail_if_miscalibrated", None) is not None:
        err.write(
            "skcal report: warning: --fail-if-miscalibrated is deprecated and will "
            "be removed in the next release; it now means --max-error EPS "
            "--gate certify.\n"
        )
        if max_error is None:
            max_error = args.fail_if_miscalibrated
    mode = getattr(args, "gate", None) or "certify"
    if max_error is not None and args.resamples < 20:
        return fail(
            f"--max-error reads the interval of dCE, which needs --resamples of at "
            f"least 20 (got {args.resamples})."
        )
    try:
        selected_measures(getattr(args, "measure", None))
    except ValueError as exc:
        return fail(exc)
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
            keep_weighted_rows=bool(args.html),  # the page's tester redraws each row
        )
    except ReportInputError as exc:
        return fail(exc)
    rows = (data.y, data.p, data.w) if data.y is not None else (data.sketch, None, None)
    try:
        summary = calibration_summary(
            *rows,
            n_resamples=args.resamples,
            max_error=max_error,
            gate=mode,
            random_state=args.random_state,
            progress=_progress_printer(err),
            measures=getattr(args, "measure", None),
        )
    except ValueError as exc:
        return fail(safe_text(exc))
    summary["target"] = "top-label" if len(args.proba) > 2 else "binary"
    name = args.name or args.proba[0]
    tail = f", {summary['n']} predictions"
    if summary["target"] == "top-label":
        tail += " (top-label)"
    base = safe_text(os.path.basename(os.fspath(args.file)))
    title = f"skcal report: {_short(base, 80 - len('skcal report: ') - len(tail))}{tail}"
    notes = input_notes(data.notes)
    if summary["target"] == "top-label":
        notes += [
            "top-label: every number is of the largest probability against the",
            "  outcome 'the true class is the predicted one'.",
        ]
    lines = format_table({name: summary}, title=title, notes=notes)
    if args.html:
        from .tester import CalibrationTester

        if data.y is not None:
            y, p, w, band = data.y, data.p, data.w, True
        else:  # each distinct prediction as a positive and a negative row
            G = data.sketch.grouped_statistic()
            y = np.repeat([1.0, 0.0], len(G))
            p = np.concatenate([G.values, G.values])
            w = np.concatenate([G.positives, G.weights - G.positives])
            band = False
        # the picture of the test: the tester's own null (999 draws)
        summary["_tester"] = CalibrationTester(
            n_resamples=999, resampling_risk=None, random_state=args.random_state
        ).fit(*rows)
        from ._report_html import render_html

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
    if "gate" in summary:
        if not summary["gate"]["passed"]:
            err.write(safe_text(" ".join(gate_line(summary, 10**6))) + "\n")
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
