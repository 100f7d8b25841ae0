"""Test-suite set-up: import path and hypothesis profiles.

* ``tests/`` is put on ``sys.path`` so that the shared helpers
  (``reference.py``, ``cases.py``) import the same way under every pytest
  import mode, not only under the default ``prepend`` mode.
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

sys.path.insert(0, os.path.dirname(__file__))

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
