"""Spline calibration: a natural cubic spline in logit space, penalised logistic fit."""

from __future__ import annotations

import numbers

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import expit, logsumexp
from sklearn.model_selection import KFold
from sklearn.utils import check_random_state

from .._compat import Interval
from ._base import BaseRecalibrator
from ._binning import binary_columns, logit_column
from ._scaling import _expit, _softplus

__all__ = ["SplineCalibration"]

# The penalty weights tried by the inner cross-validation (of the mean
# log-loss, in units of the roughness integral on the standardised logit).
_LAMBDAS = np.logspace(-6, 2, 9)
# A ridge on every coefficient, small enough not to matter when the data
# identify the fit, large enough to keep Newton's method finite on
# separable data.
_RIDGE = 1e-8


def _summarise(z, w, t, fold, n_folds, max_groups):
    """Weighted sums of the rows on at most ``max_groups`` groups of the logit.

    Distinct values when there are at most ``max_groups`` of them (exact),
    else equal-count groups of the sorted logits, each represented by its
    weighted mean. Returns the representative ``x`` and, per group and fold,
    the weight and positive weight (``(m, n_folds)`` arrays).
    """
    keep = w > 0
    z, w, t, fold = z[keep], w[keep], t[keep], fold[keep]
    order = np.argsort(z, kind="stable")
    zs = z[order]
    distinct = np.r_[True, zs[1:] != zs[:-1]]
    group = np.cumsum(distinct) - 1
    if group[-1] + 1 > max_groups:
        group = np.arange(zs.shape[0]) * max_groups // zs.shape[0]
    m = group[-1] + 1
    ws, ts, fs = w[order], t[order], fold[order]
    W = np.bincount(group, ws, minlength=m)
    x = np.bincount(group, ws * zs, minlength=m) / W
    cell = group * n_folds + fs
    Wf = np.bincount(cell, ws, minlength=m * n_folds).reshape(m, n_folds)
    Sf = np.bincount(cell, ws * ts, minlength=m * n_folds).reshape(m, n_folds)
    return x, Wf, Sf


class _NaturalSpline:
    """The natural cubic spline basis with knots ``knots`` and its roughness matrix.

    Basis of Hastie, Tibshirani and Friedman (The Elements of Statistical
    Learning, eq. 5.4-5.5) on the standardised logit ``u``: ``1, u`` and
    ``d_k - d_{K-1}`` with ``d_k(u) = ((u - k_k)_+^3 - (u - k_K)_+^3) /
    (k_K - k_k)``; linear beyond the outer knots. ``omega`` is the matrix of
    ``integral f''(u)^2 du``: ``f''`` is piecewise linear between the knots,
    so the integral is exact from its values at the knots.
    """

    def __init__(self, knots):
        self.knots = knots

    def _d(self, u, k, power):
        xi, last = self.knots[k], self.knots[-1]
        if power == 3:
            a = np.maximum(u - xi, 0.0) ** 3 - np.maximum(u - last, 0.0) ** 3
        else:  # the second derivative, divided by 6
            a = np.maximum(u - xi, 0.0) - np.maximum(u - last, 0.0)
        return a / (last - xi)

    def basis(self, u, power=3):
        K = self.knots.shape[0]
        columns = [np.ones_like(u), u] if power == 3 else [np.zeros_like(u)] * 2
        for k in range(K - 2):
            columns.append(self._d(u, k, power) - self._d(u, K - 2, power))
        if power != 3:
            columns = [6.0 * c for c in columns]
        return np.column_stack(columns) if K >= 2 else np.ones((u.shape[0], 1))

    def omega(self):
        K = self.knots.shape[0]
        d = max(K, 1)
        if K < 3:
            return np.zeros((d, d))
        G = self.basis(self.knots, power=2)  # f'' at the knots
        h = np.diff(self.knots)
        H = np.zeros((K, K))
        i = np.arange(K - 1)
        H[i, i] += h / 3.0
        H[i + 1, i + 1] += h / 3.0
        H[i, i + 1] += h / 6.0
        H[i + 1, i] += h / 6.0
        return G.T @ H @ G


def _platt_targets(W, S):
    """Positive weight with Platt's smoothed targets ``(N+ + 1) / (N+ + 2)``, ``1 / (N- + 2)``."""
    n_pos = S.sum()
    n_neg = W.sum() - n_pos
    return S * (n_pos + 1.0) / (n_pos + 2.0) + (W - S) / (n_neg + 2.0)


def _newton(B, W, S, penalty, beta):
    """Minimise ``sum(W softplus(B beta) - S B beta) / sum(W) + beta' penalty beta``."""
    return _newton_batch(B, _outer_rows(B), W[:, None], S[:, None], penalty, beta[None])[0]


def _outer_rows(B):
    """``B_g B_g'`` of every row ``g`` of ``B``, flattened: ``(m, d * d)``.

    The Hessians of all the problems sharing the basis ``B`` are then one
    matrix product with their curvature weights (see ``_newton_batch``).
    """
    return (B[:, :, None] * B[:, None, :]).reshape(B.shape[0], -1)


def _newton_batch(B, BB, W, S, penalty, beta):
    """``_newton`` for several problems on one basis at once: column ``j`` of ``W``, ``S``.

    Each problem ``j`` minimises ``sum(W[:, j] softplus(B b) - S[:, j] B b)
    / sum(W[:, j]) + b' penalty b`` from ``beta[j]`` by Newton's method: the
    step halved until the objective does not increase, stopping after the
    step that decreased it by less than ``1e-12`` relative (or after 100
    steps). The problems follow their own iterates, as if solved one by
    one; doing them together makes one pass of matrix products per step
    for all of them (the folds of the inner cross-validation share the
    basis). ``BB`` is ``_outer_rows(B)``. Returns the minimisers, ``(k, d)``.
    """
    k, d = beta.shape
    total = W.sum(axis=0)
    beta = np.array(beta, dtype=np.float64)

    def columns(cols):
        # no copy while every problem is still iterating (the common case)
        return (W, S, total) if cols.shape[0] == k else (W[:, cols], S[:, cols], total[cols])

    def objective(b, cols):
        F = B @ b.T
        E = np.exp(-np.abs(F))
        Wc, Sc, tc = columns(cols)
        value = (np.einsum("gj,gj->j", Wc, _softplus(F, E))
                 - np.einsum("gj,gj->j", Sc, F)) / tc
        return value + np.einsum("ji,ik,jk->j", b, penalty, b), F, E

    value, F, E = objective(beta, np.arange(k))
    active = np.arange(k)
    for _ in range(100):
        if active.shape[0] == 0:
            break
        Wa, Sa, ta = columns(active)
        s = _expit(F, E)
        grad = ((Wa * s - Sa).T @ B) / ta[:, None] + 2.0 * beta[active] @ penalty
        R = Wa * s * (1.0 - s)
        hess = (R.T @ BB).reshape(-1, d, d) / ta[:, None, None] + 2.0 * penalty
        try:  # one LAPACK solve per problem, in one call
            step = np.linalg.solve(hess, grad[:, :, None])[:, :, 0]
        except np.linalg.LinAlgError:  # some Hessian singular: one by one
            step = np.empty_like(grad)
            for j in range(active.shape[0]):
                try:
                    step[j] = np.linalg.solve(hess[j], grad[j])
                except np.linalg.LinAlgError:
                    step[j] = np.linalg.lstsq(hess[j], grad[j], rcond=None)[0]
        t = np.ones(active.shape[0])
        new = np.empty(active.shape[0])
        F_new, E_new = np.empty_like(F), np.empty_like(F)
        searching = np.arange(active.shape[0])
        while searching.shape[0]:
            candidate = beta[active[searching]] - t[searching, None] * step[searching]
            trial, F_trial, E_trial = objective(candidate, active[searching])
            done = (trial <= value[active[searching]]) | (t[searching] < 1e-10)
            new[searching] = trial
            F_new[:, searching], E_new[:, searching] = F_trial, E_trial
            beta_done = searching[done]
            beta[active[beta_done]] = candidate[done]
            t[searching[~done]] /= 2.0
            searching = searching[~done]
        old = value[active]
        converged = old - new < 1e-12 * np.maximum(1.0, np.abs(old))
        value[active] = np.minimum(new, old)
        F, E = F_new[:, ~converged], E_new[:, ~converged]
        active = active[~converged]
    return beta


class _SplineMap:
    """One fitted binary spline map in logit space (picklable: plain arrays)."""

    def __init__(self, centre, scale, knots, beta):
        self.centre, self.scale = centre, scale
        self.spline = _NaturalSpline(knots)
        self.beta = beta

    def __call__(self, z):
        u = (z - self.centre) / self.scale
        # no extrapolation beyond the calibration logits (the outer knots)
        u = np.clip(u, self.spline.knots[0], self.spline.knots[-1])
        return self.spline.basis(u) @ self.beta


class SplineCalibration(BaseRecalibrator):
    """Spline calibration: a natural cubic spline of the logit, fitted by penalised log-loss.

    Lucena ("Spline-Based Probability Calibration", 2018): the calibrated
    log-odds of class ``k`` is a natural cubic spline ``f`` of the model's
    log-odds ``z = log p_k - log(1 - p_k)``, fitted by logistic regression
    with the roughness penalty ``lambda * integral f''(u)^2 du`` (``u`` the
    standardised logit); the penalty weight is chosen among
    ``1e-6 ... 1e2`` by the out-of-fold log-loss of an inner K-fold
    cross-validation (ties: the smoother fit). Knots sit at equally spaced
    weighted quantiles of ``z``; the spline is linear beyond the outer
    knots, so a large penalty leaves Platt scaling of the logit. As in
    Platt's method, the fit uses his smoothed targets ``(N+ + 1) / (N+ + 2)``
    and ``1 / (N- + 2)`` instead of 1 and 0, which keeps a fit on few or
    separable rows finite and away from 0 and 1. One-vs-rest,
    rows normalised in log space (two classes: the second column only).

    Logits take logarithms of ``p`` and of the sum of the other columns
    with the floor ``2.2e-16`` inside the logarithm (an exact 0 or 1 input
    becomes a logit of -36.04 or +36.04); the data are not changed. A new
    logit outside the range of the calibration logits is mapped as the
    nearest end of that range (the spline is not extrapolated beyond the
    data). The outputs are computed in log space: none is exactly 0 unless
    a fitted log-odds exceeds about 745 in size (so the log-loss is finite),
    while a probability within ``1.1e-16`` of 1 is stored as 1.0.

    For speed, the fit summarises the rows on at most ``max_groups`` groups
    of the logit (the distinct values when there are fewer: then it is
    exact; otherwise equal-count groups, each at its weighted mean logit,
    which changes the log-loss by a second-order amount in the width of a
    group).

    Parameters
    ----------
    labels : array-like of shape (n_classes,), default=None
        The class of each column of ``X``.
    n_knots : int, default=7
        Number of knots (fewer when ``z`` has fewer distinct values).
    cv : int, default=5
        Number of inner folds choosing the penalty; below ``2 * cv`` rows
        the penalty ``1`` is used.
    max_groups : int, default=2000
        The most groups the rows are summarised on (see above).
    random_state : int, RandomState instance or None, default=None
        Shuffling of the inner folds.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_classes_ : int
    alpha_ : ndarray of shape (n_mapped,)
        The penalty weight chosen for each mapped column.
    maps_ : list
        The fitted map of each mapped column.

    References
    ----------
    B. Lucena, "Spline-Based Probability Calibration", arXiv:1809.07751,
    2018.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.recalibration import SplineCalibration
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(0.01, 0.99, size=2000)
    >>> y = (rng.uniform(size=2000) < p).astype(int)
    >>> cal = SplineCalibration(random_state=0).fit(p, y)
    >>> q = cal.predict_proba([0.2, 0.5, 0.8])[:, 1]
    >>> bool(np.all(np.abs(q - [0.2, 0.5, 0.8]) < 0.05))
    True
    """

    _parameter_constraints = {
        "labels": ["array-like", None],
        "n_knots": [Interval(numbers.Integral, 2, None, closed="left")],
        "cv": [Interval(numbers.Integral, 2, None, closed="left")],
        "max_groups": [Interval(numbers.Integral, 10, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        labels: ArrayLike | None = None,
        n_knots: int = 7,
        cv: int = 5,
        max_groups: int = 2000,
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        self.labels = labels
        self.n_knots = n_knots
        self.cv = cv
        self.max_groups = max_groups
        self.random_state = random_state

    def _fit_column(self, z, t, w, fold, n_folds):
        x, Wf, Sf = _summarise(z, w, t, fold, n_folds, self.max_groups)
        W, S = Wf.sum(axis=1), Sf.sum(axis=1)
        centre = float(W @ x / W.sum())
        scale = float(np.sqrt(W @ (x - centre) ** 2 / W.sum()))
        scale = scale if scale > 0 else 1.0
        u = (x - centre) / scale
        cum = np.cumsum(W) / W.sum()
        at = np.searchsorted(cum, np.linspace(0.0, 1.0, self.n_knots), side="left")
        knots = np.unique(u[np.minimum(at, u.shape[0] - 1)])
        spline = _NaturalSpline(knots)
        B = spline.basis(u)
        d = B.shape[1]
        omega = spline.omega()
        ridge = _RIDGE * np.eye(d)
        start = np.zeros(d)
        start[0] = centre  # the identity map of the logit
        if d > 1:
            start[1] = scale
        if n_folds > 1 and d > 2:
            loss = np.zeros(_LAMBDAS.shape[0])
            # the folds' problems share the basis: solved together (one pass
            # of matrix products per Newton step for all folds)
            Wt, St = W[:, None] - Wf, S[:, None] - Sf
            Tt = np.column_stack([_platt_targets(Wt[:, f], St[:, f]) for f in range(n_folds)])
            BB = _outer_rows(B)
            beta = np.tile(start, (n_folds, 1))
            for i in range(_LAMBDAS.shape[0] - 1, -1, -1):  # smooth to rough
                beta = _newton_batch(B, BB, Wt, Tt, _LAMBDAS[i] * omega + ridge, beta)
                G = B @ beta.T
                G_soft = _softplus(G, np.exp(-np.abs(G)))
                loss[i] += float(np.sum(np.einsum("gf,gf->f", Wf, G_soft)
                                        - np.einsum("gf,gf->f", Sf, G)))
            # ties go to the smoother fit (the largest penalty)
            best = _LAMBDAS.shape[0] - 1 - int(np.argmin(loss[::-1]))
            alpha = float(_LAMBDAS[best])
        else:
            alpha = 1.0
        beta = _newton(B, W, _platt_targets(W, S), alpha * omega + ridge, start)
        return _SplineMap(centre, scale, knots, beta), alpha

    def _fit(self, P, y, w):
        n = P.shape[0]
        n_folds = self.cv if n >= 2 * self.cv else 1
        fold = np.zeros(n, dtype=np.intp)
        if n_folds > 1:
            rng = check_random_state(self.random_state)
            for f, (_, test) in enumerate(KFold(n_folds, shuffle=True,
                                                random_state=rng).split(P)):
                fold[test] = f
        self.maps_, alphas = [], []
        for k in binary_columns(P):
            spline, alpha = self._fit_column(
                logit_column(P, k), (y == k).astype(np.float64), w, fold, n_folds
            )
            self.maps_.append(spline)
            alphas.append(alpha)
        self.alpha_ = np.asarray(alphas)

    def _predict_proba(self, P):
        columns = binary_columns(P)
        F = np.column_stack([f(logit_column(P, k)) for f, k in zip(self.maps_, columns)])
        if P.shape[1] == 2:
            return np.column_stack([expit(-F[:, 0]), expit(F[:, 0])])
        log_q = -np.logaddexp(0.0, -F)
        return np.exp(log_q - logsumexp(log_q, axis=1, keepdims=True))
