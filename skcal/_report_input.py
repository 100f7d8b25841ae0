"""Reading a file of predictions for ``python -m skcal report``, in bounded memory.

A CSV file is read with the standard library alone, in blocks of
``BLOCK_BYTES``; a line longer than ``MAX_LINE_BYTES`` (for instance a file
with no newline) is refused before more of it is read, and the rows are parsed
``CHUNK_ROWS`` at a time into numpy arrays. Parquet is read batch by batch with
pyarrow when it is importable (else whole, with pandas).

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

import csv
import math
import os

import numpy as np

from ._validation import check_binary_calibration_input, power_of_two_scale
from .sketch import CalibrationSketch

__all__ = ["ReportInputError", "read_report_input", "safe_text"]

BLOCK_BYTES = 1 << 20  # bytes read at a time
MAX_LINE_BYTES = 1 << 20  # the longest line (and cell) accepted: 1 MiB
CHUNK_ROWS = 1 << 16  # rows parsed into arrays at a time
CHUNK_CELL_BYTES = 1 << 24  # ... or fewer, once their kept cells reach 16 MiB
IN_MEMORY_ROWS = 1 << 20  # up to this many rows the rows themselves are kept
MAX_LABELS = 10_000  # distinct spellings of labels accepted in the label column

_BOM = b"\xef\xbb\xbf"
_TRUE_FALSE = {"true": True, "false": False}


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


class ReportInputError(ValueError):
    """A problem with the input file or options, worded for the command line."""


def safe_text(value):
    """``value`` as text with every non-printable character escaped.

    File names, column names and labels come from the user; an ANSI escape
    sequence in one must not reach the terminal (or an HTML page) as such.

    Examples
    --------
    >>> from skcal._report_input import safe_text
    >>> safe_text("a\\x1b[31mb")
    'a\\\\x1b[31mb'
    """
    text = str(value)
    if text.isprintable():
        return text
    out = []
    for ch in text:
        if ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x100:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return "".join(out)


def _q(value):
    """A user-supplied name quoted for a message (escaped, in quotes)."""
    return "'" + safe_text(value) + "'"


# --- labels ---------------------------------------------------------------------


def _as_number(text):
    try:
        return float(text)
    except ValueError:
        return None


class Labels:
    """The classes of the label column: their kind, order and display form.

    ``kind`` is ``"number"`` (every label reads as a number: equal numbers
    are one class, e.g. ``1``, ``1.0`` and ``01``, sorted as numbers),
    ``"true/false"`` (every label is true or false, in any case) or
    ``"text"`` (sorted as text).
    """

    def __init__(self, spellings, column):
        self.column = column
        lowered = {s.lower() for s in spellings}
        if spellings and lowered <= set(_TRUE_FALSE):
            self.kind, self.order = "true/false", "false < true"
        else:
            numbers = {s: _as_number(s) for s in spellings}
            if spellings and all(v is not None for v in numbers.values()):
                bad = sorted(s for s, v in numbers.items() if not math.isfinite(v))
                if bad:
                    raise ReportInputError(
                        f"column {_q(column)} (--label): the label {_q(bad[0])} is not "
                        "a finite number (a missing label?); remove or fill those rows."
                    )
                self.kind, self.order = "number", "numeric order"
            else:
                self.kind, self.order = "text", "text order"
        # spelling -> class key; key -> display text
        self.key_of = {s: self.key(s) for s in spellings}
        self.display = {}
        for s in sorted(spellings):
            self.display.setdefault(self.key_of[s], []).append(s)
        self.display = {
            k: (v[0] if len(v) == 1 else self._canonical(k)) for k, v in self.display.items()
        }
        self.classes = sorted(self.display)  # keys, in the order stated by self.order

    def key(self, token):
        """The class a token (a label in the file, or one the user typed) names, or None."""
        token = token.strip()
        if self.kind == "true/false":
            if token.lower() in _TRUE_FALSE:
                return _TRUE_FALSE[token.lower()]
            if token in ("0", "1"):
                return token == "1"
            return None
        if self.kind == "number":
            value = _as_number(token)
            if value is None or not math.isfinite(value):
                return None
            return value + 0.0  # -0.0 and 0.0 are one class
        return token

    def _canonical(self, key):
        if self.kind == "true/false":
            return "True" if key else "False"
        if self.kind == "number" and key.is_integer() and abs(key) < 2**53:
            return str(int(key))
        return repr(key)

    def text(self, key):
        if key in self.display:
            return self.display[key]
        return self._canonical(key) if self.kind != "text" else key


def _binary_positive(labels, pos_label):
    """The class key of the positive class for one probability column."""
    keys = set(labels.classes)
    if len(keys) > 2:
        shown = ", ".join(safe_text(labels.text(k)) for k in labels.classes[:5])
        raise ReportInputError(
            f"column {_q(labels.column)} (--label) has {len(keys)} distinct labels "
            f"({shown}{', ...' if len(keys) > 5 else ''}) but --proba names one "
            "column: give one --proba column per class."
        )
    conventional = (
        keys <= {0.0, 1.0} or keys <= {-1.0, 1.0}
        if labels.kind == "number"
        else labels.kind == "true/false"
    )
    shown = ", ".join(safe_text(labels.text(k)) for k in labels.classes)
    if pos_label is None:
        if conventional:
            return True if labels.kind == "true/false" else 1.0
        raise ReportInputError(
            f"the labels in column {_q(labels.column)} are {shown}, not 0/1: name the "
            "positive class with --pos-label."
        )
    key = labels.key(pos_label)
    if key is not None and key in keys:
        return key
    # a file of one class may lack the positive class of a 0/1 (or -1/1,
    # true/false) problem; any other --pos-label absent from the file is a typo
    if key is not None and len(keys) == 1 and (
        labels.kind == "true/false"
        or keys | {key} <= {0.0, 1.0}
        or keys | {key} <= {-1.0, 1.0}
    ):
        return key
    raise ReportInputError(
        f"--pos-label {_q(pos_label)} is not one of the labels in column "
        f"{_q(labels.column)} ({shown}, {labels.order})."
    )


def _column_classes(labels, proba, classes):
    """The class key of each probability column, and how it was found."""
    keys = set(labels.classes)
    if classes is not None:
        if len(classes) != len(proba):
            raise ReportInputError(
                f"--classes gives {len(classes)} labels for {len(proba)} --proba "
                "columns: give one label per column, in the order of --proba."
            )
        mapped = []
        for token in classes:
            key = labels.key(token)
            if key is None:
                raise ReportInputError(
                    f"--classes {_q(token)} is not a label of the kind in column "
                    f"{_q(labels.column)} ({labels.kind})."
                )
            if key in mapped:
                raise ReportInputError(f"--classes names the class {_q(token)} twice.")
            mapped.append(key)
        missing = [k for k in labels.classes if k not in mapped]
        if missing:
            raise ReportInputError(
                f"the label {_q(labels.text(missing[0]))} in column {_q(labels.column)} "
                "is not in --classes: give the class of every --proba column."
            )
        return mapped, "--classes"
    found = _classes_from_names(labels, proba)
    if found is None:
        shown = ", ".join(safe_text(labels.text(k)) for k in labels.classes[:10])
        raise ReportInputError(
            f"cannot tell the class of each --proba column from their names "
            f"(the labels in column {_q(labels.column)} are {shown}): pass --classes, "
            "one label per --proba column, in the same order."
        )
    if not keys <= set(found):
        missing = [k for k in labels.classes if k not in found][0]
        raise ReportInputError(
            f"the label {_q(labels.text(missing))} in column {_q(labels.column)} has "
            "no --proba column: give one column per class (or --classes)."
        )
    return found, "column names"


def _classes_from_names(labels, proba):
    """Read each column's class off its name (``cat``, ``p_cat``, ``proba1``...).

    Every split of the names into a common prefix, a token and a common
    suffix is tried; the columns are mapped when the tokens name distinct
    classes covering every label in the file, and exactly one such mapping
    exists (else None: the user must say).
    """
    prefix = os.path.commonprefix(proba)
    suffix = os.path.commonprefix([c[::-1] for c in proba])[::-1]
    shortest = min(len(c) for c in proba)
    keys = set(labels.classes)
    found = set()
    for i in range(len(prefix) + 1):
        for j in range(len(suffix) + 1):
            if i + j > shortest:
                continue
            tokens = [c[i : len(c) - j] for c in proba]
            mapped = [labels.key(t) if t.strip() else None for t in tokens]
            if None in mapped or len(set(mapped)) != len(mapped):
                continue
            if not keys <= set(mapped):
                continue
            found.add(tuple(mapped))
    if len(found) != 1:
        return None
    return list(found.pop())


# --- reading CSV in bounded blocks ------------------------------------------------


def _open_error(path, exc):
    name = safe_text(path)
    if isinstance(exc, FileNotFoundError):
        return ReportInputError(f"{name}: no such file.")
    if isinstance(exc, IsADirectoryError):
        return ReportInputError(f"{name}: is a directory, not a file.")
    if isinstance(exc, PermissionError):
        return ReportInputError(f"{name}: permission denied.")
    return ReportInputError(f"{name}: cannot be read ({safe_text(exc.strerror or exc)}).")


def _lines(path):
    """The decoded lines of a file, each at most ``MAX_LINE_BYTES`` long."""
    name = safe_text(path)
    if os.path.isdir(path):
        raise ReportInputError(f"{name}: is a directory, not a file.")
    try:
        f = open(path, "rb")
    except OSError as exc:
        raise _open_error(path, exc) from None
    with f:
        tail = b""
        line_no = 0
        first = True
        while True:
            try:
                block = f.read(BLOCK_BYTES)
            except OSError as exc:
                raise _open_error(path, exc) from None
            if first:
                first = False
                if block.startswith(_BOM):
                    block = block[len(_BOM) :]  # a UTF-8 byte order mark
            if not block:
                break
            parts = (tail + block).split(b"\n")
            tail = parts.pop()
            for part in parts:
                line_no += 1
                yield _decode(name, line_no, part + b"\n")
            if len(tail) > MAX_LINE_BYTES:
                raise ReportInputError(
                    f"{name}, line {line_no + 1}: longer than {MAX_LINE_BYTES >> 20} MiB "
                    "(is it a CSV file with one row per line?)."
                )
        if tail:
            yield _decode(name, line_no + 1, tail)


def _decode(name, line_no, raw):
    if len(raw) > MAX_LINE_BYTES + 1:
        raise ReportInputError(
            f"{name}, line {line_no}: longer than {MAX_LINE_BYTES >> 20} MiB "
            "(is it a CSV file with one row per line?)."
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ReportInputError(
            f"{name}, line {line_no}: not UTF-8 text (is it a CSV file?)."
        ) from None


def _check_header(name, header, label, proba, weight):
    seen = set()
    for h in header:
        # unnamed columns (trailing commas of a spreadsheet export) cannot be
        # named on the command line, so several of them are no ambiguity
        if h in seen and h != "":
            raise ReportInputError(
                f"{name}: the column name {_q(h)} appears twice in the header; "
                "rename one of them."
            )
        seen.add(h)
    wanted = [("--label", label)] + [("--proba", c) for c in proba]
    if weight is not None:
        wanted.append(("--weight", weight))
    used = {}
    for option, column in wanted:
        if column not in seen:
            shown = ", ".join(_q(h) for h in header[:20])
            more = ", ..." if len(header) > 20 else ""
            raise ReportInputError(
                f"{name}: no column {_q(column)} ({option}); the columns are "
                f"{shown}{more}."
            )
        if column in used:
            raise ReportInputError(
                f"{name}: column {_q(column)} is given to both {used[column]} and "
                f"{option}; each column has one role."
            )
        used[column] = option
    index = {h: i for i, h in enumerate(header)}
    return index[label], [index[c] for c in proba], (
        None if weight is None else index[weight]
    )


def _csv_chunks(path, label, proba, weight):
    """Yield ``(first data row, labels, {column: cells})`` chunks of a CSV file.

    With pyarrow installed its streaming CSV reader parses the rows (blocks
    of ``BLOCK_BYTES``, several times faster than the standard library);
    at the first cell or row it does not take as the standard library would
    (a number that is not finite or that it cannot parse, a row of another
    width, a line too long...) the standard library reads on from that
    chunk's first row, and so says what is wrong, as it always did.
    """
    done = 0
    fast = _arrow_csv_chunks(path, label, proba, weight)
    if fast is not None:
        try:
            while True:
                try:
                    chunk = next(fast)
                except StopIteration:
                    return
                yield chunk
                done += len(chunk[1])
        except _NotForArrow:
            pass
    yield from _stdlib_csv_chunks(path, label, proba, weight, skip=done)


class _NotForArrow(Exception):
    """The rest of the file is for the standard library's reader."""


def _arrow_csv_chunks(path, label, proba, weight):
    """The chunks of ``_csv_chunks`` read by pyarrow, or None without pyarrow."""
    try:
        import pyarrow as pa
        import pyarrow.csv as pa_csv
    except ImportError:
        return None
    # the header as the standard library reads it (and its messages)
    header = None
    lines = _lines(path)
    try:
        reader = csv.reader(lines)
        header = next(reader, None)
        one_line = reader.line_num == 1
    except csv.Error:
        header = None
    finally:
        lines.close()
    if header is None or not one_line or _has_lone_cr(path):
        return None  # the standard library says what is wrong
    header = [h.strip() for h in header]
    _check_header(safe_text(path), header, label, proba, weight)
    numbers = [*proba, *([weight] if weight is not None else [])]
    types = {label: pa.string(), **{c: pa.float64() for c in numbers}}
    return _arrow_batches(pa, pa_csv, path, header, label, numbers, types)


def _has_lone_cr(path):
    """Whether the file has a carriage return not followed by a newline.

    pyarrow ends a row there (old Mac line ends); the standard library refuses
    it in an unquoted cell, and reads it as part of a quoted one.
    """
    previous = b""
    with open(path, "rb") as f:
        while block := f.read(BLOCK_BYTES):
            if previous == b"\r" and not block.startswith(b"\n"):
                return True
            if b"\r" in block and (
                block.count(b"\r") != block.count(b"\r\n") + block.endswith(b"\r")
            ):
                return True
            previous = block[-1:]
    return previous == b"\r"


def _arrow_batches(pa, pa_csv, path, header, label, numbers, types):
    try:
        reader = pa_csv.open_csv(
            path,
            read_options=pa_csv.ReadOptions(
                skip_rows=1, column_names=header, block_size=BLOCK_BYTES
            ),
            parse_options=pa_csv.ParseOptions(newlines_in_values=True),
            convert_options=pa_csv.ConvertOptions(
                include_columns=[label, *numbers],
                column_types=types,
                null_values=[],
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except (pa.ArrowException, OSError, ValueError):
        raise _NotForArrow from None
    row_no = 0
    with reader:
        while True:
            try:
                batch = reader.read_next_batch()
            except StopIteration:
                return
            except (pa.ArrowException, OSError, ValueError):
                raise _NotForArrow from None
            if batch.num_rows == 0:
                continue
            cells = {}
            for c in numbers:
                column = batch.column(c)
                values = column.to_numpy(zero_copy_only=False)
                if column.null_count or not np.all(np.isfinite(values)):
                    raise _NotForArrow  # the standard library names the cell
                cells[c] = np.array(values, dtype=np.float64)
            # labels as the standard library gives them: text, stripped
            codes = batch.column(label).dictionary_encode()
            spellings = np.array(
                [s.strip() for s in codes.dictionary.to_pylist()] + [""], dtype=object
            )
            labels = spellings[codes.indices.to_numpy(zero_copy_only=False)].tolist()
            yield row_no + 1, labels, cells
            row_no += batch.num_rows


def _stdlib_csv_chunks(path, label, proba, weight, skip=0):
    """``_csv_chunks`` with the standard library; the first ``skip`` data rows
    are checked but not yielded."""
    name = safe_text(path)
    previous = csv.field_size_limit(MAX_LINE_BYTES)  # a process-wide setting
    reader = csv.reader(_lines(path))
    try:
        header = next(reader, None)
        if header is None:
            raise ReportInputError(f"{name}: the file is empty.")
        header = [h.strip() for h in header]
        i_label, i_proba, i_weight = _check_header(name, header, label, proba, weight)
        wanted = [(c, i) for c, i in zip(proba, i_proba)]
        if weight is not None:
            wanted.append((weight, i_weight))
        width = len(header)
        row_no = 0
        labels, cells = [], {c: [] for c, _ in wanted}
        size = 0
        for row in reader:
            if not row:
                continue  # a blank line
            if len(row) != width:
                raise ReportInputError(
                    f"{name}, line {reader.line_num}: {len(row)} cells, but the header "
                    f"has {width}."
                )
            row_no += 1
            if row_no <= skip:
                continue
            cell = row[i_label].strip()
            labels.append(cell)
            size += len(cell)
            for c, i in wanted:
                cell = row[i]
                cells[c].append(cell)
                size += len(cell)
            if len(labels) >= CHUNK_ROWS or size >= CHUNK_CELL_BYTES:
                yield row_no - len(labels) + 1, labels, cells
                labels, cells = [], {c: [] for c, _ in wanted}
                size = 0
        if labels:
            yield row_no - len(labels) + 1, labels, cells
    except csv.Error as exc:
        if "field larger than field limit" in str(exc):
            raise ReportInputError(
                f"{name}, line {reader.line_num}: a cell longer than "
                f"{MAX_LINE_BYTES >> 20} MiB."
            ) from None
        raise ReportInputError(
            f"{name}, line {reader.line_num}: not valid CSV ({safe_text(exc)})."
        ) from None
    finally:
        csv.field_size_limit(previous)


# --- reading Parquet ----------------------------------------------------------------


def _parquet_chunks(path, label, proba, weight):
    name = safe_text(path)
    if os.path.isdir(path):
        raise ReportInputError(f"{name}: is a directory, not a file.")
    if not os.path.exists(path):
        raise ReportInputError(f"{name}: no such file.")
    columns = [label, *proba, *([weight] if weight is not None else [])]
    try:
        import pyarrow.parquet as pq
    except ImportError:
        pq = None
    try:
        if pq is not None:
            source = pq.ParquetFile(path)
            header = list(source.schema_arrow.names)
            _check_header(name, header, label, proba, weight)
            batches = (
                {c: batch.column(batch.schema.get_field_index(c)) for c in columns}
                for batch in source.iter_batches(batch_size=CHUNK_ROWS, columns=columns)
            )
        else:
            try:
                import pandas as pd

                frame = pd.read_parquet(path)
            except ImportError:
                raise ReportInputError(
                    f"{name}: reading Parquet needs pyarrow (pip install pyarrow); "
                    "or save the file as CSV."
                ) from None
            header = [str(c) for c in frame.columns]
            _check_header(name, header, label, proba, weight)
            frame.columns = header
            batches = (
                {c: frame[c].iloc[s : s + CHUNK_ROWS] for c in columns}
                for s in range(0, len(frame), CHUNK_ROWS)
            )
        row = 1
        for batch in batches:
            labels = [_label_text(v) for v in _pylist(batch[label])]
            cells = {c: _numbers_of(batch[c]) for c in columns[1:]}
            yield row, labels, cells
            row += len(labels)
    except ReportInputError:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure of the Parquet reader
        raise ReportInputError(
            f"{name}: not a readable Parquet file ({type(exc).__name__}: "
            f"{safe_text(exc)})."
        ) from None


def _pylist(column):
    return column.to_pylist() if hasattr(column, "to_pylist") else column.tolist()


def _label_text(value):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""  # missing: refused as an empty label
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace").strip()
    if isinstance(value, float):
        return repr(value)
    return str(value).strip()


def _numbers_of(column):
    """Floats (NaN where missing) of a numeric column, else the cells as text."""
    try:
        import pyarrow as pa

        if isinstance(column, pa.ChunkedArray | pa.Array):
            t = column.type
            if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t):
                return np.asarray(
                    column.cast(pa.float64()).to_numpy(zero_copy_only=False),
                    dtype=np.float64,
                )
            return ["" if v is None else str(v) for v in column.to_pylist()]
    except ImportError:
        pass
    values = column.to_numpy()
    if values.dtype.kind in "iuf":
        return values.astype(np.float64)
    return ["" if v is None else str(v) for v in values.tolist()]


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
            value = _as_number(cell) if isinstance(cell, str) else float(cell)
            if value is None or not math.isfinite(value):
                shown = _q(cell) if isinstance(cell, str) else repr(float(cell))
                raise ReportInputError(
                    f"{name}, column {_q(column)} ({option}), data row {first_row + i}: "
                    f"{shown} is not a finite number."
                )
    return out


def _check_proba(name, proba, first_row, P):
    bad = (P < 0) | (P > 1)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ReportInputError(
            f"{name}, column {_q(proba[j])} (--proba), data row {first_row + i}: "
            f"probability {P[i, j]!r} is outside [0, 1]."
        )
    if P.shape[1] > 1:
        sums = P.sum(axis=1)
        off = np.flatnonzero(np.abs(sums - 1) > 1e-6)
        if off.size:
            shown = ", ".join(_q(c) for c in proba)
            raise ReportInputError(
                f"{name}, data row {first_row + off[0]}: the probabilities in "
                f"{shown} (--proba) sum to {sums[off[0]]!r}, not 1."
            )


def _check_weights(name, weight, first_row, w):
    neg = np.flatnonzero(w < 0)
    if neg.size:
        raise ReportInputError(
            f"{name}, column {_q(weight)} (--weight), data row {first_row + neg[0]}: "
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
        raise ReportInputError(f"--proba names the column {_q(twice)} twice.")
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
    chunks = _parquet_chunks if parquet else _csv_chunks

    # first pass: shapes, labels, weights
    spellings = set()
    n = 0
    w_first, w_equal, w_total, w_max = None, True, 0.0, 0.0
    for first_row, labels, cells in chunks(path, label, proba, weight):
        n += len(labels)
        for i, s in enumerate(labels):
            if s == "":
                raise ReportInputError(
                    f"{name}, column {_q(label)} (--label), data row {first_row + i}: "
                    "the label is empty."
                )
        spellings.update(labels)
        if len(spellings) > MAX_LABELS:
            raise ReportInputError(
                f"{name}: column {_q(label)} (--label) has more than {MAX_LABELS} "
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
            f"{name}, column {_q(weight)} (--weight): the weights sum to {w_total!r}; "
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
        pos = _binary_positive(labels, pos_label)
        notes["pos_label"] = safe_text(labels.text(pos))
        target = {s: labels.key_of[s] == pos for s in spellings}
    else:
        column_classes, how = _column_classes(labels, proba, classes)
        notes["column_classes"] = {
            safe_text(c): safe_text(labels.text(k)) for c, k in zip(proba, column_classes)
        }
        notes["columns_matched_by"] = how
        where = {k: j for j, k in enumerate(column_classes)}
        if len(proba) == 2:
            # predict_proba of a binary problem: the positive class's column
            pos = _binary_positive(labels, pos_label)
            if pos not in where:
                raise ReportInputError(
                    f"--pos-label {_q(pos_label)} is not the class of either --proba "
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
            y, p, w = check_binary_calibration_input(y, p, w)
        except ValueError as exc:
            raise ReportInputError(f"{name}: {safe_text(exc)}") from None
        data.y = np.asarray(y, dtype=np.float64)
        data.p = np.asarray(p, dtype=np.float64)
        data.w = np.asarray(w, dtype=np.float64)
    return data
