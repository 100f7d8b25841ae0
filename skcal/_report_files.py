"""Reading the rows of a report's file in chunks, in bounded memory (CSV and Parquet).

A CSV file is read in blocks of ``BLOCK_BYTES`` (by pyarrow's block reader
when it can, else by the standard library); a line longer than
``MAX_LINE_BYTES`` is refused before more of it is read; the rows are handed
on ``CHUNK_ROWS`` at a time (fewer once their cells reach
``CHUNK_CELL_BYTES``). Parquet is read batch by batch with pyarrow when it is
importable (else whole, with pandas). Each reader yields ``(first_row,
labels, cells)``: the chunk's first data row number, its label texts, and per
column its cells (text, or floats from a typed source).
"""

import csv
import math
import os

import numpy as np

from ._report_text import ReportInputError, quoted, safe_text

__all__ = ["csv_chunks", "parquet_chunks"]

BLOCK_BYTES = 1 << 20  # bytes read at a time
MAX_LINE_BYTES = 1 << 20  # the longest line (and cell) accepted: 1 MiB
CHUNK_ROWS = 1 << 16  # rows parsed into arrays at a time
CHUNK_CELL_BYTES = 1 << 24  # ... or fewer, once their kept cells reach 16 MiB

_BOM = b"\xef\xbb\xbf"

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
                f"{name}: the column name {quoted(h)} appears twice in the header; "
                "rename one of them."
            )
        seen.add(h)
    wanted = [("--label", label)] + [("--proba", c) for c in proba]
    if weight is not None:
        wanted.append(("--weight", weight))
    used = {}
    for option, column in wanted:
        if column not in seen:
            shown = ", ".join(quoted(h) for h in header[:20])
            more = ", ..." if len(header) > 20 else ""
            raise ReportInputError(
                f"{name}: no column {quoted(column)} ({option}); the columns are "
                f"{shown}{more}."
            )
        if column in used:
            raise ReportInputError(
                f"{name}: column {quoted(column)} is given to both {used[column]} and "
                f"{option}; each column has one role."
            )
        used[column] = option
    index = {h: i for i, h in enumerate(header)}
    return index[label], [index[c] for c in proba], (
        None if weight is None else index[weight]
    )


def csv_chunks(path, label, proba, weight):
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
    """The chunks of ``csv_chunks`` read by pyarrow, or None without pyarrow."""
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
                if column.null_count:
                    raise _NotForArrow  # the standard library names the cell
                values = _buffer_values(column, np.float64)
                if not np.all(np.isfinite(values)):
                    raise _NotForArrow  # the standard library names the cell
                cells[c] = np.array(values, dtype=np.float64)
            # labels as the standard library gives them: text, stripped
            codes = batch.column(label).dictionary_encode()
            spellings = np.array(
                [s.strip() for s in codes.dictionary.to_pylist()] + [""], dtype=object
            )
            indices = codes.indices
            labels = spellings[_buffer_values(indices, np.dtype(str(indices.type)))].tolist()
            yield row_no + 1, labels, cells
            row_no += batch.num_rows


def _buffer_values(array, dtype):
    """The values of a pyarrow array of numbers without nulls, as a numpy view.

    Read off its data buffer (Arrow's layout: the values after ``offset``
    of them), not by ``to_numpy``, which imports pandas (about 0.9 s) in
    recent pyarrow.
    """
    dtype = np.dtype(dtype)
    return np.frombuffer(
        array.buffers()[1], dtype=dtype, count=len(array), offset=array.offset * dtype.itemsize
    )


def _stdlib_csv_chunks(path, label, proba, weight, skip=0):
    """``csv_chunks`` with the standard library; the first ``skip`` data rows
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


def parquet_chunks(path, label, proba, weight):
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
