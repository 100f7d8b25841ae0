"""Measure the error rates of CalibrationTester by simulation.

The full versions of the simulations in ``tests/tester/test_tester.py``. For each
scenario (a data distribution with known dCE) and tester, the share of
independent data sets on which the tester answers "not calibrated":

* calibrated data (dCE = 0): the false alarm rate, to compare with alpha
  (the resample test is exact: about alpha, never more than alpha plus
  Monte Carlo error);
* shifted data ``v ~ U[0, 1 - e]``, ``y ~ Bern(v + e)`` (dCE = e, 002
  Section 6): the power, to compare with ``1 - alpha`` where the tester
  certifies ``e`` (``e >= min_epsilon``) and as information elsewhere;
* tolerant testers (``tolerance = e2``) at the boundary of their null
  (dCE = e2 exactly: Lemma 1 of Hu, Jambulapati, Tian and Yang, *Testing
  Calibration in Nearly-Linear Time* (a constant prediction against a fair
  coin), the shift, and predictions that move with the outcome, ``v = a + c``
  if ``y = 1`` else ``a``, ``y ~ Bern(a)``, dCE = a c, whose smCE is
  ``(2 - a - c)`` times dCE): the false alarm rate, at most alpha; and their
  power on shifts beyond the tolerance.

Each rate is printed with two binomial standard errors, the median
``min_epsilon`` of the tester at that n (in dCE) and the median
``min_epsilon_measure`` (in the scale of the measure tested).

The resample rows marked "fixed" draw exactly B resamples
(``resampling_risk=None``), as every version before the sequential test did;
the rows marked "sequential" run the default tester (at most 999 resamples,
resampling risk 1e-3; type I at most alpha + 4.4e-6, see the Notes of
CalibrationTester) and also give the mean number of resamples drawn.

    python benchmarks/tester_error_rates.py                    # 20 min on 2 cores
    python benchmarks/tester_error_rates.py --quick            # about 2 min
    python benchmarks/tester_error_rates.py --sequential-only  # default tester only
    python benchmarks/tester_error_rates.py --tolerant-only    # tolerance > 0 only
    python benchmarks/tester_error_rates.py --certificate-only # its B = 999 rows only
    python benchmarks/tester_error_rates.py --multiclass-only  # utility calibration
    python benchmarks/tester_error_rates.py --paired  # sequential vs fixed B = 999
    python benchmarks/tester_error_rates.py --tail-paired  # with/without the tail bound
    python benchmarks/tester_error_rates.py --bracket-paired  # bracketed/exact draws

``--no-tail-bound`` runs smCE's sequential test without its early rejection
on McDiarmid's bound (the rule of earlier versions), for before/after tables.
"""

import argparse
import platform
import time
import warnings

import numpy as np
from joblib import Parallel, delayed

import skcal
from skcal import CalibrationTester, UtilityCalibrationError
from skcal.tester._smcebound import _BRACKET_FROM

ALPHA = 0.05


def calibrated_uniform(rng, n):
    p = rng.random(n)
    return rng.random(n) < p, p


def calibrated_skewed(rng, n):
    # mostly small probabilities: low outcome variance, many ties near 0
    p = rng.beta(0.5, 4.0, n)
    return rng.random(n) < p, p


def shifted(e):
    def make(rng, n):
        p = rng.uniform(0, 1 - e, n)
        return rng.random(n) < p + e, p

    make.__name__ = f"shift e={e:g} (dCE={e:g})"
    return make


def lemma1(e):
    def make(rng, n):
        return rng.random(n) < 0.5, np.full(n, 0.5 + e)

    make.__name__ = f"v=1/2+{e:g}, y~Bern(1/2) (dCE={e:g})"
    return make


def two_point(a, c):
    def make(rng, n):
        y = rng.random(n) < a
        return y, np.where(y, a + c, a)

    make.__name__ = f"v=a+{c:g}y, a={a:g}, y~Bern(a) (dCE={a * c:g})"
    return make


def _categorical(rng, P):
    """One class per row, drawn from that row of ``P``."""
    return (rng.random(P.shape[0])[:, None] > np.cumsum(P, axis=1)).sum(axis=1)


def multiclass_calibrated(C):
    def make(rng, n):
        P = rng.dirichlet(np.ones(C), size=n)
        return _categorical(rng, P), P

    make.__name__ = f"C={C}, y ~ Cat(P), P ~ Dir(1)"
    return make


def multiclass_overconfident(C, power):
    def make(rng, n):
        P = rng.dirichlet(np.ones(C), size=n)
        Q = P**power
        return _categorical(rng, P), Q / Q.sum(axis=1, keepdims=True)

    make.__name__ = f"C={C}, predicted P^{power:g} (renorm.)"
    return make


def multiclass_swapped(C):
    """Top-label calibrated, class-wise not: the classes other than the most
    probable one exchange their probabilities (reversed order), so the top
    class and its probability are those of the law."""

    def make(rng, n):
        P = rng.dirichlet(np.ones(C), size=n)
        y = _categorical(rng, P)
        order = np.argsort(-P, axis=1, kind="stable")
        rows = np.arange(n)[:, None]
        Q = P.copy()
        Q[rows, order[:, 1:]] = P[rows, order[:, :0:-1]]
        return y, Q

    make.__name__ = f"C={C}, non-top classes swapped"
    return make


calibrated_uniform.__name__ = "calibrated, v ~ U[0,1]"
calibrated_skewed.__name__ = "calibrated, v ~ Beta(.5,4)"


def sequential_experiments(quick):
    """The default (sequential) smCE tester on the scenarios of the fixed one."""
    small = [200, 1000] if quick else [200, 1000, 5000]
    reps = 100 if quick else 400
    params = dict(measure="smce")
    out = [
        (calibrated_uniform, params, small, reps, "<= alpha"),
        (calibrated_skewed, params, small, reps, "<= alpha"),
    ]
    for e in (0.02, 0.05, 0.1):
        out.append((shifted(e), params, small, reps, "power"))
    return out


def paired_experiments(quick):
    """The sequential tester and the fixed one with B = 999 on the same data.

    Each pair of rows shares its data sets and random states, so the two
    tests see the same draws and differ only where the sequential one
    stopped early; the last column counts the data sets on which their
    decisions differ.
    """
    sizes = [200, 1000] if quick else [200, 1000, 5000]
    reps = 100 if quick else 400
    out = []
    for index, make in enumerate((calibrated_uniform, calibrated_skewed, shifted(0.02))):
        expect = "power" if index == 2 else "<= alpha"
        for params in (dict(measure="smce"), dict(measure="smce", resampling_risk=None)):
            out.append((make, params, sizes, reps, expect, 1000 + index))
    return out


def tail_paired_experiments(quick):
    """The sequential smCE tester with and without its tail bound, same data.

    Where smCE's early rejection on McDiarmid's bound acts (T above about
    4.2 / sqrt(n)): shifts of 0.05 and 0.1 at n = 5000 and 20000, and
    calibrated data as control. Each pair of rows shares its data sets and
    random states (the second row is the rule alone, as in earlier
    versions); the last column counts differing decisions. Then the fixed
    test (B = 999) on calibrated data, paired with the default tester.
    """
    sizes = [5000, 20000]
    reps = 100 if quick else 400
    out = []
    for index, make in enumerate((calibrated_uniform, shifted(0.05), shifted(0.1))):
        expect = "power" if index else "<= alpha"
        for params in (dict(measure="smce"), dict(measure="smce", tail_bound=False)):
            out.append((make, params, sizes, reps, expect, 2000 + index))
    fixed = dict(measure="smce", resampling_risk=None)
    out.append((calibrated_uniform, fixed, sizes, reps, "<= alpha", 2000))
    return out


def bracket_paired_experiments(quick):
    """smCE's bracketed null draws against exact draws, same data.

    The brackets (``skcal.tester._smcebound``) act from 2**15 distinct
    predictions; here they are forced at every n, so the pairs compare them
    on the scenarios of this script. Each pair of rows shares its data sets
    and random states; the last column counts the data sets on which the
    decision, the p-value or the threshold differ (they must not: the
    brackets change what is computed, not the answers).
    """
    sizes = [200, 1000] if quick else [200, 1000, 5000, 20000]
    reps = 100 if quick else 200
    out = []
    makes = (calibrated_uniform, calibrated_skewed, shifted(0.02), shifted(0.05))
    for index, make in enumerate(makes):
        expect = "power" if index >= 2 else "<= alpha"
        for base in (dict(measure="smce"), dict(measure="smce", resampling_risk=None)):
            for bracket in (True, False):
                out.append((make, base | {"bracket": bracket}, sizes, reps, expect,
                            3000 + 2 * index + (base.get("resampling_risk", 1) is None)))
    return out


def tolerant_experiments(quick):
    """Tolerant testers (tolerance 0.02): null boundary, power, certified epsilon.

    The "power at a certified epsilon" rows take dCE just above the median
    ``min_epsilon`` the tester reports on that design at n = 5000 (constant
    predictions: about 0.073 for smCE), so they check the certificate.
    """
    small = [200, 1000] if quick else [1000, 5000]
    r_null, r_power = (60, 30) if quick else (300, 100)
    b_fast, b_slow = (99, 24) if quick else (199, 49)
    out = []
    tolerant = dict(measure="smce", tolerance=0.02, n_resamples=b_fast)
    for make in (lemma1(0.02), shifted(0.02), two_point(0.1, 0.2)):
        out.append((make, tolerant, small, r_null, "<= alpha"))
    for e in (0.1, 0.15, 0.3):
        out.append((shifted(e), tolerant, small, r_power, "power"))
    out.append(
        (lemma1(0.08), tolerant, small[-1:], r_power, ">= 1-alpha if certified")
    )
    # dCE at n = 5000 is about 3 s a data set with 49 resamples: fewer runs
    dce = dict(measure="dce", tolerance=0.02, n_resamples=b_slow)
    dce_sizes = [200] if quick else [1000, 5000]
    r_dce = 10 if quick else 40
    for make in (lemma1(0.02), shifted(0.02), two_point(0.1, 0.2)):
        out.append((make, dce, dce_sizes, r_dce, "<= alpha"))
    out.append((shifted(0.15), dce, dce_sizes, r_dce, ">= 1-alpha if certified"))
    out.extend(certificate_experiments(quick))
    return out


def certificate_experiments(quick):
    """The tolerant smCE tester with the default 999 resamples at n = 5000.

    ``min_eps`` (dCE) and ``min_meas`` (smCE itself) as the tester reports
    them. The shift by 0.09 has smCE = dCE = 0.09 (the test function -1 gives
    0.09; no test function more than the mean distance 0.09), just above the
    median ``min_meas`` on that design (about 0.086) and far below its
    ``min_eps`` (about 0.17): it checks the certificate in smCE.
    """
    default = dict(measure="smce", tolerance=0.02)
    n_default = [1000] if quick else [5000]
    r_default = 20 if quick else 50
    out = []
    for make in (lemma1(0.02), shifted(0.02), two_point(0.1, 0.2)):
        out.append((make, default, n_default, r_default, "<= alpha"))
    out.append((shifted(0.1), default, n_default, r_default, "power"))
    out.append((lemma1(0.08), default, n_default, r_default, ">= 1-alpha if certified"))
    out.append((shifted(0.09), default, n_default, r_default, ">= 1-alpha (min_meas)"))
    # below the certificate: how conservative it is
    for e in (0.05, 0.06, 0.07):
        out.append((shifted(e), default, n_default, r_default, "power"))
    return out


def multiclass_experiments(quick):
    """The default tester with utility calibration ("comb" family and
    top-class) as the statistic, null y* ~ Categorical(P)."""
    sizes = [200, 1000]
    reps = 60 if quick else 400
    out = []
    for utility in ("comb", "top-class"):
        params = dict(measure=UtilityCalibrationError(utility))
        out.append((multiclass_calibrated(4), params, sizes, reps, "<= alpha"))
        if not quick:  # about 1 s a data set: fewer of them
            out.append((multiclass_calibrated(4), params, [5000], 200, "<= alpha"))
        out.append((multiclass_calibrated(10), params, sizes, reps, "<= alpha"))
        out.append((multiclass_overconfident(4, 1.3), params, sizes, reps, "power"))
        # top-label calibrated: only the class-wise part of "comb" sees it
        swapped_expect = "power" if utility == "comb" else "<= alpha (top calibrated)"
        out.append((multiclass_swapped(4), params, sizes, reps, swapped_expect))
    return out


def experiments(quick):
    """(scenario, tester parameters, sizes, data sets, what the rate should be)."""
    small, large = ([200, 1000], [200]) if quick else ([200, 1000, 5000], [200, 1000])
    r_fast, r_slow = (100, 40) if quick else (400, 100)
    b_fast, b_slow = (99, 24) if quick else (199, 49)
    out = sequential_experiments(quick)
    for measure in ("smce", "cutoff", "scdl", "binned_ece"):
        params = dict(measure=measure, n_resamples=b_fast, resampling_risk=None)
        out.append((calibrated_uniform, params, small, r_fast, "<= alpha"))
        if measure == "smce":
            out.append((calibrated_skewed, params, small, r_fast, "<= alpha"))
            for e in (0.02, 0.05, 0.1):
                out.append((shifted(e), params, small, r_fast, "power"))
        else:
            out.append((shifted(0.05), params, small, r_fast, "power"))
    dce = dict(measure="dce", n_resamples=b_slow, resampling_risk=None)
    out.append((calibrated_uniform, dce, large, r_slow, "<= alpha"))
    out.append((shifted(0.05), dce, large, r_slow, "power"))
    out.extend(tolerant_experiments(quick))
    out.extend(multiclass_experiments(quick))
    for measure in ("smce", "dce"):
        theory = dict(measure=measure, threshold="theory", epsilon=0.3)
        out.append((calibrated_uniform, theory, small, r_fast, "<= alpha"))
        out.append((shifted(0.3), theory, small, r_fast, ">= 1-alpha if certified"))
    return out


def one_data_set(make, params, n, seed, tail_bound=True):
    import skcal.tester._null
    import skcal.tester._smcebound as smcebound

    params = dict(params)
    # in this worker
    skcal.tester._null._TAIL_BOUND = params.pop("tail_bound", tail_bound)
    # bracket=True: smCE's bracketed draws at every n; False: every draw exact;
    # absent: the library's defaults (brackets from 2**15 predictions)
    bracket = params.pop("bracket", None)
    smcebound._BRACKETS = bracket is not False
    smcebound._BRACKET_FROM = 1 if bracket else _BRACKET_FROM
    rng = np.random.default_rng(seed)
    y, p = make(rng, n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # theory mode at small n
        result = CalibrationTester(random_state=seed[-1], alpha=ALPHA, **params).decide(
            y, p
        )
    return (
        (not result.calibrated),
        result.min_epsilon,
        result.n_resamples,
        result.min_epsilon_measure,
        (result.p_value, result.threshold),
    )


def describe(params):
    measure = params["measure"]
    parts = [measure if isinstance(measure, str) else f"UC {measure.utility}"]
    if params.get("threshold") == "theory":
        parts.append(f"theory eps={params['epsilon']:g}")
    elif "n_resamples" not in params and params.get("resampling_risk", 1) is None:
        parts.append("fixed B=999")
    elif "n_resamples" not in params:
        parts.append("B=999" if params.get("tolerance") else "sequential B<=999")
    else:
        parts.append(f"fixed B={params['n_resamples']}")
    if params.get("tolerance"):
        parts.append(f"tol={params['tolerance']:g}")
    if params.get("tail_bound") is False:
        parts.append("no tail bound")
    if "bracket" in params:
        parts.append("brackets" if params["bracket"] else "exact draws")
    return ", ".join(parts)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--sequential-only", action="store_true")
    parser.add_argument("--tolerant-only", action="store_true")
    parser.add_argument(
        "--certificate-only", action="store_true",
        help="the tolerant smCE tester with 999 resamples at n = 5000 only",
    )
    parser.add_argument("--multiclass-only", action="store_true")
    parser.add_argument(
        "--paired", action="store_true", help="sequential and fixed on the same data"
    )
    parser.add_argument(
        "--tail-paired", action="store_true",
        help="sequential and fixed smCE at n = 5000 and 20000, same data",
    )
    parser.add_argument(
        "--bracket-paired", action="store_true",
        help="smCE with bracketed draws (at every n) and with exact draws, same data",
    )
    parser.add_argument(
        "--no-tail-bound", action="store_true",
        help="smCE's sequential test without its early rejection on McDiarmid's bound",
    )
    parser.add_argument("--n-jobs", type=int, default=-1)
    args = parser.parse_args()
    print(
        f"skcal {skcal.__version__}, numpy {np.__version__}, "
        f"{platform.python_implementation()} {platform.python_version()}, "
        f"{platform.machine()}; alpha = {ALPHA}"
    )
    header = (
        f"{'tester':<40}{'data':<38}{'n':>6}{'runs':>6}"
        f"{'% no':>8}{'+-2se':>7}{'min_eps':>9}{'min_meas':>9}  {'expect':<24}"
        f"{'time':>6}{'draws':>7}"
        + (f"{'differ':>8}" if args.paired or args.tail_paired or args.bracket_paired
           else "")
    )
    print(header)
    start = time.perf_counter()
    if args.sequential_only:
        chosen = sequential_experiments(args.quick)
    elif args.tolerant_only:
        chosen = tolerant_experiments(args.quick)
    elif args.certificate_only:
        chosen = certificate_experiments(args.quick)
    elif args.multiclass_only:
        chosen = multiclass_experiments(args.quick)
    elif args.paired:
        chosen = paired_experiments(args.quick)
    elif args.tail_paired:
        chosen = tail_paired_experiments(args.quick)
    elif args.bracket_paired:
        chosen = bracket_paired_experiments(args.quick)
    else:
        chosen = experiments(args.quick)
    previous = {}
    for index, (make, params, sizes, reps, expect, *data_index) in enumerate(chosen):
        index = data_index[0] if data_index else index
        for n in sizes:
            t0 = time.perf_counter()
            runs = Parallel(n_jobs=args.n_jobs)(
                delayed(one_data_set)(
                    make, params, n, [index, n, r], not args.no_tail_bound
                )
                for r in range(reps)
            )
            rate = float(np.mean([r[0] for r in runs]))
            se = np.sqrt(max(rate * (1 - rate), 1 / reps) / reps)
            min_eps = [r[1] for r in runs if r[1] is not None]
            shown = f"{np.median(min_eps):.3f}" if min_eps else "-"
            in_measure = [r[3] for r in runs if r[3] is not None]
            shown_measure = f"{np.median(in_measure):.3f}" if in_measure else "-"
            drawn = [r[2] for r in runs if r[2] is not None]
            draws = f"{np.mean(drawn):.0f}" if drawn else "-"
            decisions = np.array([r[0] for r in runs])
            if args.bracket_paired:  # the answers in full, not only the decisions
                decisions = np.array([(r[0], *r[4]) for r in runs], dtype=float)
            differ = ""
            if data_index and (index, n) in previous:
                changed = np.any(
                    (decisions != previous[index, n]).reshape(reps, -1), axis=1
                )
                differ = f"{np.count_nonzero(changed):>8}"
            previous[index, n] = decisions
            print(
                f"{describe(params):<40}{make.__name__:<38}{n:>6}{reps:>6}"
                f"{100 * rate:>7.1f}%{200 * se:>6.1f}{shown:>9}{shown_measure:>9}"
                f"  {expect:<24}"
                f"{time.perf_counter() - t0:>5.0f}s{draws:>7}{differ}",
                flush=True,
            )
    print(
        f"total {time.perf_counter() - start:.0f} s with n_jobs={args.n_jobs}"
        + (" (no tail bound)" if args.no_tail_bound else "")
    )


if __name__ == "__main__":
    main()
