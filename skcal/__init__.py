"""skcal: exact, fast calibration measures, tests and recalibrators for scikit-learn."""

from ._dask import dask_sketch
from ._plotting import UtilityCalibrationDisplay
from ._reliability import (
    ReliabilityDisplay,
    plot_classwise_reliability,
    plot_patching_history,
    plot_test_result,
)
from ._version import __version__
from .decisions import DecisionTask, RoundedResponseClassifier, SCDLRounding
from .measures import (
    BinnedECE,
    CalibrationDecisionLoss,
    CutoffCalibrationError,
    LowerDistanceToCalibration,
    SmoothCalibrationError,
    SoftBinnedCDL,
    UtilityCalibrationError,
)
from .metrics import (
    binned_ece,
    calibration_decision_loss,
    calibration_fixed_decision_loss,
    cutoff_calibration_error,
    lower_distance_to_calibration,
    maximum_swap_regret,
    smooth_calibration_error,
    soft_binned_cdl,
    utility_calibration_ecdf,
    utility_calibration_error,
)
from .online import OnlineMSRForecaster, OnlineRecalibratedClassifier
from .recalibration import (
    HistogramBinning,
    IsotonicCalibration,
    ScalingBinning,
    SplineCalibration,
    VennAbersCalibration,
)
from .recalibration import RecalibratedClassifier, UtilityPatchingRecalibrator
from .scorers import CalibrationScorer, get_scorer, get_scorer_names, make_scorers
from .sketch import CalibrationSketch
from .tester import CalibrationTester, CalibrationTestResult
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

__all__ = [
    "__version__",
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
    "ReliabilityDisplay",
    "plot_classwise_reliability",
    "plot_patching_history",
    "plot_test_result",
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
    "IsotonicCalibration",
    "HistogramBinning",
    "ScalingBinning",
    "VennAbersCalibration",
    "SplineCalibration",
    "UtilityPatchingRecalibrator",
    "RecalibratedClassifier",
    "OnlineMSRForecaster",
    "OnlineRecalibratedClassifier",
    "CalibrationSketch",
    "dask_sketch",
]
