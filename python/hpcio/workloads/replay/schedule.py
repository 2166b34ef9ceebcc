"""What each hpcio rank replays, in which order, after which wait, under which target names.

- Ranks: application rank r is replayed by hpcio rank r % n (with -n at most the
  application's ranks); a rank replaying several application ranks does their operations
  merged in the order they started.
- Gaps: the wait before an operation is the time from the end of the rank's previous
  operation (of either kind) to its start, as the trace had it; the first waits from the
  earliest start in the log. `--gaps none` waits for nothing. Gaps shorter than MIN_GAP_NS are
  not waited for (no sleep is that precise); the result says how long the ranks waited.
- Object stores have no in-place range writes. A file's writes go up as one PUT (a single
  write at offset 0), as one multipart upload or block list from its writer (writes that tile
  the file from offset 0 in equal pieces, the last no longer, within the store's part sizes),
  as the object patterns' N-1 does when several ranks write such parts (an upload rank 0
  starts and completes, every rank putting its own parts, at the end of the write phase, in
  name order, as the ranks must meet for it), or else each write as an object of its own
  (`KEY.wRANK-SEQ`, a PUT of the same bytes). The result counts each kind.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hpcio import kinds
from hpcio.trace.operations import Operations
from hpcio.workloads.replay.source import key_of

#: Waits shorter than this are not made (a Python sleep is not that precise).
MIN_GAP_NS = 100_000

PUT, PARTS, SHARED, SEPARATE = "put", "parts", "shared", "separate"


@dataclass(frozen=True)
class Step:
    """Operations one engine plan makes, after a wait: one target name, one kind."""

    gap_ns: int
    key: str
    op: str
    offsets: np.ndarray
    lengths: np.ndarray
    #: Parts of one upload all ranks share (every rank has this step, maybe without parts).
    shared_part_bytes: int = 0


def hpcio_rank(app_rank: np.ndarray, ranks: int) -> np.ndarray:
    return np.asarray(app_rank, np.int64) % ranks


def gaps_before(ops: Operations, origin_ns: int) -> np.ndarray:
    """The wait before each of `ops` (one rank's, in order): from the latest end of the
    operations before it (or `origin_ns`) to its start, never negative."""
    if not len(ops):
        return np.zeros(0, np.int64)
    ends = np.maximum.accumulate(ops.end_ns)
    previous = np.concatenate([[origin_ns], ends[:-1]])
    return np.maximum(ops.start_ns - previous, 0)


def object_mapping(ops: Operations, ranks: int, target_kind: str) -> dict[str, str]:
    """How each written application file goes to an object store: PUT, PARTS or SEPARATE."""
    mapping = {}
    writes = ops.op == "write"
    for app_path in np.unique(ops.file[writes]):
        mine = writes & (ops.file == app_path)
        offsets, lengths = ops.offset[mine], ops.length[mine]
        writers = np.unique(hpcio_rank(ops.rank[mine], ranks))
        reads = (ops.op == "read") & (ops.file == app_path)
        read_end = int((ops.offset[reads] + ops.length[reads]).max()) if reads.any() else 0
        covers = int(lengths.sum()) >= read_end
        by_offset = np.argsort(offsets, kind="stable")
        if len(offsets) == 1 and offsets[0] == 0 and covers:
            mapping[app_path] = PUT
        elif len(writers) == 1 and covers and _tiles(offsets, lengths, target_kind):
            mapping[app_path] = PARTS
        elif covers and _tiles(offsets[by_offset], lengths[by_offset], target_kind):
            mapping[app_path] = SHARED
        else:
            mapping[app_path] = SEPARATE
    return mapping


def _tiles(offsets: np.ndarray, lengths: np.ndarray, target_kind: str) -> bool:
    """The writes, in order, are parts 0, 1, 2... of one length (the last may be shorter)."""
    limits = kinds.of(target_kind).limits
    part = int(lengths[0])
    n = len(offsets)
    return (
        part >= max(limits.min_part_bytes, 1)
        and n <= (limits.max_parts or n)
        and bool(np.all(offsets == np.arange(n) * part))
        and bool(np.all(lengths[:-1] == part))
        and int(lengths[-1]) <= part
    )


def separate_key(key: str, rank: int, seq: int) -> str:
    return f"{key}.w{rank:06d}-{seq:06d}"


def steps(
    ops: Operations,
    rank: int,
    ranks: int,
    op: str,
    *,
    keep_gaps: bool,
    objects: dict[str, str] | None = None,
) -> list[Step]:
    """`rank`'s steps of kind `op` ("read" or "write"); `objects`: the object mapping on an
    object store (None on a file system)."""
    keys = key_of(ops.file)
    origin = int(ops.start_ns.min()) if len(ops) else 0
    mine = ops.select(hpcio_rank(ops.rank, ranks) == rank)
    gaps = gaps_before(mine, origin) if keep_gaps else np.zeros(len(mine), np.int64)
    gaps = np.where(gaps >= MIN_GAP_NS, gaps, 0)
    wanted = np.flatnonzero(mine.op == op)
    found: list[tuple[int, str, list[int], list[int]]] = []  # gap, key, offsets, lengths
    whole: dict[str, int] = {}  # object -> its step, where all its writes go up as one
    seq: dict[str, int] = {}
    for i in wanted:
        app_path = mine.file[i]
        key = keys[app_path]
        offset, length, gap = int(mine.offset[i]), int(mine.length[i]), int(gaps[i])
        how = objects.get(app_path) if objects is not None and op == "write" else None
        if how == SHARED:
            continue  # below, after every other step
        if how == SEPARATE:
            n = seq[key] = seq.get(key, -1) + 1
            key, offset = separate_key(key, rank, n), 0
        elif how in (PUT, PARTS):
            if key not in whole:
                whole[key] = len(found)
                found.append((gap, key, [], []))
            found[whole[key]][2].append(offset)
            found[whole[key]][3].append(length)
            continue
        elif found and found[-1][1] == key and gap == 0:
            found[-1][2].append(offset)
            found[-1][3].append(length)
            continue
        found.append((gap, key, [offset], [length]))
    made = [Step(gap, key, op, np.array(offsets, np.int64), np.array(lengths, np.int64))
            for gap, key, offsets, lengths in found]  # fmt: skip
    for app_path in sorted(p for p, how in (objects or {}).items() if how == SHARED):
        if op != "write":
            continue
        chosen = (mine.op == "write") & (mine.file == app_path)
        every = (ops.op == "write") & (ops.file == app_path)
        part = int(ops.length[every][np.argmin(ops.offset[every])])
        made.append(Step(0, keys[app_path], op, mine.offset[chosen], mine.length[chosen], part))
    return made
