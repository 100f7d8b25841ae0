import numpy as np
from numpy.typing import NDArray

def group_sorted(
    p: NDArray[np.float64],
    y: NDArray[np.float64],
    w: NDArray[np.float64],
    order: NDArray[np.intp],
    values: NDArray[np.float64],
    wsum: NDArray[np.float64],
    wysum: NDArray[np.float64],
) -> int: ...
def group_two_sorted(
    p0: NDArray[np.float64],
    p1: NDArray[np.float64],
    values: NDArray[np.float64],
    wsum: NDArray[np.float64],
    wysum: NDArray[np.float64],
) -> int: ...
def max_abs_interval_grouped(
    values: NDArray[np.float64],
    weights: NDArray[np.float64],
    positives: NDArray[np.float64],
    total: float,
) -> tuple[float, int, int, int]: ...
def max_abs_interval(b: NDArray[np.float64]) -> tuple[float, int, int, int]: ...
def max_abs_interval_rows(
    v: NDArray[np.float64],
    r: NDArray[np.float64],
    w: NDArray[np.float64],
    order: NDArray[np.intp],
    value: NDArray[np.float64],
    lower: NDArray[np.float64],
    upper: NDArray[np.float64],
    sign: NDArray[np.int8],
) -> None: ...
def decision_hull(
    values: NDArray[np.float64],
    weights: NDArray[np.float64],
    positives: NDArray[np.float64],
    total: float,
) -> tuple[NDArray[np.float64], NDArray[np.float64], float, float]: ...
def label_keys(
    p: NDArray[np.float64],
    y: NDArray[np.uint8],
    keys: NDArray[np.uint64],
) -> bool: ...
def group_label_keys(
    keys: NDArray[np.uint64],
    values: NDArray[np.float64],
    weights: NDArray[np.float64],
    positives: NDArray[np.float64],
) -> int: ...
def group_label_keys32(
    keys: NDArray[np.uint32],
    values: NDArray[np.float64],
    weights: NDArray[np.float64],
    positives: NDArray[np.float64],
) -> int: ...
def label_keys32(
    p: NDArray[np.float64],
    y: NDArray[np.uint8],
    keys: NDArray[np.uint32],
) -> bool: ...
def group_radix(
    p: NDArray[np.float64],
    y: NDArray[np.uint8],
    w: NDArray[np.float64],
    values: NDArray[np.float64],
    wsum: NDArray[np.float64],
    wysum: NDArray[np.float64],
    work: NDArray[np.float64],
) -> int: ...
def argsort_rows(V: NDArray[np.float64], order: NDArray[np.intp]) -> None: ...
def cutoff_label_keys(
    keys: NDArray[np.uint32] | NDArray[np.uint64], total: float
) -> tuple[float, float, float, int]: ...
def index_bits(n: int) -> int: ...
def prefix_keys(p: NDArray[np.float64], keys: NDArray[np.uint64], b: int) -> bool: ...
def group_prefix_keys(
    keys: NDArray[np.uint64],
    p: NDArray[np.float64],
    y: NDArray[np.uint8],
    w: NDArray[np.float64],
    values: NDArray[np.float64],
    weights: NDArray[np.float64],
    positives: NDArray[np.float64],
    b: int,
) -> int: ...
def zero_one_labels(y: NDArray[np.float64], out: NDArray[np.uint8]) -> int: ...
