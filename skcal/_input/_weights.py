"""Checks and the power-of-two scale of sample weights (part of the boundary)."""

import numbers

import numpy as np

from ._arrays import as_numpy

__all__ = [
    "canonical_weights",
    "check_sample_weight",
    "plain_weights_on_scale",
    "power_of_two_scale",
]


def check_sample_weight(sample_weight, n_samples):
    """Validate ``sample_weight``; return a float64 copy (ones when None).

    Weights must be one-dimensional, of length ``n_samples``, finite,
    non-negative and with a positive sum. They are never renormalised here:
    each measure divides by their total itself.
    """
    if sample_weight is None:
        return np.ones(n_samples, dtype=np.float64)
    sample_weight = as_numpy(sample_weight, "sample_weight")
    if isinstance(sample_weight, numbers.Number):
        raise TypeError(
            "sample_weight must be an array-like of shape (n_samples,), "
            f"got the scalar {sample_weight!r}."
        )
    w = np.asarray(sample_weight)
    if w.dtype.kind not in "biuf":
        raise TypeError(
            f"sample_weight must be numeric, got an array of dtype {w.dtype}."
        )
    if w.ndim != 1:
        raise ValueError(
            f"sample_weight must be 1-dimensional, got shape {w.shape}."
        )
    if w.shape[0] != n_samples:
        raise ValueError(
            f"sample_weight has {w.shape[0]} elements but y_true has {n_samples}."
        )
    w = w.astype(np.float64, copy=True)
    if not np.all(np.isfinite(w)):
        raise ValueError("sample_weight contains NaN or infinity.")
    if np.any(w < 0):
        raise ValueError("sample_weight has negative values.")
    with np.errstate(over="ignore"):
        total = w.sum()
    if not total > 0:
        raise ValueError(
            "sample_weight must have a positive sum; all weights are zero."
        )
    if not np.isfinite(total):
        # Every measure depends on the weights only through w / sum(w): scale
        # them by a power of two (exact for every weight that stays normal)
        # so that sums cannot overflow, instead of dividing by an infinite total.
        w = np.ldexp(w, -int(np.frexp(w.max())[1]))
    return w


def power_of_two_scale(largest):
    """The exponent ``e`` with ``largest * 2**e`` in ``[1, 2)`` (0 if it is already).

    Every measure is a functional of ``w / sum(w)``, so it is unchanged, in
    exact arithmetic, when all weights are multiplied by one positive factor.
    In floating point it is not: subnormal weights lose their low bits in
    every product, tiny totals underflow and huge ones overflow. The measure
    cores therefore see the weights multiplied by ``2**e``, which is exact
    (no rounding) for every weight that stays normal, so that integer
    weights still equal repeated rows and the value does not depend on the
    scale of the weights.
    """
    largest = float(largest)
    if not (largest > 0 and np.isfinite(largest)):
        return 0
    return 1 - int(np.frexp(largest)[1])


def canonical_weights(w):
    """Validated weights rescaled by a power of two so that the largest is in ``[1, 2)``.

    ``w`` itself is returned when it is already on that scale (unit weights,
    the stride-0 ones of the compact validator); otherwise a new array. See
    :func:`power_of_two_scale`.
    """
    if w.ndim == 1 and w.shape[0] and w.strides == (0,):
        largest = w[0]
    else:
        largest = w.max() if w.shape[0] else 1.0
    e = power_of_two_scale(largest)
    if e == 0:
        return w
    return np.ldexp(w, e)


def plain_weights_on_scale(w):
    """Unchecked plain weights on the measures' scale (largest in [1, 2)).

    None stays None (unit weights); False when the largest weight is not a
    positive finite number (NaN, infinity, all zero or negative): the caller
    then validates in full, with its usual errors. Negative weights are
    kept, for the kernel to reject.
    """
    if w is None:
        return None
    largest = w.max()
    if not (0 < largest < np.inf):
        return False
    e = power_of_two_scale(largest)
    return w if e == 0 else np.ldexp(w, e)


# Largest size-like parameter (bins, grid intervals, sampled utilities times
# classes, resamples) accepted: 2**24 entries of a few float64 each stay near
# 100-400 MB, where 10**9 would fail with a bare MemoryError (or swap).
