"""Slow, obviously-correct twins of SCDL (skcal/metrics/_scdl.py).

Each is written straight from a definition in the papers, with no
attempt at speed, so that the fast paths can be checked against it.
"""

import numpy as np


def scdl_m_reference(y, p, w, m):
    """SCDL_m straight from 000 Definition 1.1, soft bins as in Lemma 3.1.

    The n x (m+1) matrix of triangular weights W_ij = (1 - |m p_i - j|)_+
    gives pi_j = E[w_j(p)] and pi_j q_j = E[w_j(p) y]; every i = 0..m is then
    evaluated with the products pi_j q_j, pi_j (an empty bin adds 0).
    """
    j = np.arange(m + 1)
    weights = np.maximum(0.0, 1.0 - np.abs(m * p[:, None] - j[None, :]))
    wn = w / w.sum()
    pi = wn @ weights
    piq = (wn * y) @ weights
    nz = np.flatnonzero(pi)  # bins with pi_j = 0 contribute nothing
    i = np.arange(m + 1)[:, None]
    left = (nz[None, :] <= i) * np.maximum(piq[nz] - (i + 1) / m * pi[nz], 0.0)
    right = (nz[None, :] > i) * np.maximum(i / m * pi[nz] - piq[nz], 0.0)
    return float((left + right).sum(axis=1).max())


def scdl_reference(y, p, w, max_level=10):
    """inf over m = 2, 4, ..., 2**max_level of max(SCDL_m, 1/m) (000 Def. 1.1).

    Equal to SCDL when the minimising m is below 2**max_level (000 Lemma 3.3:
    when m* < 2**max_level).
    """
    return min(
        max(scdl_m_reference(y, p, w, 2**k), 2.0**-k) for k in range(1, max_level + 1)
    )


def hard_binned_scdl_reference(y, p, w):
    """Hard-binned SCDL and m* (remark after 000 eq. (4)), for small m*."""

    def at(m):
        return scdl_m_reference(y, np.floor(m * p) / m, w, m)

    m = 2
    while at(2 * m) < 1.0 / m:
        m *= 2
    return max(at(m), 1.0 / m), m


def class_soft_bins_reference(y, p, w, m):
    """(2, m + 1): per class c and grid point j, sum of w_i (1 - |m p_i - j|)_+
    over the rows with y_i = c (Bairaktari et al., Lemma 3.1)."""
    tables = np.zeros((2, m + 1))
    for i in range(len(p)):
        wi = 1.0 if w is None else float(w[i])
        c = int(float(y[i]) == 1.0)
        for j in range(m + 1):
            tables[c, j] += wi * max(0.0, 1.0 - abs(m * float(p[i]) - j))
    return tables
