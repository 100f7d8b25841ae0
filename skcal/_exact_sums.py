"""Exact sums of doubles: the sketch's merge and compaction primitives.

Split out of :mod:`skcal._grouped` (which re-exports these names): the
grouped statistic is built from rows there; the arithmetic that keeps its
sums exact under any merge order lives here.
"""

import numpy as np

from ._kernels._exact import deposit, deposit_signed_runs, term_columns

# --- exact sums and the sketch's merge and compaction primitives -------------
#
# A calibration sketch must merge bit for bit: the statistic of merged
# sketches must not depend on how the data were split or in which order the
# pieces were merged. Float sums do depend on the order, so the sketch keeps
# every sum it needs exactly, as a multi-limb integer (``ExactSums``), and
# rounds once, correctly (to nearest, ties to even), when the statistic is
# read. Every input is a non-negative double ``m 2**e`` (a 53-bit integer
# ``m``), so its exact value is a sum of 32-bit limbs ``2**(32 j)``; sums of
# limbs are integer sums, exact in any order.

_LIMB_BITS = 32
_LIMB_MASK = (1 << _LIMB_BITS) - 1
# rows deposited between two carry normalisations: each deposit adds less
# than 2**33 to a limb, so 2**28 of them stay below 2**61
_CHUNK = 1 << 24
# finest compaction level: cells of width 2**-62 (cell indices fit int64)
MAX_LEVEL = 62


class ExactSums:
    """One exact non-negative sum per group: ``sum_j limbs[k, j] 2**(32 (offset + j))``.

    ``limbs`` is int64 of shape ``(K, L)`` with entries in ``[0, 2**32)``
    once normalised; ``offset`` places limb 0. Nothing is ever rounded.
    """

    __slots__ = ("limbs", "offset")

    def __init__(self, limbs, offset=0):
        self.limbs = limbs
        self.offset = int(offset)

    @classmethod
    def zeros(cls, k):
        return cls(np.zeros((k, 0), dtype=np.int64), 0)

    def __len__(self):
        return self.limbs.shape[0]

    @classmethod
    def of_doubles(cls, x, index, k):
        """Exact ``out[g] = sum_{index[i] = g} x[i]`` for finite ``x >= 0``."""
        x = np.ascontiguousarray(x, dtype=np.float64)
        return _deposit_rows(index, x, x, k, product=False)

    @classmethod
    def of_signed_runs(cls, counts, signed):
        """Exact sums per value and class of rows held in runs.

        Value ``j`` holds the next ``counts[j]`` entries of ``signed``, a
        positive row's weight as ``-w`` (the exact sketch's build): group
        ``2 j`` sums the magnitudes of its entries without the sign bit,
        ``2 j + 1`` of those with it. ``of_doubles`` of ``|signed|`` by that
        index, without the index (``deposit_signed_runs``). A value of more
        than ``_CHUNK`` rows, whose limbs one kernel call could overflow,
        takes that index, which ``of_doubles`` deposits in chunks.
        """
        counts = np.ascontiguousarray(counts, dtype=np.int64)
        signed = np.ascontiguousarray(signed, dtype=np.float64)
        k = 2 * counts.shape[0]
        if counts.shape[0] and int(counts.max()) > _CHUNK:
            index = np.repeat(np.arange(0, k, 2, dtype=np.int64), counts)
            index += np.signbit(signed)
            return cls.of_doubles(np.abs(signed), index, k)
        columns = term_columns(signed, signed, False, True)
        if columns is None:
            return cls.zeros(k)
        lowest, highest = columns
        out = np.zeros((k, highest - lowest + 3), dtype=np.int64)
        deposit_signed_runs(counts, signed, lowest, out)
        return _normalized(out, lowest)

    def nonzero(self):
        """Boolean per group: the sum is positive."""
        return np.any(self.limbs != 0, axis=1)

    def take(self, rows):
        return ExactSums(self.limbs[rows], self.offset)

    def plus(self, other):
        """Row-wise exact sum of two ``ExactSums`` of the same length."""
        (a, b), offset = aligned([self, other])
        return _normalized(a + b, offset)

    @staticmethod
    def regroup(parts, index, k):
        """Stack ``parts`` row-wise and sum row ``i`` into group ``index[i]``."""
        stacked, offset = aligned(parts)
        limbs = (
            np.concatenate(stacked, axis=0)
            if stacked
            else np.zeros((0, 0), dtype=np.int64)
        )
        return _normalized(_segment_sums(limbs, np.asarray(index, np.int64), k), offset)

    @classmethod
    def of_integers(cls, x):
        """Exact sums that are single doubles holding integers below ``2**63``."""
        x = np.asarray(x, dtype=np.float64).astype(np.int64)
        limbs = np.stack([x & _LIMB_MASK, x >> _LIMB_BITS], axis=1)
        return _normalized(limbs, 0)

    @staticmethod
    def products(v, x, index, k):
        """Exact ``out[g] = sum_{index[i] = g} v[i] x[i]`` for finite doubles >= 0."""
        v = np.ascontiguousarray(v, dtype=np.float64)
        x = np.ascontiguousarray(x, dtype=np.float64)
        return _deposit_rows(index, v, x, k, product=True)

    def times(self, v):
        """Exact row-wise product with non-negative doubles ``v``."""
        k, n_limbs = self.limbs.shape
        if n_limbs == 0:
            return ExactSums.zeros(k)
        mant, expo = _split_doubles(np.asarray(v, dtype=np.float64))
        low, high = mant & ((1 << 27) - 1), mant >> 27  # < 2**27, < 2**26
        rows = np.repeat(np.arange(k, dtype=np.int64), n_limbs)
        limb_expo = (
            _LIMB_BITS * (self.offset + np.tile(np.arange(n_limbs), k)) + expo[rows]
        )
        limbs = self.limbs.reshape(-1)
        return _deposit(
            np.concatenate([rows, rows]),
            np.concatenate([limbs * low[rows], limbs * high[rows]]),
            np.concatenate([limb_expo, limb_expo + 27]),
            k,
        )

    def to_float(self):
        """Each sum correctly rounded to float64 (to nearest, ties to even)."""
        if self.offset == 0 and self.limbs.shape[1] <= 2:
            # an int64 (below 2**63): the conversion rounds correctly
            value = self.limbs[:, 0].copy() if self.limbs.shape[1] else None
            if value is None:
                return np.zeros(self.limbs.shape[0])
            if self.limbs.shape[1] == 1 or np.all(self.limbs[:, 1] < (1 << 31)):
                if self.limbs.shape[1] == 2:
                    value += self.limbs[:, 1] << _LIMB_BITS
                return value.astype(np.float64)
        return _round_limbs(self.limbs, self.offset)

    def as_doubles(self):
        """The sums as float64 if every one is an integer below ``2**53``, else None."""
        if self.limbs.shape[1] == 0:
            return np.zeros(self.limbs.shape[0])
        if self.offset != 0 or self.limbs.shape[1] > 2:
            return None
        if self.limbs.shape[1] == 2 and np.any(self.limbs[:, 1] >= (1 << 21)):
            return None
        return self.to_float()

    def same_as(self, other):
        """Exactly equal sums (both normalised)."""
        if len(self) != len(other):
            return False
        (a, b), _ = aligned([self, other])
        return bool(np.array_equal(a, b))


def _segment_sums(limbs, index, k):
    """``out[g] = sum_{index[i] = g} limbs[i]``, exactly in int64.

    Limbs below ``2**32``, fewer than ``2**31`` rows per group. A sorted
    ``index`` (the common case: merged sorted values, cells) is summed by
    ``reduceat``, any other by exact bincounts.
    """
    n, n_limbs = limbs.shape
    out = np.zeros((k, n_limbs), dtype=np.int64)
    if n == 0 or n_limbs == 0:
        return out
    if not np.all(index[1:] >= index[:-1]):
        # scattered: exact bincounts of the 16-bit digits, limb by limb
        for j in range(n_limbs):
            out[:, j] = _exact_bincount(index, limbs[:, j], k)
        return out
    sorted_index, rows = index, limbs
    starts = np.flatnonzero(np.concatenate([[True], sorted_index[1:] != sorted_index[:-1]]))
    out[sorted_index[starts]] = np.add.reduceat(rows, starts, axis=0)
    return out


def _split_doubles(x):
    """``x = mant 2**expo`` with odd (or zero) 53-bit integers ``mant``."""
    frac, expo = np.frexp(x)
    mant = np.ldexp(frac, 53).astype(np.int64)
    expo = expo.astype(np.int64) - 53
    # strip trailing zero bits: small integers stay in one limb
    low_bit = mant & -mant
    shift = np.where(mant > 0, np.frexp(low_bit.astype(np.float64))[1] - 1, 0)
    return mant >> shift, expo + shift


def _deposit_rows(index, v, x, k, product):
    """Exact per-group sums of ``x`` (or ``v x``) by the ``_exact`` kernel.

    At most ``_CHUNK`` rows per kernel call, whose limbs cannot overflow (see
    ``skcal/_kernels/_exact.pyx``); the chunks' carried sums are then added.
    """
    index = np.ascontiguousarray(index, dtype=np.int64)
    total = None
    for start in range(0, x.shape[0], _CHUNK):
        part = slice(start, start + _CHUNK)
        columns = term_columns(v[part], x[part], product)
        if columns is None:
            continue
        lowest, highest = columns
        out = np.zeros((k, highest - lowest + 3), dtype=np.int64)
        deposit(index[part], v[part], x[part], product, lowest, out)
        piece = _normalized(out, lowest)
        total = piece if total is None else total.plus(piece)
    return ExactSums.zeros(k) if total is None else total


def _deposit(index, mant, expo, k):
    """Exact sums of ``mant[i] 2**expo[i]`` (``0 <= mant < 2**59``) per group."""
    keep = mant != 0
    index, mant, expo = index[keep], mant[keep], expo[keep]
    if mant.shape[0] == 0:
        return ExactSums.zeros(k)
    col = expo // _LIMB_BITS  # floor: negative exponents too
    shift = expo - _LIMB_BITS * col  # 0..31
    offset = int(col.min())
    n_limbs = int(col.max()) - offset + 3
    low = (mant & _LIMB_MASK) << shift  # < 2**63
    high = (mant >> _LIMB_BITS) << shift  # < 2**58
    flat = index * n_limbs + (col - offset)
    size = k * n_limbs
    total = None
    for start in range(0, flat.shape[0], _CHUNK):
        part = slice(start, start + _CHUNK)
        f, lo, hi = flat[part], low[part], high[part]
        # limbs j, j + 1 and j + 2 of the same group (col + 2 < n_limbs)
        out = _exact_bincount(f, lo & _LIMB_MASK, size)
        out[1:] += _exact_bincount(f, (lo >> _LIMB_BITS) + (hi & _LIMB_MASK), size)[:-1]
        out[2:] += _exact_bincount(f, hi >> _LIMB_BITS, size)[:-2]
        piece = _normalized(out.reshape(k, n_limbs), offset)
        total = piece if total is None else total.plus(piece)
    return total


def _exact_bincount(index, values, size):
    """``np.bincount`` of int64 ``0 <= values < 2**33``, exactly, as int64.

    ``np.bincount`` sums in float64: each 16-bit digit of the values is summed
    separately, exact for fewer than ``2**37`` terms per bin (at most ``2**24``
    here).
    """
    out = np.zeros(size, dtype=np.int64)
    for digit in range(3):
        part = (values >> (16 * digit)) & 0xFFFF
        if digit == 2 and not part.any():
            break
        sums = np.bincount(index, part.astype(np.float64), size)
        out += sums.astype(np.int64) << (16 * digit)
    return out


def _carry(limbs):
    """Propagate carries so every limb is below 2**32 (adds a top limb if needed)."""
    k, n_limbs = limbs.shape
    out = np.zeros((k, n_limbs + 2), dtype=np.int64)
    out[:, :n_limbs] = limbs
    for j in range(n_limbs + 1):
        carry = out[:, j] >> _LIMB_BITS
        out[:, j] &= _LIMB_MASK
        out[:, j + 1] += carry
    used = np.flatnonzero(np.any(out != 0, axis=0))
    top = used[-1] + 1 if used.shape[0] else 0
    return out[:, : max(top, n_limbs)]


def _normalized(limbs, offset):
    """Carry, then drop all-zero limbs at both ends (moving the offset)."""
    limbs = _carry(limbs)
    used = np.flatnonzero(np.any(limbs != 0, axis=0))
    if used.shape[0] == 0:
        return ExactSums(np.zeros((limbs.shape[0], 0), dtype=np.int64), 0)
    lo, hi = used[0], used[-1] + 1
    return ExactSums(np.ascontiguousarray(limbs[:, lo:hi]), offset + lo)


def aligned(parts):
    """The limbs of ``parts`` on one common offset and width, and that offset."""
    used = [p for p in parts if p.limbs.shape[1]]
    offset = min((p.offset for p in used), default=0)
    top = max((p.offset + p.limbs.shape[1] for p in used), default=offset)
    out = []
    for p in parts:
        if p.offset == offset and p.limbs.shape[1] == top - offset:
            out.append(p.limbs)
            continue
        a = np.zeros((p.limbs.shape[0], top - offset), dtype=np.int64)
        if p.limbs.shape[1]:
            start = p.offset - offset
            a[:, start : start + p.limbs.shape[1]] = p.limbs
        out.append(a)
    return out, offset


def _round_limbs(limbs, offset):
    """Correctly rounded float64 of normalised limb sums (see ``ExactSums``)."""
    k, n_limbs = limbs.shape
    result = np.zeros(k)
    if n_limbs == 0 or k == 0:
        return result
    padded = np.zeros((k, n_limbs + 2), dtype=np.int64)
    padded[:, 2:] = limbs  # limb i of padded weighs 2**(32 (offset + i - 2))
    nonzero = padded != 0
    rows = np.flatnonzero(nonzero.any(axis=1))
    if rows.shape[0] == 0:
        return result
    padded, nonzero = padded[rows], nonzero[rows]
    top = padded.shape[1] - 1 - np.argmax(nonzero[:, ::-1], axis=1)  # >= 2
    r = np.arange(rows.shape[0])
    t2 = padded[r, top].astype(np.uint64)
    t1 = padded[r, top - 1].astype(np.uint64)
    t0 = padded[r, top - 2].astype(np.uint64)
    # any non-zero limb below t0
    below = np.logical_or.accumulate(nonzero, axis=1)
    sticky = np.where(top >= 3, below[r, np.maximum(top - 3, 0)], False)
    # X = t2 2**64 + t1 2**32 + t0 has 64 + bits(t2) bits; keep the top 53
    bits2 = np.frexp(t2.astype(np.float64))[1].astype(np.int64)  # 1..32
    s = 11 + bits2  # 12..43 bits dropped
    y = (t2 << np.uint64(32)) | t1
    small = s <= 32
    s_small = np.where(small, s, 32).astype(np.uint64)
    s_large = np.where(small, 33, s).astype(np.uint64)
    one = np.uint64(1)
    m_small = (y << (np.uint64(32) - s_small)) | (t0 >> s_small)
    round_small = (t0 >> (s_small - one)) & one
    rest_small = (t0 & ((one << (s_small - one)) - one)) != 0
    m_large = y >> (s_large - np.uint64(32))
    round_large = (y >> (s_large - np.uint64(33))) & one
    rest_large = ((y & ((one << (s_large - np.uint64(33))) - one)) != 0) | (t0 != 0)
    mant = np.where(small, m_small, m_large)
    round_bit = np.where(small, round_small, round_large) == one
    rest = np.where(small, rest_small, rest_large) | sticky
    up = round_bit & (rest | ((mant & one) == one))
    mant = mant + up.astype(np.uint64)  # 2**53 is still exact below
    expo = _LIMB_BITS * (offset + top - 4) + s
    with np.errstate(over="ignore"):
        result[rows] = np.ldexp(mant.astype(np.float64), expo)
    return result


def group_exact(values, neg, pos):
    """Merge equal ``values`` (any order) summing the exact ``neg``/``pos`` sums.

    Returns ``(values, neg, pos)`` with strictly increasing values.
    """
    uniq, inverse = unique_inverse(values)
    k = uniq.shape[0]
    return (
        uniq,
        ExactSums.regroup(neg, inverse, k),
        ExactSums.regroup(pos, inverse, k),
    )


def unique_inverse(values):
    """``np.unique(values, return_inverse=True)`` by one stable sort.

    Concatenated sorted runs (merged sketches) sort in linear time.
    """
    values = np.asarray(values)
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    new = np.concatenate([[True], ordered[1:] != ordered[:-1]]) if ordered.size else (
        np.zeros(0, dtype=bool)
    )
    inverse = np.empty(values.shape[0], dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    return ordered[new], inverse


def cells_of(values, level):
    """Cell ``floor(v 2**level)`` of each value; 1 joins the last cell."""
    cells = np.floor(np.ldexp(values, level)).astype(np.int64)
    return np.minimum(cells, (1 << level) - 1)


# --- compact exact sums: a double where the exact sum is one -----------------
#
# Most groups of a sketch of continuous predictions hold one row, whose sum is
# its own weight, a double; integer sums below 2**53 are doubles too. So the
# sketch keeps one float64 per group and the multi-limb form only for the
# groups whose exact sum is not a double (canonical: the form is a function of
# the exact values, so bytes and merges do not depend on the order of work).

# integers up to 2**53 are doubles, and so are all their partial sums
_INT_EXACT = 2.0**53
# the exact sums must round to a finite double: below 2**1024 - 2**970
_FINITE_BITS = 1024


class CompactSums:
    """One exact non-negative sum per group, compactly.

    ``doubles[k]`` is the sum of group ``k`` correctly rounded, and exactly
    the sum unless ``k`` is in ``rows`` (strictly increasing int64); the
    exact sums of those groups are ``big`` (an :class:`ExactSums` of length
    ``len(rows)``), none of which is a double.
    """

    __slots__ = ("doubles", "rows", "big")

    def __init__(self, doubles, rows=None, big=None):
        self.doubles = doubles
        self.rows = np.zeros(0, dtype=np.int64) if rows is None else rows
        # trimmed limbs: the form (and the bytes) depend only on the sums
        if big is None or big.limbs.shape[0] == 0:
            self.big = ExactSums.zeros(0)
        else:
            self.big = _normalized(big.limbs, big.offset)

    def __len__(self):
        return self.doubles.shape[0]

    @classmethod
    def zeros(cls, k):
        return cls(np.zeros(k))

    @classmethod
    def from_exact(cls, sums):
        """The canonical compact form of :class:`ExactSums` ``sums``."""
        doubles = sums.to_float()
        k = doubles.shape[0]
        if sums.limbs.shape[1] == 0 or k == 0:
            return cls(doubles)
        if not np.all(np.isfinite(doubles)):
            raise OverflowError("an exact sum exceeds the largest float64")
        back = ExactSums.of_doubles(doubles, np.arange(k, dtype=np.int64), k)
        (a, b), _ = aligned([sums, back])
        rows = np.flatnonzero(np.any(a != b, axis=1)).astype(np.int64)
        return cls(doubles, rows, sums.take(rows))

    def to_exact(self):
        """The same sums as :class:`ExactSums` (all groups in limbs)."""
        k = len(self)
        d = self.doubles
        if self.rows.shape[0]:
            d = d.copy()
            d[self.rows] = 0.0
        dense = ExactSums.of_doubles(d, np.arange(k, dtype=np.int64), k)
        if not self.rows.shape[0]:
            return dense
        return ExactSums.regroup(
            [dense, self.big], np.concatenate([np.arange(k), self.rows]), k
        )

    def to_float(self):
        return self.doubles

    def nonzero(self):
        return self.doubles > 0

    def nbytes(self):
        return self.doubles.nbytes + self.rows.nbytes + self.big.limbs.nbytes

    def take(self, keep):
        """The groups where boolean ``keep`` is True."""
        new = np.cumsum(keep) - 1
        sel = keep[self.rows]
        return CompactSums(self.doubles[keep], new[self.rows[sel]], self.big.take(sel))

    @staticmethod
    def regroup(parts, index, k):
        """Stack ``parts`` and sum row ``i`` into group ``index[i]``, exactly."""
        index = np.asarray(index, dtype=np.int64)
        d = np.concatenate([p.doubles for p in parts]) if parts else np.zeros(0)
        starts = np.cumsum([0] + [len(p) for p in parts])
        big_rows = np.concatenate(
            [p.rows + s for p, s in zip(parts, starts)] + [np.zeros(0, np.int64)]
        )
        is_big = np.zeros(d.shape[0], dtype=bool)
        is_big[big_rows] = True
        stacked_big = _stack_sums([p.big for p in parts]) if big_rows.shape[0] else None
        live = d != 0
        counts = np.bincount(index[live], minlength=k)
        out = np.zeros(k)
        # groups with one non-zero part: that part, exactly
        single = live & (counts[index] == 1)
        out[index[single]] = d[single]
        single_big = single[big_rows]
        multi = counts >= 2
        if not multi.any():
            if stacked_big is None:
                return CompactSums(out)
            rows = index[big_rows[single_big]]
            order = np.argsort(rows)
            big = stacked_big.take(np.flatnonzero(single_big)[order])
            return CompactSums(out, rows[order], big)
        # several parts: integers (no big part) sum exactly in any order
        rows_multi = live & multi[index]
        integral = np.ones(k, dtype=bool)
        part_int = (d == np.floor(d)) & ~is_big
        np.logical_and.at(integral, index[rows_multi], part_int[rows_multi])
        with np.errstate(over="ignore"):
            fsum = np.bincount(index[rows_multi], d[rows_multi], k)
        easy = multi & integral & (fsum <= _INT_EXACT)
        out[easy] = fsum[easy]
        hard = multi & ~easy
        hard_ids = np.flatnonzero(hard)
        pieces, piece_rows = [], []
        if hard_ids.shape[0]:
            local = np.full(k, -1, dtype=np.int64)
            local[hard_ids] = np.arange(hard_ids.shape[0])
            m = hard_ids.shape[0]
            take = rows_multi & hard[index] & ~is_big
            parts_exact = [ExactSums.of_doubles(d[take], local[index[take]], m)]
            take_big = rows_multi[big_rows] & hard[index[big_rows]]
            if take_big.any():
                parts_exact.append(
                    ExactSums.regroup(
                        [stacked_big.take(take_big)],
                        local[index[big_rows[take_big]]],
                        m,
                    )
                )
            exact = parts_exact[0] if len(parts_exact) == 1 else parts_exact[0].plus(
                parts_exact[1]
            )
            c = CompactSums.from_exact(exact)
            out[hard_ids] = c.doubles
            pieces.append(c.big)
            piece_rows.append(hard_ids[c.rows])
        if stacked_big is not None:
            pieces.append(stacked_big.take(np.flatnonzero(single_big)))
            piece_rows.append(index[big_rows[single_big]])
        if not pieces:
            return CompactSums(out)
        rows = np.concatenate(piece_rows).astype(np.int64)
        order = np.argsort(rows)
        big = _stack_sums(pieces).take(order)
        return CompactSums(out, rows[order], big)

    def plus(self, other):
        k = len(self)
        idx = np.arange(k, dtype=np.int64)
        return CompactSums.regroup([self, other], np.concatenate([idx, idx]), k)

    def exact_total(self):
        """The exact sum of all groups, as an :class:`ExactSums` of one group.

        Chunks of ``2**20`` groups at a time: a few MB of temporaries at any
        size (a sketch checks its total after every update and merge).
        """
        k = len(self)
        total = ExactSums.zeros(1)
        chunk = 1 << 20
        zeros = np.zeros(min(k, chunk), dtype=np.int64)
        for start in range(0, k, chunk):
            d = self.doubles[start : start + chunk]
            in_chunk = self.rows[(self.rows >= start) & (self.rows < start + chunk)]
            if in_chunk.shape[0]:
                d = d.copy()
                d[in_chunk - start] = 0.0
            total = total.plus(ExactSums.of_doubles(d, zeros[: d.shape[0]], 1))
        if self.rows.shape[0]:
            total = total.plus(
                ExactSums.regroup([self.big], np.zeros(self.rows.shape[0], np.int64), 1)
            )
        return total

    def same_as(self, other):
        return (
            np.array_equal(self.doubles, other.doubles)
            and np.array_equal(self.rows, other.rows)
            and self.big.same_as(other.big)
        )


def _stack_sums(parts):
    """Row-wise concatenation of ``ExactSums``."""
    if not parts:
        return ExactSums.zeros(0)
    stacked, offset = aligned(parts)
    return ExactSums(np.concatenate(stacked, axis=0), offset)


def sums_overflow(sums):
    """True per group where an :class:`ExactSums` is 2**1024 or more (no finite double)."""
    k, n_limbs = sums.limbs.shape
    if n_limbs == 0:
        return np.zeros(k, dtype=bool)
    nonzero = sums.limbs != 0
    top = n_limbs - 1 - np.argmax(nonzero[:, ::-1], axis=1)
    bits = np.frexp(sums.limbs[np.arange(k), top].astype(np.float64))[1]
    return nonzero.any(axis=1) & (_LIMB_BITS * (sums.offset + top) + bits > _FINITE_BITS)
