"""skcal: exact, fast calibration measures, tests and recalibrators for scikit-learn."""

from .metrics import (
    cutoff_calibration_error,
)

__version__ = "0.1.0.dev0"

__all__ = [
    "cutoff_calibration_error",
]
