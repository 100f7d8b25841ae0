"""Slow, obviously-correct twins of the binning recalibrators, and a checks adapter."""

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
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.validation import check_is_fitted, validate_data


def smoothed_isotonic_step(x, t, w, s):
    """Isotonic fit of ``t`` on ``x`` with Beta-smoothed blocks, read at ``s`` (step map).

    Every block's value ``(S + m) / (W + 1)``, ``m = (S_tot + 1/2) / (W_tot + 1)``,
    made monotone by an isotonic pass with weights ``W + 1``; a new value goes
    to the nearer block (the boundary: midpoints between blocks).
    """
    keep = w > 0
    x, t, w = x[keep], t[keep], w[keep]
    values = np.unique(x)
    W = np.array([w[x == v].sum() for v in values])
    S = np.array([(w * t)[x == v].sum() for v in values])
    fit = isotonic_regression(S / W, weights=W).x
    blocks = []  # runs of equal fitted values that PAVA pooled
    for i in range(values.shape[0]):
        if blocks and fit[i] == fit[blocks[-1][-1]]:
            blocks[-1].append(i)
        else:
            blocks.append([i])
    m = (float(w @ t) + 0.5) / (float(w.sum()) + 1.0)
    bW = np.array([W[b].sum() for b in blocks])
    bS = np.array([S[b].sum() for b in blocks])
    q = isotonic_regression((bS + m) / (bW + 1), weights=bW + 1).x
    out = []
    for v in s:
        # the block whose interval, extended to the midpoints to its neighbours,
        # holds v (at a midpoint: the upper block)
        best = 0
        for j in range(1, len(blocks)):
            if v >= (values[blocks[j - 1][-1]] + values[blocks[j][0]]) / 2:
                best = j
        out.append(q[best])
    return np.array(out)


def histogram_binning(x, t, w, n_bins, s):
    """Equal-weight bins by explicit loops; smoothed frequency of each bin at ``s``."""
    keep = w > 0
    x, t, w = x[keep], t[keep], w[keep]
    order = np.argsort(x, kind="stable")
    xs, ws = x[order], w[order]
    total = ws.sum()
    thresholds = []
    for j in range(1, n_bins if xs.shape[0] >= 2 else 1):
        acc = 0.0
        for i in range(xs.shape[0]):
            acc += ws[i]
            if acc >= total * j / n_bins:
                break
        larger = xs[xs > xs[i]]
        if larger.shape[0]:
            thresholds.append((xs[i] + larger.min()) / 2)
    thresholds = sorted(set(thresholds))
    m = (float(w @ t) + 0.5) / (float(w.sum()) + 1.0)
    edges = [-np.inf] + thresholds + [np.inf]
    bins = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        inside = (x >= lo) & (x < hi)
        bins.append([lo, hi, w[inside].sum(), (w * t)[inside].sum()])
    # an empty bin joins the bin above it (the top bin: the one below)
    i = 0
    while i < len(bins):
        if bins[i][2] > 0 or len(bins) == 1:
            i += 1
        elif i < len(bins) - 1:
            bins[i + 1][0] = bins[i][0]
            del bins[i]
        else:
            bins[i - 1][1] = bins[i][1]
            del bins[i]
    out = []
    for v in s:
        for lo, hi, W, S in bins:
            if lo <= v < hi:
                out.append((S + m) / (W + 1))
    return np.array(out)


class OnProbabilities(ClassifierMixin, BaseEstimator):
    """Fit a recalibrator on a fixed softmax of the estimator checks' features."""

    def __init__(self, estimator=None):
        self.estimator = estimator

    def _rows(self, X):
        W = (np.arange(X.shape[1])[:, None] % self.n_columns_
             == np.arange(self.n_columns_)).astype(float)
        Z = X @ W
        with np.errstate(invalid="ignore", over="ignore"):
            Z = Z - Z.max(axis=1, keepdims=True)
            E = np.exp(Z)
            return E / E.sum(axis=1, keepdims=True)

    def fit(self, X, y, sample_weight=None):
        X = validate_data(self, X, ensure_all_finite=False, dtype=np.float64)
        self.n_columns_ = max(np.unique(np.asarray(y)).shape[0], 2)
        self.estimator_ = clone(self.estimator).fit(
            self._rows(X), y, sample_weight=sample_weight
        )
        self.classes_ = self.estimator_.classes_
        return self

    def predict_proba(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, ensure_all_finite=False, dtype=np.float64)
        return self.estimator_.predict_proba(self._rows(X))

    def predict(self, X):
        check_is_fitted(self)
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


def platt_by_bfgs(z, t, w):
    """Platt's smoothed-target logistic fit of ``t`` on ``z`` by a generic optimiser."""
    from scipy.optimize import minimize

    n_pos = (w * t).sum()
    n_neg = w.sum() - n_pos
    T = np.where(t > 0.5, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))

    def loss(theta):
        s = theta[0] * z + theta[1]
        return (w * (np.logaddexp(0, s) - T * s)).sum() / w.sum()

    theta = minimize(loss, [1.0, 0.0], method="BFGS", options={"gtol": 1e-11}).x
    return theta, loss
