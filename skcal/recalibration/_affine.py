"""Affine maps of the log-probabilities: vector, matrix and Dirichlet calibration.

``softmax(log(P) @ W.T + b)`` with ``W`` diagonal (vector scaling), full
(matrix scaling) or full with ODIR / L2 regularisation chosen by inner
cross-validation (Dirichlet calibration). The logarithms and the softmax
log-loss with its gradient are those of ``_scaling.py`` (see its docstring
for the floor inside the logarithms); this module adds the preconditioned
objective they share, its exact Hessian and the damped Newton steps that
minimise it (``_fit_affine``; L-BFGS-B above ``_NEWTON_MAX_PARAMS``
parameters).
"""

from __future__ import annotations

import numbers

import numpy as np
from numpy.typing import ArrayLike
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.utils import check_random_state

from .._compat import Interval, StrOptions
from ._base import BaseRecalibrator
from ._scaling import (
    TemperatureScaling,
    _lbfgs,
    _log_floor,
    _observed_flat,
    _one_blas_thread,
    _softmax,
    _softmax_loss,
)

__all__ = [
    "DirichletCalibration",
    "MatrixScaling",
    "StructuredMatrixScaling",
    "VectorScaling",
]


# Rows per block of the affine objective's passes (see ``_affine_objective``).
_BLOCK = 8192


def _whitening(L, w, diagonal):
    """Weighted mean ``mu`` and a matrix ``M`` with ``(L - mu) @ M`` of unit covariance.

    ``diagonal``: ``M`` scales each column only. Directions without variance
    (constant columns, one row) keep a unit scale.
    """
    p = w / w.sum()
    mu = p @ L
    Lc = L - mu
    if diagonal:
        sd = np.sqrt(p @ (Lc * Lc))
        sd[~(sd > 1e-12 * max(sd.max(), 1.0))] = 1.0
        return mu, np.diag(1.0 / sd)
    cov = (Lc * p[:, None]).T @ Lc
    vals, vecs = np.linalg.eigh(cov)
    vals = np.where(vals > 1e-12 * max(vals.max(), 1.0), vals, 1.0)
    return mu, vecs / np.sqrt(vals)


def _affine_data(L, y, w, diagonal, whiten):
    """What ``_affine_objective`` computes from the rows once, whatever the penalty."""
    C = L.shape[1]
    total = w.sum()
    if whiten:
        mu, M = _whitening(L, w, diagonal)
    else:
        mu, M = np.zeros(C), np.eye(C)
    Lw = (L - mu) @ M
    LwT = np.ascontiguousarray(Lw.T)
    Mmu = M.T @ mu
    k = C if diagonal else C * C
    n = L.shape[0]
    # blocks of rows whose temporaries stay in the cache: one pass over
    # 1e5 rows x 10 classes in blocks of 8192 takes about half the time of
    # one pass over all of them (the same sums, added in another order)
    blocks = []
    for lo in range(0, n, _BLOCK):
        hi = min(lo + _BLOCK, n)
        blocks.append((LwT[:, lo:hi], Lw[lo:hi], y[lo:hi], w[lo:hi],
                       _observed_flat(y[lo:hi], hi - lo)))
    return C, total, mu, M, Mmu, k, blocks


def _affine_objective(L, y, w, penalty, diagonal, whiten=True, data=None):
    """Penalised weighted mean log-loss of ``softmax(L @ W.T + b)``, preconditioned.

    The optimiser runs on ``(V, c)`` with ``W = V @ M.T`` and ``b = c - W @
    mu``, where ``(L - mu) @ M`` has unit covariance (``_whitening``): the
    same model, but the curvature of the log-loss is far better conditioned
    (the logarithms of small probabilities have much larger spreads than
    those of large ones), which keeps the Newton systems well scaled (and
    L-BFGS, for many classes, needs several times fewer passes). ``penalty(W, b)``
    returns the penalty and its gradients in ``W`` and ``b``; ``diagonal``
    restricts ``W`` (and ``V``) to diagonal matrices. ``whiten=False`` keeps
    the original coordinates (``mu = 0``, ``M = I``): better when a strong
    penalty, not the data, shapes the curvature.

    ``data``: ``_affine_data(L, y, w, diagonal, whiten)``, when the caller
    fits several penalties on the same rows (it is computed here otherwise).

    Returns ``fun(theta)`` (value and gradient), ``to_theta(W, b)`` and
    ``from_theta(theta)``.
    """
    if data is None:
        data = _affine_data(L, y, w, diagonal, whiten)
    C, total, mu, M, Mmu, k, blocks = data

    def from_theta(theta):
        V = np.diag(theta[:C]) if diagonal else theta[:k].reshape(C, C)
        W = V @ M.T
        return W, theta[k:] - W @ mu

    def to_theta(W, b):
        V = W @ np.linalg.inv(M.T)
        c = b + W @ mu
        return np.concatenate([np.diag(V) if diagonal else V.ravel(), c])

    def fun(theta):
        V = theta[:k] if diagonal else theta[:k].reshape(C, C)
        c = theta[k:]
        if diagonal:
            V = V[:, None]
        loss = 0.0
        gV = gc = None
        for BT, B, yb, wb, flat in blocks:
            ST = V * BT if diagonal else V @ BT
            ST += c[:, None]
            part, GT = _softmax_loss(ST, yb, wb, flat, overwrite=True)
            loss += part
            gVb = np.einsum("ij,ij->i", GT, BT) if diagonal else GT @ B
            gcb = GT.sum(axis=1)
            if gV is None:
                gV, gc = gVb, gcb
            else:
                gV += gVb
                gc += gcb
        loss /= total
        gV /= total
        gc /= total
        if penalty is not None:
            W, b = from_theta(theta)
            pen, gW, gb = penalty(W, b)
            loss += pen
            gVp = gW @ M
            gVp -= np.outer(gb, Mmu)
            gV += np.diag(gVp) if diagonal else gVp
            gc += gb
        return loss, np.concatenate([gV.ravel(), gc])

    return fun, to_theta, from_theta


def _penalty_hessian(penalty, diagonal, data):
    """The constant Hessian of a separable quadratic ``penalty``, in ``(class, feature)`` order.

    The penalties here are sums of ``s_ij (W_ij - R_ij)^2`` and ``t_i b_i^2``
    (their second derivatives ``2 s`` and ``2 t`` are ``penalty.curvature(C)``).
    In the coordinates of ``_affine_objective`` row ``i`` of ``(W, b)`` is
    ``J (V_i, c_i)`` with ``J = [[M, 0], [-(M' mu)', 1]]`` (``W = V M'``,
    ``b = c - W mu``), so the Hessian's block of class ``i`` is
    ``J' diag(2 s_i, 2 t_i) J``; with diagonal ``W`` the same with the
    ``i``-th entries only.
    """
    C, total, mu, M, Mmu, k, blocks = data
    s_w, s_b = penalty.curvature(C)
    width = 2 if diagonal else C + 1
    H = np.zeros((C * width, C * width))
    if not diagonal:  # the same map for every class
        J = np.zeros((C + 1, C + 1))
        J[:C, :C] = M
        J[C, :C] = -Mmu
        J[C, C] = 1.0
    for i in range(C):
        if diagonal:
            J = np.array([[M[i, i], 0.0], [-M[i, i] * mu[i], 1.0]])
            d = np.array([s_w[i, i], s_b[i]])
        else:
            d = np.append(s_w[i], s_b[i])
        H[i * width:(i + 1) * width, i * width:(i + 1) * width] = (J.T * d) @ J
    return H


def _hessian_rows(data):
    """The rows the Newton steps' Hessian is summed over: all, or an even spread.

    Above ``_HESSIAN_ROWS`` rows, every ``s``-th row (``s`` the smallest
    stride that leaves at most that many), weights as they are: the
    Hessian is then an estimate (positive semi-definite, like the exact
    one), which changes the path of the steps but not where they end, since
    the value and the gradient, which decide convergence, are exact.
    """
    C, total, mu, M, Mmu, k, blocks = data
    n = sum(block[0].shape[1] for block in blocks)
    if n <= _HESSIAN_ROWS:
        return [(BT, wb) for BT, B, yb, wb, flat in blocks]
    stride = -(-n // _HESSIAN_ROWS)
    BT = np.concatenate([block[0] for block in blocks], axis=1)[:, ::stride]
    wb = np.concatenate([block[3] for block in blocks])[::stride]
    return [(np.ascontiguousarray(BT), wb)]


def _affine_hessian(theta, data, diagonal, rows=None):
    """Hessian of the mean log-loss part of ``_affine_objective`` at ``theta``.

    With ``q_i = softmax(s_i)`` and the logits ``s_ic = beta_c . z_ic``
    (``z_ic`` the row's features for class ``c`` with a trailing 1 for the
    intercept), the Hessian in ``(beta_c, beta_d)`` is ``sum_i w_i (delta_cd
    q_ic - q_ic q_id) z_ic z_id' / sum w``: a block-diagonal part and a
    Gram matrix ``R R'`` with rows ``R_(c, a), i = sqrt(w_i / W) q_ic
    z_ic,a``, both summed block of rows by block of rows (BLAS products).
    """
    C, total, mu, M, Mmu, k, blocks = data
    if rows is None:
        rows = [(BT, wb) for BT, B, yb, wb, flat in blocks]
    else:
        total = sum(float(wb.sum()) for _, wb in rows)
    width = 2 if diagonal else C + 1  # features per class, with the intercept
    H = np.zeros((C * width, C * width))
    V = theta[:C][:, None] if diagonal else theta[:k].reshape(C, C)
    c = theta[k:]
    for BT, wb in rows:
        ST = V * BT if diagonal else V @ BT
        ST += c[:, None]
        ST -= ST.max(axis=0)
        Q = np.exp(ST, out=ST)
        Q /= Q.sum(axis=0)
        ww = wb / total
        ones = np.ones((1, BT.shape[1]))
        if diagonal:
            Z = np.stack([BT, np.broadcast_to(ones, BT.shape)], axis=1)  # (C, 2, nb)
        else:
            Z = np.broadcast_to(np.vstack([BT, ones])[None], (C, C + 1, BT.shape[1]))
        for j in range(C):
            H[j * width:(j + 1) * width, j * width:(j + 1) * width] += (
                Z[j] * (ww * Q[j])) @ Z[j].T
        R = (Z * (Q * np.sqrt(ww))[:, None, :]).reshape(C * width, -1)
        H -= _gram(R)
    return H


def _gram(R):
    """``R @ R.T`` by BLAS's symmetric rank-k update (half the products)."""
    from scipy.linalg.blas import dsyrk

    G = dsyrk(1.0, R)  # the upper triangle
    return np.triu(G) + np.triu(G, 1).T


def _theta_order(C, diagonal):
    """Positions in ``theta`` (V's entries, then c) of the ``(class, feature)`` order."""
    width = 2 if diagonal else C + 1
    k = C if diagonal else C * C
    index = np.empty(C * width, dtype=np.intp)
    for j in range(C):
        if diagonal:
            index[j * width] = j
        else:
            index[j * width:j * width + C] = j * C + np.arange(C)
        index[j * width + width - 1] = k + j
    return index


def _newton(fun, hessian, x0, max_iter=200):
    """Minimise a smooth convex ``fun`` (value and gradient) by damped Newton steps.

    Each step solves ``H d = -g`` (a Cholesky factorisation) and backtracks
    until the Armijo condition holds. Where ``H`` is singular or nearly so
    (a direction the data and the penalty leave flat, e.g. ODIR's free
    diagonal on constant columns) that step can be useless: then (Cholesky
    fails, or 20 halvings do not give a decrease) the step solves ``(H +
    mu I) d = -g`` for ridges ``mu`` growing from ``1e-10`` to 1 times
    ``H``'s largest eigenvalue (Levenberg-Marquardt), the first that
    decreases ``f`` within 10 halvings. It stops when the Newton decrement
    ``-g'd`` (twice the predicted decrease) is below ``1e-12 max(1, |f|)``,
    when no step decreases ``f``, or when a step decreases it by no more
    than ``1e-14 max(1, |f|)`` (the rounding of ``f``: in a valley where
    the infimum is not attained, e.g. ODIR's free diagonal on separable
    rows, ``f`` then no longer moves).
    """
    from scipy.linalg import LinAlgError, cho_factor, cho_solve

    def search(x, f, d, decrement, max_halvings):
        t = 1.0
        for _ in range(max_halvings):
            x_new = x + t * d
            f_new, g_new = fun(x_new)
            if f_new <= f - 1e-4 * t * decrement:
                return x_new, f_new, g_new
            t *= 0.5
        return None

    def damped(H, g, x, f):
        vals, vecs = np.linalg.eigh(H)
        top = max(float(vals.max()), 1e-300)
        along = vecs.T @ g
        for mu in (1e-10, 1e-8, 1e-6, 1e-4, 1e-2, 1.0):
            d = -vecs @ (along / (np.maximum(vals, 0.0) + mu * top))
            decrement = -float(g @ d)
            if not decrement > 0.0:
                continue
            found = search(x, f, d, decrement, 10)
            if found is not None:
                return found
        return None

    x = np.array(x0, dtype=np.float64)
    f, g = fun(x)
    for _ in range(max_iter):
        H = hessian(x)
        try:
            d = -cho_solve(cho_factor(H), g)
            step = d if np.all(np.isfinite(d)) else None
        except LinAlgError:
            step = None
        found = None
        if step is not None:
            decrement = -float(g @ step)
            if 0.0 <= decrement <= 1e-12 * max(1.0, abs(f)):
                break
            if decrement > 0.0:
                found = search(x, f, step, decrement, 20)
        if found is None:
            found = damped(H, g, x, f)
            if found is None:
                break
        progress = f - found[1]
        x, f, g = found
        if progress <= 1e-14 * max(1.0, abs(f)):
            break  # at the rounding of f (a flat or unbounded valley): done
    return x


# Up to this many parameters the affine fits take Newton steps on the exact
# Hessian (C = 15 classes with a full matrix); above, L-BFGS. At 10 classes
# L-BFGS stopped at its 1000 passes, far from the optimum (gradient 1e-4 to
# 1e-3), on many fits of Dirichlet calibration's grid; Newton converges in
# tens of steps.
_NEWTON_MAX_PARAMS = 240
# Rows the Hessian of a Newton step is summed over, at most (``_hessian_rows``).
_HESSIAN_ROWS = 4096


def _fit_affine(L, y, w, penalty, W0, b0, diagonal=False, whiten=True, data=None):
    if data is None:
        data = _affine_data(L, y, w, diagonal, whiten)
    fun, to_theta, from_theta = _affine_objective(L, y, w, penalty, diagonal, whiten, data)
    theta0 = to_theta(W0, b0)
    if theta0.shape[0] > _NEWTON_MAX_PARAMS:
        return from_theta(_lbfgs(fun, theta0))
    Hpen = _penalty_hessian(penalty, diagonal, data) if penalty is not None else 0.0
    rows = _hessian_rows(data)
    # theta's order: the Hessian's entries (class, feature) are at theta[index]
    index = _theta_order(data[0], diagonal)
    inverse = np.empty_like(index)
    inverse[index] = np.arange(index.shape[0])

    def hessian(theta):
        H = _affine_hessian(theta, data, diagonal, rows) + Hpen
        return H[np.ix_(inverse, inverse)]

    with _one_blas_thread():
        return from_theta(_newton(fun, hessian, theta0))


class _AffineLogScaling(BaseRecalibrator):
    """``softmax(log(P) @ W.T + b)``: the prediction shared by the affine maps."""

    def _predict_proba(self, P):
        return _softmax(_log_floor(P) @ self.coef_.T + self.intercept_)


class _RidgeAffineScaling(_AffineLogScaling):
    """The affine map with one ridge towards the identity: vector and matrix scaling.

    ``_diagonal`` (a class attribute) restricts ``W`` to diagonal matrices.
    """

    _diagonal = False
    _parameter_constraints = {
        "labels": ["array-like", None],
        "alpha": [Interval(numbers.Real, 0, None, closed="left")],
    }

    def __init__(self, labels: ArrayLike | None = None, alpha: float = 1e-4) -> None:
        self.labels = labels
        self.alpha = alpha

    def _fit(self, P, y, w):
        C = P.shape[1]
        self.coef_, self.intercept_ = _fit_affine(
            _log_floor(P), y, w, _l2_penalty(self.alpha), np.eye(C), np.zeros(C),
            diagonal=self._diagonal,
        )


class VectorScaling(_RidgeAffineScaling):
    """Vector scaling: ``softmax(a * log(P) + b)``, one slope and intercept per class.

    Guo, C., Pleiss, G., Sun, Y. and Weinberger, K. Q. (2017), "On
    calibration of modern neural networks" (ICML 2017): matrix scaling with a
    diagonal matrix. The logits are the logarithms of the input
    probabilities (floored at ``2.2e-16``, see the module docstring). The fit
    minimises the weighted log-loss plus ``alpha * (||a - 1||^2 + ||b||^2)``
    (a ridge towards the identity map, which keeps the optimum finite on
    separable data) from the identity ``a = 1, b = 0``.

    Parameters
    ----------
    labels : array-like of shape (n_classes,), default=None
        The class of each column of ``X``, sorted; by default the classes
        of ``y`` (all must then occur).
    alpha : float, default=1e-4
        Strength of the ridge towards the identity, relative to the mean
        log-loss.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_classes_ : int
    coef_ : ndarray of shape (n_classes, n_classes)
        The diagonal matrix ``diag(a)``.
    intercept_ : ndarray of shape (n_classes,)

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.recalibration import VectorScaling
    >>> rng = np.random.default_rng(0)
    >>> P = rng.dirichlet(np.ones(3), 3000)
    >>> y = np.array([rng.choice(3, p=q ** 2 / (q ** 2).sum()) for q in P])
    >>> np.diag(VectorScaling().fit(P, y).coef_).round(0)  # the truth: P ** 2
    array([2., 2., 2.])
    """

    _diagonal = True


def _l2_penalty(strength):
    """``strength * (||W - I||^2 + ||b||^2)``: a ridge towards the identity map."""

    def penalty(W, b):
        D = W - np.eye(W.shape[0])
        return (
            strength * (np.sum(D * D) + b @ b),
            2.0 * strength * D,
            2.0 * strength * b,
        )

    penalty.curvature = lambda C: (np.full((C, C), 2.0 * strength), np.full(C, 2.0 * strength))
    return penalty


def _odir_penalty(lam, mu):
    """ODIR of Kull et al. (2019): ``lam/(C(C-1)) sum_{i!=j} W_ij^2 + mu/C sum_j b_j^2``."""

    def penalty(W, b):
        C = W.shape[0]
        off = W - np.diag(np.diag(W))
        s_w, s_b = lam / (C * (C - 1)), mu / C
        return (
            s_w * np.sum(off * off) + s_b * (b @ b),
            2.0 * s_w * off,
            2.0 * s_b * b,
        )

    def curvature(C):
        return (2.0 * lam / (C * (C - 1)) * (1.0 - np.eye(C)), np.full(C, 2.0 * mu / C))

    penalty.curvature = curvature
    return penalty


class MatrixScaling(_RidgeAffineScaling):
    """Matrix scaling: ``softmax(log(P) @ W.T + b)`` with an L2 penalty.

    Guo, C., Pleiss, G., Sun, Y. and Weinberger, K. Q. (2017), "On
    calibration of modern neural networks" (ICML 2017), on the logarithms of
    the input probabilities (floored at ``2.2e-16``, see the module
    docstring), which makes it the Dirichlet calibration map of Kull et al.
    (2019). The fit minimises the weighted mean log-loss plus
    ``alpha * (||W - I||_F^2 + ||b||^2)``: the ridge pulls towards the
    identity map (not towards ``W = 0``, the uniform prediction), so that a
    weak signal leaves the input nearly unchanged. The fit starts at
    ``W = I, b = 0``. For a strength chosen by cross-validation, use
    :class:`DirichletCalibration`.

    Parameters
    ----------
    labels : array-like of shape (n_classes,), default=None
        The class of each column of ``X``, sorted; by default the classes
        of ``y`` (all must then occur).
    alpha : float, default=1e-4
        Strength of the ridge towards the identity, relative to the mean
        log-loss.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_classes_ : int
    coef_ : ndarray of shape (n_classes, n_classes)
        ``W``.
    intercept_ : ndarray of shape (n_classes,)
        ``b``.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.recalibration import MatrixScaling
    >>> rng = np.random.default_rng(0)
    >>> P = rng.dirichlet(np.ones(3), 2000)
    >>> y = np.array([rng.choice(3, p=q) for q in P[:, [1, 0, 2]]])  # swapped
    >>> pred = MatrixScaling().fit(P, y).predict(P)
    >>> bool(np.mean(pred == P[:, [1, 0, 2]].argmax(1)) > 0.95)  # swap learnt
    True
    """

    _diagonal = False


class DirichletCalibration(_AffineLogScaling):
    """Dirichlet calibration with ODIR or L2 regularisation chosen by inner cross-validation.

    Kull, M., Perello-Nieto, M., Kängsepp, M., Silva Filho, T., Song, H. and
    Flach, P. (2019), "Beyond temperature scaling: Obtaining well-calibrated
    multiclass probabilities with Dirichlet calibration" (NeurIPS 2019). The
    map is ``softmax(log(P) @ W.T + b)`` (logarithms floored at
    ``2.2e-16``, see the module docstring), fitted by the weighted mean
    log-loss plus

    * ``reg="odir"`` (off-diagonal and intercept regularisation, the
      paper's choice): ``lambda / (C (C - 1)) * sum_{i != j} W_ij^2 +
      mu / C * sum_j b_j^2``; the diagonal of ``W`` is free, so a strong
      penalty leaves a per-class power of ``P``, renormalised;
    * ``reg="l2"``: ``lambda * (||W - I||_F^2 + ||b||^2)``, a ridge towards
      the identity map (the paper's L2 pulls ``W`` towards 0, the uniform
      prediction; towards the identity, a strong penalty returns the input).

    The strengths are chosen by ``cv``-fold cross-validation on the
    calibration data: for each ``lambda`` of the grid ``reg_lambdas``
    (default ``10**-5, 10**-4, ..., 10**4``; with ``mu = lambda`` unless
    ``reg_mus`` gives a separate grid, in which case every pair is tried) the
    out-of-fold weighted log-loss is summed over the folds, and the strength
    of smallest loss is refitted on all the data; ties go to the stronger
    penalty. Folds are stratified by class when every class has at least
    ``cv`` rows, plain shuffled folds otherwise; with fewer than ``2 * cv``
    rows there is no cross-validation and the strongest penalty is used.
    Along the grid (strong to weak) each fit starts from the previous
    solution (warm start); the first starts at the identity.

    Parameters
    ----------
    labels : array-like of shape (n_classes,), default=None
        The class of each column of ``X``, sorted; by default the classes
        of ``y`` (all must then occur).
    reg : {"odir", "l2"}, default="odir"
        The penalty.
    reg_lambdas : array-like of float, default=None
        The grid of ``lambda`` (positive); ``None`` is ``np.logspace(-5, 4, 10)``.
    reg_mus : array-like of float, default=None
        The grid of ``mu`` (ODIR only); ``None`` ties ``mu`` to ``lambda``.
    cv : int, default=3
        Number of inner folds.
    max_cv_samples : int or None, default=10_000
        The cross-validation runs on a random subset of this many rows when
        there are more (``None``: always on all rows); the chosen strengths
        are then multiplied by the subset's share of the total weight, which
        keeps the prior strength (total weight times ``lambda``) that won on
        the subset. The final fit always uses every row.
    random_state : int, RandomState instance or None, default=None
        The subset and the shuffling of the inner folds.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_classes_ : int
    coef_ : ndarray of shape (n_classes, n_classes)
        ``W``.
    intercept_ : ndarray of shape (n_classes,)
        ``b``.
    reg_lambda_, reg_mu_ : float
        The strengths of the final fit (``reg_mu_`` is ``lambda`` for
        ``reg="l2"``).
    cv_results_ : dict
        ``"reg_lambda"``, ``"reg_mu"`` and ``"log_loss"`` (the out-of-fold
        weighted mean log-loss) of each grid point, on the rows of the
        cross-validation; empty without cross-validation.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.recalibration import DirichletCalibration
    >>> rng = np.random.default_rng(0)
    >>> P = rng.dirichlet(np.ones(3), 1000)
    >>> y = np.array([rng.choice(3, p=q) for q in P[:, [1, 0, 2]]])  # swapped
    >>> cal = DirichletCalibration(random_state=0).fit(P, y)
    >>> bool((cal.predict(P) == y).mean() > (P.argmax(1) == y).mean())
    True
    """

    _parameter_constraints = {
        "labels": ["array-like", None],
        "reg": [StrOptions({"odir", "l2"})],
        "reg_lambdas": ["array-like", None],
        "reg_mus": ["array-like", None],
        "cv": [Interval(numbers.Integral, 2, None, closed="left")],
        "max_cv_samples": [Interval(numbers.Integral, 2, None, closed="left"), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        labels: ArrayLike | None = None,
        reg: str = "odir",
        reg_lambdas: ArrayLike | None = None,
        reg_mus: ArrayLike | None = None,
        cv: int = 3,
        max_cv_samples: int | None = 10_000,
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        self.labels = labels
        self.reg = reg
        self.reg_lambdas = reg_lambdas
        self.reg_mus = reg_mus
        self.cv = cv
        self.max_cv_samples = max_cv_samples
        self.random_state = random_state

    def _grid(self):
        lams = (
            np.logspace(-5, 4, 10)
            if self.reg_lambdas is None
            else np.asarray(self.reg_lambdas, dtype=np.float64).ravel()
        )
        mus = None
        if self.reg_mus is not None:
            if self.reg == "l2":
                raise ValueError(
                    'reg_mus applies to reg="odir" only; leave it None with reg="l2".'
                )
            mus = np.asarray(self.reg_mus, dtype=np.float64).ravel()
        for name, grid in (("reg_lambdas", lams), ("reg_mus", mus)):
            if grid is not None and (
                grid.size == 0 or not np.all(np.isfinite(grid)) or np.any(grid <= 0)
            ):
                raise ValueError(f"{name} must be a non-empty grid of positive floats.")
        if mus is None:
            pairs = [(lam, lam) for lam in lams]
        else:
            pairs = [(lam, mu) for lam in lams for mu in mus]
        # strong to weak, so that warm starts move away from the identity
        pairs.sort(key=lambda pair: (-(pair[0] + pair[1]), -pair[0]))
        return pairs

    def _penalty(self, lam, mu):
        return _l2_penalty(lam) if self.reg == "l2" else _odir_penalty(lam, mu)

    def _fit_one(self, rows, lam, mu, start):
        # Whitening conditions the log-loss but not the penalty: it is used
        # only when the penalty's curvature on an off-diagonal weight is below
        # 1e-4 of the log-loss's (about E[l_j^2] / C at the identity). The rule
        # was set for L-BFGS-B (n = 1e5, C = 10, ODIR: whitened 28 / 174 / 420 /
        # 444 passes at lambda = 1e-3 / 0.1 / 1 / 100, original coordinates
        # 152 / 199 / 83 / 48); the Newton steps are affine invariant, so for
        # them it only keeps the linear systems well scaled. The optimum is the
        # same either way.
        L, y, w, curv_data, cache = rows
        C = L.shape[1]
        curv_pen = 2 * lam * (1.0 if self.reg == "l2" else 1.0 / (C * (C - 1)))
        whiten = bool(curv_pen < 1e-4 * curv_data)
        if whiten not in cache:  # the rows' part of the objective, once per rows
            cache[whiten] = _affine_data(L, y, w, False, whiten)
        return _fit_affine(L, y, w, self._penalty(lam, mu), *start, whiten=whiten,
                           data=cache[whiten])

    @staticmethod
    def _rows(L, y, w):
        """The rows of a fit, with what every strength's fit on them shares."""
        C = L.shape[1]
        return L, y, w, (w @ (L * L)).mean() / (w.sum() * C), {}

    def _folds(self, y, w, rng):
        n = y.shape[0]
        counts = np.bincount(y[w > 0], minlength=self.n_classes_)
        if np.all(counts >= self.cv):
            splitter = StratifiedKFold(self.cv, shuffle=True, random_state=rng)
        else:
            splitter = KFold(self.cv, shuffle=True, random_state=rng)
        return list(splitter.split(np.zeros((n, 1)), y))

    def _fit(self, P, y, w):
        C = P.shape[1]
        L = _log_floor(P)
        pairs = self._grid()
        self.cv_results_ = {}
        n = y.shape[0]
        if n < 2 * self.cv or len(pairs) == 1:
            lam, mu = pairs[0]
            fitted = self._fit_one(self._rows(L, y, w), lam, mu, (np.eye(C), np.zeros(C)))
        else:
            rng = check_random_state(self.random_state)
            rows, scale = np.arange(n), 1.0
            if self.max_cv_samples is not None and n > self.max_cv_samples:
                rows = np.sort(rng.choice(n, self.max_cv_samples, replace=False))
                # keep the prior strength (total weight x lambda) chosen on
                # the subsample: lambda shrinks with the total weight
                scale = w[rows].sum() / w.sum()
            Ls, ys, ws = L[rows], y[rows], w[rows]
            losses = np.zeros(len(pairs))
            starts = []
            for train, test in self._folds(ys, ws, rng):
                if ws[train].sum() <= 0:
                    continue
                fitted = (np.eye(C), np.zeros(C))
                fold_rows = self._rows(Ls[train], ys[train], ws[train])
                L_test, y_test, w_test = Ls[test], ys[test], ws[test]
                for j, (lam, mu) in enumerate(pairs):
                    fitted = self._fit_one(fold_rows, lam, mu, fitted)
                    if len(starts) < len(pairs):
                        starts.append(fitted)
                    W, b = fitted
                    ST = W @ L_test.T + b[:, None]
                    loss, _ = _softmax_loss(ST, y_test, w_test, overwrite=True)
                    losses[j] += loss
            losses /= ws.sum()
            # ties (within rounding) go to the stronger penalty: the first
            best = int(np.flatnonzero(losses <= losses.min() * (1 + 1e-12) + 1e-15)[0])
            lam, mu = pairs[best][0] * scale, pairs[best][1] * scale
            self.cv_results_ = {
                "reg_lambda": np.array([p[0] for p in pairs]),
                "reg_mu": np.array([p[1] for p in pairs]),
                "log_loss": losses,
            }
            fitted = self._fit_one(self._rows(L, y, w), lam, mu, starts[best])
        self.reg_lambda_, self.reg_mu_ = float(lam), float(mu)
        self.coef_, self.intercept_ = fitted


def _sms_penalty(lam_b, lam_d, lam_o):
    """``lam_b ||b||^2 + lam_d ||diag(W - I)||^2 + lam_o ||offdiag(W)||^2``."""

    def penalty(W, b):
        D = W - np.eye(W.shape[0])
        diag = np.diag(np.diag(D))
        off = D - diag
        return (
            lam_b * (b @ b) + lam_d * np.sum(diag * diag) + lam_o * np.sum(off * off),
            2.0 * lam_d * diag + 2.0 * lam_o * off,
            2.0 * lam_b * b,
        )

    def curvature(C):
        eye = np.eye(C)
        return 2.0 * (lam_d * eye + lam_o * (1.0 - eye)), np.full(C, 2.0 * lam_b)

    penalty.curvature = curvature
    return penalty


class StructuredMatrixScaling(_AffineLogScaling):
    """Structured matrix scaling: temperature scaling, then a regularised matrix scaling.

    Berta, E., Holzmüller, D., Jordan, M. I. and Bach, F. (2026), "Structured
    matrix scaling for multi-class calibration" (AISTATS 2026). First
    :class:`TemperatureScaling` (no regularisation) gives ``T`` and the
    tempered prediction ``softmax(log(P) / T)`` (``P`` floored at
    ``2.2e-16`` inside the logarithm, see the module docstring), mixed with
    the uniform distribution at weight ``a = 1 / (n + 1)``: ``Q = (1 - a)
    softmax(log(P) / T) + a / K``. No class then gets less than ``a / K``,
    the smallest probability ``n`` rows can support, so the second step's
    inputs are bounded below by ``log(a / K)`` and exact zeros or extreme
    probabilities of the model do not dominate its fit (as in the authors'
    implementation, probmetrics' ``ts-mix`` before its matrix scaling).
    Then, on ``z = log(Q)``, the map ``softmax(z + Delta z + b)`` is fitted
    by minimising the weighted mean log-loss plus ``lam_b ||b||^2 + lam_d
    ||diag(Delta)||^2 + lam_o ||offdiag(Delta)||^2``, from ``Delta = 0, b =
    0`` with damped Newton steps on the analytic gradient and Hessian. The strengths
    are the paper's defaults, not tuned: ``lam_b = lam_d = K / n`` and
    ``lam_o = K (K - 1) / n`` for ``K`` classes, so that a small calibration
    set stays near temperature scaling and a large one may move every entry
    of the matrix. ``n`` is the effective number of rows ``(sum w)^2 / sum
    w^2`` (Kish): the number of rows for unit weights, unchanged when every
    weight is scaled. Binary input is the case ``K = 2`` on the columns
    ``(1 - p, p)``.

    When temperature scaling finds the uniform prediction best (``T =
    inf``, e.g. labels unrelated to or permuted from the input's classes),
    ``z`` is 0 and the second step fits the intercept only: as published,
    the method cannot then learn a permutation of the classes (use
    :class:`MatrixScaling` for that).

    Parameters
    ----------
    labels : array-like of shape (n_classes,), default=None
        The class of each column of ``X``, sorted; by default the classes
        of ``y`` (all must then occur).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_classes_ : int
    temperature_ : float
        The ``T`` of the first step (``inf`` when the uniform prediction is
        best; ``z`` is then 0).
    mixture_ : float
        ``a = 1 / (n + 1)``, the uniform distribution's weight in ``Q``.
    coef_ : ndarray of shape (n_classes, n_classes)
        ``I + Delta``: the map on ``log(Q)`` (0 when ``T`` is inf).
    intercept_ : ndarray of shape (n_classes,)
        ``b``.

    See Also
    --------
    MatrixScaling : The same map with one ridge strength, from the identity.
    DirichletCalibration : Strengths chosen by inner cross-validation.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.recalibration import StructuredMatrixScaling
    >>> rng = np.random.default_rng(0)
    >>> P = rng.dirichlet(np.ones(3), 3000)
    >>> truth = P ** 0.5 * [1.0, 2.0, 4.0]  # over-confident, class 2 under-predicted
    >>> truth /= truth.sum(axis=1, keepdims=True)
    >>> y = (truth.cumsum(axis=1) > rng.uniform(size=(3000, 1))).argmax(axis=1)
    >>> sms = StructuredMatrixScaling().fit(P, y)
    >>> bool(sms.temperature_ > 1.5)  # the first step: flatter
    True
    >>> err = np.abs(sms.predict_proba(P) - truth).mean()  # 0.01 (input: 0.16)
    >>> bool(err < 0.02)
    True
    """

    _parameter_constraints = {"labels": ["array-like", None]}

    def __init__(self, labels: ArrayLike | None = None) -> None:
        self.labels = labels

    def _fit(self, P, y, w):
        C = P.shape[1]
        ts = TemperatureScaling(labels=np.arange(C))._fit_canonical(P, y, w)
        n = w.sum() ** 2 / (w @ w)
        self.temperature_ = float(ts.temperature_)
        self.mixture_ = 1.0 / (n + 1.0)
        Z = self._first_step(P)
        penalty = _sms_penalty(C / n, C / n, C * (C - 1) / n)
        # no whitening: log(Q) lies in [log(a / K), 0] in every column, and when
        # T is large its spread is tiny, so the penalty, not the data, shapes the
        # curvature (whitened, L-BFGS-B used to stop early on such inputs)
        W, b = _fit_affine(Z, y, w, penalty, np.eye(C), np.zeros(C), whiten=False)
        self.coef_ = W if np.isfinite(self.temperature_) else np.zeros((C, C))
        self.intercept_ = b

    def _first_step(self, P):
        """``log(Q)``: the tempered prediction mixed with the uniform (0 if ``T`` is inf)."""
        if not np.isfinite(self.temperature_):
            return np.zeros(P.shape)
        C = P.shape[1]
        Q = _softmax(_log_floor(P) / self.temperature_)
        Q *= 1.0 - self.mixture_
        Q += self.mixture_ / C
        return np.log(Q)

    def _predict_proba(self, P):
        return _softmax(self._first_step(P) @ self.coef_.T + self.intercept_)
