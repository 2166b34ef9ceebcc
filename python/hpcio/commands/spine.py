"""The one run spine every run-making command ends in (run, sweep, profile, train, replay,
checkpoint, suite): a command declares its flags and turns arguments into specs; `run` checks
the common arguments, prints a dry run, launches or joins the MPI job (or one job per group of
a suite's points) and, on every rank, runs the specs with live output, rank 0 printing the
command's closing table."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import stat
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hpcio.errors import SpecError
from hpcio.results import io as results_io

if TYPE_CHECKING:
    from hpcio.results.schema import ResultDocument
    from hpcio.runner.world import Comm, Topology
    from hpcio.spec.model import RunSpec


@dataclass(frozen=True)
class Spine:
    """What a command hands the spine: its specs and what its output adds to the common one."""

    #: The command's name in dry runs and messages ("run", "train unet3d").
    command: str
    #: The validated runs for -n ranks (1 when -n is not given).
    specs: Callable[[int], list[RunSpec]]
    #: The runs again once the job runs, where they depend on its world (-n given to a launcher
    #: of the user's own, every node's RAM); None: the launched ones.
    rejoin: Callable[[Comm, Topology, list[RunSpec]], list[RunSpec]] | None = None
    #: A sweep: runs whose documents -o already holds are skipped (-o is required), and the
    #: live output counts points.
    resumes: bool = False
    #: The launch's ranks from the specs (a model's processes), not from -n.
    ranks_from_specs: bool = False
    #: Rank 0 says this before the first run (None: nothing).
    preface: Callable[[list[RunSpec]], str | None] | None = None
    #: A line said before each run unless -q (None: none).
    heading: Callable[[RunSpec], str | None] | None = None
    #: A line per run with its figures instead of live phases (a grid of small points).
    point_name: Callable[[RunSpec], str] | None = None
    #: -q hides each run's summary too, not only the live phases.
    quiet_hides_summary: bool = False
    #: Rank 0's closing output from every run's document (the command's table).
    closing: Callable[[list[ResultDocument]], None] | None = None
    #: A search (hpcio tune): after the runs, rank 0 picks the next ones from every document
    #: so far, until it returns none. None: the specs are all the runs.
    following: Callable[[list[ResultDocument]], list[RunSpec]] | None = None
    #: Called on every rank after the runs, or with stopped=True when they were stopped
    #: (a checkpoint removes the shards its saves kept for its loads).
    after: Callable[[Comm, list[RunSpec], bool], None] | None = None
    #: The runs have their own ranks and ranks per node (a suite's points): each group of
    #: one size runs in its own MPI launch (`--group`, add_group_arguments), resuming from -o
    #: as a sweep does, with one progress over every run.
    grouped: bool = False
    #: What the line counting a grouped command's runs names ("small at scale small").
    title: str = ""
    #: Runs the command leaves out, one line each: said before a dry run and the runs.
    left_out: Sequence[str] = ()


def add_group_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of a command whose runs go in groups (Spine.grouped)."""
    parser.add_argument(
        "--display",
        choices=("auto", "bar", "lines"),
        default="auto",
        help="progress: a bar on a terminal, one line per point otherwise (auto)",
    )
    parser.add_argument(
        "--trace",
        action="store_true",
        help="record every operation, one file per rank beside the results (RESULTS.trace/RUN/)",
    )
    # One MPI launch per (ranks, ranks per node): the parent passes the group it launched.
    parser.add_argument("--group", help=argparse.SUPPRESS)


def run(args: argparse.Namespace, argv: Sequence[str], spine: Spine) -> int:
    """Run what `spine` describes: the one path of every run-making command.

    Raises:
        SpecError: a bad -n or -o, or what building the specs refuses.
    """
    from hpcio.runner.launch import launch_or_join

    ranks_given = getattr(args, "ranks", None)  # a grouped command's runs say their own
    if ranks_given is not None and ranks_given < 1:
        raise SpecError(f"-n must be at least 1, got {ranks_given}")
    todo = spine.specs(ranks_given or 1)  # validates options before anything starts
    if args.dry_run:
        _say_left_out(spine)
        return dry_run(spine.command, pending(todo, args.output) if spine.grouped else todo)
    if spine.grouped:
        check_output(args.output)
        return _run_grouped(args, argv, spine, todo)
    if spine.resumes and not args.output:
        raise SpecError(f"{spine.command} needs -o FILE: it appends there and resumes from it")
    check_output(args.output)
    ranks = todo[0].ranks if spine.ranks_from_specs else args.ranks
    return launch_or_join(
        todo, argv, lambda world, specs: _execute(world, args, spine, specs), ranks, args.output
    )


def _execute(world: Comm, args: argparse.Namespace, spine: Spine, specs: list[RunSpec]) -> int:
    from hpcio.live.console import Console, say
    from hpcio.runner.sweep import run_all
    from hpcio.runner.world import topology
    from hpcio.spec.sweep import resume

    with commentary_to_stderr(args.output):
        layout = topology(world)
        todo = spine.rejoin(world, layout, specs) if spine.rejoin else specs
        if spine.resumes and world.rank == 0:
            todo = resume(specs, args.output)
            print(
                f"hpcio {spine.command}: {len(specs)} points, {len(specs) - len(todo)} already "
                f"in {args.output}, {len(todo)} to run"
            )
        todo = world.bcast(todo)  # rank 0's runs are every rank's
        console = Console(
            layout,
            quiet=args.quiet,
            points=todo if spine.resumes else (),
            done_points=len(specs) - len(todo) if spine.resumes else 0,
            display=getattr(args, "display", "lines"),
            link_mib_s=getattr(args, "link", None),
        )
        preface = spine.preface(todo) if spine.preface and todo else None
        if world.rank == 0 and preface:
            say(preface)

        def announce(run: RunSpec) -> None:
            line = spine.heading(run) if spine.heading else None
            if line and not args.quiet:
                say(line)
            console.announce(run)

        def finished(doc: ResultDocument) -> None:
            if not (args.quiet and spine.quiet_hides_summary):
                console.finished(doc)

        announced: Callable[[RunSpec], None] = announce
        done: Callable[[ResultDocument], None] = finished
        progress = console.progress
        points = None
        if spine.point_name is not None and world.rank == 0:
            from hpcio.live.progress import lines_progress

            points = lines_progress(todo, name=spine.point_name)
            progress, announced, done = points.phase, points.announce, points.finished
        output = results_io.destination(args.output)
        try:
            docs = run_all(world, todo, output, progress, announced, done)
            while spine.following is not None:
                more = world.bcast(spine.following(docs) if world.rank == 0 else None)
                if not more:
                    break
                if points is not None:
                    points.extend(more)
                docs += run_all(world, more, output, progress, announced, done)
        except BaseException:
            if spine.after is not None:
                spine.after(world, todo, True)
            raise
        finally:
            console.close()
        if spine.after is not None:
            spine.after(world, todo, False)
        if world.rank == 0 and spine.closing is not None:
            spine.closing(docs)
        sys.stdout.flush()
    return 0


def _run_grouped(
    args: argparse.Namespace, argv: Sequence[str], spine: Spine, specs: list[RunSpec]
) -> int:
    """Outside MPI: each group of runs of one size still to do, in one launch of this same
    command (`--group RANKS:PER_NODE`; a group of one rank runs here, without MPI). Inside a
    launched group, or an MPI job started by hand: this job's share of them."""
    from hpcio.runner import launch
    from hpcio.runner.world import inside_mpi_job

    if args.group is not None or inside_mpi_job():
        group = _parse_group(args.group) if args.group is not None else None
        return launch.join(
            lambda world: _execute_group(world, args, spine, specs, group),
            group[0] if group is not None else None,
            f"--group {args.group}",
        )
    from hpcio.spec.suite import group_points
    from hpcio.spec.sweep import resume

    todo = resume(specs, args.output)
    print(
        f"hpcio {spine.command}: {spine.title}: {len(specs)} points, "
        f"{len(specs) - len(todo)} already in {args.output}, {len(todo)} to run",
        flush=True,
    )
    _say_left_out(spine)
    if not todo:
        return 0
    display = _chosen_display(args.display)

    def announce(ranks: int, per_node: int | None, points: list[RunSpec]) -> None:
        layout = f", {per_node} per node" if per_node else ""
        print(f"hpcio {spine.command}: {ranks} rank(s){layout}: {len(points)} point(s)", flush=True)

    def group_argv(ranks: int, per_node: int | None) -> list[str]:
        return [*argv, "--group", f"{ranks}:{per_node or 0}", "--display", display]

    code = launch.launch_groups(
        group_points(todo),
        args.output,
        group_argv,
        lambda world, group: _execute_group(world, args, spine, specs, group, display),
        announce,
        terminal_width=display == "bar",
    )
    if code:
        return code
    print(f"hpcio {spine.command}: done; {len(specs)} points in {args.output}", flush=True)
    return 0


def _execute_group(
    world: Comm,
    args: argparse.Namespace,
    spine: Spine,
    specs: list[RunSpec],
    group: tuple[int, int | None] | None,
    display: str | None = None,
) -> int:
    """Run this job's share of the runs still to do; rank 0 shows progress over every run of
    the command and appends the documents."""
    from hpcio.live.progress import SuiteProgress, phase_calls, point_work
    from hpcio.live.status import drawn_by
    from hpcio.runner.sweep import run_all
    from hpcio.spec.sweep import resume

    todo: list[RunSpec] = []
    progress = None
    chosen = None
    if world.rank == 0:
        remaining = resume(specs, args.output)
        if group is not None:
            todo = [p for p in remaining if (p.ranks, p.ranks_per_node) == group]
        else:
            # Launched by hand (`mpiexec -n 4 hpcio suite run ...`): the runs of this size.
            todo = [p for p in remaining if p.ranks == world.size]
            if len(todo) < len(remaining):
                print(
                    f"hpcio {spine.command}: {len(remaining) - len(todo)} point(s) need another "
                    f"number of ranks than this job's {world.size}; run the {spine.command} "
                    "again for them",
                    flush=True,
                )
        chosen = _chosen_display(display or args.display)
        progress = SuiteProgress(
            total_points=len(specs),
            done_points=len(specs) - len(remaining),
            total_work=sum(map(point_work, specs)),
            done_work=sum(map(point_work, specs)) - sum(map(point_work, remaining)),
            work=point_work,
            phase_calls=phase_calls,
            display=chosen,
        )
    todo = world.bcast(todo)
    if args.trace:
        todo = [dataclasses.replace(point, trace=True) for point in todo]
    # A bar owns the terminal's last line: the phases' status line goes into it.
    drawing = (
        drawn_by(progress.status) if progress and chosen == "bar" else contextlib.nullcontext()
    )
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


def _chosen_display(display: str) -> str:
    if display == "auto":
        return "bar" if sys.stdout.isatty() else "lines"
    return display


def _say_left_out(spine: Spine) -> None:
    for line in spine.left_out:
        print(f"hpcio {spine.command}: left out: {line}")


def _parse_group(text: str) -> tuple[int, int | None]:
    try:
        ranks, per_node = (int(part) for part in text.split(":"))
    except ValueError:
        raise SpecError(f"--group takes RANKS:PER_NODE, got '{text}'") from None
    return ranks, per_node or None


def pending(specs: Sequence[RunSpec], output: str | None) -> list[RunSpec]:
    """The runs without a complete document in `output` (interrupted ones run again)."""
    from hpcio.spec.sweep import pending as without_documents

    return without_documents(specs, results_io.done_runs(output) if output else [])


def dry_run(command: str, specs: Sequence[RunSpec]) -> int:
    from hpcio.runner import preview

    for spec in specs:
        preview.refuse_as_the_run_would(spec)  # the same "no" the run would say
    print(f"hpcio {command} --dry-run: {len(specs)} run(s); nothing is written")
    for spec in specs:
        for line in preview.lines(spec):
            print(line)
    return 0


def check_output(path: str | None) -> None:
    """Fail before anything runs if the results file -o cannot be appended to."""
    if path is None or path == results_io.STDOUT:
        return
    if os.path.exists(path) and not os.path.isdir(path) and not stat.S_ISREG(os.stat(path).st_mode):
        raise SpecError(
            f"-o {path}: not a regular file (results are appended to a file and a sweep resumes "
            "from it); use -o - to write them to stdout"
        )
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise SpecError(f"-o {path}: directory {directory} does not exist")
    try:
        if os.path.exists(path):
            with open(path, "a", encoding="utf-8"):
                pass
        else:
            # A file of our own made beside it proves the directory takes new files, then goes:
            # a run refused or failed before its first document must leave no empty results
            # file, and under a user's mpiexec or srun every rank checks at once, so the
            # check must not touch the path the ranks share.
            fd, probe = tempfile.mkstemp(prefix=".hpcio-output-check-", dir=directory)
            os.close(fd)
            os.unlink(probe)
    except OSError as e:
        raise SpecError(f"-o {path}: cannot write ({e.strerror})") from None


def commentary_to_stderr(output: str | None) -> contextlib.AbstractContextManager[object]:
    """With -o -, stdout carries the result documents alone: what hpcio says goes to stderr."""
    if output == results_io.STDOUT:
        return contextlib.redirect_stdout(sys.stderr)
    return contextlib.nullcontext()
