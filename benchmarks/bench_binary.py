"""Time every binary measure against a numpy baseline on the same data.

Sorting measures (smCE, cutoff, CDL, and the LP-based dCE for scale) are
compared with ``np.argsort`` of the predictions; one-pass measures (SCDL,
binned ECE) with one weighted ``np.bincount`` of precomputed bin indices into
1024 bins (and, for binned ECE, also into its own 15 bins). Each time is the median of ``--repeat``
runs of the full public call, validation included.

    python benchmarks/bench_binary.py               # n = 10^3 ... 10^7, 2^14 and 2^20
    python benchmarks/bench_binary.py --max-exp 6   # quicker
"""

import argparse
import platform
import time

import numpy as np

import skcal


def median_time(func, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        func()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def make_data(n, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.random(n)
    # mildly miscalibrated, the common case in practice
    y = (rng.random(n) < p**1.2).astype(np.int64)
    return y, p


def baselines(y, p, repeat):
    n = p.shape[0]
    w = np.ones(n)
    idx = np.minimum((p * 1024).astype(np.intp), 1023)
    idx15 = np.minimum((p * 15).astype(np.intp), 14)
    return {
        "argsort": median_time(lambda: np.argsort(p), repeat),
        "bincount": median_time(
            lambda: np.bincount(idx, weights=w, minlength=1024), repeat
        ),
        # into the 15 bins of binned_ece, to show the bin count is not what
        # makes the ratio
        "bincount15": median_time(
            lambda: np.bincount(idx15, weights=w, minlength=15), repeat
        ),
    }


MEASURES = [
    # name, function, baseline, largest n to run
    ("smooth_calibration_error", skcal.smooth_calibration_error, "argsort", 10**7),
    ("cutoff_calibration_error", skcal.cutoff_calibration_error, "argsort", 10**7),
    ("soft_binned_cdl", skcal.soft_binned_cdl, "bincount", 10**7),
    ("binned_ece", skcal.binned_ece, "bincount", 10**7),
    ("binned_ece", skcal.binned_ece, "bincount15", 10**7),
    ("calibration_decision_loss", skcal.calibration_decision_loss, "argsort", 10**5),
    # an LP on the grid h = 0.01 (issue target: n = 2^14 in under 30 s)
    ("lower_distance_to_calibration", skcal.lower_distance_to_calibration, "argsort", 10**6),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-exp", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    sizes = sorted({10**k for k in range(3, args.max_exp + 1)} | {2**14, 2**20})
    machine = platform.processor() or platform.machine()
    print(f"skcal {skcal.__version__}, numpy {np.__version__}, {machine}")
    print(f"median of {args.repeat} runs; ratio = measure time / baseline time\n")
    print(
        f"{'n':>9}  {'measure':<30} {'time [s]':>10}  {'baseline':>10} "
        f"{'base [s]':>10}  {'ratio':>6}"
    )
    for n in sizes:
        y, p = make_data(n)
        base_times = baselines(y, p, args.repeat)
        for name, func, base, max_n in MEASURES:
            if n > max_n:
                continue
            rep = args.repeat if n <= 2**20 else max(1, args.repeat // 2)
            t = median_time(lambda func=func, y=y, p=p: func(y, p), rep)
            t_base = base_times[base]
            print(
                f"{n:>9}  {name:<30} {t:>10.4f}  {base:>10} {t_base:>10.4f}  {t / t_base:>6.2f}"
            )
        print()


if __name__ == "__main__":
    main()
