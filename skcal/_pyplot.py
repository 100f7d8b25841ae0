"""matplotlib, imported only when something is drawn (an optional dependency).

Shared by :mod:`skcal.display`, :mod:`skcal.monitor` and the report.
"""

__all__ = ["import_pyplot"]


def import_pyplot(caller):
    """``matplotlib.pyplot``, or an ImportError that says how to install it."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(
            f"{caller} requires matplotlib, an optional dependency of skcal. "
            "Install it with `pip install matplotlib`."
        ) from exc
    return plt
