"""`hpcio checkpoint MODEL`: MLPerf Storage's LLM checkpoint, saved ten times then loaded ten
times by the model's processes, each its shard (workloads/checkpoint.py)."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hpcio import options as spec_options
from hpcio.commands import spine
from hpcio.commands.run import (
    add_common_arguments,
    add_dry_run_argument,
    add_output_arguments,
    store_options,
)
from hpcio.options import declared
from hpcio.spec import presets
from hpcio.spec.model import COMMON_OPTIONS
from hpcio.spec.target import TargetSpec
from hpcio.units import parse_size
from hpcio.workloads import checkpoint
from hpcio.workloads.patterns.params import FilePerRankParams

if TYPE_CHECKING:
    from hpcio.results.schema import ResultDocument
    from hpcio.runner.world import Comm
    from hpcio.spec.model import RunSpec


#: Settings every run has that a checkpoint takes from the command line, as declared once
#: (spec/model.py); -n is the model's own (its processes), the others are fixed by MLPerf.
_NOT_TAKEN = ("ranks", "iterations", "phases", "direct", "fsync", "stripe_count",
              "stripe_size_bytes", "space_check")  # fmt: skip
#: The params options it takes, as the N-N pattern declares them.
_PARAMS_OPTIONS = [o for o in declared(FilePerRankParams) if o.field == "reorder"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help=", ".join(checkpoint.MODELS))
    add_common_arguments(p, skip=_NOT_TAKEN)
    p.add_argument(
        "-n",
        "--ranks",
        type=int,
        help="ranks: the model's processes (8, 64, 512, 1024), its default",
    )
    p.add_argument(
        "--scale",
        type=int,
        default=1,
        help="divide the checkpoint's bytes by this, keeping its ranks (default 1)",
    )
    p.add_argument(
        "--transfer",
        default="16MiB",
        help="bytes per write or read call, a part on object stores (default 16MiB)",
    )
    p.add_argument(
        "--in-flight",
        type=int,
        default=checkpoint.IN_FLIGHT,
        help=f"transfers in flight per rank (default {checkpoint.IN_FLIGHT})",
    )
    spec_options.add_arguments(p, _PARAMS_OPTIONS)
    add_output_arguments(p, "print only the summary")
    add_dry_run_argument(p)


def specs(args: argparse.Namespace, ranks: int | None = None) -> list[RunSpec]:
    model = checkpoint.get(args.model)
    ranks = args.ranks if args.ranks is not None else model.ranks
    target = TargetSpec.from_url(args.target, **store_options(args.store_option))
    common = spec_options.values(args, COMMON_OPTIONS)
    save, load = presets.checkpoint_runs(
        model,
        target,
        ranks=ranks,
        scale=args.scale,
        transfer=parse_size(args.transfer),
        in_flight=args.in_flight,
        reorder=bool(spec_options.values(args, _PARAMS_OPTIONS).get("reorder", False)),
        drop_caches=bool(common.get("drop_caches", False)),
        verify=bool(common.get("verify", False)),
        seed=int(common.get("seed", 1)),
    )
    if common.get("trace"):
        return [dataclasses.replace(save, trace=True), dataclasses.replace(load, trace=True)]
    return [save, load]


def main(args: argparse.Namespace, argv: Sequence[str]) -> int:
    def remove_shards(world: Comm, todo: list[RunSpec], stopped: bool) -> None:
        # The saves keep their shards for the loads, so the runner leaves them on a stop.
        from hpcio.runner.run import remove_written

        if not spec_options.values(args, COMMON_OPTIONS).get("keep"):
            remove_written(world, todo[0], stopped=stopped)

    def closing(docs: list[ResultDocument]) -> None:
        from hpcio.live.console import say
        from hpcio.report.checkpoints import checkpoint_table

        say("")
        say(checkpoint_table(docs))

    return spine.run(
        args,
        argv,
        spine.Spine(
            "checkpoint",
            lambda ranks: specs(args),
            ranks_from_specs=True,
            after=remove_shards,
            closing=closing,
        ),
    )
