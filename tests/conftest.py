"""Test-suite set-up: import path and hypothesis profiles.

* ``tests/`` and every folder in it are put on ``sys.path``, so that the
  shared helpers (``adapters.py``, ``cases.py``) and the slow twins beside
  the tests (``tests/<package>/reference_<module>.py``) import by their
  basename from any test file, whichever was collected first. Basenames are
  therefore unique across tests/ (``tools/mirror_tests.py`` checks it).
* Hypothesis profiles: ``quick`` (the default, for a development loop) and
  ``ci`` (thorough: more examples per property, no deadline, derandomised so
  a CI failure reproduces). ``.ci/run`` selects ``ci`` with
  ``HYPOTHESIS_PROFILE=ci``; any profile can be chosen the same way.
  Tests that set ``max_examples`` themselves keep their own count, scaled
  by the profile through ``example_count``.
"""

import os
import sys

from hypothesis import HealthCheck, settings

_here = os.path.dirname(os.path.abspath(__file__))
for _folder, _subfolders, _files in sorted(os.walk(_here), reverse=True):
    _subfolders[:] = [s for s in _subfolders if not s.startswith((".", "_"))]
    if _folder not in sys.path:
        sys.path.insert(0, _folder)

settings.register_profile(
    "quick",
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "ci",
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "quick"))
