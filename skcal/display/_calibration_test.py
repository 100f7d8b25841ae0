"""The picture of a calibration test: null distribution, statistic, threshold."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import clone

from .._pyplot import import_pyplot
from ._common import check_estimator_proba

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from sklearn.base import BaseEstimator

    from ..tester import CalibrationTester, CalibrationTestResult

__all__ = ["CalibrationTestDisplay"]

_MEASURE_NAMES = {
    "smce": "smooth calibration error",
    "dce": "lower distance to calibration",
    "cutoff": "cutoff calibration error",
    "scdl": "soft-binned CDL",
    "cdl": "calibration decision loss",
    "binned_ece": "binned ECE",
}


def _check_tester(tester, caller):
    """An unfitted CalibrationTester to clone: ``tester`` or the default one."""
    from ..tester import CalibrationTester

    if tester is None:
        return CalibrationTester()
    if not isinstance(tester, CalibrationTester):
        raise TypeError(
            f"{caller}: tester must be a CalibrationTester or None, got "
            f"{type(tester).__name__}."
        )
    return clone(tester)


class CalibrationTestDisplay:
    """A calibration test drawn: null distribution, statistic, threshold, verdict.

    The histogram of the measure on data sets resampled as if the predictions
    were calibrated (when the test resampled; not for ``threshold="theory"``),
    the test's rejection threshold and the observed statistic, coloured by
    the verdict. Build it with :meth:`from_predictions` or
    :meth:`from_estimator` (which run a :class:`~skcal.CalibrationTester`),
    or with :meth:`from_tester` from a fitted tester or its result
    (:meth:`skcal.CalibrationTester.plot` does that).

    Parameters
    ----------
    result : CalibrationTestResult
        The decision.
    null_statistics : ndarray of shape (n_resamples,) or None, default=None
        The measure on each resampled data set; only the statistic and the
        threshold are drawn when None.

    Attributes
    ----------
    hist_ : matplotlib BarContainer or None
        The histogram of the null statistics.
    statistic_line_ : matplotlib Line2D
        The observed statistic.
    threshold_line_ : matplotlib Line2D
        The threshold.
    ax_ : matplotlib Axes
        The axes drawn on.
    figure_ : matplotlib Figure
        The figure holding ``ax_``.

    See Also
    --------
    CalibrationTester : The test.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from skcal import CalibrationTestDisplay, CalibrationTester
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=300)
    >>> y = rng.uniform(size=300) < p
    >>> tester = CalibrationTester(n_resamples=199, resampling_risk=None,
    ...                            random_state=0)
    >>> display = CalibrationTestDisplay.from_predictions(y, p, tester=tester)
    >>> display.ax_.get_title()
    'Calibration test: calibrated, p-value 0.15'
    """

    def __init__(
        self, result: CalibrationTestResult, null_statistics: ArrayLike | None = None
    ) -> None:
        self.result = result
        self.null_statistics = (
            None
            if null_statistics is None
            else np.asarray(null_statistics, dtype=np.float64)
        )

    def plot(self, ax: Axes | None = None) -> CalibrationTestDisplay:
        """Draw the test.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None.

        Returns
        -------
        display : CalibrationTestDisplay
            ``self``, with the artists and axes set.
        """
        plt = import_pyplot(f"{type(self).__name__}.plot")
        result = self.result
        if ax is None:
            _, ax = plt.subplots(figsize=(6.4, 3.6))
        self.hist_ = None
        if self.null_statistics is not None:
            null = self.null_statistics
            *_, self.hist_ = ax.hist(
                null,
                bins=40,
                color="0.7",
                ec="0.5",
                lw=0.4,
                label=f"{null.shape[0]} data sets resampled as if calibrated",
            )
            ax.set_ylabel("number of resampled data sets")
            ax.set_ylim(top=1.5 * ax.get_ylim()[1])  # room for the legend
        else:
            ax.set_yticks([])
        verdict = "calibrated" if result.calibrated else "not calibrated"
        color = "tab:green" if result.calibrated else "tab:red"
        self.threshold_line_ = ax.axvline(
            result.threshold,
            color="k",
            ls="--",
            label=f"threshold {result.threshold:.4f} (alpha = {result.alpha:g})",
        )
        self.statistic_line_ = ax.axvline(
            result.statistic,
            color=color,
            lw=2,
            label=f"observed {result.statistic:.4f}: {verdict}",
        )
        measure = _MEASURE_NAMES.get(result.measure, result.measure)
        ax.set_xlabel(f"{measure} (n = {result.n})")
        p = "" if result.p_value is None else f", p-value {result.p_value:.3g}"
        ax.set_title(f"Calibration test: {verdict}{p}")
        ax.legend(fontsize="small", loc="upper right")
        ax.set_xlim(left=0)
        self.ax_ = ax
        self.figure_ = ax.figure
        return self

    @classmethod
    def from_tester(
        cls,
        tester: CalibrationTester | CalibrationTestResult,
        *,
        null_statistics: ArrayLike | None = None,
        ax: Axes | None = None,
    ) -> CalibrationTestDisplay:
        """Draw a fitted tester's decision, or a result of one.

        Parameters
        ----------
        tester : fitted CalibrationTester or CalibrationTestResult
            The decision. A fitted tester also supplies its resampled null
            statistics (``null_statistics_``).
        null_statistics : array-like, default=None
            The measure on each data set resampled under calibration; taken
            from the tester when None. Without them (a result alone, or
            ``threshold="theory"``) only the statistic and threshold are drawn.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None.

        Returns
        -------
        display : CalibrationTestDisplay
            The display, drawn.
        """
        import_pyplot(f"{cls.__name__}.from_tester")
        from ..tester import CalibrationTester, CalibrationTestResult

        if isinstance(tester, CalibrationTester):
            from sklearn.utils.validation import check_is_fitted

            check_is_fitted(tester)
            result = tester.result_
            if null_statistics is None:
                null_statistics = getattr(tester, "null_statistics_", None)
        elif isinstance(tester, CalibrationTestResult):
            result = tester
        else:
            raise TypeError(
                "tester must be a fitted CalibrationTester or a "
                f"CalibrationTestResult, got {type(tester).__name__}."
            )
        return cls(result, null_statistics).plot(ax=ax)

    @classmethod
    def from_predictions(
        cls,
        y_true: ArrayLike,
        y_prob: ArrayLike,
        *,
        sample_weight: ArrayLike | None = None,
        tester: CalibrationTester | None = None,
        ax: Axes | None = None,
    ) -> CalibrationTestDisplay:
        """Test the predictions for calibration and draw the test.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            Observed labels.
        y_prob : array-like of shape (n_samples,) or (n_samples, n_classes)
            Predicted probabilities, as for :meth:`CalibrationTester.fit`.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows; equal weights when None.
        tester : CalibrationTester, default=None
            The test to run (cloned, then fitted); ``CalibrationTester()``
            when None.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None.

        Returns
        -------
        display : CalibrationTestDisplay
            The display, drawn.
        """
        import_pyplot(f"{cls.__name__}.from_predictions")
        tester = _check_tester(tester, f"{cls.__name__}.from_predictions")
        tester.fit(y_true, y_prob, sample_weight)
        return cls.from_tester(tester, ax=ax)

    @classmethod
    def from_estimator(
        cls,
        estimator: BaseEstimator,
        X: ArrayLike,
        y: ArrayLike,
        *,
        sample_weight: ArrayLike | None = None,
        tester: CalibrationTester | None = None,
        ax: Axes | None = None,
    ) -> CalibrationTestDisplay:
        """Test a fitted classifier's ``predict_proba`` on ``(X, y)`` and draw it.

        Parameters
        ----------
        estimator : fitted classifier with ``predict_proba``
            The model tested.
        X : array-like of shape (n_samples, n_features)
            Held-out features.
        y : array-like of shape (n_samples,)
            Held-out labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows; equal weights when None.
        tester : CalibrationTester, default=None
            The test to run (its parameters are used); ``CalibrationTester()``
            when None.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None.

        Returns
        -------
        display : CalibrationTestDisplay
            The display, drawn.
        """
        import_pyplot(f"{cls.__name__}.from_estimator")
        tester = _check_tester(tester, f"{cls.__name__}.from_estimator")
        check_estimator_proba(estimator, f"{cls.__name__}.from_estimator")
        fitted = type(tester).from_estimator(
            estimator, X, y, sample_weight=sample_weight, **tester.get_params()
        )
        return cls.from_tester(fitted, ax=ax)
