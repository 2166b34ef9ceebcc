"""Engine plans: one rank's operations as columns, built block by block with numpy."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hpcio.workloads.native import _engine


class Op(enum.IntEnum):
    """Plan op codes, the same numbers as engine/src/plan.rs."""

    OPEN_WRITE = 1
    OPEN_READ = 2
    WRITE = 3
    READ = 4
    SYNC = 5
    CLOSE = 6


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
        """The columns and keys, in the order _engine.Plan takes them."""
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

    def for_engine(self) -> _engine.Plan:
        """The plan as the engine runs it (Executor.run, run_background): checked and converted
        once, so build it before a phase's clock starts."""
        return _engine.Plan(*self.columns(), shuffle=self.shuffle)

    @property
    def _moving(self) -> np.ndarray:
        return (self.ops == Op.WRITE) | (self.ops == Op.READ)

    @property
    def transfer_bytes_total(self) -> int:
        moving = self._moving
        return int((self.lengths[moving] * self.counts[moving]).sum())

    @property
    def largest_transfer(self) -> int:
        """Bytes of the longest transfer: the size of each lane's buffer."""
        moving = self._moving
        return int(self.lengths[moving].max()) if moving.any() else 0

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
        ops, key_index, offsets, lengths, writers = self.for_engine().operations()
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

    def controls(self, op: Op, keys: Sequence[str]) -> PlanBuilder:
        """One control row per key, in order, as one block (no Python step per row but the
        key's index)."""
        n = len(keys)
        index = np.fromiter((self._key(k) for k in keys), np.uint32, n)
        zeros = np.zeros(n, np.uint64)
        self._columns.append(
            (np.full(n, int(op), np.uint8), index, zeros, zeros, np.ones(n, np.uint64), zeros,
             np.zeros(n, np.uint32))
        )  # fmt: skip
        return self

    def runs_in_each(self, op: Op, keys: Sequence[str], runs: Runs, length: int) -> PlanBuilder:
        """`runs` in every key, key after key, as one block."""
        index = np.fromiter((self._key(k) for k in keys), np.uint32, len(keys))
        rows = _rows(op, 0, runs, length)
        each = len(runs.firsts)
        self._columns.append(
            (np.tile(rows[0], len(keys)), np.repeat(index, each),
             *(np.tile(column, len(keys)) for column in rows[2:]))
        )  # fmt: skip
        return self

    def runs(self, op: Op, key: str, runs: Runs, length: int) -> PlanBuilder:
        """Runs of `length`-byte transfers, each `length` after the one before, in `key`."""
        self._columns.append(_rows(op, self._key(key), runs, length))
        return self

    def sides(
        self,
        key: str,
        reads: np.ndarray,
        firsts: np.ndarray,
        counts: np.ndarray,
        *,
        length: int,
        writer: int,
    ) -> PlanBuilder:
        """Runs of reads and writes in `key` in the order given (a mixed phase): run i reads
        or writes `counts[i]` transfers from transfer `firsts[i]` on."""
        n = len(reads)
        size = np.uint64(length)
        self._columns.append(
            (np.where(reads, np.uint8(Op.READ), np.uint8(Op.WRITE)).astype(np.uint8),
             np.full(n, self._key(key), np.uint32), firsts.astype(np.uint64) * size,
             np.full(n, length, np.uint64), counts.astype(np.uint64), np.full(n, length, np.uint64),
             np.full(n, writer, np.uint32))
        )  # fmt: skip
        return self

    def build(self, shuffle: tuple[int, int, int] | None = None) -> Plan:
        blocks = self._columns or [_rows(Op.CLOSE, 0, Runs.of(np.zeros(0, np.uint64), 1, 0), 0)]
        ops, key_index, offsets, lengths, counts, strides, writers = (
            np.concatenate(parts) for parts in zip(*blocks, strict=True)
        )
        return Plan(
            ops, key_index, offsets, lengths, counts, strides, writers, tuple(self._keys), shuffle
        )


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
