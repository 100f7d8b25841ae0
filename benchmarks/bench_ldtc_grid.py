"""dCE on fine grids: the sparse sub-grid solve against one solve on every point.

``lower_distance_to_calibration(grid=m)`` solves a flow program with about
``2 (m + 1)`` rows. On a grid much finer than the data it now solves on the
points next to the data plus a coarse subset and adds points by column
generation (``_solve_on_sparse_grid``). This prints, for n = 200 and 2000
uniform predictions, the time of the public call, the time of the one solve
on the whole grid (the previous method; skipped above ``--full-max``), both
values, and the peak memory of the public call (tracemalloc).

    python benchmarks/bench_ldtc_grid.py
"""

import argparse
import time
import tracemalloc

import numpy as np

import skcal
from skcal._grouped import group
from skcal.metrics._ldtc import _solve_on_grid


def timed(func):
    t0 = time.perf_counter()
    out = func()
    return out, time.perf_counter() - t0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full-max", type=int, default=3000)
    args = parser.parse_args()
    print(f"skcal {skcal.__version__}, numpy {np.__version__}")
    print(f"{'n':>6} {'grid':>7} {'sparse [s]':>10} {'full [s]':>9} {'ratio':>7} "
          f"{'|value diff|':>12} {'peak MB':>8}")
    for n in (200, 2000):
        rng = np.random.default_rng(n)
        p = rng.random(n)
        y = (rng.random(n) < p).astype(int)
        g = group(y.astype(float), p, np.ones(n))
        for m in (100, 1000, 3000, 10_000, 100_000):
            value, t_sparse = timed(
                lambda y=y, p=p, m=m: skcal.lower_distance_to_calibration(y, p, grid=m)
            )
            tracemalloc.start()
            skcal.lower_distance_to_calibration(y, p, grid=m)
            peak = tracemalloc.get_traced_memory()[1] / 2**20
            tracemalloc.stop()
            if m <= args.full_max:
                u = np.linspace(0, 1, m + 1)
                (full, _), t_full = timed(
                    lambda g=g, u=u: _solve_on_grid(
                        g.values, g.weights - g.positives, g.positives, u
                    )
                )
                print(f"{n:>6} {m:>7} {t_sparse:>10.3f} {t_full:>9.3f} "
                      f"{t_full / t_sparse:>7.1f} {abs(full - value):>12.1e} {peak:>8.1f}")
            else:
                print(f"{n:>6} {m:>7} {t_sparse:>10.3f} {'-':>9} {'-':>7} {'-':>12} {peak:>8.1f}")


if __name__ == "__main__":
    main()
