"""Measured MSR of the online forecaster of Hu and Wu (Algorithm 1) and baselines.

For each horizon T and each outcome process, every forecaster plays its own
game (adaptive adversaries answer to that forecaster's own history) and the
maximum swap regret of its T forecasts is computed exactly with
``skcal.maximum_swap_regret``. The table prints MSR / (sqrt(T) ln T), the
normalisation of Theorem 5.1 of Hu and Wu, *Predict to Minimize Swap Regret
for All Payoff-Bounded Tasks* (mean and standard deviation over replicates).

Outcome processes:

* ``iid``: i.i.d. Bernoulli(0.3);
* ``drift``: Bernoulli(0.5 + 0.4 sin(6 pi t / T)), three slow cycles;
* ``adv-half``: adaptive, outcome 1 exactly when the previous forecast was
  below 1/2 (chosen from the history, before the round's random draw);
* ``adv-freq``: adaptive, outcome 1 exactly when the previous forecast was
  below the running frequency of the outcomes so far.

Forecasters:

* ``MSR``: ``skcal.online.OnlineMSRForecaster(horizon=T)``, ``m =
  round(sqrt(T) / ln T)`` buckets;
* ``freq``: the running frequency of past outcomes (1/2 at t = 1);
* ``last``: the last outcome (1/2 at t = 1);
* ``ECE-greedy``: minimises binned ECE only: each round it forecasts the
  centre ``(i - 1/2)/m`` of the bin (same ``m``) whose worst-case increase of
  ``sum_i |sum_{t in bin i} (y_t - p_t)|`` over the two outcomes is smallest
  (ties: the bin whose running residual is closest to 1/2 - centre);

strong baselines:

* ``freq-rr``: the running frequency rounded at random to a neighbouring
  point of the grid ``k/m`` (same ``m``), mean preserved, with its own coins;
* ``calibeat``: calibeating in the manner of Foster and Hart (*"Calibeating":
  beating forecasters at their own game*, Theoretical Economics 2023): the
  running frequency is binned into ``m`` equal bins, and the forecast is the
  average outcome of the earlier rounds whose running frequency fell in the
  same bin (the running frequency itself while the bin is empty);
* ``MSR-2sqrtT``: ``OnlineMSRForecaster(horizon=T, n_buckets=round(2
  sqrt(T)))``, a finer grid than the paper's ``m ~ sqrt(T) / log T``.

Columns ``T/m`` (the rounding term ``beta T`` of Lemma 5.2 with ``beta =
1/m``, in the same units) and the forecaster's ``sum_i n_i |q_i - mean y in
bucket i|`` (its bucket-wise bias, ``sum_i G_i`` of Lemma 5.2) are printed
for the MSR forecaster, to show which term of the bound is at work.

Run: ``python benchmarks/online_msr.py [--quick] [--max-horizon T]``
(``--quick``: T up to 1e4).
"""

import argparse
import math
import platform
import resource
import sys
import time

import numpy as np

from skcal import maximum_swap_regret
from skcal.online import OnlineMSRForecaster

# --- outcome processes: (name, factory) -> adversary(forecasts, outcomes, t, T, rng)


def iid(forecasts, outcomes, t, T, rng):
    return int(rng.uniform() < 0.3)


def drift(forecasts, outcomes, t, T, rng):
    return int(rng.uniform() < 0.5 + 0.4 * math.sin(6 * math.pi * t / T))


def adv_half(forecasts, outcomes, t, T, rng):
    return int(t == 0 or forecasts[-1] < 0.5)


def adv_freq(forecasts, outcomes, t, T, rng):
    if t == 0:
        return 1
    return int(forecasts[-1] < outcomes.mean())


PROCESSES = {"iid": iid, "drift": drift, "adv-half": adv_half, "adv-freq": adv_freq}


# --- forecasters: objects with predict() and update(y) --------------------------------


class Frequency:
    def __init__(self):
        self.n, self.s = 0, 0

    def predict(self):
        return 0.5 if self.n == 0 else self.s / self.n

    def update(self, y):
        self.n += 1
        self.s += y


class Last:
    def __init__(self):
        self.last = 0.5

    def predict(self):
        return self.last

    def update(self, y):
        self.last = float(y)


class FrequencyRandomRounding:
    def __init__(self, m, seed):
        self.m = m
        self.n, self.s = 0, 0
        self.rng = np.random.default_rng(seed + 17)

    def predict(self):
        q = 0.5 if self.n == 0 else self.s / self.n
        k = min(int(math.floor(q * self.m)), self.m - 1)
        up = self.rng.uniform() < q * self.m - k
        return (k + up) / self.m

    def update(self, y):
        self.n += 1
        self.s += y


class Calibeating:
    def __init__(self, m):
        self.m = m
        self.n, self.s = 0, 0
        self.count = np.zeros(m)
        self.total = np.zeros(m)
        self.bin = None

    def predict(self):
        q = 0.5 if self.n == 0 else self.s / self.n
        self.bin = min(int(q * self.m), self.m - 1)
        if self.count[self.bin] == 0:
            return q
        return self.total[self.bin] / self.count[self.bin]

    def update(self, y):
        self.count[self.bin] += 1
        self.total[self.bin] += y
        self.n += 1
        self.s += y


class ECEGreedy:
    def __init__(self, m):
        self.m = m
        self.centres = (np.arange(m) + 0.5) / m
        self.residual = np.zeros(m)  # sum of (y - p) per bin
        self.k = None

    def predict(self):
        r, c = self.residual, self.centres
        worst = np.maximum(np.abs(r + 1 - c), np.abs(r - c)) - np.abs(r)
        tie = np.abs(r + 0.5 - c)
        self.k = int(np.lexsort((tie, worst))[0])
        return float(c[self.k])

    def update(self, y):
        self.residual[self.k] += y - self.centres[self.k]


def play(forecaster, process, T, rng):
    p = np.empty(T)
    y = np.empty(T, dtype=np.int64)
    for t in range(T):
        y[t] = process(p[:t], y[:t], t, T, rng)
        p[t] = forecaster.predict()
        forecaster.update(int(y[t]))
    return p, y


def bucket_bias(p, y):
    values, inverse = np.unique(p, return_inverse=True)
    n = np.bincount(inverse)
    s = np.bincount(inverse, weights=y)
    return float(np.abs(s - n * values).sum())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--max-horizon", type=int, default=None)
    args = parser.parse_args()
    horizons = [1000, 3000, 10000] if args.quick else [1000, 3000, 10000, 30000, 100000]
    if args.max_horizon is not None:
        horizons = [T for T in horizons if T <= args.max_horizon]
    reps = {1000: 5, 3000: 5, 10000: 3, 30000: 2, 100000: 2}

    print(f"python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}")
    try:
        from numpy.lib._utils_impl import _opt_info  # numpy >= 2

        print(f"numpy SIMD: {_opt_info()}")
    except ImportError:
        pass
    print(f"horizons {horizons}, replicates {[reps[T] for T in horizons]}")
    print("value: MSR / (sqrt(T) ln T), mean over replicates\n")

    names = ["MSR", "MSR-2sqrtT", "freq", "freq-rr", "calibeat", "last", "ECE-greedy"]
    rows = []
    t_start = time.perf_counter()
    for pname, process in PROCESSES.items():
        for T in horizons:
            scale = math.sqrt(T) * math.log(T)
            m = max(2, int(round(math.sqrt(T) / math.log(T))))
            res = {n: [] for n in names}
            bias, secs = [], []
            for r in range(reps[T]):
                seed = 1000 * r + T
                for name in names:
                    rng = np.random.default_rng(seed)  # same outcome noise for all
                    if name == "MSR":
                        fc = OnlineMSRForecaster(horizon=T, random_state=seed)
                    elif name == "MSR-2sqrtT":
                        fc = OnlineMSRForecaster(
                            horizon=T, n_buckets=int(round(2 * math.sqrt(T))),
                            random_state=seed)
                    elif name == "freq-rr":
                        fc = FrequencyRandomRounding(m, seed)
                    elif name == "calibeat":
                        fc = Calibeating(m)
                    elif name == "freq":
                        fc = Frequency()
                    elif name == "last":
                        fc = Last()
                    else:
                        fc = ECEGreedy(m)
                    t0 = time.perf_counter()
                    p, y = play(fc, process, T, rng)
                    if name == "MSR":
                        secs.append((time.perf_counter() - t0) / T)
                        bias.append(bucket_bias(p, y) / scale)
                    res[name].append(maximum_swap_regret(y, p) / scale)
            row = (pname, T, m, (T / m) / scale, float(np.mean(bias)),
                   {n: (float(np.mean(v)), float(np.std(v))) for n, v in res.items()},
                   float(np.mean(secs)))
            rows.append(row)
            cells = "  ".join(f"{n} {mu:6.3f}" for n, (mu, sd) in row[5].items())
            print(f"{pname:9s} T={T:6d} m={m:2d} T/m={row[3]:5.2f} "
                  f"bias(MSR)={row[4]:5.2f}  {cells}  [{row[6] * 1e6:.0f} us/round]",
                  flush=True)
    print(f"\ntotal time {time.perf_counter() - t_start:.0f} s")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak resident memory of the process: {peak:.0f} MiB")
    return rows


if __name__ == "__main__":
    sys.exit(main() and 0)
