"""Launch or join: start hpcio again under mpiexec when asked for several ranks outside an MPI
job (once, or once per group of a suite's points), else run on the MPI world this process is
in. The launching hpcio hands the ranks what they must not get on their command line, and
cleans up after a job that fails or is stopped."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from hpcio.errors import SpecError
from hpcio.results import io as results_io
from hpcio.runner import cleanup, journal

if TYPE_CHECKING:
    from hpcio.runner.world import Comm
    from hpcio.spec.model import RunSpec

#: How the self-launch hands --store-option pairs to its ranks: in their environment (readable
#: by the user alone, /proc/PID/environ), not in their argv (readable by all, ps).
STORE_OPTIONS_VARIABLE = "HPCIO_STORE_OPTIONS"


def inherited_store_options() -> dict[str, str]:
    """The --store-option pairs the launching hpcio passed to this rank (it checked them)."""
    inherited = json.loads(os.environ.get(STORE_OPTIONS_VARIABLE, "[]"))
    return dict(pair.split("=", 1) for pair in inherited)


def argv_without_store_options(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """`argv` less its --store-option pairs, and the pairs: what the ranks get on their command
    line and what they get in their environment."""
    kept: list[str] = []
    pairs: list[str] = []
    words = iter(argv)
    for word in words:
        if word == "--store-option":
            pairs.append(next(words, ""))
        elif word.startswith("--store-option="):
            pairs.append(word.removeprefix("--store-option="))
        else:
            kept.append(word)
    return kept, pairs


def join(execute: Callable[[Comm], int], ranks: int | None = None, asked: str = "") -> int:
    """Run `execute` on the MPI world this process is in (a world of one outside MPI), inside
    abort_on_error.

    Raises:
        SpecError: the world does not have `ranks` ranks, which `asked` (an option) asked for.
    """
    from hpcio.runner import world as world_mod

    world_mod.refuse_tasks_without_mpi()
    world = world_mod.open_world()
    if ranks is not None and ranks != world.size:
        raise SpecError(f"{asked} but the MPI job has {world.size} ranks")
    with world_mod.abort_on_error(world):
        return execute(world)


def launch_or_join(
    specs: list[RunSpec],
    argv: Sequence[str],
    execute: Callable[[Comm, list[RunSpec]], int],
    ranks: int | None,
    output: str | None,
) -> int:
    """Outside an MPI job with `ranks` > 1: probe the target, start hpcio again under mpiexec
    and clean up after the job if it fails. Inside one (or with one rank): run `execute` here.

    Args:
        specs: validated runs; their `ranks` is set to the MPI world's size here.
        argv: the command line, passed to the ranks less its --store-option pairs.
        execute: runs the specs on this rank, inside abort_on_error.
        ranks: -n, None when not given.
        output: -o, None when not given; rank 0 first recovers what an older hpcio kept aside.
    """
    from hpcio.runner import mpiexec
    from hpcio.runner import world as world_mod

    world_mod.refuse_tasks_without_mpi()  # before it would start an mpiexec per task
    job = journal.set_up()  # before the launch: every rank inherits it
    if not world_mod.inside_mpi_job() and (ranks or 1) > 1:
        from hpcio.runner.run import probe_target

        if output:
            results_io.recover_partial(output)
        probe_target(specs[0])
        rank_argv, pairs = argv_without_store_options(argv)
        os.environ[STORE_OPTIONS_VARIABLE] = json.dumps(pairs)  # the ranks inherit it
        with _spooled(output) as written:
            before = _size(written)
            try:
                code = mpiexec.relaunch(ranks or 1, rank_argv)
            except KeyboardInterrupt:
                cleanup.clean_up_after(specs, job, written, before, stopped=True)
                raise
            if code != 0:
                cleanup.after_failed_job(code, specs, job, written, before)
            else:
                cleanup.after_finished_job(specs)
            return code

    def here(world: Comm) -> int:
        if output and world.rank == 0:
            results_io.recover_partial(output)  # a run launched by hand that did not end
        return execute(world, [dataclasses.replace(s, ranks=world.size) for s in specs])

    return join(here, ranks, f"-n {ranks}")


def launch_groups(
    groups: dict[tuple[int, int | None], list[RunSpec]],
    output: str,
    group_argv: Callable[[int, int | None], list[str]],
    execute: Callable[[Comm, tuple[int, int | None]], int],
    announce: Callable[[int, int | None, list[RunSpec]], None],
    terminal_width: bool = False,
) -> int:
    """Run each group of points with the same (ranks, ranks per node) in one mpiexec launch
    (a group of one rank runs here, without MPI); stop at the first group that fails, after
    cleaning up after it. Returns the failed group's exit code, else 0.

    Args:
        output: the results file the ranks append to.
        group_argv: the command line of a group's ranks.
        execute: runs a group's points on this process (a world of one).
        announce: called before each group starts.
        terminal_width: tell the ranks this terminal's width (their stdout is mpiexec's pipe).
    """
    from hpcio.runner import mpiexec
    from hpcio.runner import world as world_mod
    from hpcio.runner.run import probe_target

    world_mod.refuse_tasks_without_mpi()
    job = journal.set_up()  # before any launch: every rank inherits it
    points = [p for group in groups.values() for p in group]
    for point in {p.target.url: p for p in points}.values():
        probe_target(point)  # before any launch: a missing directory is one line, at once
    template = os.environ.get("HPCIO_MPIEXEC", "")
    if any(p.ranks_per_node for p in points) and "{ppn}" not in template:
        print(
            "hpcio suite: ranks per node are recorded in each point, not enforced: every rank "
            "runs on this machine (to place them, set HPCIO_MPIEXEC with {ppn}, see "
            "docs/suites.md)",
            flush=True,
        )
    for (ranks, per_node), group in groups.items():
        announce(ranks, per_node, group)
        before = 0
        if ranks == 1:
            serial = world_mod.SerialComm()
            with world_mod.abort_on_error(serial):
                code = execute(serial, (1, per_node))
        else:
            before = _size(output)
            try:
                with _launcher(template, ranks, per_node, terminal_width):
                    code = mpiexec.relaunch(ranks, group_argv(ranks, per_node))
            except KeyboardInterrupt:
                cleanup.clean_up_after(group, job, output, before, stopped=True)
                raise
        if code:
            cleanup.after_failed_job(code, group, job, output, before)
            return code
        cleanup.after_finished_job(group)
    return 0


@contextlib.contextmanager
def _launcher(
    template: str, ranks: int, per_node: int | None, terminal_width: bool
) -> Iterator[None]:
    """HPCIO_MPIEXEC with {ppn} and {nodes} filled in for this group, and the terminal's
    width for the ranks' bar (their stdout is mpiexec's pipe, so they cannot ask)."""
    saved = {name: os.environ.get(name) for name in ("HPCIO_MPIEXEC", "COLUMNS")}
    try:
        if "{ppn}" in template or "{nodes}" in template:
            ppn = per_node or ranks
            os.environ["HPCIO_MPIEXEC"] = template.format(ppn=ppn, nodes=math.ceil(ranks / ppn))
        if terminal_width:
            os.environ["COLUMNS"] = str(shutil.get_terminal_size().columns)
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextlib.contextmanager
def _spooled(output: str | None) -> Iterator[str | None]:
    """-o -: the file rank 0 writes the documents to (results/io.py SPOOL_VARIABLE), printed
    once the job has ended however it ended; any other -o as it is."""
    if output != results_io.STDOUT:
        yield output
        return
    fd, spool = tempfile.mkstemp(prefix="hpcio-stdout-", suffix=".jsonl")
    os.close(fd)
    os.environ[results_io.SPOOL_VARIABLE] = spool  # the ranks inherit it
    try:
        yield spool
    finally:
        results_io.print_spooled(spool)
        os.unlink(spool)
        del os.environ[results_io.SPOOL_VARIABLE]


def _size(path: str | None) -> int:
    try:
        return os.path.getsize(path) if path else 0
    except OSError:
        return 0
