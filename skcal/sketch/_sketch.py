"""A mergeable summary of binary calibration data: :class:`CalibrationSketch`."""

from __future__ import annotations

import numbers
import struct
import threading
import zlib

import numpy as np
from numpy.typing import ArrayLike

from .._grouped import (
    MAX_LEVEL,
    CompactSums,
    GroupedStatistic,
)
from .._input import check_binary_calibration_input
from ._format import (
    _FLAG_COMMON_WEIGHT,
    _FLAG_COMPACTED,
    _FLAG_MIXED_WEIGHTS,
    _HEADER,
    _KNOWN_FLAGS,
    _MAGIC,
    _READABLE,
    _VERSION,
    _Reader,
)
from ._state import (
    _check_common_weight,
    _check_max_size,
    _Compacted,
    _compacted_bound,
    _Exact,
    _fit,
    _merge_common,
    _merge_states,
    _overflows,
    _raw_weights,
    _rows_state,
    _smaller,
)


class CalibrationSketch:
    """A mergeable, serialisable summary of binary calibration data.

    The sketch holds the grouped sufficient statistic of the data it has
    seen: the distinct predictions ``v_1 < ... < v_K`` with, per value, the
    total weight and the total weight of positive outcomes. Every binary
    measure of skcal is a function of that statistic, so each accepts a
    sketch in place of ``(y_true, y_prob, sample_weight)``, as do the
    measure classes and :class:`~skcal.CalibrationTester`. Sketches of pieces
    of the data merge (:meth:`merge`, ``a + b``, ``sum(sketches,
    start=CalibrationSketch())``) into the sketch of all of it, and travel as
    bytes (:meth:`to_bytes`, :meth:`from_bytes`): one sketch per partition,
    per worker or per day, merged later over any window.

    **Exact while it fits.** Without ``max_size`` (or while the data have at
    most ``max_size`` distinct predictions) the sketch keeps every distinct
    prediction, and its sums exactly: each weight and positive-weight sum is
    a float64 where the exact sum is one (a single row's weight, integer
    sums below ``2**53``) and otherwise a multi-limb integer beside it (a
    double is an integer multiple of a power of two), rounded once,
    correctly, when the statistic is read: about 24 bytes per distinct
    prediction. The statistic is thus bit for bit the same however the data
    were split and in whatever order the pieces were merged or updated; for
    integer weights (unit weights included, below ``2**53`` in total) it is
    also bit for bit the statistic an in-memory measure builds, so every
    measure of a sketch equals the in-memory value exactly, except
    ``binned_ece`` (uniform bins) and ``soft_binned_cdl``, whose in-memory
    paths sum the rows of a bin in one pass: those agree to within the
    rounding of the bin sums, at most ``4 n 2**-53`` for ``n`` rows. For
    other weights the sums are the correctly rounded exact sums, which
    in-memory float sums approach to within their own rounding.

    **Threads, weights, bytes.** :meth:`update`, :meth:`merge` and
    :meth:`to_bytes` are thread-safe (a lock guards the state; no row is
    lost). Weights are kept as given; an update or merge whose total weight
    would exceed the largest float64 raises ``ValueError``.
    :meth:`from_bytes` checks every invariant of the layout.

    **Bounded beyond a budget.** When the data have more than ``max_size``
    distinct predictions the sketch is *compacted*: predictions fall into the
    cells ``[j 2**-L, (j + 1) 2**-L)`` of a dyadic grid (the last cell closed
    at 1), ``L`` the finest level (at most 62) at which at most ``max_size``
    values remain, and within each cell the negative rows become one atom at
    their weighted mean prediction and the positive rows another (equal
    atoms merge). Each atom keeps its class's exact mass and first moment
    ``sum w p``, and the range ``[lo, hi]`` of the predictions it replaced;
    every row moves by at most ``hi - lo < 2**-L`` and keeps its outcome.
    The compacted state depends only on the data and ``max_size``, not on the
    split or merge order (``L`` is a function of the merged data, and the
    exact moments aggregate exactly). Write ``W_a`` for an atom's mass,
    ``d_a = hi - lo`` its spread, ``R_a`` its mass of ``|y - p|`` (``sum w p``
    for a negative atom, ``sum w (1 - p)`` for a positive one), ``T`` the
    total weight and "moved" for the cells holding an atom of positive
    spread. :meth:`error_bounds` gives these bounds (exact arithmetic; both
    sides also carry their float rounding, about ``1e-15``):

    * ``smooth_calibration_error``: ``sum_a d_a R_a / T``. For a
      1-Lipschitz ``x`` with ``|x| <= 1``, an atom keeps ``sum w (y - p)``,
      so ``sum_i w_i (y - p_i) x(p_i)`` changes by
      ``sum_i w_i (y - p_i) (x(p_i) - x(pbar)) <= d_a R_a``; the supremum
      moves by at most the sum.
    * ``cutoff_calibration_error``: ``2 max_c sum_{a in c, d_a > 0} R_a / T``.
      Only the (at most two) cells an interval's end points fall into change
      its sum, each by at most the residual mass of its spread atoms.
    * ``binned_ece`` (uniform bins): ``2 sum R_a / T`` over the atoms whose
      range crosses a bin edge. With ``n_bins`` a power of two at most
      ``2**L`` the grid refines the bins, no atom crosses an edge and the
      bound is 0: every bin keeps its mass and its ``sum w (y - p)``, so all
      three norms are exact. Otherwise only ``norm="l1"`` is bounded (the l2
      and max norms and quantile bins raise ``ValueError`` on a compacted
      sketch unless no atom crosses an edge).
    * ``soft_binned_cdl``: 0 when every level it evaluates is at most
      ``2**L`` (the triangular soft bins of level ``m`` are linear on each
      cell when ``m`` divides ``2**L``, and each class's atom keeps its mass
      and mean, so every ``SCDL_m`` is exact); else ``2**(1 - L)``: then
      ``SCDL_{2m} < 1/m`` for all ``2m <= 2**L`` on both data, so both values
      lie in ``[0, 2**(1 - L))``. ``m=`` given: exact for a power of two at
      most ``2**L``, else ``ValueError``.
    * ``calibration_decision_loss`` and ``calibration_fixed_decision_loss``:
      the moved mass over ``T``; ``maximum_swap_regret``: the moved mass.
      Their per-value gains lie in ``[0, 1]`` (utilities in ``[0, 1]``) and
      cells without a spread atom keep their groups exactly.
    * ``lower_distance_to_calibration``: ``sum_a W_a d_a / T``: moving every
      prediction by at most ``d_a`` changes ``E|u - v|`` of any coupling by
      at most that much (on the grid too).

    Results computed from a compacted sketch carry their bound as
    ``error_bound`` in the details of the measure functions
    (``return_details=True``).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,), default=None
        Observed labels; None for an empty sketch.
    y_prob : array-like of shape (n_samples,) or (n_samples, n_classes), default=None
        Predicted probabilities (top-label reduction for ``K > 2`` columns).
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.
    max_size : int >= 2, default=None
        Largest number of distinct values kept; None keeps all (exact).
        Merging sketches with different ``max_size`` keeps the smaller.
    pos_label, multiclass, labels
        As for the measures; used by :meth:`update` to read the labels (not
        serialised; a merge keeps the left operand's).

    Attributes
    ----------
    exact : bool
        False once the sketch has been compacted.
    max_size : int or None
    n_values : int
        Distinct predictions held (after compaction, atoms).
    n_samples : int
        Rows seen.
    total_weight : float
        Total weight (correctly rounded).
    level : int or None
        ``L`` of a compacted sketch (cells ``2**-L``), else None.

    Examples
    --------
    >>> from skcal import smooth_calibration_error
    >>> from skcal.sketch import CalibrationSketch
    >>> monday = CalibrationSketch([0, 1, 1], [0.2, 0.7, 0.9])
    >>> tuesday = CalibrationSketch([0, 0, 1], [0.2, 0.4, 0.9])
    >>> week = monday + tuesday
    >>> week.n_samples, week.n_values, week.exact
    (6, 4, True)
    >>> smooth_calibration_error(week) == smooth_calibration_error(
    ...     [0, 1, 1, 0, 0, 1], [0.2, 0.7, 0.9, 0.2, 0.4, 0.9])
    True
    >>> CalibrationSketch.from_bytes(week.to_bytes()).n_values
    4
    """

    def __init__(
        self,
        y_true: ArrayLike | None = None,
        y_prob: ArrayLike | None = None,
        sample_weight: ArrayLike | None = None,
        *,
        max_size: int | None = None,
        pos_label: int | float | bool | str | None = None,
        multiclass: str = "top-label",
        labels: ArrayLike | None = None,
    ) -> None:
        self._max_size = _check_max_size(max_size)
        self.pos_label = pos_label
        self.multiclass = multiclass
        self.labels = labels
        self._set_empty()
        if y_true is not None or y_prob is not None:
            self.update(y_true, y_prob, sample_weight)
        elif sample_weight is not None:
            raise ValueError("sample_weight was given without y_true and y_prob.")

    # --- state ---------------------------------------------------------------

    def _set_empty(self):
        self._lock = threading.RLock()
        self._state = _Exact(np.zeros(0), CompactSums.zeros(0), CompactSums.zeros(0))
        self._n_rows = 0
        self._common_weight = None  # a float, or NaN once weights differ
        self._statistic = None

    def _snapshot(self):
        """``(state, n_rows, common weight)``, read together under the lock."""
        with self._lock:
            return self._state, self._n_rows, self._common_weight

    def _new(self, state, n_rows, common_weight, max_size):
        out = CalibrationSketch.__new__(CalibrationSketch)
        out._lock = threading.RLock()
        out._max_size = max_size
        out.pos_label = self.pos_label
        out.multiclass = self.multiclass
        out.labels = self.labels
        out._state = state
        out._n_rows = n_rows
        out._common_weight = common_weight
        out._statistic = None
        return out

    @property
    def exact(self) -> bool:
        return isinstance(self._state, _Exact)

    @property
    def max_size(self) -> int | None:
        return self._max_size

    @property
    def level(self) -> int | None:
        return None if self.exact else self._state.level

    @property
    def n_samples(self) -> int:
        return self._n_rows

    @property
    def n_values(self) -> int:
        if self._n_rows == 0:
            return 0
        return len(self.grouped_statistic())

    @property
    def total_weight(self) -> float:
        return self._snapshot()[0].total()

    def __repr__(self):
        kind = "exact" if self.exact else f"compacted to 2**-{self.level}"
        return (
            f"CalibrationSketch(n_samples={self._n_rows}, "
            f"n_values={self.n_values}, {kind}, max_size={self._max_size})"
        )

    # --- building -------------------------------------------------------------

    def update(
        self, y_true: ArrayLike, y_prob: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> CalibrationSketch:
        """Add rows, validated as the measures validate them; returns self.

        Thread-safe: updates, merges and :meth:`to_bytes` from several
        threads at once see and keep every row (the new rows are validated
        and grouped outside the sketch's lock, then merged in under it).
        Weights are kept as given (never rescaled); rows whose weights make
        the sketch's total weight exceed the largest float64 raise
        ``ValueError`` and leave the sketch unchanged.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            Observed labels.
        y_prob : array-like of shape (n_samples,) or (n_samples, n_classes)
            Predicted probabilities.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights with a positive, finite sum.

        Returns
        -------
        self : CalibrationSketch
            The sketch itself, holding the new rows too.

        Examples
        --------
        >>> from skcal.sketch import CalibrationSketch
        >>> s = CalibrationSketch()
        >>> s.update([0, 1], [0.3, 0.6]).update([1], [0.6]).n_samples
        3
        """
        if y_prob is None:
            raise ValueError("y_prob is required (the predicted probabilities).")
        y, p, w = check_binary_calibration_input(
            y_true,
            y_prob,
            sample_weight,
            pos_label=self.pos_label,
            multiclass=self.multiclass,
            labels=self.labels,
            compact=True,
        )
        own_weights = False
        if sample_weight is not None:
            # the weights as given: a sketch must not keep a per-batch rescaling
            w, own_weights = _raw_weights(sample_weight, w)
        overflow = ValueError(
            "update overflows: with these rows the sketch's total weight would "
            "exceed the largest float64 (about 1.8e308); the sketch is unchanged. "
            "Scale sample_weight (of these rows and of every earlier batch) down "
            "by one common factor (every measure depends on the weights only "
            "through w / sum(w))."
        )
        try:
            rows = _rows_state(y, p, w, self._max_size, own_weights)
            if _overflows(rows[0]):
                raise OverflowError
        except OverflowError:
            raise overflow from None
        batch = self._new(*rows, max_size=self._max_size)
        with self._lock:
            try:
                merged = self.merge(batch)
            except ValueError as exc:
                if "overflows" not in str(exc):
                    raise
                raise overflow from None
            self._state = merged._state
            self._n_rows = merged._n_rows
            self._common_weight = merged._common_weight
            self._statistic = None
        return self

    def merge(self, other: CalibrationSketch) -> CalibrationSketch:
        """The sketch of the data of both (a new sketch; neither changes).

        Associative and commutative, bit for bit (for equal ``max_size``);
        an empty sketch is the identity. The result has the smaller
        ``max_size`` and the options (``pos_label``...) of ``self``.

        Parameters
        ----------
        other : CalibrationSketch
            The sketch to merge with; its options (``pos_label``...) are
            not used.

        Returns
        -------
        merged : CalibrationSketch
            A new sketch of the rows of both.

        Examples
        --------
        >>> from skcal.sketch import CalibrationSketch
        >>> a = CalibrationSketch([0, 1], [0.25, 0.5])
        >>> b = CalibrationSketch([1], [0.5])
        >>> a.merge(b).grouped_statistic().weights.tolist()
        [1.0, 2.0]
        """
        if not isinstance(other, CalibrationSketch):
            raise TypeError(
                f"other must be a CalibrationSketch, got {type(other).__name__}."
            )
        max_size = _smaller(self._max_size, other._max_size)
        mine, theirs = self._snapshot(), other._snapshot()
        n_rows = mine[1] + theirs[1]
        common = _merge_common(mine[2], theirs[2])
        states = [s[0] for s in (mine, theirs) if s[1] > 0]
        if not states:
            return self._new(mine[0], 0, None, max_size)
        if len(states) == 1:
            state = states[0]
        else:
            try:
                state = _merge_states(states)
            except OverflowError:
                state = None
            if state is None or _overflows(state):
                raise ValueError(
                    "merge overflows: the total weight of the two sketches exceeds "
                    "the largest float64 (about 1.8e308). Scale the sample_weight "
                    "of every piece down by one common factor before sketching "
                    "(every measure depends on the weights only through w / sum(w))."
                )
        return self._new(_fit(state, max_size), n_rows, common, max_size)

    def __add__(self, other):
        if not isinstance(other, CalibrationSketch):
            return NotImplemented
        return self.merge(other)

    def __radd__(self, other):
        if isinstance(other, numbers.Number) and other == 0:  # sum() without start
            return self.merge(CalibrationSketch(max_size=self._max_size))
        return NotImplemented

    # --- reading -----------------------------------------------------------------

    def grouped_statistic(self) -> GroupedStatistic:
        """The grouped statistic every measure reads (see the class docstring).

        Returns
        -------
        statistic : GroupedStatistic
            ``values`` (strictly increasing), ``weights``, ``positives``.

        Raises
        ------
        ValueError
            If the sketch is empty.

        Examples
        --------
        >>> from skcal.sketch import CalibrationSketch
        >>> g = CalibrationSketch([0, 1, 1], [0.5, 0.5, 0.8]).grouped_statistic()
        >>> g.values.tolist(), g.weights.tolist(), g.positives.tolist()
        ([0.5, 0.8], [2.0, 1.0], [1.0, 1.0])
        """
        with self._lock:
            if self._n_rows == 0:
                raise ValueError(
                    "The CalibrationSketch is empty: update it with data (or merge "
                    "non-empty sketches into it) before computing a measure."
                )
            if self._statistic is None:
                values, neg, pos = self._state.grouped()
                weights = neg.plus(pos).to_float()
                self._statistic = GroupedStatistic(values, weights, pos.to_float())
            return self._statistic

    def error_bounds(self) -> dict[str, float]:
        """Bound on the error compaction introduced, per measure (0.0 if exact).

        See the class docstring for the derivations; the bounds are for each
        measure's default options (``binned_ece``: 15 uniform bins, l1).

        Returns
        -------
        bounds : dict
            Measure function name to bound.

        Examples
        --------
        >>> from skcal.sketch import CalibrationSketch
        >>> s = CalibrationSketch(
        ...     [0, 1, 1, 0, 0], [0.1, 0.15, 0.6, 0.65, 0.62], max_size=4)
        >>> s.exact, s.level, s.grouped_statistic().values.tolist()
        (False, 2, [0.1, 0.15, 0.6, 0.635])
        >>> round(s.error_bounds()["smooth_calibration_error"], 6)
        0.00762
        """
        names = (
            "smooth_calibration_error",
            "cutoff_calibration_error",
            "binned_ece",
            "soft_binned_cdl",
            "calibration_decision_loss",
            "calibration_fixed_decision_loss",
            "maximum_swap_regret",
            "lower_distance_to_calibration",
        )
        return {name: self._error_bound(name) for name in names}

    def _error_bound(self, name, **options):
        """The bound of one measure with its options (see the class docstring)."""
        state, n_rows, _ = self._snapshot()
        if n_rows == 0:
            self.grouped_statistic()  # raises the empty-sketch error
        if isinstance(state, _Exact):
            return 0.0
        return _compacted_bound(state, name, options)

    def _null_counts(self):
        """``(counts per value, row weight)`` for the tester's exact null."""
        with self._lock:  # the weight and the statistic of one state
            return self._null_counts_locked()

    def _null_counts_locked(self):
        if self._n_rows == 0:
            self.grouped_statistic()
        if not self.exact:
            raise ValueError(
                "The CalibrationSketch is compacted (max_size was exceeded): the "
                "tester's null redraws the outcomes of the original predictions, "
                "which a compacted sketch no longer holds. Build the sketch "
                "without max_size (or with a larger one) to test it."
            )
        c = self._common_weight
        if c is None or np.isnan(c) or c <= 0:
            raise ValueError(
                "The CalibrationSketch holds rows of different weights: the "
                "tester's null law of a group's positive weight (a sum of "
                "w_i Bernoulli(p) over its rows) depends on each row's weight, "
                "which the sketch does not keep. Test sketches of unweighted "
                "(or equally weighted) rows."
            )
        G = self.grouped_statistic()
        counts = np.rint(G.weights / c)
        return counts, float(c)

    # --- bytes and pickling ------------------------------------------------------

    def to_bytes(self) -> bytes:
        """Serialise to a versioned binary layout (no pickle).

        Layout (little-endian): the 8 magic bytes ``SKCALSKT``; uint16
        version (2) and flags; int64 ``max_size`` (-1 for None), level (-1 if
        exact), rows seen, float64 common row weight, int64 number of values
        (exact) or cells (compacted); then the arrays, last a CRC-32 of all
        before it. An exact sketch stores its float64 values, then for the
        negative and the positive weights: a float64 per value (the exact
        sum where it is a double, else its correct rounding), the int64
        count and indices of the values whose sum is not a double, and their
        exact sums (int64 offset, limb count and limbs), so about 24 bytes
        per distinct value. A compacted sketch stores int64 cells, its exact
        sums and float64 atom ranges. ``pos_label``, ``multiclass`` and
        ``labels`` are not stored. :meth:`from_bytes` reads versions 1 and 2.

        Returns
        -------
        blob : bytes
            The sketch's state in the layout above, to be read back by
            :meth:`from_bytes`.

        Examples
        --------
        >>> from skcal.sketch import CalibrationSketch
        >>> blob = CalibrationSketch([0, 1], [0.2, 0.8]).to_bytes()
        >>> blob[:8]
        b'SKCALSKT'
        """
        state, n_rows, common_weight = self._snapshot()
        exact = isinstance(state, _Exact)
        flags = 0
        common = 0.0
        if common_weight is not None:
            if np.isnan(common_weight):
                flags |= _FLAG_MIXED_WEIGHTS
            else:
                flags |= _FLAG_COMMON_WEIGHT
                common = float(common_weight)
        if not exact:
            flags |= _FLAG_COMPACTED
        parts = [
            _HEADER.pack(
                _MAGIC,
                _VERSION,
                flags,
                -1 if self._max_size is None else self._max_size,
                -1 if exact else state.level,
                n_rows,
                common,
                state.size(),
            )
        ]
        parts += state.encode()
        body = b"".join(parts)
        return body + struct.pack("<I", zlib.crc32(body))

    @classmethod
    def from_bytes(
        cls,
        blob: bytes | bytearray | memoryview,
        *,
        pos_label: int | float | bool | str | None = None,
        multiclass: str = "top-label",
        labels: ArrayLike | None = None,
    ) -> CalibrationSketch:
        """Read a sketch written by :meth:`to_bytes`.

        Every invariant of the format is checked, not only the checksum:
        header fields, lengths, finite non-negative sums that do not
        overflow, values strictly increasing in ``[0, 1]``, cells and atom
        ranges in order, and the row count and common row weight consistent
        with the sums (a sketch of rows of one common weight ``c`` holds
        multiples of ``c`` adding up to ``n_samples c``).

        Parameters
        ----------
        blob : bytes, bytearray or memoryview
            The bytes :meth:`to_bytes` wrote.
        pos_label : int, float, bool, str or None, default=None
            Option for later :meth:`update` calls (not stored in the bytes),
            as for the measures.
        multiclass : {"top-label", "raise"}, default="top-label"
            Option for later :meth:`update` calls, as ``pos_label``.
        labels : array-like of shape (n_classes,), default=None
            Option for later :meth:`update` calls, as ``pos_label``.

        Returns
        -------
        sketch : CalibrationSketch
            The sketch the bytes hold.

        Raises
        ------
        ValueError
            If the bytes are not an intact sketch of a known version
            (truncated, altered or foreign), naming what is wrong.

        Examples
        --------
        >>> from skcal.sketch import CalibrationSketch
        >>> s = CalibrationSketch([0, 1], [0.2, 0.8])
        >>> CalibrationSketch.from_bytes(s.to_bytes()).n_samples
        2
        """
        if not isinstance(blob, (bytes, bytearray, memoryview)):
            raise TypeError(f"blob must be bytes, got {type(blob).__name__}.")
        blob = bytes(blob)
        if len(blob) < _HEADER.size + 4 or blob[:8] != _MAGIC:
            raise ValueError(
                "blob is not a CalibrationSketch (no SKCALSKT header, or too short)."
            )
        body, (crc,) = blob[:-4], struct.unpack("<I", blob[-4:])
        magic, version, flags, max_size, level, n_rows, common, size = (
            _HEADER.unpack_from(body)
        )
        if version not in _READABLE:
            raise ValueError(
                f"CalibrationSketch bytes of version {version}; this skcal reads "
                f"versions {', '.join(map(str, _READABLE))}."
            )
        if zlib.crc32(body) != crc:
            raise ValueError(
                "CalibrationSketch bytes are corrupted (checksum mismatch)."
            )
        if flags & ~_KNOWN_FLAGS or (
            flags & _FLAG_COMMON_WEIGHT and flags & _FLAG_MIXED_WEIGHTS
        ):
            raise ValueError(f"CalibrationSketch bytes have unknown flags {flags}.")
        if (max_size != -1 and max_size < 2) or n_rows < 0 or size < 0:
            raise ValueError(
                "CalibrationSketch bytes have an invalid header (max_size, rows "
                "or size)."
            )
        if size > len(body) // 8:
            raise ValueError("CalibrationSketch bytes are truncated (size).")
        reader = _Reader(body, _HEADER.size)
        if flags & _FLAG_COMPACTED:
            if not 0 <= level <= MAX_LEVEL:
                raise ValueError("CalibrationSketch bytes have an invalid level.")
            if max_size == -1:
                raise ValueError(
                    "CalibrationSketch bytes are compacted without a max_size."
                )
            state = _Compacted.decode(reader, level, size)
        else:
            if level != -1:
                raise ValueError("CalibrationSketch bytes have an invalid level.")
            state = _Exact.decode(reader, size, version)
        if reader.pos != len(body):
            raise ValueError("CalibrationSketch bytes have trailing data.")
        if (n_rows == 0) != (state.size() == 0):
            raise ValueError("CalibrationSketch bytes are inconsistent (rows).")
        if n_rows < state.n_atoms():
            raise ValueError(
                "CalibrationSketch bytes are inconsistent (fewer rows than values)."
            )
        total = state.total()
        if not np.isfinite(total):
            raise ValueError("CalibrationSketch bytes have overflowing sums.")
        if n_rows and not total > 0:
            raise ValueError("CalibrationSketch bytes hold no weight.")
        if flags & _FLAG_COMMON_WEIGHT:
            if not (np.isfinite(common) and common > 0):
                raise ValueError(
                    "CalibrationSketch bytes have an invalid common row weight."
                )
            common_weight = float(common)
            _check_common_weight(state, n_rows, common_weight, total)
        elif flags & _FLAG_MIXED_WEIGHTS:
            common_weight = float("nan")
        else:
            common_weight = None
        if (common_weight is None) != (n_rows == 0):
            raise ValueError("CalibrationSketch bytes are inconsistent (weights).")
        if max_size != -1 and state.size() > max_size:
            raise ValueError("CalibrationSketch bytes exceed their max_size.")
        out = cls(
            max_size=None if max_size == -1 else int(max_size),
            pos_label=pos_label,
            multiclass=multiclass,
            labels=labels,
        )
        out._state = state
        out._n_rows = int(n_rows)
        out._common_weight = common_weight
        return out

    def __getstate__(self):
        return {
            "blob": self.to_bytes(),
            "pos_label": self.pos_label,
            "multiclass": self.multiclass,
            "labels": self.labels,
        }

    def __setstate__(self, state):
        other = CalibrationSketch.from_bytes(
            state["blob"],
            pos_label=state["pos_label"],
            multiclass=state["multiclass"],
            labels=state["labels"],
        )
        self.__dict__.update(other.__dict__)
