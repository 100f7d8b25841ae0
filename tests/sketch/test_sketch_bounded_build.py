"""A bounded sketch is built chunk by chunk (issue 26, item 4).

``CalibrationSketch(max_size=...)`` summarises its rows in chunks, each
fitted to ``max_size`` and merged in, so the build's temporaries do not
grow with the number of rows. The result must be the sketch built from all
rows at once, bit for bit (``to_bytes``), on random cases with ties,
weights (zeros, integers, reals), p in {0, 1}, one class and one row; and
the build's peak memory per row must be small and flat (it was 81 to 89
bytes a row at 10**6 rows before chunking: the memory test fails there).
"""

import tracemalloc

import numpy as np

import skcal.sketch._state as state_module
from skcal.sketch import CalibrationSketch

from cases import random_cases


def test_chunked_build_equals_the_build_at_once(monkeypatch):
    rng = np.random.default_rng(404)
    for y, p, w in random_cases(404, 160, max_n=120):
        max_size = int(rng.choice([2, 3, 5, 16, 1000]))
        monkeypatch.setattr(state_module, "_CHUNK_ROWS", 1 << 30)
        whole = CalibrationSketch(y, p, w, max_size=max_size)
        monkeypatch.setattr(state_module, "_CHUNK_ROWS", int(rng.integers(1, 9)))
        chunked = CalibrationSketch(y, p, w, max_size=max_size)
        assert chunked.to_bytes() == whole.to_bytes()


def test_bounded_build_memory_is_flat_in_rows():
    rng = np.random.default_rng(0)
    n = 600_000
    p = rng.random(n)
    y = (rng.random(n) < p).astype(np.int64)
    CalibrationSketch(max_size=4096).update(y[:1000], p[:1000])  # imports, caches
    tracemalloc.start()
    sketch = CalibrationSketch(max_size=4096).update(y, p)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert sketch.n_values <= 4096 and not sketch.exact
    assert peak / n < 30, f"{peak / n:.1f} bytes per row"
