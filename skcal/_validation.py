"""Deprecated location of the input checks: they live in :mod:`skcal._input`.

A thin re-export kept while other branches still import from here; the
coordinator removes it at merge.
"""

from ._input import _checks as _moved

globals().update(
    {k: v for k, v in vars(_moved).items() if not (k.startswith("__") and k.endswith("__"))}
)
__all__ = list(_moved.__all__)
del _moved
