"""The grouped sufficient statistic of binary calibration data.

Every binary measure of skcal is a functional of the weighted empirical
distribution ``D = sum_i w_i delta(p_i, y_i) / sum_i w_i``, and so of

    G = (v_1 < ... < v_K;  W_k = sum_{p_i = v_k} w_i;  P_k = sum_{p_i = v_k} w_i y_i),

the distinct predictions in increasing order with, per value, the total
weight and the total weight of positive outcomes. Public measures validate
once, build ``G`` with one sort (:func:`group`), and hand it to a private
core that does no validation. The calibration tester redraws ``P`` given
``(v, W)`` under its null, and sketches merge ``G`` by a sorted merge.

Conventions, documented once:

* ``values`` is float64, strictly increasing, in ``[0, 1]``;
* ``weights`` and ``positives`` are float64, ``0 <= positives <= weights``
  (groups of weight zero are kept: they carry no mass and every core
  ignores them);
* ``total`` is ``weights.sum()``, positive.
"""

import numpy as np

from ._kernels._interval import group_sorted, group_two_sorted
from ._validation import check_binary_calibration_input

__all__ = ["GroupedStatistic", "binary_statistic", "group"]


class GroupedStatistic:
    """Distinct predictions with their weight and positive-weight sums.

    Parameters
    ----------
    values : ndarray of shape (K,)
        Distinct predictions, strictly increasing, in ``[0, 1]``.
    weights : ndarray of shape (K,)
        Total weight at each value.
    positives : ndarray of shape (K,)
        Total weight of positive outcomes at each value.
    """

    __slots__ = ("values", "weights", "positives", "total")

    def __init__(self, values, weights, positives):
        self.values = values
        self.weights = weights
        self.positives = positives
        self.total = float(weights.sum())

    def __len__(self):
        return self.values.shape[0]

    def __repr__(self):
        return f"GroupedStatistic(n_values={len(self)}, total={self.total!r})"

    def __getstate__(self):
        return (self.values, self.weights, self.positives)

    def __setstate__(self, state):
        self.__init__(*state)

    def residuals(self):
        """``b_k = (P_k - v_k W_k) / total``: the bias each value contributes."""
        return (self.positives - self.values * self.weights) / self.total

    def with_positives(self, positives):
        """The same values and weights with other positive sums (a resample)."""
        return GroupedStatistic(self.values, self.weights, positives)


def group(y, p, w):
    """Sort by ``p`` and merge equal predictions into a :class:`GroupedStatistic`.

    Parameters
    ----------
    y, p, w : ndarray of shape (n,)
        Validated outcomes in {0, 1}, predictions in [0, 1] and weights (the
        compact forms of ``check_binary_calibration_input``, uint8 or int64
        outcomes and stride-0 unit weights, are converted here).

    Notes
    -----
    Unit weights with 0/1 labels (the compact form) take two value sorts, of
    the predictions of each class, and one merge instead of an argsort: a
    value sort is several times faster than an argsort, and the counts are
    exact, so the statistic is the same bit for bit. Peak extra memory is
    about 34 bytes per sample on that path (the two sorted halves and the
    three output arrays), 56 otherwise.
    """
    n = p.shape[0]
    values = np.empty(n)
    weights = np.empty(n)
    positives = np.empty(n)
    if _unit_weights(w) and y.dtype in (np.uint8, np.int64, np.bool_):
        if y.dtype == np.int64:
            mask = y != 0  # our own array: complemented in place below
        else:
            mask = y.view(np.bool_)  # a view of 0/1 bytes, read only
        p1 = p[mask]
        p1.sort()
        if mask.base is None:
            p0 = p[np.logical_not(mask, out=mask)]
        else:
            p0 = p[~mask]
        del mask
        p0.sort()
        k = group_two_sorted(p0, p1, values, weights, positives)
    else:
        y = np.ascontiguousarray(y, dtype=np.float64)
        w = np.ascontiguousarray(w, dtype=np.float64)
        order = np.argsort(p)
        k = group_sorted(p, y, w, order, values, weights, positives)
    return GroupedStatistic(values[:k], weights[:k], positives[:k])


def _unit_weights(w):
    """True for the stride-0 unit weights of the compact validator."""
    return w.ndim == 1 and w.strides == (0,) and w.shape[0] > 0 and w[0] == 1.0


def binary_statistic(
    y_true,
    y_prob,
    sample_weight=None,
    *,
    pos_label=None,
    multiclass="top-label",
    labels=None,
):
    """Validate binary (or top-label) input and group it: the one entry of every measure.

    ``y_true`` may also be an object that already holds the statistic (it
    has a ``grouped_statistic()`` method, as a calibration sketch does);
    ``y_prob`` and ``sample_weight`` must then be None.
    """
    statistic = getattr(y_true, "grouped_statistic", None)
    if callable(statistic):
        if y_prob is not None or sample_weight is not None:
            raise ValueError(
                f"y_true is a {type(y_true).__name__}, which already holds the "
                "predictions and weights: pass y_prob=None and sample_weight=None."
            )
        return statistic()
    if y_prob is None:
        raise ValueError("y_prob is required (the predicted probabilities).")
    y, p, w = check_binary_calibration_input(
        y_true,
        y_prob,
        sample_weight,
        pos_label=pos_label,
        multiclass=multiclass,
        labels=labels,
        compact=True,
    )
    return group(y, p, w)
