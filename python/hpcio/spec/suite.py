"""Suites: a TOML file -> the grid of validated RunSpecs it describes (docs/suites.md).

A suite crosses patterns x targets x sizes per rank x ranks x ranks per node x iterations.
Run options (transfer, fsync, ...) are set for the whole grid and may be overridden per
target; a named scale ([scale.small]) overrides grid keys to run the same shape smaller.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hpcio.errors import HpcioError, SpecError
from hpcio.spec import tomlfile
from hpcio.spec.model import PATTERNS, RunSpec
from hpcio.spec.sweep import grid
from hpcio.spec.target import TargetSpec
from hpcio.units import format_bytes, parse_size, parse_size_range

#: Suite key of a run option -> RunSpec field. The names are those of `hpcio run`'s options.
RUN_OPTIONS = {
    "transfer": "transfer_bytes",
    "segments": "segments",
    "fsync": "fsync",
    "direct": "direct",
    "verify": "verify",
    "keep": "keep",
    "reorder": "reorder",
    "read_scope": "read_scope",
    "gather_chunk": "gather_chunk_bytes",
    "in_flight": "in_flight",
    "seed": "seed",
    "phases": "phases",
}
#: The grid's axes: each takes one value or a list of them.
AXES = ("patterns", "sizes", "ranks", "ranks_per_node", "iterations")
GRID_KEYS = (*AXES, *RUN_OPTIONS)
SUITE_KEYS = ("name", "description", "reference")
TARGET_KEYS = ("url", "options", *RUN_OPTIONS)
TOP_KEYS = ("suite", "target", "grid", "scale")

#: A suite's run options when it sets none: the defaults of `hpcio run`.
_DEFAULTS = RunSpec(
    pattern="sfmw",
    target=TargetSpec(url="file:///", kind="posix"),
    ranks=1,
    size_per_rank_bytes=1 << 20,
    transfer_bytes=1 << 20,
)


@dataclass(frozen=True, slots=True)
class Suite:
    """A loaded suite: its points in the order they run, grouped by (ranks, ranks per node)."""

    path: str
    name: str
    description: str
    #: The scale the points were built at (None: the suite's full scale).
    scale: str | None
    #: Every scale the suite defines besides its full one.
    scales: tuple[str, ...]
    points: tuple[RunSpec, ...]

    def groups(self) -> dict[tuple[int, int | None], list[RunSpec]]:
        """Points by (ranks, ranks per node), in order: one MPI launch each."""
        return group_points(self.points)


def group_points(points: Sequence[RunSpec]) -> dict[tuple[int, int | None], list[RunSpec]]:
    """Points by (ranks, ranks per node), keeping the order in which each group first
    appears and the order of points within it."""
    groups: dict[tuple[int, int | None], list[RunSpec]] = {}
    for point in points:
        groups.setdefault((point.ranks, point.ranks_per_node), []).append(point)
    return groups


def load_suite(
    path: str | os.PathLike[str],
    *,
    scale: str | None = None,
    targets: Sequence[str] = (),
) -> Suite:
    """Read a suite file and build its points.

    Args:
        path: the suite's TOML file.
        scale: a scale the suite defines ("small"), or None for its full scale.
        targets: URLs that replace the suite's targets (`--target`); each keeps the options of
            the suite's first target of the same kind.

    Raises:
        SpecError: one line, "file:line: problem", for the first problem found.
    """
    toml = tomlfile.load(path)
    data = toml.data
    toml.check_keys(data, (), TOP_KEYS)
    about = _table(toml, data, ("suite",), required=False)
    toml.check_keys(about, ("suite",), SUITE_KEYS)
    for key in SUITE_KEYS:
        if key in about and not isinstance(about[key], str):
            raise toml.error(("suite", key), f"'{key}' must be a string")
    name = about.get("name") or os.path.splitext(os.path.basename(toml.path))[0]

    grid_table = dict(_table(toml, data, ("grid",), required=True))
    toml.check_keys(grid_table, ("grid",), GRID_KEYS)
    grid_where: dict[str, tomlfile.KeyPath] = {k: ("grid", k) for k in grid_table}
    scales = _table(toml, data, ("scale",), required=False)
    for scale_name in scales:
        table = _table(toml, scales, ("scale", scale_name), required=True)
        toml.check_keys(table, ("scale", scale_name), GRID_KEYS)
    if scale is not None:
        if scale not in scales:
            defined = ", ".join(scales) if scales else "none"
            raise SpecError(f"{toml.path}: no scale '{scale}' (scales defined: {defined})")
        for key, value in scales[scale].items():
            grid_table[key] = value
            grid_where[key] = ("scale", scale, key)

    suite_targets = _targets(toml, data)
    if targets:
        suite_targets = [_override(toml, url, suite_targets) for url in targets]
    if not suite_targets:
        raise SpecError(f"{toml.path}: names no [[target]]; add one or pass --target URL")

    read = _Reader(toml, grid_table, grid_where)
    for key in ("patterns", "sizes"):
        if key not in grid_table:
            raise toml.error(("grid",), f"[grid] needs '{key}'")
    patterns = read.axis("patterns", _pattern)
    sizes = [size for sizes in read.axis("sizes", _sizes) for size in sizes]
    rank_counts = read.axis("ranks", _positive_int, default=[1])
    layouts: list[int | None] = list(read.axis("ranks_per_node", _positive_int, default=[None]))
    iteration_counts = read.axis("iterations", _positive_int, default=[1])
    grid_options = read.run_options()

    points: list[RunSpec] = []
    for ranks in rank_counts:
        for per_node in layouts:
            for target, target_options, target_path in suite_targets:
                for iterations in iteration_counts:
                    grid_base = dataclasses.replace(
                        _DEFAULTS,
                        target=target,
                        ranks=ranks,
                        ranks_per_node=per_node,
                        iterations=iterations,
                        **grid_options,
                    )
                    base = dataclasses.replace(grid_base, **target_options)
                    points.extend(_grid(toml, grid_base, base, target_path, patterns, sizes))
    return Suite(
        path=toml.path,
        name=name,
        description=str(about.get("description", "")),
        scale=scale,
        scales=tuple(scales),
        points=tuple(points),
    )


def describe(point: RunSpec) -> str:
    """A point in a few words: 'sfmw 20 ranks (4/node) 64 MiB/rank x100 on file:///scratch'."""
    layout = f" ({point.ranks_per_node}/node)" if point.ranks_per_node else ""
    return (
        f"{point.pattern} {point.ranks} rank{'s' if point.ranks != 1 else ''}{layout} "
        f"{format_bytes(point.size_per_rank_bytes)}/rank x{point.iterations} "
        f"on {point.target.url}"
    )


def _grid(
    toml: tomlfile.TomlFile,
    grid_base: RunSpec,
    base: RunSpec,
    target_path: tomlfile.KeyPath,
    patterns: Sequence[str],
    sizes: Sequence[int],
) -> list[RunSpec]:
    """Patterns x sizes on `base` (the grid's options with the target's on top). A point that
    cannot run is blamed on the [grid] when it fails there too, else on the [[target]]."""
    points = []
    for pattern in patterns:
        for size in sizes:
            try:
                points.extend(grid(base, [pattern], [size]))
            except SpecError as e:
                try:
                    grid(grid_base, [pattern], [size])
                    where = target_path
                except SpecError:
                    where = ("grid",)
                point = dataclasses.replace(base, pattern=pattern, size_per_rank_bytes=size)
                raise toml.error(where, f"{describe(point)}: {e}") from None
    return points


def _table(
    toml: tomlfile.TomlFile, parent: Mapping[str, Any], path: tomlfile.KeyPath, *, required: bool
) -> Mapping[str, Any]:
    value = parent.get(str(path[-1]))
    if value is None:
        if required:
            raise SpecError(f"{toml.path}: needs a [{'.'.join(map(str, path))}] table")
        return {}
    if not isinstance(value, dict):
        raise toml.error(path, f"'{'.'.join(map(str, path))}' must be a table")
    return value


def _targets(
    toml: tomlfile.TomlFile, data: Mapping[str, Any]
) -> list[tuple[TargetSpec, dict[str, Any], tomlfile.KeyPath]]:
    """The suite's [[target]] entries: (target, its run options, where it is)."""
    entries = data.get("target", [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise toml.error(("target",), "targets are [[target]] tables, each with a 'url'")
    found = []
    for index, entry in enumerate(entries):
        where: tomlfile.KeyPath = ("target", index)
        toml.check_keys(entry, where, TARGET_KEYS)
        if "url" not in entry:
            raise toml.error(where, "[[target]] needs a 'url'")
        url = _string(entry["url"])
        options = entry.get("options", {})
        if not isinstance(options, dict) or not all(isinstance(v, str) for v in options.values()):
            raise toml.error((*where, "options"), "'options' must be a table of strings")
        try:
            target = TargetSpec.from_url(url, **options)
        except SpecError as e:
            raise toml.error((*where, "url"), str(e)) from None
        reader = _Reader(toml, entry, {k: (*where, k) for k in entry})
        found.append((target, reader.run_options(), where))
    return found


def _override(
    toml: tomlfile.TomlFile,
    url: str,
    suite_targets: Sequence[tuple[TargetSpec, dict[str, Any], tomlfile.KeyPath]],
) -> tuple[TargetSpec, dict[str, Any], tomlfile.KeyPath]:
    """--target URL: a new target with the options (run and target) of the suite's first
    target of the same kind, so a suite written for one directory runs on another as is."""
    probe = TargetSpec.from_url(url)
    for target, options, where in suite_targets:
        if target.kind == probe.kind:
            return TargetSpec.from_url(url, **target.options), options, where
    return probe, {}, ("grid",)


class _Reader:
    """Typed values of one table's keys, with errors that say where the key is."""

    def __init__(
        self,
        toml: tomlfile.TomlFile,
        table: Mapping[str, Any],
        where: Mapping[str, tomlfile.KeyPath],
    ) -> None:
        self._toml = toml
        self._table = table
        self._where = where

    def axis(self, key: str, convert: Callable[[Any], Any], default: list[Any] | None = None):
        """One value or a list of them, each converted; `default` when the key is absent."""
        if key not in self._table:
            return list(default or [])
        raw = self._table[key]
        values = raw if isinstance(raw, list) else [raw]
        if not values:
            raise self._toml.error(self._where[key], f"'{key}' is an empty list")
        converted = []
        for index, value in enumerate(values):
            place = (*self._where[key], index) if isinstance(raw, list) else self._where[key]
            converted.append(self._convert(key, place, convert, value))
        return converted

    def run_options(self) -> dict[str, Any]:
        """The run options this table sets, as RunSpec fields."""
        options = {}
        for key, field_name in RUN_OPTIONS.items():
            if key in self._table:
                options[field_name] = self._convert(
                    key, self._where[key], _OPTION_TYPES[key], self._table[key]
                )
        return options

    def _convert(
        self, key: str, place: tomlfile.KeyPath, convert: Callable[[Any], Any], value: Any
    ) -> Any:
        try:
            return convert(value)
        except (SpecError, TypeError, ValueError) as e:
            message = str(e) if isinstance(e, HpcioError) else f"'{key}' {e}"
            raise self._toml.error(place, message) from None


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"must be a string, got {value!r}")
    return value


def _pattern(value: Any) -> str:
    name = _string(value)
    if name not in PATTERNS:
        raise SpecError(f"unknown pattern '{name}'; choose one of {', '.join(PATTERNS)}")
    return name


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"must be true or false, got {value!r}")
    return value


def _positive_int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"must be a whole number, got {value!r}")
    if value < 1:
        raise ValueError(f"must be at least 1, got {value}")
    return value


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"must be a whole number, got {value!r}")
    return value


def _size(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise TypeError(f'must be a size such as "4MiB", got {value!r}')
    size = parse_size(value)
    if size < 1:
        raise ValueError(f"must be at least 1 byte, got {value!r}")
    return size


def _sizes(value: Any) -> list[int]:
    """One size, or a doubling range "1MiB..1GiB"."""
    if isinstance(value, str):
        return parse_size_range(value)
    return [_size(value)]


def _phases(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(p.strip() for p in value.split(",") if p.strip())
    if isinstance(value, list) and all(isinstance(p, str) for p in value):
        return tuple(value)
    raise TypeError(f'must be "write", "read" or a list of them, got {value!r}')


_OPTION_TYPES: dict[str, Callable[[Any], Any]] = {
    "transfer": _size,
    "segments": _positive_int,
    "fsync": _bool,
    "direct": _bool,
    "verify": _bool,
    "keep": _bool,
    "reorder": _bool,
    "read_scope": _string,
    "gather_chunk": _size,
    "in_flight": _positive_int,
    "seed": _int,
    "phases": _phases,
}
