"""Workload contract: a RunSpec and a rank -> that rank's Plan, as columns of operations."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol

import numpy as np

from hpcio.spec.model import RunSpec


class Phase(enum.StrEnum):
    WRITE = "write"
    READ = "read"


class Op(enum.IntEnum):
    """Plan op codes, the same numbers as engine/src/plan.rs."""

    OPEN_WRITE = 1
    OPEN_READ = 2
    WRITE = 3
    READ = 4
    SYNC = 5
    CLOSE = 6


class Sharing(enum.StrEnum):
    PRIVATE = "private"  # each rank its own file
    RANGE = "range"  # ranks write ranges of one shared file
    COLLECT = "collect"  # one rank does the I/O for all (collect-and-write, read-and-scatter)


@dataclass(frozen=True, slots=True)
class RankInfo:
    """Where one rank sits in the job."""

    rank: int
    size: int
    node: int = 0
    local_rank: int = 0
    ranks_per_node: int = 1
    nodes: int = 1

    def read_source(self, reorder: bool) -> int:
        """The rank whose data this rank reads back: itself, or with reorder (IOR's -C) the rank
        one node further on, or the next rank when the job has a single node."""
        if not reorder or self.size == 1:
            return self.rank
        shift = self.ranks_per_node if self.nodes > 1 else 1
        return (self.rank + shift) % self.size


@dataclass(frozen=True, slots=True)
class Plan:
    """One rank's operations, one row each: op, file, offset, length and whose data it is."""

    ops: np.ndarray  # uint8, Op codes
    key_index: np.ndarray  # uint32, index into keys
    offsets: np.ndarray  # uint64, bytes
    lengths: np.ndarray  # uint64, bytes
    writers: np.ndarray  # uint32, rank whose payload the range holds
    keys: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.ops)

    def rows(self, start: int, stop: int | None = None) -> Plan:
        """Rows [start, stop) as a plan of their own (same keys)."""
        cut = slice(start, stop)
        return Plan(
            self.ops[cut],
            self.key_index[cut],
            self.offsets[cut],
            self.lengths[cut],
            self.writers[cut],
            self.keys,
        )

    @property
    def transfer_bytes_total(self) -> int:
        moving = (self.ops == Op.WRITE) | (self.ops == Op.READ)
        return int(self.lengths[moving].sum())


class PlanBuilder:
    """Appends blocks of rows; numpy builds each block, so no Python loop per transfer."""

    def __init__(self) -> None:
        self._keys: list[str] = []
        self._columns: list[tuple[np.ndarray, ...]] = []

    def _key(self, key: str) -> int:
        if key not in self._keys:
            self._keys.append(key)
        return self._keys.index(key)

    def transfers_among(
        self,
        op: Op,
        keys: Sequence[str],
        files: np.ndarray,
        offsets: np.ndarray,
        length: int,
        writers: int | np.ndarray,
    ) -> PlanBuilder:
        """Transfers row by row among `keys`: row i at `offsets[i]` of `keys[files[i]]`."""
        index = np.array([self._key(k) for k in keys], np.uint32)
        n = len(offsets)
        self._columns.append(
            (
                np.full(n, int(op), np.uint8),
                index[files.astype(np.intp, copy=False)],
                offsets.astype(np.uint64, copy=False),
                np.full(n, length, np.uint64),
                np.broadcast_to(np.asarray(writers, np.uint32), (n,)).copy(),
            )
        )
        return self

    def control(self, op: Op, key: str) -> PlanBuilder:
        return self.transfers(op, key, np.zeros(1, np.uint64), 0, writers=0)

    def transfers(
        self, op: Op, key: str, offsets: np.ndarray, length: int, writers: int | np.ndarray
    ) -> PlanBuilder:
        n = len(offsets)
        self._columns.append(
            (
                np.full(n, int(op), np.uint8),
                np.full(n, self._key(key), np.uint32),
                offsets.astype(np.uint64, copy=False),
                np.full(n, length, np.uint64),
                np.broadcast_to(np.asarray(writers, np.uint32), (n,)).copy(),
            )
        )
        return self

    def build(self) -> Plan:
        if not self._columns:
            empty = np.zeros(0, np.uint8)
            return Plan(
                empty,
                empty.astype(np.uint32),
                empty.astype(np.uint64),
                empty.astype(np.uint64),
                empty.astype(np.uint32),
                (),
            )
        columns = [np.concatenate(parts) for parts in zip(*self._columns, strict=True)]
        return Plan(*columns, keys=tuple(self._keys))


def own_offsets(run: RunSpec, rank: int, *, shared: bool) -> np.ndarray:
    """Offsets of `rank`'s transfers: transfer j of segment i sits at
    j*transfer + i*size*block + rank*block in a shared file, j*transfer + i*block in its own."""
    per_block = run.block_bytes // run.transfer_bytes
    j = np.arange(per_block, dtype=np.uint64) * np.uint64(run.transfer_bytes)
    i = np.arange(run.segments, dtype=np.uint64)
    if shared:
        starts = i * np.uint64(run.ranks * run.block_bytes) + np.uint64(rank * run.block_bytes)
    else:
        starts = i * np.uint64(run.block_bytes)
    return (starts[:, None] + j[None, :]).ravel()


@dataclass(frozen=True, slots=True)
class Visits:
    """A rank's transfers over its files in the order it makes them: row i is at
    `offsets[i]` of file `files[i]` (an index into the rank's keys)."""

    files: np.ndarray  # uint32
    offsets: np.ndarray  # uint64


def visit_order(
    run: RunSpec, file_count: int, offsets: np.ndarray, rank: int, phase: Phase
) -> Visits:
    """Every one of `offsets` in each of `file_count` files, taken round robin over the files
    (fio's file_service_type=roundrobin), so transfers in flight fall in different files and
    no two lanes wait on one file's lock.

    In order, offset after offset. With random_offsets, each file's offsets in a permutation
    of their own and the files in a permuted order, seeded by (seed, rank, phase): every
    transfer is made exactly once, reruns repeat the order, and a rank with one transfer per
    file (an object store's objects) visits its files in random order.
    """
    offsets = offsets.astype(np.uint64, copy=False)
    steps = len(offsets)
    if not run.random_offsets:
        return Visits(
            np.tile(np.arange(file_count, dtype=np.uint32), steps),
            np.repeat(offsets, file_count),
        )
    phase_number = list(Phase).index(phase)
    rng = np.random.default_rng([run.seed, rank, phase_number])
    file_order = rng.permutation(file_count).astype(np.uint32)
    # One permutation of the offsets per file, all drawn at once: (files, steps).
    per_file = offsets[np.argsort(rng.random((file_count, steps)), axis=1)]
    return Visits(np.tile(file_order, steps), per_file[file_order].T.ravel())


def owner_of(run: RunSpec, offsets: np.ndarray) -> np.ndarray:
    """The rank that wrote each offset of a shared file."""
    return ((offsets // np.uint64(run.block_bytes)) % np.uint64(run.ranks)).astype(np.uint32)


def write_plan(
    run: RunSpec, keys: str | Sequence[str], visits: Visits | np.ndarray, writer: int
) -> Plan:
    """Open every key, make the writes of `visits` (or write the same offsets in each key, one
    after the other; either way in-flight transfers span files), fsync each with --fsync,
    close each."""
    return _file_plan(Op.WRITE, run, keys, visits, writer)


def read_plan(
    run: RunSpec,
    keys: str | Sequence[str],
    visits: Visits | np.ndarray,
    writers: int | np.ndarray,
) -> Plan:
    """Open every key, make the reads of `visits` (or read the same offsets in each key),
    close each."""
    return _file_plan(Op.READ, run, keys, visits, writers)


def _file_plan(
    op: Op,
    run: RunSpec,
    keys: str | Sequence[str],
    visits: Visits | np.ndarray,
    writers: int | np.ndarray,
) -> Plan:
    keys = [keys] if isinstance(keys, str) else list(keys)
    writing = op is Op.WRITE
    builder = PlanBuilder()
    for key in keys:
        builder.control(Op.OPEN_WRITE if writing else Op.OPEN_READ, key)
    _transfers(builder, op, run, keys, visits, writers)
    for key in keys if writing and run.fsync else ():
        builder.control(Op.SYNC, key)
    for key in keys:
        builder.control(Op.CLOSE, key)
    return builder.build()


def _transfers(
    builder: PlanBuilder,
    op: Op,
    run: RunSpec,
    keys: list[str],
    visits: Visits | np.ndarray,
    writers: int | np.ndarray,
) -> None:
    if isinstance(visits, Visits):
        builder.transfers_among(op, keys, visits.files, visits.offsets, run.transfer_bytes, writers)
        return
    for key in keys:
        builder.transfers(op, key, visits, run.transfer_bytes, writers)


class Workload(Protocol):
    """A pattern (later: profiles, libraries, training) as the runner sees it."""

    name: ClassVar[str]
    sharing: ClassVar[Sharing]
    #: Timed phases, in order.
    phases: ClassVar[tuple[Phase, ...]]
    #: A workload that only reads has its data laid out, untimed, by this pattern's write.
    prepared_by: ClassVar[str | None]

    def plan(self, run: RunSpec, phase: Phase, who: RankInfo) -> Plan: ...

    def keys(self, run: RunSpec) -> list[str]:
        """Every file or object the workload creates, for removal."""
        ...
