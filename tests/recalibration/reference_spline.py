"""Slow twins for the spline calibration: the penalised fit by a generic optimiser."""

import numpy as np
from scipy.optimize import minimize


def penalised_logistic(B, W, T, penalty):
    """Minimise ``sum(W softplus(B b) - T B b) / sum(W) + b' penalty b`` with BFGS."""
    total = W.sum()

    def fun(b):
        f = B @ b
        return (W @ np.logaddexp(0.0, f) - T @ f) / total + b @ penalty @ b

    return minimize(fun, np.zeros(B.shape[1]), method="BFGS",
                    options={"gtol": 1e-10, "maxiter": 10000}).x


def roughness(f, lo, hi, n=200001):
    """``integral_lo^hi f''(u)^2 du`` by central differences and the trapezoid rule."""
    u = np.linspace(lo, hi, n)
    h = u[1] - u[0]
    second = (f(u[2:]) - 2 * f(u[1:-1]) + f(u[:-2])) / h ** 2
    # np.trapz: numpy 1.23, the oldest supported, has no np.trapezoid
    f = second ** 2
    return float(np.sum((f[1:] + f[:-1]) * np.diff(u[1:-1])) / 2.0)


def newton_one(B, W, S, penalty, beta):
    """Newton's method on one problem, written plainly (the fit's steps, one problem at a time).

    Minimises ``sum(W softplus(B b) - S B b) / sum(W) + b' penalty b`` from
    ``beta``: the step halved until the objective does not increase, stopping
    after a step that decreased it by less than ``1e-12`` relative or after
    100 steps (the rules of ``skcal.recalibration._spline._newton_batch``).
    """
    from scipy.special import expit

    total = W.sum()

    def objective(b):
        f = B @ b
        return (W @ np.logaddexp(0.0, f) - S @ f) / total + b @ penalty @ b

    value = objective(beta)
    for _ in range(100):
        s = expit(B @ beta)
        grad = B.T @ (W * s - S) / total + 2.0 * penalty @ beta
        hess = (B.T * (W * s * (1.0 - s))) @ B / total + 2.0 * penalty
        try:
            step = np.linalg.solve(hess, grad)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(hess, grad, rcond=None)[0]
        t = 1.0
        while True:
            candidate = beta - t * step
            new = objective(candidate)
            if new <= value or t < 1e-10:
                break
            t /= 2.0
        converged = value - new < 1e-12 * max(1.0, abs(value))
        beta, value = candidate, min(new, value)
        if converged:
            break
    return beta
