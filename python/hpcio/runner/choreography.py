"""Collective data movement that one rank's plan cannot express: collect-and-write (sfsw).

Writing, every rank's data travels to the collector in chunks of at most --gather-chunk and the
collector writes each chunk before taking the next, so its memory is one chunk, never the file.
Reading, the collector reads chunk by chunk and sends each to the rank that reads that data.
"""

from __future__ import annotations

import numpy as np

from hpcio import _engine
from hpcio.runner.aggregate import Contribution
from hpcio.runner.world import Comm
from hpcio.spec.model import RunSpec
from hpcio.workloads._base import Op, Phase, Plan, PlanBuilder, RankInfo
from hpcio.workloads.patterns.sfsw import COLLECTOR, SFSW_KEY, chunk_offsets, chunks

_TAG = 7301


def collect(
    world: Comm,
    executor: _engine.Executor,
    run: RunSpec,
    phase: Phase,
    who: RankInfo,
    plan: Plan | None,
    t0_ns: int,
) -> Contribution:
    """Move this rank's share of a collect-and-write phase; what it did outside the engine."""
    if who.rank == COLLECTOR:
        assert plan is not None
        return _collector(world, executor, run, phase, who, plan, t0_ns)
    return _contributor(world, run, phase, who, t0_ns)


def _chunk_plan(run: RunSpec, op: Op, offset: int, length: int, writer: int) -> Plan:
    return (
        PlanBuilder()
        .transfers(op, SFSW_KEY, chunk_offsets(run, offset, length), run.transfer_bytes, writer)
        .build()
    )


def _feed(executor: _engine.Executor, plan: Plan, **data: np.ndarray) -> None:
    executor.run(
        plan.ops, plan.key_index, plan.offsets, plan.lengths, plan.writers, list(plan.keys), **data
    )


def _collector(
    world: Comm,
    executor: _engine.Executor,
    run: RunSpec,
    phase: Phase,
    who: RankInfo,
    plan: Plan,
    t0_ns: int,
) -> Contribution:
    first_control = 1  # the plan is [open, (sync), close]: chunks go after the open
    _feed(executor, plan.rows(0, first_control))
    largest = max(length for _, length in chunks(run, 0))
    buffer = np.empty(largest, np.uint8)
    mine = Contribution()
    for writer in range(run.ranks):
        if phase is Phase.WRITE:
            for offset, length in chunks(run, writer):
                if writer == COLLECTOR:
                    _feed(executor, _chunk_plan(run, Op.WRITE, offset, length, writer))
                    continue
                world.recv_bytes(buffer[:length], source=writer, tag=_TAG)
                _feed(
                    executor,
                    _chunk_plan(run, Op.WRITE, offset, length, writer),
                    source=buffer[:length],
                )
        else:
            reader = _reader_of(run, writer, who)
            for offset, length in chunks(run, writer):
                _feed(
                    executor,
                    _chunk_plan(run, Op.READ, offset, length, writer),
                    sink=buffer[:length],
                )
                if reader == COLLECTOR:
                    mine.check(run, buffer[:length], writer, offset)
                else:
                    world.send_bytes(buffer[:length], dest=reader, tag=_TAG)
    _feed(executor, plan.rows(first_control))
    mine.end_ns = _engine.clock_ns() - t0_ns
    return mine


def _reader_of(run: RunSpec, writer: int, who: RankInfo) -> int:
    """The rank that reads `writer`'s data back: the one whose read_source is `writer`."""
    for rank in range(run.ranks):
        peer = RankInfo(rank, who.size, ranks_per_node=who.ranks_per_node, nodes=who.nodes)
        if peer.read_source(run.reorder) == writer:
            return rank
    raise AssertionError(f"no rank reads rank {writer}'s data")


def _contributor(
    world: Comm, run: RunSpec, phase: Phase, who: RankInfo, t0_ns: int
) -> Contribution:
    pieces = chunks(run, who.rank if phase is Phase.WRITE else who.read_source(run.reorder))
    buffer = np.empty(max(length for _, length in pieces), np.uint8)
    mine = Contribution(start_ns=_engine.clock_ns() - t0_ns)
    for offset, length in pieces:
        if phase is Phase.WRITE:
            _engine.payload_fill(buffer[:length], run.seed, who.rank, SFSW_KEY, offset)
            world.send_bytes(buffer[:length], dest=COLLECTOR, tag=_TAG)
        else:
            world.recv_bytes(buffer[:length], source=COLLECTOR, tag=_TAG)
            mine.check(run, buffer[:length], who.read_source(run.reorder), offset)
    mine.end_ns = _engine.clock_ns() - t0_ns
    return mine
