"""Helpers shared by the binary measures: sorting and grouping ties."""

import numpy as np

from .._kernels._interval import group_sorted

__all__ = ["sort_and_group"]


def sort_and_group(y, p, w):
    """Sort by ``p`` and merge equal predictions.

    Parameters
    ----------
    y, p, w : ndarray of shape (n,), float64
        Validated outcomes in {0, 1}, predictions in [0, 1] and weights.

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
    order = np.argsort(p)
    n = p.shape[0]
    values = np.empty(n)
    wsum = np.empty(n)
    wysum = np.empty(n)
    k = group_sorted(p, y, w, order, values, wsum, wysum)
    return values[:k], wsum[:k], wysum[:k]
