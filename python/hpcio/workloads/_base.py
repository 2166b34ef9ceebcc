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


def in_visit_order(run: RunSpec, offsets: np.ndarray, rank: int, phase: Phase) -> np.ndarray:
    """`offsets` as the run visits them: unchanged, or with random_offsets a permutation seeded
    by (seed, rank, phase), so every offset is visited exactly once and reruns repeat it."""
    if not run.random_offsets:
        return offsets
    phase_number = list(Phase).index(phase)
    generator = np.random.default_rng([run.seed, rank, phase_number])
    return generator.permutation(offsets)


def owner_of(run: RunSpec, offsets: np.ndarray) -> np.ndarray:
    """The rank that wrote each offset of a shared file."""
    return ((offsets // np.uint64(run.block_bytes)) % np.uint64(run.ranks)).astype(np.uint32)


def write_plan(run: RunSpec, keys: str | Sequence[str], offsets: np.ndarray, writer: int) -> Plan:
    """Open every key, write `offsets` in each (one after the other, so in-flight transfers
    span files), fsync each with --fsync, close each."""
    keys = [keys] if isinstance(keys, str) else list(keys)
    builder = PlanBuilder()
    for key in keys:
        builder.control(Op.OPEN_WRITE, key)
    for key in keys:
        builder.transfers(Op.WRITE, key, offsets, run.transfer_bytes, writer)
    for key in keys if run.fsync else ():
        builder.control(Op.SYNC, key)
    for key in keys:
        builder.control(Op.CLOSE, key)
    return builder.build()


def read_plan(
    run: RunSpec, keys: str | Sequence[str], offsets: np.ndarray, writers: int | np.ndarray
) -> Plan:
    """Open every key, read `offsets` in each, close each."""
    keys = [keys] if isinstance(keys, str) else list(keys)
    builder = PlanBuilder()
    for key in keys:
        builder.control(Op.OPEN_READ, key)
    for key in keys:
        builder.transfers(Op.READ, key, offsets, run.transfer_bytes, writers)
    for key in keys:
        builder.control(Op.CLOSE, key)
    return builder.build()


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
