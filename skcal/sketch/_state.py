"""What a :class:`CalibrationSketch` holds: exact groups or compacted cells,
built from rows, merged, fitted to ``max_size``."""

import numbers

import numpy as np

from .._grouped import (
    MAX_LEVEL,
    CompactSums,
    ExactSums,
    GroupedStatistic,
    aligned,
    cells_of,
    group,
    group_exact,
    key_sort,
    sums_overflow,
    unique_inverse,
)
from .._kernels._interval import index_bits, prefix_keys
from .._kernels._sketch import group_keys_exact, group_rows_exact
from ._format import _VERSION, _encode_compact, _encode_sums

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
    """The caller's weights as float64, unscaled, once validated; and whether ours.

    Returns ``(w, owned)``: ``owned`` is True when ``w`` shares no memory with
    the caller's ``sample_weight`` (a copy made by the validator or here),
    so the build may use its memory as a work buffer.
    """
    raw = np.asarray(sample_weight)
    if raw.dtype.kind not in "biuf" or raw.shape != checked.shape:
        return checked, not np.may_share_memory(checked, raw)
    if raw.dtype == np.float64 and np.array_equal(raw, checked):
        # not rescaled: no second copy
        return checked, not np.may_share_memory(checked, raw)
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
    return raw, True


# Rows summarised at once by a bounded sketch: its temporaries (about 90
# bytes a row) stay near 6 MB whatever the number of rows.
_CHUNK_ROWS = 1 << 16
# Rows of repeated values whose exact sums the exact build takes at once: at
# least 2**16, at most a quarter of the rows, so that the temporaries (about
# 40 bytes per row of the block) add at most 10 bytes a row to the build's
# peak. Blocks of 2**16 rows cost 16 rounds of numpy calls at 10**6 rows,
# 4.7 ms of a build of 29 (benchmarks/bench_sketch.py, rounded predictions);
# the rows at once took 51 bytes a row at 2 * 10**5 rows.
_EXACT_BLOCK_SHARE = 4


def _all_rows(w, test, probe=256):
    """``bool(np.all(test(w)))``, tried on the first ``probe`` rows first: real
    weights fail there, and the test of every row (for ``np.floor``, two
    passes and an array of ``n`` doubles) is left for weights that pass."""
    return bool(np.all(test(w[:probe]))) and bool(np.all(test(w)))


def _rows_state(y, p, w, max_size, own_weights=False):
    """``(state, n_rows, common weight)`` of validated rows.

    With ``own_weights=True`` the caller gives up ``w`` (a copy of its own):
    the exact build may overwrite it, as one of its work buffers.
    """
    n = p.shape[0]
    w0 = float(w[0])
    common = w0 if _all_rows(w, lambda part: part == w0) else float("nan")
    if max_size is not None and n > _CHUNK_ROWS:
        # bounded: summarise chunk by chunk, each fitted to max_size and
        # merged in; merging is exact (the state depends on the rows and
        # max_size only), so this is the state of all rows at once
        state = None
        for lo in range(0, n, _CHUNK_ROWS):
            part = slice(lo, lo + _CHUNK_ROWS)
            chunk = _rows_state(y[part], p[part], w[part], max_size)[0]
            state = chunk if state is None else _fit(_merge_states([state, chunk]), max_size)
        return state, n, common
    integral = _all_rows(w, lambda part: part == np.floor(part)) and float(w.sum()) <= 2.0**53
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
    # the exact state, compacted if it holds more than max_size values (a
    # bounded sketch's chunk: grouped by the one radix sort, then compacted
    # from its distinct values, as the merged state would be)
    state = _exact_of_rows(p, y, wf, own_weights and wf is w)
    return _fit(state, max_size), n, common


def _keys_grouping(p, y, w, values, neg):
    """``(pos, rows, multi)`` of ``group_keys_exact``, or None where it declines.

    ``values`` holds the keys while they are read; ``values`` and ``neg``
    are cut to the groups in place, ``pos`` is returned cut too. ``multi``
    indexes the repeated values and ``rows`` gets their rows' signed
    weights, value by value (each value's first row from its ``pos`` entry,
    the others from the tail of ``pos``); those ``pos`` entries are set to
    0.0, as ``group_rows_exact`` leaves them.
    """
    n = p.shape[0]
    if n == 0 or n >= 2**40:
        return None
    b = index_bits(n)
    keys = values.view(np.uint64)
    if not prefix_keys(p, keys, b):
        return None
    keys.sort()
    pos = np.empty(n)
    k, m = group_keys_exact(keys, p, y, w, values, neg, pos, b)
    if k < 0:
        return None
    # the caller's buffers cut to the k groups first (in place: with many
    # repeated values k is small, and the rows below then fit in what they
    # gave back)
    values.resize(k, refcheck=False)
    neg.resize(k, refcheck=False)
    multi = np.flatnonzero(neg < 0)
    counts = (-neg[multi]).astype(np.int64)
    rows = np.empty(int(counts.sum()))
    if multi.shape[0]:
        firsts = np.cumsum(counts) - counts
        rows[firsts] = pos[multi]
        others = np.ones(rows.shape[0], dtype=bool)
        others[firsts] = False
        rows[others] = pos[n - m :][::-1]
        del others
        pos[multi] = 0.0
    pos.resize(k, refcheck=False)
    return pos, rows, multi


def _exact_of_rows(p, y, w, own_weights=False):
    """The exact state of rows of real weights, from one sort.

    A value held by one row takes that row's weight, a double, as its exact
    sum; only the rows of repeated values go through the multi-limb sums.
    Where numpy sorts 64-bit integers with SIMD (``key_sort``), the rows are
    ordered by one ``np.sort`` of prefix keys, as the measures' weighted
    grouping orders them, and grouped by ``group_keys_exact``
    (``_kernels/_sketch.pyx``) in three arrays, 24 bytes per row beside the
    validated rows: at 10**6 rows with exponential weights 16 to 21 ms
    instead of the radix sort's 35 to 38 (0.4 to 0.9 times a direct weighted
    smCE instead of 1.2 to 1.6 on calibrated or skewed predictions; the
    radix sort was 0.75 times on the benchmark's miscalibrated ones). Else,
    or where a prefix is crowded with distinct predictions out of order,
    ``group_rows_exact`` radix-sorts them in four arrays, 32 bytes per row
    in all; with ``own_weights=True`` one of them is ``w`` itself (the
    validator's copy, overwritten), so that build also needs 24 bytes per
    row beside the validated rows. The argsort they replace, with its
    gathers and per-class weights, took 40 to 56 bytes per row and 1.3 to
    1.4 times a direct weighted smCE (``benchmarks/bench_sketch.py``).
    """
    n = p.shape[0]
    if y.dtype in (np.uint8, np.int64):
        y = np.ascontiguousarray(y)
    else:
        y = (y != 0).view(np.uint8)
    p = np.ascontiguousarray(p, dtype=np.float64)
    w = np.ascontiguousarray(w, dtype=np.float64)
    values = np.empty(n)
    neg = np.empty(n)
    grouped = _keys_grouping(p, y, w, values, neg) if key_sort() else None
    if grouped is not None:
        del w                           # the caller's, read only
        pos, rows, multi = grouped
    else:
        # the kernel reads each weight before it writes that entry of pos
        pos = w if own_weights and w.flags.writeable else np.empty(n)
        rows = np.empty(n)
        k, m = group_rows_exact(p, y, w, values, neg, pos, rows)
        ours = pos is not w             # else the caller's copy, given up
        del w
        # values held by several rows: neg holds minus their row count, and
        # the first rows of ``rows`` their rows' signed weights (value by value)
        multi = np.flatnonzero(neg[:k] < 0) if m else np.empty(0, dtype=np.intp)
        # the buffers cut to what they hold: those made here resized in
        # place (their memory given back, nothing copied; no other reference
        # to them exists), the caller's copied (a copy of each at 10**6 rows,
        # 8 bytes per row beside the four buffers, took the peak to 41 to 47
        # bytes per row)
        rows.resize(m, refcheck=False)
        values.resize(k, refcheck=False)
        neg.resize(k, refcheck=False)
        if ours:
            pos.resize(k, refcheck=False)
        elif k < n:
            pos = pos[:k].copy()
    counts = (-neg[multi]).astype(np.int64)
    if multi.shape[0] == 0:
        del rows
        return _Exact(values, CompactSums(neg), CompactSums(pos))
    # their rows' exact sums are taken a block of values at a time (about
    # block_rows rows), so the temporaries of the multi-limb sums stay small
    block_rows = max(_CHUNK_ROWS, n // _EXACT_BLOCK_SHARE)
    ends = np.cumsum(counts)
    parts = ([], [])
    g0 = 0
    while g0 < multi.shape[0]:
        r0 = int(ends[g0 - 1]) if g0 else 0
        g1 = max(g0 + 1, int(np.searchsorted(ends, r0 + block_rows, side="right")))
        signed = rows[r0 : ends[g1 - 1]]
        # one exact sum per (value, class): group 2 j for the negative rows of
        # the block's value j, 2 j + 1 for its positive ones (sign bit set)
        sums = CompactSums.from_exact(ExactSums.of_signed_runs(counts[g0:g1], signed))
        for cls, part in enumerate(parts):
            big = sums.rows % 2 == cls
            part.append((g0, CompactSums(
                sums.doubles[cls::2], sums.rows[big] // 2, sums.big.take(big)
            )))
        g0 = g1
    del rows
    out = []
    for d, part in zip((neg, pos), parts):
        d[multi] = np.concatenate([s.doubles for _, s in part])
        big_rows = np.concatenate([s.rows + g for g, s in part])
        big = _stack([s.big for _, s in part])
        out.append(CompactSums(d, multi[big_rows].astype(np.int64), big))
    return _Exact(values, *out)


def _compact_points(p, neg_w, pos_w, max_size):
    """The compacted state of weighted points, without per-value exact sums.

    ``p`` are distinct predictions in increasing order (grouped rows) with the
    weight of their negative and of their positive outcomes, each an exact sum.
    The level is the finest with at most ``max_size`` atoms, exactly as
    compacting the exact state would choose it (:func:`_points_level`).
    """
    return _points_at(p, neg_w, pos_w, _points_level(p, neg_w, pos_w, max_size))


def _points_level(p, neg_w, pos_w, max_size):
    """The finest level at which the points (weights > 0) take at most ``max_size`` atoms."""
    # distinct cells of the finest level, per class, sorted
    present = [p[neg_w > 0], p[pos_w > 0]]
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
    return lo


def _points_at(p, neg_w, pos_w, level):
    """The points' atoms on the cells of ``level`` (see :func:`_compact_points`)."""
    # sorted values: the occupied cells and each value's cell index in one
    # linear pass (values of weight zero in both classes get any index: unused)
    cell = cells_of(p, level)
    occupied = np.flatnonzero((neg_w > 0) | (pos_w > 0))
    first = np.ones(occupied.shape[0], dtype=bool)
    occ = cell[occupied]
    np.not_equal(occ[1:], occ[:-1], out=first[1:])
    cells = occ[first]
    marks = np.zeros(p.shape[0], dtype=bool)
    marks[occupied[first]] = True
    index = np.cumsum(marks, dtype=np.int64)
    index -= 1
    del cell, occupied, first, occ, marks
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
        # the level from the doubles (a sum is > 0 exactly when its rounding
        # is), then the atoms on it, the values of multi-limb sums apart
        # (_Exact.at_level)
        return state.at_level(
            _points_level(state.values, state.neg.doubles, state.pos.doubles, max_size)
        )
    level = state.fitting_level(max_size)
    return state.at_level(level) if level < state.level else state


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
        """Atoms on the cells of ``level``.

        The values whose sums are all doubles go the way of weighted points
        (``_points_at``: exact products of doubles); only the few whose
        negative or positive sum needs more than a double go through
        multi-limb sums (``from_groups``), and the two are combined. All of
        them in limbs, as before, took 33 times a direct smCE to build a
        bounded sketch of 10**6 weighted rows of float32 predictions (2% of
        the values repeated), 3.6 times without repeats.
        """
        big = np.union1d(self.neg.rows, self.pos.rows)
        if big.shape[0] == 0:
            return _points_at(self.values, self.neg.doubles, self.pos.doubles, level)
        apart = np.zeros(self.size(), dtype=bool)
        apart[big] = True
        neg_w, pos_w = self.neg.doubles.copy(), self.pos.doubles.copy()
        neg_w[apart] = 0.0
        pos_w[apart] = 0.0
        points = _points_at(self.values, neg_w, pos_w, level)
        values = self.values[apart]
        multi = _Compacted.from_groups(
            cells_of(values, level), values, self.neg.take(apart).to_exact(),
            self.pos.take(apart).to_exact(), level,
        )
        return _Compacted.combine([points, multi], level)

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
    stacked, offset = aligned(parts)
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
            from ..metrics._scdl import scdl_core

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
