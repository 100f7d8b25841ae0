"""Recalibrators: maps from a frozen model's probabilities to calibrated ones.

One private module per family, as in scikit-learn's ``linear_model``:

* ``_patching``: :class:`UtilityPatchingRecalibrator` (utility patching,
  Hegazy, Jordan and Dieuleveut) and, for now, :class:`RecalibratedClassifier`;
* ``_base``: what every probability-to-probability family shares;
* ``_binning``: :class:`IsotonicCalibration`, :class:`HistogramBinning`,
  :class:`ScalingBinning`;
* ``_venn_abers``: :class:`VennAbersCalibration`;
* ``_spline``: :class:`SplineCalibration`.
"""

from ._binning import HistogramBinning, IsotonicCalibration, ScalingBinning
from ._patching import (
    Patch,
    RecalibratedClassifier,
    UtilityPatchingRecalibrator,
    project_simplex,
)
from ._spline import SplineCalibration
from ._venn_abers import VennAbersCalibration

__all__ = [
    "HistogramBinning",
    "IsotonicCalibration",
    "ScalingBinning",
    "SplineCalibration",
    "VennAbersCalibration",
    "Patch",
    "RecalibratedClassifier",
    "UtilityPatchingRecalibrator",
    "project_simplex",
]
