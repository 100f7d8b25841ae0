"""The byte format of :class:`CalibrationSketch` (``to_bytes`` / ``from_bytes``):
header, flags and the encoding of exact sums."""

import struct

import numpy as np

from .._grouped import (
    CompactSums,
    ExactSums,
    sums_overflow,
)

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
