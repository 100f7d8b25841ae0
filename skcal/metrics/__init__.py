"""Calibration measures as plain functions."""

from ._cdl import (
    calibration_decision_loss,
    calibration_fixed_decision_loss,
    maximum_swap_regret,
)
from ._cutoff import cutoff_calibration_error
from ._ece import binned_ece
from ._ldtc import lower_distance_to_calibration
from ._multiclass import utility_calibration_ecdf, utility_calibration_error
from ._scdl import soft_binned_cdl
from ._smce import smooth_calibration_error

__all__ = [
    "calibration_decision_loss",
    "calibration_fixed_decision_loss",
    "maximum_swap_regret",
    "cutoff_calibration_error",
    "soft_binned_cdl",
    "binned_ece",
    "utility_calibration_error",
    "utility_calibration_ecdf",
    "smooth_calibration_error",
    "lower_distance_to_calibration",
]
