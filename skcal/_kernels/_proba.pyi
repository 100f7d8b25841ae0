import numpy as np
from numpy.typing import NDArray

def check_top_label(
    P: NDArray[np.float64],
    tol: float,
    conf: NDArray[np.float64],
    pred: NDArray[np.intp],
) -> int: ...
def check_rows(P: NDArray[np.float64], tol: float) -> int: ...
