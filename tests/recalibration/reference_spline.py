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
