"""Class-wise reliability diagrams of multiclass predictions, on a grid."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._input import BinaryInput, multiclass_input
from .._pyplot import import_pyplot
from ._common import check_estimator_proba, check_name, estimator_name
from ._reliability import OVERLAYS, ReliabilityDisplay

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from sklearn.base import BaseEstimator

__all__ = ["ClassWiseReliabilityDisplay"]


class ClassWiseReliabilityDisplay:
    """One-vs-rest reliability diagrams of every class, laid out on a grid.

    For each class ``k``, the :class:`ReliabilityDisplay` of ``P[:, k]``
    against ``1{y = k}``, with its band and overlays, in its own panel. With
    no ``ax``, the panels fill a near-square grid (``ceil(sqrt(n_classes))``
    columns; 3 x 3 for 7 to 9 classes), not one long row. The top-label view
    of the same predictions is :meth:`ReliabilityDisplay.from_predictions` on
    the whole matrix. Build it with :meth:`from_predictions` or
    :meth:`from_estimator`.

    Parameters
    ----------
    displays : list of ReliabilityDisplay
        One per class, in the order of the columns.
    classes : ndarray of shape (n_classes,)
        The class of each column (the panel titles).

    Attributes
    ----------
    axes_ : ndarray of matplotlib Axes of shape (n_rows, n_cols)
        The reliability diagram of each class (row-major); unused cells of
        the grid are switched off.
    figure_ : matplotlib Figure
        The figure holding the panels.

    See Also
    --------
    ReliabilityDisplay : The diagram of one class, or of top-label confidence.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skcal import ClassWiseReliabilityDisplay
    >>> X, y = load_iris(return_X_y=True)
    >>> model = LogisticRegression(max_iter=500).fit(X, y)
    >>> display = ClassWiseReliabilityDisplay.from_estimator(
    ...     model, X, y, n_resamples=100, random_state=0)
    >>> [d.ax_.get_title() for d in display.displays]
    ['class 0', 'class 1', 'class 2']
    >>> display.axes_.shape
    (2, 2)
    """

    def __init__(
        self, displays: Sequence[ReliabilityDisplay], classes: NDArray[Any]
    ) -> None:
        self.displays = displays
        self.classes = classes

    def plot(
        self,
        ax: Axes | ArrayLike | None = None,
        *,
        overlays: str | Iterable[str] = OVERLAYS,
        **kwargs: Any,
    ) -> ClassWiseReliabilityDisplay:
        """Draw one diagram per class.

        Parameters
        ----------
        ax : array-like of matplotlib Axes, default=None
            One Axes per class (any shape; read row-major). When None, a new
            figure with a near-square grid of panels.
        overlays : iterable of str, default=("band", "cutoff", "scdl", "smce")
            Which overlays to draw in every panel.
        **kwargs : dict
            Passed to :meth:`ReliabilityDisplay.plot`.

        Returns
        -------
        display : ClassWiseReliabilityDisplay
            ``self``, with ``axes_`` and ``figure_`` set.
        """
        plt = import_pyplot(f"{type(self).__name__}.plot")
        n_classes = len(self.displays)
        if ax is None:
            n_cols = int(np.ceil(np.sqrt(n_classes)))
            n_rows = int(np.ceil(n_classes / n_cols))
            _, axes = plt.subplots(
                n_rows,
                n_cols,
                figsize=(5.8 * n_cols, 7.2 * n_rows),
                gridspec_kw={"wspace": 0.45, "hspace": 0.3},
                squeeze=False,
            )
            for unused in axes.ravel()[n_classes:]:
                unused.set_axis_off()
        else:
            axes = np.asarray(ax, dtype=object)
            if axes.ndim == 0:
                axes = axes.reshape(1, 1)
            if axes.size < n_classes:
                raise ValueError(
                    f"ax has {axes.size} Axes but there are {n_classes} classes; "
                    "pass one Axes per class."
                )
        for display, cls, panel in zip(self.displays, self.classes, axes.ravel()):
            display.plot(ax=panel, overlays=overlays, **kwargs)
            panel.set_title(f"class {cls}")
        self.axes_ = axes
        self.figure_ = axes.ravel()[0].figure
        return self

    @classmethod
    def from_predictions(
        cls,
        y_true: ArrayLike,
        y_prob: ArrayLike,
        *,
        labels: ArrayLike | None = None,
        sample_weight: ArrayLike | None = None,
        n_bins: int = 10,
        n_resamples: int = 1000,
        band_level: float = 0.95,
        random_state: int | np.random.RandomState | None = None,
        ax: Axes | ArrayLike | None = None,
        overlays: str | Iterable[str] = OVERLAYS,
        **kwargs: Any,
    ) -> ClassWiseReliabilityDisplay:
        """Compute every class's diagram from multiclass predictions and plot them.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            Observed class labels.
        y_prob : array-like of shape (n_samples, n_classes)
            ``predict_proba`` output, two columns or more.
        labels : array-like of shape (n_classes,), default=None
            The class of each column; the sorted distinct labels when None
            (then every class must occur in ``y_true``).
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows; equal weights when None.
        n_bins : int, default=10
            Number of equal-weight bins of each curve.
        n_resamples : int, default=1000
            Draws of the calibrated null for the bands; 0 for no band.
        band_level : float, default=0.95
            Central probability each band covers at each bin, in (0, 1).
        random_state : int, RandomState instance or None, default=None
            Seeds the bands' resampling (the same seed for every class).
        ax : array-like of matplotlib Axes, default=None
            One Axes per class; a new grid when None.
        overlays : iterable of str, default=("band", "cutoff", "scdl", "smce")
            Which overlays to draw.
        **kwargs : dict
            Passed to :meth:`ReliabilityDisplay.plot`.

        Returns
        -------
        display : ClassWiseReliabilityDisplay
            The display, drawn.
        """
        import_pyplot(f"{cls.__name__}.from_predictions")
        ReliabilityDisplay._check_params(n_bins, n_resamples, band_level, overlays, None)
        display = cls._compute(
            y_true,
            y_prob,
            labels=labels,
            sample_weight=sample_weight,
            n_bins=n_bins,
            n_resamples=n_resamples,
            band_level=band_level,
            random_state=random_state,
        )
        return display.plot(ax=ax, overlays=overlays, **kwargs)

    @classmethod
    def _compute(
        cls, y_true, y_prob, *, labels, sample_weight, n_bins, n_resamples,
        band_level, random_state,
    ):
        """The display of checked parameters, not drawn yet."""
        if np.ndim(y_prob) != 2 or np.shape(y_prob)[1] < 2:
            raise ValueError(
                f"y_prob must have shape (n_samples, n_classes), got {np.shape(y_prob)}."
            )
        # the boundary, once: each class's rows are cut from the canonical
        # form (one column of the checked matrix against 1{y = class})
        data = multiclass_input(y_true, y_prob, sample_weight, labels=labels)
        classes = data.classes
        displays = []
        for k in range(data.n_classes):
            p = np.ascontiguousarray(data.P[:, k])
            p.flags.writeable = False
            displays.append(ReliabilityDisplay._compute(
                BinaryInput((data.y == k).astype(np.uint8), p, data.w),
                None,
                sample_weight=None,
                pos_label=None,
                labels=None,
                n_bins=n_bins,
                n_resamples=n_resamples,
                band_level=band_level,
                random_state=random_state,
                name=None,
            ))
        return cls(displays, classes)

    @classmethod
    def from_estimator(
        cls,
        estimator: BaseEstimator,
        X: ArrayLike,
        y: ArrayLike,
        *,
        sample_weight: ArrayLike | None = None,
        n_bins: int = 10,
        n_resamples: int = 1000,
        band_level: float = 0.95,
        random_state: int | np.random.RandomState | None = None,
        name: str | None = None,
        ax: Axes | ArrayLike | None = None,
        overlays: str | Iterable[str] = OVERLAYS,
        **kwargs: Any,
    ) -> ClassWiseReliabilityDisplay:
        """Plot every class's diagram of a fitted classifier on ``(X, y)``.

        The parameters are checked, as by :meth:`from_predictions`, before
        ``predict_proba`` is called; the columns are labelled by the
        estimator's ``classes_``.

        Parameters
        ----------
        estimator : fitted classifier with ``predict_proba``
            The model whose predictions are drawn.
        X : array-like of shape (n_samples, n_features)
            Input of ``predict_proba``.
        y : array-like of shape (n_samples,)
            Observed class labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows; equal weights when None.
        n_bins : int, default=10
            Number of equal-weight bins of each curve.
        n_resamples : int, default=1000
            Draws of the calibrated null for the bands; 0 for no band.
        band_level : float, default=0.95
            Central probability each band covers at each bin, in (0, 1).
        random_state : int, RandomState instance or None, default=None
            Seeds the bands' resampling.
        name : str, default=None
            Legend entry of every panel; the estimator's class name when None.
        ax : array-like of matplotlib Axes, default=None
            One Axes per class; a new grid when None.
        overlays : iterable of str, default=("band", "cutoff", "scdl", "smce")
            Which overlays to draw.
        **kwargs : dict
            Passed to :meth:`ReliabilityDisplay.plot`.

        Returns
        -------
        display : ClassWiseReliabilityDisplay
            The display, drawn.
        """
        import_pyplot(f"{cls.__name__}.from_estimator")
        ReliabilityDisplay._check_params(n_bins, n_resamples, band_level, overlays, name)
        check_estimator_proba(estimator, f"{cls.__name__}.from_estimator")
        display = cls._compute(
            y,
            estimator.predict_proba(X),
            labels=estimator.classes_,
            sample_weight=sample_weight,
            n_bins=n_bins,
            n_resamples=n_resamples,
            band_level=band_level,
            random_state=random_state,
        )
        for d in display.displays:
            d.estimator_name = estimator_name(estimator, check_name(name))
        return display.plot(ax=ax, overlays=overlays, **kwargs)
