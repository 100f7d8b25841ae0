"""Compiled kernels. Private: call them only through the validated wrappers."""

try:
    from . import _interval  # noqa: F401  (the first kernel any import of skcal needs)
except ImportError as error:  # pragma: no cover - only in an unbuilt source tree
    raise ImportError(
        "skcal's compiled kernels are missing: this looks like the skcal source "
        "tree, which has no built kernels. Install skcal (`python -m pip install .` "
        "in the checkout) and run Python from another directory, or with "
        "`python -P` to keep the checkout off sys.path."
    ) from error
