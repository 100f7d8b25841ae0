import numpy as np
from numpy.typing import NDArray

def split_by_event(
    v: NDArray[np.float64],
    event: NDArray[np.uint8],
    out: NDArray[np.float64],
) -> int: ...
def cutoff_two_sorted(
    p0: NDArray[np.float64],
    p1: NDArray[np.float64],
) -> tuple[float, float, float, int]: ...
def cutoff_unit(
    v: NDArray[np.float64],
    event: NDArray[np.uint8],
    work: NDArray[np.uint64],
) -> tuple[float, float, float, int] | None: ...
def rank_of_label(
    P: NDArray[np.float64],
    y: NDArray[np.intp],
    out: NDArray[np.intp],
) -> None: ...
def bucket_of(v: NDArray[np.float64], out: NDArray[np.intp]) -> None: ...
def cutoff_bounds(
    v: NDArray[np.float64],
    key: NDArray[np.intp],
    lo: int,
    hi: int,
    w: NDArray[np.float64],
) -> tuple[float, float, float]: ...
def top_k_mass_bound(
    P: NDArray[np.float64],
    rank: NDArray[np.intp],
    w: NDArray[np.float64],
    out: NDArray[np.float64],
) -> None: ...
def gather_top(
    P: NDArray[np.float64],
    lo: int,
    m: int,
    out: NDArray[np.float64],
    widths: NDArray[np.intp],
) -> int: ...
def sort_rows(
    P: NDArray[np.float64],
    lo: int,
    out: NDArray[np.float64],
    failed: NDArray[np.uint8],
) -> int: ...
