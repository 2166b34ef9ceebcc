"""Suites: a TOML file -> the grid of validated RunSpecs it describes (docs/suites.md).

A suite crosses workloads (patterns, or any workload `hpcio run` runs) x targets x sizes per
rank x ranks x ranks per node x iterations, and x stripe counts and sizes where the grid lists
them. Run options (transfer, fsync, ...) are set for the whole grid and may be overridden per
target; a named scale ([scale.small]) overrides grid keys to run the same shape smaller.
Cases ([[case]]) are sets of run options that belong together, such as a library and its
codec: each is a point of its own, crossed with the other axes but not with one another, and a
target may run only some of them. [object_store] holds run options for every object-store
target (a transfer its parts accept); a point whose parts a store would still refuse (N-1 with
less than S3's 5 MiB minimum part per rank) is left out on that target, and the suite says so.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hpcio import kinds, tomlfile
from hpcio.errors import HpcioError, SpecError
from hpcio.options import SIZE, Option
from hpcio.spec.model import COMMON_OPTIONS, RunSpec, workload_named
from hpcio.spec.sweep import grid
from hpcio.spec.target import TargetSpec
from hpcio.units import format_bytes, parse_size_range
from hpcio.workloads import registry
from hpcio.workloads.contract import Workload
from hpcio.workloads.limits import check_limits

#: The grid's axes: each takes one value or a list of them.
AXES = ("patterns", "workloads", "sizes", "ranks", "ranks_per_node", "iterations")
#: The workloads a suite's `patterns` axis names (its `workloads` axis names any runnable one).
FAMILY = "pattern"
#: Run options that [grid] may also list, as an axis (a run option in [[target]]).
LISTED_OPTIONS = ("stripe_count", "stripe_size")
SUITE_KEYS = ("name", "description", "reference")
TOP_KEYS = ("suite", "target", "grid", "scale", "case", "object_store")


def run_options(workloads: Sequence[registry.Entry] | None = None) -> dict[str, Option]:
    """Suite key -> option, for every setting a suite may give (the axes aside): the common
    settings and every option the params of `workloads` (the patterns) declare, as `hpcio
    run` takes them."""
    found = {}
    chosen = registry.of_family(FAMILY) if workloads is None else workloads
    for opt in (*COMMON_OPTIONS, *registry.options(chosen)):
        if opt.key and opt.key not in AXES and opt.field != "size_per_rank_bytes":
            found[opt.key] = opt
    return found


#: The patterns' options and the common settings.
RUN_OPTIONS = run_options()


@functools.cache
def suite_options() -> dict[str, Option]:
    """RUN_OPTIONS, and the options of the other workloads a suite's grid may name (its
    `workloads` axis): read when a suite is, as they import the training workloads' params."""
    return {**RUN_OPTIONS, **run_options(registry.in_suites())}


def _grid_keys() -> tuple[str, ...]:
    return (*AXES, *suite_options())


def _target_keys() -> tuple[str, ...]:
    return ("url", "options", "cases", *suite_options())


def _case_keys() -> tuple[str, ...]:
    return ("name", *suite_options())


@dataclass(frozen=True, slots=True)
class _Target:
    """A [[target]]: its run options, where it is, and the cases it runs (None: all)."""

    spec: TargetSpec
    options: dict[str, Any]
    where: tomlfile.KeyPath
    cases: tuple[str, ...] | None


@dataclass(frozen=True, slots=True)
class _Case:
    """A [[case]]: a name and the run options (by field) that make it."""

    name: str
    options: dict[str, Any]
    where: tomlfile.KeyPath


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
    #: Points a target's store would refuse, one line each ("sfmw 4 ranks 1 MiB/rank x2 on
    #: s3://b/x: s3: multipart parts must be at least 5 MiB ..."): left out, not run.
    left_out: tuple[str, ...] = ()

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
    toml.check_keys(grid_table, ("grid",), _grid_keys())
    grid_where: dict[str, tomlfile.KeyPath] = {k: ("grid", k) for k in grid_table}
    scales = _table(toml, data, ("scale",), required=False)
    for scale_name in scales:
        table = _table(toml, scales, ("scale", scale_name), required=True)
        toml.check_keys(table, ("scale", scale_name), _grid_keys())
    if scale is not None:
        if scale not in scales:
            defined = ", ".join(scales) if scales else "none"
            raise SpecError(f"{toml.path}: no scale '{scale}' (scales defined: {defined})")
        for key, value in scales[scale].items():
            grid_table[key] = value
            grid_where[key] = ("scale", scale, key)

    cases = _cases(toml, data)
    suite_targets = _targets(toml, data, cases)
    if targets:
        suite_targets = [_override(toml, url, suite_targets) for url in targets]
    if not suite_targets:
        raise SpecError(f"{toml.path}: names no [[target]]; add one or pass --target URL")
    suite_targets = _with_object_store_options(toml, data, suite_targets)

    read = _Reader(toml, grid_table, grid_where)
    if "patterns" not in grid_table and "workloads" not in grid_table:
        raise toml.error(("grid",), "[grid] needs 'patterns' or 'workloads'")
    names = read.axis("patterns", _pattern) + read.axis("workloads", _workload)
    workloads = list(dict.fromkeys(names))
    sized = [w for w in workloads if w.takes("size_per_rank_bytes")]
    if sized and "sizes" not in grid_table:
        raise toml.error(("grid",), "[grid] needs 'sizes'")
    sizes = [size for sizes in read.axis("sizes", _sizes) for size in sizes]
    if sizes and not sized:
        raise toml.error(
            grid_where["sizes"], f"'sizes' is for workloads with a size per rank, not "
            f"{', '.join(w.name for w in workloads)}",
        )  # fmt: skip
    rank_counts = read.axis("ranks", _positive_int, default=[1])
    layouts: list[int | None] = list(read.axis("ranks_per_node", _positive_int, default=[None]))
    iteration_counts = read.axis("iterations", _positive_int, default=[1])
    listed = _listed_options(read, grid_table)
    grid_options = read.run_options(skip=LISTED_OPTIONS)
    for target in suite_targets:
        _refuse_listed_per_target(toml, listed, target.options, target.where)
    for case in cases:
        _refuse_case_axes(toml, case, grid_options, listed)

    _refuse_unused(toml, grid_options, grid_where, workloads, "workloads" in grid_table)
    for case in cases:
        where = {key: (*case.where, key) for key in _case_keys()}
        _refuse_unused(toml, case.options, where, workloads, "workloads" in grid_table)
    points: list[RunSpec] = []
    for ranks in rank_counts:
        for per_node in layouts:
            for target in suite_targets:
                chosen = _crossed(listed, cases, target.cases)
                for iterations in iteration_counts:
                    axes = {"target": target.spec, "ranks": ranks, "ranks_per_node": per_node,
                            "iterations": iterations}  # fmt: skip
                    grid_base = {**grid_options, **axes}
                    base = {**grid_options, **target.options, **axes}
                    points.extend(
                        _grid(toml, grid_base, base, target.where, workloads, sizes, chosen)
                    )
    runnable, left_out = _split_refused_by_store(points)
    return Suite(
        path=toml.path,
        name=name,
        description=str(about.get("description", "")),
        scale=scale,
        scales=tuple(scales),
        points=tuple(runnable),
        left_out=tuple(left_out),
    )


def _with_object_store_options(
    toml: tomlfile.TomlFile, data: Mapping[str, Any], targets: Sequence[_Target]
) -> list[_Target]:
    """Each object-store target with the suite's [object_store] run options under its own
    (a suite written for a directory gives S3 the parts it accepts)."""
    table = _table(toml, data, ("object_store",), required=False)
    toml.check_keys(table, ("object_store",), tuple(suite_options()))
    options = _Reader(toml, table, {k: ("object_store", k) for k in table}).run_options()
    return [
        dataclasses.replace(t, options={**options, **t.options}) if t.spec.is_object_store else t
        for t in targets
    ]


def _split_refused_by_store(points: Sequence[RunSpec]) -> tuple[list[RunSpec], list[str]]:
    """The points a store's part limits allow, and a line for each of the others: an N-1
    object of 1 MiB parts cannot exist on S3 at any transfer, so the point is left out on S3
    (and runs on Azure, whose blocks have no minimum) instead of failing the suite."""
    runnable, left_out = [], []
    for point in points:
        if not (point.target.is_object_store and point.writes):
            runnable.append(point)
            continue
        limits = kinds.of(point.target.kind).limits
        try:
            check_limits(
                point.target.kind,
                point.workload.objects_written(point),
                {
                    "min_part_bytes": limits.min_part_bytes,
                    "max_part_bytes": limits.max_part_bytes,
                    "max_parts": limits.max_parts,
                    "max_object_bytes": 0,
                },
            )
        except SpecError as e:
            left_out.append(f"{describe(point)}: {e}")
            continue
        runnable.append(point)
    return runnable, left_out


def describe(point: RunSpec, *, target: bool = True) -> str:
    """A point in a few words: 'sfmw 20 ranks (4/node) 64 MiB/rank x100 on file:///scratch'
    (without ' on ...' when `target` is False); the workload as its tables name it ('volume
    zarr(blosc)', 'sfmw (hdf5)'), so a suite's cases tell apart."""
    layout = f" ({point.ranks_per_node}/node)" if point.ranks_per_node else ""
    size = getattr(point.params, "size_per_rank_bytes", None)
    per_rank = f" {format_bytes(size)}/rank" if size is not None else ""
    stripes = ""
    if point.stripe_count is not None:
        stripes += f" {point.stripe_count} stripe{'s' if point.stripe_count != 1 else ''}"
    if point.stripe_size_bytes is not None:
        stripes += f" of {format_bytes(point.stripe_size_bytes)}"
    return (
        f"{_label(point)} {point.ranks} rank{'s' if point.ranks != 1 else ''}{layout}"
        f"{per_rank}{stripes} x{point.iterations}" + (f" on {point.target.url}" if target else "")
    )


def _label(point: RunSpec) -> str:
    settings = {"workload": point.workload.name, **dataclasses.asdict(point.params)}
    return point.workload.label(settings)


def _point(settings: Mapping[str, Any], workload: Workload, size: int | None) -> RunSpec:
    """The run of `workload` at `size` per rank (None: it has no size per rank) with
    `settings` (common settings and params options by field; each workload takes the params
    it declares)."""
    sized = {} if size is None else {"size_per_rank_bytes": size}
    return RunSpec.build(workload, **{**settings, **sized})


def _sized(point: RunSpec, size: int | None) -> list[RunSpec]:
    return [point.validate()] if size is None else grid(point, [size])


def _grid(
    toml: tomlfile.TomlFile,
    grid_base: Mapping[str, Any],
    base: Mapping[str, Any],
    target_path: tomlfile.KeyPath,
    workloads: Sequence[Workload],
    sizes: Sequence[int],
    listed: Sequence[Mapping[str, Any]],
) -> list[RunSpec]:
    """Workloads x sizes x listed options on `base` (the grid's options with the target's on
    top). A point that cannot run is blamed on the [grid] when it fails there too, else on the
    [[target]]."""
    points = []
    for workload in workloads:
        for size in sizes if workload.takes("size_per_rank_bytes") else [None]:
            for chosen in listed:
                try:
                    points.extend(_sized(_point({**base, **chosen}, workload, size), size))
                except SpecError as e:
                    try:
                        _sized(_point({**grid_base, **chosen}, workload, size), size)
                        where = target_path
                    except SpecError:
                        where = ("grid",)
                    point = _point({**base, **chosen}, workload, size)
                    raise toml.error(where, f"{describe(point)}: {e}") from None
    return points


def _listed_options(read: _Reader, grid_table: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The grid's LISTED_OPTIONS, crossed: one settings dict (by field) per combination."""
    axes = []
    for key in LISTED_OPTIONS:
        if key in grid_table:
            opt = suite_options()[key]
            axes.append([(opt.field, value) for value in read.axis(key, opt.kind.convert)])
    return [dict(combination) for combination in itertools.product(*axes)]


def _crossed(
    listed: Sequence[Mapping[str, Any]], cases: Sequence[_Case], runs: tuple[str, ...] | None
) -> list[dict[str, Any]]:
    """The listed options' combinations, each with every case a target runs (in the order of
    the file), or alone when the suite has no cases."""
    chosen = [case for case in cases if runs is None or case.name in runs]
    if not chosen:
        return [dict(combination) for combination in listed]
    return [{**combination, **case.options} for combination in listed for case in chosen]


def _cases(toml: tomlfile.TomlFile, data: Mapping[str, Any]) -> list[_Case]:
    """The suite's [[case]] entries, each with a unique name and at least one run option."""
    entries = data.get("case", [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise toml.error(("case",), "cases are [[case]] tables, each with a 'name'")
    found: list[_Case] = []
    for index, entry in enumerate(entries):
        where: tomlfile.KeyPath = ("case", index)
        toml.check_keys(entry, where, _case_keys())
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            raise toml.error(where, "[[case]] needs a 'name' (a string)")
        if any(case.name == name for case in found):
            raise toml.error((*where, "name"), f"two cases are named '{name}'")
        options = _Reader(toml, entry, {k: (*where, k) for k in entry}).run_options()
        if not options:
            raise toml.error(where, f"case '{name}' sets no run option")
        found.append(_Case(name, options, where))
    return found


def _refuse_case_axes(
    toml: tomlfile.TomlFile,
    case: _Case,
    grid_options: Mapping[str, Any],
    listed: Sequence[Mapping[str, Any]],
) -> None:
    """A case sets what the grid leaves open: an option the grid also sets or lists would make
    the file say two things about one point."""
    for key, opt in suite_options().items():
        if opt.field in case.options and (
            opt.field in grid_options or any(opt.field in c for c in listed)
        ):
            raise toml.error(
                (*case.where, key), f"'{key}' is set in [grid] too: set it in one place"
            )


def _refuse_listed_per_target(
    toml: tomlfile.TomlFile,
    listed: Sequence[Mapping[str, Any]],
    target_options: Mapping[str, Any],
    target_path: tomlfile.KeyPath,
) -> None:
    """A target may not set what the grid lists: its points would repeat one another."""
    for key in LISTED_OPTIONS:
        field = suite_options()[key].field
        if field in target_options and len({str(c.get(field)) for c in listed}) > 1:
            raise toml.error(
                (*target_path, key),
                f"'{key}' is a list in [grid]: set it there, not per [[target]]",
            )


def _refuse_unused(
    toml: tomlfile.TomlFile,
    options: Mapping[str, Any],
    where: Mapping[str, tomlfile.KeyPath],
    workloads: Sequence[Workload],
    any_workload: bool,
) -> None:
    """A params option in [grid] that none of its workloads declares is a mistake (named by
    the patterns alone when the grid names patterns alone)."""
    for opt in suite_options().values():
        if opt.field not in options or any(o.field == opt.field for o in COMMON_OPTIONS):
            continue
        if not any(w.takes(opt.field) for w in workloads):
            takers = ", ".join(
                registry.taking(opt.field, FAMILY) if not any_workload
                else [w.name for w in registry.in_suites() if w.takes(opt.field)]
            )  # fmt: skip
            what = "workloads" if any_workload else "patterns"
            raise toml.error(
                where.get(str(opt.key), ("grid",)),
                f"'{opt.key}' is for {takers}; the grid's {what} are "
                f"{', '.join(w.name for w in workloads)}",
            )


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
    toml: tomlfile.TomlFile, data: Mapping[str, Any], cases: Sequence[_Case]
) -> list[_Target]:
    """The suite's [[target]] entries."""
    entries = data.get("target", [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise toml.error(("target",), "targets are [[target]] tables, each with a 'url'")
    found = []
    for index, entry in enumerate(entries):
        where: tomlfile.KeyPath = ("target", index)
        toml.check_keys(entry, where, _target_keys())
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
        found.append(_Target(target, reader.run_options(), where, _runs(toml, entry, where, cases)))
    return found


def _runs(
    toml: tomlfile.TomlFile,
    entry: Mapping[str, Any],
    where: tomlfile.KeyPath,
    cases: Sequence[_Case],
) -> tuple[str, ...] | None:
    """A target's `cases`: the names of the cases it runs (None: every case)."""
    if "cases" not in entry:
        return None
    names = entry["cases"]
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise toml.error((*where, "cases"), "'cases' must be a list of case names")
    known = [case.name for case in cases]
    for index, name in enumerate(names):
        if name not in known:
            choose = ", ".join(known) if known else "the file has no [[case]]"
            raise toml.error((*where, "cases", index), f"no case '{name}' ({choose})")
    return tuple(names)


def _override(toml: tomlfile.TomlFile, url: str, suite_targets: Sequence[_Target]) -> _Target:
    """--target URL: a new target with the options (run and target) and cases of the suite's
    first target of the same kind, so a suite written for one directory runs on another as
    is. An object store of a kind the suite does not name runs the cases of its first object
    store (a study's Blob row runs on S3), with the grid's options alone."""
    probe = TargetSpec.from_url(url)
    for target in suite_targets:
        if target.spec.kind == probe.kind:
            spec = TargetSpec.from_url(url, **target.spec.options)
            return _Target(spec, target.options, target.where, target.cases)
    for target in suite_targets:
        if probe.is_object_store and target.spec.is_object_store:
            return _Target(probe, {}, ("grid",), target.cases)
    return _Target(probe, {}, ("grid",), None)


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

    def run_options(self, skip: Sequence[str] = ()) -> dict[str, Any]:
        """The run options this table sets, by field (of RunSpec or a workload's params),
        but the keys in `skip` (read as axes)."""
        options = {}
        for key, opt in suite_options().items():
            if key in self._table and key not in skip:
                options[opt.field] = self._convert(
                    key, self._where[key], opt.kind.convert, self._table[key]
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


def _pattern(value: Any) -> Workload:
    return _workload(value, FAMILY)


def _workload(value: Any, family: str | None = None) -> Workload:
    """Any workload `hpcio run --workload` (or --pattern) runs, or training (of `family`,
    when given)."""
    found = workload_named(_string(value), family)
    if found.name == "unet3d-datagen":
        raise SpecError(
            "unet3d-datagen is not a suite's point: run `hpcio train datagen` once, then the "
            "suite's unet3d points read its data set"
        )
    if not found.in_suites:
        raise SpecError(f"{found.name} is run by `hpcio {found.family}`, not by a suite")
    return found


def _positive_int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"must be a whole number, got {value!r}")
    if value < 1:
        raise ValueError(f"must be at least 1, got {value}")
    return value


def _sizes(value: Any) -> list[int]:
    """One size, or a doubling range "1MiB..1GiB"."""
    if isinstance(value, str):
        return parse_size_range(value)
    return [SIZE.convert(value)]
