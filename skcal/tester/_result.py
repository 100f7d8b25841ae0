"""The answer of a calibration test: :class:`CalibrationTestResult`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from numpy.typing import ArrayLike
from sklearn.base import clone

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ..display import CalibrationTestDisplay


@dataclass(frozen=True, repr=False)
class CalibrationTestResult:  # numpydoc ignore=PR02
    """The decision of a :class:`CalibrationTester`, with what it rests on.

    A frozen record that :meth:`CalibrationTester.decide` and
    :meth:`CalibrationTester.fit` (``result_``) build; each parameter is kept
    as the attribute of the same name.

    Parameters
    ----------
    calibrated : bool
        The decision: ``True`` ("yes") when ``statistic <= threshold``.
    statistic : float
        The measure on the data.
    threshold : float
        The largest statistic still accepted as calibrated.
    p_value : float or None
        Resample mode: the smallest ``alpha`` at which the test would say
        "not calibrated". None in theory mode.
    alpha : float
        The error probability the test was run at.
    epsilon : float or None
        The ``epsilon`` (Definition 2 of the paper; ``epsilon_1`` of Definition 4) the
        tester was given.
    tolerance : float
        ``epsilon_2`` of the paper's Definition 4: data this close to calibrated
        (in dCE) count as calibrated.
    min_epsilon : float or None
        The **certified distance**: the smallest distance to calibration
        (dCE, the mean distance predictions must move to become calibrated)
        that this test is sure to catch at this ``n``. A model at least
        ``min_epsilon`` from calibrated is declared "not calibrated" with
        probability at least ``1 - alpha``; so when the test says
        "calibrated", the data certify, at confidence ``1 - alpha``, that
        dCE is below ``min_epsilon``. It shrinks like ``1 / sqrt(n)``; a
        model can only be certified as close to calibrated as the data
        allow. See :class:`CalibrationTester` (Notes) for the derivation.
        None where the measure has no known lower bound in terms of dCE.
    n : int
        Number of samples.
    measure : str
        The measure's name.
    method : str
        ``"resample"``, ``"theorem 3"`` or ``"theorem 4"``.
    n_resamples : int or None, default=None
        Resamples drawn (resample mode); None in theory mode.
    min_epsilon_measure : float or None, default=None
        The certified bound in the scale of the measure tested: the
        smallest value of the measure, of the outcome law on these
        predictions, that the test detects with probability at least
        ``1 - alpha`` (see :class:`CalibrationTester`, Notes); when the test
        says "calibrated" the data certify the measure is below it.
        "smce", "dce" and "cutoff" only.
    interval : tuple of float or None, default=None
        ``(low, high)``, the confidence interval at confidence
        ``1 - alpha`` of the measure tested, from its ``interval`` method
        (default method; what it guarantees is in that method's docstring
        and the guide's interval page), shown by ``str``, :meth:`summary`
        and the HTML table; for dCE its bootstrap on the grouped
        statistic (one linear program per resample). None when the measure
        is a plain callable, or when the input cannot be resampled (a
        sketch without row counts).
    target : str or None, default=None
        What the numbers are about when it is not plain binary input:
        ``"top-label"`` for multiclass input to a binary measure, or the
        utility's name; every number shown is labelled with it.

    Notes
    -----
    ``str(result)`` is one sentence, e.g. "calibrated: no evidence of
    miscalibration at level 0.05; smCE 0.012 [0.004, 0.021]; the data
    certify smCE <= 0.025"; :meth:`summary` is the longer text and
    notebooks show an HTML table (``_repr_html_``).

    Examples
    --------
    >>> from skcal import CalibrationTester
    >>> result = CalibrationTester(threshold="theory", epsilon=0.9, random_state=0).decide(
    ...     [0, 1, 1, 0] * 50, [0.5] * 200)
    >>> result.calibrated, result.method
    (True, 'theorem 3')
    >>> print(result)  # doctest: +NORMALIZE_WHITESPACE
    calibrated: no evidence of miscalibration at level 0.05; smCE 0 [0, 0.0819];
    the data certify smCE <= 0.312
    >>> result.interval[0]  # smCE's 95% interval starts at 0: calibration not ruled out
    0.0
    """

    calibrated: bool
    statistic: float
    threshold: float
    p_value: float | None
    alpha: float
    epsilon: float | None
    tolerance: float
    min_epsilon: float | None
    n: int
    measure: str
    method: str
    n_resamples: int | None = None
    min_epsilon_measure: float | None = None
    interval: tuple[float, float] | None = None
    target: str | None = None

    def __repr__(self):
        def show(value):
            return f"{value:.4g}" if isinstance(value, float) else repr(value)

        fields = ", ".join(
            f"{name}={show(getattr(self, name))}" for name in self.__dataclass_fields__
        )
        return f"{type(self).__name__}({fields})"

    def _label(self):
        """The measure's short name, prefixed by what it is about."""
        name = _SHORT_NAMES.get(self.measure, self.measure)
        if self.target and self.target != "binary":
            if self.target == "top-label":
                return f"top-label {name}"
            return f"{name} ({self.target})"
        return name

    def _verdict(self):
        if self.tolerance > 0:
            level, tol = _num(self.alpha), _num(self.tolerance)
            if self.calibrated:
                return (
                    f"calibrated within tolerance: no evidence that dCE exceeds {tol} "
                    f"at level {level}"
                )
            return f"not calibrated: dCE > {tol} detected at level {level}"
        if self.calibrated:
            return f"calibrated: no evidence of miscalibration at level {_num(self.alpha)}"
        return f"not calibrated: miscalibration detected at level {_num(self.alpha)}"

    def _certificate(self):
        """The certified bound, in words, or None when there is none."""
        if not self.calibrated:
            return None
        if self.min_epsilon_measure is not None:
            return f"the data certify {self._label()} <= {_num(self.min_epsilon_measure)}"
        if self.min_epsilon is not None:
            dce = "top-label dCE" if self.target == "top-label" else "dCE"
            return f"the data certify {dce} <= {_num(self.min_epsilon)}"
        return None

    def __str__(self):
        value = f"{self._label()} {_num(self.statistic)}"
        if self.interval is not None:
            value += f" [{_num(self.interval[0])}, {_num(self.interval[1])}]"
        else:
            value += f" (threshold {_num(self.threshold)})"
        if self.p_value is not None:
            value += f", p = {_num(self.p_value)}"
        parts = [self._verdict(), value]
        certificate = self._certificate()
        if certificate is not None:
            parts.append(certificate)
        return "; ".join(parts)

    def summary(self) -> str:
        """The result as a few lines of text for people.

        Returns
        -------
        text : str
            The verdict sentence, then one line per number with what it
            means.
        """
        label = self._label()
        lines = [str(self), ""]
        lines.append(f"  {(label + ' on the data:').ljust(22)}{_num(self.statistic)}")
        if self.interval is not None:
            lines.append(
                f"  confidence interval:  [{_num(self.interval[0])}, "
                f"{_num(self.interval[1])}]"
            )
        lines.append(
            f"  decision threshold:   {_num(self.threshold)} (above it: not calibrated)"
        )
        if self.p_value is not None:
            lines.append(
                f"  p-value:              {_num(self.p_value)} (chance of a value this "
                "large if the model were calibrated)"
            )
        lines.append(f"  level (alpha):        {_num(self.alpha)}")
        if self.min_epsilon_measure is not None:
            lines.append(
                f"  certified bound:      {label} <= {_num(self.min_epsilon_measure)} "
                "(any model above it is caught with probability >= 1 - alpha)"
            )
        if self.min_epsilon is not None:
            lines.append(
                f"  certified distance:   dCE <= {_num(self.min_epsilon)} (any model this "
                "far from calibrated is caught with probability >= 1 - alpha)"
            )
        how = self.method
        if self.n_resamples is not None:
            how += f", {self.n_resamples} resamples"
        lines.append(f"  method:               {how}; n = {self.n}")
        return "\n".join(lines)

    def _repr_html_(self):
        from html import escape

        rows = [("verdict", "calibrated" if self.calibrated else "not calibrated")]
        rows.append((self._label(), _num(self.statistic)))
        if self.interval is not None:
            rows.append(
                ("confidence interval", f"[{_num(self.interval[0])}, {_num(self.interval[1])}]")
            )
        rows.append(("decision threshold", _num(self.threshold)))
        if self.p_value is not None:
            rows.append(("p-value", _num(self.p_value)))
        rows.append(("level (alpha)", _num(self.alpha)))
        certificate = self._certificate()
        if certificate is not None:
            rows.append(("certified", certificate))
        rows.append(("method", f"{self.method}, n = {self.n}"))
        body = "".join(
            f"<tr><th style='text-align:left'>{escape(k)}</th><td>{escape(v)}</td></tr>"
            for k, v in rows
        )
        return (
            f"<div><p>{escape(str(self))}</p>"
            f"<table class='skcal-test-result'>{body}</table></div>"
        )

    def plot(
        self, ax: Axes | None = None, *, null_statistics: ArrayLike | None = None
    ) -> CalibrationTestDisplay:
        """Draw the statistic, the threshold and the verdict (needs matplotlib).

        A result does not keep the resampled null statistics; pass them
        (a fitted tester's ``null_statistics_``), or call
        :meth:`CalibrationTester.plot`, to draw the null distribution too.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None.
        null_statistics : array-like of shape (n_resamples,), default=None
            The measure on each data set resampled under calibration (a
            fitted tester's ``null_statistics_``); only the statistic and the
            threshold are drawn when None.

        Returns
        -------
        display : CalibrationTestDisplay
            The display, drawn.

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> from skcal import CalibrationTester
        >>> result = CalibrationTester(threshold="theory", epsilon=0.9).decide(
        ...     [0, 1, 1, 0] * 50, [0.5] * 200)
        >>> result.plot().ax_.get_title()
        'Calibration test: calibrated'
        """
        from ..display import CalibrationTestDisplay

        return CalibrationTestDisplay.from_tester(
            self, null_statistics=null_statistics, ax=ax
        )


def _measure_interval(measure, y_true, y_prob, sample_weight, pos_label, labels, confidence,
                      random_state):
    """``(low, high)`` of the tested measure's ``interval``, or None.

    Every measure of skcal, dCE included, as its public ``interval`` (its
    default method) gives them; for dCE (the bootstrap on its grouped
    statistic, a linear program per resample on at most 400 cells) the
    resamples and null draws are solved only where their bounds do not
    settle the two ends (``skcal.tester._dcebound.dce_interval_draws``:
    the values of :class:`~skcal.metrics._ldtc.FixedStartSession`, within
    solver rounding of the public method's). None for a measure
    without an ``interval`` method (a plain callable) and for input it
    cannot resample (a sketch without per-row counts); the tester's own
    decision does not depend on it.
    """
    if not callable(getattr(measure, "interval", None)):
        return None
    # imported here, as CalibrationMeasure.interval imports it: not at import time
    from .._interval import measure_interval
    from ..measures import CalibrationMeasure
    from ._dcebound import dce_interval_draws

    params = measure.get_params(deep=False)
    extra = {}
    if "labels" in params and params["labels"] is None and labels is not None:
        extra["labels"] = labels
    if "pos_label" in params and params["pos_label"] is None and pos_label is not None:
        extra["pos_label"] = pos_label
    if extra:
        measure = clone(measure).set_params(**extra)
    try:
        if sample_weight is None and type(measure).interval is CalibrationMeasure.interval:
            # the same ends, but dCE's resamples solved only where needed
            # (branch and bound) and no debiased estimate
            ci = measure_interval(
                measure, y_true, y_prob, confidence=confidence,
                random_state=random_state, dce_draws=dce_interval_draws,
            )
        else:
            ci = measure.interval(
                y_true, y_prob, sample_weight=sample_weight, confidence=confidence,
                random_state=random_state,
            )
    except (ValueError, TypeError):
        # e.g. a sketch that does not keep the counts behind its weights
        return None
    return (float(ci.low), float(ci.high))


# Short names of the measures in sentences (str, summary, HTML).
_SHORT_NAMES = {
    "smce": "smCE",
    "dce": "dCE",
    "cutoff": "cutoff error",
    "scdl": "SCDL",
    "cdl": "CDL",
    "binned_ece": "binned ECE",
    "utility": "utility calibration error",
}


def _num(value):
    """A number for people: 3 significant digits, no trailing noise."""
    return f"{value:.3g}"
