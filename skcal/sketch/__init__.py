"""Mergeable calibration sketches: :class:`CalibrationSketch` (in memory, from
bytes) and :func:`dask_sketch` (one sketch of a Dask collection, built per
partition and merged in a tree; importing skcal never imports Dask)."""

from ._dask import dask_sketch
from ._sketch import CalibrationSketch

__all__ = ["CalibrationSketch", "dask_sketch"]
