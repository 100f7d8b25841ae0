"""The measures of ``python -m skcal report``, read off the registry at each use.

``MEASURES`` lists ``(key, label, function name, plain line)`` of every
binary measure the registry marks for the report; ``--measure`` chooses
among them (:func:`selected_measures`).
"""

from collections.abc import Sequence

from ._report_input import safe_text
from .measures import MEASURE_CLASSES

__all__ = ["MEASURES", "measure_choices", "selected_measures"]


# (key, short label, function in skcal.metrics, one plain line), read off the
# measure classes (the registry): every binary measure. Each line fits 80
# columns after a two-space indent and the label.
class _Measures(Sequence):
    """The list, read off the measure registry (skcal._specs) at each use."""

    def _rows(self):
        return [
            (cls._tester_name, cls._label, cls._function_name, cls._plain)
            for cls in MEASURE_CLASSES
            if cls._proba == "binary" and cls._spec.report
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
