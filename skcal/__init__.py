"""skcal: exact, fast calibration measures, tests and recalibrators for scikit-learn."""

from .metrics import (
    calibration_decision_loss,
    calibration_fixed_decision_loss,
    maximum_swap_regret,
    cutoff_calibration_error,
    soft_binned_cdl,
    binned_ece,
    utility_calibration_error,
    utility_calibration_ecdf,
    smooth_calibration_error,
    lower_distance_to_calibration,
)
from .decisions import DecisionTask, RoundedResponseClassifier, SCDLRounding
from .recalibration import RecalibratedClassifier, UtilityPatchingRecalibrator
from ._plotting import UtilityCalibrationDisplay
from .utilities import (
    DCG,
    ClassWise,
    ClassWiseFamily,
    DecisionUtility,
    GainMatrix,
    Linear,
    LinearFamily,
    Rank,
    RankFamily,
    SimilarityUtility,
    TopClass,
    TopK,
    TopKFamily,
    Utility,
    UtilityFamily,
)

from .measures import (
    BinnedECE,
    CalibrationDecisionLoss,
    CutoffCalibrationError,
    LowerDistanceToCalibration,
    SmoothCalibrationError,
    SoftBinnedCDL,
    UtilityCalibrationError,
)
from .scorers import CalibrationScorer, get_scorer, get_scorer_names, make_scorers
from .tester import CalibrationTester, CalibrationTestResult

from ._version import __version__

__all__ = [
    "BinnedECE",
    "CalibrationDecisionLoss",
    "CutoffCalibrationError",
    "LowerDistanceToCalibration",
    "SmoothCalibrationError",
    "SoftBinnedCDL",
    "UtilityCalibrationError",
    "CalibrationScorer",
    "get_scorer",
    "get_scorer_names",
    "make_scorers",
    "calibration_decision_loss",
    "calibration_fixed_decision_loss",
    "maximum_swap_regret",
    "cutoff_calibration_error",
    "soft_binned_cdl",
    "binned_ece",
    "utility_calibration_error",
    "utility_calibration_ecdf",
    "UtilityCalibrationDisplay",
    "Utility",
    "TopClass",
    "ClassWise",
    "TopK",
    "Linear",
    "Rank",
    "DCG",
    "DecisionUtility",
    "GainMatrix",
    "SimilarityUtility",
    "UtilityFamily",
    "ClassWiseFamily",
    "TopKFamily",
    "LinearFamily",
    "RankFamily",
    "smooth_calibration_error",
    "lower_distance_to_calibration",
    "CalibrationTester",
    "CalibrationTestResult",
    "DecisionTask",
    "SCDLRounding",
    "RoundedResponseClassifier",
    "UtilityPatchingRecalibrator",
    "RecalibratedClassifier",
]
