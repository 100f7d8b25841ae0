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


# --- the vectorised numpy twin of the compiled Venn-ABERS table --------------------
# (skcal's implementation before skcal/_kernels/_pava.pyx: pointer rounds over
# all prefixes at once, then all positions merged together in rounds)


def _group_sorted(x, t, w):
    order = np.argsort(x)
    order = order[w[order] > 0]
    xs = x[order]
    if xs.shape[0] == 0:
        return xs, xs.copy(), xs.copy()
    start = np.flatnonzero(np.r_[True, xs[1:] != xs[:-1]])
    return (xs[start], np.add.reduceat(w[order], start),
            np.add.reduceat(w[order] * t[order], start))


def _prefix_block_starts(C, D):
    """``L[g]``: where the last block of the isotonic fit of groups ``0..g`` starts.

    ``C``, ``D`` are the cumulative weights and positive weights (length
    ``k + 1``, starting at 0). Pointer rounds: every group's current last
    block absorbs the block ending just before it while that block's mean is
    at least its own; each absorbed block is a suffix of a true block, so
    the fixed point is the fit of every prefix at once.
    """
    k = C.shape[0] - 1
    L = np.arange(k)
    candidates = np.arange(1, k)
    while candidates.shape[0]:
        s = L[candidates]
        left = L[s - 1]
        # mean(left..s-1) >= mean(s..g), cross-multiplied (weights > 0)
        bW, bS = C[s] - C[left], D[s] - D[left]
        cW, cS = C[candidates + 1] - C[s], D[candidates + 1] - D[s]
        merge = bS * cW >= cS * bW
        if not merge.any():
            break
        changed = np.zeros(k + 1, dtype=bool)
        changed[candidates[merge]] = True
        L[candidates[merge]] = left[merge]
        # retest the blocks that grew and those whose left neighbour grew
        candidates = np.arange(1, k)
        candidates = candidates[(L[candidates] > 0)
                                & (changed[candidates] | changed[L[candidates] - 1])]
    return L


def _suffix_block_ends(C, D):
    """``R[g]``: where the first block of the isotonic fit of groups ``g..k-1`` ends."""
    k = C.shape[0] - 1
    R = np.arange(k)
    candidates = np.arange(k - 1)
    while candidates.shape[0]:
        e = R[candidates]
        right = R[e + 1]
        bW, bS = C[right + 1] - C[e + 1], D[right + 1] - D[e + 1]
        cW, cS = C[e + 1] - C[candidates], D[e + 1] - D[candidates]
        merge = cS * bW >= bS * cW
        if not merge.any():
            break
        changed = np.zeros(k + 1, dtype=bool)
        changed[candidates[merge]] = True
        R[candidates[merge]] = right[merge]
        candidates = np.arange(k - 1)
        candidates = candidates[(R[candidates] < k - 1)
                                & (changed[candidates] | changed[R[candidates] + 1])]
    return R


def venn_abers_table_vectorised(x, t, w):
    """The distinct calibration scores and ``(p0, p1)`` at every test position.

    Returns ``(values, p0, p1)``: ``values`` the ``k`` sorted distinct scores
    of positive weight, ``p0`` and ``p1`` of length ``2k + 1``; position
    ``2i`` is the gap just below ``values[i]`` (``2k``: above the largest),
    position ``2i + 1`` a score equal to ``values[i]``. The test point has
    weight 1 (weights are frequency weights).
    """
    values, W, S = _group_sorted(x, t, w)
    k = values.shape[0]
    C = np.r_[0.0, np.cumsum(W)]
    D = np.r_[0.0, np.cumsum(S)]
    L = _prefix_block_starts(C, D)
    R = _suffix_block_ends(C, D)
    # the block of the prefix fit ending at group e, indexed by e + 1, and
    # the block of the suffix fit starting at group s, indexed by s; index 0
    # (resp. k) is a sentinel block of mean -inf (resp. +inf) that never merges
    big = np.finfo(np.float64).max
    e = np.arange(k)
    left_W = np.r_[1.0, C[e + 1] - C[L]]
    left_S = np.r_[-big, D[e + 1] - D[L]]
    left_next = np.r_[-1, L - 1]
    right_W = np.r_[C[R + 1] - C[e], 1.0]
    right_S = np.r_[D[R + 1] - D[e], big]
    right_next = np.r_[R + 1, k]
    position = np.arange(2 * k + 1)
    g = position // 2
    tie = position % 2 == 1
    # the test point's block: its group (if tied) plus the test point;
    # lo is the last group to its left, hi the first to its right
    lo0 = g - 1
    hi0 = np.where(tie, g + 1, g)
    gk = np.minimum(g, k - 1)
    gW = np.where(tie, W[gk], 0.0)
    gS = np.where(tie, S[gk], 0.0)
    out = []
    with np.errstate(over="ignore"):
        for y in (0.0, 1.0):
            cW, cS = gW + 1.0, gS + y
            lo, hi = lo0.copy(), hi0.copy()
            active = position
            while active.shape[0]:
                # left: absorb the last block of the fit left of the test block
                i = lo[active] + 1
                bW, bS = left_W[i], left_S[i]
                aW, aS = cW[active], cS[active]
                m_left = bS * aW >= aS * bW
                aW = np.where(m_left, aW + bW, aW)
                aS = np.where(m_left, aS + bS, aS)
                lo[active] = np.where(m_left, left_next[i], lo[active])
                # right: absorb the first block of the fit right of the test block
                j = hi[active]
                bW, bS = right_W[j], right_S[j]
                m_right = aS * bW >= bS * aW
                aW = np.where(m_right, aW + bW, aW)
                aS = np.where(m_right, aS + bS, aS)
                hi[active] = np.where(m_right, right_next[j], j)
                cW[active], cS[active] = aW, aS
                active = active[m_left | m_right]
            out.append(cS / cW)
    return values, out[0], out[1]


