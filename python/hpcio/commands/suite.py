"""`hpcio suite run FILE.toml`: a suite's grid of points, appended to -o and resumable;
`hpcio suite show FILE.toml`: its points and which are already done."""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import shutil
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from hpcio.commands.run import check_output
from hpcio.errors import SpecError
from hpcio.spec.model import RunSpec
from hpcio.spec.suite import Suite, describe, group_points, load_suite
from hpcio.workloads import registry

if TYPE_CHECKING:
    from hpcio.runner.world import Comm

HELP = "run a suite (TOML grid of points), resumable"

#: A phase's fixed cost (launch, open, close, barriers) in bytes-moved equivalents, so the ETA
#: does not treat a 1 MiB point as free.
_PHASE_OVERHEAD_BYTES = 16 << 20


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
    # One MPI launch per (ranks, ranks per node): the parent passes the group it launched.
    run.add_argument("--group", help=argparse.SUPPRESS)
    show = actions.add_parser("show", help="list the suite's points and which are done")
    _common(show, output_required=False)


def _common(parser: argparse.ArgumentParser, *, output_required: bool = True) -> None:
    parser.add_argument("suite", help="suite file, e.g. suites/output.toml")
    parser.add_argument(
        "-o",
        "--output",
        required=output_required,
        help="results file (JSON Lines): documents are appended, points already there skipped",
    )
    parser.add_argument(
        "--target",
        action="append",
        default=[],
        metavar="URL",
        help="run against URL instead of the suite's targets (repeatable)",
    )
    parser.add_argument("--scale", help="a scale the suite defines, e.g. small")


def main(args: argparse.Namespace, argv: Sequence[str]) -> int:
    suite = load_suite(args.suite, scale=args.scale, targets=args.target)
    if args.suite_command == "show":
        return _show(suite, args.output)
    from hpcio.runner import world as world_mod

    check_output(args.output)
    if args.group is not None or world_mod.inside_mpi_job():
        world = world_mod.open_world()
        group = _parse_group(args.group) if args.group is not None else None
        if group is not None and group[0] != world.size:
            raise SpecError(f"--group {args.group} but the MPI job has {world.size} ranks")
        with world_mod.abort_on_error(world):
            return _execute(world, args, suite, group)
    return _launch(args, argv, suite)


def _show(suite: Suite, output: str | None) -> int:
    todo = {id(p) for p in _pending(suite.points, output)}
    scale = f" at scale {suite.scale}" if suite.scale else ""
    print(f"{suite.name}{scale}: {len(suite.points)} points, {len(todo)} to run")
    for index, point in enumerate(suite.points, start=1):
        status = "todo" if id(point) in todo else "done"
        print(f"{index:>4}  {status}  {describe(point)}")
    return 0


def _launch(args: argparse.Namespace, argv: Sequence[str], suite: Suite) -> int:
    """Outside MPI: run each (ranks, ranks per node) group that has points left in one
    mpiexec launch of this same command (a single rank runs here, without MPI)."""
    from hpcio.results import io as results_io
    from hpcio.runner import journal
    from hpcio.runner import world as world_mod
    from hpcio.runner.run import probe_target

    job = journal.set_up()  # before any launch: every rank inherits it
    results_io.recover_partial(args.output)
    todo = _pending(suite.points, args.output)
    scale = f" at scale {suite.scale}" if suite.scale else ""
    print(
        f"hpcio suite: {suite.name}{scale}: {len(suite.points)} points, "
        f"{len(suite.points) - len(todo)} already in {args.output}, {len(todo)} to run",
        flush=True,
    )
    if not todo:
        return 0
    for point in {p.target.url: p for p in todo}.values():
        probe_target(point)  # before any launch: a missing directory is one line, at once
    display = args.display
    if display == "auto":
        display = "bar" if sys.stdout.isatty() else "lines"
    template = os.environ.get("HPCIO_MPIEXEC", "")
    if any(p.ranks_per_node for p in todo) and "{ppn}" not in template:
        print(
            "hpcio suite: ranks per node are recorded in each point, not enforced: every rank "
            "runs on this machine (to place them, set HPCIO_MPIEXEC with {ppn}, see "
            "docs/suites.md)",
            flush=True,
        )
    for (ranks, per_node), points in group_points(todo).items():
        layout = f", {per_node} per node" if per_node else ""
        print(f"hpcio suite: {ranks} rank(s){layout}: {len(points)} point(s)", flush=True)
        if ranks == 1:
            serial = world_mod.SerialComm()
            with world_mod.abort_on_error(serial):
                code = _execute(serial, args, suite, (1, per_node), display)
        else:
            child = [*argv, "--group", f"{ranks}:{per_node or 0}", "--display", display]
            before = os.path.getsize(args.output) if os.path.exists(args.output) else 0
            try:
                with _launcher(template, ranks, per_node, display):
                    code = world_mod.relaunch(ranks, child)
            except KeyboardInterrupt:
                _after_failed_launch(0, points, job, args.output, before, stopped=True)
                raise
        if code:
            _after_failed_launch(code, points, job, args.output, before if ranks > 1 else 0)
            return code
    print(f"hpcio suite: done; {len(suite.points)} points in {args.output}", flush=True)
    return 0


def _after_failed_launch(
    code: int, points: list[RunSpec], job: str, output: str, since: int, stopped: bool = False
) -> None:
    """What `hpcio run` does when its MPI job fails or is interrupted: say if a rank was
    killed, abort the uploads the job left open, remove its files, keep its finished
    iterations (status interrupted, run again on resume)."""
    # Shared with `hpcio run` rather than copied, so both clean up alike.
    from hpcio.commands.run import clean_up_after

    if code > 128 and code != 130:
        print(
            f"hpcio: error: the MPI job failed: a rank was killed (signal {code - 128})",
            file=sys.stderr,
        )
    clean_up_after(points, job, output, since, stopped=stopped or code > 128)


@contextlib.contextmanager
def _launcher(template: str, ranks: int, per_node: int | None, display: str) -> Iterator[None]:
    """HPCIO_MPIEXEC with {ppn} and {nodes} filled in for this group, and the terminal's
    width for the child's bar (its stdout is mpiexec's pipe, so it cannot ask)."""
    saved = {name: os.environ.get(name) for name in ("HPCIO_MPIEXEC", "COLUMNS")}
    try:
        if "{ppn}" in template or "{nodes}" in template:
            ppn = per_node or ranks
            os.environ["HPCIO_MPIEXEC"] = template.format(ppn=ppn, nodes=math.ceil(ranks / ppn))
        if display == "bar":
            os.environ["COLUMNS"] = str(shutil.get_terminal_size().columns)
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _execute(
    world: Comm,
    args: argparse.Namespace,
    suite: Suite,
    group: tuple[int, int | None] | None,
    display: str | None = None,
) -> int:
    """Run this job's share of the points still to do; rank 0 shows progress and appends."""
    from hpcio.live.progress import SuiteProgress
    from hpcio.results import io as results_io
    from hpcio.runner.sweep import run_all

    todo: list[RunSpec] = []
    progress = None
    if world.rank == 0:
        # A launch by hand that did not end left its finished iterations aside: keep them.
        results_io.recover_partial(args.output)
        remaining = _pending(suite.points, args.output)
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
            phase_calls=_phase_calls,
            display=chosen,
        )
    todo = world.bcast(todo)
    try:
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


def point_work(point: RunSpec) -> float:
    """Bytes a point moves over its phases and iterations, plus a fixed cost per phase: its
    weight in the ETA, as its workload counts them."""
    workload = registry.get(point.workload)
    total = 0.0
    for phase in workload.phases(point):
        total += workload.moved_bytes(point, phase) + _PHASE_OVERHEAD_BYTES
    return total * point.iterations


def _phases(point: RunSpec) -> tuple[str, ...]:
    return tuple(p.value for p in registry.get(point.workload).phases(point))


def _phase_calls(point: RunSpec) -> int:
    return len(_phases(point)) * point.iterations


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
