"""Input checks of the boundary (DESIGN.md sections 1 and 2).

One place validates labels, probabilities and weights, in a fixed order:
array conversion, consistent lengths, sample weights, then domain checks.
Returned arrays are float64; labels and weights are fresh arrays, predictions
a read-only view where no conversion was needed. Nothing the caller passed in
is ever written to, clipped, renormalised or dropped.
"""

import importlib.util
import numbers
import os
import sys

import numpy as np

from .._kernels._binning import checked_top_label
from .._kernels._interval import zero_one_labels
from .._kernels._proba import check_rows, check_top_label
from ._arrays import as_numpy
from ._weights import (
    canonical_weights,
    check_sample_weight,
    plain_weights_on_scale,
    power_of_two_scale,
)


def _library_dirs() -> tuple[str, ...]:
    """Directories whose frames are skcal's or scikit-learn's, never the user's.

    scikit-learn's is found without importing it (``find_spec``): the report
    does not need scikit-learn.
    """
    spec = importlib.util.find_spec("sklearn")
    paths = [os.path.dirname(os.path.abspath(__file__))]
    if spec is not None and spec.origin is not None:
        paths.append(spec.origin)
    return tuple(os.path.dirname(os.path.abspath(path)) + os.sep for path in paths)


_LIBRARY_DIRS = _library_dirs()


def user_stacklevel():
    """``stacklevel`` for ``warnings.warn`` that points at the user's line.

    Counts the frames of skcal and scikit-learn (``fit`` wrappers such as
    ``_fit_context`` and ``set_output``) between the function that warns and
    the first frame outside them, so the warning names the caller's line
    whichever public method was called.
    """
    level, frame = 1, sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_LIBRARY_DIRS):
        frame = frame.f_back
        level += 1
    return level


__all__ = [
    "check_binary_calibration_input",
    "plain_binary_rows",
    "check_probability_matrix",
    "flatten_column",
    "row_sum_tolerance",
    "unique_labels",
    "check_sample_weight",
    "canonical_weights",
    "power_of_two_scale",
    "plain_weights_on_scale",
    "check_size",
    "MAX_SIZE",
    "resolve_pos_label",
    "as_probability_array",
    "check_same_length",
    "check_y_true",
    "label_positions",
    "resolve_labels",
    "binary_rows",
    "no_second_input",
    "plainly_valid_top_label",
    "top_label",
    "user_stacklevel",
]

_MULTICLASS_OPTIONS = ("top-label", "raise")

# Rows of a (n, 2) or (n, K) probability matrix must sum to one within this,
# or within the rounding of the caller's dtype when that is coarser.
_ROW_SUM_ATOL = 1e-6


def row_sum_tolerance(dtype, n_columns):
    """How far from 1 a row of ``n_columns`` probabilities of ``dtype`` may sum.

    ``1e-6`` for float64 and float32 output; for a coarser float (float16
    ``predict_proba``) the rounding of each entry, ``eps / 2``, adds up over
    the row, so the bound is ``n_columns * eps`` of that dtype.
    """
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        return _ROW_SUM_ATOL
    return max(_ROW_SUM_ATOL, n_columns * float(np.finfo(dtype).eps))


MAX_SIZE = 2**24


def check_size(value, name, limit=MAX_SIZE, what="entries"):
    """A clear ValueError when a size-like parameter exceeds ``limit``.

    Checked before anything of that size is allocated, so that ``n_bins=10**9``
    says what the limit is instead of raising a bare MemoryError.
    """
    if value > limit:
        raise ValueError(
            f"{name}={value!r} is too large: at most {limit:,} {what} are "
            f"supported (each takes memory); use a smaller {name}."
        )


def resolve_pos_label(classes, pos_label):
    """Return the positive label for the (at most two) ``classes``.

    Follows ``sklearn.metrics``: without ``pos_label``, label sets inside
    {0, 1} or {-1, 1} take ``1``; any other label set needs ``pos_label``.
    With two observed classes ``pos_label`` must be one of them (anything
    else would silently make every outcome negative). With a single observed
    class a ``pos_label`` other than it is legitimate when given explicitly:
    every outcome is then negative.
    """
    classes = np.asarray(classes)
    if pos_label is not None:
        if classes.shape[0] == 2 and not np.any(_equal_labels(classes, pos_label)):
            raise ValueError(
                f"pos_label={pos_label!r} is not one of the labels in y_true "
                f"({', '.join(map(repr, classes.tolist()))}); set pos_label to "
                "one of them."
            )
        return pos_label
    if pos_label is None:
        if classes.dtype.kind in "OUS":
            raise ValueError(
                f"y_true takes values in {{{', '.join(map(repr, classes.tolist()))}}} "
                "and pos_label is not specified: set pos_label to the positive class."
            )
        if not (
            np.all(np.isin(classes, [0, 1])) or np.all(np.isin(classes, [-1, 1]))
        ):
            raise ValueError(
                f"y_true takes values in {{{', '.join(map(repr, classes.tolist()))}}} "
                "and pos_label is not specified: set pos_label to the positive class."
            )
        return 1


def _equal_labels(classes, label):
    """``classes == label`` for a few classes, False across kinds of label.

    A string never equals a number here (``'1'`` is not the integer label
    ``1``), whatever numpy's elementwise comparison of the two would do.
    """
    is_str = isinstance(label, str)
    return np.array(
        [isinstance(c, str) == is_str and bool(c == label) for c in classes.tolist()],
        dtype=bool,
    )


def as_probability_array(y_prob, name):
    """``y_prob`` as a float64 array of 1 or 2 dimensions; errors name ``name``.

    The array conversion itself (``check_array``) is scikit-learn's, but its
    messages do not always say which argument failed: every failure here does.
    """
    from scipy import sparse

    y_prob = as_numpy(y_prob, name)
    if not sparse.issparse(y_prob) and (
        isinstance(y_prob, np.ndarray) or not hasattr(y_prob, "__array_namespace__")
    ):
        raw = y_prob if isinstance(y_prob, np.ndarray) else None
        if raw is None and not hasattr(y_prob, "dtypes"):  # not a dataframe
            try:
                raw = np.asarray(y_prob)
            except (ValueError, TypeError) as error:
                raise ValueError(
                    f"{name} could not be read as an array: {error}"
                ) from None
        if raw is not None:
            if raw.ndim not in (1, 2):
                raise ValueError(
                    f"{name} must be 1- or 2-dimensional, of shape (n_samples,) "
                    f"or (n_samples, n_classes), got shape {raw.shape}."
                )
            if raw.ndim == 2 and raw.shape[1] == 0:
                raise ValueError(
                    f"{name} has no columns: 0 feature(s) (shape={raw.shape}) "
                    "while a minimum of 1 is required."
                )
            if raw.dtype.kind == "c":
                raise ValueError(
                    f"{name} must be real-valued (Complex data not supported), "
                    f"got dtype {raw.dtype}."
                )
            if raw.dtype.kind in "OUSV":
                try:
                    raw = raw.astype(np.float64)
                except (ValueError, TypeError):
                    raise TypeError(
                        f"{name} must hold probabilities (numbers), got values of "
                        f"dtype {raw.dtype} that are not numbers."
                    ) from None
            y_prob = raw
            if type(raw) is np.ndarray and raw.dtype.kind in "biuf":
                # what check_array returns for a plain numeric array (no copy
                # of float64), without importing scikit-learn: the report
                # reads its files this way
                return raw.astype(np.float64, copy=False)
    from sklearn.utils import check_array

    try:
        return check_array(
            y_prob,
            ensure_2d=False,
            dtype=np.float64,
            ensure_all_finite=False,
            ensure_min_samples=0,
            input_name=name,
        )
    except (ValueError, TypeError) as error:
        if name in str(error):
            raise
        raise type(error)(f"{name}: {error}") from None


def check_same_length(y, P, name):
    """``y_true`` and the probabilities have one row per sample each."""
    if y.shape[0] != P.shape[0]:
        raise ValueError(
            f"y_true and {name} have inconsistent numbers of samples: "
            f"{y.shape[0]} and {P.shape[0]}."
        )


def _integer_span(a):
    """``(min, max)`` of a non-empty integer array as Python ints, else None.

    None too beyond +-2**62, where the int64 arithmetic of the callers could
    overflow.
    """
    if a.dtype.kind not in "iu" or a.shape[0] == 0:
        return None
    lo, hi = int(a.min()), int(a.max())
    if lo < -(2**62) or hi > 2**62:
        return None
    return lo, hi


def _small_span(lo, hi, count):
    """Whether a table over the integers ``lo..hi`` is small beside ``count`` items."""
    return hi - lo <= 4 * count + 1024


def label_positions(classes, y):
    """Position of each label of ``y`` in the sorted ``classes``.

    A ValueError names the labels of ``y_true`` that are not classes,
    including labels of another kind (a string among integer classes).
    Integer labels and classes over a short range (the usual 0..C-1) are
    looked up in a table of positions, a gather instead of a binary search
    per label (at 5e4 labels and 100 classes 0.1 against 1.6 ms): the same
    positions.
    """
    span, y_span = _integer_span(classes), _integer_span(y)
    if span is not None and y_span is not None and _small_span(*span, classes.shape[0]):
        lo, hi = span
        if lo <= y_span[0] and y_span[1] <= hi:
            table = np.full(hi - lo + 1, -1, dtype=np.intp)
            table[classes.astype(np.int64) - lo] = np.arange(classes.shape[0])
            index = table[y.astype(np.int64) - lo]
            if index.min() >= 0:
                return index
    try:
        index = np.minimum(np.searchsorted(classes, y), classes.shape[0] - 1)
        found = classes[index] == y
    except TypeError:  # strings against numbers: no ordering between them
        index = found = None
    if found is not None and np.shape(found) == y.shape and np.all(found):
        return index
    known = set(classes.tolist())
    unknown = sorted({repr(v) for v in y.tolist() if v not in known})
    raise ValueError(
        f"y_true has labels [{', '.join(unknown)}] that are not in labels "
        f"{classes.tolist()}."
    )


def _label_mask(y, label):
    """``y == label`` elementwise; all False when the kinds differ (str vs number).

    numpy 1.x answers a comparison across kinds with a scalar ``False``.
    """
    if y.dtype.kind != "O" and isinstance(label, str) != (y.dtype.kind in "US"):
        return np.zeros(y.shape, dtype=bool)
    mask = np.asarray(y == label)
    return mask if mask.shape == y.shape else np.zeros(y.shape, dtype=bool)


def _extremes(x):
    """``(min, max, has_nan)`` of a non-empty numeric array.

    numpy's min and max are SIMD reductions that propagate NaN: two of them
    beat any single scalar pass, and settle the common valid case.
    """
    lo, hi = x.min(), x.max()
    nan = x.dtype.kind in "fc" and bool(np.isnan(lo) or np.isnan(hi))
    return lo, hi, nan


def flatten_column(a):
    """``a`` as an array, a column vector of shape ``(n, 1)`` flattened to ``(n,)``.

    What ``column_or_1d`` accepts as 1-D, without its checks: other shapes
    are returned as they are, for the caller to name.
    """
    a = np.asarray(a)
    return a[:, 0] if a.ndim == 2 and a.shape[1] == 1 else a


def check_y_true(y_true):
    """``y_true`` as a 1-D array of labels (numbers or strings), non-empty, no NaN."""
    y_true = as_numpy(y_true, "y_true")
    if (
        type(y_true) is np.ndarray
        and y_true.ndim == 1
        and y_true.dtype.kind in "biuf"
    ):
        y = y_true  # what column_or_1d returns, without its dispatch overhead
    else:
        y = flatten_column(y_true)
        if y.ndim != 1:
            raise ValueError(
                f"y_true must be 1-dimensional, of shape (n_samples,), got shape "
                f"{y.shape}."
            )
        if y.dtype.kind == "c":
            raise ValueError(
                f"y_true must hold class labels (Complex data not supported), "
                f"got dtype {y.dtype}."
            )
        if y.dtype.kind not in "biufOUS":
            raise TypeError(
                f"y_true must hold class labels (numbers or strings), got dtype "
                f"{y.dtype}."
            )
    if y.shape[0] == 0:
        raise ValueError("y_true is empty: calibration needs at least one sample.")
    if y.dtype.kind == "f":
        lo, hi, nan = _extremes(y)
        if nan or np.isinf(lo) or np.isinf(hi):
            raise ValueError("y_true contains NaN or infinity.")
    return y


# The bits of 1.0: as unsigned integers, the doubles in [+0, 1] are exactly
# those at most this (negative ones have the sign bit, NaN the full exponent).
_ONE_BITS = np.float64(1.0).view(np.uint64)


def check_probability_matrix(P, name="y_prob", input_dtype=None):
    """Entries finite and in [0, 1]; rows of a 2-D ``P`` sum to 1.

    ``input_dtype`` is the dtype the caller passed (before conversion to
    float64): it sets the row-sum tolerance (:func:`row_sum_tolerance`).
    """
    if P.ndim == 2 and P.dtype == np.float64 and P.flags.c_contiguous and P.size:
        # plainly valid in one read (range and row sums, the ``check_rows``
        # kernel), where ``P.sum(axis=1)`` alone took about 10 ns a row for
        # two columns; the sums may differ from numpy's in the last bits, so
        # a row passes with a margin, and anything else takes the exact
        # check below (what is accepted, and every message, is unchanged)
        if check_rows(P, _plain_tolerance(P, input_dtype)) == 0:
            return
    if P.dtype == np.float64 and P.size and P.view(np.uint64).max() <= _ONE_BITS:
        lo, hi, nan = 0.0, 1.0, False  # one integer pass settles the common case
    else:
        lo, hi, nan = _extremes(P)
    if nan or not (lo >= 0 and hi <= 1):
        if nan or np.isinf(lo) or np.isinf(hi):
            raise ValueError(f"{name} contains NaN or infinity.")
        raise ValueError(f"{name} has values outside [0, 1].")
    if P.ndim == 2:
        atol = row_sum_tolerance(
            P.dtype if input_dtype is None else input_dtype, P.shape[1]
        )
        _check_row_sums(P.sum(axis=1), atol, name)


def _check_row_sums(sums, atol, name):
    bad = np.abs(sums - 1.0) > atol
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{name} rows must be probability vectors summing to 1 "
            f"(within {atol:g}); row {i} sums to {float(sums[i])!r}."
        )



def _plain_tolerance(P, input_dtype):
    """The row-sum tolerance of ``P`` narrowed by ``4 n_classes eps``.

    The one-read kernels (``check_rows``, ``check_top_label``) add a row in
    another order than ``P.sum(axis=1)``, so a row they pass with this
    tolerance passes the exact check (:func:`row_sum_tolerance`) too.
    """
    n_classes = P.shape[1]
    atol = row_sum_tolerance(P.dtype if input_dtype is None else input_dtype, n_classes)
    return atol - 4.0 * n_classes * np.finfo(np.float64).eps


def plainly_valid_top_label(P, input_dtype=None):
    """The top label of a plainly valid float64 ``P`` (any layout), else None.

    One read of ``P`` (the ``check_top_label`` kernel, vectorised: range,
    row sums and the first largest entry of each row, as ``np.argmax``)
    where a check and the top label read it three times. Plainly valid:
    every entry a double in [+0, 1] and every row sum within the tolerance
    (:func:`row_sum_tolerance`) narrowed by ``4 n_classes eps``, more than
    the kernel's sum (added in another order) can differ from any other
    order of addition. None for anything else (including -0.0 entries and
    sums near the tolerance): the caller then takes its exact check, so
    what is accepted, what is rejected and the messages do not change.
    Returns ``(confidence, column)``.
    """
    n, n_classes = P.shape
    conf = np.empty(n)
    pred = np.empty(n, dtype=np.intp)
    tol = _plain_tolerance(P, input_dtype)
    if P.flags.c_contiguous:
        if check_top_label(P, tol, conf, pred):
            return None
        return conf, pred
    # another layout (a pandas DataFrame's values are column-major): blocks
    # of rows made contiguous, about 4 MB each, so the copy stays small and
    # in cache (the whole matrix through the general path took 1.6 times as
    # long at 10**6 rows and 10 classes)
    step = max(1, (1 << 19) // max(n_classes, 1))
    for lo in range(0, n, step):
        hi = min(n, lo + step)
        block = np.ascontiguousarray(P[lo:hi])
        if check_top_label(block, tol, conf[lo:hi], pred[lo:hi]):
            return None
    return conf, pred


def top_label(P):
    """Top-label confidence and predicted column; argmax ties go to the lowest index."""
    pred = np.argmax(P, axis=1)  # np.argmax returns the first maximum
    conf = P[np.arange(P.shape[0]), pred]
    return conf, pred


def check_binary_calibration_input(
    y_true,
    y_prob,
    sample_weight=None,
    *,
    pos_label=None,
    multiclass="top-label",
    labels=None,
    compact=False,
):
    """Validate the inputs of a binary calibration measure.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Observed labels: at most two distinct values for binary input, or
        class labels when ``y_prob`` has more than two columns.
    y_prob : array-like of shape (n_samples,), (n_samples, 2) or (n_samples, K)
        Predicted probability of the positive class, or ``predict_proba``
        output. For two columns the column of ``pos_label`` is used (column 1
        for the usual label sets). For ``K > 2`` columns and
        ``multiclass="top-label"`` the measure is applied to
        ``(max_k p_k, 1{argmax = y})``.
    sample_weight : array-like of shape (n_samples,), default=None
    pos_label : int, float, bool or str, default=None
    multiclass : {"top-label", "raise"}, default="top-label"
    labels : array-like of shape (K,), default=None
        The class of each column of a ``(n_samples, K)`` ``y_prob``; by
        default the sorted distinct values of ``y_true`` when there are ``K``
        of them, else ``0, ..., K-1``.
    compact : bool, default=False
        Return ``y`` as uint8 (or, for int64 labels already in {0, 1}, as a
        read-only view of them) and, when ``sample_weight`` is None, ``w`` as
        a read-only stride-0 array of ones: no O(n) allocation for the
        one-pass kernels, whose whole cost is comparable to it.

    Returns
    -------
    y : ndarray of shape (n_samples,), float64 (uint8 or int64 if compact) in {0, 1}
    p : ndarray of shape (n_samples,), float64 in [0, 1]
    w : ndarray of shape (n_samples,), float64, non-negative, positive sum
    """
    if multiclass not in _MULTICLASS_OPTIONS:
        raise ValueError(
            f"multiclass must be one of {_MULTICLASS_OPTIONS}, got {multiclass!r}."
        )
    y_true, y_prob = as_numpy(y_true, "y_true"), as_numpy(y_prob, "y_prob")
    sample_weight = as_numpy(sample_weight, "sample_weight")
    y = check_y_true(y_true)
    input_dtype = getattr(y_prob, "dtype", None)
    if type(y_prob) is np.ndarray and y_prob.dtype == np.float64 and y_prob.size:
        # check_array would return it unchanged (finiteness is checked below);
        # its dataframe and sparse dispatch costs a fifth of a one-pass measure
        P = y_prob
    else:
        P = as_probability_array(y_prob, "y_prob")
    # A read-only view: the caller's array is never copied needlessly, and a
    # kernel or wrapper that tried to write into it would fail loudly.
    P_in = P  # np.argmax copies a read-only matrix whole; it gets this one
    P = P.view()
    P.flags.writeable = False
    if P.ndim not in (1, 2):
        raise ValueError(
            f"y_prob must be 1- or 2-dimensional, of shape (n_samples,) or "
            f"(n_samples, n_classes), "
            f"got shape {P.shape}."
        )
    if P.ndim == 2 and P.shape[1] == 1:
        raise ValueError(
            "y_prob has a single column; pass the positive-class probability "
            "as a 1-D array or the full predict_proba output."
        )
    check_same_length(y, P, "y_prob")
    if compact and sample_weight is None:
        w = np.broadcast_to(1.0, y.shape[0])
    else:
        w = check_sample_weight(sample_weight, y.shape[0])
    top = None
    if (
        P.ndim == 2
        and P.shape[1] > 2
        and multiclass != "raise"
        and P_in.dtype == np.float64
    ):
        # top-label input: check, sum and take the top label in one pass
        top = plainly_valid_top_label(P_in, input_dtype)
        if top is None and not P_in.flags.c_contiguous:
            check_probability_matrix(P, input_dtype=input_dtype)  # raises, or valid
        elif top is None:
            n = P.shape[0]
            conf, pred, sums = np.empty(n), np.empty(n, dtype=np.intp), np.empty(n)
            if not checked_top_label(P_in, conf, pred, sums):
                check_probability_matrix(P, input_dtype=input_dtype)  # raises
            dtype = P.dtype if input_dtype is None else input_dtype
            _check_row_sums(sums, row_sum_tolerance(dtype, P.shape[1]), "y_prob")
            top = conf, pred
    else:
        check_probability_matrix(P, input_dtype=input_dtype)
    label_dtype = np.uint8 if compact else np.float64

    if P.ndim == 2 and P.shape[1] > 2:
        if pos_label is not None:
            raise ValueError(
                f"pos_label={pos_label!r} does not apply to y_prob with "
                f"{P.shape[1]} columns: multiclass input is measured top-label "
                "(or by utility calibration), with no positive class. Leave "
                "pos_label=None, or pass the probability of one class as a 1-D "
                "y_prob to measure that class against the rest."
            )
        if multiclass == "raise":
            raise ValueError(
                f"y_prob has {P.shape[1]} columns but multiclass='raise'; use "
                "multiclass='top-label' to measure top-label calibration."
            )
        classes = resolve_labels(y, labels, P.shape[1])
        conf, pred = top if top is not None else top_label(P_in)
        y_index = label_positions(classes, y)
        correct = (y_index == pred).astype(label_dtype)
        return correct, conf, w

    zero_one = _zero_one_labels(y, pos_label, label_dtype)
    if zero_one is not None:
        classes, y_bin = zero_one
        p = P if P.ndim == 1 else P[:, _positive_column(classes, 1, labels)]
        return y_bin, _read_only(np.ascontiguousarray(p, dtype=np.float64)), w
    classes = _binary_classes(y)
    if classes.shape[0] > 2:
        raise ValueError(
            f"y_true has {classes.shape[0]} distinct labels but y_prob has "
            f"{'one column' if P.ndim == 1 else 'two columns'}: binary input "
            "needs at most two labels (pass the (n_samples, n_classes) "
            "predict_proba output for multiclass problems)."
        )
    pos_label = resolve_pos_label(classes, pos_label)
    y_bin = _label_mask(y, pos_label).astype(label_dtype)
    if P.ndim == 1:
        p = P
    else:
        p = P[:, _positive_column(classes, pos_label, labels)]
    return y_bin, _read_only(np.ascontiguousarray(p, dtype=np.float64)), w


# Label dtypes the checked one-pass kernels read as they are (bool as uint8).
_PLAIN_LABEL_DTYPES = tuple(
    np.dtype(t) for t in (np.uint8, np.intc, np.longlong, np.float64)
)


def _plain_array(a, dtypes):
    return (
        type(a) is np.ndarray
        and a.ndim == 1
        and a.dtype in dtypes
        and a.flags.c_contiguous
    )


def plain_binary_rows(y_true, y_prob, sample_weight=None, *, pos_label=None,
                      multiclass="top-label"):
    """The caller's own arrays, for a one-pass kernel that validates as it reads.

    The common input of a binary measure, numpy arrays ``y_true`` of labels
    0/1 (bool, uint8, int32, int64 or float64), ``y_prob`` of float64
    predictions and optional float64 ``sample_weight``, one-dimensional,
    contiguous and of one length, with the positive class 1, is returned as
    ``(y, p, w)``: the same arrays (bool viewed as uint8; ``w`` None for unit
    weights), not converted or copied; the kernels read them through const
    views and never write to them. Anything else gives None.

    Only the form is checked here, in O(1). The checked kernels of
    ``skcal._kernels._binning`` test every row as they read it (a prediction
    in [0, 1], a label 0 or 1, a weight finite and non-negative) and report
    failure; the caller checks the total weight. On failure, or None, the
    caller runs :func:`check_binary_calibration_input`, which accepts or
    rejects exactly as before, with the same errors: this path changes speed
    only.
    """
    if multiclass not in _MULTICLASS_OPTIONS:
        return None
    if not (
        pos_label is None
        or (
            isinstance(pos_label, (numbers.Real, np.bool_))
            and not isinstance(pos_label, str)
            and pos_label == 1
        )
    ):
        return None
    y = y_true
    if type(y) is np.ndarray and y.dtype == np.bool_:
        y = y.view(np.uint8)
    if not (
        _plain_array(y, _PLAIN_LABEL_DTYPES)
        and _plain_array(y_prob, _FLOAT64)
        and 0 < y.shape[0] == y_prob.shape[0]
    ):
        return None
    if sample_weight is not None and not (
        _plain_array(sample_weight, _FLOAT64)
        and sample_weight.shape[0] == y.shape[0]
    ):
        return None
    return y, y_prob, sample_weight


_FLOAT64 = (np.dtype(np.float64),)


def _zero_one_labels(y, pos_label, label_dtype):
    """``(classes, y == 1)`` for labels in {0, 1} with positive class 1, else None.

    The common case in two passes instead of four: integer labels are all 0
    or 1 exactly when their minimum is at least 0 and their maximum at most
    1, and those two (numpy's vectorised reductions) also say which classes
    occur; converting them is ``y == 1``. (The OR of the labels and a count
    of the positives took three times as long: 35 against 11 us at 10**5
    int64 labels.)
    """
    if not (
        pos_label is None
        or (isinstance(pos_label, (numbers.Real, np.bool_)) and pos_label == 1)
    ):
        return None
    if (
        y.dtype == np.float64 and label_dtype is not np.float64 and y.ndim == 1
        and y.shape[0]
    ):
        # float labels: checked and made bytes in one pass (zero_one_labels)
        y_bin = np.empty(y.shape[0], dtype=np.uint8)
        seen = zero_one_labels(np.ascontiguousarray(y), y_bin)
        if seen < 0:
            return None
        present = [c for c, bit in ((0, 1), (1, 2)) if seen & bit]
        return np.array(present, dtype=y.dtype), _read_only(y_bin)
    if y.dtype.kind not in "biu":
        return None
    if y.shape[0] == 0:
        lo, hi = 1, 0  # no label: neither class occurs
    elif y.dtype.kind == "b":
        lo, hi = int(y.all()), int(y.any())
    else:
        lo, hi = y.min(), y.max()
        if not (lo >= 0 and hi <= 1):
            return None
    if label_dtype is np.float64:
        y_bin = y.astype(np.float64)
    elif y.dtype == np.int64 and y.flags.c_contiguous:
        y_bin = _read_only(y)  # the kernels read 0/1 int64 labels as they are
    elif y.dtype.kind == "b" and y.flags.c_contiguous:
        y_bin = _read_only(y.view(np.uint8))
    else:
        y_bin = y.astype(np.uint8)  # a new, contiguous array
    present = [c for c, seen in ((0, lo == 0), (1, hi == 1)) if seen]
    return np.array(present, dtype=y.dtype), y_bin


def _read_only(a):
    a = a.view()
    a.flags.writeable = False
    return a


def unique_labels(y, name="y_true"):
    """Sorted distinct labels; a clear TypeError when they cannot be ordered.

    Integer labels over a short range are counted (``np.bincount``) rather
    than sorted: the same array as ``np.unique``, in one pass.
    """
    span = _integer_span(y) if y.ndim == 1 else None
    if span is not None and _small_span(*span, y.shape[0]):
        lo, hi = span
        present = np.bincount(y.astype(np.int64) - lo, minlength=hi - lo + 1)
        return (np.flatnonzero(present) + lo).astype(y.dtype)
    try:
        return np.unique(y)
    except TypeError:
        values = y.tolist()
        missing = sum(
            v is None or type(v).__name__ == "NAType" or (isinstance(v, float) and v != v)
            for v in values
        )
        if missing:
            # None, NaN or pd.NA among labels (a pandas column with gaps)
            raise TypeError(
                f"{name} has {missing} missing label{'s' if missing > 1 else ''} "
                "(None, NaN or pd.NA); drop those rows or fill them first."
            ) from None
        kinds = sorted({type(v).__name__ for v in values})
        raise TypeError(
            f"{name} mixes labels of different types ({', '.join(kinds)}); "
            "use labels of a single type (all strings or all numbers)."
        ) from None


def _two_labels(y):
    """The one or two distinct labels of ``y`` (strings, objects), sorted; else None.

    Two comparisons with the first label and the first other one (numpy's
    elementwise ``==``) instead of ``np.unique``, which sorts: for object
    arrays (a pandas column of strings or a categorical) each comparison
    of the sort calls Python, 2.2 s of a measure of 3 s at 10**7 labels.
    None for three labels or more, or labels that do not order (missing
    or mixed ones): the caller's ``unique_labels`` then says what they are.
    """
    a = y[0]
    try:
        # (pd.NA compares to NA, whose truth value raises)
        same = np.asarray(y == a, dtype=bool)
        if same.shape != y.shape:  # pragma: no cover - a label's == did not compare
            return None
        if same.all():
            return y[:1].copy()
        b = y[int(np.argmin(same))]
        other = np.asarray(y == b, dtype=bool)
        if other.shape != y.shape or not np.all(same | other):
            return None
        pair = sorted([a, b])
    except (TypeError, ValueError):
        return None
    out = np.empty(2, dtype=y.dtype)
    out[0], out[1] = pair
    return out


def _binary_classes(y):
    """Sorted distinct labels of ``y`` when there are at most two, else all of them.

    For numeric labels, min/max and two counts replace ``np.unique``, whose
    sort would cost as much as a whole measure on large inputs.
    """
    if y.dtype.kind not in "biuf":
        two = _two_labels(y) if y.ndim == 1 and y.shape[0] else None
        return unique_labels(y) if two is None else two
    lo, hi, _ = _extremes(y)  # y_true was checked for NaN
    if lo == hi:
        return y[:1].copy()
    if y.dtype.kind == "b" or (y.dtype.kind in "iu" and hi - lo == 1):
        # integers between two consecutive values take only those two
        return np.array([lo, hi], dtype=y.dtype)
    if np.count_nonzero(y == lo) + np.count_nonzero(y == hi) != y.shape[0]:
        return np.unique(y)
    return np.array([lo, hi], dtype=y.dtype)


def _positive_column(classes, pos_label, labels):
    """Column of ``pos_label`` in a binary ``predict_proba`` (sorted classes).

    With both classes observed the columns are those classes, sorted (as an
    estimator's ``classes_``). With a single observed class the other
    column's class is unknown: it is inferred only for the usual label sets
    {0, 1} and {-1, 1}; otherwise ``labels`` must say which column is which.
    """
    if labels is not None:
        from sklearn.utils import column_or_1d

        col_classes = column_or_1d(np.asarray(labels), warn=False)
        hit = np.flatnonzero(_equal_labels(col_classes, pos_label)) if (
            col_classes.shape[0] == 2) else ()
        if len(hit) != 1:
            raise ValueError(
                f"labels must name the 2 columns of y_prob and contain pos_label "
                f"{pos_label!r}, got {col_classes.tolist()}."
            )
        return int(hit[0])
    if classes.shape[0] == 2:
        return int(np.flatnonzero(_equal_labels(classes, pos_label))[0])
    usual = _usual_binary_labels(classes.tolist() + [pos_label])
    if usual is not None:
        return usual.index(pos_label)
    raise ValueError(
        f"y_prob has two columns but y_true has the single label "
        f"{classes.tolist()[0]!r}, so the class of each column is unknown; "
        "pass labels= (the estimator's classes_) to name them."
    )


def _usual_binary_labels(seen):
    """``[0, 1]`` or ``[-1, 1]`` when the labels ``seen`` lie in that set, else None.

    The two columns of a binary ``predict_proba`` are then known even when
    ``y_true`` shows a single class, as for scikit-learn's binary metrics.
    """
    if any(isinstance(c, (str, bytes)) for c in seen):
        return None
    for usual in ([0, 1], [-1, 1]):
        if all(c in usual for c in seen):
            return usual
    return None


def resolve_labels(y, labels, n_columns, proba_name="y_prob", y_name="y_true",
                   one_d=False):
    """The class of each probability column: ``labels`` checked, or inferred from ``y``.

    ``proba_name`` and ``y_name`` are the caller's names for the arguments;
    ``one_d`` says that the caller passed a 1-D array, read as the second of two
    columns, so that the messages describe what the caller passed.
    """
    shape = (
        f"{proba_name} is 1-D (the probability of the second of 2 classes)"
        if one_d else f"{proba_name} has {n_columns} columns"
    )
    if labels is not None:
        classes = flatten_column(labels)
        if classes.ndim != 1:
            raise ValueError(
                f"labels must be 1-dimensional, of shape (n_classes,), got shape "
                f"{classes.shape}."
            )
        if classes.shape[0] != n_columns:
            raise ValueError(f"labels has {classes.shape[0]} entries but {shape}.")
        if np.unique(classes).shape[0] != classes.shape[0]:
            raise ValueError("labels has repeated entries.")
        order = np.argsort(classes, kind="stable")
        if not np.array_equal(order, np.arange(classes.shape[0])):
            raise ValueError("labels must be sorted, as in an estimator's classes_.")
        return classes
    classes = unique_labels(y)
    if classes.shape[0] == n_columns:
        return classes
    if n_columns == 2:
        usual = _usual_binary_labels(classes.tolist())
        if usual is not None:
            return np.array(usual, dtype=classes.dtype)
    # Some class is absent from y_true: whether the columns are 0..K-1, the
    # labels seen plus others, or anything else cannot be told from y_true,
    # and guessing reads labels as the wrong columns. scikit-learn's log_loss
    # refuses this input too.
    raise ValueError(
        f"{y_name} has {classes.shape[0]} distinct labels and {shape}, so "
        "the class of each column is ambiguous; pass "
        "labels= (the estimator's classes_) to say which class each column is."
    )


def binary_rows(y_true, y_prob, sample_weight=None, *, pos_label=None,
                multiclass="top-label", labels=None):
    """Validated compact rows ``(y, p, w)``: the canonical form's, or checked now.

    ``y_true`` may be the boundary's canonical form (``skcal._input.BinaryInput``,
    ``y_prob`` and ``sample_weight`` None): its rows are returned as they are,
    with no second check. Anything else goes through
    :func:`check_binary_calibration_input` (``compact=True``).
    """
    rows = getattr(y_true, "canonical_rows", None)
    if callable(rows):
        no_second_input(y_true, y_prob, sample_weight)
        return rows()
    return check_binary_calibration_input(
        y_true, y_prob, sample_weight, pos_label=pos_label, multiclass=multiclass,
        labels=labels, compact=True,
    )


def no_second_input(y_true, y_prob, sample_weight):
    if y_prob is not None or sample_weight is not None:
        raise ValueError(
            f"y_true is a {type(y_true).__name__}, which already holds the "
            "predictions and weights: pass y_prob=None and sample_weight=None."
        )
