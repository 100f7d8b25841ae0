"""Calibration testing (Definitions 2 and 4 of Hu, Jambulapati, Tian and Yang, paper 002).

:class:`CalibrationTester` answers "is this predictor calibrated?" on held-out
data with a stated error probability, and :class:`CalibrationTestResult` is
its answer. Two ways to set the decision threshold:

* ``"theory"``: the rules of 002 Theorem 3 (smCE) and Theorem 4 (dCE), with
  the universal constants of those theorems made explicit below.
* ``"resample"``: a Monte Carlo test against the calibrated null
  ``y* ~ Bernoulli(p)``, exact at level ``alpha`` for every ``n``.
"""

import math
import numbers
import warnings
from dataclasses import dataclass

import numpy as np
from joblib import effective_n_jobs
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import check_is_fitted

from . import metrics
from ._validation import check_binary_calibration_input
from .metrics._ldtc import grid_points

__all__ = ["CalibrationTestResult", "CalibrationTester"]


@dataclass(frozen=True)
class _MeasureFacts:
    """What the tester needs to know about a measure beyond its value.

    dce_factor : a constant ``a`` with ``measure(D) >= a * dCE(D)`` for every
        distribution, such that the measure of a sample is at least the
        sample mean of one fixed function with values in ``[-1, 1]`` whose
        mean is ``measure(D)`` (so Hoeffding bounds its lower tail).
    lipschitz : ``(L_v, L_y)``: moving predictions by a total (weighted mean)
        distance ``A`` changes the measure of a sample by at most ``L_v A``,
        flipping outcomes of total weight ``F`` by at most ``L_y F``.
    """

    function: str
    dce_factor: float = None
    lipschitz: tuple = None


_MEASURES = {
    # smCE >= dCE / 2 (002 Lemma 12), witnessed by one Lipschitz test x;
    # |(y - v) x(v) - (y - u) x(u)| <= 2 |u - v| and a flip moves it by |x| <= 1.
    "smce": _MeasureFacts("smooth_calibration_error", 0.5, (2.0, 1.0)),
    # dCE^U >= dCE (002 Lemma 17), witnessed by one dual solution with values
    # in [-1, 1] (the exact penalty of 002 Lemmas 21-22 bounds the duals by 1);
    # costs |u - v| are 1-Lipschitz in v, and a flip unbalances a grid point
    # by its mass, which 002 Lemma 21 repairs at no more cost.
    "dce": _MeasureFacts("lower_distance_to_calibration", 1.0, (1.0, 1.0)),
    # Abel summation gives smCE <= |S(1)| + sup_t |S(t)| <= 2 cutoff, with
    # S(t) = E[(y - v) 1{v <= t}]; so cutoff >= smCE / 2 >= dCE / 4.
    "cutoff": _MeasureFacts("cutoff_calibration_error", 0.25),
    "scdl": _MeasureFacts("soft_binned_cdl"),
    "cdl": _MeasureFacts("calibration_decision_loss"),
    "binned_ece": _MeasureFacts("binned_ece"),
}

# With tolerance > 0 the level alpha is split three ways (see the Notes of
# CalibrationTester): the Monte Carlo test, how far the nearest calibrated
# predictions can be on this sample, and how many outcomes they would flip.
_MONTE_CARLO_SHARE = 0.8
_DISTANCE_SHARE = 0.1
_FLIP_SHARE = 0.1

# Keyword arguments the tester sets itself.
_RESERVED_PARAMS = ("sample_weight", "pos_label", "multiclass")


@dataclass(frozen=True, repr=False)
class CalibrationTestResult:
    """The decision of a :class:`CalibrationTester`, with what it rests on.

    Attributes
    ----------
    calibrated : bool
        The decision: ``True`` ("yes") when ``statistic <= threshold``.
    statistic : float
        The measure on the data.
    threshold : float
        The largest statistic still accepted as calibrated.
    p_value : float or None
        Resample mode: the smallest ``alpha`` at which the test would say
        "not calibrated". None in theory mode.
    alpha : float
        The error probability the test was run at.
    epsilon : float or None
        The ``epsilon`` (002 Definition 2; ``epsilon_1`` of Definition 4) the
        tester was given.
    tolerance : float
        ``epsilon_2`` of 002 Definition 4: data this close to calibrated
        (in dCE) count as calibrated.
    min_epsilon : float or None
        The smallest ``epsilon`` this test certifies at this ``n``: see
        :class:`CalibrationTester` (Notes). None where the measure has no
        known lower bound in terms of dCE.
    n : int
        Number of samples.
    measure : str
        The measure's name.
    method : str
        ``"resample"``, ``"theorem 3"`` or ``"theorem 4"``.

    Examples
    --------
    >>> from skcal import CalibrationTester
    >>> result = CalibrationTester(threshold="theory", epsilon=0.9).decide(
    ...     [0, 1, 1, 0] * 50, [0.5] * 200)
    >>> result.calibrated, result.method
    (True, 'theorem 3')
    """

    calibrated: bool
    statistic: float
    threshold: float
    p_value: float
    alpha: float
    epsilon: float
    tolerance: float
    min_epsilon: float
    n: int
    measure: str
    method: str

    def __repr__(self):
        def show(value):
            return f"{value:.4g}" if isinstance(value, float) else repr(value)

        fields = ", ".join(
            f"{name}={show(getattr(self, name))}"
            for name in self.__dataclass_fields__
        )
        return f"{type(self).__name__}({fields})"


class CalibrationTester(BaseEstimator):
    """Test whether predictions are calibrated (002 Definitions 2 and 4).

    An ``(epsilon, tolerance)``-tester must say "calibrated" when the data
    come from a distribution whose lower distance to calibration (dCE, 002
    Definition 1) is at most ``tolerance``, and "not calibrated" when it is
    at least ``epsilon``, each with probability at least ``1 - alpha``
    (Definition 2 is ``tolerance = 0`` and ``alpha = 1/3``). The tester
    computes a calibration measure on held-out ``(y_true, y_prob)`` and
    compares it with a threshold set either by the paper's theorems or by
    resampling outcomes from the predictions.

    Parameters
    ----------
    measure : str or callable, default="smce"
        ``"smce"`` (:func:`~skcal.smooth_calibration_error`), ``"dce"``
        (:func:`~skcal.lower_distance_to_calibration`), ``"cutoff"``,
        ``"scdl"``, ``"cdl"`` or ``"binned_ece"``; or a function
        ``f(y_true, y_prob, sample_weight=None, **measure_params) -> float``
        (resample mode only).
    epsilon : float, default=None
        ``epsilon`` of 002 Definition 2 (``epsilon_1`` of Definition 4), in
        ``(0, 1]``. Required for ``threshold="theory"``; in resample mode it
        is only reported beside ``min_epsilon``.
    tolerance : float, default=0.0
        ``epsilon_2`` of 002 Definition 4, in ``[0, 1)``: the null hypothesis
        is ``dCE <= tolerance``. Above 0 it needs ``measure`` "smce" or
        "dce" (measures that are Lipschitz in the predictions).
    alpha : float, default=0.05
        Error probability, in ``(0, 1)``: of a false "not calibrated" (both
        modes) and of a false "calibrated" when dCE >= ``epsilon`` (theory
        mode, when ``epsilon >= min_epsilon``).
    threshold : {"resample", "theory"}, default="resample"
        How to set the decision threshold; see Notes.
    n_resamples : int, default=999
        Monte Carlo draws of the calibrated null (resample mode). The test
        can only reject if ``alpha * (n_resamples + 1) >= 1``.
    measure_params : dict, default=None
        Extra keyword arguments for the measure, e.g. ``{"grid": 200}`` for
        "dce" or ``{"n_bins": 10}`` for "binned_ece".
    pos_label : int, float, bool or str, default=None
        The positive class, as for the measures. Multiclass ``y_prob`` is
        tested for top-label calibration.
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
    null_statistics_ : ndarray of shape (n_resamples,) or None
        The measure on each resampled data set (resample mode), sorted.
    min_epsilon_ : float or None
        The smallest ``epsilon`` certified at this ``n`` (see Notes).
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

    **threshold="theory"** implements 002 Theorem 3 (smCE; needs
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
      most twice that (002 Lemma 12);
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
    for every ``n`` and every calibrated distribution.

    With ``e2 > 0`` the null "dCE <= e2" is composite and the outcomes'
    law given the predictions is unknown. Let ``u`` be calibrated
    predictions at mean distance ``A`` from ``p`` (they exist when
    ``dCE <= e2``). Then ``T(p, y) <= T(u, y) + L_v A``; ``T(u, y)`` is
    exchangeable with ``T(u, y*)``, ``y* ~ Bernoulli(u)``; and drawing
    ``y*`` and the resampled outcomes from the same uniforms flips a weight
    ``F_b`` of outcomes, so ``T(u, y*_b) <= T*_b + L_v A + L_y F_b``. The
    test therefore compares ``T`` with the Monte Carlo threshold at level
    ``0.8 a`` plus the shift ``(2 L_v + L_y) A' + L_y t_F``, where
    ``A' = e2 + t_B`` bounds ``A`` except with probability ``0.1 a``
    (Bernstein) and ``t_F`` bounds every ``F_b - A`` except with
    probability ``0.1 a`` (Bernstein, union over the ``B`` draws);
    ``(L_v, L_y) = (2, 1)`` for smCE and ``(1, 1)`` for dCE. The test stays
    valid at level ``a`` for every distribution with dCE ``<= e2``, and is
    conservative; ``p_value_`` is the smallest level at which it rejects.

    In resample mode ``min_epsilon_ = (threshold_ + t_no) / c``, with
    ``c = 1/2`` (smCE), ``1`` (dCE) or ``1/4`` (cutoff; cutoff >= smCE/2):
    any distribution with dCE at least that has a statistic above the
    threshold with probability at least ``1 - a`` (the lower-tail bound
    above), treating the threshold, a function of the predictions only, as
    fixed. For the other measures no bound in terms of dCE is known and it
    is None.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal import CalibrationTester
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = rng.uniform(size=2000) < p
    >>> tester = CalibrationTester(n_resamples=199, random_state=0).fit(y, p)
    >>> tester.decide().calibrated
    True
    >>> y_shifted = rng.uniform(size=2000) < np.clip(p + 0.1, 0, 1)
    >>> result = tester.decide(y_shifted, p)
    >>> result.calibrated, result.p_value
    (False, 0.005)
    """

    def __init__(
        self,
        measure="smce",
        *,
        epsilon=None,
        tolerance=0.0,
        alpha=0.05,
        threshold="resample",
        n_resamples=999,
        measure_params=None,
        pos_label=None,
        random_state=None,
        n_jobs=None,
    ):
        self.measure = measure
        self.epsilon = epsilon
        self.tolerance = tolerance
        self.alpha = alpha
        self.threshold = threshold
        self.n_resamples = n_resamples
        self.measure_params = measure_params
        self.pos_label = pos_label
        self.random_state = random_state
        self.n_jobs = n_jobs

    def fit(self, y_true, y_prob, sample_weight=None):
        """Compute the statistic and the decision threshold.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            Observed labels.
        y_prob : array-like of shape (n_samples,) or (n_samples, n_classes)
            Predicted probability of the positive class, or
            ``predict_proba`` output (multiclass: top-label).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights.

        Returns
        -------
        self : CalibrationTester
        """
        return self._fit(y_true, y_prob, sample_weight, labels=None)

    def decide(self, y_true=None, y_prob=None, sample_weight=None):
        """The test's decision; fits on ``(y_true, y_prob)`` first if given.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,), default=None
        y_prob : array-like of shape (n_samples,) or (n_samples, n_classes), \
default=None
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        result : CalibrationTestResult
        """
        if (y_true is None) != (y_prob is None):
            raise ValueError("Pass both y_true and y_prob to decide, or neither.")
        if y_true is not None:
            self.fit(y_true, y_prob, sample_weight=sample_weight)
        elif sample_weight is not None:
            raise ValueError("sample_weight was given without y_true and y_prob.")
        check_is_fitted(self)
        return self.result_

    @classmethod
    def from_estimator(cls, estimator, X, y, *, sample_weight=None, **params):
        """A tester fitted on a classifier's ``predict_proba`` on ``(X, y)``.

        Parameters
        ----------
        estimator : fitted classifier with ``predict_proba``
        X : array-like of shape (n_samples, n_features)
            Held-out features (not the training data: a test on the training
            data measures overfitting, not calibration).
        y : array-like of shape (n_samples,)
            Held-out labels.
        sample_weight : array-like of shape (n_samples,), default=None
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
        facts, function, params, name = self._check_params()
        y, p, w = check_binary_calibration_input(
            y_true, y_prob, sample_weight, pos_label=self.pos_label, labels=labels
        )
        total = w.sum()
        n_eff = total**2 / np.sum(w**2)
        max_share = float(w.max() / total)
        statistic = _evaluate(function, params, y, p, w)
        alpha, tolerance = float(self.alpha), float(self.tolerance)

        if self.threshold == "theory":
            if name == "dce":
                method = "theorem 4"
                h = float(np.max(np.diff(grid_points(params.get("grid", 100)))))
            else:
                method, h = "theorem 3", 0.0
            threshold, min_epsilon = _theory_rule(
                name, float(self.epsilon), tolerance, alpha, n_eff, max_share, h
            )
            if self.epsilon < min_epsilon:
                warnings.warn(
                    f"n={y.shape[0]} samples are too few for the guarantee of "
                    f"002 {method.title()} at epsilon={self.epsilon:g}: it "
                    f"holds for epsilon >= {min_epsilon:.4g}.",
                    UserWarning,
                    stacklevel=3,
                )
            null, p_value = None, None
        else:
            method = "resample"
            null = self._null_statistics(function, params, p, w)
            shift = _tolerance_shift(facts, tolerance, alpha, n_eff, max_share, null.size)

            def threshold_at(level):
                return _resample_threshold(null, level, shift(level))

            threshold = threshold_at(alpha)
            if tolerance == 0:
                p_value = (1 + np.count_nonzero(null >= statistic)) / (null.size + 1)
            else:
                p_value = _smallest_rejecting_level(statistic, threshold_at)
            min_epsilon = None
            if facts.dce_factor is not None:
                t_no = math.sqrt(2 * math.log(1 / alpha) / n_eff)
                min_epsilon = (threshold + t_no) / facts.dce_factor

        self.statistic_ = statistic
        self.threshold_ = threshold
        self.p_value_ = p_value
        self.null_statistics_ = null
        self.min_epsilon_ = min_epsilon
        self.n_samples_ = y.shape[0]
        self.n_effective_ = float(n_eff)
        self.result_ = CalibrationTestResult(
            calibrated=bool(statistic <= threshold),
            statistic=statistic,
            threshold=float(threshold),
            p_value=None if p_value is None else float(p_value),
            alpha=alpha,
            epsilon=None if self.epsilon is None else float(self.epsilon),
            tolerance=tolerance,
            min_epsilon=None if min_epsilon is None else float(min_epsilon),
            n=y.shape[0],
            measure=name,
            method=method,
        )
        return self

    def _check_params(self):
        """Validate the parameters; resolve the measure."""
        if callable(self.measure):
            facts = _MeasureFacts(function=None)
            function = self.measure
            name = getattr(self.measure, "__name__", repr(self.measure))
        elif isinstance(self.measure, str) and self.measure in _MEASURES:
            facts = _MEASURES[self.measure]
            function = getattr(metrics, facts.function, None)
            if function is None:
                raise ValueError(
                    f"measure={self.measure!r} needs skcal.{facts.function}, "
                    "which this build of skcal does not provide."
                )
            name = self.measure
        else:
            raise ValueError(
                f"measure must be one of {sorted(_MEASURES)} or a callable, "
                f"got {self.measure!r}."
            )
        params = {} if self.measure_params is None else self.measure_params
        if not isinstance(params, dict):
            raise TypeError(
                f"measure_params must be a dict or None, got {type(params).__name__}."
            )
        reserved = [k for k in params if k in _RESERVED_PARAMS or k.startswith("return_")]
        if reserved:
            raise ValueError(
                f"measure_params may not set {reserved}: the tester passes "
                "sample weights and labels itself and needs a single value."
            )
        _check_real("alpha", self.alpha, 0.0, 1.0, closed=False)
        _check_real("tolerance", self.tolerance, 0.0, 1.0, closed="left")
        if self.epsilon is not None:
            _check_real("epsilon", self.epsilon, 0.0, 1.0, closed="right")
            if self.tolerance >= self.epsilon:
                raise ValueError(
                    f"tolerance ({self.tolerance}) must be below epsilon "
                    f"({self.epsilon}): 002 Definition 4 separates dCE <= "
                    "tolerance from dCE >= epsilon."
                )
        if self.threshold == "theory":
            if not (isinstance(self.measure, str) and name in ("smce", "dce")):
                raise ValueError(
                    "threshold='theory' exists for measure 'smce' (002 Theorem 3) "
                    f"and 'dce' (002 Theorem 4), not {name!r}; use "
                    "threshold='resample'."
                )
            if self.epsilon is None:
                raise ValueError("threshold='theory' needs epsilon.")
            if name == "smce" and not self.epsilon > 4 * self.tolerance:
                raise ValueError(
                    "002 Theorem 3 needs epsilon > 4 * tolerance for the smCE "
                    f"tester, got epsilon={self.epsilon}, tolerance="
                    f"{self.tolerance}; use measure='dce' for a tighter tolerance."
                )
        elif self.threshold == "resample":
            if (
                not isinstance(self.n_resamples, numbers.Integral)
                or isinstance(self.n_resamples, bool)
                or self.n_resamples < 1
            ):
                raise ValueError(
                    f"n_resamples must be a positive integer, got {self.n_resamples!r}."
                )
            if self.tolerance > 0 and facts.lipschitz is None:
                raise ValueError(
                    f"tolerance > 0 needs a measure that is Lipschitz in the "
                    f"predictions ('smce' or 'dce'), not {name!r}."
                )
            level = self.alpha * (_MONTE_CARLO_SHARE if self.tolerance > 0 else 1.0)
            if math.floor(level * (self.n_resamples + 1) + 1e-9) < 1:
                raise ValueError(
                    f"n_resamples={self.n_resamples} is too few to ever reject at "
                    f"this alpha: it needs at least {math.ceil(1 / level) - 1}."
                )
        else:
            raise ValueError(
                f"threshold must be 'resample' or 'theory', got {self.threshold!r}."
            )
        return facts, function, params, name

    def _null_statistics(self, function, params, p, w):
        """The measure on ``n_resamples`` outcome vectors ``y* ~ Bernoulli(p)``."""
        rng = check_random_state(self.random_state)
        # One seed per draw, so the draws do not depend on how they are split
        # between jobs.
        seeds = np.random.SeedSequence(
            rng.randint(np.iinfo(np.int32).max, size=4)
        ).spawn(self.n_resamples)
        n_chunks = min(self.n_resamples, effective_n_jobs(self.n_jobs))
        chunks = np.array_split(np.arange(self.n_resamples), n_chunks)
        parts = Parallel(n_jobs=self.n_jobs)(
            delayed(_resampled_statistics)(
                function, params, p, w, [seeds[i] for i in chunk]
            )
            for chunk in chunks
        )
        return np.sort(np.concatenate(parts))


def _evaluate(function, params, y, p, w):
    value = function(y, p, sample_weight=w, **params)
    if np.ndim(value) != 0:
        raise TypeError(
            f"The measure returned {type(value).__name__}, not a single number."
        )
    return float(value)


def _resampled_statistics(function, params, p, w, seeds):
    """The measure on one outcome vector ``y* ~ Bernoulli(p)`` per seed."""
    out = np.empty(len(seeds))
    for b, seed in enumerate(seeds):
        y_star = (np.random.default_rng(seed).random(p.shape[0]) < p).astype(np.float64)
        out[b] = _evaluate(function, params, y_star, p, w)
    return out


def _check_real(name, value, low, high, closed):
    """``value`` is a real number in the interval (low, high) closed as told."""
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"{name} must be a real number, got {value!r}.")
    above = value >= low if closed in ("left", "both") else value > low
    below = value <= high if closed in ("right", "both") else value < high
    if not (above and below and math.isfinite(value)):
        left = "[" if closed in ("left", "both") else "("
        right = "]" if closed in ("right", "both") else ")"
        raise ValueError(
            f"{name} must be in {left}{low:g}, {high:g}{right}, got {value!r}."
        )


def _bernstein(variance, max_share, delta):
    """``t`` with ``P(S >= E S + t) <= delta`` for ``S = sum_i c_i X_i``.

    For independent ``X_i`` in ``[0, 1]``, weights ``0 <= c_i <= max_share``
    and ``sum_i c_i^2 Var X_i <= variance``: Bernstein's inequality
    ``exp(-t^2 / (2 (variance + max_share t / 3)))`` solved for ``t``.
    """
    third = max_share * math.log(1 / delta) / 3
    return third + math.sqrt(third**2 + 2 * variance * math.log(1 / delta))


def _theory_rule(name, eps1, eps2, alpha, n_eff, max_share, h):
    """Threshold and smallest certified epsilon of 002 Theorems 3 and 4.

    See the Notes of :class:`CalibrationTester` for the bounds used.
    """

    def t_cal(level):  # smCE of a calibrated sample, upper tail
        return math.sqrt(2 * math.log(2 / level) / n_eff)

    t_no = math.sqrt(2 * math.log(1 / alpha) / n_eff)
    if eps2 == 0:
        noise, distance = t_cal(alpha), 0.0
    else:
        noise = t_cal(alpha / 2)
        # E|u - v| <= eps2 and |u - v| <= 1, so Var|u - v| <= eps2.
        distance = _bernstein(eps2 / n_eff, max_share, alpha / 2)
    if name == "smce":
        t_yes = noise + 2 * distance
        return eps1 / 4 + eps2, 4 * eps2 + 4 * max(t_yes, t_no)
    t_yes = 2 * noise + distance
    return (eps1 + eps2 + h) / 2, eps2 + h + 2 * max(t_yes, t_no)


def _tolerance_shift(facts, tolerance, alpha, n_eff, max_share, n_resamples):
    """``level -> (Monte Carlo level, shift of the threshold)`` for a tolerance."""
    if tolerance == 0:
        return lambda level: (level, 0.0)
    l_v, l_y = facts.lipschitz

    def shift(level):
        distance = tolerance + _bernstein(
            tolerance / n_eff, max_share, _DISTANCE_SHARE * level
        )
        # Given the coupling, F_b is a weighted sum of independent flips with
        # mean A and variance at most max_share * A; a union bound covers
        # all n_resamples draws.
        flips = _bernstein(
            max_share * distance, max_share, _FLIP_SHARE * level / n_resamples
        )
        return _MONTE_CARLO_SHARE * level, (2 * l_v + l_y) * distance + l_y * flips

    return shift


def _resample_threshold(null, level, shifted):
    """Threshold on the statistic: Monte Carlo quantile at a level, plus a shift.

    ``null`` is sorted; rejecting iff the statistic exceeds the
    ``(B + 1 - k)``-th smallest draw, ``k = floor(level (B + 1))``, is the
    test with p-value ``(1 + #{T* >= T}) / (B + 1) <= level``.
    """
    mc_level, shift = shifted
    k = math.floor(mc_level * (null.size + 1) + 1e-9)
    if k < 1:
        return math.inf
    return float(null[null.size - k]) + shift


def _smallest_rejecting_level(statistic, threshold_at, tol=1e-6):
    """Smallest level in (0, 1] whose threshold the statistic exceeds (or 1).

    Thresholds fall as the level rises, so bisection finds it.
    """
    if not statistic > threshold_at(1.0):
        return 1.0
    low, high = 0.0, 1.0
    while high - low > tol:
        mid = (low + high) / 2
        if statistic > threshold_at(mid):
            high = mid
        else:
            low = mid
    return high
