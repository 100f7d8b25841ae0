"""Calibration decision loss (CDL), maximum swap regret (MSR) and the
fixed-threshold decision loss of Lemma 2.2 of Bairaktari et al., all exact.

Notation: on the weighted empirical distribution ``D`` of ``(p, y)`` the
distinct predictions are ``v_1 < ... < v_K`` with mass ``pi_k`` and outcome
rate ``q_k = E[y | p = v_k]``.

Derivation of the closed form
-----------------------------
1. *Scoring rules.* CDL (Bairaktari et al., Definition 2.2) is the supremum, over decision
   tasks with utilities in [0, 1], of the swap regret of the best response;
   by Hu and Wu, Lemma 3.2 and Claim 2.15 it is ``MSR / T`` (Hu and Wu, Definition 3.1),
   the supremum over proper scoring rules ``S`` with scores in [0, 1] of the
   prediction swap regret. Such an ``S`` is a menu of lines
   ``l(x) = (1 - x) S(., 0) + x S(., 1)`` with ``l(0), l(1)`` in [0, 1]; a
   forecast ``v_k`` gets a line maximal at ``v_k``, and swapping it for the
   line maximal at ``q_k`` gains ``U(q_k) - l_{v_k}(q_k)`` with ``U`` the upper
   envelope of the menu (Hu and Wu, Lemma 3.3, Proposition 3.6). Where several lines
   are maximal at ``v_k`` the supremum takes the one with the larger gain: the
   menu LP of Hu and Wu, Theorem 3.11 does (its properness constraints are weak
   inequalities), and mixing in a little of a strictly proper rule realises
   it up to any epsilon, with one action per prediction (so action and
   prediction swap regret agree).
2. *Kinks* (Hu and Wu, Section 3.2, exactly rather than up to a factor 2). ``U`` is
   convex and piecewise linear; let ``nu >= 0`` be its slope increments. The
   gain at ``k`` is the integral against ``nu`` of ``|q_k - mu|`` over ``mu``
   between ``q_k`` and ``v_k`` (closed at ``v_k``, by the tie rule above), so
   the swap regret is ``int h dnu`` with::

       h(mu) = sum_k pi_k |q_k - mu| 1{mu in [min(v_k, q_k), max(v_k, q_k)]}
             = E[(q - mu)_+ 1{p <= mu} + (mu - q)_+ 1{p >= mu}],

   the integrand of Bairaktari et al., Lemma 2.2 made upper semicontinuous (same supremum).
   Adding an affine function to ``U`` changes no gain and shifts the menu's
   values at 0 and at 1 independently; those values spread over ranges of
   length ``int mu dnu`` and ``int (1 - mu) dnu`` (each kink at ``mu`` of
   size ``m`` lowers the next line at 0 by ``m mu`` and raises it at 1 by
   ``m (1 - mu)``). So a kink measure is a bounded rule iff
   ``int mu dnu <= 1`` and ``int (1 - mu) dnu <= 1``.
3. *A two-constraint LP.* ``CDL = sup{int h dnu : nu >= 0, int mu dnu <= 1,
   int (1 - mu) dnu <= 1}``. Its dual asks for ``lam_0 + lam_1`` least with
   the line ``lam_0 (1 - mu) + lam_1 mu >= h(mu)`` on [0, 1]; that sum is
   twice the line's height at 1/2, hence::

       CDL = 2 * hhat(1/2),   hhat = least concave majorant of h on [0, 1].

   The primal attains it with kinks at the ends ``a <= 1/2 <= b`` of the
   majorant's piece over 1/2, of sizes ``m_a = (2b - 1)/(b - a)`` and
   ``m_b = (1 - 2a)/(b - a)`` (both constraints tight): the three-action
   task with utilities ``(U(., 0), U(., 1))`` equal to ``(1, 0)``,
   ``(1 - m_a a, m_a (1 - a))`` and ``(0, 1)``. It contains Bairaktari et al., Lemma 2.2:
   with ``S = max h``, ``S <= CDL <= 2 S``.
4. *Computation.* ``h`` is linear between consecutive points of
   ``{v_k} | {q_k} | {0, 1/2, 1}`` and takes its upper semicontinuous values
   there, so it is evaluated at those points (one sweep keeping the sums
   of the active terms) and the majorant is their upper convex hull, built
   in the same sweep: O(K log K) after the sort, no LP.
   ``tests/metrics/reference_cdl.py`` checks this against the dense menu LP of Hu and
   Wu, Theorem 3.11 written straight from the theorem.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, overload

import numpy as np

from .._grouped import binary_statistic, sketch_error_bound
from .._kernels._interval import decision_hull
from .._specs import MeasureSpec, register

if TYPE_CHECKING:
    from typing import Literal

    from numpy.typing import ArrayLike
    from sklearn.utils import Bunch

    from .._typing import BinaryLabels, Multiclass, PosLabel, Value

__all__ = [
    "calibration_decision_loss",
    "calibration_fixed_decision_loss",
    "cdl_core",
    "fixed_decision_loss_core",
    "maximum_swap_regret",
]

# Stop the vectorised pruning of non-hull points once a pass removes fewer
# than this fraction; the few points left go through the exact sequential scan.
_PRUNE_STALL = 0.1


def _upper_hull(x, h):
    """Indices of the upper convex hull of the points ``(x, h)``, ``x`` increasing.

    Vectorised passes first drop every point lying on or below the chord of
    its two neighbours (such a point is not a vertex of the hull, so dropping
    them all at once leaves the hull unchanged); the survivors, usually few,
    go through Andrew's monotone chain.
    """
    keep = np.arange(x.shape[0])
    while keep.shape[0] > 2:
        xs, hs = x[keep], h[keep]
        cross = (xs[1:-1] - xs[:-2]) * (hs[2:] - hs[:-2]) - (hs[1:-1] - hs[:-2]) * (
            xs[2:] - xs[:-2]
        )
        inner = cross >= 0
        removed = int(np.count_nonzero(inner))
        if removed == 0:
            return keep
        mask = np.ones(keep.shape[0], dtype=bool)
        mask[1:-1] = ~inner
        keep = keep[mask]
        if removed < _PRUNE_STALL * keep.shape[0]:
            break
    xs, hs = x[keep].tolist(), h[keep].tolist()
    hull = []
    for i in range(len(xs)):
        while len(hull) >= 2:
            j, k = hull[-2], hull[-1]
            cross = (xs[k] - xs[j]) * (hs[i] - hs[j]) - (hs[k] - hs[j]) * (
                xs[i] - xs[j]
            )
            if cross < 0:
                break
            hull.pop()
        hull.append(i)
    return keep[hull]


def _cdl_from_profile(x, h):
    """Exact CDL ``2 hhat(1/2)`` and the kinks ``(a, b)``, sizes ``(m_a, m_b)``."""
    hull = _upper_hull(x, h)
    hx, hh = x[hull], h[hull]
    # 0 and 1 are always hull vertices, so 0 < j < len(hx)
    j = int(np.searchsorted(hx, 0.5))
    if hx[j] == 0.5:
        # the majorant has a vertex at 1/2: one kink of size 2 there
        return 2.0 * float(hh[j]), (0.5, 0.5), (2.0, 0.0)
    a, b = float(hx[j - 1]), float(hx[j])
    m_a = (2.0 * b - 1.0) / (b - a)
    m_b = (1.0 - 2.0 * a) / (b - a)
    return m_a * float(hh[j - 1]) + m_b * float(hh[j]), (a, b), (m_a, m_b)


def _optimal_lines(kinks, sizes):
    """The distinct lines ``(U(., 0), U(., 1))`` of the maximising menu."""
    (a, b), (m_a, _) = kinks, sizes
    if a == b:
        # a single kink at 1/2: the middle action would coincide with (0, 1)
        return np.array([[1.0, 0.0], [0.0, 1.0]])
    return np.array([[1.0, 0.0], [1.0 - m_a * a, m_a * (1.0 - a)], [0.0, 1.0]])


def _optimal_task(statistic, kinks, sizes):
    """A task and a best response of it whose swap regret is the CDL.

    The supremum of step 1 of the module docstring gives each prediction a
    line maximal at it and, at a kink, the maximal line its swap improves
    most. Three actions cannot always carry that: one action's predictions
    may need different swaps (a swap maps an action to one action), and a
    prediction at a kink must pick the line on the far side of its outcome
    rate. So each action here is a pair (line, line its predictions swap
    to): rows of the task may repeat, and ``response[k]`` is the action
    taken at ``values[k]``; every ``response[k]`` is a best response at
    ``values[k]``, and swapping each action to its line gives exactly the
    value (up to rounding). Returns ``(utility, values, response)``.
    """
    lines = _optimal_lines(kinks, sizes)
    a, b = kinks
    keep = statistic.weights > 0
    v = statistic.values[keep]
    q = statistic.positives[keep] / statistic.weights[keep]
    at_q = lines[:, 0][None, :] * (1.0 - q[:, None]) + lines[:, 1][None, :] * q[:, None]
    target = np.argmax(at_q, axis=1)  # a line maximal at q: the best swap
    # the lines maximal at v: left of a the first, right of b the last
    last = lines.shape[0] - 1
    low = np.where(v <= a, 0, np.where(v <= b, min(1, last), last))
    high = np.where(v < a, 0, np.where(v < b, min(1, last), last))
    # where two lines are maximal, the one lower at q (larger gain)
    rows = np.arange(v.shape[0])
    line = np.where(at_q[rows, high] < at_q[rows, low], high, low)
    # every line is an action of the menu (as itself, when no prediction
    # takes it with another swap), then the pairs the predictions need
    used = np.stack([line, target], axis=1)
    missing = np.setdiff1d(np.arange(last + 1), line)
    pairs = np.unique(np.concatenate([used, np.stack([missing] * 2, axis=1)]), axis=0)
    response = _row_index(pairs, used)
    # swap each action to the first action on its target line
    first = np.searchsorted(pairs[:, 0], np.arange(last + 1))
    swap = first[pairs[:, 1]].astype(np.intp)
    return lines[pairs[:, 0]], v, response, swap


def _row_index(table, rows):
    """Index in ``table`` of each row of ``rows`` (rows are small pairs)."""
    code = table[:, 0] * 4 + table[:, 1]
    order = np.argsort(code)
    return order[np.searchsorted(code[order], rows[:, 0] * 4 + rows[:, 1])].astype(np.intp)


@overload
def calibration_decision_loss(
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
def calibration_decision_loss(
    y_true: BinaryLabels,
    y_prob: ArrayLike | None = None,
    *,
    sample_weight: ArrayLike | None = None,
    pos_label: PosLabel = None,
    multiclass: Multiclass = "top-label",
    labels: ArrayLike | None = None,
    return_details: Literal[True],
) -> tuple[float, Bunch]: ...


def calibration_decision_loss(
    y_true: BinaryLabels,
    y_prob: ArrayLike | None = None,
    *,
    sample_weight: ArrayLike | None = None,
    pos_label: PosLabel = None,
    multiclass: Multiclass = "top-label",
    labels: ArrayLike | None = None,
    return_details: bool = False,
) -> Value:
    """Calibration decision loss: the worst swap regret of trusting the predictions.

    On the weighted empirical distribution ``D`` of ``(p, y)`` this is
    Definition 2.2 of Bairaktari, Hu, Nguyen and Ullman, due to
    Hu and Wu (where ``CDL = MSR / T`` by Lemma 3.2)::

        CDL(D) = sup_Z sup_{sigma: A -> A}
                 E[U(sigma(r*_Z(p)), y) - U(r*_Z(p), y)],

    the supremum over decision tasks ``Z = (A, U)`` with utilities
    ``U: A x {0, 1} -> [0, 1]`` of the regret of a decision maker who best
    responds ``r*_Z(p)`` to each prediction as if it were the true
    probability, against the best fixed re-mapping of its actions.

    It is computed exactly, in O(n log n), by the closed form derived in the
    module docstring from Hu and Wu, Theorem 3.11 and its V-shaped decomposition::

        CDL(D) = 2 * hhat(1/2),

    where ``hhat`` is the least concave majorant on [0, 1] of the function of
    Bairaktari et al., Lemma 2.2, ``h(mu) = E[(q - mu)_+ 1{p <= mu} + (mu - q)_+ 1{p >= mu}]``
    with ``q = E[y | p]``. CDL is 0 exactly when ``D`` is calibrated, and lies
    between ``S = sup_mu h(mu)`` (:func:`calibration_fixed_decision_loss`)
    and ``2 S``.

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
        Also return a :class:`~sklearn.utils.Bunch` describing a maximising
        decision task and the bounds of Bairaktari et al., Lemma 2.2.

    Returns
    -------
    value : float
        The calibration decision loss, in ``[0, 1]``.
    details : Bunch
        Only with ``return_details=True``, with keys

        - ``utility``: ndarray of shape (n_actions, 2), rows
          ``(U(action, 0), U(action, 1))`` of a task attaining the supremum
          with the best response ``response``. Its rows take at most three
          distinct values, ``(1, 0)`` first and ``(0, 1)`` last, but may
          repeat: predictions that need different swaps take different
          copies of one row;
        - ``predictions``: the distinct predictions of positive weight,
          increasing;
        - ``response``: the action taken at each of ``predictions``, a best
          response of the task there (at a threshold, where two rows are
          best, the one whose swap gains more);
        - ``swap``: the action each action is swapped to. Taking
          ``response``, then swapping by ``swap``, gains exactly ``value``
          (up to rounding); no task gains more;
        - ``thresholds``: ``(a, b)`` with ``a <= 1/2 <= b``, the predictions
          at which the best response switches rows;
        - ``lower_bound``, ``upper_bound``: ``S`` and ``2 S`` of Bairaktari
          et al., Lemma 2.2;
        - ``threshold``: the ``mu`` attaining ``S``;
        - ``error_bound`` (only when ``y_true`` is a compacted
          ``CalibrationSketch``): how far ``value`` may be from the value on
          the sketched rows (see ``skcal.sketch.CalibrationSketch``).

    See Also
    --------
    maximum_swap_regret : The same quantity in units of total weight.
    calibration_fixed_decision_loss : The factor-2 approximation ``S``.

    Notes
    -----
    CDL is not testable (Bairaktari et al., Section 1.2): with distinct predictions every
    finite sample of a calibrated predictor has a CDL bounded away from 0.
    It describes the sample as given, not the predictor that produced it.

    Examples
    --------
    >>> from skcal import calibration_decision_loss
    >>> y_true = [0, 0, 1, 1]
    >>> y_prob = [0.2, 0.4, 0.6, 0.9]
    >>> round(calibration_decision_loss(y_true, y_prob), 6)
    0.2
    >>> value, details = calibration_decision_loss(
    ...     y_true, y_prob, return_details=True)
    >>> details.utility.round(6).tolist()
    [[1.0, 0.0], [0.9, 0.4], [0.9, 0.4], [0.0, 1.0]]
    >>> details.predictions.tolist(), details.response.tolist()
    ([0.2, 0.4, 0.6, 0.9], [1, 1, 2, 3])
    >>> details.swap.tolist()
    [0, 0, 3, 3]
    >>> details.thresholds
    (0.2, 0.6)
    >>> round(details.lower_bound, 6), round(details.upper_bound, 6)
    (0.1, 0.2)

    A calibrated distribution has no swap regret for any task:

    >>> calibration_decision_loss([0, 1, 0, 1], [0.5, 0.5, 0.0, 1.0])
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
    )
    result = cdl_core(statistic, details=return_details)
    bound = sketch_error_bound(y_true, "calibration_decision_loss")
    if return_details and bound is not None:
        result[1]["error_bound"] = bound
    return result


def _profile_hull(statistic):
    """``(hull_x, hull_h, max h, first maximiser)`` of the decision profile.

    One sweep (``decision_hull`` in ``_kernels/_interval.pyx``) after an
    argsort of the outcome rates ``q`` strictly between 0 and 1 (those of 0
    and 1, every group of one row, need no order: the sweep sums them): the
    points and ``h`` are never stored, so beyond the statistic it takes at
    most 24 bytes per group of such a rate (its index, rate and order) and
    the hull.
    """
    weights, positives = statistic.weights, statistic.positives
    # the total (weights.sum()) is finite exactly when every weight and every
    # positive weight is: they are >= 0, so an infinite one makes the sum
    # infinite, and positives <= weights (one number, not three passes)
    if not np.isfinite(statistic.total):
        # the sweep below would never pass a NaN rate (inf / inf): refuse first
        raise ValueError(
            "calibration_decision_loss needs finite weights: the grouped "
            "statistic has an infinite or NaN weight sum (sample_weight or a "
            "merged sketch too large for float64); scale sample_weight down."
        )
    return decision_hull(statistic.values, weights, positives, statistic.total)


def cdl_core(statistic, details=False):
    """CDL of a grouped statistic (and its Bunch of details); no validation."""
    hull_x, hull_h, h_max, x_max = _profile_hull(statistic)
    value, kinks, sizes = _cdl_from_profile(hull_x, hull_h)
    if not details:
        return value
    utility, values, response, swap = _optimal_task(statistic, kinks, sizes)
    from sklearn.utils import Bunch
    return value, Bunch(
        utility=utility,
        predictions=values,
        response=response,
        swap=swap,
        thresholds=kinks,
        lower_bound=h_max,
        upper_bound=2.0 * h_max,
        threshold=x_max,
    )


def maximum_swap_regret(
    y_true: BinaryLabels,
    y_prob: ArrayLike | None = None,
    *,
    sample_weight: ArrayLike | None = None,
    pos_label: PosLabel = None,
    multiclass: Multiclass = "top-label",
    labels: ArrayLike | None = None,
) -> float:
    """Maximum swap regret: the worst total regret of trusting the predictions.

    Definition 3.1 of Hu and Wu: for a sequence of ``T``
    predictions and outcomes, the supremum over proper scoring rules with
    scores in [0, 1] (equivalently, by their Lemma 3.2, over decision tasks
    with utilities in [0, 1]) of the swap regret summed over the ``T``
    rounds. It equals ``T * calibration_decision_loss``. With
    ``sample_weight``, row ``i`` counts as ``w_i`` rounds and ``T`` is the
    total weight, so integer weights equal repeating rows.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Observed labels (binary), or class labels for multiclass ``y_prob``.
    y_prob : array-like of shape (n_samples,) or (n_samples, n_classes)
        Predicted probability of the positive class, or ``predict_proba``
        output (see ``multiclass``).
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights (numbers of rounds).
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

    Returns
    -------
    value : float
        The maximum swap regret, in ``[0, T]``.

    See Also
    --------
    calibration_decision_loss : The same quantity per round.

    Examples
    --------
    >>> from skcal import maximum_swap_regret
    >>> y_true = [0, 0, 1, 1]
    >>> y_prob = [0.2, 0.4, 0.6, 0.9]
    >>> round(maximum_swap_regret(y_true, y_prob), 6)
    0.8
    """
    statistic = binary_statistic(
        y_true,
        y_prob,
        sample_weight,
        pos_label=pos_label,
        multiclass=multiclass,
        labels=labels,
        rescale=True,
        return_scale=True,
    )
    statistic, e = statistic
    # T in the caller's units of weight (the statistic's are scaled by 2**e)
    with np.errstate(over="ignore"):
        total = float(np.ldexp(statistic.total, -e))
    return total * cdl_core(statistic)


@overload
def calibration_fixed_decision_loss(
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
def calibration_fixed_decision_loss(
    y_true: BinaryLabels,
    y_prob: ArrayLike | None = None,
    *,
    sample_weight: ArrayLike | None = None,
    pos_label: PosLabel = None,
    multiclass: Multiclass = "top-label",
    labels: ArrayLike | None = None,
    return_details: Literal[True],
) -> tuple[float, Bunch]: ...


def calibration_fixed_decision_loss(
    y_true: BinaryLabels,
    y_prob: ArrayLike | None = None,
    *,
    sample_weight: ArrayLike | None = None,
    pos_label: PosLabel = None,
    multiclass: Multiclass = "top-label",
    labels: ArrayLike | None = None,
    return_details: bool = False,
) -> Value:
    """The fixed-threshold decision loss of Lemma 2.2 of Bairaktari et al.

    With ``q = E[y | p]`` on the weighted empirical distribution ``D``::

        S(D) = sup_{mu in [0, 1]} E[(q - mu)_+ 1{p <= mu} + (mu - q)_+ 1{p > mu}],

    the largest swap regret of a two-action task with decision threshold
    ``mu``, in units where its utility gap is 1. Lemma 2.2 of Bairaktari,
    Hu, Nguyen and Ullman (from Hu and Wu) states
    ``S <= CDL <= 2 S``; :func:`calibration_decision_loss` is exact.

    The function of ``mu`` is piecewise linear with breaks only at the
    distinct predictions ``v_k`` and their outcome rates ``q_k``, so the
    supremum is a maximum over those points, O(n log n) in all. At
    ``mu = v_k`` with ``q_k < v_k`` the paper's ``1{p > mu}`` excludes group
    ``k``, so the supremum is then approached as ``mu`` rises to ``v_k``
    rather than attained; the value is the same.

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
        Also return the maximising threshold ``mu`` (the smallest one).

    Returns
    -------
    value : float
        ``S``, in ``[0, 1]``.
    details : Bunch
        Only with ``return_details=True``: ``threshold``, a float (and
        ``error_bound`` for a compacted ``CalibrationSketch``, see
        ``skcal.sketch.CalibrationSketch``).

    See Also
    --------
    calibration_decision_loss : The exact supremum over all decision tasks.

    Examples
    --------
    >>> from skcal import calibration_fixed_decision_loss
    >>> y_true = [0, 0, 1, 1]
    >>> y_prob = [0.2, 0.4, 0.6, 0.9]
    >>> value, details = calibration_fixed_decision_loss(
    ...     y_true, y_prob, return_details=True)
    >>> round(value, 6), details.threshold
    (0.1, 0.2)
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
    value, threshold = fixed_decision_loss_core(statistic)
    if not return_details:
        return value
    from sklearn.utils import Bunch
    details = Bunch(threshold=threshold)
    bound = sketch_error_bound(y_true, "calibration_fixed_decision_loss")
    if bound is not None:
        details["error_bound"] = bound
    return value, details


def fixed_decision_loss_core(statistic):
    """``(S, maximising threshold)`` of a grouped statistic; no validation."""
    _, _, h_max, x_max = _profile_hull(statistic)
    return h_max, x_max


register(
    MeasureSpec(
        name="calibration_decision_loss",
        class_name="CalibrationDecisionLoss",
        # the public function reads the boundary's canonical form as y_true
        core=calibration_decision_loss,
        function=calibration_decision_loss,
        options={},
        label="calibration decision loss",
        docs="worst such cost over all decision tasks",
        grouped_core=lambda statistic, **options: cdl_core(statistic),
        tester_name="cdl",
        interval="bootstrap, or scdl-bound on continuous predictions",
        rank=4,
    )
)
