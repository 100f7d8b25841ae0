"""Utility functions and families for multiclass utility calibration.

A utility ``u(p, e_j)`` in ``[-1, 1]`` is what a user of the prediction ``p``
gets when the class turns out to be ``j`` (Hegazy, Jordan and Dieuleveut,
*Scalable Utility-Aware Multiclass Calibration*, Section 3). The predicted
utility is ``v_u(p) = sum_j p_j u(p, e_j)`` and the realised one
``u(p, e_y)``; :func:`skcal.utility_calibration_error` measures how far apart
they are on every interval of ``v_u``.

The implementation is private: the utilities in ``_utilities``, their
families and the reading of a measure's ``utility`` argument in ``_families``,
and what they share (parameters, checks, one evaluation pass per prediction
matrix) in ``_engine``.
"""

from ._families import (
    ClassWiseFamily,
    LinearFamily,
    RankFamily,
    TopKFamily,
    UtilityFamily,
)
from ._utilities import (
    DCG,
    ClassWise,
    DecisionUtility,
    GainMatrix,
    Linear,
    Rank,
    SimilarityUtility,
    TopClass,
    TopK,
    Utility,
)

__all__ = [
    "DCG",
    "ClassWise",
    "ClassWiseFamily",
    "DecisionUtility",
    "GainMatrix",
    "Linear",
    "LinearFamily",
    "Rank",
    "RankFamily",
    "SimilarityUtility",
    "TopClass",
    "TopK",
    "TopKFamily",
    "Utility",
    "UtilityFamily",
]
