"""--dry-run: what a run would do, without moving a byte: its ranks, files or objects, bytes
and transfers per phase, the buffers a node would hold and the space the data needs. The
figures are the ones the run's checks and plans use, from the workload itself."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

from hpcio.errors import TargetError
from hpcio.runner import resources
from hpcio.units import format_bytes

if TYPE_CHECKING:
    from hpcio.spec.model import RunSpec


def refuse_as_the_run_would(run: RunSpec) -> None:
    """The refusals of the run's own checks (runner/run.py probe_target) that need no byte
    written and no lock taken: a dry run says no where the run would, with the same line.

    Raises:
        SpecError: buffers beyond the node's memory, a store's part limits, data beyond the
            target's free space.
        TargetError: a POSIX target directory that is missing or not a directory.
    """
    from hpcio.runner.pagecache import check_drop_caches
    from hpcio.workloads.limits import check_limits

    if run.drop_caches:
        check_drop_caches()
    per_node = run.ranks_per_node or run.ranks
    resources.check_memory(run, per_node, resources.available_memory_bytes())
    if run.target.is_object_store:
        if run.writes:
            check_limits(run.target.kind, run.workload.objects_written(run), _limits(run))
        return
    if not run.target.traits.lasting:
        return
    if not os.path.exists(run.target.path):
        raise TargetError(f"target {run.target.url} does not exist")
    if not os.path.isdir(run.target.path):
        raise TargetError(f"target {run.target.url} is not a directory")
    if run.space_check:
        resources.check_space(run, run.target.path)


def _limits(run: RunSpec) -> dict[str, int]:
    """The store's part limits as the engine reports them, or the target-kind table's where
    the engine cannot open the target here (no credentials: a dry run needs none)."""
    from hpcio.runner.run import open_target

    try:
        return {k: int(v) for k, v in open_target(run).limits().items()}
    except TargetError:
        parts = run.target.traits.limits
        return {"min_part_bytes": parts.min_part_bytes, "max_part_bytes": parts.max_part_bytes,
                "max_parts": parts.max_parts, "max_object_bytes": 0}  # fmt: skip


def lines(run: RunSpec) -> Iterator[str]:
    workload = run.workload
    per_node = run.ranks_per_node or run.ranks
    nodes = -(-run.ranks // per_node)
    what = workload.describe(run)
    on = ", ".join(t.shown for t in run.targets)
    yield (
        f"{run.workload.name} on {on}: {run.ranks} rank(s) on {nodes} node(s) "
        f"({per_node} per node), {what + ', ' if what else ''}{run.iterations} iteration(s)"
    )
    keys = run.workload.keys(run) if run.writes else []
    kind = "object(s)" if run.target.is_object_store else "file(s)"
    if keys:
        shown = ", ".join(keys[:3]) + (", ..." if len(keys) > 3 else "")
        yield f"  {len(keys)} {kind} ({shown}), {format_bytes(workload.stored_bytes(run))} kept"
    prepared = workload.prepare(run)
    if prepared is not None:
        yield f"  laid out first, untimed: {format_bytes(workload.stored_bytes(prepared))}"
    for phase in workload.phases(run):
        moved = workload.moved_bytes(run, phase)
        counted = workload.planned_transfers(run, phase)
        calls = f", {counted:,} transfers" if counted is not None else ""
        if counted is not None and run.target.is_object_store:
            calls += " (a request each; an object written in parts adds a create and a complete)"
        yield f"  {phase.value} phase: {format_bytes(moved)} per iteration{calls}"
    need = resources.memory_need(run, per_node)
    spare = int(resources.available_memory_bytes() * resources.MEMORY_SHARE)
    yield (
        f"  memory: {format_bytes(need.bytes)} per node ({need.breakdown}); "
        f"{format_bytes(spare)} to spare here"
    )
    if not run.target.is_object_store:
        yield "  " + _space(run)


def _space(run: RunSpec) -> str:
    need = resources.disk_need(run, run.target.path)
    try:
        stats = os.statvfs(run.target.path)
        free = f"{format_bytes(stats.f_bavail * stats.f_frsize)} free there"
    except OSError:
        free = f"{run.target.path} cannot be read"
    return f"space: needs {format_bytes(need)} more on {run.target.url}; {free}"
