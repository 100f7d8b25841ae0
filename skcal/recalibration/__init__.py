"""Recalibrators: maps from a frozen model's probabilities to calibrated ones.

One private module per family, as in scikit-learn's ``linear_model``:

* ``_patching``: :class:`UtilityPatchingRecalibrator` (utility patching,
  Hegazy, Jordan and Dieuleveut) and, for now, :class:`RecalibratedClassifier`;
* ``_base``: what every probability-to-probability family shares.
"""

from ._patching import (
    Patch,
    RecalibratedClassifier,
    UtilityPatchingRecalibrator,
    project_simplex,
)
from ._scaling import (
    BetaCalibration,
    DirichletCalibration,
    MatrixScaling,
    SigmoidCalibration,
    TemperatureScaling,
    VectorScaling,
)

__all__ = [
    "Patch",
    "RecalibratedClassifier",
    "UtilityPatchingRecalibrator",
    "project_simplex",
    "SigmoidCalibration",
    "BetaCalibration",
    "TemperatureScaling",
    "VectorScaling",
    "MatrixScaling",
    "DirichletCalibration",
]
