"""`hpcio suite run FILE.toml`: a suite's grid of points, appended to -o and resumable;
`hpcio suite show FILE.toml`: its points and which are already done."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hpcio import shipped
from hpcio.commands.run import add_dry_run_argument
from hpcio.commands.spine import check_output, dry_run
from hpcio.errors import SpecError
from hpcio.spec.model import RunSpec
from hpcio.spec.suite import Suite, describe, group_points, load_suite

if TYPE_CHECKING:
    from hpcio.runner.world import Comm

HELP = "run a suite (TOML grid of points), resumable"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="suite_command", required=True)
    run = actions.add_parser("run", help="run the suite's points not yet in -o")
    _common(run)
    run.add_argument(
        "--display",
        choices=("auto", "bar", "lines"),
        default="auto",
        help="progress: a bar on a terminal, one line per point otherwise (auto)",
    )
    run.add_argument(
        "--trace",
        action="store_true",
        help="record every operation, one file per rank beside the results (RESULTS.trace/RUN/)",
    )
    add_dry_run_argument(run)
    # One MPI launch per (ranks, ranks per node): the parent passes the group it launched.
    run.add_argument("--group", help=argparse.SUPPRESS)
    show = actions.add_parser("show", help="list the suite's points and which are done")
    _common(show, output_required=False)
    actions.add_parser("list", help="the suites hpcio ships, one line each")


def _common(parser: argparse.ArgumentParser, *, output_required: bool = True) -> None:
    parser.add_argument(
        "suite", help="a suite file, or the name of a shipped one (hpcio suite list): output"
    )
    parser.add_argument(
        "-o",
        "--output",
        required=output_required,
        help="results file (JSON Lines): documents are appended, points already there skipped"
        if output_required
        else "a results file (read only): mark the points it already holds as done",
    )
    parser.add_argument(
        "--target",
        action="append",
        default=[],
        metavar="URL",
        help="run against URL instead of the suite's targets (repeatable): file:///dir, "
        "s3://bucket/prefix, az://container/prefix, gs://bucket/prefix, memory://, null://",
    )
    parser.add_argument("--scale", help="a scale the suite defines, e.g. small")


def main(args: argparse.Namespace, argv: Sequence[str]) -> int:
    if args.suite_command == "list":
        return _list()
    path = shipped.find(args.suite, shipped.SUITES, "suite")
    suite = load_suite(path, scale=args.scale, targets=args.target)
    if args.suite_command == "show":
        return _show(suite, args.output)
    if args.dry_run:
        _say_left_out(suite)
        return dry_run("suite", _pending(suite.points, args.output))
    from hpcio.runner import launch
    from hpcio.runner.world import inside_mpi_job

    check_output(args.output)
    if args.group is not None or inside_mpi_job():
        group = _parse_group(args.group) if args.group is not None else None
        return launch.join(
            lambda world: _execute(world, args, suite, group),
            group[0] if group is not None else None,
            f"--group {args.group}",
        )
    return _launch(args, argv, suite)


def _list() -> int:
    for name in shipped.names(shipped.SUITES):
        print(f"{name:<10}  {shipped.about(shipped.SUITES / f'{name}.toml', 'suite')}")
    print(f"(in {shipped.SUITES}; run one by name: hpcio suite run NAME -o FILE --target URL)")
    return 0


def _show(suite: Suite, output: str | None) -> int:
    todo = {id(p) for p in _pending(suite.points, output)}
    scale = f" at scale {suite.scale}" if suite.scale else ""
    print(f"{suite.name}{scale}: {len(suite.points)} points, {len(todo)} to run")
    for index, point in enumerate(suite.points, start=1):
        status = "todo" if id(point) in todo else "done"
        print(f"{index:>4}  {status}  {describe(point)}")
    _say_left_out(suite)
    return 0


def _say_left_out(suite: Suite) -> None:
    """The points a target's store would refuse, which the suite leaves out on it."""
    for line in suite.left_out:
        print(f"hpcio suite: left out: {line}")


def _launch(args: argparse.Namespace, argv: Sequence[str], suite: Suite) -> int:
    """Outside MPI: run each (ranks, ranks per node) group that has points left in one
    mpiexec launch of this same command (a single rank runs here, without MPI)."""
    from hpcio.runner.launch import launch_groups
    from hpcio.spec.sweep import resume

    todo = resume(suite.points, args.output)
    scale = f" at scale {suite.scale}" if suite.scale else ""
    print(
        f"hpcio suite: {suite.name}{scale}: {len(suite.points)} points, "
        f"{len(suite.points) - len(todo)} already in {args.output}, {len(todo)} to run",
        flush=True,
    )
    _say_left_out(suite)
    if not todo:
        return 0
    display = args.display
    if display == "auto":
        display = "bar" if sys.stdout.isatty() else "lines"

    def announce(ranks: int, per_node: int | None, points: list[RunSpec]) -> None:
        layout = f", {per_node} per node" if per_node else ""
        print(f"hpcio suite: {ranks} rank(s){layout}: {len(points)} point(s)", flush=True)

    def group_argv(ranks: int, per_node: int | None) -> list[str]:
        return [*argv, "--group", f"{ranks}:{per_node or 0}", "--display", display]

    code = launch_groups(
        group_points(todo),
        args.output,
        group_argv,
        lambda world, group: _execute(world, args, suite, group, display),
        announce,
        terminal_width=display == "bar",
    )
    if code:
        return code
    print(f"hpcio suite: done; {len(suite.points)} points in {args.output}", flush=True)
    return 0


def _execute(
    world: Comm,
    args: argparse.Namespace,
    suite: Suite,
    group: tuple[int, int | None] | None,
    display: str | None = None,
) -> int:
    """Run this job's share of the points still to do; rank 0 shows progress and appends."""
    from contextlib import nullcontext

    from hpcio.live.progress import SuiteProgress, phase_calls, point_work
    from hpcio.live.status import drawn_by
    from hpcio.runner.sweep import run_all
    from hpcio.spec.sweep import resume

    todo: list[RunSpec] = []
    progress = None
    chosen = None
    if world.rank == 0:
        remaining = resume(suite.points, args.output)
        if group is not None:
            todo = [p for p in remaining if (p.ranks, p.ranks_per_node) == group]
        else:
            # Launched by hand (`mpiexec -n 4 hpcio suite run ...`): the points of this size.
            todo = [p for p in remaining if p.ranks == world.size]
            if len(todo) < len(remaining):
                print(
                    f"hpcio suite: {len(remaining) - len(todo)} point(s) need another number "
                    f"of ranks than this job's {world.size}; run the suite again for them",
                    flush=True,
                )
        chosen = display or args.display
        if chosen == "auto":
            chosen = "bar" if sys.stdout.isatty() else "lines"
        progress = SuiteProgress(
            total_points=len(suite.points),
            done_points=len(suite.points) - len(remaining),
            total_work=sum(map(point_work, suite.points)),
            done_work=sum(map(point_work, suite.points)) - sum(map(point_work, remaining)),
            work=point_work,
            phase_calls=phase_calls,
            display=chosen,
        )
    todo = world.bcast(todo)
    if args.trace:
        todo = [dataclasses.replace(point, trace=True) for point in todo]
    # A bar owns the terminal's last line: the phases' status line goes into it.
    drawing = drawn_by(progress.status) if progress and chosen == "bar" else nullcontext()
    try:
        with drawing:
            run_all(
                world,
                todo,
                args.output,
                progress.phase if progress else None,
                progress.announce if progress else None,
                progress.finished if progress else None,
            )
    finally:
        if progress:
            progress.close()
    return 0


def _pending(points: Sequence[RunSpec], output: str | None) -> list[RunSpec]:
    """The points without a complete document in `output` (interrupted ones run again)."""
    from hpcio.results import io as results_io
    from hpcio.spec.sweep import pending

    return pending(points, results_io.done_runs(output) if output else [])


def _parse_group(text: str) -> tuple[int, int | None]:
    try:
        ranks, per_node = (int(part) for part in text.split(":"))
    except ValueError:
        raise SpecError(f"--group takes RANKS:PER_NODE, got '{text}'") from None
    return ranks, per_node or None
