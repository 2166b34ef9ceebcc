"""`hpcio checkpoint MODEL`: MLPerf Storage's LLM checkpoint, saved ten times then loaded ten
times by the model's processes, each its shard (workloads/checkpoint.py)."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hpcio.commands.run import (
    add_dry_run_argument,
    add_output_arguments,
    add_store_option_argument,
    check_output,
    dry_run,
    store_options,
)
from hpcio.errors import SpecError
from hpcio.spec import presets
from hpcio.spec.target import TargetSpec
from hpcio.units import parse_size
from hpcio.workloads import checkpoint

if TYPE_CHECKING:
    from hpcio.runner.world import Comm
    from hpcio.spec.model import RunSpec

HELP = "MLPerf Storage's LLM checkpoint: each rank saves its shard 10 times, then loads it"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help=", ".join(checkpoint.MODELS))
    p.add_argument("--target", required=True, help="file:///dir, s3://bucket/prefix, ...")
    add_store_option_argument(p)
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
    p.add_argument(
        "--reorder",
        action="store_true",
        help="load another rank's shard (another node's when there are several)",
    )
    p.add_argument(
        "--drop-caches",
        action="store_true",
        help="root: drop every node's page cache before each load",
    )
    p.add_argument("--verify", action="store_true", help="check every byte loaded")
    p.add_argument("--seed", type=int, default=1, help="payload seed")
    p.add_argument("--keep", action="store_true", help="keep the shards afterwards")
    p.add_argument(
        "--trace",
        action="store_true",
        help="record every operation, one file per rank beside the results (RESULTS.trace/RUN/)",
    )
    add_output_arguments(p, "print only the summary")
    add_dry_run_argument(p)


def specs(args: argparse.Namespace) -> list[RunSpec]:
    model = checkpoint.get(args.model)
    ranks = args.ranks if args.ranks is not None else model.ranks
    target = TargetSpec.from_url(args.target, **store_options(args.store_option))
    save, load = presets.checkpoint_runs(
        model,
        target,
        ranks=ranks,
        scale=args.scale,
        transfer=parse_size(args.transfer),
        in_flight=args.in_flight,
        reorder=args.reorder,
        drop_caches=args.drop_caches,
        verify=args.verify,
        seed=args.seed,
    )
    if args.trace:
        return [dataclasses.replace(save, trace=True), dataclasses.replace(load, trace=True)]
    return [save, load]


def main(args: argparse.Namespace, argv: Sequence[str]) -> int:
    from hpcio.runner.launch import launch_or_join

    todo = specs(args)
    if args.dry_run:
        return dry_run("checkpoint", todo)
    check_output(args.output)
    ranks = todo[0].ranks
    if args.ranks is not None and args.ranks < 1:
        raise SpecError(f"-n must be at least 1, got {args.ranks}")
    return launch_or_join(
        todo, argv, lambda world, runs: _execute(world, args, runs), ranks, args.output
    )


def _execute(world: Comm, args: argparse.Namespace, todo: list[RunSpec]) -> int:
    from hpcio.live.console import Console, say
    from hpcio.report.checkpoints import checkpoint_table
    from hpcio.runner.run import remove_written
    from hpcio.runner.sweep import run_all
    from hpcio.runner.world import topology

    console = Console(topology(world), quiet=args.quiet)
    try:
        docs = run_all(
            world, todo, args.output, console.progress, console.announce, console.finished
        )
    except BaseException:
        # The saves keep their shards for the loads, so the runner leaves them on a stop.
        if not args.keep:
            remove_written(world, todo[0], stopped=True)
        raise
    if not args.keep:
        remove_written(world, todo[0])
    if world.rank == 0:
        say("")
        say(checkpoint_table(docs))
    return 0
