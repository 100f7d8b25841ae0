"""The smCE tester's null draws, bracketed on groups of predictions.

A null draw of the smCE tester on ``K`` distinct predictions of one weight
(``_BinaryData.bernoulli``) is ``K`` uniforms and an exact smCE on ``K``
points (``smce_null_draw``): about 7 ms at ``K = 10**6``, of which drawing
the outcomes is under 2. The test reads its draws only through
comparisons: how many reach the statistic, and (its threshold) one order
statistic. Neither needs most draws exactly.

**The bracket.** Cut the sorted predictions into consecutive groups of
``m`` and move each group's rows to the group's mean ``m_g``: the residual
``sum (y_k - v_k)`` of the group is kept, and for every 1-Lipschitz test
function ``w``, ``sum_k w(v_k) r_k`` moves by at most ``sum_k |v_k - m_g|
|r_k|``; so smCE (a supremum over such ``w``, divided by the total weight)
moves by at most ``bound = sum_k |v_k - m_g| |y_k - v_k| / K``. The kernel
``smce_null_bracket`` draws the same outcomes as ``smce_null_draw`` from the
same seed and returns the grouped smCE and this bound in one pass (1.7 ms at
``K = 10**6``: the uniforms, and an exact smCE on ``K / m`` points).

**Exact answers.** A draw is known to lie in ``[value - bound - margin,
value + bound + margin]`` (``margin`` covers the rounding of both
computations). A comparison its interval settles is not computed; a draw
whose interval straddles what is asked is drawn again exactly, from its
seed, by ``smce_null_draw``: the number ``_BinaryData.draw`` gives, which
the tester computed for every draw before. So the counts, the threshold,
the p-value and the decision are those of the exact draws, bit for bit;
only their cost changes.

**Weighted rows** (unequal weights) are drawn row by row in the order of
the rows (``_Resampler``): ``smce_null_bracket_rows`` draws the same
outcomes and sums ``w_i y_i`` into the group of each row's prediction; the
groups' means are weighted (``sum w_i p_i / sum w_i``, which keeps each
group's residual ``sum w_i (y_i - p_i)``) and the bound is ``sum_i w_i
|p_i - m_g| |y_i - p_i| / W``. A draw computed exactly is ``smce_core`` of
the resampler's positive weights, the tester's number for it.

**The groups.** ``m = floor(sqrt(K) / 16)``: the bound is at most ``m / (2
K)`` (the groups' widths sum to at most 1 and ``|y - v| <= 1``), while the
null's spread is of order ``1 / sqrt(K)``, so the share of draws left
undecided stays about the same at every ``K`` (2% of the draws at ``K =
10**6`` on calibrated uniform predictions), and the grouped smCE costs
``O(16 sqrt(K))``, nothing beside the uniforms.
"""

import math

import numpy as np

from .._kernels._flow import (
    smce_null_bracket,
    smce_null_bracket_counts,
    smce_null_bracket_rows,
    smce_null_draw,
    smce_null_draw_counts,
    smce_one_side,
)
from ..metrics._smce import smce_core
from ._dcebound import _BoundedDraws

__all__ = ["SmceNull", "bracketed"]

# From this many distinct predictions on, the smCE tester brackets its draws
# (below, an exact draw takes under 0.2 ms and the per-call overhead of the
# bracket is a large share; measured by benchmarks/bench_tester.py --tail).
_BRACKET_FROM = 2**15
# False: every draw exact (benchmarks/bench_tester.py times both)
_BRACKETS = True
# Groups of about sqrt(K) / _GROUP_DIVISOR predictions (the module's docstring).
_GROUP_DIVISOR = 16


def bracketed(data):
    """Whether the null draws of ``data`` (a ``_BinaryData``) are bracketed.

    smCE's draws on distinct predictions of one weight (``bernoulli``), on
    predictions of a few rows of one weight each (``count_draws``: a uniform
    per row) and on weighted rows (``data.p`` kept); not those of a binomial
    count per prediction (many rows of one weight per prediction).
    """
    return bool(
        _BRACKETS
        and getattr(data, "smce", False)
        and (
            getattr(data, "bernoulli", False)
            or getattr(data, "count_draws", False)
            or getattr(data, "p", None) is not None
        )
        and len(data.G) >= _BRACKET_FROM
    )


def _groups(values, counts=None):
    """``(ends, means)``: consecutive groups of about ``sqrt(K) / 16`` values.

    With ``counts`` (rows per value) the means are by rows, ``sum c_k v_k /
    sum c_k``, which keeps each group's residual.
    """
    K = values.shape[0]
    m = max(1, math.isqrt(K) // _GROUP_DIVISOR)
    ends = np.arange(m, K + m, m, dtype=np.intp)
    ends[-1] = K
    if ends.shape[0] > 1 and ends[-2] == K:  # pragma: no cover - m divides K
        ends = ends[:-1]
    starts = np.concatenate(([0], ends[:-1]))
    if counts is None:
        means = np.add.reduceat(values, starts) / np.diff(np.append(starts, K))
    else:
        rows = np.add.reduceat(counts, starts).astype(np.float64)
        means = np.add.reduceat(values * counts, starts) / rows
    return ends, means


class _Rows:
    """What the bracket of weighted rows reads: each row's group and ``w |p - m_g|``."""

    def __init__(self, data, ends):
        p, w = data.p, data.w
        K = data.G.values.shape[0]
        sizes = np.diff(np.concatenate(([0], ends)))
        self.group = np.repeat(np.arange(ends.shape[0]), sizes)[data.index]
        G = ends.shape[0]
        weight = np.bincount(self.group, weights=w, minlength=G)
        self.keep = weight > 0  # groups of rows of weight 0 only: none
        mean = np.zeros(G)
        mean[self.keep] = (
            np.bincount(self.group, weights=w * p, minlength=G)[self.keep]
            / weight[self.keep]
        )
        self.wd = w * np.abs(p - mean[self.group])
        self.means = np.ascontiguousarray(mean[self.keep])
        self.weights = np.ascontiguousarray(weight[self.keep])
        self.size = G
        self.margin_terms = max(K, p.shape[0])


class SmceNull:
    """The null draws of one smCE test, each bracketed, exact where asked.

    Parameters
    ----------
    data : _BinaryData
        The test's data, with ``bracketed(data)``. What the exact draws need
        is kept (the predictions, and for weighted rows the resampler); the
        bracket's own arrays are not pickled (a fitted tester keeps this
        object until ``null_statistics_`` is read).

    Attributes
    ----------
    size : int
        The number of draws made.
    n_exact : int
        How many of them were computed exactly.
    """

    # the draws release the GIL: _draw_all runs them in threads
    bernoulli = True

    def __init__(self, data):
        G = data.G
        self._G = G
        self._values = np.ascontiguousarray(G.values, dtype=np.float64)
        self._scale = float(data.scale) if data.p is None else None
        self._total = float(G.total)
        self._resampler = data.resampler if data.p is not None else None
        # values of a few rows each (data.count_draws): their counts
        self._counts = data.int_counts if getattr(data, "count_draws", False) else None
        self._weights = np.ascontiguousarray(G.weights, dtype=np.float64)
        self._ends, self._means = _groups(self._values, self._counts)
        self._rows = _Rows(data, self._ends) if data.p is not None else None
        terms = self._values.shape[0] if self._rows is None else self._rows.margin_terms
        # rounding of the two smCE computations (each a sum of about 2 K terms
        # of magnitude at most 1 / K) and of the bound: far below the bound
        self._margin = 1e-9 + 4.0 * terms * 2.0**-52
        self.seeds = []
        self.values = np.empty(0)
        self.exact = np.empty(0, dtype=bool)
        self.lower = np.empty(0)
        self.upper = np.empty(0)

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_rows"] = None  # only the bracket reads it
        return state

    @property
    def size(self):
        return len(self.seeds)

    @property
    def n_exact(self):
        return int(np.count_nonzero(self.exact))

    def bracket(self, seed):
        """``(value, bound)`` of the draw of ``seed``: the exact one is within ``bound``."""
        rng = np.random.default_rng(seed)
        rows = self._rows
        if rows is None and self._counts is not None:
            G = self._ends.shape[0]
            return smce_null_bracket_counts(
                self._values, self._counts, rng.bit_generator, self._scale,
                self._total, self._ends, self._means, np.empty(G), np.empty(2 * G),
            )
        if rows is None:
            G = self._ends.shape[0]
            return smce_null_bracket(
                self._values, rng.bit_generator, self._scale, self._total,
                self._ends, self._means, np.empty(G), np.empty(2 * G),
            )
        positives = np.empty(rows.size)
        err = smce_null_bracket_rows(
            self._resampler.p, self._resampler.w, rows.wd, rows.group,
            rng.bit_generator, positives,
        )
        positives = np.ascontiguousarray(positives[rows.keep])
        value = smce_one_side(
            rows.means, rows.weights, positives, self._total,
            np.empty(2 * positives.shape[0]), True,
        )
        return value, err / self._total

    def extend(self, seeds, draw_all):
        """Bracket the draws of ``seeds``; ``draw_all(draw, seeds)`` runs them."""
        if len(seeds) == 0:
            return
        pairs = np.asarray(draw_all(self.bracket, list(seeds)), dtype=np.float64)
        pairs = pairs.reshape(len(seeds), 2)
        value, bound = pairs[:, 0], pairs[:, 1]
        width = bound * (1.0 + 1e-12) + self._margin
        self.seeds.extend(seeds)
        self.values = np.concatenate([self.values, np.full(len(seeds), np.nan)])
        self.exact = np.concatenate([self.exact, np.zeros(len(seeds), dtype=bool)])
        self.lower = np.concatenate([self.lower, value - width])
        self.upper = np.concatenate([self.upper, value + width])

    def draw(self, seed):
        """The draw of ``seed``, exactly: ``_BinaryData.draw(seed)``."""
        rng = np.random.default_rng(seed)
        if self._resampler is None and self._counts is not None:
            K = self._values.shape[0]
            value = smce_null_draw_counts(
                self._values, self._weights, self._counts, rng.bit_generator,
                self._scale, self._total, np.empty(2 * K), np.empty(K),
            )
        elif self._resampler is None:
            value = smce_null_draw(
                self._values, rng.bit_generator, self._scale, self._total,
                np.empty(2 * self._values.shape[0]),
            )
        else:
            value = smce_core(self._G.with_positives(self._resampler(rng)))
        return float(value)

    def _solve(self, draws):
        for b in np.asarray(draws, dtype=np.intp).tolist():
            if not self.exact[b]:
                value = self.draw(self.seeds[b])
                self.values[b] = value
                self.exact[b] = True
                self.lower[b] = self.upper[b] = value

    def at_least(self, statistic):
        """``#{draws >= statistic}``, exactly (as ``np.count_nonzero(null >= statistic)``)."""
        open_ = ~self.exact
        straddle = open_ & (self.lower < statistic) & (self.upper >= statistic)
        self._solve(np.flatnonzero(straddle))
        certain = ~self.exact & (self.lower >= statistic)
        reached = self.values[self.exact] >= statistic
        return int(np.count_nonzero(certain) + np.count_nonzero(reached))

    # the order statistic of the dCE draws' branch and bound, on these
    # brackets: it reads size, solved, values, _intervals, _narrow, solve_all
    largest = _BoundedDraws.largest

    @property
    def solved(self):
        return self.exact

    def _intervals(self):
        return self.lower, self.upper

    def _narrow(self, middle, high, low=None):
        """Compute the draws ``middle`` exactly (few: their brackets overlap)."""
        self._solve(middle)

    def solve_all(self):
        self._solve(np.flatnonzero(~self.exact))

    def sorted_values(self):
        """Every draw exactly, sorted (what ``null_statistics_`` shows)."""
        self.solve_all()
        return np.sort(self.values)
