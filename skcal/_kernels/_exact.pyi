import numpy as np
from numpy.typing import NDArray

def term_columns(
    v: NDArray[np.float64], x: NDArray[np.float64], product: bool, absolute: bool = False
) -> tuple[int, int] | None: ...
def deposit(
    index: NDArray[np.int64],
    v: NDArray[np.float64],
    x: NDArray[np.float64],
    product: bool,
    offset: int,
    out: NDArray[np.int64],
) -> None: ...
def deposit_signed_runs(
    counts: NDArray[np.int64],
    signed: NDArray[np.float64],
    offset: int,
    out: NDArray[np.int64],
) -> None: ...
