"""Slow, obviously-correct twins of the reliability display's bands
(skcal/display/_reliability.py).

Each is written straight from a definition in the papers, with no
attempt at speed, so that the fast paths can be checked against it.
"""

import numpy as np


def soft_bins_reference(y, p, w, m):
    """SCDL soft bins by the definition: every sample against every grid point."""
    total = float(np.sum(w))
    centers = np.arange(m + 1) / m
    pi = np.zeros(m + 1)
    pos = np.zeros(m + 1)
    for yi, pi_, wi in zip(y, p, w):
        for j in range(m + 1):
            share = max(0.0, 1.0 - abs(m * pi_ - j))
            pi[j] += wi * share
            pos[j] += wi * share * yi
    q = np.array([pos[j] / pi[j] if pi[j] > 0 else np.nan for j in range(m + 1)])
    return centers, pi / total, q


def null_bin_frequencies_reference(p, w, bin_of_row, n_bins, n_resamples, seed):
    """Per-bin weighted frequencies of y* ~ Bernoulli(p), one sample at a time.

    Uses the generator's uniforms in the same order (resample by resample,
    sample by sample) as the fast path, so the two agree exactly.
    """
    rng = np.random.RandomState(seed)
    out = np.full((n_resamples, n_bins), np.nan)
    for r in range(n_resamples):
        u = rng.uniform(size=len(p))
        for k in range(n_bins):
            num = den = 0.0
            for i in range(len(p)):
                if bin_of_row[i] == k:
                    den += w[i]
                    num += w[i] * (u[i] < p[i])
            if den > 0:
                out[r, k] = num / den
    return out
