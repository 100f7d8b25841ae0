"""Calibration measures as plain functions."""

from ._cutoff import cutoff_calibration_error

__all__ = [
    "cutoff_calibration_error",
]
