"""Reliability diagrams that show what the calibration measures found.

matplotlib is optional: it is imported only when something is drawn.
"""

import numpy as np
from sklearn.utils import check_random_state

from ._validation import check_binary_calibration_input
from .metrics import (
    binned_ece,
    cutoff_calibration_error,
    smooth_calibration_error,
    soft_binned_cdl,
)

__all__ = [
    "ReliabilityDisplay",
    "plot_classwise_reliability",
    "plot_patching_history",
    "plot_test_result",
    "null_bin_frequencies",
    "soft_bins",
]

_OVERLAYS = ("band", "cutoff", "scdl", "smce")


def import_pyplot(caller):
    """``matplotlib.pyplot``, or an ImportError that says how to install it."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(
            f"{caller} requires matplotlib, an optional dependency of skcal. "
            'Install it with `pip install "skcal[plot]"`.'
        ) from exc
    return plt


def soft_bins(y, p, w, m):
    """The triangular soft bins of SCDL at grid ``m``.

    ``pi_j = E[w_j(p)]`` and ``q_j = E[w_j(p) y] / pi_j`` with
    ``w_j(p) = (1 - |m p - j|)_+``, ``j = 0, ..., m`` (Lemma 3.1 of
    Bairaktari, Hu, Nguyen and Ullman, *An Actionable and Testable Measure of
    Calibration*). Each prediction splits its weight between the two grid
    points around it. Returns ``(centers, pi, q)``; ``q`` is NaN where
    ``pi == 0``.
    """
    y, p, w = (np.asarray(a, dtype=np.float64) for a in (y, p, w))
    total = w.sum()
    mp = m * p
    left = np.minimum(np.floor(mp).astype(np.intp), m - 1)
    frac = mp - left  # weight share of the upper grid point, in [0, 1]
    pi = np.bincount(left, w * (1 - frac), m + 1) + np.bincount(
        left + 1, w * frac, m + 1
    )
    pos = np.bincount(left, w * y * (1 - frac), m + 1) + np.bincount(
        left + 1, w * y * frac, m + 1
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        q = np.where(pi > 0, pos / pi, np.nan)
    return np.arange(m + 1) / m, pi / total, q


def null_bin_frequencies(p, w, bin_of_row, n_bins, n_resamples, random_state):
    """Weighted outcome frequency per bin on data drawn from the calibrated null.

    Draws ``y*_i ~ Bernoulli(p_i)`` independently, ``n_resamples`` times, and
    returns the array of shape ``(n_resamples, n_bins)`` of
    ``sum_{i in bin} w_i y*_i / sum_{i in bin} w_i`` (NaN for empty bins).
    """
    rng = check_random_state(random_state)
    wsum = np.bincount(bin_of_row, w, n_bins)
    out = np.empty((n_resamples, n_bins))
    # blocks of resamples keep the (n_samples, block) draw matrix small
    block = max(1, min(n_resamples, 2_000_000 // max(1, p.shape[0])))
    for start in range(0, n_resamples, block):
        stop = min(n_resamples, start + block)
        draws = rng.uniform(size=(stop - start, p.shape[0])) < p
        for r, row in enumerate(draws):
            out[start + r] = np.bincount(bin_of_row, w * row, n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(wsum > 0, out / wsum, np.nan)


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
    >>> from skcal._reliability import ReliabilityDisplay
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
        prob_true,
        prob_pred,
        band,
        y_prob,
        sample_weight,
        measures,
        details,
        *,
        estimator_name=None,
        band_level=0.95,
        top_label=False,
        weighted=False,
    ):
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

    def plot(self, ax=None, *, name=None, overlays=_OVERLAYS, hist_ax=None, **kwargs):
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
        overlays = tuple(overlays)
        unknown = set(overlays) - set(_OVERLAYS)
        if unknown:
            raise ValueError(
                f"overlays must be a subset of {_OVERLAYS}, got {sorted(unknown)}."
            )
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

    @classmethod
    def from_predictions(
        cls,
        y_true,
        y_prob,
        *,
        sample_weight=None,
        pos_label=None,
        labels=None,
        n_bins=10,
        n_resamples=1000,
        band_level=0.95,
        random_state=None,
        name=None,
        ax=None,
        overlays=_OVERLAYS,
        **kwargs,
    ):
        """Compute the curve, band and measures from predictions, and plot them.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            Observed labels (binary), or class labels for multiclass ``y_prob``.
        y_prob : array-like of shape (n_samples,) or (n_samples, n_classes)
            Predicted probability of the positive class, or ``predict_proba``
            output (top-label for more than two columns).
        sample_weight : array-like of shape (n_samples,), default=None
        pos_label : int, float, bool or str, default=None
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
        overlays : iterable of str, default=("band", "cutoff", "scdl", "smce")
        **kwargs : dict
            Passed to ``matplotlib.axes.Axes.plot`` for the curve.

        Returns
        -------
        display : ReliabilityDisplay
        """
        import_pyplot(f"{cls.__name__}.from_predictions")
        if not 0 < band_level < 1:
            raise ValueError(f"band_level must be in (0, 1), got {band_level!r}.")
        if (
            isinstance(n_resamples, bool)
            or not isinstance(n_resamples, int | np.integer)
            or n_resamples < 0
        ):
            raise ValueError(
                f"n_resamples must be a non-negative integer, got {n_resamples!r}."
            )
        y, p, w = check_binary_calibration_input(
            y_true, y_prob, sample_weight, pos_label=pos_label, labels=labels
        )
        y, p, w = (np.asarray(a, dtype=np.float64) for a in (y, p, w))
        top_label = np.ndim(y_prob) == 2 and np.shape(y_prob)[1] > 2
        # the measures and bins on the reduced binary data (y, p, w)
        ece, bins = binned_ece(
            y,
            p,
            sample_weight=w,
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
        smce, smce_details = smooth_calibration_error(
            y, p, sample_weight=w, return_details=True
        )
        cutoff, cutoff_details = cutoff_calibration_error(
            y, p, sample_weight=w, return_details=True
        )
        scdl, scdl_details = soft_binned_cdl(y, p, sample_weight=w, return_details=True)
        mstar = int(scdl_details.m)
        scdl_bins = (mstar, None, None, None)
        if mstar <= 4096:  # m* = 2**40 when the data are calibrated to ~1e-12
            scdl_bins = (mstar, *soft_bins(y, p, w, mstar))
        display = cls(
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
        return display.plot(ax=ax, overlays=overlays, **kwargs)

    @classmethod
    def from_estimator(cls, estimator, X, y, *, name=None, **kwargs):
        """Plot the diagram of a fitted classifier's ``predict_proba`` on ``X``.

        Parameters
        ----------
        estimator : fitted classifier with ``predict_proba``
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        name : str, default=None
            Legend entry; the estimator's class name when None.
        **kwargs : dict
            Passed to :meth:`from_predictions`.

        Returns
        -------
        display : ReliabilityDisplay
        """
        import_pyplot(f"{cls.__name__}.from_estimator")
        return cls.from_predictions(
            y,
            estimator.predict_proba(X),
            labels=estimator.classes_,
            name=type(estimator).__name__ if name is None else name,
            **kwargs,
        )


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


_MEASURE_NAMES = {
    "smce": "smooth calibration error",
    "dce": "lower distance to calibration",
    "cutoff": "cutoff calibration error",
    "scdl": "soft-binned CDL",
    "cdl": "calibration decision loss",
    "binned_ece": "binned ECE",
}


def plot_test_result(result, ax=None, *, null_statistics=None):
    """Draw a calibration test: null distribution, statistic, threshold, verdict.

    Parameters
    ----------
    result : CalibrationTestResult or fitted CalibrationTester
        The decision. A fitted :class:`skcal.CalibrationTester` also supplies
        its resampled null statistics (``null_statistics_``).
    ax : matplotlib Axes, default=None
    null_statistics : array-like, default=None
        The measure on each data set resampled under calibration; taken from
        ``result.null_statistics`` or the tester's ``null_statistics_`` when
        None. Without them (theory mode) only the statistic and threshold
        are drawn.

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from skcal import CalibrationTester
    >>> from skcal._reliability import plot_test_result
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=300)
    >>> y = rng.uniform(size=300) < p
    >>> tester = CalibrationTester(n_resamples=199, resampling_risk=None,
    ...                            random_state=0).fit(y, p)
    >>> ax = plot_test_result(tester)
    >>> ax.get_title()
    'Calibration test: calibrated, p-value 0.15'
    """
    plt = import_pyplot("plot_test_result")
    tester = None
    if hasattr(result, "result_"):
        tester, result = result, result.result_
    if null_statistics is None:
        null_statistics = getattr(result, "null_statistics", None)
        if null_statistics is None and tester is not None:
            null_statistics = getattr(tester, "null_statistics_", None)
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 3.6))
    if null_statistics is not None:
        null = np.asarray(null_statistics, dtype=np.float64)
        ax.hist(
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
    ax.axvline(
        result.threshold,
        color="k",
        ls="--",
        label=f"threshold {result.threshold:.4f} (alpha = {result.alpha:g})",
    )
    ax.axvline(
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
    return ax


def plot_patching_history(recalibrator, ax=None):
    """Draw the history of a fitted UtilityPatchingRecalibrator.

    The utility calibration error UC (left axis) and the Brier score (right
    axis) after each patch, on the fitted samples and, when the
    recalibrator held samples out (``validation_fraction``), on those.

    Parameters
    ----------
    recalibrator : fitted UtilityPatchingRecalibrator
        Read through its ``history_`` dict (keys ``"uc"``, ``"brier"`` and
        optionally ``"validation_uc"``, ``"validation_brier"``).
    ax : matplotlib Axes, default=None

    Returns
    -------
    ax : matplotlib Axes
        The UC axis; the Brier axis is its right-hand twin.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from skcal import UtilityPatchingRecalibrator
    >>> from skcal._reliability import plot_patching_history
    >>> rng = np.random.default_rng(0)
    >>> P = rng.dirichlet(np.ones(3), size=300)
    >>> y = np.array([rng.choice(3, p=np.roll(q, 1)) for q in P])
    >>> rec = UtilityPatchingRecalibrator(max_iter=5).fit(P, y)
    >>> ax = plot_patching_history(rec)
    >>> ax.get_xlabel()
    'patches made'
    """
    plt = import_pyplot("plot_patching_history")
    history = getattr(recalibrator, "history_", None)
    if history is None:
        raise ValueError(
            "recalibrator has no history_: fit the UtilityPatchingRecalibrator first."
        )
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 3.6))
    brier_ax = ax.twinx()
    t = np.arange(len(history["uc"]))
    lines = ax.plot(
        t, history["uc"], "o-", color="tab:blue", ms=3, label="UC, fitted samples"
    )
    lines += brier_ax.plot(
        t,
        history["brier"],
        "s-",
        color="tab:orange",
        ms=3,
        label="Brier, fitted samples",
    )
    if "validation_uc" in history:
        lines += ax.plot(
            t,
            history["validation_uc"],
            "o--",
            color="tab:blue",
            ms=3,
            alpha=0.7,
            label="UC, held out",
        )
        lines += brier_ax.plot(
            t,
            history["validation_brier"],
            "s--",
            color="tab:orange",
            ms=3,
            alpha=0.7,
            label="Brier, held out",
        )
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("patches made")
    ax.set_ylabel("utility calibration error (UC)")
    brier_ax.set_ylabel("Brier score")
    ax.legend(lines, [line.get_label() for line in lines], fontsize="small")
    ax.set_xlim(-0.2, max(1, t[-1]) + 0.2)
    return ax


def plot_classwise_reliability(
    y_true,
    y_proba,
    *,
    labels=None,
    sample_weight=None,
    n_bins=10,
    random_state=None,
    axes=None,
    **kwargs,
):
    """Class-wise reliability diagrams of multiclass predictions, side by side.

    For each class ``k``, the one-vs-rest diagram of ``P[:, k]`` against
    ``1{y = k}``, drawn by :class:`ReliabilityDisplay` with its band and
    overlays. (The top-label view is ``ReliabilityDisplay.from_predictions``
    on the whole matrix.)

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
    y_proba : array-like of shape (n_samples, n_classes)
    labels : array-like of shape (n_classes,), default=None
        The class of each column; the sorted distinct labels when None (then
        every class must occur in ``y_true``).
    sample_weight : array-like of shape (n_samples,), default=None
    n_bins : int, default=10
    random_state : int, RandomState instance or None, default=None
    axes : array of matplotlib Axes, default=None
        One per class; when None, a new figure with a near-square grid of
        panels (``ceil(sqrt(n_classes))`` columns).
    **kwargs : dict
        Passed to :meth:`ReliabilityDisplay.from_predictions`.

    Returns
    -------
    displays : list of ReliabilityDisplay
        One per class, titled by the class.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skcal._reliability import plot_classwise_reliability
    >>> X, y = load_iris(return_X_y=True)
    >>> P = LogisticRegression(max_iter=500).fit(X, y).predict_proba(X)
    >>> displays = plot_classwise_reliability(y, P, random_state=0)
    >>> [d.ax_.get_title() for d in displays]
    ['class 0', 'class 1', 'class 2']
    """
    plt = import_pyplot("plot_classwise_reliability")
    y = np.asarray(y_true)
    P = np.asarray(y_proba)
    if P.ndim != 2 or P.shape[1] < 2:
        raise ValueError(
            f"y_proba must have shape (n_samples, n_classes), got {P.shape}."
        )
    classes = np.unique(y) if labels is None else np.asarray(labels)
    if classes.shape[0] != P.shape[1]:
        raise ValueError(
            f"y_proba has {P.shape[1]} columns but there are {classes.shape[0]} "
            "classes; pass labels, the class of each column."
        )
    if axes is None:
        # a near-square grid (3 x 3 for 7 to 9 classes), not one long row of
        # panels too small to read; the unused cells are switched off
        n_cols = int(np.ceil(np.sqrt(P.shape[1])))
        n_rows = int(np.ceil(P.shape[1] / n_cols))
        fig, axes = plt.subplots(
            n_rows,
            n_cols,
            figsize=(5.8 * n_cols, 6.2 * n_rows),
            gridspec_kw={"wspace": 0.45, "hspace": 0.3},
            squeeze=False,
        )
        for ax in axes.ravel()[P.shape[1]:]:
            ax.set_axis_off()
    axes = np.ravel(axes)
    if axes.shape[0] < P.shape[1]:
        raise ValueError(
            f"axes has {axes.shape[0]} Axes but y_proba has {P.shape[1]} classes; "
            "pass one Axes per class."
        )
    displays = []
    for k, (cls, ax) in enumerate(zip(classes, axes)):
        d = ReliabilityDisplay.from_predictions(
            (y == cls).astype(np.float64),
            P[:, k],
            sample_weight=sample_weight,
            n_bins=n_bins,
            random_state=random_state,
            ax=ax,
            **kwargs,
        )
        ax.set_title(f"class {cls}")
        displays.append(d)
    return displays
