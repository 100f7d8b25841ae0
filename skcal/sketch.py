"""A mergeable summary of binary calibration data: :class:`CalibrationSketch`."""

import numbers
import struct
import zlib

import numpy as np

from ._grouped import (
    MAX_LEVEL,
    ExactSums,
    GroupedStatistic,
    _aligned,
    cells_of,
    group,
    group_exact,
    unique_inverse,
)
from ._validation import check_binary_calibration_input

__all__ = ["CalibrationSketch"]

_MAGIC = b"SKCALSKT"
_VERSION = 1
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
    held as a multi-limb integer (a double is an integer multiple of a power
    of two) and rounded once, correctly, when the statistic is read. The
    statistic is thus bit for bit the same however the data were split and
    in whatever order the pieces were merged or updated; for integer weights
    (unit weights included, below ``2**53`` in total) it is also bit for bit
    the statistic an in-memory measure builds, so every measure of a sketch
    equals the in-memory value exactly. For other weights the sums are the
    correctly rounded exact sums, which in-memory float sums approach to
    within their own rounding.

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
        self._state = _Exact(np.zeros(0), ExactSums.zeros(0), ExactSums.zeros(0))
        self._n_rows = 0
        self._common_weight = None  # a float, or NaN once weights differ
        self._statistic = None

    def _new(self, state, n_rows, common_weight, max_size):
        out = CalibrationSketch.__new__(CalibrationSketch)
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
        return self._state.total()

    def __repr__(self):
        kind = "exact" if self.exact else f"compacted to 2**-{self.level}"
        return (
            f"CalibrationSketch(n_samples={self._n_rows}, "
            f"n_values={self.n_values}, {kind}, max_size={self._max_size})"
        )

    # --- building -------------------------------------------------------------

    def update(self, y_true, y_prob, sample_weight=None):
        """Add rows, validated as the measures validate them; returns self.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            Observed labels.
        y_prob : array-like of shape (n_samples,) or (n_samples, n_classes)
            Predicted probabilities.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights with a positive sum.

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
        batch = self._new(*_rows_state(y, p, w, self._max_size), max_size=self._max_size)
        merged = self.merge(batch)
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
        n_rows = self._n_rows + other._n_rows
        common = _merge_common(self._common_weight, other._common_weight)
        states = [s._state for s in (self, other) if s._n_rows > 0]
        if not states:
            return self._new(self._state, 0, None, max_size)
        state = states[0] if len(states) == 1 else _merge_states(states)
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
        if self._n_rows == 0:
            self.grouped_statistic()  # raises the empty-sketch error
        if self.exact:
            return 0.0
        return _compacted_bound(self._state, name, options)

    def _null_counts(self):
        """``(counts per value, row weight)`` for the tester's exact null."""
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
        version (1) and flags; int64 ``max_size`` (-1 for None), level (-1 if
        exact), rows seen, float64 common row weight, int64 number of values
        (exact) or cells (compacted); then the arrays (float64 values or
        int64 cells, each exact sum as int64 offset, limb count and limbs,
        compacted atoms' float64 ranges); last a CRC-32 of all before it.
        ``pos_label``, ``multiclass`` and ``labels`` are not stored.

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
        flags = 0
        common = 0.0
        if self._common_weight is not None:
            if np.isnan(self._common_weight):
                flags |= _FLAG_MIXED_WEIGHTS
            else:
                flags |= _FLAG_COMMON_WEIGHT
                common = float(self._common_weight)
        state = self._state
        if not self.exact:
            flags |= _FLAG_COMPACTED
        parts = [
            _HEADER.pack(
                _MAGIC,
                _VERSION,
                flags,
                -1 if self._max_size is None else self._max_size,
                -1 if self.exact else state.level,
                self._n_rows,
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
            (truncated, altered or foreign).

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
        if version != _VERSION:
            raise ValueError(
                f"CalibrationSketch bytes of version {version}; this skcal reads "
                f"version {_VERSION}."
            )
        if zlib.crc32(body) != crc:
            raise ValueError(
                "CalibrationSketch bytes are corrupted (checksum mismatch)."
            )
        if flags & ~_KNOWN_FLAGS or (
            flags & _FLAG_COMMON_WEIGHT and flags & _FLAG_MIXED_WEIGHTS
        ):
            raise ValueError(f"CalibrationSketch bytes have unknown flags {flags}.")
        if max_size != -1 and max_size < 2 or n_rows < 0 or size < 0:
            raise ValueError("CalibrationSketch bytes have an invalid header.")
        reader = _Reader(body, _HEADER.size)
        if flags & _FLAG_COMPACTED:
            if not 0 <= level <= MAX_LEVEL:
                raise ValueError("CalibrationSketch bytes have an invalid level.")
            state = _Compacted.decode(reader, level, size)
        else:
            if level != -1:
                raise ValueError("CalibrationSketch bytes have an invalid level.")
            state = _Exact.decode(reader, size)
        if reader.pos != len(body):
            raise ValueError("CalibrationSketch bytes have trailing data.")
        if (n_rows == 0) != (state.size() == 0):
            raise ValueError("CalibrationSketch bytes are inconsistent (rows).")
        if n_rows and not state.total() > 0:
            raise ValueError("CalibrationSketch bytes hold no weight.")
        if flags & _FLAG_COMMON_WEIGHT:
            if not (np.isfinite(common) and common > 0):
                raise ValueError("CalibrationSketch bytes have an invalid weight.")
            common_weight = common
        elif flags & _FLAG_MIXED_WEIGHTS:
            common_weight = float("nan")
        else:
            common_weight = None
        if (common_weight is None) != (n_rows == 0):
            raise ValueError("CalibrationSketch bytes are inconsistent (weights).")
        out = cls(
            max_size=None if max_size == -1 else int(max_size),
            pos_label=pos_label,
            multiclass=multiclass,
            labels=labels,
        )
        out._state = state
        out._n_rows = int(n_rows)
        out._common_weight = common_weight
        if out._max_size is not None and state.size() > out._max_size and out.exact:
            raise ValueError("CalibrationSketch bytes exceed their max_size.")
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


def _rows_state(y, p, w, max_size):
    """``(state, n_rows, common weight)`` of validated rows."""
    n = p.shape[0]
    w0 = float(w[0])
    common = w0 if np.all(w == w0) else float("nan")
    integral = bool(np.all(w == np.floor(w))) and float(w.sum()) <= 2.0**53
    if integral:
        # float sums of integers below 2**53 are exact: the in-memory grouping
        G = group(y, p, w)
        negatives = G.weights - G.positives
        if max_size is not None and len(G) > max_size:
            points = (G.values, negatives, G.positives)
            return _compact_points(*points, max_size), n, common
        neg = ExactSums.of_integers(negatives)
        pos = ExactSums.of_integers(G.positives)
        return _Exact(G.values, neg, pos), n, common
    yf = np.asarray(y, dtype=np.float64)
    wf = np.ascontiguousarray(w, dtype=np.float64)
    p = np.ascontiguousarray(p, dtype=np.float64)
    neg_w = np.where(yf == 0, wf, 0.0)
    pos_w = np.where(yf != 0, wf, 0.0)
    if max_size is not None:
        # a value sort says whether to compact; the rows' group indices are
        # only needed when not, and then there are at most max_size values
        values = np.unique(p)
        if values.shape[0] > max_size:
            return _compact_points(p, neg_w, pos_w, max_size), n, common
        index = np.searchsorted(values, p)
    else:
        values, index = unique_inverse(p)
    k = values.shape[0]
    neg = ExactSums.of_doubles(neg_w, index, k)
    pos = ExactSums.of_doubles(pos_w, index, k)
    return _Exact(values, neg, pos), n, common


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
        return _Exact(
            *group_exact(values, [s.neg for s in states], [s.pos for s in states])
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
        negatives, positives = state.neg.as_doubles(), state.pos.as_doubles()
        if negatives is not None and positives is not None:
            # integer sums: straight to the compacted state
            v = state.values
            return _compact_points(v, negatives, positives, max_size)
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
        if not 0 <= n_limbs <= _MAX_LIMBS or abs(offset) > _MAX_LIMBS:
            raise ValueError("CalibrationSketch bytes have invalid exact sums.")
        limbs = self.array("<i8", k * n_limbs).astype(np.int64).reshape(k, n_limbs)
        if np.any(limbs < 0) or np.any(limbs >> 32):
            raise ValueError("CalibrationSketch bytes have invalid exact sums.")
        return ExactSums(limbs, offset if n_limbs else 0)


def _encode_sums(sums):
    return [
        _SUMS.pack(sums.offset, sums.limbs.shape[1]),
        np.ascontiguousarray(sums.limbs, dtype="<i8").tobytes(),
    ]


class _Exact:
    """Every distinct value with its exact negative and positive weight."""

    def __init__(self, values, neg, pos):
        self.values = values
        self.neg = neg
        self.pos = pos

    def size(self):
        return self.values.shape[0]

    def total(self):
        if self.size() == 0:
            return 0.0
        index = np.zeros(2 * self.size(), dtype=np.int64)
        return float(ExactSums.regroup([self.neg, self.pos], index, 1).to_float()[0])

    def grouped(self):
        return self.values, self.neg, self.pos

    def at_level(self, level):
        """Atoms on the cells of ``level``."""
        cells = cells_of(self.values, level)
        return _Compacted.from_groups(
            cells, self.values, self.neg, self.pos, level
        )

    def encode(self):
        return (
            [np.ascontiguousarray(self.values, dtype="<f8").tobytes()]
            + _encode_sums(self.neg)
            + _encode_sums(self.pos)
        )

    @classmethod
    def decode(cls, reader, k):
        values = reader.array("<f8", k).astype(np.float64)
        neg = reader.sums(k)
        pos = reader.sums(k)
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
        if not (np.all(np.diff(cells) > 0) and np.all(cells >= 0)) or (
            k and cells[-1] >= (1 << level)
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
                and np.all(cells_of(lo, level) == c)
                and np.all(cells_of(hi, level) == c)
                and np.all((lo >= 0) & (hi <= 1))
            ):
                raise ValueError("CalibrationSketch bytes have invalid atom ranges.")
        if not np.all(present[0] | present[1]) or not width > 0:
            raise ValueError("CalibrationSketch bytes have an empty cell.")
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
