"""Online forecasting with low maximum swap regret, and its contextual use.

:class:`OnlineMSRForecaster` is Algorithm 1 of Hu and Wu, *Predict to
Minimize Swap Regret for All Payoff-Bounded Tasks* (Section 5): an online
binary forecaster whose forecasts keep the maximum swap regret (MSR) over all
payoff-bounded decision tasks at ``O(sqrt(T) log T)`` in expectation against
any adaptive adversary (their Theorem 5.1). Its expert oracle is the
multi-scale multiplicative weights with correction of Chen, Luo and Wei,
*Impossible Tuning Made Possible: A New Expert Algorithm and Its
Applications* (COLT 2021), see :class:`skcal.online._oracle.ExpertOracle`.

:class:`OnlineRecalibratedClassifier` runs one such forecaster per bucket of
a deployed binary classifier's score, so that the classifier's probabilities
are corrected as outcomes arrive (``partial_fit`` / ``predict_proba``).
"""

from ._classifier import OnlineRecalibratedClassifier
from ._forecaster import OnlineMSRForecaster

__all__ = ["OnlineMSRForecaster", "OnlineRecalibratedClassifier"]
