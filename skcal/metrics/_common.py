"""Helpers shared by the binary measure functions."""

import warnings

__all__ = ["legacy_details_flag"]


def legacy_details_flag(name, value):
    """Whether a deprecated ``return_<details>`` flag was set; warn if so.

    Every measure now returns its details as ``(value, Bunch)`` with
    ``return_details=True``; the old per-measure flags keep their old tuple
    output for a deprecation period.
    """
    if not value:
        return False
    warnings.warn(
        f"{name} is deprecated and will be removed in skcal 0.3; use "
        "return_details=True, which returns (value, details) with the details "
        "in a Bunch.",
        FutureWarning,
        stacklevel=3,
    )
    return True
