"""Array conversion at the boundary: any accepted array-like to numpy.

numpy arrays, lists, pandas objects and everything else numpy or
scikit-learn's ``check_array`` reads are returned as given (their checks
keep their own messages). Arrays of other libraries are converted here,
once, before any check:

* polars Series/DataFrames and pyarrow Arrays/ChunkedArrays/Tables through
  their ``to_numpy`` (pyarrow's with ``zero_copy_only=False``: nulls
  become NaN or None, which the checks then name);
* Array API arrays (torch, CuPy, array-api-strict, ...): through
  ``array_api_compat`` when it is installed (moved to the CPU first), else
  through ``__dlpack__`` and, failing that, ``__array__`` (CuPy's ``get``).

Dask collections are left to the measures, which group them partition by
partition. Nothing is written to the caller's array.
"""

import numpy as np

__all__ = ["as_numpy"]

_TO_NUMPY_MODULES = ("polars", "pyarrow")


def as_numpy(a, name="input"):
    """``a`` as a numpy array when it comes from polars, pyarrow or the Array API.

    Parameters
    ----------
    a : object
        An array-like, or None.
    name : str, default="input"
        The argument's name, for the error message.

    Returns
    -------
    array : object
        ``a`` itself (numpy, lists, pandas, Dask, None) or a numpy array.
    """
    if a is None or isinstance(a, np.ndarray):
        return a
    top = type(a).__module__.partition(".")[0]
    if top in ("numpy", "pandas", "dask", "builtins", "scipy"):
        return a
    try:
        if top in _TO_NUMPY_MODULES and hasattr(a, "to_numpy"):
            if top == "pyarrow" and not hasattr(a, "column_names"):
                return a.to_numpy(zero_copy_only=False)
            return a.to_numpy()
        if hasattr(a, "__array_namespace__"):
            return _from_array_api(a)
    except (TypeError, ValueError, RuntimeError) as error:
        raise TypeError(
            f"{name} of type {type(a).__name__} could not be converted to a numpy "
            f"array: {error}"
        ) from None
    return a


def _from_array_api(a):
    """A numpy array holding an Array API array's values (on the CPU)."""
    try:
        import array_api_compat
    except ImportError:
        array_api_compat = None
    if array_api_compat is not None:
        a = array_api_compat.to_device(a, "cpu")
    if hasattr(a, "detach"):  # torch: a tensor that requires grad
        a = a.detach()
    if hasattr(a, "__dlpack__"):
        try:
            return np.from_dlpack(a)
        except (TypeError, ValueError, RuntimeError, BufferError, AttributeError):
            pass
    if hasattr(a, "get"):  # CuPy: device to host
        return np.asarray(a.get())
    return np.asarray(a)
