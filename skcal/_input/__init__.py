"""THE input boundary of skcal (DESIGN.md section 1).

Any accepted array-like (numpy, lists, pandas, polars, pyarrow, Array API
arrays such as torch or CuPy) is converted and checked here, once; what
lies below (the measure cores, the grouped statistic, the kernels) never
validates again.

* :mod:`._arrays`: conversion of other libraries' arrays to numpy;
* :mod:`._checks`: the checks of labels, probabilities and weights;
* :mod:`._canonical`: the canonical form of binary input, :class:`BinaryInput`,
  made by :func:`binary_input`, with the grouped statistic built on demand.
  It is imported on first use (it reads :mod:`skcal._grouped`, which reads
  the checks: loading it here would make a circle);
* :mod:`._multiclass`: the canonical form of multiclass input,
  :class:`MulticlassInput`, made by :func:`multiclass_input` (labels encoded
  as columns, the matrix and the weights checked; the top-label rows derived
  once, as a :class:`BinaryInput`).
"""

from ._arrays import as_numpy
from ._checks import *  # noqa: F403
from ._checks import __all__ as _checks_all

__all__ = [
    "as_numpy",
    "BinaryInput",  # noqa: F405
    "MulticlassInput",  # noqa: F405
    "binary_input",  # noqa: F405
    "multiclass_input",  # noqa: F405
    *_checks_all,  # noqa: F405
]


def __getattr__(name):
    if name in ("BinaryInput", "binary_input"):
        from . import _canonical

        return getattr(_canonical, name)
    if name in ("MulticlassInput", "multiclass_input"):
        from . import _multiclass

        return getattr(_multiclass, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
