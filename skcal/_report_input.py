"""Reading a file of predictions for ``python -m skcal report``, in bounded memory.

The rows come in chunks from :mod:`skcal._report_files` (CSV in bounded
blocks, Parquet batch by batch); what the labels are and which class each
probability column stands for is settled by :mod:`skcal._report_labels`;
messages and user text made safe are :mod:`skcal._report_text`'s.

The file is read twice. The first pass checks the shape of every row and
collects the distinct labels and the weights' properties: what the labels
*are* (numbers, true/false or text), and so which class each probability
column stands for, is only known once every label has been seen. The second
pass turns each chunk into binary (or top-label) outcomes, predictions and
weights and feeds a :class:`~skcal.sketch.CalibrationSketch`. The rows
themselves are kept only while there are at most ``IN_MEMORY_ROWS`` of them
(then the report is computed on them exactly as before), or when the caller
asks for them (the HTML page's tester redraws each weighted row). For rows of
unequal weights the sketch also sums, per distinct prediction, the squared
weights of positive and negative rows (:class:`WeightedSketch`): the report's
calibrated null and bootstrap read only those sums, not the rows. Memory is
then one chunk plus the sketch, which grows with the number of distinct
predictions (about 48 bytes each), not with the number of rows.
"""

import math
import os

import numpy as np

from ._input import check_binary_calibration_input, multiclass_input, power_of_two_scale
from ._report_files import csv_chunks, parquet_chunks
from ._report_labels import Labels, as_number, classes_of_columns, positive_class
from ._report_text import ReportInputError, quoted, safe_text
from .sketch import CalibrationSketch

__all__ = ["ReportInputError", "read_report_input", "safe_text"]

IN_MEMORY_ROWS = 1 << 20  # up to this many rows the rows themselves are kept
MAX_LABELS = 10_000  # distinct spellings of labels accepted in the label column


class WeightedSketch(CalibrationSketch):
    """An exact sketch of rows of unequal weights, with their squared weights.

    ``squared_weights`` is ``(neg2, pos2)``: for each value of
    ``grouped_statistic().values``, the sums of the squared weights of its
    negative and positive rows, which the report's calibrated null and
    bootstrap need beside the grouped statistic (set by
    :func:`read_report_input` once every row is in).
    """

    squared_weights = None


class _SquaredWeights:
    """Sums of squared weights per distinct prediction, merged chunk by chunk.

    Chunks are summarised (``np.unique`` and two bincounts) and merged into the
    running sums once the pending summaries outgrow them, so the work is
    ``O(n log n)`` and the memory a few float64 per distinct prediction.
    """

    def __init__(self):
        self.values = np.zeros(0)
        self.sums = np.zeros((2, 0))  # rows: negatives, positives
        self.pending = []
        self.pending_size = 0

    def add(self, y, p, w):
        values, index = np.unique(p, return_inverse=True)
        w2 = w * w
        pos2 = np.bincount(index, w2 * y, values.shape[0])
        neg2 = np.bincount(index, w2 * (1.0 - y), values.shape[0])
        self.pending.append((values, np.vstack([neg2, pos2])))
        self.pending_size += values.shape[0]
        if self.pending_size > max(self.values.shape[0], 1 << 12):
            self._merge()

    def _merge(self):
        if not self.pending:
            return
        values = np.concatenate([self.values, *(v for v, _ in self.pending)])
        sums = np.concatenate([self.sums, *(s for _, s in self.pending)], axis=1)
        self.values, index = np.unique(values, return_inverse=True)
        self.sums = np.vstack(
            [np.bincount(index, row, self.values.shape[0]) for row in sums]
        )
        self.pending, self.pending_size = [], 0

    def aligned(self, values):
        """``(neg2, pos2)`` at ``values`` (the sketch's distinct predictions)."""
        self._merge()
        at = np.searchsorted(self.values, values)
        if not np.array_equal(self.values[np.minimum(at, len(self.values) - 1)], values):
            raise AssertionError("the squared weights miss a prediction of the sketch")
        return self.sums[0, at], self.sums[1, at]



# --- checking cells ---------------------------------------------------------------------


def _floats(name, column, option, first_row, cells):
    if isinstance(cells, np.ndarray):
        out = cells
    else:
        try:
            out = np.fromiter(map(float, cells), dtype=np.float64, count=len(cells))
        except ValueError:
            out = None
    if out is None or not np.all(np.isfinite(out)):
        for i, cell in enumerate(cells):
            value = as_number(cell) if isinstance(cell, str) else float(cell)
            if value is None or not math.isfinite(value):
                shown = quoted(cell) if isinstance(cell, str) else repr(float(cell))
                raise ReportInputError(
                    f"{name}, column {quoted(column)} ({option}), data row {first_row + i}: "
                    f"{shown} is not a finite number."
                )
    return out


def _check_proba(name, proba, first_row, P):
    bad = (P < 0) | (P > 1)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ReportInputError(
            f"{name}, column {quoted(proba[j])} (--proba), data row {first_row + i}: "
            f"probability {P[i, j]!r} is outside [0, 1]."
        )
    if P.shape[1] > 1:
        sums = P.sum(axis=1)
        off = np.flatnonzero(np.abs(sums - 1) > 1e-6)
        if off.size:
            shown = ", ".join(quoted(c) for c in proba)
            raise ReportInputError(
                f"{name}, data row {first_row + off[0]}: the probabilities in "
                f"{shown} (--proba) sum to {sums[off[0]]!r}, not 1."
            )


def _check_weights(name, weight, first_row, w):
    neg = np.flatnonzero(w < 0)
    if neg.size:
        raise ReportInputError(
            f"{name}, column {quoted(weight)} (--weight), data row {first_row + neg[0]}: "
            f"negative weight {w[neg[0]]!r}."
        )


class ReportInput:
    """What the report reads: the rows (when kept) or a sketch, and how labels were read.

    Attributes
    ----------
    y, p, w : ndarray or None
        Binary (top-label) outcomes, predictions and weights, when kept.
    sketch : CalibrationSketch or None
        The exact sketch of every row, when the rows were not kept.
    n : int
    notes : dict
        How the file was read: classes and their order, the positive class
        or the class of each column (JSON-ready, user text escaped).
    """


def read_report_input(path, label, proba, weight=None, classes=None, pos_label=None,
                      keep_weighted_rows=False):
    """Read, check and summarise a file of predictions in bounded memory.

    Parameters
    ----------
    path : str
        CSV (or Parquet: ``.parquet``, ``.pq``).
    label, proba, weight, classes, pos_label
        As the command line options ``--label``, ``--proba``, ``--weight``,
        ``--classes`` and ``--pos-label``.
    keep_weighted_rows : bool, default=False
        Keep the rows of a file of unequal weights, however many (24 bytes a
        row), instead of summarising them in a :class:`WeightedSketch`.

    Returns
    -------
    data : ReportInput

    Examples
    --------
    >>> import os, tempfile
    >>> from skcal._report_input import read_report_input
    >>> path = os.path.join(tempfile.mkdtemp(), "preds.csv")
    >>> _ = open(path, "w").write("y,p\\n0,0.2\\n1,0.7\\n1,0.9\\n")
    >>> data = read_report_input(path, "y", ["p"])
    >>> data.y.tolist(), data.p.tolist(), data.notes["pos_label"]
    ([0.0, 1.0, 1.0], [0.2, 0.7, 0.9], '1')
    """
    path = os.fspath(path)
    name = safe_text(path)
    proba = list(proba)
    if len(set(proba)) != len(proba):
        twice = next(c for c in proba if proba.count(c) > 1)
        raise ReportInputError(f"--proba names the column {quoted(twice)} twice.")
    if len(proba) == 1 and classes is not None:
        raise ReportInputError(
            "--classes is for several --proba columns; with one column name the "
            "positive class with --pos-label."
        )
    if len(proba) > 2 and pos_label is not None:
        raise ReportInputError(
            "--pos-label is for one or two --proba columns; with more, the top "
            "class is measured: name the class of each column with --classes (or "
            "name the columns after the classes)."
        )
    parquet = path.lower().endswith((".parquet", ".pq"))
    chunks = parquet_chunks if parquet else csv_chunks

    # first pass: shapes, labels, weights
    spellings = set()
    n = 0
    w_first, w_equal, w_total, w_max = None, True, 0.0, 0.0
    for first_row, labels, cells in chunks(path, label, proba, weight):
        n += len(labels)
        for i, s in enumerate(labels):
            if s == "":
                raise ReportInputError(
                    f"{name}, column {quoted(label)} (--label), data row {first_row + i}: "
                    "the label is empty."
                )
        spellings.update(labels)
        if len(spellings) > MAX_LABELS:
            raise ReportInputError(
                f"{name}: column {quoted(label)} (--label) has more than {MAX_LABELS} "
                "distinct labels; is it the column of observed classes?"
            )
        if weight is not None:
            w = _floats(name, weight, "--weight", first_row, cells[weight])
            _check_weights(name, weight, first_row, w)
            if w_first is None and w.size:
                w_first = float(w[0])
            w_equal = w_equal and bool(np.all(w == w_first))
            if w.size:
                w_max = max(w_max, float(w.max()))
            with np.errstate(over="ignore"):
                w_total += float(w.sum())
    if n == 0:
        raise ReportInputError(f"{name}: no data rows (only a header).")
    if weight is not None and not (w_total > 0 and math.isfinite(w_total)):
        raise ReportInputError(
            f"{name}, column {quoted(weight)} (--weight): the weights sum to {w_total!r}; "
            "they must have a positive, finite sum."
        )
    labels = Labels(spellings, label)
    notes = {
        "file": name,
        "label_column": safe_text(label),
        "proba_columns": [safe_text(c) for c in proba],
        "classes": [safe_text(labels.text(k)) for k in labels.classes],
        "class_order": labels.order,
    }
    if len(proba) == 1:
        pos = positive_class(labels, pos_label)
        notes["pos_label"] = safe_text(labels.text(pos))
        target = {s: labels.key_of[s] == pos for s in spellings}
    else:
        column_classes, how = classes_of_columns(labels, proba, classes)
        notes["column_classes"] = {
            safe_text(c): safe_text(labels.text(k)) for c, k in zip(proba, column_classes)
        }
        notes["columns_matched_by"] = how
        where = {k: j for j, k in enumerate(column_classes)}
        if len(proba) == 2:
            # predict_proba of a binary problem: the positive class's column
            pos = positive_class(labels, pos_label)
            if pos not in where:
                raise ReportInputError(
                    f"--pos-label {quoted(pos_label)} is not the class of either --proba "
                    "column."
                )
            notes["pos_label"] = safe_text(labels.text(pos))
            pos_column = where[pos]
            target = {s: labels.key_of[s] == pos for s in spellings}
        else:
            target = {s: where[labels.key_of[s]] for s in spellings}

    # weights times the power of two that brings the largest into [1, 2):
    # exact, and no measure depends on the scale, but the report's sums of
    # squared weights underflow for tiny weights (2**-600) and overflow for
    # huge ones
    w_scale = power_of_two_scale(w_max) if weight is not None else 0

    # second pass: outcomes and predictions, into the rows (while they are
    # few, or weighted unequally) or else into the sketch
    use_sketch = n > IN_MEMORY_ROWS and (w_equal or not keep_weighted_rows)
    squares = None if w_equal else _SquaredWeights()
    if not use_sketch:
        sketch = None
    elif w_equal:
        sketch = CalibrationSketch()
    else:
        sketch = WeightedSketch()
    kept = []
    for first_row, chunk_labels, cells in chunks(path, label, proba, weight):
        P = np.column_stack(
            [_floats(name, c, "--proba", first_row, cells[c]) for c in proba]
        )
        _check_proba(name, proba, first_row, P)
        w = None
        if weight is not None:
            w = _floats(name, weight, "--weight", first_row, cells[weight])
            if w_scale:
                w = np.ldexp(w, w_scale)
        if len(proba) <= 2:
            y = np.fromiter(
                (target[s] for s in chunk_labels), dtype=bool, count=len(chunk_labels)
            )
            p = P[:, 0 if len(proba) == 1 else pos_column]
        else:
            j = np.fromiter(
                (target[s] for s in chunk_labels), dtype=np.intp, count=len(chunk_labels)
            )
            if not use_sketch:
                # the rows' boundary below: the canonical multiclass form
                kept.append((j, P, w))
                continue
            # top-label: the largest probability, ties to the first column
            top = np.argmax(P, axis=1)
            p = P[np.arange(P.shape[0]), top]
            y = top == j
        y = y.astype(np.float64)
        if use_sketch:
            try:
                sketch.update(y, p, w)
            except ValueError as exc:
                raise ReportInputError(f"{name}: {safe_text(exc)}") from None
            if squares is not None:
                squares.add(y, p, w)
        else:
            kept.append((y, p, w))
    data = ReportInput()
    data.n, data.sketch, data.notes = n, sketch, notes
    data.y = data.p = data.w = None
    if use_sketch and squares is not None:
        sketch.squared_weights = squares.aligned(sketch.grouped_statistic().values)
    if not use_sketch:
        y = np.concatenate([k[0] for k in kept])
        p = np.concatenate([k[1] for k in kept])
        w = None if weight is None else np.concatenate([k[2] for k in kept])
        del kept
        try:
            if len(proba) > 2:
                # the boundary's multiclass form (classes are the columns, in
                # order): top-label rows derived once, nothing checked again
                y, p, w = multiclass_input(
                    y, p, w, labels=np.arange(len(proba))
                ).canonical_rows()
            else:
                y, p, w = check_binary_calibration_input(y, p, w)
        except ValueError as exc:
            raise ReportInputError(f"{name}: {safe_text(exc)}") from None
        data.y = np.asarray(y, dtype=np.float64)
        data.p = np.asarray(p, dtype=np.float64)
        data.w = np.asarray(w, dtype=np.float64)
    return data
