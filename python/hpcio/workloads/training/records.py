"""Files of several samples as DLIO's TFRecord reader reads them (reader/tf_reader.py): each
rank takes every ranks-th file of the sorted list (tf.data's shard), and a TFRecordDataset
streams them `read_threads` files at a time (num_parallel_reads: an interleave taking one
record from each open file in turn), each file front to back in its read buffer
(transfer_size, TensorFlow's 256 KiB by default). Batches are consecutive records of that
stream, which repeats across epochs (DLIO's repeat().take()). Sample shuffling happens in a
memory buffer after the reads, so storage sees the same ranges whatever its mode."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hpcio.workloads.plans import Op, Plan, PlanBuilder, Runs

#: TensorFlow's TFRecordDataset read buffer when DLIO's transfer_size is not set.
TFRECORD_BUFFER_BYTES = 256 << 10


@dataclass(frozen=True, slots=True)
class RecordRead:
    """Consecutive records of one file: `count` of them from record `first`."""

    file: int
    first: int
    count: int


def rank_files(files: int, rank: int, ranks: int) -> list[int]:
    """The files a rank streams: tf.data's shard(ranks, rank) of the sorted list."""
    return list(range(rank, files, ranks))


def stream_reads(mine: Sequence[int], per_file: int, threads: int, first: int,
                 count: int) -> list[RecordRead]:  # fmt: skip
    """The records [first, first + count) of a rank's stream, as reads of each file: the
    stream is `mine` in groups of `threads` files, each group's records interleaved one per
    file in turn; it starts over after the last file."""
    total = len(mine) * per_file
    group_records = threads * per_file
    reads = []
    for at in range(first, first + count):
        position = at % total
        group, offset = divmod(position, group_records)
        width = min(threads, len(mine) - group * threads)
        record, slot = divmod(offset, width)
        file = mine[group * threads + slot]
        reads.append((file, record))
    return _runs(reads)


def _runs(reads: list[tuple[int, int]]) -> list[RecordRead]:
    """Each file's records merged into runs of consecutive records, files in first-read
    order (a batch's records of one file are consecutive unless the stream wrapped)."""
    by_file: dict[int, list[int]] = {}
    for file, record in reads:
        by_file.setdefault(file, []).append(record)
    runs = []
    for file, records in by_file.items():
        records.sort()
        start = previous = records[0]
        for record in records[1:]:
            if record != previous + 1:
                runs.append(RecordRead(file, start, previous - start + 1))
                start = record
            previous = record
        runs.append(RecordRead(file, start, previous - start + 1))
    return runs


def ranges_plan(keys: Sequence[str], reads: Sequence[RecordRead], record_bytes: np.ndarray,
                buffer: int) -> Plan:  # fmt: skip
    """Open each file read, read its run of records in `buffer`-byte calls, close it. The
    lanes share one file's calls, then the next file's: as many reads of `buffer` bytes in
    flight as the interleave's threads, on one file at a time where TensorFlow has one per
    file (the engine's batch of calls across files needs as many calls from each)."""
    builder = PlanBuilder()
    for read in reads:
        key, size = keys[read.file], int(record_bytes[read.file])
        start, length = read.first * size, read.count * size
        builder.control(Op.OPEN_READ, key)
        whole, rest = divmod(length, buffer)
        if whole:
            builder.runs(Op.READ, key, Runs.of(start, whole, 0), buffer)
        if rest:
            builder.runs(Op.READ, key, Runs.of(start + whole * buffer, 1, 0), rest)
        builder.control(Op.CLOSE, key)
    return builder.build()
