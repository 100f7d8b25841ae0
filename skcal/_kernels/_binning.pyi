import numpy as np
from numpy.typing import NDArray

def soft_bin(
    p: NDArray[np.float64],
    y: NDArray[np.uint8],
    w: NDArray[np.float64],
    bins: NDArray[np.float64],
) -> None: ...
def coarsen(fine: NDArray[np.float64], coarse: NDArray[np.float64]) -> None: ...
def scdl_level(bins: NDArray[np.float64], work: NDArray[np.float64]) -> float: ...
def uniform_bin_sums(
    p: NDArray[np.float64],
    y: NDArray[np.uint8],
    w: NDArray[np.float64],
    edges: NDArray[np.float64],
    sums: NDArray[np.float64],
) -> None: ...
def checked_top_label(
    P: NDArray[np.float64],
    conf: NDArray[np.float64],
    pred: NDArray[np.intp],
    sums: NDArray[np.float64],
) -> bool: ...
def checked_soft_bin(
    p: NDArray[np.float64],
    y: NDArray[np.uint8] | NDArray[np.intc] | NDArray[np.int64] | NDArray[np.float64],
    w: NDArray[np.float64] | None,
    tables: NDArray[np.float64],
) -> bool: ...
def checked_uniform_bin_sums(
    p: NDArray[np.float64],
    y: NDArray[np.uint8] | NDArray[np.intc] | NDArray[np.int64] | NDArray[np.float64],
    w: NDArray[np.float64] | None,
    edges: NDArray[np.float64],
    sums: NDArray[np.float64],
) -> bool: ...
