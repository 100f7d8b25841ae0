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

from ._result import CalibrationTestResult
from ._tester import CalibrationTester

__all__ = ["CalibrationTestResult", "CalibrationTester"]
