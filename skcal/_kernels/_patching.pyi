import numpy as np
from numpy.typing import NDArray

def shifted_step(
    P: NDArray[np.float64],
    U: NDArray[np.float64],
    c: float,
    out: NDArray[np.float64],
) -> bool: ...
def project_shifted(S: NDArray[np.float64], sums: NDArray[np.float64]) -> None: ...
def rank_utilities(
    P: NDArray[np.float64],
    y: NDArray[np.intp],
    kind: NDArray[np.intp],
    param: NDArray[np.intp],
    V: NDArray[np.float64],
    R: NDArray[np.float64],
    rows: NDArray[np.intp],
) -> None: ...
def top_k_rows(P: NDArray[np.float64], k: int, U: NDArray[np.float64]) -> None: ...
def interval_upper_bounds(
    v: NDArray[np.float64],
    r: NDArray[np.float64],
    w: NDArray[np.float64],
    bound: NDArray[np.float64],
) -> None: ...
def scatter_row_brier(
    squares: NDArray[np.float64],
    P: NDArray[np.float64],
    y: NDArray[np.intp],
    index: NDArray[np.intp],
    loss: NDArray[np.float64],
) -> None: ...
def step_project(
    P: NDArray[np.float64],
    U: NDArray[np.float64],
    c: float,
    out: NDArray[np.float64],
    sums: NDArray[np.float64],
) -> bool: ...
