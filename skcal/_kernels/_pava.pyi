import numpy as np
from numpy.typing import NDArray

def prefix_block_starts(
    C: NDArray[np.float64],
    D: NDArray[np.float64],
    L: NDArray[np.intp],
    stack: NDArray[np.intp],
) -> None: ...
def suffix_block_ends(
    C: NDArray[np.float64],
    D: NDArray[np.float64],
    R: NDArray[np.intp],
    stack: NDArray[np.intp],
) -> None: ...
def venn_abers_pairs(
    W: NDArray[np.float64],
    S: NDArray[np.float64],
    C: NDArray[np.float64],
    D: NDArray[np.float64],
    L: NDArray[np.intp],
    R: NDArray[np.intp],
    p0: NDArray[np.float64],
    p1: NDArray[np.float64],
) -> None: ...
