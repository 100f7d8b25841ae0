"""skcal: exact, fast calibration measures, tests and recalibrators for scikit-learn.

The public names below are imported on first use (PEP 562): ``import skcal``
loads only the compiled kernels, so that ``python -m skcal report`` imports
what the report needs and not, say, the recalibrators or matplotlib.
``from skcal import X`` and ``skcal.X`` work as with eager imports.
"""

import importlib

from . import _kernels  # noqa: F401  (a clear error in an unbuilt source tree)
from ._version import __version__

__all__ = [
    "__version__",
    "BinnedECE",
    "CalibrationDecisionLoss",
    "CutoffCalibrationError",
    "LowerDistanceToCalibration",
    "SmoothCalibrationError",
    "SoftBinnedCDL",
    "UtilityCalibrationError",
    "CalibrationMeasure",
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
    "ClassWiseReliabilityDisplay",
    "CalibrationTestDisplay",
    "PatchingHistoryDisplay",
    "CalibrationMonitorDisplay",
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
    "CalibrationMonitor",
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
    "AutoRecalibrator",
    "SigmoidCalibration",
    "BetaCalibration",
    "TemperatureScaling",
    "VectorScaling",
    "MatrixScaling",
    "DirichletCalibration",
    "StructuredMatrixScaling",
    "OnlineMSRForecaster",
    "OnlineRecalibratedClassifier",
    "CalibrationSketch",
    "dask_sketch",
]

# public name -> the submodule that defines it
_LAZY = {
    "BinnedECE": "measures",
    "CalibrationDecisionLoss": "measures",
    "CutoffCalibrationError": "measures",
    "LowerDistanceToCalibration": "measures",
    "SmoothCalibrationError": "measures",
    "SoftBinnedCDL": "measures",
    "UtilityCalibrationError": "measures",
    "CalibrationMeasure": "measures",
    "CalibrationScorer": "scorers",
    "get_scorer": "scorers",
    "get_scorer_names": "scorers",
    "make_scorers": "scorers",
    "calibration_decision_loss": "metrics",
    "calibration_fixed_decision_loss": "metrics",
    "maximum_swap_regret": "metrics",
    "cutoff_calibration_error": "metrics",
    "soft_binned_cdl": "metrics",
    "binned_ece": "metrics",
    "utility_calibration_error": "metrics",
    "utility_calibration_ecdf": "metrics",
    "smooth_calibration_error": "metrics",
    "lower_distance_to_calibration": "metrics",
    "UtilityCalibrationDisplay": "display",
    "ReliabilityDisplay": "display",
    "ClassWiseReliabilityDisplay": "display",
    "CalibrationTestDisplay": "display",
    "PatchingHistoryDisplay": "display",
    "CalibrationMonitorDisplay": "display",
    "Utility": "utilities",
    "TopClass": "utilities",
    "ClassWise": "utilities",
    "TopK": "utilities",
    "Linear": "utilities",
    "Rank": "utilities",
    "DCG": "utilities",
    "DecisionUtility": "utilities",
    "GainMatrix": "utilities",
    "SimilarityUtility": "utilities",
    "UtilityFamily": "utilities",
    "ClassWiseFamily": "utilities",
    "TopKFamily": "utilities",
    "LinearFamily": "utilities",
    "RankFamily": "utilities",
    "CalibrationTester": "tester",
    "CalibrationTestResult": "tester",
    "CalibrationMonitor": "monitor",
    "DecisionTask": "decisions",
    "SCDLRounding": "decisions",
    "RoundedResponseClassifier": "decisions",
    "IsotonicCalibration": "recalibration",
    "HistogramBinning": "recalibration",
    "ScalingBinning": "recalibration",
    "VennAbersCalibration": "recalibration",
    "SplineCalibration": "recalibration",
    "UtilityPatchingRecalibrator": "recalibration",
    "RecalibratedClassifier": "recalibration",
    "AutoRecalibrator": "recalibration",
    "SigmoidCalibration": "recalibration",
    "BetaCalibration": "recalibration",
    "TemperatureScaling": "recalibration",
    "VectorScaling": "recalibration",
    "MatrixScaling": "recalibration",
    "DirichletCalibration": "recalibration",
    "StructuredMatrixScaling": "recalibration",
    "OnlineMSRForecaster": "online",
    "OnlineRecalibratedClassifier": "online",
    "CalibrationSketch": "sketch",
    "dask_sketch": "sketch",
}

# subpackages and public modules reachable as attributes (``skcal.metrics``)
_SUBMODULES = frozenset({
    "decisions", "display", "measures", "metrics", "monitor", "online",
    "recalibration", "scorers", "sketch", "tester", "utilities",
})


def __getattr__(name: str) -> object:
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # found once; later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__) | _SUBMODULES)
