import numpy as np
from numpy.typing import NDArray

def split_supply(
    values: NDArray[np.float64],
    mass: NDArray[np.float64],
    u: NDArray[np.float64],
    scale: float,
    supply: NDArray[np.float64],
    count: NDArray[np.intp],
) -> float: ...
def split_elements(
    values: NDArray[np.float64],
    mass: NDArray[np.float64],
    u: NDArray[np.float64],
    scale: float,
    index: NDArray[np.intp],
    cell: NDArray[np.intp],
) -> None: ...
def block_sums(
    values: NDArray[np.float64],
    mass: NDArray[np.float64],
    u: NDArray[np.float64],
    scale: float,
    lo: NDArray[np.intp],
    hi: NDArray[np.intp],
    cell: NDArray[np.intp],
    count: NDArray[np.intp],
    block_mass: NDArray[np.float64],
    block_cost: NDArray[np.float64],
) -> None: ...
def cut_blocks(
    values: NDArray[np.float64],
    mass: NDArray[np.float64],
    u: NDArray[np.float64],
    scale: float,
    lo: NDArray[np.intp],
    hi: NDArray[np.intp],
    cell: NDArray[np.intp],
    count: NDArray[np.intp],
    threshold: NDArray[np.float64],
    tol: float,
    pieces: NDArray[np.intp],
) -> int: ...
def transport_bounds(
    positives: NDArray[np.float64],
    weights: NDArray[np.float64],
    values: NDArray[np.float64],
    u: NDArray[np.float64],
    t: NDArray[np.float64],
    total: float,
    out: NDArray[np.float64],
) -> None: ...
