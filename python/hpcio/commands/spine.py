"""The one run spine every run-making command ends in (run, sweep, profile, train, replay,
checkpoint): a command declares its flags and turns arguments into specs; `run` checks the
common arguments, prints a dry run, launches or joins the MPI job and, on every rank, runs the
specs with live output, rank 0 printing the command's closing table."""

from __future__ import annotations

import argparse
import contextlib
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


def run(args: argparse.Namespace, argv: Sequence[str], spine: Spine) -> int:
    """Run what `spine` describes: the one path of every run-making command.

    Raises:
        SpecError: a bad -n or -o, or what building the specs refuses.
    """
    from hpcio.runner.launch import launch_or_join

    if args.ranks is not None and args.ranks < 1:
        raise SpecError(f"-n must be at least 1, got {args.ranks}")
    todo = spine.specs(args.ranks or 1)  # validates options before anything starts
    if args.dry_run:
        return dry_run(spine.command, todo)
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

        progress, announced, done = console.progress, announce, finished
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
