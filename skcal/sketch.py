"""A mergeable summary of binary calibration data: :class:`CalibrationSketch`."""

import numbers
import struct
import threading
import zlib

import numpy as np

from ._grouped import (
    MAX_LEVEL,
    CompactSums,
    ExactSums,
    GroupedStatistic,
    _aligned,
    cells_of,
    group,
    group_exact,
    sums_overflow,
    unique_inverse,
)
from ._validation import check_binary_calibration_input

__all__ = ["CalibrationSketch"]

_MAGIC = b"SKCALSKT"
_VERSION = 2  # 2: compact exact sums (a double per group, limbs where needed)
_READABLE = (1, 2)
_FLAG_COMPACTED = 1
_FLAG_COMMON_WEIGHT = 2
_FLAG_MIXED_WEIGHTS = 4
_KNOWN_FLAGS = _FLAG_COMPACTED | _FLAG_COMMON_WEIGHT | _FLAG_MIXED_WEIGHTS
_HEADER = struct.Struct("<8sHHqqqdq")  # magic, version, flags, max_size,
# level, n_rows, common weight, number of values or cells
_SUMS = struct.Struct("<qq")  # offset, number of limbs
_MAX_LIMBS = 80  # 2098 bits of double exponents and products, and carries


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
        y_true=None,
        y_prob=None,
        sample_weight=None,
        *,
        max_size=None,
        pos_label=None,
        multiclass="top-label",
        labels=None,
    ):
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
    def exact(self):
        return isinstance(self._state, _Exact)

    @property
    def max_size(self):
        return self._max_size

    @property
    def level(self):
        return None if self.exact else self._state.level

    @property
    def n_samples(self):
        return self._n_rows

    @property
    def n_values(self):
        if self._n_rows == 0:
            return 0
        return len(self.grouped_statistic())

    @property
    def total_weight(self):
        return self._snapshot()[0].total()

    def __repr__(self):
        kind = "exact" if self.exact else f"compacted to 2**-{self.level}"
        return (
            f"CalibrationSketch(n_samples={self._n_rows}, "
            f"n_values={self.n_values}, {kind}, max_size={self._max_size})"
        )

    # --- building -------------------------------------------------------------

    def update(self, y_true, y_prob, sample_weight=None):
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
        if sample_weight is not None:
            # the weights as given: a sketch must not keep a per-batch rescaling
            w = _raw_weights(sample_weight, w)
        overflow = ValueError(
            "update overflows: with these rows the sketch's total weight would "
            "exceed the largest float64 (about 1.8e308); the sketch is unchanged. "
            "Scale sample_weight (of these rows and of every earlier batch) down "
            "by one common factor (every measure depends on the weights only "
            "through w / sum(w))."
        )
        try:
            rows = _rows_state(y, p, w, self._max_size)
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

    def merge(self, other):
        """The sketch of the data of both (a new sketch; neither changes).

        Associative and commutative, bit for bit (for equal ``max_size``);
        an empty sketch is the identity. The result has the smaller
        ``max_size`` and the options (``pos_label``...) of ``self``.

        Parameters
        ----------
        other : CalibrationSketch

        Returns
        -------
        merged : CalibrationSketch

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

    def grouped_statistic(self):
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

    def error_bounds(self):
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

    def to_bytes(self):
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
    def from_bytes(cls, blob, *, pos_label=None, multiclass="top-label", labels=None):
        """Read a sketch written by :meth:`to_bytes`.

        Every invariant of the format is checked, not only the checksum:
        header fields, lengths, finite non-negative sums that do not
        overflow, values strictly increasing in ``[0, 1]``, cells and atom
        ranges in order, and the row count and common row weight consistent
        with the sums (a sketch of rows of one common weight ``c`` holds
        multiples of ``c`` adding up to ``n_samples c``).

        Parameters
        ----------
        blob : bytes
        pos_label, multiclass, labels
            Options for later :meth:`update` calls (not stored in the bytes).

        Returns
        -------
        sketch : CalibrationSketch

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


# --- helpers ------------------------------------------------------------------


def _check_max_size(max_size):
    if max_size is None:
        return None
    if isinstance(max_size, bool) or not isinstance(max_size, numbers.Integral):
        raise TypeError(f"max_size must be None or an integer, got {max_size!r}.")
    if max_size < 2:
        raise ValueError(f"max_size must be at least 2, got {max_size}.")
    return int(max_size)


def _overflows(state):
    """True if the exact total weight of ``state`` rounds to infinity.

    A float sum of the (correctly rounded) per-group sums below ``2**1023``
    proves the exact total finite (its relative error is far below 2); only
    near the limit is the exact total computed.
    """
    if isinstance(state, _Exact):
        parts = (state.neg.doubles, state.pos.doubles)
    else:
        parts = tuple(m.to_float() for m in state.masses)
    with np.errstate(over="ignore", invalid="ignore"):
        estimate = sum(float(np.sum(d)) for d in parts)
    if estimate < 2.0**1023:
        return False
    return not np.isfinite(state.total())


def _check_common_weight(state, n_rows, c, total):
    """Rows of one weight ``c``: every sum a multiple of ``c``, ``n_rows c`` in all."""
    if not total == float(n_rows) * c:
        raise ValueError(
            "CalibrationSketch bytes are inconsistent: the common row weight "
            "times the rows seen is not the total weight."
        )
    if not isinstance(state, _Exact):
        return
    k = state.size()
    index = np.arange(k, dtype=np.int64)
    n_counted = 0.0
    for sums in (state.neg, state.pos):
        counts = np.rint(sums.doubles / c)
        exact = ExactSums.products(counts, np.full(k, c), index, k)
        try:
            same = CompactSums.from_exact(exact).same_as(sums)
        except OverflowError:
            same = False
        if not same:
            raise ValueError(
                "CalibrationSketch bytes are inconsistent: a sum is not a whole "
                "multiple of the common row weight."
            )
        n_counted += float(counts.sum())
    if n_counted != float(n_rows):
        raise ValueError(
            "CalibrationSketch bytes are inconsistent: the sums hold a number of "
            "rows of the common weight other than the rows seen."
        )


def _smaller(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)


def _merge_common(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a if a == b else float("nan")


def _raw_weights(sample_weight, checked):
    """The caller's weights as float64 (a copy), unscaled, once validated."""
    raw = np.asarray(sample_weight)
    if raw.dtype.kind not in "biuf" or raw.shape != checked.shape:
        return checked
    if raw.dtype == np.float64 and np.array_equal(raw, checked):
        return checked  # not rescaled: no second copy
    raw = raw.astype(np.float64)
    with np.errstate(over="ignore"):
        total = raw.sum()
    if not np.isfinite(total):
        raise ValueError(
            "sample_weight sums to more than the largest float64 (about "
            "1.8e308): a CalibrationSketch keeps weights as given, so scale them "
            "(and those of every other batch) down by one common factor; every "
            "measure depends on the weights only through w / sum(w)."
        )
    return raw


def _rows_state(y, p, w, max_size):
    """``(state, n_rows, common weight)`` of validated rows."""
    n = p.shape[0]
    w0 = float(w[0])
    common = w0 if np.all(w == w0) else float("nan")
    integral = bool(np.all(w == np.floor(w))) and float(w.sum()) <= 2.0**53
    if integral:
        # float sums of integers below 2**53 are exact: the in-memory grouping
        G = group(y, p, w)
        # in place: the statistic's arrays are ours (8 bytes per row less)
        negatives = np.subtract(G.weights, G.positives, out=G.weights)
        if max_size is not None and len(G) > max_size:
            points = (G.values, negatives, G.positives)
            return _compact_points(*points, max_size), n, common
        return _Exact(G.values, CompactSums(negatives), CompactSums(G.positives)), n, common
    p = np.ascontiguousarray(p, dtype=np.float64)
    wf = np.ascontiguousarray(w, dtype=np.float64)
    positive = np.asarray(y) != 0
    if max_size is not None:
        # a value sort says whether to compact
        if np.unique(p).shape[0] > max_size:
            neg_w = np.where(positive, 0.0, wf)
            pos_w = np.where(positive, wf, 0.0)
            return _compact_points(p, neg_w, pos_w, max_size), n, common
    return _exact_of_rows(p, positive, wf), n, common


def _exact_of_rows(p, positive, w):
    """The exact state of rows of real weights, from one argsort.

    A value held by one row takes that row's weight, a double, as its exact
    sum; only the rows of repeated values go through the multi-limb sums.
    """
    n = p.shape[0]
    # an argsort, not the radix grouping of ``group``: that needs 8 bytes
    # per row more at its peak (measured 46 against 38 bytes per row with
    # the validated weights held), over the 40 of a sketch's build
    order = np.argsort(p)
    ps = p[order]
    new = np.empty(n, dtype=bool)
    new[:1] = True
    np.not_equal(ps[1:], ps[:-1], out=new[1:])
    if new.all():
        # every prediction distinct (continuous scores): each sum is one
        # row's weight; sorted in place of the rows, few temporaries
        del new
        positive_sorted = positive[order]
        weights = w[order]
        del order
        pos = np.where(positive_sorted, weights, 0.0)
        weights[positive_sorted] = 0.0
        return _Exact(ps, CompactSums(weights), CompactSums(pos))
    starts = np.flatnonzero(new)
    del new
    values = ps[starts]
    del ps
    k = values.shape[0]
    counts = np.diff(starts, append=n)
    single = counts == 1
    multi = np.flatnonzero(~single)
    rows = order[np.repeat(~single, counts)] if multi.shape[0] else None
    first = order[starts]  # one row of each value
    del starts, order
    sums = []
    for cls in (False, True):
        d = np.zeros(k)
        hit = single & (positive[first] == cls)
        d[hit] = w[first[hit]]
        sums.append(d)
    del first
    if multi.shape[0] == 0:
        return _Exact(values, CompactSums(sums[0]), CompactSums(sums[1]))
    local = np.repeat(np.arange(multi.shape[0], dtype=np.int64), counts[multi])
    out = []
    for cls, d in zip((False, True), sums):
        wk = np.where(positive[rows] == cls, w[rows], 0.0)
        part = CompactSums.from_exact(ExactSums.of_doubles(wk, local, multi.shape[0]))
        d[multi] = part.doubles
        out.append(CompactSums(d, multi[part.rows].astype(np.int64), part.big))
    return _Exact(values, *out)


def _compact_points(p, neg_w, pos_w, max_size):
    """The compacted state of weighted points, without per-value exact sums.

    ``p`` are predictions (rows, or distinct values) with the weight of their
    negative and of their positive outcomes. The level is the finest with at most ``max_size``
    atoms, exactly as compacting the exact state would choose it.
    """
    # distinct cells of the finest level, per class, sorted
    if np.all(p[1:] > p[:-1]):  # distinct values already (grouped rows)
        present = [p[neg_w > 0], p[pos_w > 0]]
    else:
        present = [np.unique(p[neg_w > 0]), np.unique(p[pos_w > 0])]
    fine = [cells_of(v, MAX_LEVEL) for v in present]

    def count(level):
        shift = MAX_LEVEL - level
        total = 0
        for c in fine:
            if c.shape[0]:
                coarse = c >> shift
                total += 1 + int(np.count_nonzero(coarse[1:] != coarse[:-1]))
        return total

    lo, hi = 0, MAX_LEVEL
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count(mid) <= max_size:
            lo = mid
        else:
            hi = mid - 1
    level = lo
    cell = cells_of(p, level)
    cells = np.unique(np.concatenate([cells_of(v, level) for v in present]))
    index = np.searchsorted(cells, cell)
    k = cells.shape[0]
    masses, moments = [], []
    ranges = np.empty((k, 4))
    ranges[:, 0::2] = np.inf
    ranges[:, 1::2] = -np.inf
    for a, weight in enumerate((neg_w, pos_w)):
        keep = weight > 0
        idx, v, wk = index[keep], p[keep], weight[keep]
        masses.append(ExactSums.of_doubles(wk, idx, k))
        moments.append(ExactSums.products(v, wk, idx, k))
        np.minimum.at(ranges[:, 2 * a], idx, v)
        np.maximum.at(ranges[:, 2 * a + 1], idx, v)
    return _Compacted(level, cells, masses, moments, ranges)


def _merge_states(states):
    if all(isinstance(s, _Exact) for s in states):
        values = np.concatenate([s.values for s in states])
        uniq, inverse = unique_inverse(values)
        k = uniq.shape[0]
        return _Exact(
            uniq,
            CompactSums.regroup([s.neg for s in states], inverse, k),
            CompactSums.regroup([s.pos for s in states], inverse, k),
        )
    level = min(s.level for s in states if isinstance(s, _Compacted))
    return _Compacted.combine([s.at_level(level) for s in states], level)


def _fit(state, max_size):
    """Compact ``state`` if it holds more than ``max_size`` values."""
    if max_size is None:
        return state
    if isinstance(state, _Exact):
        if state.size() <= max_size:
            return state
        if not state.neg.rows.shape[0] and not state.pos.rows.shape[0]:
            # every sum a double: straight to the compacted state
            return _compact_points(
                state.values, state.neg.doubles, state.pos.doubles, max_size
            )
        state = state.at_level(MAX_LEVEL)
    level = state.fitting_level(max_size)
    return state.at_level(level) if level < state.level else state


class _Reader:
    def __init__(self, body, pos):
        self.body = body
        self.pos = pos

    def array(self, dtype, count):
        size = np.dtype(dtype).itemsize * count
        if count < 0 or self.pos + size > len(self.body):
            raise ValueError("CalibrationSketch bytes are truncated.")
        out = np.frombuffer(self.body, dtype=dtype, count=count, offset=self.pos)
        self.pos += size
        return out.copy()

    def sums(self, k):
        if self.pos + _SUMS.size > len(self.body):
            raise ValueError("CalibrationSketch bytes are truncated.")
        offset, n_limbs = _SUMS.unpack_from(self.body, self.pos)
        self.pos += _SUMS.size
        # limbs weigh 2**(32 (offset + j)): doubles and their products lie
        # within 2**-2150 and 2**2048, 32-bit limbs -68 to 64
        if not 0 <= n_limbs <= _MAX_LIMBS or not -70 <= offset <= 66 - n_limbs:
            raise ValueError("CalibrationSketch bytes have invalid exact sums.")
        if k * n_limbs * 8 > len(self.body) - self.pos:
            raise ValueError("CalibrationSketch bytes are truncated.")
        limbs = self.array("<i8", k * n_limbs).astype(np.int64).reshape(k, n_limbs)
        if np.any(limbs < 0) or np.any(limbs >> 32):
            raise ValueError("CalibrationSketch bytes have invalid exact sums.")
        return ExactSums(limbs, offset if n_limbs else 0)

    def compact_sums(self, k):
        """A :class:`CompactSums` of ``k`` groups (format version 2)."""
        doubles = self.array("<f8", k).astype(np.float64)
        (m,) = self.array("<i8", 1)
        if not 0 <= m <= k:
            raise ValueError("CalibrationSketch bytes have invalid exact sums.")
        rows = self.array("<i8", int(m)).astype(np.int64)
        big = self.sums(int(m))
        if not (np.all(np.isfinite(doubles)) and np.all(doubles >= 0)):
            raise ValueError(
                "CalibrationSketch bytes have invalid sums (NaN, infinite or negative)."
            )
        if m and not (
            np.all((rows >= 0) & (rows < k)) and np.all(np.diff(rows) > 0)
        ):
            raise ValueError("CalibrationSketch bytes have invalid exact sums.")
        if m:
            if np.any(sums_overflow(big)):
                raise ValueError("CalibrationSketch bytes have overflowing sums.")
            try:
                canon = CompactSums.from_exact(big)
            except OverflowError:  # below 2**1024 but rounding to infinity
                raise ValueError(
                    "CalibrationSketch bytes have overflowing sums."
                ) from None
            if canon.rows.shape[0] != m or not np.array_equal(
                canon.doubles, doubles[rows]
            ):
                raise ValueError(
                    "CalibrationSketch bytes have invalid exact sums (not in "
                    "canonical form)."
                )
        return CompactSums(doubles, rows, big)


def _encode_sums(sums):
    return [
        _SUMS.pack(sums.offset, sums.limbs.shape[1]),
        np.ascontiguousarray(sums.limbs, dtype="<i8").tobytes(),
    ]


def _encode_compact(sums):
    return [
        np.ascontiguousarray(sums.doubles, dtype="<f8").tobytes(),
        struct.pack("<q", sums.rows.shape[0]),
        np.ascontiguousarray(sums.rows, dtype="<i8").tobytes(),
    ] + _encode_sums(sums.big)


class _Exact:
    """Every distinct value with its exact negative and positive weight."""

    def __init__(self, values, neg, pos):
        self.values = values
        self.neg = neg
        self.pos = pos

    def size(self):
        return self.values.shape[0]

    def n_atoms(self):
        return self.size()

    def total(self):
        """The total weight, correctly rounded; inf if it overflows."""
        if self.size() == 0:
            return 0.0
        total = self.neg.exact_total().plus(self.pos.exact_total())
        if np.any(sums_overflow(total)):
            return float("inf")
        return float(total.to_float()[0])

    def grouped(self):
        return self.values, self.neg, self.pos

    def at_level(self, level):
        """Atoms on the cells of ``level``."""
        cells = cells_of(self.values, level)
        return _Compacted.from_groups(
            cells, self.values, self.neg.to_exact(), self.pos.to_exact(), level
        )

    def encode(self):
        return (
            [np.ascontiguousarray(self.values, dtype="<f8").tobytes()]
            + _encode_compact(self.neg)
            + _encode_compact(self.pos)
        )

    @classmethod
    def decode(cls, reader, k, version=_VERSION):
        values = reader.array("<f8", k).astype(np.float64)
        if version == 1:
            sums = [reader.sums(k), reader.sums(k)]
            if any(np.any(sums_overflow(x)) for x in sums):
                raise ValueError("CalibrationSketch bytes have overflowing sums.")
            try:
                neg, pos = (CompactSums.from_exact(x) for x in sums)
            except OverflowError:
                raise ValueError(
                    "CalibrationSketch bytes have overflowing sums."
                ) from None
        else:
            neg = reader.compact_sums(k)
            pos = reader.compact_sums(k)
        if not (
            np.all(np.isfinite(values))
            and np.all((values >= 0) & (values <= 1))
            and np.all(np.diff(values) > 0)
        ):
            raise ValueError(
                "CalibrationSketch bytes have invalid values (not strictly "
                "increasing in [0, 1])."
            )
        return cls(values, neg, pos)


class _Compacted:
    """Per occupied cell, a negative and a positive atom.

    Each atom: exact mass and first moment ``sum w p``, and the range of the
    predictions it holds (``lo > hi`` when the atom is empty).
    """

    def __init__(self, level, cells, masses, moments, ranges):
        self.level = level
        self.cells = cells  # strictly increasing int64
        self.masses = masses  # [negative, positive] ExactSums per cell
        self.moments = moments
        self.ranges = ranges  # (k, 4): neg lo, neg hi, pos lo, pos hi

    def size(self):
        return self.cells.shape[0]

    def n_atoms(self):
        return int(sum(np.count_nonzero(p) for p in self._atom_present()))

    def total(self):
        k = self.size()
        if k == 0:
            return 0.0
        index = np.zeros(2 * k, dtype=np.int64)
        return float(ExactSums.regroup(self.masses, index, 1).to_float()[0])

    @classmethod
    def from_groups(cls, cells, values, neg, pos, level):
        """Atoms of exact groups (zero-mass groups are dropped)."""
        parts = []
        for sums in (neg, pos):
            keep = sums.nonzero()
            parts.append((keep, sums))
        occupied = parts[0][0] | parts[1][0]
        uniq, index = np.unique(cells[occupied], return_inverse=True)
        k = uniq.shape[0]
        values = values[occupied]
        masses, moments = [], []
        ranges = np.empty((k, 4))
        ranges[:, 0::2] = np.inf
        ranges[:, 1::2] = -np.inf
        for a, (keep, sums) in enumerate(parts):
            sums = sums.take(occupied)
            keep = keep[occupied]
            masses.append(ExactSums.regroup([sums], index, k))
            moments.append(ExactSums.regroup([sums.times(values)], index, k))
            np.minimum.at(ranges[:, 2 * a], index[keep], values[keep])
            np.maximum.at(ranges[:, 2 * a + 1], index[keep], values[keep])
        return cls(level, uniq, masses, moments, ranges)

    @classmethod
    def combine(cls, states, level):
        """Cell-wise sums of states on the same level."""
        cells = np.concatenate([s.cells for s in states])
        uniq, index = np.unique(cells, return_inverse=True)
        k = uniq.shape[0]
        masses = [
            ExactSums.regroup([s.masses[a] for s in states], index, k) for a in (0, 1)
        ]
        moments = [
            ExactSums.regroup([s.moments[a] for s in states], index, k) for a in (0, 1)
        ]
        all_ranges = np.concatenate([s.ranges for s in states])
        ranges = np.empty((k, 4))
        ranges[:, 0::2] = np.inf
        ranges[:, 1::2] = -np.inf
        for j in range(4):
            reduce = np.minimum if j % 2 == 0 else np.maximum
            reduce.at(ranges[:, j], index, all_ranges[:, j])
        return cls(level, uniq, masses, moments, ranges)

    def at_level(self, level):
        if level == self.level:
            return self
        coarse = _Compacted(
            level,
            self.cells >> (self.level - level),
            self.masses,
            self.moments,
            self.ranges,
        )
        return _Compacted.combine([coarse], level)

    def _atom_present(self):
        return [m.nonzero() for m in self.masses]

    def fitting_level(self, max_size):
        """The finest level (at most this one) with at most ``max_size`` atoms."""
        present = self._atom_present()
        keys = [self.cells[present[a]] for a in (0, 1)]

        def count(level):
            shift = self.level - level
            return sum(np.unique(k >> shift).shape[0] for k in keys)

        lo, hi = 0, self.level  # count(0) <= 2 <= max_size
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if count(mid) <= max_size:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def atom_values(self):
        """Each atom's position: its mean, kept inside its range; NaN if empty."""
        out = []
        for a in (0, 1):
            mass = self.masses[a].to_float()
            moment = self.moments[a].to_float()
            lo, hi = self.ranges[:, 2 * a], self.ranges[:, 2 * a + 1]
            with np.errstate(invalid="ignore", divide="ignore"):
                mean = np.clip(moment / mass, lo, hi)
            mean = np.where(lo == hi, lo, mean)
            out.append(np.where(self.masses[a].nonzero(), mean, np.nan))
        return out

    def grouped(self):
        values = self.atom_values()
        present = self._atom_present()
        k = self.size()
        zeros = ExactSums.zeros(k)
        keep = np.concatenate(present)
        vals = np.concatenate(values)[keep]
        neg = _stack([self.masses[0], zeros]).take(keep)
        pos = _stack([zeros, self.masses[1]]).take(keep)
        return group_exact(vals, [neg], [pos])

    def encode(self):
        parts = [np.ascontiguousarray(self.cells, dtype="<i8").tobytes()]
        for sums in self.masses + self.moments:
            parts += _encode_sums(sums)
        parts.append(np.ascontiguousarray(self.ranges, dtype="<f8").tobytes())
        return parts

    @classmethod
    def decode(cls, reader, level, k):
        cells = reader.array("<i8", k).astype(np.int64)
        sums = [reader.sums(k) for _ in range(4)]
        ranges = reader.array("<f8", 4 * k).astype(np.float64).reshape(k, 4)
        if not (
            np.all((cells >= 0) & (cells < (1 << level))) and np.all(np.diff(cells) > 0)
        ):
            raise ValueError("CalibrationSketch bytes have invalid cells.")
        state = cls(level, cells, sums[:2], sums[2:], ranges)
        present = state._atom_present()
        width = np.ldexp(1.0, -level)
        for a in (0, 1):
            lo, hi = ranges[present[a], 2 * a], ranges[present[a], 2 * a + 1]
            c = cells[present[a]]
            if not (
                np.all(lo <= hi)
                and np.all((lo >= 0) & (hi <= 1))
                and np.all(cells_of(lo, level) == c)
                and np.all(cells_of(hi, level) == c)
            ):
                raise ValueError("CalibrationSketch bytes have invalid atom ranges.")
        if not np.all(present[0] | present[1]) or not width > 0:
            raise ValueError("CalibrationSketch bytes have an empty cell.")
        for a in (0, 1):
            absent = ~present[a]
            if not (
                np.all(ranges[absent, 2 * a] == np.inf)
                and np.all(ranges[absent, 2 * a + 1] == -np.inf)
                and not np.any(sums[2 + a].nonzero()[absent])
            ):
                raise ValueError(
                    "CalibrationSketch bytes have an empty atom with a range or moment."
                )
            if any(np.any(sums_overflow(x)) for x in (sums[a], sums[2 + a])):
                raise ValueError("CalibrationSketch bytes have overflowing sums.")
            mass = sums[a].to_float()[present[a]]
            moment = sums[2 + a].to_float()[present[a]]
            lo, hi = ranges[present[a], 2 * a], ranges[present[a], 2 * a + 1]
            # the mean of an atom's predictions lies in its range (up to the
            # rounding of the two sums and of the products)
            slack = 4 * np.finfo(float).eps
            with np.errstate(over="ignore", invalid="ignore"):
                ok = np.all(moment <= mass * hi * (1 + slack)) and np.all(
                    moment >= mass * lo * (1 - slack)
                )
            if not ok:
                raise ValueError(
                    "CalibrationSketch bytes have an atom whose mean lies outside "
                    "its range."
                )
        return state


def _stack(parts):
    """Row-wise concatenation of ``ExactSums``."""
    stacked, offset = _aligned(parts)
    return ExactSums(np.concatenate(stacked, axis=0), offset)


# --- compaction bounds ------------------------------------------------------------


def _atoms(state):
    """Per atom (negatives then positives): mass, |y - p| mass, spread, cell."""
    present = state._atom_present()
    mass, resid, spread, cell, lo, hi = [], [], [], [], [], []
    for a in (0, 1):
        keep = present[a]
        m = state.masses[a].to_float()[keep]
        s = state.moments[a].to_float()[keep]
        mass.append(m)
        resid.append(s if a == 0 else np.maximum(m - s, 0.0))
        lo.append(state.ranges[keep, 2 * a])
        hi.append(state.ranges[keep, 2 * a + 1])
        spread.append(hi[-1] - lo[-1])
        cell.append(state.cells[keep])
    return [np.concatenate(x) for x in (mass, resid, spread, cell, lo, hi)]


_SUPPORTED = (
    "smooth_calibration_error",
    "cutoff_calibration_error",
    "binned_ece",
    "soft_binned_cdl",
    "calibration_decision_loss",
    "calibration_fixed_decision_loss",
    "maximum_swap_regret",
    "lower_distance_to_calibration",
)


def _compacted_bound(state, name, options):
    mass, resid, spread, cell, lo, hi = _atoms(state)
    total = mass.sum()
    moved = spread > 0
    if name == "smooth_calibration_error":
        return float((spread * resid).sum() / total)
    if name == "cutoff_calibration_error":
        if not moved.any():
            return 0.0
        per_cell = np.bincount(
            np.unique(cell, return_inverse=True)[1], resid * moved
        )
        return float(2.0 * per_cell.max() / total)
    if name == "binned_ece":
        n_bins = options.get("n_bins", 15)
        strategy = options.get("strategy", "uniform")
        norm = options.get("norm", "l1")
        if strategy != "uniform":
            raise ValueError(
                "binned_ece with strategy='quantile' is not supported on a "
                "compacted CalibrationSketch (its bins depend on the moved "
                "predictions); use uniform bins, or a sketch without max_size."
            )
        inner = np.arange(n_bins + 1)[1:-1] / n_bins
        crossing = np.searchsorted(inner, lo, side="right") != np.searchsorted(
            inner, hi, side="right"
        )
        if crossing.any() and norm != "l1":
            raise ValueError(
                f"binned_ece with norm={norm!r} is bounded on a compacted "
                f"CalibrationSketch only when its bins are unions of the sketch's "
                f"cells (n_bins a power of two at most 2**{state.level}); use "
                "norm='l1' or such n_bins."
            )
        return float(2.0 * resid[crossing].sum() / total)
    if name == "soft_binned_cdl":
        m = options.get("m")
        top = 1 << state.level
        if m is not None:
            if m & (m - 1) == 0 and m <= top:
                return 0.0
            raise ValueError(
                f"soft_binned_cdl with m={m} is exact on a compacted "
                f"CalibrationSketch only for a power of two at most 2**{state.level}, "
                "and is not bounded otherwise."
            )
        levels = options.get("levels")
        if levels is None:
            from .metrics._scdl import scdl_core

            values, neg, pos = state.grouped()
            G = GroupedStatistic(
                values, neg.plus(pos).to_float(), pos.to_float()
            )
            levels = scdl_core(G, details=True)[1]["levels"]
        if np.max(levels) <= top:
            return 0.0
        return float(np.ldexp(1.0, 1 - state.level))
    if name in ("calibration_decision_loss", "calibration_fixed_decision_loss"):
        moved_cells = np.unique(cell[moved])
        return float(mass[np.isin(cell, moved_cells)].sum() / total)
    if name == "maximum_swap_regret":
        moved_cells = np.unique(cell[moved])
        return float(mass[np.isin(cell, moved_cells)].sum())
    if name == "lower_distance_to_calibration":
        return float((mass * spread).sum() / total)
    raise ValueError(
        f"No compaction bound for {name!r}; bounded measures: {', '.join(_SUPPORTED)}."
    )
