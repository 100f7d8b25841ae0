"""Multiclass utility calibration (Hegazy, Jordan and Dieuleveut)."""

from __future__ import annotations

from typing import TYPE_CHECKING, overload

import numpy as np

from .._input import canonical_weights, multiclass_input
from .._kernels._interval import argsort_rows, max_abs_interval_rows
from .._specs import MeasureSpec, register
from ..utilities import TopClass, TopK
from ..utilities._engine import evaluate_blocks
from ..utilities._families import (
    LinearFamily,
    RankFamily,
    SampledFamily,
    members,
    resolve_utility,
)
from ._uc_binary import binary_member_errors, is_binary_member

if TYPE_CHECKING:
    from typing import Literal

    from numpy.typing import ArrayLike, NDArray
    from sklearn.utils import Bunch

    from .._typing import RandomStateLike, UtilityName, Value
    from ..utilities import Utility
    from ..utilities._families import FiniteFamily, SampledFamily

__all__ = ["utility_calibration_ecdf", "utility_calibration_error"]

# Utilities evaluated per block: about 2^22 (v, residual, order) triples, so a
# block's three arrays take ~100 MB whatever n is.
_BLOCK_ELEMENTS = 1 << 22

# Sample size of the eCDF of a continuous family, as in Hegazy et al., Section 5.
_DEFAULT_N_UTILITIES = 1500


def worst_intervals(utilities, data, w, maximum_only=False):
    """UC(f, u) of every utility, with its worst interval and sign.

    Utilities with a 0/1 realised utility (top-class, class-wise, top-K)
    take the cutoff error's path, sharing what a family shares
    (``_uc_binary``). Each block of the others is evaluated in one vectorised
    pass, its rows sorted by ``v`` and handed to the batched worst-interval
    kernel.

    With ``maximum_only=True`` only the members that may hold the largest
    value are computed (the 0/1 members by branch and bound, after the
    others); the rest get ``value = -inf``. The largest value, the first
    member attaining it, its interval and sign are the same, bit for bit.
    """
    binary = [is_binary_member(u) for u in utilities]
    if any(binary):
        value, lower, upper, sign = _general_intervals(
            [u for u, b in zip(utilities, binary) if not b], data, w
        )
        floor = None
        if maximum_only:
            floor = float(value.max()) if value.shape[0] else -np.inf
        fast = binary_member_errors(
            [u for u, b in zip(utilities, binary) if b], data, w, floor=floor
        )
        mask = np.array(binary)
        out = []
        for slow_part, fast_part in zip((value, lower, upper, sign), fast):
            merged = np.empty(mask.shape[0], dtype=slow_part.dtype)
            merged[~mask] = slow_part
            merged[mask] = fast_part
            out.append(merged)
        return tuple(out)
    return _general_intervals(utilities, data, w)


def _general_intervals(utilities, data, w):
    """``worst_intervals`` of any utilities: a radix argsort of each ``v``."""
    # the measures' weight scale: exact, and no underflow or overflow
    w = canonical_weights(w)
    m = len(utilities)
    value = np.empty(m)
    lower = np.empty(m)
    upper = np.empty(m)
    sign = np.empty(m, dtype=np.int8)
    block_size = max(1, _BLOCK_ELEMENTS // data.n_samples)
    for start, V, realised in evaluate_blocks(utilities, data, block_size):
        V = np.ascontiguousarray(V, dtype=np.float64)
        residual = np.ascontiguousarray(realised - V)
        # a stable radix sort of each row (2 to 3 times np.argsort's speed)
        order = np.empty(V.shape, dtype=np.intp)
        argsort_rows(V, order)
        stop = start + V.shape[0]
        max_abs_interval_rows(
            V,
            residual,
            w,
            order,
            value[start:stop],
            lower[start:stop],
            upper[start:stop],
            sign[start:stop],
        )
    value /= w.sum()
    return value, lower, upper, sign


def is_top_class(utility):
    """The top-class utility, also as ``TopK(1)``."""
    return type(utility) is TopClass or (type(utility) is TopK and utility.k == 1)


def top_class(data, w):
    """UC of the top-class utility by the cutoff error's path.

    It is the cutoff calibration error of (confidence, correctness)
    (Hegazy et al., Example 3.4), so it takes that measure's grouped
    statistic instead of an argsort of ``v``: the same number and cost as
    the top-label cutoff error. Returns the arrays of :func:`worst_intervals`
    for one utility.
    """
    return binary_member_errors([TopClass()], data, w)


@overload
def utility_calibration_error(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    utility: UtilityName | Utility | FiniteFamily = "top-class",
    *,
    sample_weight: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    return_details: Literal[False] = False,
) -> float: ...


@overload
def utility_calibration_error(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    utility: UtilityName | Utility | FiniteFamily = "top-class",
    *,
    sample_weight: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    return_details: Literal[True],
) -> tuple[float, Bunch]: ...


def utility_calibration_error(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    utility: UtilityName | Utility | FiniteFamily = "top-class",
    *,
    sample_weight: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    return_details: bool = False,
) -> Value:
    """Utility calibration error: the worst bias of predicted utility on an interval.

    For a utility ``u(p, e_j)`` in ``[-1, 1]`` with predicted utility
    ``v_u(p) = sum_j p_j u(p, e_j)`` (eq. 3.1), this is ``UC(f, u)`` of
    Hegazy, Jordan and Dieuleveut (eq. 3.2) on the weighted
    empirical distribution of ``(p, y)``::

        UC(f, u) = sup_{intervals I} | E[(u(p, e_y) - v_u(p)) 1{v_u(p) in I}] |,

    and for a finite family ``U`` it is ``sup_{u in U} UC(f, u)`` (eq. 3.5).
    Equal values of ``v_u`` are grouped, so the value depends on the
    empirical distribution only. Each utility costs at most one sort of
    ``n`` values plus one pass (see Notes for families).

    ``utility="top-class"`` is the cutoff calibration error of (confidence,
    correctness) and a class-wise utility that of ``(p_c, 1{y = c})``
    (Hegazy et al., Example 3.4).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Observed class labels (or the boundary's canonical form,
        ``skcal._input.MulticlassInput``, with ``y_prob`` and
        ``sample_weight`` None: it is read without a second check).
    y_prob : array-like of shape (n_samples, n_classes) or (n_samples,)
        Predicted probability vectors (``predict_proba`` output): rows
        non-negative and summing to 1 within 1e-6. A 1-D array is the
        probability of the second of two classes.
    utility : str, Utility or finite family, default="top-class"
        The utility ``u`` or family ``U``: "top-class" (:class:`TopClass`),
        "class-wise" (:class:`ClassWiseFamily`), "top-k"
        (:class:`TopKFamily`), "comb" (their union, the paper's
        ``U_comb``), any :class:`Utility`, or a finite family such as a
        :class:`UtilityFamily` or ``LinearFamily(C).sample(M, random_state)``.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights; integer weights equal repeating rows.
    labels : array-like of shape (n_classes,), default=None
        The class of each column of ``y_prob``, sorted (an estimator's
        ``classes_``); by default the sorted distinct labels of ``y_true``
        when all classes occur, else ``0, ..., n_classes - 1``.
    return_details : bool, default=False
        Also return a dict describing where the error is attained.

    Returns
    -------
    value : float
        ``UC(f, u)`` or ``UC(f, U)``, in ``[0, 2]``.
    details : sklearn.utils.Bunch
        Only with ``return_details=True``:

        - ``"utility"``: the worst utility (the first one on ties);
        - ``"interval"``: ``(a, b)``, the smallest and largest ``v_u`` in its
          worst interval;
        - ``"sign"``: +1 if realised utility exceeds predicted utility there
          (the model under-promises), -1 if it falls short (over-promises),
          0 if there is no bias anywhere;
        - ``"errors"``: ``UC(f, u)`` of every utility, in ``"utilities"``
          order;
        - ``"utilities"``: the utilities measured (the family's members).

    See Also
    --------
    utility_calibration_ecdf : Distribution of ``UC(f, u)`` over a sampled family.
    cutoff_calibration_error : The binary measure UC generalises.

    Notes
    -----
    For a family and ``return_details=False`` only the members that may
    attain the supremum are measured exactly (branch and bound): every
    top-class, class-wise and top-K member first gets cheap lower and upper
    bounds (one pass over value buckets or over ``y_prob``, no sort), and a
    member whose upper bound stays below the best lower bound or exact
    value, by more than rounding could move either, is skipped. The value is
    the same, bit for bit, as measuring every member; so are the worst
    member, interval and sign (the first member on ties). With
    ``return_details=True`` every member is measured, as ``"errors"`` lists
    them all. On the generated 5e4 x 1000 data of
    ``benchmarks/bench_multiclass.py``, ``"comb"`` (2000 members) measures
    1 to 4 of them exactly, calibrated flat rows included, whose members'
    errors are all sampling noise of a similar size (the bounds are
    refined on equal-width buckets over the range of a member's values).

    Examples
    --------
    >>> from skcal import TopK, utility_calibration_error
    >>> y_true = [0, 1, 0, 2]
    >>> y_prob = [[0.5, 0.25, 0.25],
    ...            [0.5, 0.25, 0.25],
    ...            [0.75, 0.125, 0.125],
    ...            [0.75, 0.125, 0.125]]

    Top-class: at confidence 0.75 the top class occurs half of the time
    (the interval also takes in 0.5, where the bias is zero).

    >>> value, details = utility_calibration_error(
    ...     y_true, y_prob, return_details=True)
    >>> value, details["interval"], details["sign"]
    (0.125, (0.5, 0.75), -1)

    Class-wise and top-K together: class 2 is under-predicted at 0.125.

    >>> value, details = utility_calibration_error(
    ...     y_true, y_prob, "comb", return_details=True)
    >>> value, details["utility"], details["interval"], details["sign"]
    (0.1875, ClassWise(c=2), (0.125, 0.125), 1)
    >>> utility_calibration_error(y_true, y_prob, TopK(2))
    0.1875
    """
    data = multiclass_input(y_true, y_prob, sample_weight, labels)
    resolved = resolve_utility(utility)
    utilities = members(resolved, data.n_classes)
    # the errors of every member are returned with the details only
    return worst_member(utilities, data.predictions(), data.w, details=return_details,
                        every_member=return_details)


def worst_member(utilities, data, w, details=False, every_member=False):
    """The largest UC over ``utilities`` on checked data, and which member holds it.

    The tail of :func:`utility_calibration_error` after its input checks,
    shared with the patching's audit (``audit_family``), which checks its
    rows once. A lone top-class utility takes the cutoff path
    (``top_class``); otherwise ``worst_intervals``, of only the members
    that may hold the maximum unless ``every_member`` (the same maximum,
    worst member, interval and sign). Returns ``UC``, or with ``details``
    ``(UC, Bunch(utility, interval, sign[, errors], utilities))``, the
    first member attaining the maximum; ``errors`` (every member's) with
    ``every_member`` only.
    """
    if len(utilities) == 1 and is_top_class(utilities[0]):
        value, lower, upper, sign = top_class(data, w)
    else:
        value, lower, upper, sign = worst_intervals(
            utilities, data, w, maximum_only=not every_member
        )
    worst = int(np.argmax(value))
    result = float(value[worst])
    if not details:
        return result
    from sklearn.utils import Bunch
    found = {
        "utility": utilities[worst],
        "interval": (float(lower[worst]), float(upper[worst])),
        "sign": int(sign[worst]),
    }
    if every_member:
        found["errors"] = value
    return result, Bunch(**found, utilities=utilities)


def _sampled_utilities(family, n_classes, n_utilities, random_state):
    """The utilities whose errors make the eCDF, and a name for the family."""
    if isinstance(family, str) and family in ("linear", "rank"):
        family = (LinearFamily if family == "linear" else RankFamily)(n_classes)
    if isinstance(family, SampledFamily):
        if family.n_classes != n_classes:
            raise ValueError(
                f"{type(family).__name__} has n_classes={family.n_classes} but "
                f"y_prob has {n_classes} columns."
            )
        if n_utilities is None:
            n_utilities = _DEFAULT_N_UTILITIES
        return members(family.sample(n_utilities, random_state), n_classes)
    if n_utilities is not None:
        raise ValueError(
            "n_utilities applies to the continuous families ('linear', 'rank', "
            "LinearFamily, RankFamily); a finite family is measured in full."
        )
    return members(resolve_utility(family, name="family"), n_classes)


def utility_calibration_ecdf(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    family: Literal["linear", "rank"] | SampledFamily | FiniteFamily | str,
    *,
    n_utilities: int | None = None,
    random_state: RandomStateLike = None,
    sample_weight: ArrayLike | None = None,
    labels: ArrayLike | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Empirical CDF of the utility calibration error over a family of utilities.

    Hegazy et al., Section 4: draw ``M`` utilities ``u_1, ..., u_M`` from a
    distribution over a utility class, compute ``E_m = UC(f, u_m)``
    (eq. 3.2) on the data, and report ``F(e) = (1/M) #{m : E_m <= e}``, the
    fraction of utilities whose calibration error is at most ``e``. Unlike
    the supremum, which is intractable for continuous classes such as
    ``U_lin``, the eCDF is cheap and shows how errors spread across users.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Observed class labels.
    y_prob : array-like of shape (n_samples, n_classes) or (n_samples,)
        Predicted probability vectors (see
        :func:`utility_calibration_error`).
    family : {"linear", "rank"}, LinearFamily, RankFamily, or finite family
        "linear" draws payoff vectors ``a`` uniformly on the boundary of
        ``[-1, 1]^C``; "rank" draws rank payoffs ``theta`` the same way,
        sorted so that better ranks pay more (Hegazy et al., Section 4). A
        finite family (or a name accepted by
        :func:`utility_calibration_error`) is measured member by member.
    n_utilities : int, default=None
        Number of utilities drawn from a continuous family; 1500 (as in
        Hegazy et al., Section 5) when None. Must be None for a finite family.
    random_state : int, RandomState instance or None, default=None
        Controls the draw; ``LinearFamily(C).sample(n_utilities,
        random_state)`` reproduces the same utilities.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights of the rows; equal weights when None.
    labels : array-like of shape (n_classes,), default=None
        The class of each column of ``y_prob`` (see
        :func:`utility_calibration_error`).

    Returns
    -------
    errors : ndarray of shape (n_utilities,)
        ``UC(f, u_m)`` of each utility, in the order drawn.
    levels : ndarray of shape (n_levels,)
        The distinct errors, increasing.
    ecdf : ndarray of shape (n_levels,)
        ``F(levels[k])``, the fraction of utilities with error at most
        ``levels[k]``; the last entry is 1.

    See Also
    --------
    UtilityCalibrationDisplay : Plot of this eCDF.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal import utility_calibration_ecdf
    >>> rng = np.random.default_rng(0)
    >>> y_prob = rng.dirichlet(np.ones(4), size=200)
    >>> y_true = [rng.choice(4, p=p) for p in y_prob]
    >>> errors, levels, ecdf = utility_calibration_ecdf(
    ...     y_true, y_prob, "linear", n_utilities=50, random_state=0)
    >>> errors.shape, float(ecdf[-1])
    ((50,), 1.0)
    >>> bool(np.all(np.diff(levels) > 0) and np.all(np.diff(ecdf) > 0))
    True
    """
    data = multiclass_input(y_true, y_prob, sample_weight, labels)
    utilities = _sampled_utilities(family, data.n_classes, n_utilities, random_state)
    errors = worst_intervals(utilities, data.predictions(), data.w)[0]
    levels, counts = np.unique(errors, return_counts=True)
    return errors, levels, np.cumsum(counts) / errors.shape[0]


register(
    MeasureSpec(
        name="utility_calibration_error",
        class_name="UtilityCalibrationError",
        # the public function reads the boundary's canonical form as y_true
        core=utility_calibration_error,
        function=utility_calibration_error,
        options={"utility": "top-class"},
        label="utility calibration error",
        docs="worst bias of predicted utility (multiclass)",
        grouped_core=None,
        tester_name="utility",
        proba="full",
        sketch=False,
        report=False,
        rank=6,
    )
)
