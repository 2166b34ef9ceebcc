"""What a run will take from its node and its target, checked before any byte moves: memory
for its transfer buffers, and (POSIX) disk space for the data it keeps at its peak. A typo in
a size must be refused here, not found by the node's OOM killer or a full file system."""

from __future__ import annotations

import contextlib
import os
import socket
from typing import TYPE_CHECKING

from hpcio.errors import SpecError
from hpcio.runner.cleanup import OWN_PREFIX, written_keys
from hpcio.runner.lock import LOCK_KEY
from hpcio.runner.world import Comm
from hpcio.units import format_bytes
from hpcio.workloads.contract import MemoryNeed

if TYPE_CHECKING:
    from hpcio.spec.model import RunSpec

#: Buffers may take this share of the memory the node has available; the rest is for the
#: plans, MPI, the page cache and everyone else on a shared node.
MEMORY_SHARE = 0.75


def memory_need(run: RunSpec, ranks_per_node: int) -> MemoryNeed:
    """Buffers on the busiest node, as the run's workload counts them."""
    return run.workload.memory(run, ranks_per_node)


def check_memory(run: RunSpec, ranks_per_node: int, available_bytes: int) -> None:
    """Refuse a run whose buffers would not fit in the node's memory.

    Args:
        ranks_per_node: ranks on the busiest node.
        available_bytes: the node's MemAvailable; 0 when unknown (nothing is checked).

    Raises:
        SpecError: one line naming the figure and the options that lower it.
    """
    if available_bytes <= 0:
        return
    need = memory_need(run, ranks_per_node)
    spare = int(available_bytes * MEMORY_SHARE)
    if need.bytes > spare:
        raise SpecError(
            f"buffers would take {format_bytes(need.bytes)} per node ({need.breakdown}), more "
            f"than the {format_bytes(spare)} a node can spare ({MEMORY_SHARE:.0%} of its "
            f"{format_bytes(available_bytes)} MemAvailable): lower {need.options}"
        )


def available_memory_bytes(meminfo: str = "/proc/meminfo") -> int:
    """MemAvailable of this node, 0 when unknown."""
    try:
        with open(meminfo, encoding="ascii") as lines:
            for line in lines:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def disk_need(run: RunSpec, directory: str) -> int:
    """New bytes the run keeps in `directory` at its peak, all ranks: its files once (every
    iteration and a time-based rewrite reuse the same files, --keep or not), less what files
    of the same names already hold there; nothing for a run that only reads."""
    if not run.writes:
        return 0
    workload = run.workload
    existing = 0
    if not _holds_own_files(directory):
        # Nothing of hpcio's there to reuse: the run's keys are not listed (a run of 10^8 files
        # would build and stat them all before it is refused).
        return workload.stored_bytes(run)
    for key in written_keys([run]):
        with contextlib.suppress(OSError):
            existing += os.stat(os.path.join(directory, key)).st_size
    return max(0, workload.stored_bytes(run) - existing)


def _holds_own_files(directory: str) -> bool:
    """Some name in `directory` is hpcio's (every key's first component starts with "hpcio-"),
    besides the run lock."""
    try:
        with os.scandir(directory) as entries:
            return any(e.name.startswith(OWN_PREFIX) and e.name != LOCK_KEY for e in entries)
    except OSError:
        return False


def check_space(run: RunSpec, directory: str) -> None:
    """Refuse a POSIX run whose data will not fit in its directory's free space.

    Raises:
        SpecError: one line naming the figure, the free space and the options that help.
    """
    need = disk_need(run, directory)
    if need == 0:
        return
    try:
        stats = os.statvfs(directory)
    except OSError:
        return  # the target's probe reports a directory it cannot use
    if stats.f_blocks == 0:
        return  # no size at all (ramfs, some FUSE mounts): free space is not reported
    free = stats.f_bavail * stats.f_frsize
    if need > free:
        workload = run.workload
        raise SpecError(
            f"the run keeps {format_bytes(need)} on {run.target.url} at its peak "
            f"({workload.disk_words(run)}), more than the {format_bytes(free)} free there: "
            f"lower {workload.lower['disk']}, or give --no-space-check if the file system "
            "reports free space wrongly"
        )


def cores_per_node(world: Comm) -> int | None:
    """The fewest cores the ranks of any one node may run on between them (the union of their
    CPU affinity masks: a launcher that binds each rank to a core still gives the node's ranks
    as many cores as ranks). Collective; rank 0 gets the figure, the others None."""
    mine = {socket.gethostname(): frozenset(os.sched_getaffinity(0))}
    # Reduced, not gathered: each node's mask once, however many ranks it runs.
    cores = world.reduce(mine, _union_by_host)
    if cores is None:
        return None
    return min(len(cpus) for cpus in cores.values())


def _union_by_host(
    a: dict[str, frozenset[int]], b: dict[str, frozenset[int]]
) -> dict[str, frozenset[int]]:
    return {host: a.get(host, frozenset()) | b.get(host, frozenset()) for host in {*a, *b}}
