import numpy as np
from numpy.typing import NDArray

def group_rows_exact(
    p: NDArray[np.float64],
    y: NDArray[np.uint8] | NDArray[np.int64],
    w: NDArray[np.float64],
    values: NDArray[np.float64],
    neg: NDArray[np.float64],
    pos: NDArray[np.float64],
    rows: NDArray[np.float64],
) -> tuple[int, int]: ...
def group_keys_exact(
    keys: NDArray[np.uint64],
    p: NDArray[np.float64],
    y: NDArray[np.uint8] | NDArray[np.int64],
    w: NDArray[np.float64],
    values: NDArray[np.float64],
    neg: NDArray[np.float64],
    pos: NDArray[np.float64],
    b: int,
) -> tuple[int, int]: ...
