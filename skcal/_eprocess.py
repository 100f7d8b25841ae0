"""The betting e-process behind :class:`skcal.CalibrationMonitor`.

One object runs the test martingale for many independent streams at once
(the leading axis), so that the monitor (one stream) and the error-rate
benchmark (a thousand simulated streams, vectorised with numpy) execute the
same arithmetic. Rows are processed one at a time, in order.

The test martingale, for one stream. Under the null hypothesis of
calibration, ``E[y_t - p_t | F_{t-1}, p_t] = 0``, where ``F_{t-1}`` holds the
rows before ``t`` and ``p_t`` was fixed before ``y_t`` was seen. For each
resolution ``B`` in ``scales`` (default 1, 2, 4 and 8 equal-width bins of
``[0, 1]``) and each bin ``b`` of it there is a bet ``lam[B, b]``, learnt by
online Newton steps (ONS) on the rows of that bin seen so far. Row ``t``
multiplies the wealth of resolution ``B`` by

    ``1 + c_t (y_t - p_t)``, ``c_t = clip(w_t lam_t[B, bin_B(p_t)], -1/2, 1/2)``,

where ``w_t`` is the row's weight. ``c_t`` is a function of ``F_{t-1}``,
``p_t`` and ``w_t`` only, so ``E[1 + c_t (y_t - p_t) | F_{t-1}, p_t, w_t] =
1``, and the factor is at least ``1 - |c_t| >= 1/2 > 0`` because
``|y_t - p_t| <= 1``. Hence each wealth ``K^B_t`` is a non-negative
martingale with ``K^B_0 = 1`` (a test martingale), and so is the mixture
``E_t = sum_B pi_B K^B_t`` with fixed weights ``pi_B`` summing to 1. By
Ville's inequality, ``P(sup_t E_t >= 1/alpha) <= alpha`` under the null:
raising the alarm the first time ``E_t >= 1/alpha`` has type-I error at most
``alpha`` however often, and whenever, one looks. The bets of both signs
(``lam`` in ``[-1/2, 1/2]``) make every bin test both over- and
under-confidence there.

ONS for the log-wealth (Cutkosky and Orabona, *Black-Box Reductions for
Parameter-Free Online Learning in Banach Spaces*, COLT 2018, as used for
betting confidence sequences by Waudby-Smith and Ramdas, *Estimating means of
bounded random variables by betting*, JRSS-B 2024): with ``d = -w z / (1 +
c z)`` the derivative of ``-log(1 + c z)`` in ``lam`` (``z = y - p``),
``A <- A + d^2`` and ``lam <- clip(lam - 2/(2 - ln 3) d / A, -1/2, 1/2)``.
Against a bin whose mean residual is ``delta`` with variance ``sigma^2`` the
log-wealth grows like ``n delta^2 / (2 sigma^2)`` minus ``O(log n)``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

__all__ = ["BettingEProcess", "DEFAULT_SCALES", "DEFAULT_RESTART"]

DEFAULT_SCALES = (1, 2, 4, 8)
DEFAULT_RESTART = 500
_MAX_BET = 0.5
_ONS_RATE = 2.0 / (2.0 - math.log(3.0))


class BettingEProcess:
    """Mixture over start times and bin resolutions of ONS betting martingales.

    Parameters
    ----------
    n_streams : int
        Independent streams run side by side (1 for a monitor).
    scales : tuple of int
        The bin resolutions ``B``, each an equal-width partition of [0, 1].
    restart : int or None
        The first restart: fresh copies of the betting martingales start at
        rows ``restart * 2^(k-1)``, ``k = 1, 2, ...`` (None: only at row 0).
    """

    def __init__(
        self,
        n_streams: int = 1,
        scales: Sequence[int] = DEFAULT_SCALES,
        restart: int | None = None,
    ) -> None:
        self.n_streams = int(n_streams)
        self.base_scales = np.asarray(scales, dtype=np.intp)
        self.restart = restart
        self.n_rows = 0
        self.n_starts = 0
        self.scales = np.zeros(0, dtype=np.intp)
        self.offsets = np.zeros(0, dtype=np.intp)
        self.lam = np.zeros((self.n_streams, 0))
        self.curv = np.ones((self.n_streams, 0))  # ONS's A: 1 + sum d^2
        self.log_wealth = np.zeros((self.n_streams, 0))
        self.log_prior = np.zeros(0)
        self.idle = 1.0  # prior mass of the copies not started yet
        self._rows = np.arange(self.n_streams)[:, None]
        self._next_start = 0
        self._start()

    def _start_weight(self, k):
        if self.restart is None:
            return 1.0
        return 0.5 if k == 0 else 1.0 / ((k + 1) * (k + 2))

    def _start(self):
        k = self.n_starts
        weight = self._start_weight(k)
        n = self.base_scales.shape[0]
        first = int(self.scales.sum())
        self.offsets = np.r_[self.offsets, first + np.r_[0, np.cumsum(self.base_scales)[:-1]]]
        self.scales = np.r_[self.scales, self.base_scales]
        n_new = int(self.base_scales.sum())
        self.lam = np.c_[self.lam, np.zeros((self.n_streams, n_new))]
        self.curv = np.c_[self.curv, np.ones((self.n_streams, n_new))]
        self.log_wealth = np.c_[self.log_wealth, np.zeros((self.n_streams, n))]
        self.log_prior = np.r_[self.log_prior, np.full(n, math.log(weight / n))]
        self.idle = max(0.0, self.idle - weight)
        self.n_starts = k + 1
        if self.restart is None:
            self._next_start = None
        else:
            self._next_start = int(self.restart) * 2 ** (self.n_starts - 1)

    def log_e(self) -> NDArray[np.float64]:
        """``log E_t`` per stream: the log of the mixture's wealth.

        Returns
        -------
        log_e : ndarray of shape (n_streams,)
            The log e-value of each stream.
        """
        z = self.log_wealth + self.log_prior
        top = z.max(axis=1)
        total = np.exp(z - top[:, None]).sum(axis=1)
        if self.idle > 0:
            total += self.idle * np.exp(-top)
        return top + np.log(total)

    def step(
        self,
        y: NDArray[np.float64],
        p: NDArray[np.float64],
        w: NDArray[np.float64] | None = None,
    ) -> None:
        """Take one row per stream and update every betting martingale.

        Parameters
        ----------
        y : ndarray of shape (n_streams,)
            The outcomes, in {0, 1}.
        p : ndarray of shape (n_streams,)
            The forecasts made before the outcomes were known.
        w : ndarray of shape (n_streams,), default=None
            The rows' stakes; None for unit stakes.
        """
        if self._next_start is not None and self.n_rows == self._next_start:
            self._start()
        self.n_rows += 1
        cells = np.minimum((p[:, None] * self.scales).astype(np.intp), self.scales - 1)
        cells += self.offsets
        rows = self._rows
        lam = self.lam[rows, cells]
        z = (y - p)[:, None]
        c = lam if w is None else np.clip(w[:, None] * lam, -_MAX_BET, _MAX_BET)
        factor = 1.0 + c * z
        self.log_wealth += np.log(factor)
        d = -z / factor if w is None else -w[:, None] * z / factor
        curv = self.curv[rows, cells] + d * d
        self.curv[rows, cells] = curv
        self.lam[rows, cells] = np.clip(lam - _ONS_RATE * d / curv, -_MAX_BET, _MAX_BET)
