import numpy as np
from numpy.typing import NDArray

def simplex(
    values: NDArray[np.float64],
    mass0: NDArray[np.float64],
    mass1: NDArray[np.float64],
    u: NDArray[np.float64],
    divisor: float,
    max_iter: int,
    tol: float,
    penalty: float,
    potentials: NDArray[np.float64],
    out: NDArray[np.float64],
    totals: bool = ...,
) -> int: ...
