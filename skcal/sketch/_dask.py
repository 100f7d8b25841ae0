"""Calibration of data held in Dask collections: one sketch per partition, merged in a tree.

Every binary measure is a functional of the grouped sufficient statistic,
and the statistic of concatenated data is the sorted merge of the statistics
of its parts. So a Dask collection is measured without collecting its rows:
each partition builds a :class:`~skcal.sketch.CalibrationSketch` where it
lives, sketches (never rows) travel up a tree of merges, and the measure runs
on the merged sketch. This module is imported only when Dask input is seen;
importing skcal never imports Dask.

What depends on the whole label set rather than on one partition (the
positive label of ``{0, 1}`` against ``{-1, 1}``, the class of each column
of ``predict_proba`` output) is settled on the union of the labels the
partitions saw, so the answer and the errors are those of the in-memory
call on the concatenated data.
"""

from __future__ import annotations

import numbers
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from .._input import (
    check_binary_calibration_input,
    check_sample_weight,
    check_y_true,
    flatten_column,
    resolve_labels,
    unique_labels,
)

if TYPE_CHECKING:
    from ._sketch import CalibrationSketch

__all__ = ["dask_sketch", "is_dask_collection"]

# max_size="auto": exact up to this many distinct predictions. The exact
# sketch takes about 24 bytes per distinct value (a value and two sums), and
# merging two of them about four times that for a moment: 2**22 values keep
# every task of the tree within about 0.5 GB, far inside a 2.5 GB worker.
AUTO_MAX_SIZE = 1 << 22


def is_dask_collection(x: object) -> bool:
    """Whether ``x`` is a Dask collection (array, dataframe, series).

    Read from the type's module, so that Dask is never imported for it.

    Parameters
    ----------
    x : object
        Any input.

    Returns
    -------
    is_dask : bool
        True for a Dask collection.
    """
    return type(x).__module__.partition(".")[0] == "dask"


def dask_sketch(
    y_true: Any,
    y_prob: Any,
    sample_weight: Any = None,
    *,
    max_size: int | str | None = "auto",
    pos_label: int | float | bool | str | None = None,
    multiclass: str = "top-label",
    labels: Any = None,
    split_every: int = 4,
) -> CalibrationSketch:
    """Build the calibration sketch of Dask data, one partition at a time.

    Each partition (a chunk of a ``dask.array``, a partition of a
    ``dask.dataframe``) is validated and turned into a
    :class:`~skcal.sketch.CalibrationSketch` on the worker that holds it;
    the sketches are merged in a tree, ``split_every`` at a time, and only
    the merged sketch reaches the caller. No partition's rows are ever
    collected in one place. The measures accept Dask input directly and take
    this path with the default ``max_size="auto"``; call this function to
    choose a budget, to reuse one sketch for several measures, or to store
    it (``to_bytes``).

    While the sketch is exact every measure computed from it equals the
    in-memory value on the concatenated data. The default, ``"auto"``, keeps
    it exact up to ``2**22`` (4,194,304) distinct predictions, about 100 MB
    (24 bytes per distinct value); data with more distinct predictions
    (continuous scores over millions of rows) would not fit a worker's
    memory in every merge, so the sketch is then compacted to that budget
    and a ``UserWarning`` says so. With a compacted sketch (or any
    ``max_size``) each partition's sketch and every merge compact onto a
    dyadic grid, and the sketch reports a bound per measure
    (``error_bounds()``); binned ECE with a power-of-two number of uniform
    bins and SCDL stay exact. ``max_size=None`` keeps the sketch exact
    whatever its size.

    Parameters
    ----------
    y_true : dask Array or Series of shape (n_samples,), or array-like
        Observed labels. At least one of ``y_true``, ``y_prob`` and
        ``sample_weight`` is a Dask collection; in-memory arrays among them
        are split like the Dask ones.
    y_prob : dask Array, Series or DataFrame of shape (n_samples,), \
(n_samples, 2) or (n_samples, n_classes), or array-like
        Predicted probability of the positive class, or ``predict_proba``
        output (top-label for more than two columns).
    sample_weight : dask Array or Series of shape (n_samples,), or array-like, \
default=None
        Non-negative weights with a positive total (a partition may weigh
        zero).
    max_size : int, "auto" or None, default="auto"
        Budget of the sketch (see :class:`~skcal.sketch.CalibrationSketch`):
        ``"auto"`` is exact up to ``2**22`` distinct predictions and compacted
        to that many beyond (with a warning); None keeps it exact at any
        size.
    pos_label : int, float, bool or str, default=None
        The positive class; by default 1 for labels in {0, 1} or {-1, 1}
        (over all partitions), otherwise required.
    multiclass : {"top-label", "raise"}, default="top-label"
        What to do with ``predict_proba`` output of more than two columns.
    labels : array-like of shape (n_classes,), default=None
        The class of each column of ``y_prob``; by default inferred from the
        labels of all partitions, as the in-memory measures do.
    split_every : int, default=4
        How many sketches one task of the tree merges (at least 2).

    Returns
    -------
    sketch : CalibrationSketch
        The merged sketch; pass it to any binary measure or to
        :class:`~skcal.CalibrationTester` in place of ``y_true``.

    Raises
    ------
    ValueError or TypeError
        For invalid input, with the message of the in-memory check; an error
        found inside a partition names the partition (and its rows, for Dask
        arrays).

    Examples
    --------
    >>> import numpy as np
    >>> import dask.array as da
    >>> from skcal import dask_sketch, smooth_calibration_error
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=1000)
    >>> y = (rng.uniform(size=1000) < p).astype(int)
    >>> sketch = dask_sketch(da.from_array(y, chunks=300), da.from_array(p, chunks=300))
    >>> sketch.exact
    True
    >>> smooth_calibration_error(sketch) == smooth_calibration_error(y, p)
    True

    The measures take Dask input directly, through the same exact sketch:

    >>> smooth_calibration_error(da.from_array(y, chunks=300), da.from_array(p, chunks=300)) \
== smooth_calibration_error(y, p)
    True
    """
    import dask

    auto = isinstance(max_size, str) and max_size == "auto"
    if isinstance(max_size, str) and not auto:
        raise ValueError(
            f"max_size must be an integer >= 2, 'auto' or None, got {max_size!r}."
        )
    if auto:
        max_size = AUTO_MAX_SIZE
    elif max_size is not None and (
        isinstance(max_size, bool)
        or not isinstance(max_size, numbers.Integral)
        or max_size < 2
    ):
        raise ValueError(
            f"max_size must be an integer >= 2, 'auto' or None, got {max_size!r}."
        )
    root, finish = _plan(
        y_true,
        y_prob,
        sample_weight,
        max_size=max_size,
        pos_label=pos_label,
        multiclass=multiclass,
        labels=labels,
        split_every=split_every,
    )
    (root,) = dask.compute(root)
    sketch = finish(root)
    if auto and not sketch.exact:
        warnings.warn(
            f"The data have more than {AUTO_MAX_SIZE} distinct predictions, so "
            "dask_sketch (max_size='auto') compacted the sketch: measures of it "
            "are within sketch.error_bounds() of the in-memory values, not equal "
            "to them. Pass max_size=None to dask_sketch for the exact sketch "
            "(about 24 bytes per distinct prediction in every merge), or round "
            "the predictions.",
            UserWarning,
            stacklevel=2,
        )
    return sketch


def _plan(y_true, y_prob, sample_weight, *, max_size, pos_label, multiclass, labels,
          split_every):
    """The delayed root of the merge tree, and what turns its value into the sketch.

    Split from :func:`dask_sketch` so that several sketches can be computed
    in one ``dask.compute`` (the tests do).
    """
    import dask

    from ._sketch import CalibrationSketch  # noqa: F401  (fail early if absent)

    if isinstance(split_every, bool) or not isinstance(split_every, numbers.Integral):
        raise TypeError(f"split_every must be an integer >= 2, got {split_every!r}.")
    if split_every < 2:
        raise ValueError(f"split_every must be an integer >= 2, got {split_every}.")
    if y_prob is None:
        raise ValueError("y_prob is required (the predicted probabilities).")
    if not any(is_dask_collection(a) for a in (y_true, y_prob, sample_weight)):
        raise TypeError(
            "dask_sketch needs Dask input (a dask Array, Series or DataFrame) in "
            "y_true, y_prob or sample_weight; for in-memory arrays build a "
            "CalibrationSketch directly."
        )
    blocks = _partitions(y_true, y_prob, sample_weight)
    options = {
        "max_size": max_size,
        "pos_label": pos_label,
        "multiclass": multiclass,
        "labels": labels,
    }
    n_columns = _n_columns(y_prob)
    if labels is None and n_columns is not None and n_columns >= 2:
        # Which column is which class depends on all labels, not one partition's:
        # one cheap pass over y_true finds them, then every partition is told.
        seen = _tree(
            [
                dask.delayed(_labels_of_block)(b.y, b.where(i, len(blocks)))
                for i, b in enumerate(blocks)
            ],
            _union_labels,
            split_every,
        )
        (classes,) = dask.compute(seen)
        options["labels"] = _columns_of(classes, n_columns, pos_label, multiclass)
    parts = [
        dask.delayed(_block_sketch)(b.y, b.p, b.w, b.where(i, len(blocks)), options)
        for i, b in enumerate(blocks)
    ]

    def finish(root):
        return _finish(root, n_columns, pos_label, multiclass, labels)

    return _tree(parts, _merge_parts, split_every), finish


# --------------------------------------------------------------------------
# Splitting the inputs into aligned partitions
# --------------------------------------------------------------------------


class _Block:
    """The delayed pieces of one partition and where its rows are."""

    __slots__ = ("y", "p", "w", "start", "stop")

    def __init__(self, y, p, w, start=None, stop=None):
        self.y, self.p, self.w = y, p, w
        self.start, self.stop = start, stop

    def where(self, index, n_blocks):
        rows = "" if self.start is None else f", rows {self.start} to {self.stop - 1}"
        return f"partition {index} of {n_blocks}{rows}"


def _is_frame(x):
    """A dask dataframe collection (Series or DataFrame)."""
    return is_dask_collection(x) and hasattr(x, "npartitions") and hasattr(x, "divisions")


def _n_columns(y_prob):
    """Number of probability columns, None for 1-D ``y_prob``."""
    ndim = getattr(y_prob, "ndim", None)
    if ndim is None:
        ndim = np.ndim(y_prob)
    if ndim != 2:
        return None
    shape = getattr(y_prob, "shape", None)
    if _is_frame(y_prob):
        return len(y_prob.columns)
    return int(shape[1]) if shape is not None else np.shape(y_prob)[1]


def _partitions(y_true, y_prob, sample_weight):
    """Aligned delayed partitions ``_Block(y, p, w)`` of the three inputs.

    Dataframe columns with the same number of partitions (columns of one
    frame, typically) are paired partition by partition; anything else
    becomes a Dask array cut like the first Dask input (``y_prob`` first).
    """
    inputs = [y_true, y_prob, sample_weight]
    present = [a for a in inputs if a is not None]
    if all(_is_frame(a) for a in present) and len({a.npartitions for a in present}) == 1:
        delayed = [None if a is None else a.to_delayed() for a in inputs]
        n = present[0].npartitions
        return [
            _Block(*(None if d is None else d[i] for d in delayed)) for i in range(n)
        ]
    import dask.array as da

    arrays = []
    for name, a in zip(("y_true", "y_prob", "sample_weight"), inputs):
        if a is None:
            arrays.append(None)
        elif _is_frame(a):
            arrays.append(a.to_dask_array(lengths=True))
        elif isinstance(a, da.Array):
            if any(np.isnan(c) for c in a.chunks[0]):
                a = a.compute_chunk_sizes()
            arrays.append(a)
        elif is_dask_collection(a):
            raise TypeError(
                f"{name} is a {type(a).__name__}; skcal takes dask Arrays, Series "
                "and DataFrames."
            )
        else:
            arrays.append(a)  # in memory: cut below like the Dask inputs
    reference = next(a for a in (arrays[1], arrays[0], arrays[2]) if isinstance(a, da.Array))
    n = reference.shape[0]
    for name, a in zip(("y_true", "y_prob", "sample_weight"), arrays):
        length = None if a is None else (a.shape[0] if np.ndim(a) else None)
        if a is not None and length is not None and length != n:
            first = "y_prob" if reference is arrays[1] else "y_true"
            raise ValueError(
                f"{first} and {name} have inconsistent numbers of samples: "
                f"{n} and {length}."
            )
    chunks = reference.chunks[0]
    pieces = []
    for a in arrays:
        if a is None:
            pieces.append(None)
            continue
        if not isinstance(a, da.Array):
            a = da.from_array(np.asarray(a), chunks=(chunks,) + tuple(-1 for _ in np.shape(a)[1:]))
        elif a.chunks[0] != chunks or any(len(c) > 1 for c in a.chunks[1:]):
            a = a.rechunk((chunks,) + tuple(-1 for _ in a.shape[1:]))
        pieces.append(a.to_delayed().ravel())
    stops = np.cumsum(chunks)
    return [
        _Block(
            *(None if d is None else d[i] for d in pieces),
            start=int(stops[i] - chunks[i]),
            stop=int(stops[i]),
        )
        for i in range(len(chunks))
    ]


def _tree(nodes, combine, split_every):
    """Reduce delayed ``nodes`` by ``combine`` in a tree of fan-in ``split_every``."""
    import dask

    combine = dask.delayed(combine, pure=True)
    while len(nodes) > 1:
        nodes = [combine(*nodes[i:i + split_every]) for i in range(0, len(nodes), split_every)]
    return nodes[0]


# --------------------------------------------------------------------------
# Work done on the workers (plain numpy on one partition)
# --------------------------------------------------------------------------


class _Part:
    """What a partition (or a subtree) sends up: its sketch and its labels.

    ``sketch`` is None when the partition has no rows or only rows of weight
    zero; ``n_rows`` and ``weighted`` tell the two apart at the root.
    """

    __slots__ = ("sketch", "labels", "n_rows", "weighted")

    def __init__(self, sketch, labels, n_rows, weighted):
        self.sketch, self.labels = sketch, labels
        self.n_rows, self.weighted = n_rows, weighted

    def __getstate__(self):
        return (self.sketch, self.labels, self.n_rows, self.weighted)

    def __setstate__(self, state):
        self.sketch, self.labels, self.n_rows, self.weighted = state


def _as_numpy(x):
    """A partition as an ndarray (pandas objects through ``to_numpy``)."""
    if x is None:
        return None
    to_numpy = getattr(x, "to_numpy", None)
    return to_numpy() if callable(to_numpy) else np.asarray(x)


def _labels_array(y):
    """``y_true`` of a partition; an object column of plain numbers (bool, int,
    float: what a dataframe holds after concatenating partitions of several
    label dtypes) as the numeric array an in-memory concatenation gives."""
    y = _as_numpy(y)
    if y.dtype == object and y.ndim == 1 and y.shape[0]:
        if all(isinstance(v, (bool, int, float, np.bool_, np.number)) for v in y):
            return np.asarray(y.tolist())
    return y


def _in_partition(where, func):
    """``func()``; a ValueError or TypeError names the partition."""
    try:
        return func()
    except (ValueError, TypeError) as exc:
        message = f"In {where}: {exc}"
        try:
            error = type(exc)(message)
        except Exception:  # an exception type with another signature
            error = ValueError(message)
        raise error from exc


def _labels_of_block(y, where):
    """Distinct labels of one partition's ``y_true``."""
    y = _labels_array(y)
    if y.shape[0] == 0:
        return None
    return _in_partition(where, lambda: _label_set(check_y_true(y)))


def _label_set(y):
    """Sorted distinct labels; min, max and two counts for the usual numeric case."""
    if y.dtype.kind in "biuf":
        lo, hi = y.min(), y.max()
        if lo == hi:
            return y[:1].copy()
        if np.count_nonzero(y == lo) + np.count_nonzero(y == hi) == y.shape[0]:
            return np.array([lo, hi], dtype=y.dtype)
    return unique_labels(y)


def _union_labels(*sets):
    """Sorted union of label sets (None for a partition without rows)."""
    sets = [s for s in sets if s is not None]
    if not sets:
        return None
    kinds = {s.dtype.kind for s in sets}
    if len(kinds) > 1 and not kinds <= set("biuf"):
        sets = [s.astype(object) for s in sets]
    # numeric labels of several dtypes (int, float, bool) promote as the
    # in-memory concatenation of the partitions would
    return unique_labels(np.concatenate(sets))


def _block_sketch(y, p, w, where, options):
    """The sketch and labels of one partition, validated where it lives."""
    from ._sketch import CalibrationSketch

    y, p, w = _labels_array(y), _as_numpy(p), _as_numpy(w)

    def build():
        n_rows = y.shape[0] if y.ndim else 0
        if n_rows == 0 and p.shape[0] == 0 and (w is None or w.shape[0] == 0):
            return _Part(None, None, 0, False)
        kwargs = {k: options[k] for k in ("pos_label", "multiclass", "labels")}
        if w is not None and w.ndim == 1 and w.shape[0] == n_rows and _all_zero(w):
            # The rows weigh nothing here but the total may be positive: check
            # them as unit-weight rows, and send no sketch.
            check_binary_calibration_input(y, p, None, **kwargs)
            return _Part(None, _label_set(flatten_column(y)), n_rows, False)
        # the sketch checks the rows, labels included (once): the label set
        # is read off the labels it accepted
        sketch = CalibrationSketch(y, p, w, max_size=options["max_size"], **kwargs)
        return _Part(sketch, _label_set(flatten_column(y)), n_rows, True)

    return _in_partition(where, build)


def _all_zero(w):
    try:
        return bool(np.all(np.asarray(w, dtype=np.float64) == 0))
    except (TypeError, ValueError):
        return False  # not numeric: the sketch's own check names the problem


def _merge_parts(*parts):
    """Merge the sketches and the label sets of several partitions (or subtrees)."""
    sketches = [part.sketch for part in parts if part.sketch is not None]
    sketch = sketches[0] if sketches else None
    for other in sketches[1:]:
        sketch = sketch.merge(other)
    return _Part(
        sketch,
        _union_labels(*(part.labels for part in parts)),
        sum(part.n_rows for part in parts),
        any(part.weighted for part in parts),
    )


# --------------------------------------------------------------------------
# At the root
# --------------------------------------------------------------------------


def _probe(classes, n_columns):
    """One row per class with valid probabilities: input that fails the label checks
    exactly when data with these classes would."""
    if n_columns is None:
        return np.full(classes.shape[0], 0.5)
    return np.full((classes.shape[0], n_columns), 1.0 / n_columns)


def _columns_of(classes, n_columns, pos_label, multiclass):
    """The ``labels`` to give every partition for ``predict_proba`` input."""
    if classes is None:
        return None  # no rows at all: the root reports it
    # the in-memory label checks on one row per class raise the in-memory errors
    check_binary_calibration_input(
        classes, _probe(classes, n_columns), pos_label=pos_label, multiclass=multiclass
    )
    if n_columns == 2:
        return classes if classes.shape[0] == 2 else None
    return resolve_labels(classes, None, n_columns)


def _finish(root, n_columns, pos_label, multiclass, labels):
    """The merged sketch, once the union of labels passes the in-memory checks."""
    if root.n_rows == 0:
        check_y_true(np.empty(0))  # raises: y_true is empty
    if root.sketch is None:
        check_sample_weight(np.zeros(1), 1)  # raises: all weights are zero
    check_binary_calibration_input(
        root.labels,
        _probe(root.labels, n_columns),
        pos_label=pos_label,
        multiclass=multiclass,
        labels=labels,
    )
    return root.sketch

