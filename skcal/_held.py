"""A grouped statistic handed to a public measure function as a sketch is.

The report, the intervals and the tester's null all compute a measure on a
grouped statistic they already hold (the data's, a resample's or a merged
one): passing it as ``y_true`` through an object with a
``grouped_statistic()`` method lets the public function check the options
and compute the value by the same code as for a sketch, with no rows.
"""

from ._grouped import GroupedStatistic

__all__ = ["HeldStatistic"]


class HeldStatistic:
    """Hands an already grouped statistic to a public measure function.

    Parameters
    ----------
    statistic : GroupedStatistic
    canonical : bool, default=False
        True when the statistic is already on the measures' weight scale
        (``binary_statistic(..., rescale=True)`` built it, or a resample of
        such): the measure function must not rescale it again. Otherwise it
        is brought to that scale (a power of two: every value is unchanged).

    Examples
    --------
    >>> import numpy as np
    >>> from skcal import smooth_calibration_error
    >>> from skcal._grouped import group
    >>> from skcal._held import HeldStatistic
    >>> y, p = np.array([0.0, 1.0, 1.0]), np.array([0.2, 0.6, 0.9])
    >>> held = HeldStatistic(group(y, p, np.ones(3)))
    >>> smooth_calibration_error(held) == smooth_calibration_error(y, p)
    True
    """

    exact = True  # the statistic of every row, not a compacted sketch's

    def __init__(self, statistic: GroupedStatistic, *, canonical: bool = False) -> None:
        self.statistic = statistic
        self.canonical = canonical

    def grouped_statistic(self) -> GroupedStatistic:
        return self.statistic
