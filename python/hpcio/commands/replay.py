"""`hpcio replay LOG`: an application's I/O, from a Darshan log or an hpcio trace, made again
on any target (workloads/replay/)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hpcio import options as spec_options
from hpcio.commands import options
from hpcio.commands.run import (
    add_common_arguments,
    add_dry_run_argument,
    add_output_arguments,
    check_output,
    commentary_to_stderr,
    common_settings,
    dry_run,
    store_options,
    typed_options,
)
from hpcio.errors import SpecError
from hpcio.options import declared
from hpcio.results import io as results_io
from hpcio.spec.model import RunSpec
from hpcio.spec.target import TargetSpec
from hpcio.workloads.replay.workload import Replay, with_data_set

if TYPE_CHECKING:
    from hpcio.runner.world import Comm

HELP = "replay an application's I/O (a Darshan log or an hpcio trace) on any target"


def _options() -> list:
    return [o for o in declared(Replay.params) if o.flag is not None]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "log",
        help="a Darshan log (its DXT segments, else its counters) or an hpcio trace "
        "(a rank's .npz file or the directory of them)",
    )
    add_common_arguments(p, skip=("phases", "stripe_count", "stripe_size_bytes"))
    spec_options.add_arguments(p, _options())
    add_output_arguments(p, "print only the summary")
    add_dry_run_argument(p)
    options.once_each(p, keep=("store_option",))


def spec(args: argparse.Namespace, ranks: int) -> RunSpec:
    """The replay `args` asks for, validated.

    Raises:
        SpecError: an unreadable log, or a setting the replay refuses.
    """
    settings = {
        **spec_options.values(args, _options()),
        **common_settings(args),
        "log": args.log,
        "ranks": ranks,
        "target": TargetSpec.from_url(args.target, **store_options(args.store_option)),
    }
    run = RunSpec.build(Replay.name, **settings)
    options.refuse_inapplicable(run, typed_options(args), _options(), "replay")
    return with_data_set(run.validate())


def main(args: argparse.Namespace, argv: Sequence[str]) -> int:
    from hpcio.runner.launch import launch_or_join

    if args.ranks is not None and args.ranks < 1:
        raise SpecError(f"-n must be at least 1, got {args.ranks}")
    run = spec(args, args.ranks or 1)
    if args.dry_run:
        return dry_run("replay", [run])
    check_output(args.output)
    return launch_or_join(
        [run], argv, lambda world, todo: _execute(world, args, todo), args.ranks, args.output
    )


def _execute(world: Comm, args: argparse.Namespace, todo: list[RunSpec]) -> int:
    from hpcio.live.console import Console
    from hpcio.runner.sweep import run_all
    from hpcio.runner.world import topology

    with commentary_to_stderr(args.output):
        # -n decides the ranks only now the job runs (a launcher of the user's own).
        todo = [spec(args, world.size)] if todo[0].ranks != world.size else todo
        console = Console(topology(world), quiet=args.quiet)
        output = results_io.destination(args.output)
        run_all(world, todo, output, console.progress, console.announce, console.finished)
        sys.stdout.flush()
    return 0
