"""Reproduce Table 1 of paper 002 (Hu, Jambulapati, Tian, Yang; Section 6).

Synthetic data: ``v ~ U[0, 1 - e*]``, ``y ~ Bern(v + e*)`` with ``e* = 0.01``,
so the ground truth is ``dCE = smCE = 0.01``; ``n = 2^k + 1`` for
``k = 6..11``; 100 runs. For a measure ``d``, the paper reports the smallest
``epsilon`` in {0.01, 0.03, 0.05, 0.07, 0.1} such that a majority of the runs
of an epsilon-d-tester answer "yes", its testers answering "yes" iff ``d`` of
the sample is at most ``epsilon / 2`` (the paper's CVXPY dCE runs failed
beyond ``n = 2^9 + 1``).

Printed, with the paper's numbers beside ours:

1. that table, with the paper's rule ``d <= epsilon / 2``;
2. the same with the rules of 002 Theorem 3 (``smCE <= epsilon / 4``) and
   Theorem 4 (``dCE^U <= (epsilon + h) / 2``);
3. the median and quartiles of the statistics (the paper's Figure 3), and
   of ``|mean(y - v)|``, a lower bound on both (the constant test for smCE,
   Jensen's inequality for dCE, as in 002 Lemma 1);
4. the resample tester (``CalibrationTester(threshold="resample")``): its
   answer does not depend on epsilon, so the table shows the share of runs
   answering "not calibrated", the smallest epsilon a majority passes, and
   the median ``min_epsilon`` (the epsilon it certifies at that n).

    python benchmarks/repro_testing_table1.py                 # as in the paper
    python benchmarks/repro_testing_table1.py --runs 20 --dce-resamples 19
"""

import argparse
import platform
import time
import warnings

import numpy as np
from joblib import Parallel, delayed

import skcal
from skcal import (
    CalibrationTester,
    lower_distance_to_calibration,
    smooth_calibration_error,
)

EPS_STAR = 0.01
EPSILONS = (0.01, 0.03, 0.05, 0.07, 0.1)
EXPONENTS = range(6, 12)
GRID = 100  # dCE grid: h = 0.01
PAPER = {
    "smce": ["0.07", "0.05", "0.03", "0.03", "0.01", "0.01"],
    "dce": ["0.03", "0.01", "0.01", "—", "—", "—"],
    "cece": ["0.1", "0.1", "0.07", "0.07", "0.05", "0.03"],
}


def one_run(run, n, smce_resamples, dce_resamples):
    """Statistics and resample decisions on one synthetic data set."""
    rng = np.random.default_rng([run, n])
    p = rng.uniform(0, 1 - EPS_STAR, n)
    y = (rng.random(n) < p + EPS_STAR).astype(float)
    out = {
        "smce": smooth_calibration_error(y, p),
        "dce": lower_distance_to_calibration(y, p, grid=GRID),
        # a lower bound on both: the constant test (smCE) and Jensen (dCE)
        "bias": abs(np.mean(y - p)),
    }
    for measure, resamples in (("smce", smce_resamples), ("dce", dce_resamples)):
        if resamples:
            result = CalibrationTester(
                measure, n_resamples=resamples, resampling_risk=None, random_state=run
            ).decide(y, p)
            out[f"{measure}_reject"] = not result.calibrated
            out[f"{measure}_min_eps"] = result.min_epsilon
    return out


def smallest_passing(statistics, threshold_of):
    """Smallest epsilon whose tester says "yes" on a majority of the runs."""
    for eps in EPSILONS:
        if np.mean(statistics <= threshold_of(eps)) > 0.5:
            return f"{eps:g}"
    return "none"


def row(label, cells, width=9):
    return f"{label:<30}" + "".join(f"{c:>{width}}" for c in cells)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--smce-resamples", type=int, default=999)
    parser.add_argument("--dce-resamples", type=int, default=99)
    parser.add_argument("--n-jobs", type=int, default=-1)
    args = parser.parse_args()

    sizes = [2**k + 1 for k in EXPONENTS]
    print(
        f"skcal {skcal.__version__}, numpy {np.__version__}, "
        f"{platform.python_implementation()} {platform.python_version()}, "
        f"{platform.machine()}; {args.runs} runs; dCE grid h = {1 / GRID:g}"
    )
    start = time.perf_counter()
    stats = {}
    for n in sizes:
        t0 = time.perf_counter()
        runs = Parallel(n_jobs=args.n_jobs)(
            delayed(one_run)(run, n, args.smce_resamples, args.dce_resamples)
            for run in range(args.runs)
        )
        stats[n] = {key: np.array([r[key] for r in runs]) for key in runs[0]}
        print(f"  n = {n}: {time.perf_counter() - t0:.1f} s", flush=True)
    elapsed = time.perf_counter() - start

    header = row("n", [f"2^{k}+1" for k in EXPONENTS])
    print("\n1. Table 1: smallest epsilon passed by a majority, rule d <= eps/2")
    print(header)
    for measure, name in (("smce", "smCE"), ("dce", "dCE")):
        print(row(f"{name} (paper)", PAPER[measure]))
        print(
            row(
                f"{name} (skcal)",
                [smallest_passing(stats[n][measure], lambda e: e / 2) for n in sizes],
            )
        )
    print(row("cECE (paper; not reproduced)", PAPER["cece"]))
    print(row("ground truth", ["0.01"] * len(sizes)))
    print("   for comparison, the rule d <= eps (no halving):")
    for measure, name in (("smce", "smCE"), ("dce", "dCE")):
        print(
            row(
                f"{name} (skcal, d <= eps)",
                [smallest_passing(stats[n][measure], lambda e: e) for n in sizes],
            )
        )

    print("\n2. The same with the rules of 002 Theorems 3 and 4")
    print(header)
    print(
        row(
            "smCE <= eps/4 (Thm 3)",
            [smallest_passing(stats[n]["smce"], lambda e: e / 4) for n in sizes],
        )
    )
    print(
        row(
            "dCE^U <= (eps+h)/2 (Thm 4)",
            [
                smallest_passing(stats[n]["dce"], lambda e: (e + 1 / GRID) / 2)
                for n in sizes
            ],
        )
    )

    print("\n3. Statistics: 25% / median / 75% quantiles over the runs (Figure 3)")
    print(header)
    for measure, name in (
        ("smce", "smCE"),
        ("dce", "dCE^U (h = 0.01)"),
        ("bias", "|mean(y - v)| <= both"),
    ):
        for q, label in ((25, "q25"), (50, "median"), (75, "q75")):
            print(
                row(
                    f"{name} {label}",
                    [f"{np.percentile(stats[n][measure], q):.4f}" for n in sizes],
                )
            )

    print("\n4. Resample tester (alpha = 0.05): same data, dCE = 0.01 > 0")
    print(header)
    for measure, name, resamples in (
        ("smce", "smCE", args.smce_resamples),
        ("dce", "dCE", args.dce_resamples),
    ):
        if not resamples:
            continue
        reject = [stats[n][f"{measure}_reject"].mean() for n in sizes]
        print(
            row(
                f"{name} (B={resamples}) % 'not calib.'",
                [f"{100 * r:.0f}%" for r in reject],
            )
        )
        print(
            row(
                f"{name} smallest eps passed",
                ["0.01" if r < 0.5 else "none" for r in reject],
            )
        )
        print(
            row(
                f"{name} median min_epsilon",
                [f"{np.median(stats[n][f'{measure}_min_eps']):.3f}" for n in sizes],
            )
        )
    print(f"\ntotal {elapsed:.0f} s with n_jobs={args.n_jobs}")


if __name__ == "__main__":
    warnings.simplefilter("ignore", UserWarning)
    main()
