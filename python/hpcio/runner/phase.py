"""One timed phase on every rank: barrier, t0, the workload's body, figures come back.

The body is one of the contract's three kinds: an engine plan, a collective step
(runner/choreography.py), or a Python body (runner/body.py)."""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING

from hpcio import _engine
from hpcio.live.status import Goal, phase_status
from hpcio.runner import choreography, interrupts
from hpcio.runner.aggregate import RankFigures
from hpcio.runner.cpu import CpuClock
from hpcio.runner.stage import Stage
from hpcio.runner.tracing import Tracer
from hpcio.workloads import striping
from hpcio.workloads.contract import (
    Body,
    CollectBody,
    Phase,
    PlanBody,
    PythonBody,
    SharedUploadBody,
)

if TYPE_CHECKING:
    from hpcio.spec.model import RunSpec


def lanes(in_flight: int, most: int) -> int:
    """In-flight lanes, each with a transfer's buffer: never more than the transfers a rank
    has at once, so a typo in --in-flight cannot take the node's memory."""
    return max(1, min(in_flight, most))


def _executor(
    target: _engine.Target, run: RunSpec, buffer_bytes: int, lanes: int, tracer: Tracer | None
) -> _engine.Executor:
    """Buffers of `buffer_bytes` are allocated and touched here, before any clock starts. A
    traced one keeps no more operations than the rank's trace has room for."""
    return _engine.Executor(
        target,
        seed=run.seed,
        in_flight=lanes,
        verify=run.verify,
        buffer_bytes=buffer_bytes,
        trace=run.trace,
        trace_limit=_engine.TRACE_LIMIT if tracer is None else tracer.room,
    )


def run_phase(stage: Stage, phase: Phase) -> RankFigures:
    """Run `phase` of `workload` on this rank, timed from the phase barrier (IOR's semantics),
    and with --reorder, say whose data a read phase read.
    With a tracer (--trace), the phase's operations go to it after the phase.

    Bodies, plans and buffers are made before the barrier, so none counts as I/O time.
    """
    figures = _run_body(stage, phase)
    if phase is Phase.READ:
        facts = stage.workload.cache_facts(stage.run)
        # Whole-file reads (sfmr --read-scope all, every rank of a node rereading the same
        # data) read every rank's data, not one rank's.
        if facts.reorder and not facts.rereads:
            figures = dataclasses.replace(figures, read_from=stage.who.read_source(True))
    return figures


def _run_body(stage: Stage, phase: Phase) -> RankFigures:
    world, run, who, workload = stage.world, stage.run, stage.who, stage.workload
    if phase is Phase.WRITE and striping.lays_out(run, workload):
        keys = workload.keys(run)
        striping.lay_out(
            run,
            [os.path.join(run.target.path, k) for k in keys[who.rank :: who.size]],
            striping.method(run, workload) or striping.LFS,
        )
        world.barrier()
    body = workload.body(run, phase, who)
    until_s = body.until_s if isinstance(body, PlanBody) else None
    with phase_status(world, phase.value, Goal(workload.moved_bytes(run, phase), until_s)):
        return _timed(stage, phase, body)


def _timed(stage: Stage, phase: Phase, body: Body) -> RankFigures:
    world, target, run, who, tracer = stage.world, stage.target, stage.run, stage.who, stage.tracer
    if isinstance(body, PythonBody):
        from hpcio.runner.body import run_python_body

        return run_python_body(stage, phase, body)
    if isinstance(body, CollectBody):
        # A contributor's data goes by message: it needs no buffer of the engine's.
        collector = who.rank == body.collector
        most = choreography.chunk_transfers(body)
        executor = (
            _executor(target, run, body.transfer_bytes, lanes(body.in_flight, most), tracer)
            if collector
            else _executor(target, run, 0, 1, tracer)
        )
        world.barrier()
        clock = CpuClock()
        t0_ns = _engine.clock_ns()
        executor.start(t0_ns)
        extra = choreography.collect(world, executor, run, phase, who, body, t0_ns)
        figures = RankFigures.from_engine(who, executor.figures(), extra, cpu=clock.stop())
        _traced(tracer, executor)
        return figures
    if isinstance(body, SharedUploadBody):
        plan = body.plan
        executor = _executor(
            target, run, plan.largest_transfer, lanes(body.in_flight, plan.largest_batch), tracer
        )
        world.barrier()
        clock = CpuClock()
        executor.start(_engine.clock_ns())
        choreography.shared_object(world, executor, body)
        figures = RankFigures.from_engine(who, executor.figures(), cpu=clock.stop())
        _traced(tracer, executor)
        return figures
    assert isinstance(body, PlanBody)
    plan = body.plan
    executor = _executor(
        target, run, plan.largest_transfer, lanes(body.in_flight, plan.largest_batch), tracer
    )
    engine_plan = plan.for_engine()
    world.barrier()
    clock = CpuClock()
    t0_ns = _engine.clock_ns()
    executor.start(t0_ns)
    # fio's time_based: the engine's lanes go round their transfers until the deadline.
    until_ns = None if body.until_s is None else t0_ns + int(body.until_s * 1e9)
    interrupts.wait_for(
        lambda: executor.run(engine_plan, until_ns=until_ns),
        settle=True,
    )
    figures = RankFigures.from_engine(who, executor.figures(), cpu=clock.stop())
    _traced(tracer, executor)
    return figures


def _traced(tracer: Tracer | None, executor: _engine.Executor) -> None:
    if tracer is not None:
        tracer.add(executor.take_trace())
