"""Recalibrators: maps from a frozen model's probabilities to calibrated ones.

One private module per family, as in scikit-learn's ``linear_model``:

* ``_patching``: :class:`UtilityPatchingRecalibrator` (utility patching,
  Hegazy, Jordan and Dieuleveut);
* ``_auto``: :class:`AutoRecalibrator`, the choice among the families by a
  cross-fitted proper score; ``_top_label``: the map of its output's largest
  probability;
* ``_classifier``: :class:`RecalibratedClassifier`, the classifier
  meta-estimator, and the chain of recalibrators it fits for a list;
* ``_base``: what every probability-to-probability family shares;
  ``_common``: small internals the modules share;
* ``_binning``: :class:`IsotonicCalibration`, :class:`HistogramBinning`,
  :class:`ScalingBinning`;
* ``_venn_abers``: :class:`VennAbersCalibration`;
* ``_spline``: :class:`SplineCalibration`;
* ``_scaling``: :class:`SigmoidCalibration`, :class:`BetaCalibration`,
  :class:`TemperatureScaling` and the log-loss pieces every scaling fit
  shares; ``_affine``: :class:`VectorScaling`, :class:`MatrixScaling`,
  :class:`DirichletCalibration`, :class:`StructuredMatrixScaling` (affine maps
  of the log-probabilities).
"""

from ._affine import (
    DirichletCalibration,
    MatrixScaling,
    StructuredMatrixScaling,
    VectorScaling,
)
from ._auto import AutoRecalibrator
from ._binning import HistogramBinning, IsotonicCalibration, ScalingBinning
from ._classifier import RecalibratedClassifier
from ._patching import (
    Patch,
    UtilityPatchingRecalibrator,
    project_simplex,
)
from ._scaling import BetaCalibration, SigmoidCalibration, TemperatureScaling
from ._spline import SplineCalibration
from ._venn_abers import VennAbersCalibration

__all__ = [
    "HistogramBinning",
    "IsotonicCalibration",
    "ScalingBinning",
    "SplineCalibration",
    "VennAbersCalibration",
    "AutoRecalibrator",
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
    "StructuredMatrixScaling",
]
