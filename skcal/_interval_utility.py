"""Interval of the multiclass utility calibration error on its grouped statistic.

For one utility ``u`` the error reads only the pairs (predicted utility
``v_i``, residual ``d_i = u(p_i, e_{y_i}) - v_i``) of the rows, weighted:
``UC = (max_j S_j - min_j S_j) / W`` with ``S_j`` the prefix sums of
``w d`` over the distinct values of ``v`` in increasing order (``S_0 = 0``)
and ``W`` the total weight: the largest ``|sum|`` over intervals of values.

The Bayesian bootstrap (Rubin, 1981) multiplies each row's weight by an
independent ``Exp(1)``. Rows are summed into *cells*: equal values of ``v``
(more than ``_EXACT_ROWS`` rows: ``_CELLS`` equal cells of the range of
``v``, kept in order) split by the realised utility. A cell carries the
sums ``A = sum w``, ``A2 = sum w**2``, ``D = sum w d``, ``C = sum w**2 d``
and ``D2 = sum w**2 d**2``; a draw of its resampled mass and residual sum
``(M*, S*)`` is

* ``M* ~ Gamma`` of mean ``A`` and variance ``A2`` (exactly the sum of the
  rows' ``w Exp(1)`` for rows of one weight, as in :mod:`skcal._interval`);
* ``S* = b M* + (D - b A) + sqrt(D2 - C**2 / A2) Z`` with ``b = C / A2``
  and ``Z`` standard normal: the regression of ``S*`` on ``M*``, whose
  means, variances and covariance are those of the rows. When every row of
  a cell has the same ``d`` (rows of one distinct value and one outcome: all
  cells of data with at most ``_EXACT_ROWS`` rows) the residual term is 0
  and ``S* = d M*``: the draw has the law of the row-level bootstrap.

No row is copied or revisited per draw: a draw costs one variate per cell.
Above ``_EXACT_ROWS`` rows the cells merge neighbouring values; as for the
binary measures, only the resampled deviation ``T* - T`` is read from the
cells, and the point estimate is the measure of the full data.

A finite family (``sup`` over utilities) is resampled on the rows, as
before: its members share each row's multiplier, which per-utility cells
cannot keep.
"""

import numpy as np
from sklearn.utils import Bunch

from ._input import canonical_weights
from .utilities._engine import evaluate_blocks
from .utilities._families import members, resolve_utility

__all__ = ["utility_cells", "utility_interval"]

# Rows up to which every distinct predicted utility is its own cell.
_EXACT_ROWS = 1 << 14
# Cells of the range of v above that (the cutoff error's 2**12).
_CELLS = 1 << 12
# Gamma variates of at least this shape are drawn by their normal
# approximation (as skcal._interval does).
_NORMAL_FROM = 1000.0
# Draws evaluated together (memory: _DRAW_BLOCK x cells doubles, a few times).
_DRAW_BLOCK = 64


class _UtilityCells:
    """Cells of one utility's (v, d) pairs, ordered by v; see the module docstring."""

    def __init__(self, A, A2, D, C, D2, start, merged):
        self.A, self.A2, self.D, self.C, self.D2 = A, A2, D, C, D2
        # first cell of each value (or merged value range), increasing
        self.start = start
        self.merged = merged

    def value(self, S, M):
        """The error of residual sums ``S`` and masses ``M`` (shape (R, cells))."""
        by_value = np.add.reduceat(S, self.start, axis=1)
        prefix = np.cumsum(by_value, axis=1)
        top = np.maximum(prefix.max(axis=1), 0.0)
        bottom = np.minimum(prefix.min(axis=1), 0.0)
        return (top - bottom) / M.sum(axis=1)

    def center(self):
        return float(self.value(self.D[None, :], self.A[None, :])[0])

    def draws(self, rng, R):
        """``R`` Bayesian-bootstrap draws of the error, shape (R,)."""
        A, A2, D, C = self.A, self.A2, self.D, self.C
        shape = A * A / A2
        scale = A2 / A
        slope = C / A2
        spread = np.sqrt(np.maximum(self.D2 - C * slope, 0.0))
        big = shape >= _NORMAL_FROM
        mixed = spread > 0
        out = np.empty(R)
        for first in range(0, R, _DRAW_BLOCK):
            r = min(_DRAW_BLOCK, R - first)
            M = np.empty((r, A.shape[0]))
            M[:, ~big] = rng.standard_gamma(shape[~big], size=(r, int((~big).sum())))
            k = shape[big]
            M[:, big] = k + np.sqrt(k) * rng.standard_normal((r, k.shape[0]))
            M *= scale
            S = slope * M + (D - slope * A)
            if mixed.any():
                S[:, mixed] += spread[mixed] * rng.standard_normal((r, int(mixed.sum())))
            out[first:first + r] = self.value(S, M)
        return out


def utility_cells(v, d, r, w):
    """The cells of one utility: ``v`` predicted, ``d`` residual, ``r`` realised.

    ``w`` are validated weights. Rows of one value of ``v`` and one value of
    ``r`` share a cell (at most ``_EXACT_ROWS`` rows); above that, the value
    is replaced by one of ``_CELLS`` equal cells of the range of ``v``.
    """
    n = v.shape[0]
    merged = n > _EXACT_ROWS
    if merged:
        lo, hi = float(v.min()), float(v.max())
        width = (hi - lo) or 1.0
        key = np.minimum(((v - lo) * (_CELLS / width)).astype(np.int64), _CELLS - 1)
        n_keys = _CELLS
    else:
        values, key = np.unique(v, return_inverse=True)
        key = key.reshape(-1)
        n_keys = values.shape[0]
    outcomes, rid = np.unique(r, return_inverse=True)
    n_out = outcomes.shape[0]
    if n_keys * n_out <= 4 * _CELLS or not merged:
        sub = key * n_out + rid.reshape(-1)
        size = n_keys * n_out
    else:  # many realised values: one cell per value range (moment-matched)
        sub, size, n_out = key, n_keys, 1
    w2 = w * w

    def total(x):
        return np.bincount(sub, x, size)

    A, A2 = total(w), total(w2)
    D, C, D2 = total(w * d), total(w2 * d), total(w2 * d * d)
    keep = A > 0
    owner = (np.arange(size) // n_out)[keep]
    start = np.flatnonzero(np.concatenate([[True], owner[1:] != owner[:-1]]))
    return _UtilityCells(A[keep], A2[keep], D[keep], C[keep], D2[keep], start, merged)


def utility_interval(measure, data, confidence, n_resamples, rng, basic, row_interval):
    """The bootstrap interval of a single-utility measure from its cells.

    ``data`` is the boundary's ``MulticlassInput`` (checked once by the
    caller); ``basic`` is :func:`skcal._interval._basic`; a finite family
    goes to ``row_interval`` (the row-level bootstrap).
    """
    params = measure.get_params(deep=False)
    w = data.w
    utilities = members(resolve_utility(params["utility"]), data.n_classes)
    if len(utilities) != 1:
        return row_interval()
    estimate = float(measure(data))
    _, V, realised = next(evaluate_blocks(utilities, data.predictions(), 1))
    v = np.asarray(V[0], np.float64)
    r = np.asarray(realised[0], np.float64)
    # the measures' weight scale (exact): squares neither underflow nor overflow
    w = np.asarray(canonical_weights(w), np.float64)
    cells = utility_cells(v, r - v, r, w)
    draws = cells.draws(rng, n_resamples)
    low, high, debiased = basic(estimate, cells.center(), draws, confidence,
                                measure._max_value)
    return Bunch(
        estimate=estimate,
        low=low,
        high=high,
        confidence=float(confidence),
        method="bootstrap",
        debiased=debiased,
        n_resamples=n_resamples,
        target=f"utility {params['utility']!s}",
        n_effective=float(w.sum() ** 2 / np.square(w).sum()),
        merged=cells.merged,
        guarantee=(
            "asymptotic: Bayesian bootstrap on the grouped statistic of (predicted "
            "utility, realised utility) (hull of the basic and percentile "
            "intervals); coverage measured in benchmarks/interval_coverage.py"
        ),
    )
