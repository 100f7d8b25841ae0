"""The online forecaster with low maximum swap regret (Hu and Wu, Algorithm 1)."""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state

from ._oracle import ExpertOracle, auto_buckets, check_outcome, step3, tents

__all__ = ["OnlineMSRForecaster"]


class OnlineMSRForecaster(BaseEstimator):
    """Online binary forecasts with low maximum swap regret against any adversary.

    Algorithm 1 of Hu and Wu, *Predict to Minimize Swap Regret for All
    Payoff-Bounded Tasks* (Section 5), with soft buckets and unbiased
    rounding (below). In each round it forecasts the probability of outcome
    1 on the grid ``k/m``, ``k = 0..m``, then sees the outcome.

    **The guarantee and its assumption.** For any adversary that picks each
    outcome knowing the forecaster and the history *but not the round's
    random draw* (the outcome is chosen before, or independently of, the
    coin that rounds the forecast), the expected maximum swap regret of
    ``T`` forecasts, the worst total regret any decision maker with payoffs
    in ``[0, 1]`` suffers by best-responding to them
    (:func:`~skcal.maximum_swap_regret`), is ``O(sqrt(T) log T)`` (Theorem
    5.1 of Hu and Wu). Outcomes that react to the drawn forecast itself are
    not covered: no forecaster can be calibrated against them (answer 0 to a
    forecast above 1/2 and 1 otherwise). The mean of the draw,
    :meth:`predict_mean`, is a function of the past alone; it is covered
    whatever the outcomes do, in the weaker soft-binned sense below.

    Each round:

    1. an expert oracle (:class:`ExpertOracle`, the algorithm of Chen, Luo
       and Wei, *Impossible Tuning Made Possible*) gives weights
       ``w_{t,k,sigma}`` to ``2(m + 1)`` experts ``(k, sigma)``, one per grid
       point and sign, and an auxiliary expert;
    2. step 3 is solved exactly: ``p~_t`` is the root of the interpolated
       weighted gain (see ``step3``), a deterministic point;
    3. the forecast is ``p~_t`` rounded at random to one of its two
       neighbouring grid points, ``(k+1)/m`` with probability ``m p~_t - k``
       (``k = floor(m p~_t)``), so ``E[p_t] = p~_t``;
    4. the outcome ``theta_t`` gives expert ``(k, sigma)`` the gain
       ``sigma tent_k(p~_t) (p~_t - theta_t)``, with the triangular weights
       ``tent_k(p) = max(0, 1 - |m p - k|)``.

    **Why the theorem carries over (derived here; the paper's own rule
    differs).** The paper buckets ``p~_t`` into ``I_i = ((i-1)/m, i/m]``
    and serves the bucket's right end ``i/m``, an upward rounding of up to
    ``1/m`` in every round (after 1,000 rounds of a 2% event it served 0.25).
    Here the buckets are the tents. For grid point ``k``, with ``n_k`` rounds
    served there, its bias is ``G_k = |sum_t 1[p_t = k/m] (k/m - theta_t)| <=
    |sum_t tent_k(p~_t) (p~_t - theta_t)| + |M_k| + n'_k / m``, where the
    first term is expert ``(k, sigma)``'s gain (bounded by the oracle's
    regret, (27) with ``sum_t tent_k(p~_t)^2`` in place of ``n_i``, since
    step 3 makes the weighted gain ``<= 0`` every round), ``M_k = sum_t
    (1[p_t = k/m] - tent_k(p~_t)) (k/m - theta_t)`` is a martingale with
    increments in ``[-1, 1]`` (the coin is independent of ``theta_t``: the
    assumption above), hence ``O(sqrt(n_k log(mT)))`` for all ``k`` at once
    in expectation, and ``n'_k = sum_t tent_k(p~_t)`` (within ``|M|``-type
    fluctuations of ``n_k``) pays the ``beta n_i`` term of Lemma 5.2 with
    ``beta = 1/m``. Lemma 5.2 holds on the grid ``0, 1/m, ..., 1`` (its proof
    uses only the spacing), so ``E[MSR] = O(sqrt(T) log T)`` as in Theorem
    5.1, with other constants. The coins never enter the experts' gains, so
    the state is a function of the outcomes alone. Deterministically, for
    any outcomes, ``|sum_t tent_k(p~_t)(p~_t - theta_t)|`` is at most the
    oracle's regret bound for every ``k``: the means :meth:`predict_mean`
    have a small soft-binned bias (:func:`~skcal.soft_binned_cdl`'s
    weights) even against outcomes that see them.

    Parameters
    ----------
    horizon : int or None, default=None
        The number of rounds ``T`` the guarantee is tuned for; it sets
        ``m = round(sqrt(T) / ln T)`` (at least 2).
        Play continues past it in epochs of twice the previous length, each
        a fresh run of Algorithm 1 (the doubling trick). With ``None`` the
        epochs have lengths 2, 4, 8, ... from the start. Because the swap
        regret of a concatenated sequence is at most the sum of the epochs'
        swap regrets (one remapping for all epochs is a special case of one
        per epoch), the guarantee survives with a larger constant: the
        epochs up to ``T`` sum to ``O(sqrt(T) log T)``.
    n_buckets : int or "auto", default="auto"
        ``m``: the forecasts take the values ``0, 1/m, ..., 1``; "auto"
        chooses it from each epoch's length as above.
    random_state : int, RandomState instance or None, default=None
        Draws the rounding coins. A fixed seed reproduces a game bit for
        bit.

    Attributes
    ----------
    n_rounds_ : int
        Rounds completed (outcomes received).
    n_buckets_ : int
        ``m`` of the current epoch.
    epoch_ : int
        Index of the current epoch (0 for the first).
    forecasts_ : ndarray of shape (`n_rounds_`,)
        The forecasts ``p_t`` of the completed rounds.
    outcomes_ : ndarray of shape (`n_rounds_`,)
        The outcomes of the completed rounds.

    See Also
    --------
    maximum_swap_regret : The measure whose growth the forecaster controls.
    OnlineRecalibratedClassifier : One forecaster per bucket of a model's score.

    References
    ----------
    Lunjia Hu and Yifan Wu. *Predict to Minimize Swap Regret for All
    Payoff-Bounded Tasks*. FOCS 2024, pages 244-263. Section 5, Algorithm 1,
    Theorem 5.1, Lemmas 5.2-5.6.

    Liyu Chen, Haipeng Luo and Chen-Yu Wei. *Impossible Tuning Made
    Possible: A New Expert Algorithm and Its Applications*. COLT 2021, PMLR
    134:1216-1259 (arXiv:2102.01046).

    Examples
    --------
    An adaptive adversary: outcome 1 exactly when the previous forecast was
    below one half.

    >>> import math
    >>> from skcal import maximum_swap_regret
    >>> from skcal.online import OnlineMSRForecaster
    >>> def adversary(forecasts, outcomes):
    ...     return int(len(forecasts) == 0 or forecasts[-1] < 0.5)
    >>> forecaster = OnlineMSRForecaster(horizon=2000, random_state=0)
    >>> p, y = forecaster.run(adversary, n_rounds=2000)
    >>> forecaster.n_buckets_
    6
    >>> msr = maximum_swap_regret(y, p)
    >>> msr / (math.sqrt(2000) * math.log(2000)) < 1.0
    True

    Forecasting the last outcome against the same adversary has a ratio
    near 3, and its MSR grows linearly in ``T``:

    >>> f_last, y_last = [], []
    >>> for t in range(2000):
    ...     outcome = adversary(f_last, y_last)
    ...     f_last.append(float(y_last[-1]) if y_last else 0.5)
    ...     y_last.append(outcome)
    >>> msr_last = maximum_swap_regret(y_last, f_last)
    >>> round(msr_last / (math.sqrt(2000) * math.log(2000)), 2)
    2.94

    The round-by-round protocol:

    >>> forecaster = OnlineMSRForecaster(horizon=100, random_state=0)
    >>> p = forecaster.predict()
    >>> forecaster = forecaster.update(1)
    >>> forecaster.n_rounds_
    1
    """

    def __init__(
        self,
        horizon: int | None = None,
        *,
        n_buckets: str | int = "auto",
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        self.horizon = horizon
        self.n_buckets = n_buckets
        self.random_state = random_state

    # -- set-up ---------------------------------------------------------------------

    def _check_params(self):
        h = self.horizon
        if h is not None and (
            not isinstance(h, numbers.Integral) or isinstance(h, bool) or h < 2
        ):
            raise ValueError(f"horizon must be None or an integer >= 2, got {h!r}.")
        m = self.n_buckets
        if not (isinstance(m, str) and m == "auto") and (
            not isinstance(m, numbers.Integral) or isinstance(m, bool) or m < 2
        ):
            raise ValueError(f"n_buckets must be 'auto' or an integer >= 2, got {m!r}.")

    def _start(self):
        self._check_params()
        self._rng = check_random_state(self.random_state)
        self.n_rounds_ = 0
        self.epoch_ = -1
        self._epoch_end = 0
        self._epoch_len = 0
        self._p = np.empty(64)
        self._y = np.empty(64, dtype=np.int8)
        self._pending = None

    def _new_epoch(self):
        if self.epoch_ < 0:
            length = 2 if self.horizon is None else int(self.horizon)
        else:
            length = 2 * self._epoch_len
        self.epoch_ += 1
        self._epoch_len = length
        self._epoch_end = self.n_rounds_ + length
        m = auto_buckets(length) if self.n_buckets == "auto" else int(self.n_buckets)
        self.n_buckets_ = m
        self._oracle = ExpertOracle(2 * m + 3, length)

    # -- the protocol ---------------------------------------------------------------

    def _prepare(self):
        if not hasattr(self, "_rng"):
            self._start()
        if self._pending is None:
            if self.n_rounds_ >= self._epoch_end:
                self._new_epoch()
            m = self.n_buckets_
            w = self._oracle.weights()
            p_tilde = step3(w[: m + 1] - w[m + 1 : 2 * m + 2])
            k, frac = tents(p_tilde, m)
            # one coin per round, drawn whatever p~ is, so seeds replay exactly
            up = self._rng.random_sample() < frac
            self._pending = (p_tilde, k + 1 if up else k)
        return self._pending

    def predict(self) -> float:
        """The forecast for the coming round (a probability of outcome 1).

        Rounds the round's ``p~_t`` at random to a neighbouring grid point on
        the first call after an update; calling again before :meth:`update`
        returns the same forecast. The guarantee needs the outcome to be
        chosen without seeing it (see the class docstring).

        Returns
        -------
        p : float
            One of ``0, 1/m, ..., 1``, with mean :meth:`predict_mean`.
        """
        return self._prepare()[1] / self.n_buckets_

    def predict_mean(self) -> float:
        """The mean ``p~_t`` of the coming round's forecast.

        A function of the history alone (no coin): showing it does not
        reveal the round's draw.

        Returns
        -------
        p_tilde : float
            In ``[0, 1]``.
        """
        return self._prepare()[0]

    def update(self, y: int | bool | float) -> OnlineMSRForecaster:
        """Receive the outcome of the round just forecast.

        Parameters
        ----------
        y : {0, 1}
            The outcome (``True``/``False`` and ``0.0``/``1.0`` accepted).

        Returns
        -------
        self : OnlineMSRForecaster
            The estimator itself.
        """
        y = check_outcome(y)
        if getattr(self, "_pending", None) is None:
            raise RuntimeError(
                "update(y) called before predict(): ask for the round's "
                "forecast with predict() first, then report its outcome."
            )
        p_tilde, i = self._pending
        m = self.n_buckets_
        k, frac = tents(p_tilde, m)
        gain = p_tilde - y
        loss = np.zeros(2 * m + 3)
        for point, tent in ((k, 1.0 - frac), (k + 1, frac)):
            loss[point] -= tent * gain
            loss[m + 1 + point] += tent * gain
        self._oracle.update(loss)
        t = self.n_rounds_
        if t == self._p.shape[0]:
            self._p = np.concatenate([self._p, np.empty(t)])
            self._y = np.concatenate([self._y, np.empty(t, dtype=np.int8)])
        self._p[t] = i / m
        self._y[t] = y
        self.n_rounds_ = t + 1
        self._pending = None
        return self

    def run(
        self,
        outcomes: ArrayLike | Callable[[NDArray[np.float64], NDArray[np.intp]], Any],
        n_rounds: int | None = None,
    ) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
        """Play a whole game against a fixed sequence or an adaptive adversary.

        Parameters
        ----------
        outcomes : array-like of shape (n_rounds,) or callable
            The outcomes (0 or 1), or an adversary
            ``adversary(forecasts, outcomes) -> 0 or 1`` called at the start
            of each round with read-only arrays of this game's past forecasts
            and outcomes, before the round's random draw.
        n_rounds : int, default=None
            The number of rounds; required with an adversary, and at most
            ``len(outcomes)`` with a sequence (default: all of it).

        Returns
        -------
        forecasts : ndarray of shape (n_rounds,)
            The forecasts of this game's rounds.
        outcomes : ndarray of shape (n_rounds,)
            Their outcomes.
        """
        if callable(outcomes):
            if n_rounds is None:
                raise ValueError("n_rounds is required when outcomes is an adversary.")
            adversary, seq = outcomes, None
        else:
            seq = np.asarray(outcomes)
            if seq.ndim != 1:
                raise ValueError(
                    f"outcomes must be 1-d or a callable, got shape {seq.shape}."
                )
            if seq.dtype.kind not in "biuf" or not np.all((seq == 0) | (seq == 1)):
                bad = seq[:5]
                if seq.dtype.kind in "biuf":
                    bad = seq[~((seq == 0) | (seq == 1))][:5]
                raise ValueError(
                    f"outcomes must contain only 0 and 1, got {bad.tolist()}."
                )
            if n_rounds is None:
                n_rounds = seq.shape[0]
            adversary = None
        if (
            not isinstance(n_rounds, numbers.Integral)
            or isinstance(n_rounds, bool)
            or n_rounds < 0
        ):
            raise ValueError(f"n_rounds must be a non-negative integer, got {n_rounds!r}.")
        if seq is not None and n_rounds > seq.shape[0]:
            raise ValueError(
                f"n_rounds={n_rounds} exceeds the {seq.shape[0]} outcomes given."
            )
        if not hasattr(self, "_rng"):
            self._start()
        start = self.n_rounds_
        for t in range(n_rounds):
            if adversary is not None:
                past_p = self._p[start : start + t]
                past_y = self._y[start : start + t]
                past_p.flags.writeable = False
                past_y.flags.writeable = False
                y = check_outcome(adversary(past_p, past_y), "the adversary's outcome")
            else:
                assert seq is not None  # a sequence when there is no adversary
                y = int(seq[t])
            self.predict()
            self.update(y)
        end = self.n_rounds_
        return self._p[start:end].copy(), self._y[start:end].astype(np.intp)

    @property
    def forecasts_(self) -> NDArray[np.float64]:
        return self._p[: self.n_rounds_].copy()

    @property
    def outcomes_(self) -> NDArray[np.intp]:
        return self._y[: self.n_rounds_].astype(np.intp)


# --- the contextual use: an online recalibrator ---------------------------------------
