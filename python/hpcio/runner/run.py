"""One run: prepare, iterate the timed phases, clean up, and build the result document."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import os
import shlex
import socket
import sys
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import hpcio
from hpcio import _engine
from hpcio.errors import HpcioError, RunFailedError, TargetError
from hpcio.results.schema import (
    KIND,
    SCHEMA_VERSION,
    Footprint,
    PhaseFigures,
    ResultDocument,
    TargetFigures,
)
from hpcio.runner import ceiling, interrupts, journal, lock, machine, resources, tracing
from hpcio.runner.aggregate import (
    PhaseFrame,
    PhaseShare,
    RankFigures,
    RankRow,
    merged_by_target,
    rank_row,
    reduced_figures,
    summarize,
    target_figures,
)
from hpcio.runner.cleanup import remove_empty_directories, remove_probe, written_keys
from hpcio.runner.cpu import client_bound_warnings
from hpcio.runner.pagecache import (
    cache_record,
    check_drop_caches,
    drop_page_caches,
    node_ram_bytes,
    read_warnings,
    write_warnings,
)
from hpcio.runner.phase import run_phase
from hpcio.runner.stage import Stage
from hpcio.runner.world import Comm, Topology, topology
from hpcio.workloads import striping
from hpcio.workloads.contract import Phase, RankInfo
from hpcio.workloads.limits import check_limits

if TYPE_CHECKING:
    from hpcio.spec.model import RunSpec

Progress = Callable[[PhaseFigures], None]
#: Called on rank 0 after each iteration with the document of the iterations so far.
SoFar = Callable[[ResultDocument], None]


def open_target(run: RunSpec) -> _engine.Target:
    """This rank's engine handle on the run's target. Store options and credentials go to the
    engine only; they are never printed or recorded."""
    journal_dir, job = journal.engine_options()
    try:
        return _engine.Target(
            run.target.url,
            direct=run.direct,
            in_flight=requests_in_flight(run),
            options=dict(run.target.options),
            journal_dir=journal_dir,
            job=job,
        )
    except ValueError as e:
        raise TargetError(f"target {run.target.url}: {e}") from None


def requests_in_flight(run: RunSpec) -> int:
    """Requests a rank can have in flight, as its workload counts them: an object store's I/O
    threads and warmed connections are sized by it."""
    return run.workload.in_flight(run)


_REASONS = {
    2: "does not exist",
    20: "is not a directory",
    13: "is not writable (permission denied)",
    30: "is on a read-only file system",
    1: "is not writable",
}


#: File systems of the kernel's own, where no data file or directory can be made.
_PSEUDO_FILE_SYSTEMS = frozenset({"proc", "sysfs", "cgroup", "cgroup2", "debugfs", "tracefs",
                                  "securityfs", "configfs", "pstore", "bpf"})  # fmt: skip


def _refusal(path: str, e: OSError) -> str:
    """Why a POSIX target refused its probe, and what to do, after "target URL"."""
    if e.errno == 2 and os.path.isdir(path):
        # The directory is there but refuses new files: /proc, /sys and their kind.
        kind = ceiling.file_system_type(path) or "unknown"
        return f"is not a usable file system (type {kind}): no file can be created there"
    what = _REASONS.get(e.errno or 0, f"cannot be used: {e.strerror or e}")
    if e.errno == 2 and not os.path.exists(path):
        kind = ceiling.file_system_type(_nearest_existing(path))
        if kind in _PSEUDO_FILE_SYSTEMS:
            return f"{what}, and no directory can be made there (a {kind} file system)"
        # Never made for the user: a typo must not grow a tree.
        what += f"; create it with: mkdir -p {shlex.quote(path)}"
    return what


def _nearest_existing(path: str) -> str:
    """`path` or the closest of its parents that exists."""
    path = os.path.abspath(path)
    while not os.path.exists(path):
        path = os.path.dirname(path)
    return path


def probe_target(run: RunSpec, ranks_per_node: int | None = None) -> None:
    """Fail before any rank moves a byte if the target cannot be used the way `run` will, if
    the run would break one of the store's limits, or if its buffers or data would not fit.

    Args:
        ranks_per_node: ranks on the busiest node; None before launching, where a self-launch
            puts every rank on this node (a launcher of the user's own: not known yet).

    Raises:
        TargetError: missing, not a directory, read-only, O_DIRECT refused; for object stores
            an unknown bucket, rejected credentials or an unreachable endpoint.
        SpecError: a part size or object size the store would reject; buffers beyond the
            node's memory; POSIX data beyond the target's free space.
        TargetError: another run holds the target directory (see runner/lock.py); this
            process holds it from here on.
    """
    if run.drop_caches:
        check_drop_caches()
    if ranks_per_node is None and "HPCIO_MPIEXEC" not in os.environ:
        ranks_per_node = run.ranks_per_node or run.ranks
    if ranks_per_node is not None:
        resources.check_memory(run, ranks_per_node, resources.available_memory_bytes())
    # Several targets: each is probed and locked as if it were the run's only one.
    for each in run.each_target():
        _probe_one(each)


def _probe_one(run: RunSpec) -> None:
    target = open_target(run)
    # Only reading what an earlier run left (--phases read): no part limits, no write probe.
    writes = run.writes
    if run.target.is_object_store and writes:
        written = run.workload.objects_written(run)
        check_limits(run.target.kind, written, target.limits())
    try:
        target.probe(write=writes)
    except OSError as e:
        if run.target.is_object_store:
            # A store that refused the probe outright (no connection, credentials rejected or
            # access denied, no such bucket) holds no probe object: there is nothing to remove,
            # and trying would wait out every retry of every DELETE.
            refused = (ConnectionRefusedError, PermissionError, FileNotFoundError)
            if writes and not isinstance(e, refused):
                remove_probe(target)
            raise TargetError(f"target {run.target.url}: {e.strerror or e}") from None
        if run.direct and e.errno == 22:
            raise TargetError(
                f"target {run.target.url}: its file system refuses O_DIRECT "
                "(--direct); run without --direct"
            ) from None
        raise TargetError(f"target {run.target.url} {_refusal(run.target.path, e)}") from None
    lock.hold(run)
    if not run.target.is_object_store and run.space_check:
        resources.check_space(run, run.target.path)


def execute(
    world: Comm,
    run: RunSpec,
    progress: Progress | None = None,
    so_far: SoFar | None = None,
    interrupted: Callable[[], None] | None = None,
    trace_root: str | None = None,
) -> ResultDocument | None:
    """Run `run` on every rank of `world`; rank 0 gets the document, the others None.
    `interrupted` is called first when a signal stops the run, before its files go. With
    --trace, every rank writes its operations under `trace_root` (runner/tracing.py).

    Raises:
        TargetError: the target failed its probe (on every rank alike).
        RunFailedError: an operation failed or verification found wrong data (every rank alike).
    """
    topo = topology(world)
    # The probe first: a refused run answers at once, without the facts' MPI start (the MPI
    # library's version is read through mpi4py, whose import initialises MPI).
    _probe_on_rank0(world, run, topo.ranks_per_node)
    facts = _RunFacts.gather(world, run, topo)
    who = RankInfo(world.rank, world.size, topo.node, topo.local_rank, topo.ranks_per_node,
                   topo.nodes, topo.placement)  # fmt: skip
    # With several targets, rank r works on target r mod K alone (spec/target.py target_of);
    # the document is the whole run's (facts.run).
    mine = run.for_rank(world.rank)
    target = open_target(mine)
    # Set up once, before the first barrier, what the first phase would otherwise pay for
    # and the later ones not (IOR allocates before it times): pooled store connections.
    target.warm(requests_in_flight(mine))
    stage = Stage(world, target, mine, who, _tracer(world, run, trace_root), run)
    figures: list[PhaseFigures] = []
    drops: Counter[str] = Counter()  # page-cache drops by host, on rank 0

    def keep_so_far(done: PhaseFigures | None) -> None:
        if done is None:  # an iteration ended: rank 0 keeps the document so far
            if so_far is not None and world.rank == 0:
                so_far(facts.document(target, figures, drops, None, "interrupted"))
            return
        figures.append(done)
        if progress:
            progress(done)

    _iterations(stage, keep_so_far, drops, interrupted)
    traced = _trace_record(stage)
    if world.rank != 0:
        return None
    return facts.document(target, figures, drops, traced, "complete")


@dataclasses.dataclass(frozen=True)
class _RunFacts:
    """What a run's document says beside its figures, read before the first phase."""

    run: RunSpec
    started: str
    version: str
    topology: Topology
    ranks: int
    cores: int | None
    software: dict[str, Any] | None
    storage: dict[str, Any] | None
    command: tuple[str, ...]
    read_ceiling: ceiling.Ceiling | None

    @classmethod
    def gather(cls, world: Comm, run: RunSpec, topo: Topology) -> _RunFacts:
        return cls(
            run=run,
            started=_utc_now(),
            # Before the phases: its first lookup imports importlib.metadata.
            version=hpcio.__version__,
            topology=topo,
            ranks=world.size,
            cores=resources.cores_per_node(world),
            software=machine.software(probe=False) if world.rank == 0 else None,
            storage=_storage(run) if world.rank == 0 else None,
            command=("hpcio", *machine.command_line(sys.argv[1:])),
            read_ceiling=None if run.target.is_object_store else ceiling.ceiling(run.target.path),
        )

    def document(
        self,
        target: _engine.Target,
        figures: list[PhaseFigures],
        drops: Counter[str],
        traced: dict[str, object] | None,
        status: str,
    ) -> ResultDocument:
        run, topo = self.run, self.topology
        reads = bool({Phase.READ, Phase.MIXED} & set(run.workload.phases(run)))
        cache = cache_record(
            run, run.workload, topo.nodes, node_ram_bytes(), reads, self.read_ceiling
        )
        if drops:
            cache = dataclasses.replace(cache, caches_dropped_by_host=dict(drops))
        in_ram = self.read_ceiling is not None and self.read_ceiling.in_ram
        return ResultDocument(
            schema_version=SCHEMA_VERSION,
            kind=KIND,
            hpcio_version=self.version,
            started_at_utc=self.started,
            finished_at_utc=_utc_now(),
            hosts=topo.hosts,
            ranks=self.ranks,
            nodes=topo.nodes,
            ranks_per_node=topo.ranks_per_node,
            cores_per_node=self.cores,
            software=self.software,
            command_line=self.command,
            storage=self.storage,
            footprint=_footprint(run),
            run=run.to_dict(),
            cache=cache,
            phases=tuple(figures),
            summary=summarize(figures),
            engine=engine_record(target),
            trace=traced,
            status=status,
            warnings=read_warnings(cache, figures, topo.nodes, in_ram)
            + write_warnings(run, cache, figures)
            + client_bound_warnings(
                figures, "bandwidth" if run.workload.shows_bandwidth else "rates of calls (ops/s)"
            )
            + tracing.warnings(traced)
            + striping.warnings(run, run.workload),
        )


def _storage(run: RunSpec) -> dict[str, Any]:
    """The storage record of the run's first target; with several, each one's under
    `targets` (its endpoint and where its credentials come from, never a credential)."""
    record = machine.storage(run.target)
    if run.extra_targets:
        record["targets"] = [machine.storage(t) for t in run.targets]
    return record


def _footprint(run: RunSpec) -> Footprint:
    """What the run keeps on its target, as its workload says (for `hpcio cost`, which reads
    documents only)."""
    written = run.workload.objects_written(run)
    return Footprint(
        stored_bytes=run.workload.stored_bytes(run),
        largest_object_bytes=max((w.bytes for w in written), default=0),
        largest_part_bytes=max((w.part_bytes for w in written), default=1),
    )


def _probe_on_rank0(world: Comm, run: RunSpec, ranks_per_node: int) -> None:
    """Rank 0 probes the target; its refusal is raised on every rank alike."""
    problem: HpcioError | None = None
    if world.rank == 0:
        try:
            probe_target(run, ranks_per_node)
        except HpcioError as e:
            problem = e
    problem = world.bcast(problem)
    if problem is not None:
        problem.every_rank = True
        raise problem


def _iterations(
    stage: Stage,
    keep: Callable[[PhaseFigures | None], None],
    drops: Counter[str],
    interrupted: Callable[[], None] | None,
) -> None:
    """The run's untimed layout, then its iterations of timed phases, each phase's figures
    (rank 0) and each iteration's end (None) handed to `keep`; files removed as IOR does."""
    world, run, workload = stage.world, stage.run, stage.workload
    phases = list(workload.phases(run))
    # Like IOR without -k: files go after each iteration that wrote them, so iterations are
    # alike and disks do not fill; data laid out once for reading goes once, at the end; data
    # an earlier run left (--phases read) is never this run's to remove.
    rewrites = Phase.WRITE in phases
    removes_at_end = not run.keep and run.writes and not rewrites
    try:
        prepared = workload.prepare(run)
        if prepared is not None:
            _phase(stage.with_run(prepared), Phase.WRITE, 0)
        for iteration in range(run.iterations):
            laid_out = workload.lay_out(run)
            if laid_out is not None:
                _phase(stage.with_run(laid_out), Phase.WRITE, iteration)
            for phase in phases:
                if phase in (Phase.READ, Phase.MIXED) and run.drop_caches:
                    drops.update(_drop_caches(world, stage.who))
                result = _phase(stage, phase, iteration)
                if result is not None:
                    keep(result)
            if not run.keep and rewrites:
                _remove_everywhere(stage, run)
            keep(None)
    except KeyboardInterrupt:
        _write_trace(stage.tracer)
        # Say it before removing: mpiexec may SIGKILL a rank 1 s after its SIGTERM, and
        # removing files with dirty pages can take that long.
        if interrupted is not None:
            with contextlib.suppress(OSError):  # stderr went with a SIGKILLed mpiexec
                interrupted()
        if not run.keep and run.writes:
            for each in stage.on_every_target(run):
                target = stage.target if each is run else open_target(each)
                _remove_after_interrupt(world, target, each)
        raise
    except BaseException:
        _write_trace(stage.tracer)
        if removes_at_end:
            _remove_after_failure(stage, run)
        raise
    if removes_at_end:
        _remove_everywhere(stage, run)


def _trace_record(stage: Stage) -> dict[str, object] | None:
    """With --trace, every rank writes its operations; rank 0 gets the document's record."""
    if stage.tracer is None:
        return None
    counts = stage.world.gather((stage.tracer.write(), stage.tracer.not_kept))
    if counts is None:
        return None
    return tracing.record(stage.tracer.directory, stage.world.size, counts)


def _tracer(world: Comm, run: RunSpec, root: str | None) -> tracing.Tracer | None:
    """This rank's tracer (None without --trace), its origin read right after a barrier."""
    if not run.trace:
        return None
    name = str(world.bcast(tracing.run_id(run) if world.rank == 0 else None))
    directory = os.path.join(root or tracing.root_for(None), name)
    world.barrier()
    return tracing.Tracer(world.rank, _engine.clock_ns(), directory, run)


def _write_trace(tracer: tracing.Tracer | None) -> None:
    """A stopped or failed run's trace, as far as it got (each rank alone: no collective)."""
    if tracer is not None:
        with contextlib.suppress(OSError):
            tracer.write()


def engine_record(target: _engine.Target) -> dict[str, object]:
    """How the engine ran: a debug build's figures are meaningless; S3 bodies signed or not."""
    record: dict[str, object] = {"debug_build": _engine.debug_build()}
    signing = target.payload_signing()
    if signing is not None:
        record["payload_signing"] = signing
    return record


def _drop_caches(world: Comm, who: RankInfo) -> list[str]:
    """One rank per node drops its page cache, outside any timed phase; all wait for it.
    Rank 0 gets the names of the hosts that dropped theirs (each as its rank saw it), the
    others an empty list.

    Raises:
        RunFailedError: a node could not (on every rank alike).
    """
    world.barrier()
    done: tuple[str, str | None] | None = None
    if who.local_rank == 0:
        try:
            drop_page_caches()
            done = (socket.gethostname(), None)
        except RunFailedError as e:
            done = (socket.gethostname(), f"node {who.node}: {e}")
    outcomes = [o for o in world.gather(done) or () if o is not None]
    failure = world.bcast(next((problem for _, problem in outcomes if problem), None))
    if failure:
        raise RunFailedError(failure, every_rank=True)
    return [host for host, _ in outcomes]


def _phase(stage: Stage, phase: Phase, iteration: int) -> PhaseFigures | None:
    """One phase on all ranks; rank 0 gets the figures. Any rank's error fails every rank."""
    world, run = stage.world, stage.run
    mine = run_phase(stage, phase)
    # Reduced up a tree, not gathered: rank 0 would otherwise receive every rank's histogram,
    # timeline and latency series (tens of KiB each). Only the raw times (and a Python
    # body's metrics, which its workload reduces) come to rank 0 from every rank.
    frame = world.allreduce(PhaseFrame.of(mine), PhaseFrame.merged)
    share = world.reduce(PhaseShare.of(mine, frame), PhaseShare.merged)
    rows = world.gather((rank_row(mine), mine.metrics))
    per_target = _per_target(stage, mine)
    figures, failure = None, None
    if share is not None and rows is not None:
        figures = reduced_figures(phase.value, iteration, frame, share, [r for r, _ in rows])
        if per_target is not None:
            figures = dataclasses.replace(figures, targets=per_target(rows))
        metrics = stage.workload.reduce_metrics([m for _, m in rows if m])
        if metrics:
            figures = dataclasses.replace(figures, metrics=metrics)
        if figures.errors:
            failure = (
                f"{phase.value} phase of iteration {iteration + 1} failed: "
                f"{figures.first_errors[0]}"
            )
            if figures.errors > 1:
                failure += f" (and {figures.errors - 1} more errors)"
    # The other ranks wait for rank 0's figures asleep in a barrier, not spinning in the
    # broadcast: a rank that spun through them (20-40 ms on a busy node) lost its core inside
    # the next phase's first collective call.
    world.barrier()
    failure = world.bcast(failure)
    if failure:
        if not run.keep and run.writes:
            _remove_after_failure(stage, run)
        raise RunFailedError(failure, every_rank=True)
    return figures


def _per_target(
    stage: Stage, mine: RankFigures
) -> Callable[[list[tuple[RankRow, Any]]], tuple[TargetFigures, ...]] | None:
    """With several targets, every target's frame and share reduced over its own ranks (two
    more reductions, keyed by target index); rank 0 gets how to make each target's figures
    from the gathered rows, the others (and a run with one target) None."""
    whole = stage.whole_run
    if whole is None or not whole.extra_targets:
        return None
    world, targets = stage.world, whole.targets
    index = whole.target_index(world.rank)
    frames = world.allreduce({index: PhaseFrame.of(mine)}, merged_by_target)
    shares = world.reduce({index: PhaseShare.of(mine, frames[index])}, merged_by_target)
    if shares is None:
        return None

    def figures(rows: list[tuple[RankRow, Any]]) -> tuple[TargetFigures, ...]:
        return tuple(
            target_figures(
                t.url, t.endpoint, frames[i], shares[i],
                [r for r, _ in rows if whole.target_index(r[0]) == i],
            )
            for i, t in enumerate(targets)
            if i in shares
        )  # fmt: skip

    return figures


def remove_written(world: Comm, run: RunSpec, *, stopped: bool = False) -> None:
    """Remove what `run` wrote and kept (a later run read it), every rank its share; after a
    stop (`stopped`), without waiting for the others, which may be gone."""
    if stopped:
        _remove_after_interrupt(world, open_target(run), run)
    else:
        _remove(world, open_target(run), run)


def _remove_everywhere(stage: Stage, run: RunSpec) -> None:
    """`_remove` on every target of the run (with several, a rank's share of the keys may
    have been written to any of them)."""
    for each in stage.on_every_target(run):
        _remove(stage.world, stage.target if each is run else open_target(each), each)


def _remove(world: Comm, target: _engine.Target, run: RunSpec) -> None:
    """Every rank removes its share of the files, then all wait (outside any timed phase).

    Raises:
        RunFailedError: a rank could not remove its share (on every rank alike: one line).
    """
    keys = written_keys([run])
    problem = None
    try:
        # Threaded: unlinking can wait seconds for the file system's journal, signals must not.
        interrupts.wait_for(lambda: target.remove(keys[world.rank :: world.size]))
    except OSError as e:
        problem = f"rank {world.rank}: {e.strerror or e}"
    problems = [p for p in world.allgather(problem) if p is not None]
    if problems:
        others = len(problems) - 1
        more = f" (and {others} more rank{'s' if others > 1 else ''})" if others else ""
        raise RunFailedError(f"cannot remove the run's files: {problems[0]}{more}",
                             every_rank=True)  # fmt: skip
    if world.rank == 0:
        remove_empty_directories(run.target, keys)


def _remove_after_failure(stage: Stage, run: RunSpec) -> None:
    """`_remove_everywhere` after the run failed: a removal that fails too (the store's fault
    again) must not hide why the run failed; the launcher or `hpcio clean` removes the rest."""
    with contextlib.suppress(RunFailedError):
        _remove_everywhere(stage, run)


def _remove_after_interrupt(world: Comm, target: _engine.Target, run: RunSpec) -> None:
    """Each rank removes its share without waiting for the others, which may be gone; rank 0
    removes every file, in case another rank was killed before it could."""
    keys = written_keys([run])
    mine = keys if world.rank == 0 else keys[world.rank :: world.size]
    with contextlib.suppress(OSError):  # `hpcio clean` removes what is left
        target.remove(mine)
        remove_empty_directories(run.target, mine)


def _utc_now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
