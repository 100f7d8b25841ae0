"""The numbers behind the reliability diagram's overlays.

The SCDL soft bins and the calibrated-null band.
"""

import numpy as np
from sklearn.utils import check_random_state

__all__ = ["null_bin_frequencies", "soft_bins"]


def soft_bins(y, p, w, m):
    """The triangular soft bins of SCDL at grid ``m``.

    ``pi_j = E[w_j(p)]`` and ``q_j = E[w_j(p) y] / pi_j`` with
    ``w_j(p) = (1 - |m p - j|)_+``, ``j = 0, ..., m`` (Lemma 3.1 of
    Bairaktari, Hu, Nguyen and Ullman, *An Actionable and Testable Measure of
    Calibration*). Each prediction splits its weight between the two grid
    points around it.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Outcomes in {0, 1}.
    p : array-like of shape (n_samples,)
        Predictions in [0, 1].
    w : array-like of shape (n_samples,)
        Non-negative weights with a positive sum.
    m : int
        The grid size (``m + 1`` grid points ``j / m``).

    Returns
    -------
    centers : ndarray of shape (m + 1,)
        The grid points ``j / m``.
    pi : ndarray of shape (m + 1,)
        The mass of each soft bin.
    q : ndarray of shape (m + 1,)
        The outcome frequency of each soft bin; NaN where ``pi == 0``.
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
    returns the weighted frequency of each bin in each draw.

    Parameters
    ----------
    p : ndarray of shape (n_samples,)
        Predictions in [0, 1].
    w : ndarray of shape (n_samples,)
        Non-negative weights.
    bin_of_row : ndarray of shape (n_samples,) of int
        The bin of each row, in ``{0, ..., n_bins - 1}``.
    n_bins : int
        Number of bins.
    n_resamples : int
        Number of draws.
    random_state : int, RandomState instance or None
        Seeds the draws.

    Returns
    -------
    frequencies : ndarray of shape (n_resamples, n_bins)
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
