"""The canonical form of multiclass calibration input, built once at the boundary.

:func:`multiclass_input` validates ``(y_true, y_prob, sample_weight)`` of a
multiclass measure (the labels encoded as columns of ``y_prob`` against
the classes, the probability matrix checked, the weights checked) and
returns a frozen :class:`MulticlassInput`. The utility calibration error,
its interval and its tester null read it without a second check; its
top-label rows ``(confidence, correct)`` are derived once and cached as a
:class:`~skcal._input.BinaryInput`, which every binary measure reads.
"""

from dataclasses import dataclass, field

import numpy as np

from ._arrays import as_numpy
from ._checks import (
    as_probability_array,
    check_probability_matrix,
    check_same_length,
    check_sample_weight,
    check_y_true,
    label_positions,
    plainly_valid_top_label,
    resolve_labels,
    top_label,
)

__all__ = ["MulticlassInput", "multiclass_input"]


@dataclass(frozen=True, eq=False)
class MulticlassInput:
    """Validated multiclass rows; the top-label rows and shared sorts on demand.

    Attributes
    ----------
    y : ndarray of shape (n,), intp
        Column of ``P`` of the observed class in each row.
    P : ndarray of shape (n, n_classes), float64, C-contiguous
        Probability vectors (possibly the caller's matrix, read-only view).
    w : ndarray of shape (n,), float64
        Checked weights as the caller gave them (not rescaled).
    classes : ndarray of shape (n_classes,)
        The class of each column.
    """

    y: np.ndarray
    P: np.ndarray
    w: np.ndarray
    classes: np.ndarray
    n: int = field(init=False)
    n_classes: int = field(init=False)
    _cache: dict = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "n", int(self.P.shape[0]))
        object.__setattr__(self, "n_classes", int(self.P.shape[1]))

    def matrix_rows(self):
        """``(y, P, w)``: observed columns, probability matrix, weights."""
        return self.y, self.P, self.w

    def predictions(self):
        """The :class:`skcal.utilities._engine.Predictions` of the rows (cached).

        What a family of utilities shares (the sorted rows, the top label,
        the rank of the observed class) is computed once per input.
        """
        if "predictions" not in self._cache:
            from ..utilities._engine import Predictions

            self._cache["predictions"] = Predictions(
                self.P, self.y, top=self._cache.get("top")
            )
        return self._cache["predictions"]

    def top_label(self):
        """The top-label rows as a :class:`BinaryInput` (cached).

        Confidence ``max_k p_k`` (ties to the lowest column) against the
        outcome "the observed class is the predicted one".
        """
        if "top_label" not in self._cache:
            from ._canonical import BinaryInput

            conf, pred = self.predictions().top
            correct = (self.y == pred).astype(np.uint8)
            p = np.ascontiguousarray(conf, dtype=np.float64)
            p.flags.writeable = False
            self._cache["top_label"] = BinaryInput(correct, p, self.w)
        return self._cache["top_label"]

    def canonical_rows(self):
        """The top-label rows ``(y, p, w)``: a binary measure reads them."""
        return self.top_label().canonical_rows()

    def canonical_statistic(self, rescale=True, return_scale=False):
        """The grouped statistic of the top-label rows (cached on them)."""
        return self.top_label().canonical_statistic(rescale, return_scale)

    def weight_scale(self):
        """The exponent ``e`` that brings the largest weight into ``[1, 2)``."""
        return self.top_label().weight_scale()

    def with_outcomes(self, y):
        """The same predictions and weights with observed columns ``y`` (trusted).

        For resampled outcomes drawn below the boundary (the tester's null):
        ``y`` must be intp column indices in ``[0, n_classes)``; it is not
        checked again.
        """
        return self._sharing_top(MulticlassInput(y, self.P, self.w, self.classes))

    def with_weights(self, w):
        """The same rows with weights ``w`` (trusted: finite, non-negative, positive sum).

        For the row bootstrap below the boundary (``w`` times exponential
        draws); it is not checked again.
        """
        return self._sharing_top(MulticlassInput(self.y, self.P, w, self.classes))

    def _sharing_top(self, other):
        """``other`` (same ``P``) with the top label read at the boundary, if any."""
        if "top" in self._cache:
            other._cache["top"] = self._cache["top"]
        return other


def multiclass_input(y_true, y_prob, sample_weight=None, labels=None):
    """THE boundary of the multiclass measures: any accepted input -> :class:`MulticlassInput`.

    A :class:`MulticlassInput` is returned as it is (``y_prob`` and
    ``sample_weight`` must then be None).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Observed class labels.
    y_prob : array-like of shape (n_samples, n_classes) or (n_samples,)
        Rows are probability vectors over the classes (non-negative, summing
        to 1 within 1e-6). A 1-D array is the probability of the second of
        two classes.
    sample_weight : array-like of shape (n_samples,), default=None
    labels : array-like of shape (n_classes,), default=None
        The class of each column, sorted (an estimator's ``classes_``); by
        default the sorted distinct labels of ``y_true`` when there are
        ``n_classes`` of them (or {0, 1} / {-1, 1} for two columns); any
        other case is ambiguous and raises.
    """
    if isinstance(y_true, MulticlassInput):
        if y_prob is not None or sample_weight is not None:
            raise ValueError(
                "y_true is a MulticlassInput, which already holds the predictions "
                "and weights: pass y_prob=None and sample_weight=None."
            )
        return y_true
    if y_prob is None:
        raise ValueError("y_prob is required (the predicted probabilities).")
    y_true, y_prob = as_numpy(y_true, "y_true"), as_numpy(y_prob, "y_prob")
    sample_weight = as_numpy(sample_weight, "sample_weight")
    y = check_y_true(y_true)
    input_dtype = getattr(y_prob, "dtype", None)
    P = np.ascontiguousarray(as_probability_array(y_prob, "y_prob"))
    if P.ndim not in (1, 2):
        raise ValueError(
            "y_prob must be of shape (n_samples, n_classes) or (n_samples,), "
            f"got shape {P.shape}."
        )
    if P.ndim == 2 and P.shape[1] == 1:
        raise ValueError(
            "y_prob has a single column; pass the probability of the second "
            "class as a 1-D array or the full (n_samples, n_classes) matrix."
        )
    check_same_length(y, P, "y_prob")
    w = check_sample_weight(sample_weight, y.shape[0])
    one_d = P.ndim == 1
    # the class of each column first: a wrong number of columns is named as such
    classes = resolve_labels(
        y, labels, 2 if one_d else P.shape[1], proba_name="y_prob", one_d=one_d
    )
    top = None
    if one_d:
        check_probability_matrix(P, name="y_prob", input_dtype=input_dtype)
        # binary: the probability of the second class, as predict_proba[:, 1]
        P = np.column_stack([1.0 - P, P])
    else:
        top = _checked_top_label(P, input_dtype)
    index = label_positions(classes, y).astype(np.intp)
    P = P.view()
    P.flags.writeable = False
    data = MulticlassInput(index, P, w, classes)
    if top is not None:
        data._cache["top"] = top
    return data


def _checked_top_label(P, input_dtype):
    """``check_probability_matrix`` of a C-contiguous float64 ``P``, and its top label.

    The plainly valid matrix is checked in the one read that also takes its
    top label (:func:`plainly_valid_top_label`); any other goes to
    ``check_probability_matrix``, which accepts, rejects and words its
    messages as it always has, and its top label is read by ``np.argmax``.
    Returns ``(confidence, column)``.
    """
    top = plainly_valid_top_label(P, input_dtype)
    if top is None:
        check_probability_matrix(P, name="y_prob", input_dtype=input_dtype)
        top = top_label(P)  # valid after all (-0.0, or a sum near the tolerance)
    return top
