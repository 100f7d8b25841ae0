"""Slow, obviously-correct Venn-ABERS: refit isotonic with each test point added."""

import numpy as np

try:  # SciPy >= 1.12
    from scipy.optimize import isotonic_regression
except ImportError:  # the oldest supported SciPy: scikit-learn's, in SciPy's form
    from types import SimpleNamespace

    from sklearn.isotonic import isotonic_regression as _sklearn_isotonic

    def isotonic_regression(y, *, weights=None, increasing=True):
        return SimpleNamespace(
            x=_sklearn_isotonic(y, sample_weight=weights, increasing=increasing)
        )


def isotonic_at(x, t, w, s):
    """Weighted isotonic regression of ``t`` on ``x`` (ties pooled), read at ``s``."""
    values = np.unique(x)
    W = np.array([w[x == v].sum() for v in values])
    S = np.array([(w * t)[x == v].sum() for v in values])
    keep = W > 0
    values, W, S = values[keep], W[keep], S[keep]
    fit = isotonic_regression(S / W, weights=W).x
    return fit[np.flatnonzero(values == s)[0]]


def venn_abers_pair(x, t, w, s):
    """``(p0, p1)`` for the score ``s``: the test point added with weight 1."""
    pair = []
    for label in (0.0, 1.0):
        pair.append(isotonic_at(np.r_[x, s], np.r_[t, label], np.r_[w, 1.0], s))
    return tuple(pair)


def venn_abers_proba(P, y, w, Ptest):
    """Inductive Venn-ABERS, one-vs-rest + normalisation, the naive way."""
    C = P.shape[1]
    columns = [1] if C == 2 else range(C)
    Q = np.empty((Ptest.shape[0], len(columns)))
    for j, k in enumerate(columns):
        t = (y == k).astype(float)
        for i, s in enumerate(Ptest[:, k]):
            p0, p1 = venn_abers_pair(P[:, k], t, w, s)
            Q[i, j] = p1 / (1.0 - p0 + p1)
    if C == 2:
        return np.column_stack([1 - Q[:, 0], Q[:, 0]])
    return Q / Q.sum(axis=1, keepdims=True)
