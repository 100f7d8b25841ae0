"""Run the Examples of every public docstring as doctests."""

import doctest
import importlib
import inspect

import pytest

import skcal


def _public_objects():
    for name in skcal.__all__:
        obj = getattr(skcal, name)
        if inspect.isfunction(obj) or inspect.isclass(obj):
            yield name, obj


@pytest.mark.parametrize("name, obj", list(_public_objects()))
def test_docstring_examples_run(name, obj):
    assert obj.__doc__ and "Examples" in obj.__doc__, f"{name} has no Examples"
    module = importlib.import_module(obj.__module__)
    finder = doctest.DocTestFinder(recurse=True)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(obj, name, module=module) if t.examples]
    assert tests, f"{name} has no runnable examples"
    for t in tests:
        runner.run(t)
    result = runner.summarize(verbose=False)
    assert result.failed == 0
