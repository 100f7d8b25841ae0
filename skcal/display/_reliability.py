"""The reliability diagram, with a calibrated-null band and the measures drawn in."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._input import binary_input
from .._pyplot import import_pyplot
from ..metrics import (
    binned_ece,
    cutoff_calibration_error,
    smooth_calibration_error,
    soft_binned_cdl,
)
from ._band import null_bin_frequencies, soft_bins
from ._common import check_estimator_proba, check_int, check_name, estimator_name

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from sklearn.base import BaseEstimator

__all__ = ["ReliabilityDisplay"]

OVERLAYS = ("band", "cutoff", "scdl", "smce")


class ReliabilityDisplay:
    """Reliability diagram with a calibrated-null band and the measures drawn in.

    The curve is the **binned** reliability curve on equal-weight (quantile)
    bins of the predictions: the weighted mean prediction of each bin against
    the weighted frequency of the positive outcome in it, the bins of
    :func:`skcal.binned_ece` with ``strategy="quantile"``. Binned rather than
    smoothed, because each point is then an exact conditional mean, with no
    smoothing bias, and the consistency band below is exact for those very
    points; equal-weight bins give every point the same precision. The smooth
    view is the smCE witness, drawn in the lower panel. The legend's
    ``ECE(q10)`` is the binned ECE on these same bins (``n_bins`` of them),
    which differs from :func:`skcal.binned_ece`'s default of 15 uniform bins.

    What is drawn, all from the same weighted data ``(y_i, p_i, w_i)``:

    * the binned curve, markers joined by a line, and the diagonal;
    * the **consistency band**: draw outcomes ``y*_i ~ Bernoulli(p_i)``
      independently (the law of the outcomes given the predictions if these
      were perfectly calibrated; the resampling null of
      :class:`skcal.CalibrationTester`), ``n_resamples`` times; for each bin,
      the band spans the central ``band_level`` of the resampled bin
      frequencies. It is pointwise: a calibrated model shows each point
      inside its band with probability about ``band_level`` (more precisely
      at least, with the discreteness of the frequencies);
    * the **worst interval** of :func:`skcal.cutoff_calibration_error`,
      shaded: the interval of predictions over which the bias
      ``|E[(y - p) 1{a <= p <= b}]|`` is largest;
    * the **SCDL soft bins** at the grid ``m*`` chosen by
      :func:`skcal.soft_binned_cdl`: frequency ``q_j`` at grid point ``j/m*``,
      marker area proportional to the bin's mass ``pi_j``; only grid points
      holding at least 5 effective predictions (``pi_j N >= 5``, ``N`` Kish's
      effective sample size) are drawn, the others being mostly noise;
    * in the lower panel, the weighted histogram of the predictions (left
      axis: number of predictions, or total weight with ``sample_weight``)
      and the optimal test function ("witness") of
      :func:`skcal.smooth_calibration_error` (right axis, in [-1, 1]):
      positive where outcomes exceed predictions;
    * the values of the measures in the legend entry of the curve.

    Multiclass ``predict_proba`` output is shown for top-label calibration
    (confidence ``max_k p_k`` against ``1{argmax_k p_k = y}``), as the
    measures do. Build it with :meth:`from_predictions` or
    :meth:`from_estimator`; pass the same ``ax`` to draw several models on one
    diagram, or different axes to draw them side by side.

    Parameters
    ----------
    prob_true : ndarray of shape (n_nonempty_bins,)
        Weighted frequency of the positive outcome in each bin.
    prob_pred : ndarray of shape (n_nonempty_bins,)
        Weighted mean prediction in each bin.
    band : ndarray of shape (2, n_nonempty_bins) or None
        Lower and upper ends of the consistency band at each bin.
    y_prob : ndarray of shape (n_samples,)
        The (positive-class or top-label) predictions, for the histogram.
    sample_weight : ndarray of shape (n_samples,)
        Their weights.
    measures : dict
        ``{"smce", "cutoff", "scdl", "binned_ece"}`` to their values.
    details : dict
        ``"cutoff"``: ``(a, b, sign)``; ``"scdl"``: ``(m, centers, pi, q)``;
        ``"smce"``: ``(points, witness)``.
    estimator_name : str, default=None
        Name of the model, for the legend.
    band_level : float, default=0.95
        Central probability the band covers at each bin, for its legend entry.
    top_label : bool, default=False
        Whether the predictions are top-label confidences (axis labels).
    weighted : bool, default=False
        Whether the rows have unequal weights (the histogram's axis label).

    Attributes
    ----------
    line_ : matplotlib Line2D
        The reliability curve.
    band_ : matplotlib PolyCollection or None
        The consistency band.
    cutoff_span_ : matplotlib Polygon or None
        The shaded worst interval.
    scdl_points_ : matplotlib PathCollection or None
        The SCDL soft bins.
    witness_line_ : matplotlib Line2D or None
        The smCE witness.
    hist_ : matplotlib BarContainer
        The histogram of predictions.
    ax_ : matplotlib Axes
        The reliability diagram.
    ax_hist_ : matplotlib Axes
        The histogram panel below it (count axis).
    ax_witness_ : matplotlib Axes
        The witness axis (right-hand twin of ``ax_hist_``).
    figure_ : matplotlib Figure

    See Also
    --------
    sklearn.calibration.CalibrationDisplay : The plain binned curve.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from skcal import ReliabilityDisplay
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = rng.uniform(size=500) < p ** 1.5
    >>> display = ReliabilityDisplay.from_predictions(
    ...     y, p, n_bins=5, name="model", random_state=0)
    >>> display.prob_pred.shape
    (5,)
    >>> display.ax_.get_ylabel()
    'observed frequency of the positive class'
    >>> display.ax_hist_.get_ylabel()
    'number of predictions'
    """

    def __init__(
        self,
        prob_true: NDArray[np.float64],
        prob_pred: NDArray[np.float64],
        band: NDArray[np.float64] | None,
        y_prob: NDArray[np.float64],
        sample_weight: NDArray[np.float64],
        measures: Mapping[str, float],
        details: Mapping[str, Any],
        *,
        estimator_name: str | None = None,
        band_level: float = 0.95,
        top_label: bool = False,
        weighted: bool = False,
    ) -> None:
        self.prob_true = prob_true
        self.prob_pred = prob_pred
        self.band = band
        self.y_prob = y_prob
        self.sample_weight = sample_weight
        self.measures = measures
        self.details = details
        self.estimator_name = estimator_name
        self.band_level = band_level
        self.top_label = top_label
        self.weighted = weighted
        w = np.asarray(sample_weight, dtype=np.float64)
        self.n_effective = w.sum() ** 2 / (w**2).sum()

    def plot(
        self,
        ax: Axes | None = None,
        *,
        name: str | None = None,
        overlays: str | Iterable[str] = OVERLAYS,
        hist_ax: Axes | None = None,
        **kwargs: Any,
    ) -> ReliabilityDisplay:
        """Draw the diagram.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes for the reliability diagram. When None, a new figure with
            the diagram above a histogram panel. When given, the histogram
            panel is split off the bottom of ``ax`` (once: a second display
            drawn on the same ``ax`` reuses it).
        name : str, default=None
            Legend entry; ``estimator_name`` when None.
        overlays : iterable of str, default=("band", "cutoff", "scdl", "smce")
            Which overlays to draw.
        hist_ax : matplotlib Axes, default=None
            Axes for the histogram and witness, instead of the split-off panel.
        **kwargs : dict
            Passed to ``matplotlib.axes.Axes.plot`` for the curve.

        Returns
        -------
        display : ReliabilityDisplay
            ``self``, with the artists and axes set.
        """
        plt = import_pyplot("ReliabilityDisplay.plot")
        overlays = check_overlays(overlays)
        if ax is None:
            fig, (ax, hist_ax) = plt.subplots(
                2,
                1,
                sharex=True,
                figsize=(6.4, 6.4),
                gridspec_kw={"height_ratios": [3, 1], "hspace": 0.08},
            )
        if hist_ax is None:
            hist_ax = _panels(ax)
        name = self.estimator_name if name is None else name
        m = self.measures
        # ECE(q10): binned ECE on the diagram's own 10 equal-mass (quantile)
        # bins, not binned_ece's default of 15 uniform bins
        n_bins = self.details.get("n_bins")
        ece_name = "ECE" if n_bins is None else f"ECE(q{n_bins})"
        values = (
            f"smCE {m['smce']:.3f}, cutoff {m['cutoff']:.3f}, "
            f"SCDL {m['scdl']:.3f}, {ece_name} {m['binned_ece']:.3f}"
        )
        kwargs.setdefault("label", f"{name}: {values}" if name else values)
        kwargs.setdefault("marker", "o")
        kwargs.setdefault("markersize", 4)
        (self.line_,) = ax.plot(self.prob_pred, self.prob_true, **kwargs)
        color = self.line_.get_color()
        if not getattr(ax, "_skcal_diagonal", False):
            ax.plot(
                [0, 1], [0, 1], ls="--", color="0.5", lw=1, label="perfectly calibrated"
            )
            ax._skcal_diagonal = True

        self.band_ = None
        if "band" in overlays and self.band is not None:
            self.band_ = ax.fill_between(
                self.prob_pred,
                self.band[0],
                self.band[1],
                color=color,
                alpha=0.18,
                lw=0,
                label=f"{self.band_level:.0%} band if calibrated",
            )
        self.cutoff_span_ = None
        if "cutoff" in overlays:
            a, b, sign = self.details["cutoff"]
            if sign != 0:
                # a strip along the bottom and two edges: a full-height shading
                # would hide the curve when the interval is most of [0, 1]
                pad = max(0.0, 0.004 - (b - a) / 2)
                self.cutoff_span_ = ax.axvspan(
                    a - pad,
                    b + pad,
                    ymin=0.0,
                    ymax=0.035,
                    color=color,
                    alpha=0.5,
                    lw=0,
                    label=f"worst interval [{a:.2f}, {b:.2f}] "
                    f"({'over' if sign < 0 else 'under'}-confident)",
                )
                for edge in (a - pad, b + pad):
                    ax.axvline(edge, color=color, lw=0.6, ls=":", alpha=0.8)
        self.scdl_points_ = None
        if "scdl" in overlays:
            mstar, centers, pi, q = self.details["scdl"]
            if centers is not None:
                # grid points holding at least 5 (effective) predictions:
                # the rest are too noisy to read
                keep = pi * self.n_effective >= 5
                self.scdl_points_ = ax.scatter(
                    centers[keep],
                    q[keep],
                    s=20 + 400 * pi[keep],
                    marker="s",
                    facecolors="none",
                    edgecolors=color,
                    lw=1,
                    label=f"SCDL soft bins (m = {mstar})",
                    zorder=3,
                )
        what = "top-label confidence" if self.top_label else "predicted probability"
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.02)
        ax.set_ylabel(
            "observed accuracy"
            if self.top_label
            else "observed frequency of the positive class"
        )
        ax.tick_params(labelbottom=False)

        counts, edges = np.histogram(
            self.y_prob, bins=20, range=(0, 1), weights=self.sample_weight
        )
        self.hist_ = hist_ax.bar(
            edges[:-1],
            counts,
            width=np.diff(edges),
            align="edge",
            color=color,
            alpha=0.35,
            ec=color,
            lw=0.5,
        )
        hist_ax.set_ylabel("total weight" if self.weighted else "number of predictions")
        hist_ax.set_xlabel(what)
        hist_ax.set_xlim(-0.02, 1.02)
        self.witness_line_ = None
        witness_ax = getattr(hist_ax, "_skcal_witness_ax", None)
        if "smce" in overlays:
            if witness_ax is None:
                witness_ax = hist_ax.twinx()
                hist_ax._skcal_witness_ax = witness_ax
                witness_ax.axhline(0, color="0.6", lw=0.6)
                witness_ax.set_ylim(-1.05, 1.05)
                witness_ax.set_ylabel("smCE witness")
            points, witness = self.details["smce"]
            (self.witness_line_,) = witness_ax.plot(
                points,
                witness,
                color=color,
                lw=1.2,
                label="smCE witness (+: outcomes above predictions)",
            )
        # one legend on the diagram, the witness lines of every model included
        handles, labels = ax.get_legend_handles_labels()
        if witness_ax is not None:
            more = witness_ax.get_legend_handles_labels()
            handles, labels = handles + more[0], labels + more[1]
        legend = ax.legend(
            handles, labels, loc="upper left", fontsize="x-small", framealpha=0.85
        )
        for handle in legend.legend_handles:
            if hasattr(handle, "set_sizes"):  # same marker size for all soft bins
                handle.set_sizes([30])
        self.ax_ = ax
        self.ax_hist_ = hist_ax
        self.ax_witness_ = witness_ax
        self.figure_ = ax.figure
        return self

    @staticmethod
    def _check_params(n_bins, n_resamples, band_level, overlays, name):
        """The plotting parameters, checked before any data is read."""
        check_int(n_bins, "n_bins", low=1)
        check_int(n_resamples, "n_resamples", low=0)
        if isinstance(band_level, bool) or not isinstance(band_level, (int, float)) or not (
            0 < band_level < 1
        ):
            raise ValueError(f"band_level must be in (0, 1), got {band_level!r}.")
        check_overlays(overlays)
        check_name(name)

    @classmethod
    def from_predictions(
        cls,
        y_true: ArrayLike,
        y_prob: ArrayLike,
        *,
        sample_weight: ArrayLike | None = None,
        pos_label: int | float | bool | str | None = None,
        labels: ArrayLike | None = None,
        n_bins: int = 10,
        n_resamples: int = 1000,
        band_level: float = 0.95,
        random_state: int | np.random.RandomState | None = None,
        name: str | None = None,
        ax: Axes | None = None,
        overlays: str | Iterable[str] = OVERLAYS,
        **kwargs: Any,
    ) -> ReliabilityDisplay:
        """Compute the curve, band and measures from predictions, and plot them.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            Observed labels (binary), or class labels for multiclass ``y_prob``.
        y_prob : array-like of shape (n_samples,) or (n_samples, n_classes)
            Predicted probability of the positive class, or ``predict_proba``
            output (top-label for more than two columns).
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows; equal weights when None.
        pos_label : int, float, bool or str, default=None
            The positive class of binary ``y_true``, as in :mod:`sklearn.metrics`.
        labels : array-like of shape (n_classes,), default=None
            The class of each column of ``y_prob``.
        n_bins : int, default=10
            Number of equal-weight bins of the curve.
        n_resamples : int, default=1000
            Draws of the calibrated null for the band; 0 for no band.
        band_level : float, default=0.95
            Central probability the band covers at each bin, in (0, 1).
        random_state : int, RandomState instance or None, default=None
            Seeds the band's resampling.
        name : str, default=None
            Legend entry.
        ax : matplotlib Axes, default=None
            Axes for the diagram; a new figure when None (see :meth:`plot`).
        overlays : iterable of str, default=("band", "cutoff", "scdl", "smce")
            Which overlays to draw.
        **kwargs : dict
            Passed to ``matplotlib.axes.Axes.plot`` for the curve.

        Returns
        -------
        display : ReliabilityDisplay
            The display, drawn.
        """
        import_pyplot(f"{cls.__name__}.from_predictions")
        cls._check_params(n_bins, n_resamples, band_level, overlays, name)
        display = cls._compute(
            y_true,
            y_prob,
            sample_weight=sample_weight,
            pos_label=pos_label,
            labels=labels,
            n_bins=n_bins,
            n_resamples=n_resamples,
            band_level=band_level,
            random_state=random_state,
            name=name,
        )
        return display.plot(ax=ax, overlays=overlays, **kwargs)

    @classmethod
    def _compute(
        cls,
        y_true,
        y_prob,
        *,
        sample_weight,
        pos_label,
        labels,
        n_bins,
        n_resamples,
        band_level,
        random_state,
        name,
    ):
        """The display of checked parameters, not drawn yet."""
        # the boundary, once: every measure below reads the canonical form
        data = binary_input(
            y_true, y_prob, sample_weight, pos_label=pos_label, labels=labels
        )
        y, p, w = (np.ascontiguousarray(a, dtype=np.float64) for a in data.canonical_rows())
        top_label = np.ndim(y_prob) == 2 and np.shape(y_prob)[1] > 2
        # the measures and bins on the reduced binary data (y, p, w)
        ece, bins = binned_ece(
            data,
            n_bins=n_bins,
            strategy="quantile",
            return_details=True,
        )
        full = bins.bin_weight > 0
        lower, upper = bins.bin_lower[full], bins.bin_upper[full]
        # quantile bins are runs of distinct predictions: disjoint intervals
        bin_of_row = np.minimum(
            np.searchsorted(upper, p, side="left"), upper.shape[0] - 1
        )  # rows of zero weight past the last bin count for nothing
        band = None
        if n_resamples > 0:
            freq = null_bin_frequencies(
                p, w, bin_of_row, lower.shape[0], n_resamples, random_state
            )
            tail = (1 - band_level) / 2
            band = np.quantile(freq, [tail, 1 - tail], axis=0)
        smce, smce_details = smooth_calibration_error(data, return_details=True)
        cutoff, cutoff_details = cutoff_calibration_error(data, return_details=True)
        scdl, scdl_details = soft_binned_cdl(data, return_details=True)
        mstar = int(scdl_details.m)
        scdl_bins = (mstar, None, None, None)
        if mstar <= 4096:  # m* = 2**40 when the data are calibrated to ~1e-12
            scdl_bins = (mstar, *soft_bins(y, p, w, mstar))
        return cls(
            prob_true=bins.bin_accuracy[full],
            prob_pred=bins.bin_confidence[full],
            band=band,
            y_prob=p,
            sample_weight=w,
            measures={"smce": smce, "cutoff": cutoff, "scdl": scdl, "binned_ece": ece},
            details={
                "cutoff": (*cutoff_details.interval, cutoff_details.sign),
                "scdl": scdl_bins,
                "smce": (smce_details.points, smce_details.witness),
                "n_bins": n_bins,
            },
            estimator_name=name,
            band_level=band_level,
            top_label=top_label,
            # a label "total weight" only when the weights are not all 1
            weighted=not np.all(w == 1.0),
        )

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
        ax: Axes | None = None,
        overlays: str | Iterable[str] = OVERLAYS,
        **kwargs: Any,
    ) -> ReliabilityDisplay:
        """Plot the diagram of a fitted classifier's ``predict_proba`` on ``X``.

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
            Observed labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows; equal weights when None.
        n_bins : int, default=10
            Number of equal-weight bins of the curve.
        n_resamples : int, default=1000
            Draws of the calibrated null for the band; 0 for no band.
        band_level : float, default=0.95
            Central probability the band covers at each bin, in (0, 1).
        random_state : int, RandomState instance or None, default=None
            Seeds the band's resampling.
        name : str, default=None
            Legend entry; the estimator's class name when None.
        ax : matplotlib Axes, default=None
            Axes for the diagram; a new figure when None.
        overlays : iterable of str, default=("band", "cutoff", "scdl", "smce")
            Which overlays to draw.
        **kwargs : dict
            Passed to ``matplotlib.axes.Axes.plot`` for the curve.

        Returns
        -------
        display : ReliabilityDisplay
            The display, drawn.
        """
        import_pyplot(f"{cls.__name__}.from_estimator")
        cls._check_params(n_bins, n_resamples, band_level, overlays, name)
        check_estimator_proba(estimator, f"{cls.__name__}.from_estimator")
        return cls.from_predictions(
            y,
            estimator.predict_proba(X),
            sample_weight=sample_weight,
            labels=estimator.classes_,
            n_bins=n_bins,
            n_resamples=n_resamples,
            band_level=band_level,
            random_state=random_state,
            name=estimator_name(estimator, name),
            ax=ax,
            overlays=overlays,
            **kwargs,
        )


def check_overlays(overlays: str | Iterable[str]) -> tuple[str, ...]:
    """``overlays`` as a tuple of known names, or a ValueError.

    Parameters
    ----------
    overlays : str or iterable of str
        Names among ``OVERLAYS``.

    Returns
    -------
    overlays : tuple of str
        The names, in the order given.
    """
    if isinstance(overlays, str):
        overlays = (overlays,)
    overlays = tuple(overlays)
    unknown = set(overlays) - set(OVERLAYS)
    if unknown:
        raise ValueError(
            f"overlays must be a subset of {OVERLAYS}, got {sorted(unknown)}."
        )
    return overlays


def _panels(ax):
    """The histogram panel below ``ax``, split off it once."""
    hist_ax = getattr(ax, "_skcal_hist_ax", None)
    if hist_ax is None:
        from mpl_toolkits.axes_grid1 import make_axes_locatable

        hist_ax = make_axes_locatable(ax).append_axes(
            "bottom", size="33%", pad=0.1, sharex=ax
        )
        ax._skcal_hist_ax = hist_ax
    return hist_ax
