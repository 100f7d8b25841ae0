"""Pictures of calibration, as Display classes in the style of scikit-learn.

Every picture is a class with ``from_predictions`` and ``from_estimator``
(which compute what is drawn and draw it) and ``plot(ax=...)`` (which draws
again, e.g. on other axes). matplotlib is an optional dependency: it is
imported only when something is drawn, so ``import skcal`` never needs it.
"""

from ._calibration_test import CalibrationTestDisplay
from ._classwise import ClassWiseReliabilityDisplay
from ._monitoring import CalibrationMonitorDisplay
from ._patching_history import PatchingHistoryDisplay
from ._reliability import ReliabilityDisplay
from ._utility import UtilityCalibrationDisplay

__all__ = [
    "CalibrationMonitorDisplay",
    "CalibrationTestDisplay",
    "ClassWiseReliabilityDisplay",
    "PatchingHistoryDisplay",
    "ReliabilityDisplay",
    "UtilityCalibrationDisplay",
]
