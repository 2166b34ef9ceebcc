"""What a run will take from its node and its target, checked before any byte moves: memory
for its transfer buffers, and (POSIX) disk space for the data it keeps at its peak. A typo in
a size must be refused here, not found by the node's OOM killer or a full file system."""

from __future__ import annotations

import contextlib
import os
import socket
from dataclasses import dataclass

from hpcio.errors import SpecError
from hpcio.runner.cleanup import written_keys
from hpcio.runner.world import Comm
from hpcio.spec.model import RunSpec
from hpcio.units import format_bytes

#: Buffers may take this share of the memory the node has available; the rest is for the
#: plans, MPI, the page cache and everyone else on a shared node.
MEMORY_SHARE = 0.75


@dataclass(frozen=True, slots=True)
class MemoryNeed:
    """Bytes a node's ranks hold in buffers at once, and how that figure is made up."""

    bytes: int
    breakdown: str
    #: The options that make the figure smaller.
    options: str


def lanes(run: RunSpec, transfers: int) -> int:
    """Buffers one engine call holds: one per transfer in flight, never more than transfers."""
    return max(1, min(run.in_flight, transfers))


def transfers_per_rank(run: RunSpec) -> int:
    """Transfers in one engine call of a rank: its phase's whole plan (sfmr's whole-file read:
    the file), or for master I/O one gather chunk."""
    if run.pattern == "sfsw":
        return gather_chunk_bytes(run) // run.transfer_bytes
    if run.pattern == "sfmr" and run.read_scope == "all":
        return run.file_bytes // run.transfer_bytes
    return run.size_per_rank_bytes // run.transfer_bytes


def gather_chunk_bytes(run: RunSpec) -> int:
    """The largest piece master I/O moves at once: --gather-chunk in whole transfers, within
    one rank's block (as workloads/patterns/sfsw.py cuts them, without listing them all)."""
    chunk = max(
        run.transfer_bytes, run.gather_chunk_bytes // run.transfer_bytes * run.transfer_bytes
    )
    return min(chunk, run.block_bytes)


def memory_need(run: RunSpec, ranks_per_node: int) -> MemoryNeed:
    """Buffers on the busiest node: each rank's lanes x transfer; in master I/O the collector
    also holds two gather chunks and every other rank one; a memory:// target holds the data."""
    transfer = format_bytes(run.transfer_bytes)
    per_rank = lanes(run, transfers_per_rank(run)) * run.transfer_bytes
    in_flight = f"{lanes(run, transfers_per_rank(run))} in flight x {transfer} transfer"
    if run.pattern == "sfsw":
        chunk = gather_chunk_bytes(run)
        others = ranks_per_node - 1
        need = per_rank + 2 * chunk + others * chunk
        breakdown = f"rank 0: {in_flight} + 2 gather chunks of {format_bytes(chunk)}"
        if others:
            breakdown += f"; {others} other rank(s): 1 chunk each"
        options = "--gather-chunk, --in-flight or --transfer"
    else:
        need = ranks_per_node * per_rank
        breakdown = f"{ranks_per_node} rank(s) x {in_flight}"
        options = _options(run, "--in-flight or --transfer")
    if run.target.kind == "memory":
        need += run.file_bytes
        breakdown += f" + {format_bytes(run.file_bytes)} of data in memory://"
        options = f"{_options(run, '--size-per-rank')}, {options}"
    return MemoryNeed(need, breakdown, options)


def _options(run: RunSpec, plain: str) -> str:
    """The options of the command that made `run` for what `plain` names in `hpcio run`."""
    if run.profile is None:
        return plain
    iozone = run.profile.startswith("iozone:")
    return {
        "--in-flight or --transfer": "--record-sizes" if iozone else "--in-flight",
        "--size-per-rank": "--file-sizes" if iozone else "--size",
        "--size-per-rank or -n": "--file-sizes or -n" if iozone else "--size",
    }[plain]


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
    existing = 0
    for key in written_keys([run]):
        with contextlib.suppress(OSError):
            existing += os.stat(os.path.join(directory, key)).st_size
    return max(0, run.file_bytes - existing)


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
        lower = _options(run, "--size-per-rank or -n")
        raise SpecError(
            f"the run keeps {format_bytes(need)} on {run.target.url} at its peak ({run.ranks} "
            f"rank(s) x {format_bytes(run.size_per_rank_bytes)}), more than the "
            f"{format_bytes(free)} free there: lower {lower}, or give --no-space-check if the "
            "file system reports free space wrongly"
        )


def cores_per_node(world: Comm) -> int | None:
    """The fewest cores the ranks of any one node may run on between them (the union of their
    CPU affinity masks: a launcher that binds each rank to a core still gives the node's ranks
    as many cores as ranks). Collective; rank 0 gets the figure, the others None."""
    mine = (socket.gethostname(), sorted(os.sched_getaffinity(0)))
    everyone = world.gather(mine)
    if everyone is None:
        return None
    cores: dict[str, set[int]] = {}
    for host, cpus in everyone:
        cores.setdefault(host, set()).update(cpus)
    return min(len(cpus) for cpus in cores.values())
