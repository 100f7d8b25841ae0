"""Slow, obviously-correct twins of the binned ECE and the one-pass input check
(skcal/metrics/_ece.py).

Each is written straight from a definition in the papers, with no
attempt at speed, so that the fast paths can be checked against it.
"""

import numpy as np

from reference_cutoff import residuals


def binned_ece_reference(y, p, w, n_bins=15, strategy="uniform", norm="l1"):
    """Binned ECE by an explicit loop over the bins (DESIGN.md section 3).

    Uniform bins are [k/B, (k+1)/B) with the doubles k/B as edges, the last
    one closed at 1. Quantile bins: a distinct prediction whose preceding
    weight (of all smaller predictions) is a fraction c of the total goes to
    bin min(floor(B c), B - 1), so ties are never split.
    """
    W = w.sum()
    b = residuals(y, p, w)
    if strategy == "uniform":
        edges = np.arange(n_bins + 1) / n_bins
        masks = [
            (p >= edges[k]) & ((p < edges[k + 1]) if k < n_bins - 1 else (p <= 1.0))
            for k in range(n_bins)
        ]
    else:
        bin_of = {}
        for v in np.unique(p):
            before = w[p < v].sum()
            bin_of[v] = min(int(np.floor(n_bins * before / W)), n_bins - 1)
        row_bin = np.array([bin_of[v] for v in p])
        masks = [row_bin == k for k in range(n_bins)]
    total, squares, worst = 0.0, 0.0, 0.0
    for mask in masks:
        mass = w[mask].sum() / W
        if mass == 0:
            continue
        bias = b[mask].sum()
        total += abs(bias)
        squares += mass * (bias / mass) ** 2
        worst = max(worst, abs(bias) / mass)
    return {"l1": total, "l2": np.sqrt(squares), "max": worst}[norm]


def plain_rows_reference(y, p, w):
    """True when every row is plainly valid: p a double in [0, 1] (-0.0 too),
    y exactly 0 or 1, and w (None: unit weights) finite and non-negative."""
    for i in range(len(p)):
        if not (0.0 <= float(p[i]) <= 1.0):
            return False
        if float(y[i]) not in (0.0, 1.0):
            return False
        if w is not None and not (np.isfinite(w[i]) and w[i] >= 0.0):
            return False
    return True


def uniform_bin_sums_reference(y, p, w, n_bins):
    """(B, 2): per bin [k/B, (k+1)/B) (the doubles k/B; the last bin closed at
    1), found by comparing p with every edge, the sum of w and of w (y - p)."""
    edges = np.arange(n_bins + 1) / n_bins
    sums = np.zeros((n_bins, 2))
    for i in range(len(p)):
        v = float(p[i])
        k = max(b for b in range(n_bins) if v >= edges[b])
        wi = 1.0 if w is None else float(w[i])
        sums[k, 0] += wi
        sums[k, 1] += wi * (float(y[i]) - v)
    return sums
