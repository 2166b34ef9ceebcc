"""The cache record: what a run's figures did and did not bypass."""

from __future__ import annotations

from hpcio.results.schema import CacheRecord
from hpcio.spec.model import RunSpec
from hpcio.units import format_bytes


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


def cache_record(run: RunSpec, nodes: int, ram_bytes: int, reads: bool) -> CacheRecord:
    """Say, for this spec on this job, whether reads could have been served from RAM."""
    data_set = run.file_bytes
    reads_whole_file = run.pattern == "sfmr" and run.read_scope == "all"
    # sfsw's file sits on rank 0's node; whole-file sfmr makes every node read all of it.
    whole = reads_whole_file or run.pattern == "sfsw"
    per_node = data_set if whole else data_set // max(nodes, 1)
    if run.pattern == "sfsw":
        read_from = "rank 0 reads the file and sends each rank its data"
    elif reads_whole_file:
        read_from = "data written by all ranks"
    elif run.reorder and nodes > 1:
        read_from = "data written by a rank on another node"
    elif run.reorder and run.ranks > 1:
        read_from = "data written by another rank on the same node"
    else:
        read_from = "data this rank wrote"
    # Data written on this node sits in its page cache unless O_DIRECT kept it out. Reads of
    # another node's data miss it; sfsw and whole-file sfmr read data this node wrote.
    local_data = not (run.reorder and nodes > 1) or run.pattern == "sfsw" or reads_whole_file
    may_hit = reads and not run.direct and local_data and (ram_bytes == 0 or per_node < ram_bytes)
    if run.target.is_object_store:
        return _object_store_record(run, data_set, ram_bytes)
    notes = []
    if run.direct:
        notes.append("O_DIRECT: the page cache was bypassed for writes and reads")
    else:
        notes.append("page cache not bypassed (no --direct)")
    if run.fsync:
        notes.append("fsync before close, inside the timed write phase")
    elif not run.direct and run.pattern not in ("sfmr", "mfmr"):
        notes.append("no --fsync: the write phase may end before data reaches storage")
    if not run.direct:
        notes.append("caches not dropped between write and read")
    if may_hit:
        notes.append(
            f"reads may be served from RAM: {format_bytes(per_node)} per node is less than "
            f"the node's {format_bytes(ram_bytes)} and was written on this node"
        )
    return CacheRecord(
        direct_io=run.direct,
        fsync_in_write_phase=run.fsync,
        caches_dropped=False,
        read_back_from=read_from,
        data_set_bytes=data_set,
        data_per_node_bytes=per_node,
        node_ram_bytes=ram_bytes,
        reads_may_hit_page_cache=may_hit,
        notes=tuple(notes),
    )


def _object_store_record(run: RunSpec, data_set: int, ram_bytes: int) -> CacheRecord:
    if run.target.kind == "memory":
        notes = (
            "memory:// keeps objects in this process: the figures measure hpcio's own "
            "overhead, with no storage or network behind it",
        )
    else:
        notes = (
            "object store: no client-side cache; every read is a GET from the store, "
            "every write a PUT or part, durable when it (or the upload) completes",
        )
    return CacheRecord(
        direct_io=False,
        fsync_in_write_phase=False,
        caches_dropped=False,
        read_back_from="another rank's objects" if run.reorder else "the rank's own data",
        data_set_bytes=data_set,
        data_per_node_bytes=data_set,
        node_ram_bytes=ram_bytes,
        reads_may_hit_page_cache=False,
        notes=notes,
    )
