import numpy as np
from numpy.typing import NDArray

def dual_frontiers(
    B: NDArray[np.float64],
    d: NDArray[np.float64],
    positions: NDArray[np.float64],
    heap: NDArray[np.float64],
    tree: NDArray[np.float64],
    front: NDArray[np.float64],
    peak: NDArray[np.float64],
) -> None: ...
def backtrack(
    B: NDArray[np.float64],
    d: NDArray[np.float64],
    front: NDArray[np.float64],
    x: NDArray[np.float64],
) -> float: ...
def smce_value(
    values: NDArray[np.float64],
    weights: NDArray[np.float64],
    positives: NDArray[np.float64],
    total: float,
    heap: NDArray[np.float64],
) -> float: ...
def smce_one_side(
    values: NDArray[np.float64],
    weights: NDArray[np.float64],
    positives: NDArray[np.float64],
    total: float,
    heap: NDArray[np.float64],
    buckets: bool = False,
) -> float: ...
def smce_bernoulli(
    values: NDArray[np.float64],
    uniforms: NDArray[np.float64],
    scale: float,
    total: float,
    heap: NDArray[np.float64],
) -> float: ...
def smce_null_draw(
    values: NDArray[np.float64],
    bit_generator: np.random.BitGenerator,
    scale: float,
    total: float,
    heap: NDArray[np.float64],
) -> float: ...
def smce_null_bracket(
    values: NDArray[np.float64],
    bit_generator: np.random.BitGenerator,
    scale: float,
    total: float,
    ends: NDArray[np.intp],
    means: NDArray[np.float64],
    positives: NDArray[np.float64],
    heap: NDArray[np.float64],
) -> tuple[float, float]: ...
def smce_null_bracket_rows(
    p: NDArray[np.float64],
    w: NDArray[np.float64],
    wd: NDArray[np.float64],
    group: NDArray[np.intp],
    bit_generator: np.random.BitGenerator,
    positives: NDArray[np.float64],
) -> float: ...
def _set_buckets(on: bool, divisor: int = 16, budget: int = 16) -> None: ...
def _handover_step() -> int: ...
def _set_inline_pcg64(on: bool) -> None: ...
def smce_null_draw_counts(
    values: NDArray[np.float64],
    weights: NDArray[np.float64],
    counts: NDArray[np.int64],
    bit_generator: np.random.BitGenerator,
    scale: float,
    total: float,
    heap: NDArray[np.float64],
    positives: NDArray[np.float64],
) -> float: ...
def smce_null_bracket_counts(
    values: NDArray[np.float64],
    counts: NDArray[np.int64],
    bit_generator: np.random.BitGenerator,
    scale: float,
    total: float,
    ends: NDArray[np.intp],
    means: NDArray[np.float64],
    positives: NDArray[np.float64],
    heap: NDArray[np.float64],
) -> tuple[float, float]: ...
