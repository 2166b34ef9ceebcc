"""Workload contract: a RunSpec and a rank -> that rank's Plan, as columns of operations."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol

import numpy as np

from hpcio import _engine
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
    """One rank's operations: opens, fsyncs and closes, and runs of transfers, one row each.

    A run is `counts` transfers of `lengths` bytes at `offsets`, `offsets + strides`, ...,
    holding `writers`' data; a control row has a count of 1. So a plan has rows per file,
    segment and writer, never per transfer. The engine makes the runs between two control
    rows as one batch: a file's runs one after the other, the files taking turns (fio's
    file_service_type=roundrobin), in order or, with `shuffle`, in a seeded random order
    that it computes (every transfer once; the same order for the same (seed, rank, phase)).
    """

    ops: np.ndarray  # uint8, Op codes
    key_index: np.ndarray  # uint32, index into keys
    offsets: np.ndarray  # uint64, bytes: the first transfer's
    lengths: np.ndarray  # uint64, bytes per transfer
    counts: np.ndarray  # uint64, transfers in the run
    strides: np.ndarray  # uint64, bytes from one transfer's offset to the next one's
    writers: np.ndarray  # uint32, rank whose payload the range holds
    keys: tuple[str, ...]
    #: (seed, rank, phase) of the random order of the transfers; None: in order.
    shuffle: tuple[int, int, int] | None = None

    def __len__(self) -> int:
        return len(self.ops)

    def rows(self, start: int, stop: int | None = None) -> Plan:
        """Rows [start, stop) as a plan of their own (same keys and order)."""
        cut = slice(start, stop)
        return dataclasses.replace(
            self,
            ops=self.ops[cut],
            key_index=self.key_index[cut],
            offsets=self.offsets[cut],
            lengths=self.lengths[cut],
            counts=self.counts[cut],
            strides=self.strides[cut],
            writers=self.writers[cut],
        )

    def columns(self) -> tuple:
        """The engine's positional arguments (Executor.run, plan_operations)."""
        return (
            self.ops,
            self.key_index,
            self.offsets,
            self.lengths,
            self.counts,
            self.strides,
            self.writers,
            list(self.keys),
        )

    @property
    def _moving(self) -> np.ndarray:
        return (self.ops == Op.WRITE) | (self.ops == Op.READ)

    @property
    def transfer_bytes_total(self) -> int:
        moving = self._moving
        return int((self.lengths[moving] * self.counts[moving]).sum())

    @property
    def largest_batch(self) -> int:
        """The most transfers between two control rows: more lanes than this would idle."""
        moving = self._moving
        batch = np.cumsum(~moving)[moving]
        if not len(batch):
            return 0
        sums = np.zeros(int(batch[-1]) + 1, np.uint64)
        np.add.at(sums, batch, self.counts[moving])
        return int(sums.max())

    def per_transfer(self) -> Plan:
        """The same plan with one row per operation, in the order the engine makes them (before
        lanes share them out): for tests and small plans, as it is as long as the transfers."""
        ops, key_index, offsets, lengths, writers = _engine.plan_operations(
            *self.columns(), shuffle=self.shuffle
        )
        ones = np.ones(len(ops), np.uint64)
        return Plan(ops, key_index, offsets, lengths, ones, lengths.copy(), writers, self.keys)


@dataclass(frozen=True, slots=True)
class Runs:
    """Runs of whole transfers in one file: run i is `counts[i]` transfers, one after the
    other from `firsts[i]`, holding `writers[i]`'s data."""

    firsts: np.ndarray  # uint64, bytes
    counts: np.ndarray  # uint64
    writers: np.ndarray  # uint32

    @staticmethod
    def of(firsts, counts, writers) -> Runs:
        firsts = np.atleast_1d(np.asarray(firsts, np.uint64))
        n = len(firsts)
        return Runs(
            firsts,
            np.broadcast_to(np.asarray(counts, np.uint64), (n,)).copy(),
            np.broadcast_to(np.asarray(writers, np.uint32), (n,)).copy(),
        )


class PlanBuilder:
    """Appends blocks of rows; numpy builds each block, so no Python loop per row."""

    def __init__(self) -> None:
        self._keys: dict[str, int] = {}  # key -> its index, in order of first use
        self._columns: list[tuple[np.ndarray, ...]] = []

    def _key(self, key: str) -> int:
        return self._keys.setdefault(key, len(self._keys))

    def control(self, op: Op, key: str) -> PlanBuilder:
        return self.runs(op, key, Runs.of(0, 1, 0), length=0)

    def runs(self, op: Op, key: str, runs: Runs, length: int) -> PlanBuilder:
        """Runs of `length`-byte transfers, each `length` after the one before, in `key`."""
        self._columns.append(_rows(op, self._key(key), runs, length))
        return self

    def build(self, shuffle: tuple[int, int, int] | None = None) -> Plan:
        blocks = self._columns or [_rows(Op.CLOSE, 0, Runs.of(np.zeros(0, np.uint64), 1, 0), 0)]
        ops, key_index, offsets, lengths, counts, strides, writers = (
            np.concatenate(parts) for parts in zip(*blocks, strict=True)
        )
        return Plan(
            ops, key_index, offsets, lengths, counts, strides, writers,
            keys=tuple(self._keys), shuffle=shuffle,
        )  # fmt: skip


def _rows(op: Op, key_index: int, runs: Runs, length: int) -> tuple[np.ndarray, ...]:
    n = len(runs.firsts)
    return (
        np.full(n, int(op), np.uint8),
        np.full(n, key_index, np.uint32),
        runs.firsts,
        np.full(n, length, np.uint64),
        runs.counts,
        np.full(n, length, np.uint64),
        runs.writers,
    )


def own_runs(run: RunSpec, rank: int, *, shared: bool) -> Runs:
    """`rank`'s data: segment i of it sits at i*size*block + rank*block in a shared file, at
    i*block in its own (where the segments make one run)."""
    per_block = run.block_bytes // run.transfer_bytes
    if not shared:
        return Runs.of(0, per_block * run.segments, rank)
    i = np.arange(run.segments, dtype=np.uint64)
    starts = i * np.uint64(run.ranks * run.block_bytes) + np.uint64(rank * run.block_bytes)
    return Runs.of(starts, per_block, rank)


def every_block(run: RunSpec) -> Runs:
    """A whole shared file, a run per block so each names the rank that wrote it."""
    blocks = np.arange(run.segments * run.ranks, dtype=np.uint64)
    writers = (blocks % np.uint64(run.ranks)).astype(np.uint32)
    return Runs.of(
        blocks * np.uint64(run.block_bytes), run.block_bytes // run.transfer_bytes, writers
    )


def order(run: RunSpec, rank: int, phase: Phase) -> tuple[int, int, int] | None:
    """The seed of `rank`'s random order in `phase`, or None for ascending order."""
    if not run.random_offsets:
        return None
    return (run.seed % (1 << 64), rank, list(Phase).index(phase))


def write_plan(
    run: RunSpec, keys: str | Sequence[str], runs: Runs, shuffle: tuple[int, int, int] | None = None
) -> Plan:
    """Open every key, write `runs` in each (the keys taking turns, so in-flight transfers
    span files), fsync each with --fsync, close each."""
    return _file_plan(Op.WRITE, run, keys, runs, shuffle)


def read_plan(
    run: RunSpec, keys: str | Sequence[str], runs: Runs, shuffle: tuple[int, int, int] | None = None
) -> Plan:
    """Open every key, read `runs` in each (the keys taking turns), close each."""
    return _file_plan(Op.READ, run, keys, runs, shuffle)


def _file_plan(
    op: Op,
    run: RunSpec,
    keys: str | Sequence[str],
    runs: Runs,
    shuffle: tuple[int, int, int] | None,
) -> Plan:
    keys = [keys] if isinstance(keys, str) else list(keys)
    writing = op is Op.WRITE
    builder = PlanBuilder()
    for key in keys:
        builder.control(Op.OPEN_WRITE if writing else Op.OPEN_READ, key)
    for key in keys:
        builder.runs(op, key, runs, run.transfer_bytes)
    for key in keys if writing and run.fsync else ():
        builder.control(Op.SYNC, key)
    for key in keys:
        builder.control(Op.CLOSE, key)
    return builder.build(shuffle)


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
