"""Collective steps that one rank's plan cannot express: collect-and-write (sfsw) and the
shared object of N-1 writes on object stores.

Writing, every rank's data travels to the collector in chunks of at most --gather-chunk; the
collector receives the next chunk while it writes the current one, so it holds two chunks,
never the file. Reading, it reads the next chunk while the current one travels to its reader.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from hpcio import _engine
from hpcio.runner import interrupts
from hpcio.runner.aggregate import Contribution
from hpcio.runner.world import Comm
from hpcio.workloads import double_buffer
from hpcio.workloads.contract import CollectBody, Phase, RankInfo, SharedUploadBody
from hpcio.workloads.plans import Op, Plan, PlanBuilder, Runs

if TYPE_CHECKING:
    from hpcio.spec.model import RunSpec

_TAG = 7301


def collect(
    world: Comm,
    executor: _engine.Executor,
    run: RunSpec,
    phase: Phase,
    who: RankInfo,
    body: CollectBody,
    t0_ns: int,
) -> Contribution:
    """Move this rank's share of a collect-and-write phase; what it did outside the engine."""
    if who.rank == body.collector:
        return _collector(world, executor, run, phase, body)
    return _contributor(world, run, phase, who, body, t0_ns)


def chunk_transfers(body: CollectBody) -> int:
    """The most transfers in one piece the collector writes or reads."""
    longest = max((length for mine in body.pieces for _, length in mine), default=0)
    return longest // body.transfer_bytes


def _chunk_plan(body: CollectBody, op: Op, offset: int, length: int, writer: int) -> Plan:
    runs = Runs.of(offset, length // body.transfer_bytes, writer)
    return PlanBuilder().runs(op, body.key, runs, body.transfer_bytes).build()


def _feed(
    executor: _engine.Executor,
    plan: Plan,
    *,
    source: np.ndarray | None = None,
    sink: np.ndarray | None = None,
) -> None:
    engine_plan = plan.for_engine()
    interrupts.wait_for(
        lambda: executor.run(engine_plan, source=source, sink=sink),
        settle=True,
    )


def _collector(
    world: Comm,
    executor: _engine.Executor,
    run: RunSpec,
    phase: Phase,
    body: CollectBody,
) -> Contribution:
    first_control = 1  # the plan is [open, (sync), close]: chunks go between them
    pieces = [(writer, *piece) for writer, mine in enumerate(body.pieces) for piece in mine]
    # An object store picks one PUT or a multipart upload at the open: tell it what follows.
    executor.expect(body.key, body.file_bytes // body.transfer_bytes, body.transfer_bytes)
    _feed(executor, body.plan.rows(0, first_control))
    largest = max(length for _, _, length in pieces)
    buffers = (np.empty(largest, np.uint8), np.empty(largest, np.uint8))
    mine = Contribution()
    if phase is Phase.WRITE:
        _collect_and_write(world, executor, body, pieces, buffers)
    else:
        _read_and_scatter(world, executor, run, body, pieces, buffers, mine)
    _feed(executor, body.plan.rows(first_control))
    return mine


def _collect_and_write(
    world: Comm,
    executor: _engine.Executor,
    body: CollectBody,
    pieces: list[tuple[int, int, int]],
    buffers: tuple[np.ndarray, np.ndarray],
) -> None:
    def write(writer: int, offset: int, length: int, data: np.ndarray | None) -> None:
        _feed(executor, _chunk_plan(body, Op.WRITE, offset, length, writer), source=data)

    double_buffer.collect_and_write(
        pieces,
        body.collector,
        buffers,
        lambda buffer, writer: world.irecv_bytes(buffer, source=writer, tag=_TAG),
        write,
    )


def _read_and_scatter(
    world: Comm,
    executor: _engine.Executor,
    run: RunSpec,
    body: CollectBody,
    pieces: list[tuple[int, int, int]],
    buffers: tuple[np.ndarray, np.ndarray],
    mine: Contribution,
) -> None:
    def read(writer: int, offset: int, length: int, buffer: np.ndarray) -> np.ndarray:
        _feed(executor, _chunk_plan(body, Op.READ, offset, length, writer), sink=buffer)
        return buffer

    double_buffer.read_and_scatter(
        pieces,
        body.collector,
        buffers,
        {source: rank for rank, source in enumerate(body.reads_from)},
        read,
        lambda data, reader: world.isend_bytes(data, dest=reader, tag=_TAG),
        lambda data, writer, offset: mine.check(run, body.key, data, writer, offset),
    )


def _contributor(
    world: Comm, run: RunSpec, phase: Phase, who: RankInfo, body: CollectBody, t0_ns: int
) -> Contribution:
    source = who.rank if phase is Phase.WRITE else body.reads_from[who.rank]
    pieces = body.pieces[source]
    largest = max(length for _, length in pieces)
    payload = _engine.PayloadBuffer(run.seed, largest) if phase is Phase.WRITE else None
    buffer = payload.view if payload is not None else np.empty(largest, np.uint8)
    mine = Contribution(start_ns=_engine.clock_ns() - t0_ns)
    for offset, length in pieces:
        if payload is not None:
            payload.fill(who.rank, body.key, offset, length)
            world.send_bytes(buffer[:length], dest=body.collector, tag=_TAG)
        else:
            world.recv_bytes(buffer[:length], source=body.collector, tag=_TAG)
            mine.check(run, body.key, buffer[:length], source, offset)
    mine.end_ns = _engine.clock_ns() - t0_ns
    return mine


def shared_object(world: Comm, executor: _engine.Executor, body: SharedUploadBody) -> None:
    """N-1 on an object store: rank 0 starts one multipart upload (S3, GCS) or block list
    (Azure), every rank puts its parts under global part numbers (offset / part size), rank 0
    gathers the receipts and completes. Any failure on any rank aborts the upload instead, so
    no incomplete upload or uncommitted block is left behind."""
    plan = body.plan
    key = plan.keys[0]
    completed = False
    # The engine keeps the id of the upload it began: an interrupt may land before this
    # function holds it, and the abort below must still find it.
    try:
        upload_id = executor.begin_shared(key, body.part_bytes) if world.rank == 0 else None
        upload_id = world.bcast(upload_id)
        if upload_id is None:
            return  # rank 0 could not start the upload; its figures hold the error
        if world.rank != 0:
            executor.join_shared(key, upload_id, body.part_bytes)
        _feed(executor, plan)
        failed_here = executor.figures().errors > 0
        everyone = world.gather((executor.take_receipts(key), failed_here))
        if everyone is not None and not any(failed for _, failed in everyone):
            receipts = [r for mine, _ in everyone for r in mine]
            completed = executor.finish_shared(key, upload_id, receipts)
    finally:
        if world.rank == 0 and not completed:
            executor.abort_shared(key)
