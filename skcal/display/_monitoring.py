"""The e-process of a calibration monitor against the rows seen."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from .._pyplot import import_pyplot
from ._common import check_estimator_proba

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from sklearn.base import BaseEstimator

    from ..monitor import CalibrationMonitor

__all__ = ["CalibrationMonitorDisplay"]


def _new_monitor(monitor, caller):
    """A fresh CalibrationMonitor with ``monitor``'s parameters."""
    from ..monitor import CalibrationMonitor

    if monitor is None:
        return CalibrationMonitor()
    if not isinstance(monitor, CalibrationMonitor):
        raise TypeError(
            f"{caller}: monitor must be a CalibrationMonitor or None, got "
            f"{type(monitor).__name__}."
        )
    return CalibrationMonitor(
        monitor.alpha,
        method=monitor.method,
        multiclass=monitor.multiclass,
        labels=monitor.labels,
        pos_label=monitor.pos_label,
    )


class CalibrationMonitorDisplay:
    """The e-value of a :class:`~skcal.CalibrationMonitor` against rows seen.

    A step curve of the test martingale on a log scale, the alarm line
    ``1/alpha`` and, once raised, the alarm. Build it with
    :meth:`from_predictions` or :meth:`from_estimator` (which feed the rows
    in order to a fresh monitor), or with :meth:`from_monitor` from one that
    has seen data (:meth:`skcal.CalibrationMonitor.plot` does that).

    Parameters
    ----------
    history : ndarray of shape (n_updates + 1, 2)
        ``(rows or weight seen, e-value)`` at the start and after each update.
    alpha : float
        The monitor's false-alarm level.
    alarm_at : float or None, default=None
        Rows (or weight) seen when the alarm went off; None without alarm.
    weighted : bool, default=False
        Whether the x axis counts weight rather than rows.

    Attributes
    ----------
    line_ : matplotlib Line2D
        The e-value curve.
    ax_ : matplotlib Axes
        The axes drawn on.
    figure_ : matplotlib Figure
        The figure holding ``ax_``.

    See Also
    --------
    CalibrationMonitor : The monitor.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from skcal import CalibrationMonitorDisplay
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = rng.uniform(size=2000) < p ** 2
    >>> display = CalibrationMonitorDisplay.from_predictions(y, p)
    >>> display.ax_.get_ylabel()
    'e-value (test martingale)'
    """

    def __init__(
        self,
        history: ArrayLike,
        alpha: float,
        *,
        alarm_at: float | None = None,
        weighted: bool = False,
    ) -> None:
        self.history = np.asarray(history, dtype=np.float64)
        self.alpha = alpha
        self.alarm_at = alarm_at
        self.weighted = weighted

    def plot(self, ax: Axes | None = None) -> CalibrationMonitorDisplay:
        """Draw the e-process.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None.

        Returns
        -------
        display : CalibrationMonitorDisplay
            ``self``, with ``line_``, ``ax_`` and ``figure_`` set.
        """
        plt = import_pyplot(f"{type(self).__name__}.plot")
        if ax is None:
            _, ax = plt.subplots()
        h = self.history
        (self.line_,) = ax.step(h[:, 0], h[:, 1], where="post", label="e-value")
        ax.axhline(1.0 / self.alpha, color="C3", linestyle="--",
                   label=f"alarm line 1/alpha = {1.0 / self.alpha:g}")
        if self.alarm_at is not None:
            ax.axvline(self.alarm_at, color="C3", alpha=0.4, label="alarm")
        ax.set_yscale("log")
        ax.set_xlabel("weight seen" if self.weighted else "rows seen")
        ax.set_ylabel("e-value (test martingale)")
        ax.legend()
        self.ax_ = ax
        self.figure_ = ax.figure
        return self

    @classmethod
    def from_monitor(
        cls, monitor: CalibrationMonitor, *, ax: Axes | None = None
    ) -> CalibrationMonitorDisplay:
        """Draw a monitor that has seen data.

        Parameters
        ----------
        monitor : CalibrationMonitor
            Updated at least once.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None.

        Returns
        -------
        display : CalibrationMonitorDisplay
            The display, drawn.
        """
        import_pyplot(f"{cls.__name__}.from_monitor")
        from ..monitor import CalibrationMonitor

        if not isinstance(monitor, CalibrationMonitor):
            raise TypeError(
                f"monitor must be a CalibrationMonitor, got {type(monitor).__name__}."
            )
        if not hasattr(monitor, "n_seen_"):
            raise ValueError(
                "This CalibrationMonitor has seen no data yet; call update() first."
            )
        return cls(
            monitor.history_,
            monitor.alpha,
            alarm_at=monitor.alarm_at_,
            weighted=monitor.n_seen_ != monitor.n_rows_,
        ).plot(ax=ax)

    @classmethod
    def from_predictions(
        cls,
        y_true: ArrayLike,
        y_prob: ArrayLike,
        *,
        sample_weight: ArrayLike | None = None,
        monitor: CalibrationMonitor | None = None,
        ax: Axes | None = None,
    ) -> CalibrationMonitorDisplay:
        """Feed the rows, in order, to a fresh monitor and draw its e-process.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            Observed outcomes, in the order they arrived.
        y_prob : array-like of shape (n_samples,) or (n_samples, n_classes)
            The forecasts made for them.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows; equal weights when None.
        monitor : CalibrationMonitor, default=None
            Its parameters are used for the fresh monitor;
            ``CalibrationMonitor()`` when None.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None.

        Returns
        -------
        display : CalibrationMonitorDisplay
            The display, drawn.
        """
        import_pyplot(f"{cls.__name__}.from_predictions")
        fresh = _new_monitor(monitor, f"{cls.__name__}.from_predictions")
        fresh._check_params()
        fresh.update(y_true, y_prob, sample_weight)
        return cls.from_monitor(fresh, ax=ax)

    @classmethod
    def from_estimator(
        cls,
        estimator: BaseEstimator,
        X: ArrayLike,
        y: ArrayLike,
        *,
        sample_weight: ArrayLike | None = None,
        monitor: CalibrationMonitor | None = None,
        ax: Axes | None = None,
    ) -> CalibrationMonitorDisplay:
        """Monitor a fitted classifier's ``predict_proba`` on rows in order.

        Parameters
        ----------
        estimator : fitted classifier with ``predict_proba``
            The model monitored.
        X : array-like of shape (n_samples, n_features)
            Features, in the order the rows arrived.
        y : array-like of shape (n_samples,)
            Their outcomes.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows; equal weights when None.
        monitor : CalibrationMonitor, default=None
            Its parameters are used (its ``labels`` replaced by the
            estimator's ``classes_``); ``CalibrationMonitor()`` when None.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None.

        Returns
        -------
        display : CalibrationMonitorDisplay
            The display, drawn.
        """
        import_pyplot(f"{cls.__name__}.from_estimator")
        fresh = _new_monitor(monitor, f"{cls.__name__}.from_estimator")
        fresh._check_params()
        check_estimator_proba(estimator, f"{cls.__name__}.from_estimator")
        fresh.labels = estimator.classes_
        fresh.update(y, estimator.predict_proba(X), sample_weight)
        return cls.from_monitor(fresh, ax=ax)
