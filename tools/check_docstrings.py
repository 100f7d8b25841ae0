"""Validate the docstrings of skcal's public API with numpydoc.

The objects checked: every name of ``skcal.__all__`` and, for each class,
every public method and property defined in skcal, inherited ones included
(methods inherited from scikit-learn are skipped, as in the API reference).
The checks and exclusions are ``[tool.numpydoc_validation]`` of
pyproject.toml, the documentation build's (doc/conf.py), so this script fails
wherever ``sphinx -W`` would (and on a few inherited methods the site does
not validate), in seconds instead of a build of the site. numpydoc's own pre-commit
hook (``numpydoc lint``) cannot be used: it checks every function of every
file, the private helpers of the private modules included.

Run from the repository root against the installed package::

    python -P tools/check_docstrings.py

Exit status 1, with one line per failure, when any docstring fails.
"""

import inspect
import pathlib
import re
import sys

import tomllib
from numpydoc.validate import get_validation_checks, validate

import skcal

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _public_names():
    for name in skcal.__all__:
        if name.startswith("__"):
            continue
        obj = getattr(skcal, name)
        yield f"skcal.{name}"
        if not inspect.isclass(obj):
            continue
        for attr in sorted(dir(obj)):
            if attr.startswith("_"):
                continue
            raw = inspect.getattr_static(obj, attr)
            if isinstance(raw, (classmethod, staticmethod)):
                raw = raw.__func__
            elif isinstance(raw, property):
                raw = raw.fget
            if callable(raw) and (getattr(raw, "__module__", None) or "").startswith("skcal"):
                yield f"skcal.{name}.{attr}"


def main():
    with open(ROOT / "pyproject.toml", "rb") as f:
        config = tomllib.load(f)["tool"]["numpydoc_validation"]
    checks = get_validation_checks(set(config["checks"]))
    exclude = [re.compile(pattern) for pattern in config["exclude"]]
    failures = []
    for name in _public_names():
        if any(pattern.search(name) for pattern in exclude):
            continue
        for code, message in validate(name)["errors"]:
            if code in checks:
                failures.append(f"{name}: {code} {message}")
    print("\n".join(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
