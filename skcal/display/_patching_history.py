"""The history of utility patching: UC and Brier score after each patch."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted

from .._pyplot import import_pyplot
from ._common import check_estimator_proba

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from sklearn.base import BaseEstimator

    from ..recalibration import UtilityPatchingRecalibrator

__all__ = ["PatchingHistoryDisplay"]


def _check_recalibrator(recalibrator, caller):
    """An unfitted UtilityPatchingRecalibrator: a clone of ``recalibrator``."""
    from ..recalibration import UtilityPatchingRecalibrator

    if recalibrator is None:
        return UtilityPatchingRecalibrator()
    if not isinstance(recalibrator, UtilityPatchingRecalibrator):
        raise TypeError(
            f"{caller}: recalibrator must be a UtilityPatchingRecalibrator or None, "
            f"got {type(recalibrator).__name__}."
        )
    return clone(recalibrator)


class PatchingHistoryDisplay:
    """UC and Brier score of a utility patching fit after each patch.

    The utility calibration error UC (left axis) and the Brier score (right
    axis) after each patch of a :class:`~skcal.UtilityPatchingRecalibrator`,
    on the fitted samples and, when the recalibrator held samples out
    (``validation_fraction``), on those. Build it with
    :meth:`from_predictions` or :meth:`from_estimator` (which fit a
    recalibrator), or with :meth:`from_recalibrator` from a fitted one
    (:meth:`skcal.UtilityPatchingRecalibrator.plot_history` does that).

    Parameters
    ----------
    history : dict of str to array-like
        Keys ``"uc"``, ``"brier"`` and optionally ``"validation_uc"``,
        ``"validation_brier"``: the values before the first patch and after
        each one (a fitted recalibrator's ``history_``).

    Attributes
    ----------
    lines_ : list of matplotlib Line2D
        The curves drawn.
    ax_ : matplotlib Axes
        The UC axis.
    ax_brier_ : matplotlib Axes
        The Brier axis (right-hand twin of ``ax_``).
    figure_ : matplotlib Figure
        The figure holding the axes.

    See Also
    --------
    UtilityPatchingRecalibrator : The recalibrator whose fit is drawn.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from skcal import PatchingHistoryDisplay, UtilityPatchingRecalibrator
    >>> rng = np.random.default_rng(0)
    >>> P = rng.dirichlet(np.ones(3), size=300)
    >>> y = np.array([rng.choice(3, p=np.roll(q, 1)) for q in P])
    >>> display = PatchingHistoryDisplay.from_predictions(
    ...     y, P, recalibrator=UtilityPatchingRecalibrator(max_iter=5))
    >>> display.ax_.get_xlabel()
    'patches made'
    """

    def __init__(self, history: Mapping[str, Sequence[float] | NDArray[np.float64]]) -> None:
        self.history = history

    def plot(self, ax: Axes | None = None) -> PatchingHistoryDisplay:
        """Draw the history.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes for UC; a new figure when None. The Brier axis is its twin.

        Returns
        -------
        display : PatchingHistoryDisplay
            ``self``, with the artists and axes set.
        """
        plt = import_pyplot(f"{type(self).__name__}.plot")
        history = self.history
        if ax is None:
            _, ax = plt.subplots(figsize=(6.4, 3.6))
        brier_ax = ax.twinx()
        t = np.arange(len(history["uc"]))
        lines = ax.plot(
            t, history["uc"], "o-", color="tab:blue", ms=3, label="UC, fitted samples"
        )
        lines += brier_ax.plot(
            t, history["brier"], "s-", color="tab:orange", ms=3,
            label="Brier, fitted samples",
        )
        if "validation_uc" in history:
            lines += ax.plot(
                t, history["validation_uc"], "o--", color="tab:blue", ms=3,
                alpha=0.7, label="UC, held out",
            )
            lines += brier_ax.plot(
                t, history["validation_brier"], "s--", color="tab:orange", ms=3,
                alpha=0.7, label="Brier, held out",
            )
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("patches made")
        ax.set_ylabel("utility calibration error (UC)")
        brier_ax.set_ylabel("Brier score")
        ax.legend(lines, [line.get_label() for line in lines], fontsize="small")
        ax.set_xlim(-0.2, max(1, t[-1]) + 0.2)
        self.lines_ = lines
        self.ax_ = ax
        self.ax_brier_ = brier_ax
        self.figure_ = ax.figure
        return self

    @classmethod
    def from_recalibrator(
        cls, recalibrator: UtilityPatchingRecalibrator, *, ax: Axes | None = None
    ) -> PatchingHistoryDisplay:
        """Draw the history of a fitted UtilityPatchingRecalibrator.

        Parameters
        ----------
        recalibrator : fitted UtilityPatchingRecalibrator
            Read through its ``history_``.
        ax : matplotlib Axes, default=None
            Axes for UC; a new figure when None.

        Returns
        -------
        display : PatchingHistoryDisplay
            The display, drawn.
        """
        import_pyplot(f"{cls.__name__}.from_recalibrator")
        from ..recalibration import UtilityPatchingRecalibrator

        if not isinstance(recalibrator, UtilityPatchingRecalibrator):
            raise TypeError(
                "recalibrator must be a fitted UtilityPatchingRecalibrator, got "
                f"{type(recalibrator).__name__}."
            )
        check_is_fitted(recalibrator, "history_")
        return cls(recalibrator.history_).plot(ax=ax)

    @classmethod
    def from_predictions(
        cls,
        y_true: ArrayLike,
        y_prob: ArrayLike,
        *,
        sample_weight: ArrayLike | None = None,
        recalibrator: UtilityPatchingRecalibrator | None = None,
        ax: Axes | None = None,
    ) -> PatchingHistoryDisplay:
        """Fit utility patching on predictions and draw its history.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            Observed classes, as for :meth:`UtilityPatchingRecalibrator.fit`.
        y_prob : array-like of shape (n_samples, n_classes) or (n_samples,)
            Predicted probabilities.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows; equal weights when None.
        recalibrator : UtilityPatchingRecalibrator, default=None
            The recalibrator to fit (cloned); ``UtilityPatchingRecalibrator()``
            when None.
        ax : matplotlib Axes, default=None
            Axes for UC; a new figure when None.

        Returns
        -------
        display : PatchingHistoryDisplay
            The display, drawn.
        """
        import_pyplot(f"{cls.__name__}.from_predictions")
        rec = _check_recalibrator(recalibrator, f"{cls.__name__}.from_predictions")
        rec.fit(y_prob, y_true, sample_weight=sample_weight)
        return cls.from_recalibrator(rec, ax=ax)

    @classmethod
    def from_estimator(
        cls,
        estimator: BaseEstimator,
        X: ArrayLike,
        y: ArrayLike,
        *,
        sample_weight: ArrayLike | None = None,
        recalibrator: UtilityPatchingRecalibrator | None = None,
        ax: Axes | None = None,
    ) -> PatchingHistoryDisplay:
        """Fit utility patching on a classifier's ``predict_proba`` and draw it.

        The classes of ``y`` are mapped to the columns of ``predict_proba``
        through the estimator's ``classes_``.

        Parameters
        ----------
        estimator : fitted classifier with ``predict_proba``
            The model whose predictions are patched.
        X : array-like of shape (n_samples, n_features)
            Held-out features.
        y : array-like of shape (n_samples,)
            Held-out labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows; equal weights when None.
        recalibrator : UtilityPatchingRecalibrator, default=None
            The recalibrator to fit (cloned); ``UtilityPatchingRecalibrator()``
            when None.
        ax : matplotlib Axes, default=None
            Axes for UC; a new figure when None.

        Returns
        -------
        display : PatchingHistoryDisplay
            The display, drawn.
        """
        import_pyplot(f"{cls.__name__}.from_estimator")
        rec = _check_recalibrator(recalibrator, f"{cls.__name__}.from_estimator")
        check_estimator_proba(estimator, f"{cls.__name__}.from_estimator")
        classes = np.asarray(estimator.classes_)
        y = np.asarray(y)
        column = np.searchsorted(classes, y)
        inside = column < classes.shape[0]
        if not np.all(inside) or not np.all(classes[column[inside]] == y[inside]):
            raise ValueError(
                "y has labels that are not among the estimator's classes_ "
                f"{classes.tolist()}."
            )
        rec.fit(estimator.predict_proba(X), column, sample_weight=sample_weight)
        return cls.from_recalibrator(rec, ax=ax)
