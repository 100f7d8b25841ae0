"""Timing of ``CalibrationTester().decide(y, p)`` (default settings), before and after.

"Before" is ``skcal/tester.py`` of commit 9ffe50e (read with ``git show`` and
run against the installed package's metrics, which that version calls through
the public functions); "after" is the installed version. Both run in the same
process, on the same data, one after the other.

Data: ``p ~ U(0, 1)``, calibrated ``y ~ Bernoulli(p)`` and shifted
``y ~ Bernoulli(min(p + 0.02, 1))``; n = 1e4 and 1e5. The new tester stops
sequentially, so its time depends on the data: it is reported for several
calibrated data sets (seeds) as median and maximum, with the resamples drawn.
The old tester always draws 999 resamples and is timed once per n.

Run: ``python benchmarks/bench_tester.py`` (about two minutes).

``python benchmarks/bench_tester.py --dce-tolerant [--before DIR]`` times
only the dCE tolerant test (``measure="dce", tolerance=0.02``, 999 draws) at
n = 2,000 (target 0.5 s) in one process, alternately, twice each: "after"
(the installed version: branch and bound over the draws,
``skcal.tester._dcebound``), "every" (the same with the branch and bound
off: every draw solved at fit, the same values) and, with ``--before DIR``,
the skcal built into ``DIR`` by ``pip install --no-deps
--no-build-isolation --target DIR /work/main``, imported beside the
installed one. Printed per run: wall and CPU seconds of ``decide``, split
into the test and the CPU seconds of its interval (``result.interval``,
dCE's bootstrap: branch and bound over the resamples and the interval's
null draws, ``skcal.tester._dcebound.dce_interval_draws``), the draws
solved at fit, the bootstrap resamples and interval-null draws solved, the
CPU seconds of then reading ``null_statistics_`` (the other draws solved),
the decision, threshold, p-value, ``min_epsilon`` and the interval; then
the ratios and whether the answers, the null statistics and the interval
agree.

``--shift s`` draws the outcomes from ``min(p + s, 1)`` instead (a
miscalibrated model: the interval's lower end is above 0 and its rank test
against the calibrated null runs).

``python benchmarks/bench_tester.py --dce-interval-agreement`` compares the
tester's dCE interval (resamples solved by branch and bound) with the public
``interval`` (every resample solved, warm-started) on 200 random small
cases: how far the ends are apart.

``python benchmarks/bench_tester.py --dce-tolerant-paired --before DIR`` runs
the dCE tolerant rows of ``tester_error_rates.py`` (B = 49, n = 1,000, 40
data sets each, plus shifts of 0.25 and 0.3) with the version built in DIR
and the installed one on the same data, and counts the data sets where
the decision, threshold, p-value or ``min_epsilon`` differ.

``python benchmarks/bench_tester.py --tail [--seeds 20] [--before-seeds 3]``
times the default smCE tester at n = 10**6 (issue 26 item 3: median
``decide`` <= 1 s, maximum over 20 seeds <= 3 s), on a calibrated model
(``y ~ Bernoulli(p)``) and a shifted one (``y ~ Bernoulli(min(p + 0.02, 1))``),
``p ~ U(0, 1)`` fixed, outcomes and ``random_state`` from the seed. "after"
is the installed version; "before" turns off the early rejection on
McDiarmid's bound (``skcal.tester._null._TAIL_BOUND``; the sequential rule
alone, as in the previous version), in the same process, on the first
``--before-seeds`` seeds, and checks that both give the same decision, and
the same p-value and null statistics (to 1e-12) where both drew alike.
Wall and CPU seconds per ``decide`` and the draws made are printed; with
``--n-jobs 2`` the draws run on two threads (same results).

``python benchmarks/bench_tester.py --tail --bracket [--seeds 20] [--before-seeds 3]``
compares the bracketed null draws (``skcal.tester._smcebound``; "before"
turns them off: every draw exact, as in the previous version): ``decide``
as above, the column "exact" counting the draws computed exactly, then the
worst case of the sequential test, all 999 draws (``resampling_risk=None``,
the fixed test), on the first ``--before-seeds`` calibrated seeds, before
and after, and once on rows of unequal weights (0.5, 1, 2); decisions,
thresholds, p-values and null statistics must be identical (the same
draws from the same kernel).

``python benchmarks/bench_tester.py --tail --draw [--seeds 20] [--before-seeds 3]``
compares the smCE null draw instead (issue 26 item 3, the maximum): "before"
is the draw of the previous version (``rng.random(K)`` into an array, then
the one-sided walk with one heap: ``skcal.tester._null._KERNEL_DRAWS`` and
``skcal._kernels._flow._set_buckets`` off), "after" draws the uniforms inside
the kernel and walks with buckets. It first times single draws at n = 10**6
(CPU ms per draw, before and after alternated, on the calibrated data of
seed 1), then ``decide`` as above; decisions, p-values and null statistics
must agree (to 1e-12: only the order of the final sum differs).

``--predictions NAME`` draws the predictions of the ``--tail`` runs from
another law: ``uniform`` (the default), ``float32`` (uniform, rounded to
float32 as most models output them: about one row per distinct value, some
values of two), ``arcsine`` (Beta(0.5, 0.5)) or ``bimodal`` (a confident
model: Beta(0.3, 5) or Beta(5, 0.3) by a fair coin).

``python benchmarks/bench_tester.py --tail --counts --predictions float32``
compares the draws of ties among rows of one weight: "before" draws a
binomial per distinct prediction (``skcal.tester._null._ROW_DRAWS_MAX_MEAN``
set to 0, as in the previous version), "after" a uniform per row in a
kernel, bracketed. The two draw other random numbers from the same law, so
only the decisions are compared.
"""

import os
import resource
import subprocess
import sys
import time
import types

import numpy as np

from skcal.tester import CalibrationTester

BEFORE = "9ffe50e"


def old_tester():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    source = subprocess.run(
        ["git", "show", f"{BEFORE}:skcal/tester.py"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    module = types.ModuleType("skcal._tester_before")
    module.__package__ = "skcal"
    sys.modules[module.__name__] = module
    exec(compile(source, f"{BEFORE}:skcal/tester.py", "exec"), module.__dict__)
    return module.CalibrationTester


def timed(tester, y, p, sample_weight=None):
    start = time.perf_counter()
    result = tester.decide(y, p, sample_weight=sample_weight)
    return time.perf_counter() - start, result


def row(n, data, version, seconds, draws, calibrated, note=""):
    print(
        f"{n:>7} {data:>10} {version:>8} {seconds:>9.3f} {draws:>6} "
        f"{calibrated!s:>10}{note}"
    )


def before_modules(path):
    """The modules of the skcal installed at ``path``, imported beside this one.

    ``path`` is a ``pip install --no-deps --no-build-isolation --target
    DIR /work/main`` build. Its modules are imported with this package's
    taken out of ``sys.modules`` (and the editable install's finder out of
    ``sys.meta_path``), then swapped back; :func:`swapped` puts them in
    place while the old version runs, so its lazy imports find its own.
    """
    import importlib

    mine = {k: sys.modules.pop(k) for k in list(sys.modules) if k.split(".")[0] == "skcal"}
    finders = [f for f in sys.meta_path if "skcal" in repr(f) or "editable" in repr(f).lower()]
    for finder in finders:
        sys.meta_path.remove(finder)
    sys.path.insert(0, path)
    try:
        for name in ("skcal", "skcal.tester", "skcal.metrics._ldtc", "skcal._interval",
                     "skcal.display"):
            importlib.import_module(name)
        theirs = {k: sys.modules.pop(k) for k in list(sys.modules)
                  if k.split(".")[0] == "skcal"}
    finally:
        sys.path.remove(path)
        sys.meta_path[0:0] = finders
        sys.modules.update(mine)
    assert os.path.dirname(theirs["skcal"].__file__).startswith(os.path.abspath(path))
    return theirs


class swapped:
    """Context: ``modules`` (of :func:`before_modules`) in ``sys.modules``."""

    def __init__(self, modules):
        self.modules = modules

    def __enter__(self):
        self.saved = {k: sys.modules[k] for k in self.modules if k in sys.modules}
        sys.modules.update(self.modules)

    def __exit__(self, *exc):
        for k in self.modules:
            sys.modules.pop(k, None)
        sys.modules.update(self.saved)


def dce_tolerant(before_dir=None, shift=0.0):
    import skcal.tester._dcebound as dcebound
    import skcal.tester._tester as tester_module

    n = 2000
    rng = np.random.default_rng(0)
    p = rng.random(n)
    y = (rng.random(n) < np.minimum(p + shift, 1.0)).astype(float)
    print(f"dCE tolerant test, n = {n}, outcomes ~ Bernoulli(min(p + {shift}, 1)), "
          "tolerance 0.02, 999 draws, target 0.5 s; load average at start: "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    interval_cpu = [0.0]

    def timing(real):
        def timed_interval(*args, **kwargs):
            start = time.process_time()
            out = real(*args, **kwargs)
            interval_cpu[0] += time.process_time() - start
            return out
        return timed_interval

    # the interval's draw sets, to count the draws it solved
    made = []
    real_draws = dcebound.dce_interval_draws

    def counted_draws(measure, statistic):
        draws = real_draws(measure, statistic)
        made.append(draws)
        return draws

    patched = [(tester_module, "_measure_interval", tester_module._measure_interval),
               (dcebound, "dce_interval_draws", real_draws)]
    tester_module._measure_interval = timing(tester_module._measure_interval)
    # read by _measure_interval at each call
    dcebound.dce_interval_draws = counted_draws
    versions = [("every", CalibrationTester, None), ("after", CalibrationTester, None)]
    if before_dir is not None:
        old = before_modules(before_dir)
        print(f"before: {os.path.dirname(old['skcal'].__file__)}")
        old_tester = old["skcal.tester._tester"]
        patched.append((old_tester, "_measure_interval", old_tester._measure_interval))
        old_tester._measure_interval = timing(old_tester._measure_interval)
        versions.insert(0, ("before", old["skcal.tester"].CalibrationTester, old))
    print("every: this version with the branch and bound off (every null draw solved at "
          "fit, every bootstrap and interval-null draw solved by the fixed-start session)")
    print("test = cpu - interval; solved: null draws solved at fit (of 999); boot, inull: "
          "the interval's bootstrap resamples (of 200) and null draws solved (- not drawn)")
    print(f"{'version':>8} {'wall s':>7} {'cpu s':>7} {'test':>6} {'interval':>8} {'solved':>6} "
          f"{'boot':>5} {'inull':>5} {'null s':>6} calibrated threshold p_value min_epsilon "
          "interval")
    runs = {}
    # alternated, twice: the machine's load moves between runs
    for _ in range(2):
        for version, cls, modules in versions:
            dcebound._BRANCH_AND_BOUND = version != "every"
            interval_cpu[0] = 0.0
            made.clear()
            tester = cls(measure="dce", tolerance=0.02, random_state=0)
            with swapped(modules) if modules else swapped({}):
                cpu = time.process_time()
                seconds, result = timed(tester, y, p)
                cpu = time.process_time() - cpu
                lazy = tester.__dict__.get("_null_statistics")
                # by name: the version before has its own class
                solved = lazy.n_solved if type(lazy).__name__ == "_DceNull" else 999
                start = time.process_time()
                null = np.asarray(tester.null_statistics_)
                null_cpu = time.process_time() - start
            drawn = made[0].drawn if made and made[0] is not None else []
            counts = [str(d.n_solved) for d in drawn] + ["-"] * (2 - len(drawn))
            if version == "before":
                counts = ["200", "all" if result.interval[0] > 0 else "-"]
            interval = interval_cpu[0]
            runs.setdefault(version, []).append((seconds, cpu, result, null, interval))
            print(f"{version:>8} {seconds:>7.2f} {cpu:>7.2f} {cpu - interval:>6.2f} "
                  f"{interval:>8.2f} {solved:>6} {counts[0]:>5} {counts[1]:>5} "
                  f"{null_cpu:>6.2f} {result.calibrated!s:>10} {result.threshold:.15g} "
                  f"{result.p_value:.6g} {result.min_epsilon:.15g} "
                  f"({result.interval[0]:.17g}, {result.interval[1]:.17g})", flush=True)
    dcebound._BRANCH_AND_BOUND = True
    for module, name, value in patched:
        setattr(module, name, value)
    after = runs["after"][-1]
    for version in runs:
        if version == "after":
            continue
        other = runs[version][-1]
        same = all(getattr(other[2], k) == getattr(after[2], k) for k in
                   ("calibrated", "threshold", "p_value", "min_epsilon", "n_resamples"))
        diff = float(np.max(np.abs(other[3] - after[3])))
        ends = float(np.max(np.abs(np.subtract(other[2].interval, after[2].interval))))

        def ratio(k, version=version):
            return np.median([r[k] for r in runs[version]]) / np.median(
                [r[k] for r in runs["after"]])

        print(f"{version} -> after: cpu {ratio(1):.1f}x, wall {ratio(0):.1f}x, interval "
              f"cpu {ratio(4):.1f}x faster (medians of 2); same calibrated/threshold/"
              f"p_value/min_epsilon/n_resamples: {same}; largest |difference| of "
              f"null_statistics_: {diff:.1e}, of the interval's ends: {ends:.1e}")


def dce_interval_agreement(n_cases=200):
    """The tester's dCE interval (branch and bound) against the public ``interval``.

    Random small cases (n from 1 to 400; uniform, Beta(0.3, 0.3), tied and
    rounded predictions; shifted outcomes; no, integer (with zeros) or
    random weights; grids up to 4 times the distinct predictions; confidence
    0.8 to 0.99; 50 to 200 resamples): the largest absolute and relative
    difference of the ends, and the cases where ``low == 0`` differs.
    """
    from skcal._interval import measure_interval
    from skcal.measures import LowerDistanceToCalibration
    from skcal.tester._dcebound import dce_interval_draws

    rng = np.random.default_rng(11)
    worst = [0.0, 0.0]
    compared = flips = same = 0
    for i in range(n_cases):
        n = [1, 2, 3, 8, 30, 60, 150, 400][i % 8]
        kind = (i // 8) % 4
        p = [rng.random(n), rng.beta(0.3, 0.3, n), np.round(rng.random(n), 2),
             rng.choice([0.0, 0.2, 0.5, 0.7, 1.0], n)][kind]
        y = (rng.random(n) < np.clip(p + [0.0, 0.15, -0.3, 0.4][i % 4], 0, 1)).astype(float)
        w = [None, rng.integers(0, 4, n).astype(float), rng.random(n) + 0.1][i % 3]
        if w is not None:
            w[0] = 1.0
        K = len(np.unique(p))
        measure = LowerDistanceToCalibration(grid=int(rng.integers(1, 4 * K)) if i % 5 else 100)
        options = dict(sample_weight=w, confidence=[0.95, 0.9, 0.8, 0.99][(i // 2) % 4],
                       n_resamples=[200, 50, 99][(i // 3) % 3], random_state=i)
        used = []

        def draws(measure, statistic, used=used):
            out = dce_interval_draws(measure, statistic)
            used.append(out)
            return out

        fast = measure_interval(measure, y, p, dce_draws=draws, **options)
        if used[0] is None:
            continue  # no session: both solve every draw
        public = measure.interval(y, p, **options)
        a, b = np.array([fast.low, fast.high]), np.array([public.low, public.high])
        if (a[0] == 0) != (b[0] == 0):
            flips += 1
            print(f"case {i}: n = {n}, low {a[0]!r} against {b[0]!r} (a null draw ties "
                  "the statistic)")
            a, b = a[1:], b[1:]
        diff = np.abs(a - b)
        worst[0] = max(worst[0], float(diff.max()))
        rel = diff / np.where(b > 0, b, 1.0)
        worst[1] = max(worst[1], float(rel.max()))
        same += bool(np.all(diff == 0))
        compared += 1
    print(f"{compared} cases with the branch and bound: ends bit for bit equal in {same}; "
          f"largest difference {worst[0]:.1e} absolute, {worst[1]:.1e} relative (ends "
          f"of the cases whose low == 0 agrees); low == 0 differs in {flips}")


def dce_tolerant_paired(before_dir, n_sets=40, n=1000, n_resamples=49):
    """The dCE tolerant rows of tester_error_rates.py, this version and main, paired.

    The scenarios of ``tester_error_rates.py`` (its data makers; seeds
    ``[row, n, r]``) and three shifts beyond the tolerance, ``n_sets`` data
    sets each; both versions decide on the same data in this process, and
    every difference of decision, threshold, p-value or ``min_epsilon`` is
    counted (the null statistics are compared too).
    """
    from tester_error_rates import ALPHA, lemma1, shifted, two_point

    import skcal.tester._dcebound as dcebound

    old = before_modules(before_dir)
    Old = old["skcal.tester"].CalibrationTester
    # (the constant and two-point predictions have too few distinct values for
    # the branch and bound: the draws of every version, run as before)
    makers = [shifted(0.02), shifted(0.15), shifted(0.25), shifted(0.3),
              lemma1(0.02), two_point(0.1, 0.2)]
    print(f"dCE tolerant tester (tolerance 0.02, B = {n_resamples}, alpha {ALPHA}), "
          f"n = {n}, {n_sets} data sets per row; before: {before_dir}; "
          f"load average {os.getloadavg()[0]:.1f}")
    print("differ: data sets whose decision / threshold, p-value or min_epsilon differ; "
          "max |d|: the largest difference of the threshold (p-value, null statistics)")
    print(f"{'data':<40}{'% no before':>12}{'% no after':>11}{'differ':>9}"
          f"{'max |d thr|':>12}{'|d p|':>9}{'|d null|':>9}{'solved':>7}"
          f"{'cpu before':>11}{'cpu after':>10}")
    for index, make in enumerate(makers):
        rejected = {"before": 0, "after": 0}
        differ, decided, gap, d_thr, d_p, solved = 0, 0, 0.0, 0.0, 0.0, []
        cpu = {"before": 0.0, "after": 0.0}
        for r in range(n_sets):
            seed = [index, n, r]
            y, p = make(np.random.default_rng(seed), n)
            results = {}
            for version, cls, modules in (("before", Old, old),
                                          ("after", CalibrationTester, None)):
                with swapped(modules) if modules else swapped({}):
                    tester = cls(measure="dce", tolerance=0.02, n_resamples=n_resamples,
                                 random_state=seed[-1], alpha=ALPHA)
                    start = time.process_time()
                    result = tester.decide(y, p)
                    cpu[version] += time.process_time() - start
                    lazy = tester.__dict__.get("_null_statistics")
                    if version == "after":
                        solved.append(lazy.n_solved if isinstance(lazy, dcebound._DceNull)
                                      else n_resamples)
                    null = np.asarray(tester.null_statistics_)
                results[version] = (result, null)
                rejected[version] += not result.calibrated
            (a, na), (b, nb) = results["before"], results["after"]
            differ += any(getattr(a, k) != getattr(b, k) for k in
                          ("calibrated", "threshold", "p_value", "min_epsilon", "n_resamples"))
            decided += a.calibrated != b.calibrated
            gap = max(gap, float(np.max(np.abs(na - nb))))
            d_thr = max(d_thr, abs(a.threshold - b.threshold))
            d_p = max(d_p, abs(a.p_value - b.p_value))
        print(f"{make.__name__:<40}{100 * rejected['before'] / n_sets:>11.1f}%"
              f"{100 * rejected['after'] / n_sets:>10.1f}%{decided:>4} / {differ:<3}"
              f"{d_thr:>11.1e}{d_p:>9.1e}{gap:>9.1e}"
              f"{np.mean(solved):>7.1f}{cpu['before']:>10.1f}s{cpu['after']:>9.1f}s",
              flush=True)


_BEFORE = "tail"  # what "before" turns off: the tail bound, or the new draw ("draw")


def _use_before(before):
    import skcal._kernels._flow as flow
    import skcal.tester._null as null
    import skcal.tester._smcebound as smcebound

    if _BEFORE == "bracket":
        smcebound._BRACKETS = not before
    elif _BEFORE == "counts":
        null._ROW_DRAWS_MAX_MEAN = 0 if before else 8
    elif _BEFORE == "draw":
        null._KERNEL_DRAWS = not before
        flow._set_buckets(not before)
    else:
        null._TAIL_BOUND = not before


def draw_times(p, y, reps=5, draws=8):
    """CPU ms per smCE null draw, before and after alternated, min and median."""
    from skcal.measures import SmoothCalibrationError
    from skcal.tester._null import _BinaryData

    data = _BinaryData(SmoothCalibrationError(), y, p, None, None, None)
    times = {"before": [], "after": []}
    for _ in range(reps):
        for version, before in (("before", True), ("after", False)):
            _use_before(before)
            cpu = time.process_time()
            values = [data.draw(seed) for seed in range(draws)]
            times[version].append((time.process_time() - cpu) / draws * 1e3)
            _use_before(False)
            times[version + " values"] = values
    same = np.allclose(times["before values"], times["after values"], rtol=1e-12, atol=0)
    b, a = np.median(times["before"]), np.median(times["after"])
    print(f"one null draw at n = {len(p)} (CPU ms, {reps} x {draws} draws each): "
          f"before min {min(times['before']):.2f} median {b:.2f}; after min "
          f"{min(times['after']):.2f} median {a:.2f}; ratio of medians {b / a:.2f}x; "
          f"same values (1e-12): {same}", flush=True)


def _timed_cpu(y, p, seed, n_jobs=None, sample_weight=None, **params):
    tester = CalibrationTester(random_state=seed, n_jobs=n_jobs, **params)
    cpu = time.process_time()
    seconds, result = timed(tester, y, p, sample_weight)
    return seconds, time.process_time() - cpu, tester


def _predictions(name, n):
    """``n`` predictions of the law ``name`` (see the module docstring)."""
    rng = np.random.default_rng(n)
    if name == "uniform":
        return rng.random(n)
    if name == "float32":
        return rng.random(n).astype(np.float32).astype(np.float64)
    if name == "arcsine":
        return rng.beta(0.5, 0.5, n)
    if name == "bimodal":
        return np.where(rng.random(n) < 0.5, rng.beta(0.3, 5, n), rng.beta(5, 0.3, n))
    raise ValueError(f"unknown predictions {name!r}")


def tail(n_seeds, n_before, n_jobs=None, predictions="uniform"):
    n = 10**6
    p = _predictions(predictions, n)
    print(f"smCE tester, n = {n}, predictions {predictions} ({np.unique(p).shape[0]} "
          f"distinct), default settings (n_jobs={n_jobs}); "
          "target median <= 1 s, max <= 3 s")
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if _BEFORE == "draw":
        rng = np.random.default_rng(1000 + 1)
        draw_times(p, (rng.random(n) < p).astype(float))
    print(f"{'model':>10} {'seed':>4} {'version':>7} {'wall s':>7} {'cpu s':>7} "
          f"{'draws':>5} {'exact':>5} {'p-value':>8} calibrated")
    summary = {}
    for model, shift in (("calibrated", 0.0), ("shifted", 0.02)):
        after_wall, after_cpu, pairs = [], [], []
        for seed in range(n_seeds):
            rng = np.random.default_rng(1000 + seed)
            y = (rng.random(n) < np.minimum(p + shift, 1)).astype(float)
            runs = [("after", False)] + ([("before", True)] if seed < n_before else [])
            results = {}
            for version, before in runs:
                _use_before(before)
                wall, cpu, tester = _timed_cpu(y, p, seed, n_jobs)
                _use_before(False)
                result = tester.result_
                results[version] = (wall, cpu, tester)
                print(f"{model:>10} {seed:>4} {version:>7} {wall:>7.2f} {cpu:>7.2f} "
                      f"{result.n_resamples:>5} {_exact(tester):>5} {result.p_value:>8.4f} "
                      f"{result.calibrated!s}", flush=True)
            wall, cpu, result = results["after"]
            after_wall.append(wall)
            after_cpu.append(cpu)
            if "before" in results:
                old, new = results["before"][2], result
                same = old.result_.calibrated == new.result_.calibrated and (
                    _BEFORE == "counts"  # other random numbers: the decision only
                    or old.n_resamples_ != new.n_resamples_
                    or (old.p_value_ == new.p_value_
                        and old.threshold_ == new.threshold_
                        and np.allclose(old.null_statistics_, new.null_statistics_,
                                        rtol=1e-12 if _BEFORE != "bracket" else 0,
                                        atol=0))
                )
                pairs.append((results["before"][0], results["before"][1], wall, cpu, same))
        summary[model] = (after_wall, after_cpu, pairs)
    if _BEFORE == "bracket":
        summary["all 999 draws"] = _all_draws(p, n_before, n_jobs)
        summary["weighted, all 999 draws"] = _all_draws(p, 1, n_jobs, weighted=True)
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    for model, (wall, cpu, pairs) in summary.items():
        print(f"{model}: after over {len(wall)} seeds: wall median {np.median(wall):.2f} s, "
              f"max {max(wall):.2f} s; cpu median {np.median(cpu):.2f} s, max {max(cpu):.2f} s")
        for i, (bw, bc, aw, ac, same) in enumerate(pairs):
            print(f"  seed {i}: before -> after wall {bw:.2f} -> {aw:.2f} s "
                  f"({bw / aw:.1f}x), cpu {bc:.2f} -> {ac:.2f} s ({bc / ac:.1f}x); "
                  f"same decision (and draws where as many): {same}")


def _exact(tester):
    """How many draws were computed exactly (all, unless bracketed)."""
    null = tester.__dict__.get("_null_statistics")
    return getattr(null, "n_exact", tester.n_resamples_)


def _all_draws(p, n_seeds, n_jobs, weighted=False):
    """The sequential test's worst case: every one of the 999 draws made.

    ``resampling_risk=None`` (the fixed test) on calibrated data: the
    slowest seed of the sequential test makes as many draws (its cap).
    ``weighted``: rows of weights 0.5, 1 and 2 (drawn from the seed).
    """
    n = p.shape[0]
    wall_after, cpu_after, pairs = [], [], []
    for seed in range(n_seeds):
        rng = np.random.default_rng(1000 + seed)
        y = (rng.random(n) < p).astype(float)
        w = rng.choice([0.5, 1.0, 2.0], size=n) if weighted else None
        out = {}
        for version, before in (("after", False), ("before", True)):
            _use_before(before)
            wall, cpu, tester = _timed_cpu(y, p, seed, n_jobs, resampling_risk=None,
                                           sample_weight=w)
            _use_before(False)
            out[version] = (wall, cpu, tester)
            label = "weighted" if weighted else "fixed"
            print(f"{label:>10} {seed:>4} {version:>7} {wall:>7.2f} {cpu:>7.2f} "
                  f"{tester.n_resamples_:>5} {_exact(tester):>5} {tester.p_value_:>8.4f} "
                  f"{tester.result_.calibrated!s}", flush=True)
        old, new = out["before"][2], out["after"][2]
        same = (old.result_.calibrated == new.result_.calibrated
                and old.p_value_ == new.p_value_ and old.threshold_ == new.threshold_
                and np.array_equal(old.null_statistics_, new.null_statistics_))
        wall_after.append(out["after"][0])
        cpu_after.append(out["after"][1])
        pairs.append((out["before"][0], out["before"][1], out["after"][0],
                      out["after"][1], same))
    return wall_after, cpu_after, pairs


def main():
    if "--dce-tolerant-paired" in sys.argv:
        dce_tolerant_paired(sys.argv[sys.argv.index("--before") + 1])
        return
    if "--dce-interval-agreement" in sys.argv:
        dce_interval_agreement()
        return
    if "--dce-tolerant" in sys.argv:
        before = sys.argv[sys.argv.index("--before") + 1] if "--before" in sys.argv else None
        shift = float(sys.argv[sys.argv.index("--shift") + 1]) if "--shift" in sys.argv else 0.0
        dce_tolerant(before, shift)
        return
    if "--tail" in sys.argv:
        global _BEFORE
        _BEFORE = ("draw" if "--draw" in sys.argv
                   else "bracket" if "--bracket" in sys.argv
                   else "counts" if "--counts" in sys.argv else "tail")

        def option(name, default):
            return int(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default

        predictions = (sys.argv[sys.argv.index("--predictions") + 1]
                       if "--predictions" in sys.argv else "uniform")
        tail(option("--seeds", 20), option("--before-seeds", 3),
             option("--n-jobs", None), predictions)
        return
    print("numpy", np.__version__, "| python", sys.version.split()[0])
    np.show_runtime()
    Old = old_tester()
    print(
        f"\n{'n':>7} {'data':>10} {'version':>8} {'seconds':>9} {'draws':>6} calibrated"
    )
    for n in (10**4, 10**5):
        rng = np.random.default_rng(n)
        p = rng.random(n)
        y = (rng.random(n) < p).astype(float)
        y_bad = (rng.random(n) < np.minimum(p + 0.02, 1)).astype(float)
        before, result = timed(Old(random_state=0), y, p)
        row(n, "calibrated", "before", before, 999, result.calibrated)
        times = []
        for seed in range(5):
            rng_s = np.random.default_rng(1000 + seed)
            y_s = (rng_s.random(n) < p).astype(float)
            seconds, result = timed(CalibrationTester(random_state=seed), y_s, p)
            times.append(seconds)
            row(
                n, "calibrated", "after", seconds, result.n_resamples, result.calibrated
            )
        seconds, result = timed(CalibrationTester(random_state=0), y, p)
        row(
            n,
            "calibrated",
            "after",
            seconds,
            result.n_resamples,
            result.calibrated,
            "  (the data timed before)",
        )
        bad, result = timed(CalibrationTester(random_state=0), y_bad, p)
        row(n, "shifted", "after", bad, result.n_resamples, result.calibrated)
        print(
            f"  n={n}: before {before:.2f} s; after, calibrated: median "
            f"{np.median(times):.3f} s, max {max(times):.3f} s (speed-up "
            f"{before / np.median(times):.0f}x at the median); shifted {bad:.3f} s"
        )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"\npeak resident memory of the process: {peak / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
