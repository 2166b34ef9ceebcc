"""`hpcio replay LOG`: an application's I/O, from a Darshan log or an hpcio trace, made again
on any target (workloads/replay/)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING

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
from hpcio.options import declared
from hpcio.spec.model import RunSpec
from hpcio.spec.target import TargetSpec
from hpcio.workloads.replay.workload import Replay, with_data_set

if TYPE_CHECKING:
    from hpcio.runner.world import Comm, Topology


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
    def rejoin(world: Comm, layout: Topology, todo: list[RunSpec]) -> list[RunSpec]:
        # -n decides the ranks only now the job runs (a launcher of the user's own).
        return [spec(args, world.size)] if todo[0].ranks != world.size else todo

    return spine.run(
        args, argv, spine.Spine("replay", lambda ranks: [spec(args, ranks)], rejoin=rejoin)
    )
