"""The engine's per-op latency histograms, read in pure Python: HdrHistogram V2 bytes (the
`hdrhistogram` crate's V2Serializer, engine/src/histogram.rs) decoded, merged and summarised
with the crate's own arithmetic, so reports give the engine's figures without native code.

V2 layout: a 40-byte big-endian header (cookie, payload length, normalizing offset,
significant digits, lowest and highest trackable value, integer-to-double ratio), then the
counts array as zig-zag LEB128 varints, a negative number standing for that many zero counts.
"""

from __future__ import annotations

import bisect
import itertools
import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass

_V2_COOKIE = 0x1C849303 | 0x10
_HEADER = struct.Struct(">IIIIQQd")
_VARINT_BYTES = 9


@dataclass(frozen=True, slots=True)
class Histogram:
    """Counts of an HDR histogram and the layout that gives each index its value."""

    significant_digits: int
    lowest_discernible: int
    highest_trackable: int
    counts: tuple[int, ...]

    @property
    def _unit_magnitude(self) -> int:
        return math.floor(math.log2(self.lowest_discernible))

    @property
    def _half_count_magnitude(self) -> int:
        largest_single_unit = 2 * 10**self.significant_digits
        return math.ceil(math.log2(largest_single_unit)) - 1

    def value_for(self, index: int) -> int:
        """The lowest value counted at `index`."""
        half_magnitude = self._half_count_magnitude
        half_count = 1 << half_magnitude
        bucket = (index >> half_magnitude) - 1
        sub_bucket = (index & (half_count - 1)) + half_count
        if bucket < 0:
            sub_bucket -= half_count
            bucket = 0
        return sub_bucket << (bucket + self._unit_magnitude)

    def _bucket_of(self, value: int) -> int:
        sub_bucket_count = 1 << (self._half_count_magnitude + 1)
        mask = (sub_bucket_count - 1) << self._unit_magnitude
        leading_zero_base = 64 - self._unit_magnitude - self._half_count_magnitude - 1
        return leading_zero_base - (64 - (value | mask).bit_length())

    def _range_of(self, value: int) -> int:
        return 1 << (self._unit_magnitude + self._bucket_of(value))

    def lowest_equivalent(self, value: int) -> int:
        bucket = self._bucket_of(value)
        shift = bucket + self._unit_magnitude
        return (value >> shift) << shift

    def highest_equivalent(self, value: int) -> int:
        return self.lowest_equivalent(value) + self._range_of(value) - 1

    def median_equivalent(self, value: int) -> int:
        return self.lowest_equivalent(value) + (self._range_of(value) >> 1)

    @property
    def count(self) -> int:
        return sum(self.counts)

    def min(self) -> int:
        """The lowest recorded value (0 when empty, or when 0 itself was recorded)."""
        if not self.count or self.counts[0]:
            return 0
        first = next(i for i, c in enumerate(self.counts) if c and i)
        return self.lowest_equivalent(self.value_for(first))

    def max(self) -> int:
        """The highest value equivalent to the highest recorded one (0 when empty)."""
        last = max((i for i, c in enumerate(self.counts) if c), default=None)
        if last is None:
            return 0
        return self.highest_equivalent(self.value_for(last))

    def mean(self) -> float:
        """The mean of every recorded value, each at the middle of its bucket, summed in the
        crate's order so the result is the engine's to the last bit."""
        total = self.count
        if not total:
            return 0.0
        mean = 0.0
        for index, count in enumerate(self.counts):
            if count:
                value = self.highest_equivalent(self.value_for(index))
                mean += float(self.median_equivalent(value)) * float(count) / float(total)
        return mean

    def value_at_quantile(self, quantile: float) -> int:
        """The highest value equivalent to the one at `quantile` (0..1); 0 when empty."""
        return self.values_at_quantiles([quantile])[0]

    def values_at_quantiles(self, quantiles: Sequence[float]) -> list[int]:
        """`value_at_quantile` of each of `quantiles`, the counts summed once."""
        total = self.count
        if not total:
            return [0] * len(quantiles)
        reached = list(itertools.accumulate(self.counts))
        values = []
        for quantile in quantiles:
            quantile = min(quantile, 1.0)
            wanted = max(1, math.ceil(quantile * float(total)))
            value = self.value_for(bisect.bisect_left(reached, wanted))
            zero = quantile == 0.0
            values.append(self.lowest_equivalent(value) if zero else self.highest_equivalent(value))
        return values


def decode(encoded: bytes) -> Histogram:
    """One histogram from its V2 bytes.

    Raises:
        ValueError: the bytes are not an uncompressed V2 HdrHistogram.
    """
    if len(encoded) < _HEADER.size:
        raise ValueError("not an HDR histogram: shorter than its header")
    cookie, length, offset, digits, lowest, highest, ratio = _HEADER.unpack_from(encoded)
    if cookie != _V2_COOKIE:
        raise ValueError("not an HDR histogram: not the V2 cookie")
    if offset != 0 or ratio != 1.0 or not 0 <= digits <= 5 or lowest < 1 or highest < 2 * lowest:
        raise ValueError("not an HDR histogram this reader knows (its header)")
    payload = encoded[_HEADER.size : _HEADER.size + length]
    if len(payload) != length:
        raise ValueError("not an HDR histogram: its counts are cut short")
    return Histogram(digits, lowest, highest, tuple(_counts(payload)))


def _counts(payload: bytes) -> list[int]:
    counts: list[int] = []
    at = 0
    while at < len(payload):
        number, at = _varint(payload, at)
        signed = (number >> 1) ^ -(number & 1)
        if signed < 0:
            counts.extend([0] * -signed)
        else:
            counts.append(signed)
    return counts


def _varint(payload: bytes, at: int) -> tuple[int, int]:
    """LEB128 of at most nine bytes, the ninth giving all its eight bits."""
    value = 0
    for position in range(_VARINT_BYTES):
        if at >= len(payload):
            raise ValueError("not an HDR histogram: a count is cut short")
        byte = payload[at]
        at += 1
        if position == _VARINT_BYTES - 1:
            return value | (byte << 56), at
        value |= (byte & 0x7F) << (7 * position)
        if not byte & 0x80:
            return value, at
    raise AssertionError("unreachable: the ninth byte returns")


def merge(parts: Sequence[Histogram]) -> Histogram:
    """Histograms of the same layout added into one (every operation of all of them).

    Raises:
        ValueError: the histograms do not share one layout.
    """
    if not parts:
        raise ValueError("no histogram to merge")
    layouts = {(p.significant_digits, p.lowest_discernible) for p in parts}
    if len(layouts) > 1:
        raise ValueError("cannot merge HDR histograms of different precision")
    length = max(len(p.counts) for p in parts)
    totals = [0] * length
    for part in parts:
        for index, count in enumerate(part.counts):
            totals[index] += count
    first = parts[0]
    highest = max(p.highest_trackable for p in parts)
    return Histogram(first.significant_digits, first.lowest_discernible, highest, tuple(totals))
