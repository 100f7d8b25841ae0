"""smCE's pass after the grouping, against ``np.sort`` and a linear-time isotonic regression.

After the grouping, smCE's value is ``|B_K|`` plus an L1 isotonic regression of
the clipped prefix sums ``B_k`` with weights ``d_k`` (the identity at the top of
``skcal/_kernels/_flow.pyx``); the walk (``smce_one_side`` with buckets) is
that regression's slope trick. This prints, per size, the CPU time (median of
``--repeat`` calls of this thread, after one untimed call) of

* ``np.sort`` of the predictions (the yardstick of issue 26);
* the grouping (``binary_statistic``, validation included) that every sorting
  measure pays first;
* the walk on the grouped statistic;
* scipy's isotonic regression (``scipy.optimize.isotonic_regression``: the
  L2 pool-adjacent-violators algorithm, a linear-time pass of a simpler
  problem) of the same clipped prefix sums with the same weights,

their ratios to ``np.sort``, and tracemalloc's peak of the walk in bytes per
value. The data are those of ``bench_binary.py`` (``p ~ U(0, 1)``, ``y ~
Bernoulli(p ** 1.2)``). numpy's CPU features are printed first.

It measures what the smCE targets of issue 26 leave for the walk: at ``n =
10**7`` the target is 2.5 times ``np.sort`` for grouping and walk together;
at ``10**5`` it is 3 times.

    python benchmarks/bench_smce_walk.py
    python benchmarks/bench_smce_walk.py --sizes 1e5 1e6 1e7 --repeat 7
"""

import argparse
import os

import numpy as np
import scipy
from bench_variants import median_time as cpu_time
from perf_table import cpu_model, peak_bytes, simd_features
from scipy.optimize import isotonic_regression

from skcal._grouped import binary_statistic
from skcal._kernels._flow import smce_one_side


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=float, default=[1e4, 1e5, 1e6, 1e7])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"CPU: {cpu_model()}; numpy {np.__version__}, scipy {scipy.__version__}; "
          f"CPU features numpy uses: "
          f"{simd_features()}; load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'n':>10} {'np.sort ms':>11} {'grouping':>9} {'x sort':>7} {'walk ms':>9} "
          f"{'x sort':>7} {'both x':>7} {'L2 PAVA ms':>11} {'x sort':>7} {'walk B/value':>13}")
    for n in (int(s) for s in args.sizes):
        rng = np.random.default_rng(n)
        p = rng.random(n)
        y = (rng.random(n) < p**1.2).astype(np.int64)
        sort = cpu_time(lambda p=p: np.sort(p), args.repeat)
        group = cpu_time(lambda y=y, p=p: binary_statistic(y, p, None, rescale=True),
                         args.repeat)
        st = binary_statistic(y, p, None, rescale=True)
        K = st.values.shape[0]
        heap = np.empty(2 * K)

        def walk(st=st, heap=heap):
            return smce_one_side(st.values, st.weights, st.positives, st.total, heap, True)

        walk_t = cpu_time(walk, args.repeat)
        # the same regression's data: the clipped prefix sums on the side of B_K
        B = np.cumsum((st.positives - st.values * st.weights) / st.total)
        c = abs(B[-1])
        x = np.clip(np.sign(B[-1]) * B[:-1], 0.0, c)
        d = np.diff(st.values)
        pava = cpu_time(lambda x=x, d=d: isotonic_regression(x, weights=d), args.repeat)
        peak = peak_bytes(walk) / K
        print(f"{n:>10} {sort * 1e3:>11.2f} {group * 1e3:>9.2f} {group / sort:>7.2f} "
              f"{walk_t * 1e3:>9.2f} {walk_t / sort:>7.2f} {(group + walk_t) / sort:>7.2f} "
              f"{pava * 1e3:>11.2f} {pava / sort:>7.2f} {peak:>13.1f}", flush=True)


if __name__ == "__main__":
    main()
