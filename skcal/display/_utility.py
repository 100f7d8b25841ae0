"""The eCDF of the utility calibration error over a family of utilities."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from .._pyplot import import_pyplot
from ..metrics import utility_calibration_ecdf
from ._common import check_estimator_proba, check_int, check_name, estimator_name

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from sklearn.base import BaseEstimator

    from ..utilities import UtilityFamily

__all__ = ["UtilityCalibrationDisplay"]


def _check_params(n_utilities, name):
    if n_utilities is not None:
        check_int(n_utilities, "n_utilities", low=1)
    check_name(name)


class UtilityCalibrationDisplay:
    """Empirical CDF of the utility calibration error over a family of utilities.

    Section 4 (Figure 1) of Hegazy, Jordan and Dieuleveut, *Scalable
    Utility-Aware Multiclass Calibration*: for utilities ``u_1, ..., u_M`` drawn
    from a family, the curve at ``e`` is the fraction of them whose
    calibration error ``UC(f, u_m)`` is at most ``e``. A curve further to the
    left is better calibrated across the family. Build it with
    :meth:`from_predictions` or :meth:`from_estimator`; pass the same
    ``random_state`` (and ``ax``) to compare models on the same utilities.

    Parameters
    ----------
    errors : ndarray of shape (n_utilities,)
        ``UC(f, u_m)`` of each utility.
    family_name : str, default=None
        Name of the utility family, for the axis label.
    estimator_name : str, default=None
        Name of the model, for the legend.

    Attributes
    ----------
    levels : ndarray
        The distinct errors, increasing.
    ecdf : ndarray
        Fraction of utilities with error at most each level.
    line_ : matplotlib Line2D
        The eCDF curve.
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure

    See Also
    --------
    utility_calibration_ecdf : The errors and eCDF without plotting.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from skcal import UtilityCalibrationDisplay
    >>> rng = np.random.default_rng(0)
    >>> y_prob = rng.dirichlet(np.ones(3), size=100)
    >>> y_true = [rng.choice(3, p=p) for p in y_prob]
    >>> display = UtilityCalibrationDisplay.from_predictions(
    ...     y_true, y_prob, "rank", n_utilities=20, random_state=0, name="model")
    >>> display.errors.shape
    (20,)
    >>> display.ax_.get_xlabel()
    'utility calibration error UC(f, u), u ~ rank'
    """

    def __init__(
        self,
        errors: ArrayLike,
        *,
        family_name: str | None = None,
        estimator_name: str | None = None,
    ) -> None:
        self.errors = np.asarray(errors, dtype=np.float64)
        self.family_name = family_name
        self.estimator_name = estimator_name
        self.levels, counts = np.unique(self.errors, return_counts=True)
        self.ecdf = np.cumsum(counts) / self.errors.shape[0]

    def plot(
        self, ax: Axes | None = None, *, name: str | None = None, **kwargs: Any
    ) -> UtilityCalibrationDisplay:
        """Draw the eCDF as a step curve starting at ``(0, 0)``.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None.
        name : str, default=None
            Legend entry; ``estimator_name`` when None.
        **kwargs : dict
            Passed to ``matplotlib.axes.Axes.step``.

        Returns
        -------
        display : UtilityCalibrationDisplay
            ``self``, with ``line_``, ``ax_`` and ``figure_`` set.
        """
        plt = import_pyplot("UtilityCalibrationDisplay.plot")
        if ax is None:
            _, ax = plt.subplots()
        name = self.estimator_name if name is None else name
        if name is not None:
            kwargs.setdefault("label", name)
        # F(e) = 0 below the smallest error; the curve jumps at each level
        x = np.concatenate([[0.0], self.levels])
        y = np.concatenate([[0.0], self.ecdf])
        (self.line_,) = ax.step(x, y, where="post", **kwargs)
        family = f", u ~ {self.family_name}" if self.family_name else ""
        ax.set_xlabel(f"utility calibration error UC(f, u){family}")
        ax.set_ylabel("fraction of utilities with UC(f, u) ≤ x")
        ax.set_ylim(0.0, 1.02)
        ax.set_xlim(left=0.0)
        if name is not None:
            ax.legend(loc="lower right")
        self.ax_ = ax
        self.figure_ = ax.figure
        return self

    @classmethod
    def from_predictions(
        cls,
        y_true: ArrayLike,
        y_prob: ArrayLike,
        family: str | UtilityFamily = "linear",
        *,
        n_utilities: int | None = None,
        random_state: int | np.random.RandomState | None = None,
        sample_weight: ArrayLike | None = None,
        labels: ArrayLike | None = None,
        name: str | None = None,
        ax: Axes | None = None,
        **kwargs: Any,
    ) -> UtilityCalibrationDisplay:
        """Compute the eCDF of ``UC(f, u)`` from predictions and plot it.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            Observed labels.
        y_prob : array-like of shape (n_samples, n_classes) or (n_samples,)
            Predicted probabilities.
        family : {"linear", "rank"}, sampled or finite family, default="linear"
            See :func:`skcal.utility_calibration_ecdf`.
        n_utilities : int, default=None
            Utilities drawn from a continuous family (1500 when None).
        random_state : int, RandomState instance or None, default=None
            Seeds the draws of utilities from a continuous family.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows; equal weights when None.
        labels : array-like of shape (n_classes,), default=None
            The class of each column of ``y_prob``.
        name : str, default=None
            Legend entry.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None.
        **kwargs : dict
            Passed to ``matplotlib.axes.Axes.step``.

        Returns
        -------
        display : UtilityCalibrationDisplay
            The display, drawn.
        """
        import_pyplot(f"{cls.__name__}.from_predictions")
        _check_params(n_utilities, name)
        errors, _, _ = utility_calibration_ecdf(
            y_true,
            y_prob,
            family,
            n_utilities=n_utilities,
            random_state=random_state,
            sample_weight=sample_weight,
            labels=labels,
        )
        family_name = family if isinstance(family, str) else type(family).__name__
        display = cls(errors, family_name=family_name, estimator_name=name)
        return display.plot(ax=ax, **kwargs)

    @classmethod
    def from_estimator(
        cls,
        estimator: BaseEstimator,
        X: ArrayLike,
        y: ArrayLike,
        family: str | UtilityFamily = "linear",
        *,
        n_utilities: int | None = None,
        random_state: int | np.random.RandomState | None = None,
        sample_weight: ArrayLike | None = None,
        name: str | None = None,
        ax: Axes | None = None,
        **kwargs: Any,
    ) -> UtilityCalibrationDisplay:
        """Compute the eCDF of ``UC(f, u)`` for a fitted classifier and plot it.

        Uses ``estimator.predict_proba(X)``, with the columns labelled by
        ``estimator.classes_``.

        Parameters
        ----------
        estimator : fitted classifier with ``predict_proba``
            The model whose predictions are measured.
        X : array-like of shape (n_samples, n_features)
            Input samples, in any form the base estimator accepts.
        y : array-like of shape (n_samples,)
            Observed labels.
        family : {"linear", "rank"}, sampled or finite family, default="linear"
            The utilities, as for :meth:`from_predictions`.
        n_utilities : int, default=None
            Utilities drawn from a continuous family (1500 when None).
        random_state : int, RandomState instance or None, default=None
            Seeds the draws of utilities from a continuous family.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows; equal weights when None.
        name : str, default=None
            Legend entry; the estimator's class name when None.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None.
        **kwargs : dict
            Passed to ``matplotlib.axes.Axes.step``.

        Returns
        -------
        display : UtilityCalibrationDisplay
            The display, drawn.
        """
        import_pyplot(f"{cls.__name__}.from_estimator")
        _check_params(n_utilities, name)
        check_estimator_proba(estimator, f"{cls.__name__}.from_estimator")
        return cls.from_predictions(
            y,
            estimator.predict_proba(X),
            family,
            n_utilities=n_utilities,
            random_state=random_state,
            sample_weight=sample_weight,
            labels=estimator.classes_,
            name=estimator_name(estimator, name),
            ax=ax,
            **kwargs,
        )
