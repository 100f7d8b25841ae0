"""Grouping unit-weight 0/1 rows: the radix sort against one ``np.sort`` of integer keys.

``skcal._grouped.group`` builds the grouped statistic every sorting measure
reads. For rows of unit weight with 0/1 outcomes it has two ways:

* ``radix``: one least-significant-digit radix sort of the predictions'
  bits carrying the outcome (``group_radix``);
* ``keys``: one int64 key per row, twice the prediction's bits plus the
  outcome (``label_keys``), sorted in place by ``np.sort`` (numpy's SIMD
  sort where it has one) and grouped in one pass (``group_label_keys``).

Both give the same statistic (checked here, and by ``tests/test_grouped.py``);
``group`` takes ``keys`` where numpy sorts with AVX-512
(``_numpy_simd_sort``). This prints, per size, the CPU time (median of
``--repeat``, this thread) of each way and of ``np.sort`` of the same
predictions, their ratios to it, and tracemalloc's peak in bytes per row;
the two ways alternate in one process on the same data. numpy's CPU
features are printed first.

With ``--weighted`` the rows get weights ~ U(0.5, 1.5) and the keys are
a prefix of the prediction's bits above the row index (``prefix_keys``,
``group_prefix_keys``); the yardstick is then ``np.argsort``. To see a host
whose numpy sorts with AVX2 only, switch numpy's AVX-512 off:
``NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR"`` (numpy 2.4 names;
``AVX512_SKX`` before).

    python benchmarks/bench_grouping.py
    python benchmarks/bench_grouping.py --sizes 1e4 1e5 1e6 1e7 --repeat 5
    python benchmarks/bench_grouping.py --weighted
"""

import argparse
import os

import numpy as np
from perf_table import peak_bytes, simd_features
from perf_table import timed as cpu_time

import skcal._grouped as grouped


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=float, default=[1e4, 1e5, 1e6, 1e7])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--weighted", action="store_true",
                        help="weights ~ U(0.5, 1.5); the yardstick is np.argsort")
    args = parser.parse_args()
    yard = "np.argsort" if args.weighted else "np.sort"
    print(f"numpy {np.__version__}; CPU features numpy uses: {simd_features()}; "
          f"group takes keys by default here: {grouped._KEY_SORT_AUTO}; "
          f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    x = "x arg" if args.weighted else "x sort"
    print(f"{'n':>10} {yard + ' ms':>13} {'radix ms':>9} {x:>7} {'keys ms':>9} "
          f"{x:>7} {'radix/keys':>11} {'radix B/row':>12} {'keys B/row':>12} same")
    saved = grouped._KEY_SORT
    try:
        for n in (int(s) for s in args.sizes):
            rng = np.random.default_rng(n)
            p = rng.random(n)
            y = (rng.random(n) < p**1.2).astype(np.int64)
            if args.weighted:
                w = rng.uniform(0.5, 1.5, n)
                base = cpu_time(lambda p=p: np.argsort(p), args.repeat)
            else:
                w = np.broadcast_to(1.0, (n,))
                base = cpu_time(lambda p=p: np.sort(p), args.repeat)
            times = {False: [], True: []}
            for _ in range(args.repeat):
                for keyed in (False, True):
                    grouped._KEY_SORT = keyed
                    times[keyed].append(cpu_time(lambda y=y, p=p, w=w: grouped.group(y, p, w), 1))
            radix, keys_t = (float(np.median(times[s])) for s in (False, True))
            stats, peaks = {}, {}
            for keyed in (False, True):
                grouped._KEY_SORT = keyed
                stats[keyed] = grouped.group(y, p, w)
                peaks[keyed] = peak_bytes(lambda y=y, p=p, w=w: grouped.group(y, p, w)) / n
            a, b = stats[False], stats[True]
            same = (np.array_equal(a.values, b.values) and np.array_equal(a.weights, b.weights)
                    and np.array_equal(a.positives, b.positives))
            print(f"{n:>10} {base * 1e3:>13.3f} {radix * 1e3:>9.3f} {radix / base:>7.2f} "
                  f"{keys_t * 1e3:>9.3f} {keys_t / base:>7.2f} {radix / keys_t:>11.2f} "
                  f"{peaks[False]:>12.1f} {peaks[True]:>12.1f} {same}", flush=True)
    finally:
        grouped._KEY_SORT = saved


if __name__ == "__main__":
    main()
