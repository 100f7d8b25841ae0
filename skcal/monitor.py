"""Anytime-valid monitoring of calibration on a stream of labelled outcomes.

:class:`CalibrationMonitor` raises an alarm when a deployed model's forecasts
stop being calibrated, with a false-alarm probability of at most ``alpha``
however many times, and whenever, it is looked at. It runs a test martingale
(an e-process) in the manner of Arnold, Henzi and Ziegel, *Sequentially valid
tests for forecast calibration* (Annals of Applied Statistics, 2023): a
mixture, over a few bin resolutions, of betting martingales on the residuals
``y - p`` (see :mod:`skcal._eprocess` for the construction and its proof).
"""

from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._eprocess import DEFAULT_RESTART, DEFAULT_SCALES, BettingEProcess
from ._input import check_binary_calibration_input, resolve_labels

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from .display import CalibrationMonitorDisplay

__all__ = ["CalibrationMonitor"]

_METHODS = {"bins": DEFAULT_SCALES, "bias": (1,)}
_MULTICLASS = ("top-label", "raise")


class CalibrationMonitor:
    """An anytime-valid alarm for miscalibration on a stream of outcomes.

    Feed it the forecasts and outcomes as they arrive, in batches of any
    size (down to one row), with :meth:`update`. It keeps a test martingale
    ``E_t`` (``e_value_``) and raises ``alarm_`` the first time ``E_t >=
    1/alpha``. If the forecasts are calibrated, the probability that the
    alarm *ever* goes off, over the whole infinite stream, is at most
    ``alpha``: looking after every batch, every row or at any data-dependent
    time does not inflate it, unlike re-running a fixed-sample
    :class:`~skcal.CalibrationTester` at every look.

    **The null hypothesis** is calibration conditional on the past:
    ``E[y_t - p_t | F_{t-1}, p_t] = 0`` for every row ``t``, where ``F_{t-1}``
    is everything seen before row ``t`` and ``p_t`` (the probability of the
    positive class, or the top-label confidence) was fixed before ``y_t`` was
    seen. i.i.d. data from a calibrated model satisfy it; so does any
    drifting process as long as each forecast is right given the past.

    **The test martingale** (``method="bins"``). For each resolution ``B`` in
    1, 2, 4 and 8 equal-width bins of [0, 1], and each bin, a bet
    ``lam`` in ``[-1/2, 1/2]`` is learnt by online Newton steps from the
    earlier rows of that bin; row ``t`` multiplies the wealth of resolution
    ``B`` by ``1 + c_t (y_t - p_t)``, where ``c_t`` is the bet of the bin
    holding ``p_t`` (times the row's weight, clipped to ``[-1/2, 1/2]``).
    ``c_t`` depends on the past and on ``p_t`` only, so under the null each
    factor has conditional mean 1 and is positive: each wealth is a
    non-negative martingale starting at 1, and so is their average ``E_t``
    (equal prior weights). To catch a change mid-stream, fresh copies also
    start at rows 500, 1,000, 2,000, 4,000, ... (a martingale that starts
    later is one too), and ``E_t`` mixes them with fixed prior weights
    ``1/2`` for the first and ``1/((k+1)(k+2))`` for the ``k``-th restart.
    Ville's inequality, ``P(sup_t E_t >= 1/alpha) <= alpha``, is the
    guarantee above. Rows inside one :meth:`update` are processed one at a
    time, in order, so the alarm is checked at every row and the result
    does not depend on how the stream is cut into batches.
    One bin detects an overall bias; 2 to 8 bins detect over- or
    under-confidence (a tempered model) whose biases cancel overall. Against
    a bias ``delta`` with residual variance ``sigma^2`` the log of ``E_t``
    grows like ``t delta^2 / (2 sigma^2)``: a shift of 0.05 from the start
    is detected after a median of about 1,000 rows, one at row 10,000 about
    2,000 rows later (``benchmarks/monitor_error_rates.py``).

    Parameters
    ----------
    alpha : float, default=0.05
        The false-alarm probability, in (0, 1): the alarm goes off when
        ``e_value_ >= 1 / alpha``.
    method : {"bins", "bias"}, default="bins"
        ``"bins"``: the mixture over 1, 2, 4 and 8 bins described above.
        ``"bias"``: one bin only, a test of the overall bias, a little faster
        to alarm on a pure shift and blind to over/under-confidence that
        cancels overall.
    multiclass : {"top-label", "raise"}, default="top-label"
        For ``(n, K)`` probabilities with ``K > 2``: monitor the top-label
        calibration of ``(max_k p_k, 1{argmax = y})``, or refuse them.
    labels : array-like of shape (K,), default=None
        The class of each column of ``y_prob`` (an estimator's ``classes_``).
        By default it is read from the first batch, which must then contain
        every class, or from ``{0, 1}``-style labels of binary input.
    pos_label : int, float, bool or str, default=None
        The positive class of binary input, as in :mod:`sklearn.metrics`.

    Attributes
    ----------
    alarm_ : bool
        Whether ``e_value_`` has reached ``1 / alpha`` at some row so far.
    alarm_at_ : float or None
        ``n_seen_`` at the row where the alarm first went off (the number
        of rows, for unit weights), else None.
    e_value_ : float
        The current value ``E_t`` of the test martingale (1 at the start).
        ``1 / e_value_`` is an anytime-valid p-value while it is below 1,
        and ``1 / max(history)`` is one at any time.
    n_seen_ : float
        Rows seen (their total weight, with ``sample_weight``).
    n_rows_ : int
        Rows seen, whatever their weights.
    history_ : ndarray of shape (n_updates + 1, 2)
        ``(n_seen_, e_value_)`` at the start and at the end of every
        :meth:`update`.
    labels_ : ndarray or None
        The classes of the columns of multiclass input, once known.

    See Also
    --------
    CalibrationTester : One test on one fixed sample.
    CalibrationSketch : The measures of everything seen, mergeable.

    Notes
    -----
    ``sample_weight`` scales a row's stake: the bet on the row is ``w_t``
    times the bin's bet (clipped), which keeps the martingale property for
    any non-negative weights known before the outcome; a weight of 0 makes
    the row count for nothing. A weight is *not* a count of repeated rows:
    ``k`` copies of one outcome are one piece of evidence, not ``k``
    independent ones, and betting on them ``k`` times would break the
    guarantee.

    The e-process depends on the order of the rows, so two monitors cannot
    be merged the way :class:`~skcal.CalibrationSketch` objects are (a
    sketch forgets the order). Run a sketch beside the monitor, on the same
    batches, to see *where* the miscalibration lies once the alarm goes off;
    for Dask collections, feed the partitions to :meth:`update` in their
    order (``for part in ddf.to_delayed(): monitor.update(*...)``).

    References
    ----------
    Sebastian Arnold, Alexander Henzi and Johanna F. Ziegel. *Sequentially
    valid tests for forecast calibration*. The Annals of Applied Statistics
    17(3), 2023 (arXiv:2109.11761).

    Ian Waudby-Smith and Aaditya Ramdas. *Estimating means of bounded random
    variables by betting*. Journal of the Royal Statistical Society Series
    B 86(1), 2024 (arXiv:2010.09686).

    Ashok Cutkosky and Francesco Orabona. *Black-Box Reductions for
    Parameter-free Online Learning in Banach Spaces*. COLT 2018
    (arXiv:1802.06293).

    Examples
    --------
    A model that is calibrated for 3,000 rows, then predicts 0.1 too low:

    >>> import numpy as np
    >>> from skcal import CalibrationMonitor
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(0.0, 0.9, size=8000)
    >>> truth = np.where(np.arange(8000) < 3000, p, p + 0.1)
    >>> y = (rng.uniform(size=8000) < truth).astype(int)
    >>> monitor = CalibrationMonitor(alpha=0.05)
    >>> for start in range(0, 8000, 100):
    ...     monitor = monitor.update(y[start:start + 100], p[start:start + 100])
    >>> monitor.alarm_
    True
    >>> 3000 < monitor.alarm_at_ < 8000
    True
    >>> monitor.e_value_ >= 1 / 0.05
    True
    """

    def __init__(
        self,
        alpha: float = 0.05,
        *,
        method: str = "bins",
        multiclass: str = "top-label",
        labels: ArrayLike | None = None,
        pos_label: int | float | bool | str | None = None,
    ) -> None:
        self.alpha = alpha
        self.method = method
        self.multiclass = multiclass
        self.labels = labels
        self.pos_label = pos_label

    def __repr__(self):
        return (
            f"CalibrationMonitor(alpha={self.alpha!r}, method={self.method!r}, "
            f"multiclass={self.multiclass!r})"
        )

    def _check_params(self):
        a = self.alpha
        if (
            not isinstance(a, numbers.Real)
            or isinstance(a, bool)
            or not (0.0 < a < 1.0)
        ):
            raise ValueError(f"alpha must be a number in (0, 1), got {a!r}.")
        if not isinstance(self.method, str) or self.method not in _METHODS:
            raise ValueError(
                f"method must be one of {sorted(_METHODS)}, got {self.method!r}."
            )
        if not isinstance(self.multiclass, str) or self.multiclass not in _MULTICLASS:
            raise ValueError(
                f"multiclass must be one of {list(_MULTICLASS)}, got {self.multiclass!r}."
            )

    def reset(self) -> CalibrationMonitor:
        """Forget every row seen: start a fresh test (``e_value_ = 1``).

        Returns
        -------
        self : CalibrationMonitor
            The monitor itself.
        """
        self._check_params()
        self._process = BettingEProcess(1, _METHODS[self.method], DEFAULT_RESTART)
        self._threshold = math.log(1.0 / float(self.alpha))
        self.labels_ = None if self.labels is None else np.asarray(self.labels)
        self.alarm_ = False
        self.alarm_at_: float | None = None
        self.e_value_ = 1.0
        self.n_seen_ = 0.0
        self.n_rows_ = 0
        self._history = [(0.0, 1.0)]
        return self

    @property
    def history_(self) -> NDArray[np.float64]:  # numpydoc ignore=RT01
        """``(n_seen_, e_value_)`` at the start and after every update."""
        return np.array(self._history, dtype=np.float64)

    def _rows(self, y_true, y_prob, sample_weight):
        labels = self.labels_
        if labels is None and np.ndim(y_prob) == 2 and np.shape(y_prob)[1] > 2:
            # the first multiclass batch names the columns for all later ones
            labels = resolve_labels(
                np.asarray(y_true).ravel(), None, np.shape(y_prob)[1]
            )
        y, p, w = check_binary_calibration_input(
            y_true,
            y_prob,
            sample_weight,
            pos_label=self.pos_label,
            multiclass=self.multiclass,
            labels=labels,
        )
        if labels is not None and np.ndim(y_prob) == 2 and np.shape(y_prob)[1] > 2:
            self.labels_ = np.asarray(labels)
        return y, p, (None if sample_weight is None else w)

    def update(
        self, y_true: ArrayLike, y_prob: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> CalibrationMonitor:
        """Take a batch of outcomes and the forecasts made for them, in order.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            The outcomes (labels).
        y_prob : array-like of shape (n_samples,), (n_samples, 2) or (n_samples, K)
            The forecasts, each fixed before its outcome was known:
            probabilities of the positive class, or ``predict_proba`` output.
        sample_weight : array-like of shape (n_samples,), default=None
            Each row's stake (see Notes); None for unit weights.

        Returns
        -------
        self : CalibrationMonitor
            The monitor itself.
        """
        if not hasattr(self, "_process"):
            self.reset()
        y, p, w = self._rows(y_true, y_prob, sample_weight)
        y = np.asarray(y, dtype=np.float64)
        process = self._process
        threshold = self._threshold
        seen = self.n_seen_
        for i in range(y.shape[0]):
            wi = None if w is None else w[i : i + 1]
            process.step(y[i : i + 1], p[i : i + 1], wi)
            seen += 1.0 if w is None else float(w[i])
            if not self.alarm_ and process.log_e()[0] >= threshold:
                self.alarm_ = True
                self.alarm_at_ = seen
        self.n_seen_ = seen
        self.n_rows_ += int(y.shape[0])
        self.e_value_ = float(np.exp(process.log_e()[0]))
        self._history.append((self.n_seen_, self.e_value_))
        return self

    def plot(self, ax: Axes | None = None) -> CalibrationMonitorDisplay:
        """Draw the e-process against rows seen, with the alarm line ``1/alpha``.

        Needs matplotlib; see :class:`skcal.CalibrationMonitorDisplay`.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Where to draw; a new figure when None.

        Returns
        -------
        display : CalibrationMonitorDisplay
            The display, drawn.
        """
        from .display import CalibrationMonitorDisplay

        return CalibrationMonitorDisplay.from_monitor(self, ax=ax)
