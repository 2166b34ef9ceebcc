"""`hpcio profile`: the fio study's five storage profiles, one or all, with its two tables."""

from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hpcio import options as spec_options
from hpcio.commands import options, spine
from hpcio.commands.run import (
    add_common_arguments,
    add_dry_run_argument,
    add_output_arguments,
    common_settings,
    store_options,
    typed_options,
)
from hpcio.errors import SpecError
from hpcio.options import declared
from hpcio.results import io as results_io
from hpcio.spec import presets
from hpcio.spec.model import workload_named
from hpcio.spec.target import TargetSpec
from hpcio.units import format_bytes, parse_size, parse_size_range
from hpcio.workloads import registry
from hpcio.workloads.patterns.params import FilePerRankParams
from hpcio.workloads.profiles import iozone, storage

_PROFILE_OPTIONS = ("in_flight", "reorder", "duration_s", "rwmix_read_pct")

if TYPE_CHECKING:
    from hpcio.results.schema import ResultDocument
    from hpcio.runner.world import Comm, Topology
    from hpcio.spec.model import RunSpec


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "name",
        help=", ".join(registry.names("profile")) + ", all (the five in turn), or iozone "
        "(IOzone's sweep)",
    )
    add_common_arguments(p, skip=("phases", "fsync"))
    p.add_argument(
        "--size",
        help="data set of the whole run, split evenly between ranks (default: twice this "
        "node's RAM for streaming, 1GiB for the others; 64MiB of 4 KiB objects for the "
        "latency and random profiles on object stores)",
    )
    # The profiles' own options, as mfmw declares them; unset, each profile's own value.
    spec_options.add_arguments(
        p, [o for o in declared(FilePerRankParams) if o.field in _PROFILE_OPTIONS]
    )
    p.add_argument(
        "--file-sizes",
        help=f"iozone: bytes per file, a doubling range (default {iozone.DEFAULT_FILE_SIZES})",
    )
    p.add_argument(
        "--record-sizes",
        help=f"iozone: bytes per I/O call, a doubling range (default "
        f"{iozone.DEFAULT_RECORD_SIZES})",
    )
    p.add_argument(
        "--plots", metavar="DIR", help="iozone: write the heat maps as DIR/iozone.png and .svg"
    )
    add_output_arguments(p, "print only the tables")
    add_dry_run_argument(p)
    options.once_each(p, keep=("store_option",))


def specs(args: argparse.Namespace, ranks: int, nodes: int = 1) -> list[RunSpec]:
    """The runs `args` asks for, validated.

    Raises:
        SpecError: an unknown profile, a bad size, a store that cannot take a profile, or an
            option that does not apply.
    """
    runs = _specs(args, ranks, nodes)
    typed = typed_options(args)
    for run in runs:
        options.refuse_inapplicable(run, typed & {"store_option", "space_check"})
    if not args.space_check:
        runs = [dataclasses.replace(run, space_check=False) for run in runs]
    if args.trace:
        runs = [dataclasses.replace(run, trace=True) for run in runs]
    return runs


def _specs(args: argparse.Namespace, ranks: int, nodes: int) -> list[RunSpec]:
    from hpcio.runner.pagecache import node_ram_bytes

    settings = common_settings(args)
    chosen = spec_options.values(
        args, [o for o in declared(FilePerRankParams) if o.field in _PROFILE_OPTIONS]
    )
    iozone_only = [
        option
        for option, value in (
            ("--file-sizes", args.file_sizes),
            ("--record-sizes", args.record_sizes),
            ("--plots", args.plots),
        )
        if value is not None
    ]
    if args.name == iozone.Iozone.name:
        return _iozone_specs(args, ranks, settings, chosen)
    if iozone_only:
        raise SpecError(f"{iozone_only[0]} is for 'hpcio profile iozone', not {args.name}")
    every = registry.names("profile")
    names = every if args.name == "all" else [workload_named(args.name, "profile").name]
    target = TargetSpec.from_url(args.target, **store_options(args.store_option))
    size = parse_size(args.size) if args.size is not None else None
    ram = node_ram_bytes()
    return [
        presets.profile_run(
            storage.PROFILES[name],
            target,
            ranks=ranks,
            size_bytes=size,
            node_ram_bytes=ram,
            direct=bool(settings.get("direct", False)),
            verify=bool(settings.get("verify", False)),
            seed=int(settings.get("seed", 1)),  # type: ignore[call-overload]
            iterations=int(settings.get("iterations", 1)),  # type: ignore[call-overload]
            keep=bool(settings.get("keep", False)),
            duration_s=chosen.get("duration_s"),
            in_flight=chosen.get("in_flight"),
            drop_caches=bool(settings.get("drop_caches", False)),
            nodes=nodes,
            reorder=bool(chosen.get("reorder", False)),
            rwmix_read_pct=chosen.get("rwmix_read_pct"),
        )
        for name in names
    ]


def _iozone_specs(
    args: argparse.Namespace, ranks: int, settings: dict[str, Any], chosen: dict[str, Any]
) -> list[RunSpec]:
    if chosen.get("rwmix_read_pct") is not None:
        raise SpecError("--rwmix-read is not for iozone: its tests are its own (random mix is one)")
    if settings.get("drop_caches") or chosen.get("reorder"):
        option = "--drop-caches" if settings.get("drop_caches") else "--reorder"
        raise SpecError(f"{option} is not for iozone: its reread measures the cache on purpose")
    for option, value in (("--size", args.size), ("--duration", chosen.get("duration_s"))):
        if value is not None:
            raise SpecError(f"{option} is not for iozone: give --file-sizes and --record-sizes")
    if args.plots is not None and os.path.exists(args.plots) and not os.path.isdir(args.plots):
        raise SpecError(f"--plots {args.plots}: exists and is not a directory")
    if args.plots is not None:
        from hpcio.report.plots import require_matplotlib

        require_matplotlib("--plots")
    return presets.iozone_runs(
        TargetSpec.from_url(args.target, **store_options(args.store_option)),
        ranks=ranks,
        file_sizes=parse_size_range(args.file_sizes or iozone.DEFAULT_FILE_SIZES),
        record_sizes=parse_size_range(args.record_sizes or iozone.DEFAULT_RECORD_SIZES),
        direct=bool(settings.get("direct", False)),
        verify=bool(settings.get("verify", False)),
        seed=int(settings.get("seed", 1)),
        iterations=int(settings.get("iterations", 1)),
        keep=bool(settings.get("keep", False)),
        in_flight=int(chosen.get("in_flight") or 1),
    )


def main(args: argparse.Namespace, argv: Sequence[str]) -> int:
    if args.output == results_io.STDOUT:
        raise SpecError("hpcio profile prints its tables on stdout: give -o a file, not -")
    iozone_run = args.name == iozone.Iozone.name

    def rejoin(world: Comm, layout: Topology, todo: list[RunSpec]) -> list[RunSpec]:
        if layout.nodes > 1 and args.size is None and not iozone_run:
            # Defaults that depend on RAM count every node's, known only now the job runs.
            return specs(args, world.size, layout.nodes)
        return todo

    def closing(docs: list[ResultDocument]) -> None:
        from hpcio.live.console import say
        from hpcio.report.profiles import profile_tables

        if not args.quiet:
            say("")
        if iozone_run:
            _iozone_output(docs, args.plots)
        else:
            say(profile_tables(docs))

    return spine.run(
        args,
        argv,
        spine.Spine(
            "profile",
            lambda ranks: specs(args, ranks),
            rejoin=rejoin,
            preface=lambda todo: storage.object_store_note(todo[0].target),
            heading=_heading,
            # A grid of small points: a line each ([i/N], figures, ETA), the table at the end.
            point_name=_iozone_point if iozone_run else None,
            quiet_hides_summary=True,
            closing=closing,
        ),
    )


def _heading(run: RunSpec) -> str:
    profile = storage.PROFILES.get(run.workload.name)
    if profile is not None:
        return f"hpcio profile: {profile.name}: {profile.describe(run.params.rwmix_read_pct)}"
    return f"hpcio profile iozone: {run.params.test}"


def _iozone_point(run: RunSpec) -> str:
    p = run.params
    return (
        f"iozone {p.test}: file {format_bytes(p.size_per_rank_bytes)}, "
        f"record {format_bytes(p.transfer_bytes)}"
    )


def _iozone_output(docs: list[ResultDocument], plots_dir: str | None) -> None:
    from pathlib import Path

    from hpcio.live.console import say
    from hpcio.report.iozone import iozone_heatmap, iozone_table

    say(iozone_table(docs))
    if plots_dir is not None:
        from hpcio.report.plots import write_files

        directory = Path(plots_dir)
        try:
            directory.mkdir(parents=True, exist_ok=True)
            for path in write_files(iozone_heatmap(docs), directory):
                say(str(path))
        except OSError as e:
            raise SpecError(f"--plots {directory}: cannot write ({e.strerror})") from None
