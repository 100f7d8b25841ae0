"""skcal: exact, fast calibration measures, tests and recalibrators for scikit-learn."""

from .measures import (
    BinnedECE,
    CalibrationDecisionLoss,
    CutoffCalibrationError,
    SmoothCalibrationError,
    SoftBinnedCDL,
)
from .metrics import (
    binned_ece,
    calibration_decision_loss,
    calibration_fixed_decision_loss,
    cutoff_calibration_error,
    maximum_swap_regret,
    smooth_calibration_error,
    soft_binned_cdl,
)
from .scorers import CalibrationScorer, get_scorer, get_scorer_names, make_scorers

__version__ = "0.1.0.dev0"

__all__ = [
    "BinnedECE",
    "CalibrationDecisionLoss",
    "CalibrationScorer",
    "CutoffCalibrationError",
    "SmoothCalibrationError",
    "SoftBinnedCDL",
    "binned_ece",
    "calibration_decision_loss",
    "calibration_fixed_decision_loss",
    "cutoff_calibration_error",
    "get_scorer",
    "get_scorer_names",
    "make_scorers",
    "maximum_swap_regret",
    "smooth_calibration_error",
    "soft_binned_cdl",
]
