"""The installed version of skcal, read from the package metadata.

The version is written once, in ``meson.build``; meson-python puts it in the
wheel's metadata (``dynamic = ["version"]`` in ``pyproject.toml``).
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("skcal")
except PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "unknown"

__all__ = ["__version__"]
