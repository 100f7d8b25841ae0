"""Helpers shared by the binary measures: sorting and grouping ties."""

import numpy as np

from .._kernels._interval import group_sorted

__all__ = ["sort_and_group"]


def sort_and_group(y, p, w):
    """Sort by ``p`` and merge equal predictions.

    Parameters
    ----------
    y, p, w : ndarray of shape (n,)
        Validated outcomes in {0, 1}, predictions in [0, 1] and weights
        (float64; the compact forms of ``check_binary_calibration_input``,
        uint8 outcomes and stride-0 unit weights, are converted here).

    Returns
    -------
    values : ndarray of shape (k,)
        Distinct predictions, ascending.
    wsum : ndarray of shape (k,)
        Total weight at each distinct prediction.
    wysum : ndarray of shape (k,)
        Total weight of positive outcomes at each distinct prediction.

    Every measure depends on the data only through these sums (it is a
    functional of the weighted empirical distribution), so ties and row order
    never matter downstream.
    """
    y = np.ascontiguousarray(y, dtype=np.float64)
    w = np.ascontiguousarray(w, dtype=np.float64)
    order = np.argsort(p)
    n = p.shape[0]
    values = np.empty(n)
    wsum = np.empty(n)
    wysum = np.empty(n)
    k = group_sorted(p, y, w, order, values, wsum, wysum)
    return values[:k], wsum[:k], wysum[:k]
