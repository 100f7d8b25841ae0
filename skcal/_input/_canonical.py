"""The canonical form of binary calibration input, built once at the boundary.

:func:`binary_input` validates ``(y_true, y_prob, sample_weight)`` with the
measures' options (``pos_label``, ``multiclass``, ``labels``) and returns a
frozen :class:`BinaryInput`. Every binary measure function accepts it in
place of ``y_true`` (with ``y_prob`` and ``sample_weight`` None) and reads
it without a second check: the scorers and the registry's generated
functions convert once and pass it down.
"""

from dataclasses import dataclass, field

import numpy as np

from .._grouped import group
from ._checks import check_binary_calibration_input, power_of_two_scale
from ._multiclass import MulticlassInput

__all__ = ["BinaryInput", "binary_input"]


@dataclass(frozen=True, eq=False)
class BinaryInput:
    """Validated binary (or top-label) rows; the grouped statistic on demand.

    Attributes
    ----------
    y : ndarray of shape (n,)
        Outcomes in {0, 1} (uint8, or the caller's 0/1 int64 read-only).
    p : ndarray of shape (n,)
        Predictions in [0, 1], float64, read-only.
    w : ndarray of shape (n,)
        Checked weights as the caller gave them (not rescaled); stride-0
        ones for unit weights.
    n : int
        Number of rows.
    """

    y: np.ndarray
    p: np.ndarray
    w: np.ndarray
    n: int = field(init=False)
    _cache: dict = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "n", int(self.p.shape[0]))

    def canonical_rows(self):
        """``(y, p, w)``, as ``check_binary_calibration_input(compact=True)`` gives them."""
        return self.y, self.p, self.w

    def weight_scale(self):
        """The exponent ``e`` that brings the largest weight into ``[1, 2)``."""
        w = self.w
        return power_of_two_scale(w[0] if w.strides == (0,) else w.max())

    def canonical_statistic(self, rescale=True, return_scale=False):
        """The grouped statistic (built once, then cached), as ``binary_statistic`` builds it.

        With ``rescale=True`` the weights are multiplied by ``2**e``
        (:meth:`weight_scale`); ``return_scale=True`` also returns ``e``.
        """
        key = bool(rescale)
        if key not in self._cache:
            e = self.weight_scale() if rescale else 0
            w = np.ldexp(self.w, e) if e else self.w
            self._cache[key] = (group(self.y, self.p, w), e)
        statistic, e = self._cache[key]
        return (statistic, e) if return_scale else statistic


def binary_input(y_true, y_prob, sample_weight=None, *, pos_label=None,
                 multiclass="top-label", labels=None):
    """THE boundary of the binary measures: any accepted input -> :class:`BinaryInput`.

    A :class:`BinaryInput` is returned as it is (``y_prob`` and
    ``sample_weight`` must then be None); a :class:`MulticlassInput` gives
    its (cached) top-label rows.
    """
    if isinstance(y_true, MulticlassInput):
        if y_prob is not None or sample_weight is not None:
            raise ValueError(
                "y_true is a MulticlassInput, which already holds the predictions "
                "and weights: pass y_prob=None and sample_weight=None."
            )
        return y_true.top_label()
    if isinstance(y_true, BinaryInput):
        if y_prob is not None or sample_weight is not None:
            raise ValueError(
                "y_true is a BinaryInput, which already holds the predictions and "
                "weights: pass y_prob=None and sample_weight=None."
            )
        return y_true
    if y_prob is None:
        raise ValueError("y_prob is required (the predicted probabilities).")
    y, p, w = check_binary_calibration_input(
        y_true, y_prob, sample_weight, pos_label=pos_label, multiclass=multiclass,
        labels=labels, compact=True,
    )
    return BinaryInput(y, p, w)
