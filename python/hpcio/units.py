"""Sizes and rates for people: parse_size("4MiB"), format_bytes, format_rate (base 2)."""

from __future__ import annotations

import re

from hpcio.errors import SpecError

_UNITS = {
    "": 1,
    "b": 1,
    "k": 1 << 10,
    "kb": 1 << 10,
    "kib": 1 << 10,
    "m": 1 << 20,
    "mb": 1 << 20,
    "mib": 1 << 20,
    "g": 1 << 30,
    "gb": 1 << 30,
    "gib": 1 << 30,
    "t": 1 << 40,
    "tb": 1 << 40,
    "tib": 1 << 40,
}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")
_NAMES = ("B", "KiB", "MiB", "GiB", "TiB")


def parse_size(text: str | int) -> int:
    """Bytes in `text` ("4MiB", "1g", "512"); units are powers of two, as in IOR and fio.

    Raises:
        SpecError: not a size, or not a whole number of bytes.
    """
    if isinstance(text, int):
        return text
    match = _SIZE.match(text)
    if not match or match.group(2).lower() not in _UNITS:
        raise SpecError(f"'{text}' is not a size; use a number with B, KiB, MiB, GiB or TiB")
    value = float(match.group(1)) * _UNITS[match.group(2).lower()]
    if value != int(value):
        raise SpecError(f"'{text}' is not a whole number of bytes")
    return int(value)


def parse_size_range(text: str) -> list[int]:
    """The doubling range "1MiB..1GiB" as [1 MiB, 2 MiB, ..., 1 GiB]; a single size alone.

    Raises:
        SpecError: not sizes, not ascending, or an upper bound that doubling never reaches.
    """
    if ".." not in text:
        return [parse_size(text)]
    low_text, high_text = text.split("..", 1)
    low, high = parse_size(low_text), parse_size(high_text)
    if low <= 0 or high < low:
        raise SpecError(f"'{text}' is not a range from a smaller to a larger size")
    sizes = []
    size = low
    while size <= high:
        sizes.append(size)
        size *= 2
    if sizes[-1] != high:
        # Dropping the upper bound silently would leave out a point the user asked for.
        ran = ", ".join(format_bytes(s) for s in sizes)
        raise SpecError(
            f"'{text}': doubling {format_bytes(low)} never reaches {format_bytes(high)} "
            f"(it would run {ran}); use "
            f"{_compact(low)}..{_compact(sizes[-1])} or {_compact(low)}..{_compact(size)}"
        )
    return sizes


def _compact(n: int) -> str:
    """A size as an option value: '4MiB'."""
    return format_bytes(n).replace(" ", "")


def format_bytes(n: float) -> str:
    """1536 -> '1.5 KiB'; whole numbers print without decimals ('64 MiB')."""
    value = float(n)
    for name in _NAMES:
        if abs(value) < 1024 or name == _NAMES[-1]:
            text = f"{value:.0f}" if value == int(value) else f"{value:.1f}"
            return f"{text} {name}"
        value /= 1024
    raise AssertionError("unreachable")


def format_rate(bytes_per_s: float) -> str:
    """Bandwidth in MiB/s with two decimals, the unit the reference studies use."""
    return f"{bytes_per_s / (1 << 20):.2f} MiB/s"


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h)?\s*$")
_SECONDS = {None: 1.0, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}


def parse_duration(text: str | float) -> float:
    """Seconds in `text`: "30s", "5m", "1h", "1.5" (plain seconds), or a number.

    Raises:
        SpecError: not a duration.
    """
    if isinstance(text, int | float) and not isinstance(text, bool):
        return float(text)
    match = _DURATION.match(str(text).lower())
    if not match:
        raise SpecError(f"'{text}' is not a duration; use seconds or a unit: 30s, 5m, 1h")
    return float(match.group(1)) * _SECONDS[match.group(2)]


def format_counts(by_name: dict[str, int]) -> str:
    """Counts by name, the largest first: "503: 12, connection_reset: 1"."""
    ordered = sorted(by_name.items(), key=lambda item: (-item[1], item[0]))
    return ", ".join(f"{name}: {count}" for name, count in ordered)
