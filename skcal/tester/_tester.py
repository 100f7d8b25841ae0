"""Calibration testing (Definitions 2 and 4 of Hu, Jambulapati, Tian and Yang,
*Testing Calibration in Nearly-Linear Time*; "the paper" below).

:class:`CalibrationTester` answers "is this predictor calibrated?" on held-out
data with a stated error probability, and :class:`CalibrationTestResult` is
its answer. Two ways to set the decision threshold:

* ``"theory"``: the rules of the paper's Theorem 3 (smCE) and Theorem 4
  (dCE), with the universal constants of those theorems made explicit below.
* ``"resample"``: a Monte Carlo test against the calibrated null
  ``y* ~ Bernoulli(p)`` (``Categorical(p)`` for the multiclass utility
  calibration error), stopped sequentially once the verdict is settled.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .._compat import Interval, StrOptions, _fit_context
from .._input import (
    MAX_SIZE,
    user_stacklevel,
)
from ..measures import CalibrationMeasure
from ..metrics._ldtc import grid_points
from ._dcebound import _dce_null, _DceNull
from ._null import (
    _THEOREMS,
    _at_least,
    _draw_all,
    _in_tester_terms,
    _prepare,
    _seeds,
    _sequential_test,
)
from ._params import check_tester_params
from ._result import CalibrationTestResult, _measure_interval
from ._smcebound import SmceNull, bracketed
from ._tolerant import (
    _measure_min_epsilon,
    _resample_threshold,
    _smallest_rejecting_level,
    _theory_rule,
    _tolerant_min_epsilon,
    _TolerantRule,
)

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Literal

    from matplotlib.axes import Axes
    from numpy.typing import ArrayLike

    from .._typing import BinaryLabels, PosLabel, RandomStateLike
    from ..display import CalibrationTestDisplay


class CalibrationTester(BaseEstimator):
    """Test whether predictions are calibrated.

    Definitions 2 and 4 of Hu, Jambulapati, Tian and Yang, *Testing
    Calibration in Nearly-Linear Time* ("the paper"): an
    ``(epsilon, tolerance)``-tester must say "calibrated" when the data
    come from a distribution whose lower distance to calibration (dCE, the
    paper's Definition 1) is at most ``tolerance``, and "not calibrated" when it is
    at least ``epsilon``, each with probability at least ``1 - alpha``
    (Definition 2 is ``tolerance = 0`` and ``alpha = 1/3``). The tester
    computes a calibration measure on held-out ``(y_true, y_prob)`` and
    compares it with a threshold set either by the paper's theorems or by
    resampling outcomes from the predictions.

    Parameters
    ----------
    measure : str, measure object or callable, default="smce"
        ``"smce"`` (:func:`~skcal.smooth_calibration_error`), ``"dce"``
        (:func:`~skcal.lower_distance_to_calibration`), ``"cutoff"``,
        ``"scdl"``, ``"cdl"``, ``"binned_ece"`` or ``"utility"``; or an
        object of :mod:`skcal.measures` (e.g. ``BinnedECE(n_bins=10)``; a
        :class:`~skcal.UtilityCalibrationError` is tested on the whole
        probability matrix, with null ``y* ~ Categorical(p)``); or a function
        ``f(y_true, y_prob, sample_weight, **measure_params) -> float``
        (resample mode only; ``sample_weight`` is passed by keyword if the
        function has a parameter of that name, else third by position; a
        function of two arguments is accepted for equal weights). A
        statistic that is not finite raises ``ValueError``.
    epsilon : float, default=None
        ``epsilon`` of the paper's Definition 2 (``epsilon_1`` of Definition 4), in
        ``(0, 1]``. Required for ``threshold="theory"``; in resample mode it
        is only reported beside ``min_epsilon``.
    tolerance : float, default=0.0
        ``epsilon_2`` of the paper's Definition 4, in ``[0, 1)``: the null hypothesis
        is ``dCE <= tolerance``. Above 0 it needs ``measure`` "smce" (then
        below 0.2) or "dce" (measures that are Lipschitz in the predictions).
    alpha : float, default=0.05
        Error probability, in ``(0, 1)``: of a false "not calibrated" (both
        modes) and of a false "calibrated" when dCE >= ``epsilon`` (theory
        mode, when ``epsilon >= min_epsilon``).
    threshold : {"resample", "theory"}, default="resample"
        How to set the decision threshold; see Notes.
    n_resamples : int, default=999
        Monte Carlo draws of the calibrated null (resample mode): the
        largest number drawn by the sequential test, the exact number with
        ``resampling_risk=None`` or ``tolerance > 0``. Too few to ever reject
        raises ``ValueError``.
    measure_params : dict, default=None
        Extra keyword arguments for the measure, e.g. ``{"grid": 200}`` for
        "dce" or ``{"n_bins": 10}`` for "binned_ece".
    pos_label : int, float, bool or str, default=None
        The positive class, as for the measures. Multiclass ``y_prob`` is
        tested for top-label calibration.
    resampling_risk : float or None, default=1e-3
        With ``tolerance=0`` the resampling stops as soon as the verdict is
        settled (Notes); this bounds the probability that a decision so
        taken differs from that of the ideal test with infinitely many
        resamples. None draws exactly ``n_resamples`` (the fixed Monte Carlo
        test of earlier versions).
    random_state : int, RandomState instance or None, default=None
        Seeds the resampling. Results do not depend on ``n_jobs``.
    n_jobs : int, default=None
        Parallel jobs for the resampling (joblib); None means 1.

    Attributes
    ----------
    statistic_ : float
        The measure on the data.
    threshold_ : float
        The decision threshold on ``statistic_``.
    p_value_ : float or None
        Resample mode only.
    null_statistics_ : ndarray of shape (`n_resamples_`,) or None
        The measure on each resampled data set (resample mode), sorted.
        For ``measure="dce"`` with ``tolerance > 0``, ``fit`` solves only
        the draws its decision, threshold and p-value need (Notes, "dCE
        draws by branch and bound"), and smCE's test on ``2**15`` or more
        distinct predictions computes exactly only the draws its brackets
        do not settle (Notes, "smCE draws in brackets"); the
        others are computed, from the same seeds, when this attribute is
        first read (after pickling too): the values are those of computing
        every draw at ``fit``, bit for bit.
    n_resamples_ : int or None
        Resamples drawn (resample mode).
    min_epsilon_ : float or None
        The smallest ``epsilon`` certified at this ``n`` (see Notes).
    min_epsilon_measure_ : float or None
        The same certificate in the scale of the measure tested: the
        smallest value of "smce", "dce" or "cutoff" (of the outcome law on
        these predictions) detected with probability at least ``1 - alpha``,
        ``threshold_ + sqrt(ln(1/alpha) / (2 N))`` (see Notes). None for
        the other measures.
    n_samples_ : int
        Number of samples.
    n_effective_ : float
        Kish's effective sample size ``(sum w)^2 / sum w^2``; ``n`` for unit
        weights. The concentration bounds below use it in place of ``n``.
    result_ : CalibrationTestResult
        What :meth:`decide` returns.

    See Also
    --------
    smooth_calibration_error, lower_distance_to_calibration

    Notes
    -----
    Write ``N`` for ``n_effective_``, ``a = alpha``, ``e1 = epsilon``,
    ``e2 = tolerance``, ``h`` for the largest gap of the dCE grid, and
    ``t_no = sqrt(2 ln(1/a) / N)``, ``t_cal(a) = sqrt(2 ln(2/a) / N)``.

    **threshold="theory"** implements the paper's Theorem 3 (smCE; needs
    ``e1 > 4 e2``) and Theorem 4 (dCE), whose constant ``C_tct`` the paper
    leaves unspecified; these are the constants proved here.

    * smCE: say "calibrated" iff ``smCE <= e1/4 + e2`` (Theorem 3's
      ``2 e2 + alpha'/2`` with ``alpha' = e1/2 - 2 e2``).
    * dCE: say "calibrated" iff ``dCE^U <= (e1 + e2 + h)/2``: Theorem 4's
      midpoint ``e2 + alpha'/2``, ``alpha' = e1 - e2``, applied to
      ``dCE^U - h/2``, an ``h/2``-approximation of the empirical dCE.

    The guarantee holds for ``e1 >= min_epsilon_``, where
    ``min_epsilon_ = 4 e2 + 4 max(t_yes, t_no)`` (smCE) or
    ``e2 + h + 2 max(t_yes, t_no)`` (dCE), from these bounds, each failing
    with probability at most ``a``:

    * the sample of a distribution with ``dCE >= e1`` has smCE at least
      ``e1/2 - t_no`` and dCE^U at least ``e1 - t_no`` (each is at least the
      sample mean of one fixed function with values in [-1, 1]; Hoeffding);
    * a calibrated sample has ``smCE <= t_cal(a)``: Abel summation bounds
      smCE by twice the largest partial sum of ``y_i - p_i`` in the order of
      ``p``, a martingale (Hoeffding's maximal inequality); its dCE is at
      most twice that (the paper's Lemma 12);
    * with ``e2 > 0``, the sample's distance ``A`` to the nearest calibrated
      predictions is at most ``e2 + t_B`` with ``t_B`` from Bernstein's
      inequality (mean at most ``e2``, so variance at most ``e2``), and
      smCE moves by at most ``2 A``, dCE by at most ``A``.

    So ``t_yes = t_cal(a)`` (smCE) and ``2 t_cal(a)`` (dCE) for ``e2 = 0``,
    and ``2 t_B + t_cal(a/2)`` resp. ``t_B + 2 t_cal(a/2)`` (``t_B`` at level
    ``a/2``) otherwise. For ``a = 0.05`` and ``e2 = 0`` this is
    ``min_epsilon_ = 10.9 / sqrt(N)`` for smCE: the bounds are worst-case
    and conservative. A warning is raised when ``epsilon < min_epsilon_``.

    **threshold="resample"** draws ``y*_b ~ Bernoulli(p)`` independently for
    ``b = 1..B``, the law of the outcomes given the predictions under perfect
    calibration, and computes the measure ``T*_b`` on each. With
    ``k = floor(a (B + 1))``, the threshold is the ``(B + 1 - k)``-th
    smallest ``T*_b``, and the p-value ``(1 + #{T*_b >= T}) / (B + 1)``:
    given the predictions, ``T`` and the ``T*_b`` are exchangeable under
    calibration, so a false "not calibrated" has probability at most ``a``
    for every ``n`` and every calibrated distribution. This is the test with
    ``resampling_risk=None``.

    **Sequential stopping** (``tolerance = 0``, ``resampling_risk = r``).
    Write ``q = P(T* >= T | data)`` for the p-value of the ideal test with
    infinitely many resamples; it rejects iff ``q < a``, and has
    ``P(q < a) <= a`` under calibration. The draws are looked at after
    ``n_1 = 20``, then about 1.25 times as many each time, up to
    ``n_J = n_resamples``; with ``S_j`` draws ``T*_b >= T`` among the first
    ``n_j``, and ``d = r / J``, the test stops and rejects if
    ``P(Binomial(n_j, a) <= S_j) <= d``, stops and accepts if
    ``P(Binomial(n_j, a) >= S_j) <= d``, and accepts if neither happens by
    ``n_J``. ``S_j`` is ``Binomial(n_j, q)``: if ``q >= a`` each rejection
    check passes with probability at most ``d``, if ``q <= a`` each
    acceptance check, so by a union bound a decision taken at a checkpoint
    differs from the ideal test's with probability at most ``r`` for every
    ``q`` (the resampling risk of Gandy, "Sequential implementation of Monte
    Carlo tests with uniformly bounded resampling risk", with a fixed
    spending ``d`` per look; the early stop of Besag and Clifford,
    "Sequential Monte Carlo p-values", is its acceptance side). A run still
    undecided after ``n_J = B`` draws takes the fixed test's decision on its
    ``B`` draws (reject iff ``(1 + S_J) / (B + 1) <= a``). So the sequential
    test differs from the fixed test on the same draws only where it stopped
    early, and a false "not calibrated" it adds needs an early rejection
    (``S_j <= c_j``, the largest count the rejection check passes) that the
    fixed test would not make (``S_J >= k``, ``k = floor(a (B + 1))``):

        P(false "not calibrated") <= a + eta,
        eta = sup_q sum_j P(S_j <= c_j, S_J >= k | q),

    since the fixed test's level is at most ``a`` (exchangeability, above)
    and ``(S_j, S_J - S_j)`` are independent binomials given ``q``.
    ``eta`` is computed exactly over a fine grid of ``q`` by
    ``_early_rejection_excess``: 4.4e-6 at the defaults (``a = 0.05``,
    ``B = 999``, ``r = 1e-3``), at most ``r`` for every setting the tests
    check. Measured (``benchmarks/tester_error_rates.py --paired``, smCE,
    ``a = 0.05``, n = 200, 1000 and 5000, 400 data sets each, calibrated and
    shifted by 0.02): the sequential and the fixed test with 999 draws,
    given the same data and random state, decided alike on all 3,600 data
    sets, with 107 to 338 draws on average instead of 999; false "not
    calibrated" rates 4.2% to 6.0% (2 s.e. about 2.2%).
    ``resampling_risk=None`` gives the fixed test. Data
    far from the null stop after about ``ln(J / r) / a`` draws (about 190
    at the defaults), calibrated data typically after 20 to 50.

    *smCE: rejection on a tail bound.* For "smce" a bound on ``q`` known
    before any draw also stops the test: with normalised weights
    (``sum w_i^2 = 1 / N``), ``E T* <= 2 / sqrt(N)`` (by Abel summation
    smCE is at most twice the largest ``|S_k|``, ``S_k`` the partial sums
    of ``w_i (y*_i - p_i)`` in the order of ``p``, a martingale, and
    Doob's L2 inequality gives ``E max |S_k| <= 2 sqrt(E S_n^2) <=
    1 / sqrt(N)``), and one ``y*_i`` moves ``T*`` by at most ``w_i``, so
    ``q <= U = exp(-2 N (T - 2 / sqrt(N))^2)`` for ``T > 2 / sqrt(N)``
    (McDiarmid). The test rejects at its first look (``n_1`` draws, for
    ``null_statistics_`` and ``threshold_``) if ``U <= d``. Then
    ``q <= d < a``, so it agrees with the ideal test: the resampling risk
    is unchanged. It adds to the fixed test's level only where the fixed
    test would not reject (``S_J >= k``): ``P(q <= d) <= d`` under
    calibration (``q`` is the ideal test's p-value), and given ``q <= d``
    this has probability at most ``P(Binomial(B, d) >= k)``, so

        P(false "not calibrated") <= a + eta + d P(Binomial(B, d) >= k),

    the last term 5e-134 at the defaults (``_bound_rejection_excess``; at
    most ``d <= r`` always). ``T`` must be at least about ``4.2 / sqrt(N)``
    at the defaults (0.0042 at ``N = 10**6``, where a shift of the outcome
    probability by 0.02 gives ``T`` about 0.021): far miscalibration at
    large ``n`` is rejected after 20 draws instead of about 190.
    ``p_value_`` is ``(1 + S) / (1 + n)`` over the ``n`` draws made, an
    estimate of ``q``; ``threshold_`` is the Monte Carlo quantile over
    them, for reference: the decision is the sequential rule's.

    **Tolerant test** (``e2 > 0``; measures "smce" and "dce"). The null
    "dCE <= e2" is composite and the law of the outcomes given the
    predictions is unknown. Write ``T(v, y)`` for the statistic on
    predictions ``v`` and outcomes ``y``, ``w_i`` for the normalised weights,
    ``m = max w_i``, ``D`` for the spread ``max p - min p`` of the predictions
    and ``Bern(V, d)`` for the Bernstein deviation ``t`` with
    ``exp(-t^2 / (2 (V + m t / 3))) = d``. The test draws ``B`` resamples
    ``T*_b = T(p, y*_b)``, ``y*_b ~ Bernoulli(p)``, as above; with
    ``k = floor(0.8 a (B + 1))``, ``j = floor(k / 2)`` and ``d`` the largest
    per-draw probability with ``P(Binomial(B, d) > j) <= 0.1 a``, it rejects
    iff ``T(p, y)`` exceeds the ``(k - j)``-th largest ``T*_b`` plus
    ``S + Delta``, where:

    * ``A' = e2 + Bern(e2 sum w_i^2, 0.1 a)``. Under the null a coupling of
      ``(p, y)`` with calibrated predictions ``u`` (``E[y | u] = u``) has
      ``E|p - u| <= e2``; drawing ``u_i`` for each sample from it, the
      ``(u_i, y_i)`` are independent with ``y_i ~ Bernoulli(u_i)`` given
      ``u``, and ``A = sum_i w_i |p_i - u_i| <= A'`` except with probability
      ``0.1 a`` (Bernstein; ``|p - u| <= 1`` has variance at most its mean).
      ``p_i`` may depend on ``y_i``.
    * ``S`` bounds ``T(p, y) - T(u, y)`` for every ``u`` in ``[0, 1]^n`` at
      mean distance at most ``A'``. dCE: ``S = A'`` (moving predictions by
      ``A`` moves dCE by at most ``A``). smCE: let ``x`` be the optimal test
      function of the data (the witness, linear between the predictions) and
      ``phi_y(t) = (y - t) x(t)``; since ``T(u, y) >= sum_i w_i
      phi_{y_i}(u_i)``, for every ``lambda >= 0``
      ``T(p, y) - T(u, y) <= lambda A + sum_i w_i (phi_{y_i}(p_i) -
      min_t [phi_{y_i}(t) + lambda |t - p_i|])``, with the minimum found
      exactly on each piece where ``x`` is linear; ``S`` is the least of
      these over 81 values of ``lambda`` in ``[0, 2]``. On data that leave
      no room (constant predictions) ``S = A'``; it approaches ``2 A'`` only
      where the data allow it, as for predictions that move with the outcome
      (``v = a + c`` when ``y = 1`` and ``v = a`` when ``y = 0``, with
      ``y ~ Bernoulli(a)``: its smCE is ``(2 - a - c)`` times its dCE
      ``a c``).
    * ``Delta`` bounds, for each resample with probability at least
      ``1 - d``, ``T(u, y*u_b) - T(p, y*_b)``, where ``y*u_b = 1{U_b < u}``
      and ``y*_b = 1{U_b < p}`` share independent uniforms ``U_b``. dCE:
      ``Delta = A' + (A' + Bern(m A', d))`` (predictions moved by ``A``,
      then outcomes of weight ``F_b`` flipped, ``E F_b = A``). smCE: for
      every test ``x``, ``(y*u - u) x(u) - (y* - p) x(p) = (y*u - u)(x(u) -
      x(p)) + xi x(p)`` with ``xi = (y*u - y*) - (u - p)``. For the first,
      write ``x(u_i) - x(p_i) = int_0^1 x'(t) s_i(t) dt`` with ``s_i = +1``
      on ``[p_i, u_i)``, ``-1`` on ``[u_i, p_i)`` and 0 elsewhere; as
      ``|x'| <= 1`` its sum is at most ``R = int_0^1 |M(t)| dt``, ``M(t) =
      sum_i w_i (y*u_i - u_i) s_i(t)``, for every ``x`` at once. Given
      ``(u, p)`` the ``y*u_i - u_i`` are independent and centred, of variance
      at most 1/4, so ``E R <= int_0^1 sqrt(m/4 sum_i w_i |s_i(t)|) dt <=
      sqrt(m A) / 2`` (Cauchy-Schwarz, ``int sum_i w_i |s_i| = A``), and
      changing one of them moves ``R`` by at most ``w_i |u_i - p_i|``, so
      ``R <= sqrt(m A)/2 + sqrt(m A ln(2/d) / 2)`` except with probability
      ``d/2`` (McDiarmid; ``sum_i w_i^2 |u_i - p_i|^2 <= m A``). By Abel
      summation in the order of ``p`` the second is at most ``(1 + D)
      max_k |sum_{i <= k} w_i xi_i|``, a sum of independent centred terms of
      variance at most ``w_i^2 |u_i - p_i|``. So ``Delta = sqrt(m A')/2 +
      sqrt(m A' ln(2/d) / 2) + (1 + D) Bern(m A', d/4)`` (Freedman's
      maximal inequality for the last). Earlier versions bounded the first
      sum by ``sum_i w_i |y*u_i - u_i| |u_i - p_i|``, whose mean is up to
      ``A/2``: at ``n = 5000`` the new term is about 0.005 against 0.018.

    Validity: given ``u``, ``y`` and the ``y*u_b`` are independent draws of
    ``Bernoulli(u)``, so ``T(u, y)`` exceeds the ``k``-th largest
    ``T(u, y*u_b)`` with probability at most ``k / (B + 1) <= 0.8 a``. If
    ``A <= A'`` and at most ``j`` of the ``B`` per-draw bounds fail (the
    failures are independent, so more fail with probability at most
    ``0.1 a``), the ``k``-th largest ``T(u, y*u_b)`` is at most the
    ``(k - j)``-th largest ``T*_b`` plus ``Delta``, and a rejection gives
    ``T(u, y) >= T(p, y) - S >`` that; so a distribution with dCE ``<= e2``
    is rejected with probability at most ``0.8 a + 0.1 a + 0.1 a = a``, for
    every ``n``. The test is conservative (``A'``, ``S`` and ``Delta`` are
    worst cases); ``p_value_`` is the smallest level at which it rejects.

    *dCE draws by branch and bound.* Each dCE draw is a linear program
    (about 7 ms at ``n = 2000``), but the test reads its ``B`` draws only
    through the ``(k - j)``-th largest (the threshold) and through
    comparisons of the statistic with such order statistics plus a shift
    (the p-value's bisection). A draw keeps the predictions and moves mass
    between the two outcomes of each, so the certificates of a solved draw
    bound every other draw in ``O(n)``: its dual potentials give a lower
    bound (weak duality, Hu et al., Lemma 18), and its calibrated masses on
    the grid, rescaled to the other draw's totals of each outcome, a
    feasible transport plan whose cost is an upper bound. The test solves
    exactly only the draws whose interval (widened by a safety margin of
    ``1e-9 + 1e-6`` times the bound) does not settle the order statistic
    or the comparison asked, the largest upper bound first; every answer
    is that of solving all draws. At ``n = 2000`` and the defaults it
    solves about 10 of 999 draws. Each draw's program starts from one
    fixed basis, so its value does not depend on which draws were solved
    before it (earlier versions warm-started each draw from the previous
    one: the last bits, up to about 1e-16, depended on the order). The
    dCE interval the result reports (``result_.interval``, the measure's
    bootstrap, 200 resamples) is computed the same way: its resamples and
    its null draws are bounded by the certificates of the ones solved, and
    only those the two ends need are solved (about 26 of 200 at ``n =
    2000``). Its ends equal those of solving every resample with the same
    solver and agree with ``LowerDistanceToCalibration().interval`` to
    solver rounding (within ``5.6e-13`` relative on 173 random cases), except that
    a null draw tying the statistic to rounding can set the lower end to
    0 in one and not in the other.

    *smCE draws in brackets.* From ``2**15`` distinct predictions on (rows
    of one weight with distinct predictions, or rows of unequal weights),
    an smCE null draw is first computed on groups of about ``sqrt(K) / 16``
    consecutive predictions moved to their (weighted) mean (the outcomes
    drawn row by row as before, from the same seed): each group keeps its
    residual ``sum w_i (y*_i - p_i)``, so for every 1-Lipschitz test
    function the sum moves by at most ``sum_i w_i |p_i - m_g| |y*_i -
    p_i|``, and so does smCE (divided by the total weight). The tests read the draws
    only through how many reach the statistic and one order statistic (the
    threshold); a draw whose bracket (widened by ``1e-9`` and ``4 K`` units
    of rounding) settles the comparison asked is not computed exactly, the
    others are, from their seeds. Every answer (decision, threshold,
    p-value, ``null_statistics_``) is that of computing every draw, bit for
    bit; at ``n = 10**6`` a bracket costs about a quarter of an exact draw
    (an eighth with unequal weights) and about 2% of the draws are computed
    exactly. Rows of one weight that share predictions draw a binomial
    count per prediction, cheaply, and are not bracketed.

    In resample mode with ``e2 = 0``, ``min_epsilon_ = (threshold_ + t_no) /
    c``, with ``c = 1/2`` (smCE), ``1`` (dCE) or ``1/4`` (cutoff; cutoff >=
    smCE/2): any distribution with dCE at least that has a statistic above
    the threshold with probability at least ``1 - a`` (the lower-tail bound
    above), treating the threshold as fixed (a function of the predictions).
    For the other measures no bound in terms of dCE is known and it is None.

    **Certified epsilon of the tolerant test** (``e2 > 0``). Given the
    predictions (the design: mass ``w_i`` at ``p_i``), let the outcomes be
    independent, ``y_i ~ Bernoulli(mu_i)``, and write dCE and smCE for those
    of the design's law (mass ``w_i`` at ``p_i`` with outcome probability
    ``mu_i``; ``p_i`` may have been chosen knowing ``y_i``, then ``mu_i`` is
    0 or 1). With ``t = sqrt(ln(1/a) / (2 N))``, ``min_epsilon_`` is
    ``threshold_ + t`` (dCE) and ``min(2 (threshold_ + t), threshold_ + t +
    kappa)`` (smCE), ``kappa = max_c (sum_i w_i |p_i - c| - |c - pbar|)``
    (``pbar`` the mean prediction; ``kappa = 0`` when all predictions are
    equal): every ``mu`` whose dCE is at least ``min_epsilon_`` is rejected
    with probability at least ``1 - a``, treating the threshold as fixed
    (a function of the predictions, for smCE also of the data's optimal test
    function). Proof. Let ``T`` be the sample's smCE, or its exact dCE
    (at most the grid value ``dCE^U`` the test computes).
    (i) ``T`` is a convex function of the outcomes (smCE is a supremum of
    linear functions; dCE the value of a transport problem whose
    constraints are linear in them), so ``E T`` is at least ``T`` of the
    design's law (Jensen). (ii) Changing ``y_i`` moves ``T`` by at most
    ``w_i``: for smCE every test's value moves by ``w_i |x(p_i)|``; for dCE,
    in an optimal coupling each calibrated value ``u_k`` that received mass
    ``pi_k`` of sample ``i`` out of its total ``m_k`` moves by ``pi_k / m_k``
    to stay calibrated, which costs at most ``sum_k pi_k = w_i``. So
    ``P(T <= E T - t) <= exp(-2 t^2 / sum_i w_i^2) = a`` (McDiarmid; each
    term has range ``w_i``, not the ``2 w_i`` of the unconditional bound).
    (iii) dCE: done. smCE: smCE ``>=`` dCE/2, and with the test functions
    ``+-1``, smCE ``>= |mbar - pbar|`` (``mbar = sum_i w_i mu_i``) while
    dCE ``<= sum_i w_i |p_i - mbar|`` (all predictions moved to the
    calibrated value ``mbar``), so smCE ``>=`` dCE ``- kappa``.
    With ``a = 0.05``, ``e2 = 0.02``, ``B = 999`` and ``n = 5000`` the smCE
    test certifies about 0.074 on constant predictions, 0.12 on predictions
    0.1 and 0.3 (``kappa = 0.036``) and 0.17 on uniform ones (factor 2), and
    the dCE test about 0.12 on all three (medians,
    ``benchmarks/tester_error_rates.py``),
    where the previous rule (Hoeffding with range 2 and factor 2
    everywhere, noise ``A/2``) certified 0.21 to 0.23, and the rule before
    it 0.39. The factor 2 is the worst case over all laws on the
    predictions; finding the exact factor of a given design means
    maximising dCE, a convex function of ``mu``, over the smCE ball, which
    is not a convex problem, and is not attempted.

    **Certificate in the measure's own scale** (``min_epsilon_measure_``).
    Steps (i) and (ii) above hold for the cutoff error too (a supremum of
    linear functions of the outcomes, each moving by at most ``w_i``), in
    every mode and for every tolerance. So for "smce", "dce" and "cutoff",
    every outcome law whose measure (on these predictions) is at least
    ``min_epsilon_measure_ = threshold_ + t`` is rejected with probability
    at least ``1 - a``, treating the threshold as fixed as above; no factor
    between the measures enters. With ``e2 = 0.02`` at ``n = 5000`` the
    tolerant smCE test detects smCE of about 0.074 on constant predictions,
    0.083 on predictions 0.1 and 0.3 and 0.085 on uniform ones (medians,
    ``benchmarks/tester_error_rates.py --certificate-only``); the null
    it rejects is still ``dCE <= e2``, whose laws have smCE at most
    ``2 e2`` (each smCE test function is 1-Lipschitz with values in
    [-1, 1], so moving the predictions by ``d`` in mean changes its value
    by at most ``2 d``).

    Examples
    --------
    >>> import numpy as np
    >>> from skcal import CalibrationTester
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = rng.uniform(size=2000) < p
    >>> tester = CalibrationTester(random_state=0).fit(y, p)
    >>> tester.decide().calibrated, tester.n_resamples_
    (True, 20)
    >>> y_shifted = rng.uniform(size=2000) < np.clip(p + 0.1, 0, 1)
    >>> result = tester.decide(y_shifted, p)
    >>> result.calibrated, result.n_resamples
    (False, 20)

    A measure object with its options:

    >>> from skcal.measures import BinnedECE
    >>> CalibrationTester(BinnedECE(n_bins=10), random_state=0).decide(y, p).measure
    'binned_ece'
    """

    def __init__(
        self,
        measure: str | CalibrationMeasure | Callable[..., float] = "smce",
        *,
        epsilon: float | None = None,
        tolerance: float = 0.0,
        alpha: float = 0.05,
        threshold: Literal["resample", "theory"] = "resample",
        n_resamples: int = 999,
        measure_params: dict[str, Any] | None = None,
        pos_label: PosLabel = None,
        resampling_risk: float | None = 1e-3,
        random_state: RandomStateLike = None,
        n_jobs: int | None = None,
    ) -> None:
        self.measure = measure
        self.epsilon = epsilon
        self.tolerance = tolerance
        self.alpha = alpha
        self.threshold = threshold
        self.n_resamples = n_resamples
        self.measure_params = measure_params
        self.pos_label = pos_label
        self.resampling_risk = resampling_risk
        self.random_state = random_state
        self.n_jobs = n_jobs

    # scikit-learn's declarative parameter validation, checked by _fit_context
    # at the start of fit; what depends on several parameters (a measure name
    # among the registry's, epsilon against tolerance, enough resamples to
    # reject) is checked by _check_params after it
    _parameter_constraints = {
        "measure": [str, CalibrationMeasure, callable],
        "epsilon": [Interval(numbers.Real, 0, 1, closed="right"), None],
        "tolerance": [Interval(numbers.Real, 0, 1, closed="left")],
        "alpha": [Interval(numbers.Real, 0, 1, closed="neither")],
        "threshold": [StrOptions({"resample", "theory"})],
        "n_resamples": [Interval(numbers.Integral, 1, MAX_SIZE, closed="both")],
        "measure_params": [dict, None],
        "pos_label": [numbers.Real, str, "boolean", None],
        "resampling_risk": [Interval(numbers.Real, 0, 1, closed="neither"), None],
        "random_state": ["random_state"],
        "n_jobs": [numbers.Integral, None],
    }

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(
        self,
        y_true: BinaryLabels,
        y_prob: ArrayLike | None = None,
        sample_weight: ArrayLike | None = None,
    ) -> CalibrationTester:
        """Compute the statistic and the decision threshold.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,) or summary
            Observed labels; or an object with a ``grouped_statistic()``
            method (a calibration sketch), which already holds predictions and
            outcomes: then ``y_prob`` and ``sample_weight`` stay None, and its
            weights are read as counts of unit-weight samples (binary
            measures only).
        y_prob : array-like of shape (n_samples,) or (n_samples, n_classes)
            Predicted probability of the positive class, or
            ``predict_proba`` output (multiclass: top-label).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights.

        Returns
        -------
        self : CalibrationTester
            This tester, fitted: ``result_`` holds the answer.
        """
        return self._fit(y_true, y_prob, sample_weight, labels=None)

    def decide(
        self,
        y_true: BinaryLabels | None = None,
        y_prob: ArrayLike | None = None,
        sample_weight: ArrayLike | None = None,
    ) -> CalibrationTestResult:
        """The test's decision; fits on ``(y_true, y_prob)`` first if given.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,) or summary, default=None
            Observed labels, or a calibration sketch, as for :meth:`fit`;
            None to decide on the data of the last ``fit``.
        y_prob : array-like of shape (n_samples,) or (n_samples, n_classes), \
default=None
            Predicted probabilities, as for :meth:`fit`; None with
            ``y_true`` None (or a sketch).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights, as for :meth:`fit`.

        Returns
        -------
        result : CalibrationTestResult
            The verdict with its statistic, threshold and p-value.
        """
        held = callable(getattr(y_true, "grouped_statistic", None))
        if not held and (y_true is None) != (y_prob is None):
            raise ValueError("Pass both y_true and y_prob to decide, or neither.")
        if y_true is not None:
            self.fit(y_true, y_prob, sample_weight=sample_weight)
        elif sample_weight is not None:
            raise ValueError("sample_weight was given without y_true and y_prob.")
        check_is_fitted(self)
        return self.result_

    def plot(self, ax: Axes | None = None) -> CalibrationTestDisplay:
        """Draw the null distribution, the statistic, the threshold and the verdict.

        Needs matplotlib; see :class:`skcal.CalibrationTestDisplay`.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None.

        Returns
        -------
        display : CalibrationTestDisplay
            The display, drawn.
        """
        check_is_fitted(self)
        from ..display import CalibrationTestDisplay

        return CalibrationTestDisplay.from_tester(self, ax=ax)

    @classmethod
    def from_estimator(
        cls,
        estimator: BaseEstimator,
        X: ArrayLike,
        y: ArrayLike,
        *,
        sample_weight: ArrayLike | None = None,
        **params: Any,
    ) -> CalibrationTester:
        """A tester fitted on a classifier's ``predict_proba`` on ``(X, y)``.

        Parameters
        ----------
        estimator : fitted classifier with ``predict_proba``
            The classifier whose probabilities are tested.
        X : array-like of shape (n_samples, n_features)
            Held-out features (not the training data: a test on the training
            data measures overfitting, not calibration).
        y : array-like of shape (n_samples,)
            Held-out labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the held-out rows.
        **params
            Parameters of :class:`CalibrationTester`.

        Returns
        -------
        tester : CalibrationTester
            Fitted; call :meth:`decide` for the result.

        Examples
        --------
        Logistic regression passes, naive Bayes (over-confident) does not:

        >>> from sklearn.datasets import make_classification
        >>> from sklearn.linear_model import LogisticRegression
        >>> from sklearn.naive_bayes import GaussianNB
        >>> from skcal import CalibrationTester
        >>> X, y = make_classification(n_samples=4000, random_state=0)
        >>> for model in (LogisticRegression(), GaussianNB()):
        ...     model = model.fit(X[:2000], y[:2000])
        ...     tester = CalibrationTester.from_estimator(
        ...         model, X[2000:], y[2000:], n_resamples=199, random_state=0)
        ...     print(type(model).__name__, tester.decide().calibrated)
        LogisticRegression True
        GaussianNB False
        """
        check_is_fitted(estimator)
        if not hasattr(estimator, "predict_proba"):
            raise TypeError(
                f"{type(estimator).__name__} has no predict_proba; the tester "
                "needs predicted probabilities."
            )
        tester = cls(**params)
        return tester._fit(
            y,
            estimator.predict_proba(X),
            sample_weight,
            labels=getattr(estimator, "classes_", None),
        )

    # -- internals ---------------------------------------------------------

    def _fit(self, y_true, y_prob, sample_weight, labels):
        measure, name = self._check_params()
        try:
            data = _prepare(
                measure, y_true, y_prob, sample_weight, self.pos_label, labels
            )
        except (ValueError, TypeError) as error:
            message = _in_tester_terms(str(error))
            if message == str(error):
                raise
            raise type(error)(message) from None
        statistic = data.statistic
        n_eff, max_share = data.n_eff, data.max_share
        alpha, tolerance = float(self.alpha), float(self.tolerance)
        dce_factor = getattr(measure, "_dce_factor", None)
        n_drawn = None

        if self.threshold == "theory":
            if name == "dce":
                method = "theorem 4"
                h = float(np.max(np.diff(grid_points(measure.grid))))
            else:
                method, h = "theorem 3", 0.0
            threshold, min_epsilon = _theory_rule(
                name, float(self.epsilon), tolerance, alpha, n_eff, max_share, h
            )
            if self.epsilon < min_epsilon:
                warnings.warn(
                    f"n={data.n} samples are too few for the guarantee of "
                    f"{_THEOREMS[method]} at epsilon={self.epsilon:g}: it "
                    f"holds for epsilon >= {min_epsilon:.4g}.",
                    UserWarning,
                    stacklevel=user_stacklevel(),
                )
            null, p_value = None, None
            calibrated = bool(statistic <= threshold)
        else:
            method = "resample"
            seeds = _seeds(self.random_state, self.n_resamples)
            if tolerance == 0 and self.resampling_risk is not None:
                null, rejected = _sequential_test(
                    data.draw,
                    statistic,
                    alpha,
                    seeds,
                    float(self.resampling_risk),
                    self.n_jobs,
                    getattr(data, "q_bound", 1.0),
                    SmceNull(data) if bracketed(data) else None,
                )
                threshold = _resample_threshold(null, alpha, (alpha, 0.0))
                p_value = (1 + _at_least(null, statistic)) / (null.size + 1)
                # undecided after every draw: the fixed test on all of them
                calibrated = (
                    bool(statistic <= threshold) if rejected is None else not rejected
                )
            else:
                null = _dce_null(name, measure, data, seeds) if tolerance > 0 else None
                if null is None and tolerance == 0 and bracketed(data):
                    # the fixed test reads one count and one order statistic
                    null = SmceNull(data)
                    null.extend(seeds, lambda d, s: _draw_all(d, s, self.n_jobs))
                if null is None:
                    null = np.sort(_draw_all(data.draw, seeds, self.n_jobs))
                if tolerance == 0:

                    def threshold_at(level):
                        return _resample_threshold(null, level, (level, 0.0))

                else:
                    threshold_at = _TolerantRule(
                        name, measure._lipschitz, tolerance, data, null
                    )

                threshold = threshold_at(alpha)
                if tolerance == 0:
                    p_value = (1 + _at_least(null, statistic)) / (null.size + 1)
                else:
                    p_value = _smallest_rejecting_level(statistic, threshold_at)
                if isinstance(null, _DceNull):
                    null.release()  # the masses kept for its bounds
                calibrated = bool(statistic <= threshold)
            n_drawn = int(null.size)
            min_epsilon = None
            if tolerance > 0:
                min_epsilon = _tolerant_min_epsilon(name, threshold, alpha, data)
            elif dce_factor is not None:
                t_no = math.sqrt(2 * math.log(1 / alpha) / n_eff)
                min_epsilon = (threshold + t_no) / dce_factor
        min_epsilon_measure = None
        if dce_factor is not None:
            min_epsilon_measure = _measure_min_epsilon(threshold, alpha, n_eff)

        self.statistic_ = statistic
        self.threshold_ = threshold
        self.p_value_ = p_value
        self.null_statistics_ = null
        self.n_resamples_ = n_drawn
        self.min_epsilon_ = min_epsilon
        self.min_epsilon_measure_ = min_epsilon_measure
        self.n_samples_ = data.n
        self.n_effective_ = float(n_eff)
        # what the numbers are about, for every sentence that shows them
        utility = getattr(measure, "utility", None)
        if utility is not None:
            target = utility if isinstance(utility, str) else type(utility).__name__
        elif np.ndim(y_prob) == 2 and np.shape(y_prob)[1] > 2:
            target = "top-label"
        else:
            target = None
        # the interval reads the canonical form the null was built on (no
        # second check); a custom measure's data has none (and no interval)
        canonical = getattr(data, "data", None)
        rows = (canonical, None, None) if canonical is not None else (
            y_true, y_prob, sample_weight)
        interval = _measure_interval(
            measure, *rows, self.pos_label, labels, 1 - alpha, self.random_state,
        )
        self.result_ = CalibrationTestResult(
            interval=interval,
            target=target,
            calibrated=calibrated,
            statistic=statistic,
            threshold=float(threshold),
            p_value=None if p_value is None else float(p_value),
            alpha=alpha,
            epsilon=None if self.epsilon is None else float(self.epsilon),
            tolerance=tolerance,
            min_epsilon=None if min_epsilon is None else float(min_epsilon),
            n=data.n,
            measure=name,
            method=method,
            n_resamples=n_drawn,
            min_epsilon_measure=(
                None if min_epsilon_measure is None else float(min_epsilon_measure)
            ),
        )
        return self

    @property
    def null_statistics_(self) -> np.ndarray | None:
        """The measure on each resampled data set (resample mode), sorted.

        See the class's Attributes: the tolerant dCE test solves the draws its
        answers did not need when this is first read.
        """
        try:
            null = self.__dict__["_null_statistics"]
        except KeyError:
            raise AttributeError(
                f"This {type(self).__name__} instance is not fitted yet: it has "
                "no attribute 'null_statistics_'."
            ) from None
        if isinstance(null, (_DceNull, SmceNull)):
            null = self.__dict__["_null_statistics"] = null.sorted_values()
        return null

    @null_statistics_.setter
    def null_statistics_(self, value):
        self.__dict__["_null_statistics"] = value

    def _check_params(self):
        """Validate the parameters; resolve the measure to an object and a name."""
        return check_tester_params(self)
