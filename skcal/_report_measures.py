"""The measures of ``python -m skcal report``, read off the registry at each use.

``MEASURES`` lists ``(key, label, function name, plain line)`` of every
binary measure the registry marks for the report; ``--measure`` chooses
among them (:func:`selected_measures`).
"""

from collections.abc import Sequence

from . import _specs, metrics  # noqa: F401 -- importing metrics registers the specs
from ._report_input import safe_text

__all__ = ["MEASURES", "measure_choices", "selected_measures"]


# (key, short label, function in skcal.metrics, one plain line), read off the
# registry (not the measure classes: they would import scikit-learn, which
# the report does not need): every binary measure. Each line fits 80 columns
# after a two-space indent and the label.
class _Measures(Sequence):
    """The list, read off the measure registry (skcal._specs) at each use."""

    def _rows(self):
        return [
            (spec.tester_name, spec.label, spec.name, spec.docs)
            for spec in _specs.specs()
            if spec.proba == "binary" and spec.report
        ]

    def __getitem__(self, index):
        return self._rows()[index]

    def __len__(self):
        return len(self._rows())


MEASURES = _Measures()


def measure_choices():
    """The measures the report can list: ``(report key, function name)`` of each.

    Read off the registry (``skcal._specs``) at each use: a measure
    registered by a plugin is a choice of ``--measure`` as soon as it is
    registered.
    """
    return [(key, function) for key, _, function, _ in MEASURES]


def selected_measures(names):
    """The report keys of ``names`` (keys or function names), in the report's order.

    Every measure when ``names`` is None. A ValueError names the choices
    when a name is not a registered measure.
    """
    choices = measure_choices()
    if names is None:
        return [key for key, _ in choices]
    by_name = {}
    for key, function in choices:
        by_name[key] = by_name[function] = key
    for name in names:
        if name not in by_name:
            raise ValueError(
                f"--measure {safe_text(str(name))!r} is not a measure of the report; "
                f"choose from {', '.join(key for key, _ in choices)} (or their "
                "function names)."
            )
    chosen = {by_name[name] for name in names}
    # in the report's own order, as in the full table
    return [key for key, _ in choices if key in chosen]


class _Measure:
    """What the report reads of a measure object, made from its spec.

    The measure classes of :mod:`skcal.measures` are scikit-learn estimators:
    importing them imports scikit-learn, about 1.2 s of the report's 3 s
    budget at 1e5 rows (with scipy.stats and pandas), for ``get_params``
    alone. This holds the spec's default options (the class's defaults:
    its own options, then ``pos_label``, ``multiclass`` and ``labels``) as
    attributes, as the class does, and calls the same function and grouped
    core with them.
    """

    def __init__(self, spec):
        self._spec = spec
        self._tester_name = spec.tester_name
        self._max_value = spec.max_value
        self._params = {**spec.options, **_specs.BINARY_INPUT_OPTIONS}
        for key, value in self._params.items():
            setattr(self, key, value)

    def get_params(self, deep=False):
        return dict(self._params)

    def _grouped_core(self, statistic):
        return self._spec.grouped_core(statistic, **self._params)

    @property
    def _function(self):
        function = getattr(metrics, self._spec.name, None)
        return function if function is not None else _specs.function_of(self._spec)


def _measure_object(key):
    return _Measure(next(spec for spec in _specs.specs() if spec.tester_name == key))
