"""Cutoff calibration error (Definition 2.5 of Bairaktari et al.)."""

from __future__ import annotations

from typing import TYPE_CHECKING, overload

from .._grouped import binary_statistic, sketch_error_bound
from .._kernels._interval import max_abs_interval_grouped
from .._specs import MeasureSpec, register

if TYPE_CHECKING:
    from typing import Literal

    from numpy.typing import ArrayLike
    from sklearn.utils import Bunch

    from .._typing import BinaryLabels, Multiclass, PosLabel, Value

__all__ = ["cutoff_calibration_error", "cutoff_core"]


@overload
def cutoff_calibration_error(
    y_true: BinaryLabels,
    y_prob: ArrayLike | None = None,
    *,
    sample_weight: ArrayLike | None = None,
    pos_label: PosLabel = None,
    multiclass: Multiclass = "top-label",
    labels: ArrayLike | None = None,
    return_details: Literal[False] = False,
) -> float: ...


@overload
def cutoff_calibration_error(
    y_true: BinaryLabels,
    y_prob: ArrayLike | None = None,
    *,
    sample_weight: ArrayLike | None = None,
    pos_label: PosLabel = None,
    multiclass: Multiclass = "top-label",
    labels: ArrayLike | None = None,
    return_details: Literal[True],
) -> tuple[float, Bunch]: ...


def cutoff_calibration_error(
    y_true: BinaryLabels,
    y_prob: ArrayLike | None = None,
    *,
    sample_weight: ArrayLike | None = None,
    pos_label: PosLabel = None,
    multiclass: Multiclass = "top-label",
    labels: ArrayLike | None = None,
    return_details: bool = False,
) -> Value:
    """Cutoff calibration error: the worst bias over an interval of predictions.

    On the weighted empirical distribution ``D`` of ``(p, y)`` this is
    Definition 2.5 of Bairaktari, Hu, Nguyen and Ullman, due to
    Rossellini et al.::

        Cutoff(D) = sup_{0 <= a <= b <= 1} | E[(y - p) 1{a <= p <= b}] |.

    Equal predictions are grouped; with prefix sums ``S`` of the grouped
    residuals ``b_k = sum_{p_i = v_k} w_i (y_i - p_i) / sum_i w_i``, the value
    is ``max(S) - min(S)``, computed in O(n) after one sort.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Observed labels (binary), or class labels for multiclass ``y_prob``.
    y_prob : array-like of shape (n_samples,) or (n_samples, n_classes)
        Predicted probability of the positive class, or ``predict_proba``
        output (see ``multiclass``).
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights; integer weights equal repeating rows.
    pos_label : int, float, bool or str, default=None
        The positive class; 1 for labels in {0, 1} or {-1, 1}.
    multiclass : {"top-label", "raise"}, default="top-label"
        For ``(n_samples, K)`` input with ``K > 2``: measure the top-label
        confidence ``max_k p_k`` against ``1{argmax_k p_k = y}`` (ties to the
        lowest column), or raise.
    labels : array-like of shape (n_classes,), default=None
        The class of each column of a ``predict_proba`` ``y_prob`` (the
        estimator's ``classes_``). Needed when ``y_true`` does not show
        every class, unless the labels are {0, 1} or {-1, 1}.
    return_details : bool, default=False
        Also return the maximising interval of predictions and the sign of
        its bias.

    Returns
    -------
    value : float
        The cutoff calibration error, in ``[0, 1]``.
    details : Bunch
        Only with ``return_details=True``:

        interval : tuple of float
            The closed interval ``[a, b]`` whose end points are the smallest
            and largest predictions in the worst run.
        sign : int
            +1: outcomes above predictions there (under-confident); -1:
            over-confident; 0: no bias anywhere.
        error_bound : float
            Only when ``y_true`` is a compacted ``CalibrationSketch``: a bound
            on how far ``value`` may be from the value on the sketched rows
            (see ``skcal.sketch.CalibrationSketch``).

    Examples
    --------
    >>> from skcal import cutoff_calibration_error
    >>> y_true = [0, 0, 1, 1]
    >>> y_prob = [0.2, 0.4, 0.6, 0.9]
    >>> round(cutoff_calibration_error(y_true, y_prob), 6)
    0.15
    >>> value, details = cutoff_calibration_error(
    ...     y_true, y_prob, return_details=True)
    >>> details.interval, details.sign
    ((0.2, 0.4), -1)
    """
    statistic = binary_statistic(
        y_true,
        y_prob,
        sample_weight,
        pos_label=pos_label,
        multiclass=multiclass,
        labels=labels,
        rescale=True,
    )
    value, interval, sign = cutoff_core(statistic)
    if not return_details:
        return value
    from sklearn.utils import Bunch
    details = Bunch(interval=interval, sign=sign)
    bound = sketch_error_bound(y_true, "cutoff_calibration_error")
    if bound is not None:
        details["error_bound"] = bound
    return value, details


def cutoff_core(statistic):
    """``(value, (a, b), sign)`` of a grouped statistic; no validation."""
    value, lo, hi, sign = max_abs_interval_grouped(
        statistic.values, statistic.weights, statistic.positives, statistic.total
    )
    values = statistic.values
    return float(value), (float(values[lo]), float(values[hi])), int(sign)


register(
    MeasureSpec(
        name="cutoff_calibration_error",
        class_name="CutoffCalibrationError",
        # the public function reads the boundary's canonical form as y_true
        core=cutoff_calibration_error,
        function=cutoff_calibration_error,
        options={},
        label="cutoff calibration error",
        docs="largest bias over any range of predictions",
        grouped_core=lambda statistic, **options: cutoff_core(statistic)[0],
        tester_name="cutoff",
        # Abel summation gives smCE <= |S(1)| + sup_t |S(t)| <= 2 cutoff, with
        # S(t) = E[(y - v) 1{v <= t}]; so cutoff >= smCE / 2 >= dCE / 4.
        dce_factor=0.25,
        interval="bootstrap (uniform band)",
        rank=2,
    )
)
