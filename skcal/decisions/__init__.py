"""Decision tasks, swap regret and the SCDL rounding response.

Everything here follows Bairaktari, Hu, Nguyen and Ullman, *Testable and
Actionable Calibration for Full Swap Regret* (Bairaktari et al.):

* :class:`DecisionTask` is a task ``Z = (A, U)`` with its best-response
  function ``r*_Z`` and the swap regret ``SR_Z`` of equation (1) and
  Definition 4.4;
* :class:`SCDLRounding` is the randomized rounding ``tau_m`` of
  Definition 4.1, with ``m`` chosen from the SCDL of held-out data so that
  Theorem 4.2 bounds the swap regret of ``r*_Z o tau_m`` for *every* task by
  ``2 SCDL_m + 2/m <= 2 SCDL + 2/m``;
* :class:`RoundedResponseClassifier` turns a probabilistic classifier into
  the decisions ``r*_Z o tau_m`` for one task.
"""

from ._classifier import RoundedResponseClassifier
from ._rounding import SCDLRounding
from ._task import DecisionTask

__all__ = ["DecisionTask", "RoundedResponseClassifier", "SCDLRounding"]
