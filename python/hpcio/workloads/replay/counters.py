"""A per-rank operation list from a Darshan log's POSIX counters, for logs without DXT.

Darshan keeps, per file and rank (or once for a file all ranks shared: rank -1), the number
of reads and writes in each of ten access-size buckets, the bytes read and written, the four
most common access sizes and the sequential counts. The synthesis makes, for each record and
direction, exactly as many operations in each bucket as the log counts, whose lengths add up
to exactly the bytes the log counts (the common access sizes first, where they fit; the rest
spread within their buckets' bounds). Offsets follow the sequential counts: that many
operations continue where the previous one ended, the others start again at offset 0. A
shared record's operations are dealt to the application's ranks round robin. Counters carry
no per-operation times: a counters replay has no gaps to keep."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hpcio.trace import operations

#: Darshan's access-size buckets (darshan-common's DARSHAN_BUCKET_INC): an access of n bytes
#: falls in the first bucket whose upper bound is at least n; the last has none.
BUCKETS = ("0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M", "1M_4M", "4M_10M", "10M_100M",
           "100M_1G", "1G_PLUS")  # fmt: skip
UPPER = np.array([100, 1024, 10240, 102400, 1048576, 4194304, 10485760, 104857600, 1073741824,
                  1 << 62], np.int64)  # fmt: skip
LOWER = np.concatenate([[0], UPPER[:-1] + 1])
_DIRECTIONS = (("write", "WRITE", "BYTES_WRITTEN", "SEQ_WRITES"),
               ("read", "READ", "BYTES_READ", "SEQ_READS"))  # fmt: skip


def bucket_of(lengths: np.ndarray) -> np.ndarray:
    """The Darshan bucket index of each access length."""
    return np.searchsorted(UPPER, np.asarray(lengths, np.int64), side="left")


def histogram(lengths: np.ndarray) -> np.ndarray:
    """Accesses per Darshan bucket."""
    return np.bincount(bucket_of(lengths), minlength=len(BUCKETS))


@dataclass(frozen=True, slots=True)
class Synthesis:
    ops: operations.Operations
    #: Every record's bytes and bucket counts were met exactly (False: the log's counters
    #: contradict each other, and the lengths were clipped to their buckets).
    exact: bool


def synthesize(report, app_ranks: int) -> Synthesis | None:
    """The operations the POSIX counters of a pydarshan report describe; None without them."""
    if "POSIX" not in report.records:
        return None
    counters = report.records["POSIX"].to_df()["counters"]
    names = report.name_records
    parts: list[operations.Operations] = []
    exact = True
    for row in counters.to_dict("records"):
        name = names.get(row["id"], str(row["id"]))
        for op, size_tag, bytes_tag, seq_tag in _DIRECTIONS:
            per_bucket = np.array(
                [max(0, int(row[f"POSIX_SIZE_{size_tag}_{b}"])) for b in BUCKETS], np.int64
            )
            if not per_bucket.sum():
                continue
            common = [(int(row[f"POSIX_ACCESS{i}_ACCESS"]), int(row[f"POSIX_ACCESS{i}_COUNT"]))
                      for i in range(1, 5)]  # fmt: skip
            lengths, met = lengths_for(per_bucket, int(row[f"POSIX_{bytes_tag}"]), common)
            exact &= met
            offsets = _offsets(lengths, int(row[f"POSIX_{seq_tag}"]))
            n = len(lengths)
            ranks = np.full(n, int(row["rank"]), np.int32)
            if row["rank"] < 0:  # a file every rank shared: its operations dealt round robin
                ranks = (np.arange(n) % max(1, app_ranks)).astype(np.int32)
            zeros = np.zeros(n, np.int64)
            parts.append(operations.build(ranks, np.full(n, name, dtype=object),
                                          np.full(n, op, dtype=object), offsets, lengths,
                                          zeros, zeros))  # fmt: skip
    return Synthesis(operations.concat(parts), exact)


def lengths_for(
    per_bucket: np.ndarray, total: int, common: list[tuple[int, int]]
) -> tuple[np.ndarray, bool]:
    """Lengths with `per_bucket` accesses in each bucket adding up to `total` bytes, using the
    common access sizes where they fit; (lengths, whether `total` was met exactly)."""
    for use_common in (True, False):
        fixed: list[int] = []
        free = per_bucket.copy()
        if use_common:
            for size, count in common:
                if size <= 0 or count <= 0:
                    continue
                b = int(bucket_of(np.array([size]))[0])
                take = min(count, int(free[b]))
                fixed += [size] * take
                free[b] -= take
        lower = np.repeat(LOWER, free)
        room = np.minimum(np.repeat(UPPER, free), max(total, 0)) - lower
        need = total - sum(fixed) - int(lower.sum())
        if 0 <= need <= int(room.sum()):
            before = np.cumsum(room) - room
            spread = lower + np.clip(need - before, 0, room)
            return _interleave(np.array(fixed, np.int64), spread), True
    # Contradictory counters: each bucket's count kept, the bytes as near as the bounds allow.
    lower = np.repeat(LOWER, per_bucket)
    return lower.astype(np.int64), False


def _interleave(fixed: np.ndarray, spread: np.ndarray) -> np.ndarray:
    """Both sets of lengths, sorted by size so like accesses sit together (as an
    application's loops make them)."""
    return np.sort(np.concatenate([fixed, spread]).astype(np.int64), kind="stable")[::-1].copy()


def _offsets(lengths: np.ndarray, sequential: int) -> np.ndarray:
    """Offsets where `sequential` accesses (at most all but the first) continue from the
    previous one's end and the rest, evenly spread, start again at 0."""
    n = len(lengths)
    restarts = np.zeros(n, bool)
    jumps = max(1, n - max(0, min(sequential, n - 1)))
    restarts[np.linspace(0, n - 1, jumps).round().astype(np.int64)] = True
    restarts[0] = True
    ends = np.cumsum(lengths)
    run_id = np.cumsum(restarts) - 1
    run_start = ends[restarts] - lengths[restarts]
    return ends - lengths - run_start[run_id]
