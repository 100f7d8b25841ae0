"""Type aliases shared by the public signatures.

Annotations only: nothing here checks anything (the checks live in
:mod:`skcal._input`). The modules that use these aliases import them under
``typing.TYPE_CHECKING`` with ``from __future__ import annotations``, so
importing skcal does not import this module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Union

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils import Bunch

if TYPE_CHECKING:
    from .sketch import CalibrationSketch

__all__ = [
    "BinaryLabels",
    "Multiclass",
    "PosLabel",
    "RandomStateLike",
    "UtilityName",
    "Value",
]

# what ``y_true`` of a binary measure accepts: labels, or a calibration sketch
# (then ``y_prob`` and ``sample_weight`` are None)
BinaryLabels = Union[ArrayLike, "CalibrationSketch"]
# a label of the positive class, as in sklearn.metrics
PosLabel = int | float | bool | str | None
Multiclass = Literal["top-label", "raise"]
UtilityName = Literal["top-class", "class-wise", "top-k", "comb"]
RandomStateLike = int | np.random.RandomState | None
# a measure's value, or ``(value, details)`` with ``return_details=True``
Value = float | tuple[float, Bunch]
