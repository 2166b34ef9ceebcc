"""The cache record: what a run's figures did and did not bypass."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hpcio.errors import RunFailedError, SpecError
from hpcio.results.schema import PAGE_CACHE_WARNING, CacheRecord, PhaseFigures
from hpcio.runner.ceiling import Ceiling, mount_of
from hpcio.units import format_bytes
from hpcio.workloads.contract import CacheFacts, Phase, Workload

if TYPE_CHECKING:
    from hpcio.spec.model import RunSpec

DROP_CACHES = "/proc/sys/vm/drop_caches"
#: ceph-fuse's own object cache, in its process (client_oc_size's default): reads the kernel's
#: page cache no longer holds come from it, and dropping the page cache does not empty it.
CEPH_FUSE_CACHE_BYTES = 200 << 20
#: How the note and warning about ceph-fuse's object cache begin.
CEPH_FUSE_CACHE_NOTE = "ceph-fuse's object cache"


def node_ram_bytes() -> int:
    """Physical memory of this node (MemTotal), 0 when unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def check_drop_caches(path: str = DROP_CACHES) -> None:
    """Fail before the run if --drop-caches cannot work on this node.

    Raises:
        SpecError: not root, or /proc/sys read-only (a container).
    """
    if not os.access(path, os.W_OK):
        who = "not root" if os.geteuid() != 0 else "read-only here (a container?)"
        raise SpecError(
            f"--drop-caches needs to write {path}, which is {who}; run as root, or use "
            "--direct, or drop --drop-caches (the result then records caches not dropped)"
        )


def drop_page_caches(path: str = DROP_CACHES) -> None:
    """Write dirty pages back, then drop the clean page cache, dentries and inodes.

    Raises:
        RunFailedError: the kernel refused.
    """
    os.sync()
    try:
        with open(path, "w", encoding="ascii") as knob:
            knob.write("3\n")
    except OSError as e:
        raise RunFailedError(f"--drop-caches: cannot write {path}: {e.strerror}") from None


def cache_record(
    run: RunSpec,
    workload: Workload,
    nodes: int,
    ram_bytes: int,
    reads: bool,
    ceiling: Ceiling | None = None,
) -> CacheRecord:
    """Say, for this spec on this job, whether reads could have been served from RAM."""
    facts = workload.cache_facts(run)
    data_set = facts.data_set_bytes
    per_node = data_set if facts.whole_data_per_node else data_set // max(nodes, 1)
    if facts.read_back_from is not None:
        read_from = facts.read_back_from
    elif facts.reorder and nodes > 1:
        read_from = "data written by a rank on another node"
    elif facts.reorder and run.ranks > 1:
        read_from = "data written by another rank on the same node"
    else:
        read_from = "data this rank wrote"
    # Data written on this node sits in its page cache unless O_DIRECT kept it out. Reads of
    # another node's data miss it, unless the workload reads this node's data regardless.
    local_data = not (facts.reorder and nodes > 1) or facts.reads_local_data
    fits = ram_bytes == 0 or per_node < ram_bytes
    # After a drop, a node can still serve from RAM what one of its ranks read earlier in the
    # same phase: several ranks of a node reading the same data.
    rereads = facts.rereads and run.ranks > nodes
    may_hit = (
        reads and not run.direct and fits and ((local_data and not run.drop_caches) or rereads)
    )
    if run.target.is_object_store:
        return _object_store_record(run, facts, ram_bytes)
    fuse_note = None
    if not run.direct and mount_of(run.target.path).fs_type == "fuse.ceph-fuse":
        held = reads and local_data and per_node <= CEPH_FUSE_CACHE_BYTES
        if held and run.drop_caches:
            may_hit = True
            fuse_note = (
                f"{CEPH_FUSE_CACHE_NOTE} may serve the reads: --drop-caches empties the "
                "kernel's page cache, not the cache ceph-fuse keeps itself (client_oc_size, "
                f"{format_bytes(CEPH_FUSE_CACHE_BYTES)} by default), which holds the "
                f"{format_bytes(per_node)} per node; --direct or a fresh mount bypasses it"
            )
        else:
            fuse_note = (
                f"{CEPH_FUSE_CACHE_NOTE} (client_oc_size, "
                f"{format_bytes(CEPH_FUSE_CACHE_BYTES)} by default) also serves reads the "
                "page cache no longer holds, and --drop-caches does not empty it; --direct "
                "or a fresh mount bypasses it"
            )
    notes = []
    if run.direct:
        notes.append("O_DIRECT: the page cache was bypassed for writes and reads")
    else:
        notes.append("page cache not bypassed (no --direct)")
    if run.fsync:
        notes.append("fsync before close, inside the timed write phase")
    elif not run.direct and Phase.WRITE in workload.own_phases:
        notes.append("no --fsync: the write phase may end before data reaches storage")
    if run.drop_caches:
        notes.append(
            "page cache written back and dropped on every node before each read phase "
            "(--drop-caches)"
        )
    elif not run.direct:
        notes.append("caches not dropped between write and read")
    if may_hit and rereads and run.drop_caches:
        notes.append(
            f"reads may be served from RAM: each node's {run.ranks // max(nodes, 1)} ranks "
            "all read the same data, so all but the first may read the cache"
        )
    elif may_hit:
        notes.append(
            f"reads may be served from RAM: {format_bytes(per_node)} per node is less than "
            f"the node's {format_bytes(ram_bytes)} and was written on this node"
        )
    if fuse_note is not None:
        notes.append(fuse_note)
    if ceiling is not None:
        notes.append(f"read ceiling: {ceiling.what}" + (
            f" ({ceiling.bytes_per_s / (1 << 20):,.0f} MiB/s per node)"
            if ceiling.bytes_per_s else ""
        ))  # fmt: skip
    return CacheRecord(
        direct_io=run.direct,
        fsync_in_write_phase=run.fsync,
        caches_dropped=run.drop_caches,
        read_back_from=read_from,
        data_set_bytes=data_set,
        data_per_node_bytes=per_node,
        node_ram_bytes=ram_bytes,
        reads_may_hit_page_cache=may_hit,
        notes=tuple(notes),
        read_ceiling=ceiling.what if ceiling else "",
        read_ceiling_bytes_per_s=ceiling.bytes_per_s if ceiling else None,
    )


def read_warnings(
    cache: CacheRecord, figures: Sequence[PhaseFigures], nodes: int, in_ram: bool = False
) -> tuple[str, ...]:
    """Why the read figures may not be the storage's: a data set the page cache could hold,
    read phases faster than the device or link can carry, a target that is RAM."""
    found = []
    if in_ram:
        found.append(f"reads and writes measure memory: {cache.read_ceiling}")
    fuse_cache = [n for n in cache.notes if n.startswith(f"{CEPH_FUSE_CACHE_NOTE} may serve")]
    if cache.reads_may_hit_page_cache and cache.caches_dropped and fuse_cache:
        found.append(f"read figures may be {fuse_cache[0]}")
    elif cache.reads_may_hit_page_cache:
        found.append(
            f"{PAGE_CACHE_WARNING}: {format_bytes(cache.data_per_node_bytes)} "
            f"per node fits in the node's {format_bytes(cache.node_ram_bytes)} and neither "
            "--direct nor --drop-caches kept the page cache out"
        )
    limit = cache.read_ceiling_bytes_per_s
    if limit:
        mib = float(1 << 20)
        fast = [f for f in figures if f.phase == "read" and f.bandwidth_bytes_per_s > limit * nodes]
        if fast:
            top = max(f.bandwidth_bytes_per_s for f in fast)
            found.append(
                f"{len(fast)} read phase(s) ran faster ({top / mib:,.0f} MiB/s) than "
                f"{cache.read_ceiling} can carry ({limit * nodes / mib:,.0f} MiB/s over "
                f"{nodes} node(s)): they were served from a cache, not the device"
            )
    return tuple(found)


#: How the warning about buffered writes begins.
WRITE_CACHE_WARNING = "write figures may be RAM, not storage"


def write_warnings(
    run: RunSpec, cache: CacheRecord, figures: Sequence[PhaseFigures]
) -> tuple[str, ...]:
    """Why the write figures (bandwidth and per-call latency) may not be the storage's: without
    O_DIRECT or fsync a write returns once its data is in the page cache, and a data set that
    fits in RAM may never wait for the device inside the phase."""
    target = run.target
    if target.is_object_store or not target.traits.lasting or target.in_process:
        return ()
    if (
        cache.direct_io
        or cache.fsync_in_write_phase
        or not cache.data_set_bytes  # nothing written (mdtest's empty files): no write figure
        or not any(f.phase == "write" for f in figures)
    ):
        return ()
    if cache.node_ram_bytes and cache.data_per_node_bytes >= cache.node_ram_bytes:
        return ()
    ram = f"the node's {format_bytes(cache.node_ram_bytes)}" if cache.node_ram_bytes else "RAM"
    return (
        f"{WRITE_CACHE_WARNING}: {format_bytes(cache.data_per_node_bytes)} per node fits in "
        f"{ram} and neither --direct nor --fsync made a write wait for the device",
    )


def _object_store_record(run: RunSpec, facts: CacheFacts, ram_bytes: int) -> CacheRecord:
    if run.target.traits.measures:
        notes = (run.target.traits.measures,)
    else:
        notes = (
            "object store: no client-side cache; every read is a GET from the store, "
            "every write a PUT or part, durable when it (or the upload) completes",
        )
    return CacheRecord(
        direct_io=False,
        fsync_in_write_phase=False,
        caches_dropped=False,
        read_back_from="another rank's objects" if facts.reorder else "the rank's own data",
        data_set_bytes=facts.data_set_bytes,
        data_per_node_bytes=facts.data_set_bytes,
        node_ram_bytes=ram_bytes,
        reads_may_hit_page_cache=False,
        notes=notes,
    )
