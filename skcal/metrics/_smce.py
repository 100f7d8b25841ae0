"""Smooth calibration error (Definition 3 of Hu, Jambulapati, Tian and Yang)."""

from __future__ import annotations

from typing import TYPE_CHECKING, overload

import numpy as np

from .._grouped import binary_statistic, sketch_error_bound
from .._kernels._flow import backtrack, dual_frontiers, smce_one_side
from .._specs import MeasureSpec, register

if TYPE_CHECKING:
    from typing import Literal

    from numpy.typing import ArrayLike
    from sklearn.utils import Bunch

    from .._typing import BinaryLabels, Multiclass, PosLabel, Value

# The kernel of the value (benchmarks/bench_tester.py swaps in smce_value,
# the two-sided pass of earlier versions, to time them side by side).
_VALUE_KERNEL = smce_one_side

__all__ = ["smce_core", "smooth_calibration_error"]


@overload
def smooth_calibration_error(
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
def smooth_calibration_error(
    y_true: BinaryLabels,
    y_prob: ArrayLike | None = None,
    *,
    sample_weight: ArrayLike | None = None,
    pos_label: PosLabel = None,
    multiclass: Multiclass = "top-label",
    labels: ArrayLike | None = None,
    return_details: Literal[True],
) -> tuple[float, Bunch]: ...


def smooth_calibration_error(
    y_true: BinaryLabels,
    y_prob: ArrayLike | None = None,
    *,
    sample_weight: ArrayLike | None = None,
    pos_label: PosLabel = None,
    multiclass: Multiclass = "top-label",
    labels: ArrayLike | None = None,
    return_details: bool = False,
) -> Value:
    """Smooth calibration error: the largest bias a 1-Lipschitz test can see.

    On the weighted empirical distribution ``D`` of ``(p, y)`` this is
    Definition 3 of Hu, Jambulapati, Tian and Yang (also Definition 2.3
    of Bairaktari et al.), due to Kakade and Foster::

        smCE(D) = sup { E[(y - p) x(p)] : x 1-Lipschitz, |x| <= 1 }.

    With the distinct predictions ``v_1 < ... < v_K``, ``W = sum_i w_i`` and
    ``b_k = sum_{p_i = v_k} w_i (y_i - p_i) / W``, it is the linear program
    ``max sum_k b_k x_k`` over ``|x_k| <= 1`` and
    ``|x_{k+1} - x_k| <= v_{k+1} - v_k``: adjacent Lipschitz constraints
    suffice (Hu et al., Lemma 2), and its dual is a minimum-cost flow on a path
    plus a star (Hu et al., Lemma 3). It is solved exactly by the dynamic program
    of Hu et al., Section 3.2 on that dual, with the weighted breakpoints of each
    convex stage kept in two heaps instead of a segment tree: breakpoints
    never move and only leave at the two ends, so the dynamic program costs
    O(K log K) in the worst case against the paper's O(n log^2 n), and the
    whole call O(n log n) with the sort of the predictions.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Observed labels (binary), or class labels for multiclass ``y_prob``.
    y_prob : array-like of shape (n_samples,) or (n_samples, n_classes)
        Predicted probability of the positive class, or ``predict_proba``
        output (see ``multiclass`` and ``labels``).
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
        Also return an optimal test function ``x`` at the distinct
        predictions. It is recovered from the maximiser of every stage of
        the primal dynamic program, found by a Fenwick tree over the sorted
        prefix sums of ``b``: one more O(K log K) sort and pass.

    Returns
    -------
    value : float
        The smooth calibration error, in ``[0, 1]``.
    details : Bunch
        Only with ``return_details=True``:

        points : ndarray of shape (K,)
            The distinct predictions, sorted.
        witness : ndarray of shape (K,)
            Values ``x_k`` in ``[-1, 1]`` with
            ``|x_{k+1} - x_k| <= points[k+1] - points[k]`` and
            ``sum_k b_k x_k = value``. Its linear interpolation is an optimal
            1-Lipschitz test on ``[0, 1]``; positive where outcomes exceed
            predictions (under-confidence), negative where they fall short.
        error_bound : float
            Only when ``y_true`` is a compacted ``CalibrationSketch``: a bound
            on how far ``value`` may be from the value on the sketched rows
            (see ``skcal.sketch.CalibrationSketch``).

    Examples
    --------
    >>> from skcal import smooth_calibration_error
    >>> y_true = [0, 0, 1, 1]
    >>> y_prob = [0.2, 0.4, 0.6, 0.9]
    >>> round(smooth_calibration_error(y_true, y_prob), 6)
    0.0625
    >>> value, details = smooth_calibration_error(
    ...     y_true, y_prob, return_details=True)
    >>> details.points.tolist(), [round(float(x), 6) for x in details.witness]
    ([0.2, 0.4, 0.6, 0.9], [-1.0, -0.8, -0.6, -0.3])
    >>> smooth_calibration_error([0, 1, 1, 0], [0.5, 0.5, 0.5, 0.5])
    0.0
    """
    statistic = binary_statistic(
        y_true,
        y_prob,
        sample_weight,
        pos_label=pos_label,
        multiclass=multiclass,
        labels=labels,
        rescale=True,
        # the walk's stack in the statistic's block (one allocation a call;
        # not with the details, whose points would hold the block)
        work=0 if return_details else 2,
    )
    if not return_details:
        return smce_core(statistic)
    value, witness = smce_core(statistic, witness=True)
    from sklearn.utils import Bunch
    details = Bunch(points=statistic.values, witness=witness)
    bound = sketch_error_bound(y_true, "smooth_calibration_error")
    if bound is not None:
        details["error_bound"] = bound
    return value, details


def smce_core(statistic, witness=False):
    """smCE of a :class:`~skcal._grouped.GroupedStatistic`; no validation.

    Returns the value, or ``(value, witness)`` with ``witness=True``. The
    value always comes from the forward pass alone, on the side of B_K's
    sign only, with the bucket walk (16 extra bytes per distinct value and
    24 per key it puts in a bucket, about half of them; see
    ``smce_one_side`` in ``_flow.pyx``), so it is the same number with or
    without the witness;
    the witness needs the frontiers and a backtrack besides.
    """
    values, weights, positives = statistic.values, statistic.weights, statistic.positives
    if weights.shape[0] and not weights.all():
        # a value of weight 0 is no value: dropped, so that the one-sided pass
        # sums the same terms in the same order whether the caller kept rows
        # of weight 0 (in memory) or not (a merged sketch)
        keep = weights != 0
        values, weights, positives = values[keep], weights[keep], positives[keep]
    K = values.shape[0]
    work = statistic.work
    # the walk's 2 K numbers: the statistic's work rows where it has them
    heap = work.reshape(-1)[: 2 * K] if work is not None and work.size >= 2 * K else None
    value = float(
        _VALUE_KERNEL(
            values, weights, positives, statistic.total,
            np.empty(2 * K) if heap is None else heap,
            True,  # the bucket walk (see smce_one_side)
        )
    )
    if not witness:
        return value
    n_points = statistic.values.shape[0]
    # prefix sums of the grouped residuals b_k, and the Lipschitz budgets
    B = np.cumsum(statistic.residuals())
    d = np.diff(statistic.values)
    # the dual breakpoints sit at 0 and at B_1..B_{K-1} (see _flow.pyx)
    positions = np.sort(np.concatenate(([0.0], B[:-1])))
    tree = np.zeros(n_points + 1)
    x = np.empty(n_points)
    front = np.empty((2, n_points - 1))
    dual_frontiers(B, d, positions, np.empty((2, 2 * n_points)), tree, front, x)
    backtrack(B, d, front, x)
    return value, x


register(
    MeasureSpec(
        name="smooth_calibration_error",
        class_name="SmoothCalibrationError",
        # the public function reads the boundary's canonical form as y_true
        core=smooth_calibration_error,
        function=smooth_calibration_error,
        options={},
        label="smooth calibration error",
        docs="bias a smooth reweighting of predictions can reveal",
        grouped_core=lambda statistic, **options: smce_core(statistic),
        tester_name="smce",
        # smCE >= dCE / 2 (Lemma 12 of Hu, Jambulapati, Tian and Yang, "Testing
        # calibration in nearly-linear time"), witnessed by one Lipschitz test x;
        # |(y - v) x(v) - (y - u) x(u)| <= 2 |u - v| and a flip moves it by |x| <= 1.
        dce_factor=0.5,
        lipschitz=(2.0, 1.0),
        rank=0,
    )
)
