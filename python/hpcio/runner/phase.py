"""One timed phase on every rank: barrier, t0, the engine runs the plan, figures come back."""

from __future__ import annotations

from hpcio import _engine
from hpcio.runner import choreography, interrupts
from hpcio.runner.aggregate import RankFigures
from hpcio.runner.world import Comm
from hpcio.spec.model import RunSpec
from hpcio.workloads.contract import Phase, Plan, RankInfo, Sharing, Workload


def shared_upload(run: RunSpec, workload: Workload, phase: Phase) -> bool:
    """N-1 writes to an object store: parts of one upload that rank 0 creates and completes."""
    return phase is Phase.WRITE and workload.sharing is Sharing.RANGE and run.target.is_object_store


def lanes(run: RunSpec, plan: Plan | None, collect: bool) -> int:
    """In-flight lanes, each with a transfer's buffer, for this rank's phase: never more than
    the transfers it has at once, so a typo in --in-flight cannot take the node's memory."""
    if plan is None:
        return 1  # a contributor to collect-and-write: its data goes by message
    most = choreography.chunk_transfers(run) if collect else plan.largest_batch
    return max(1, min(run.in_flight, most))


def run_phase(
    world: Comm,
    target: _engine.Target,
    run: RunSpec,
    workload: Workload,
    phase: Phase,
    who: RankInfo,
) -> RankFigures:
    """Run `phase` of `workload` on this rank, timed from the phase barrier (IOR's semantics).

    Plans and buffers are made before the barrier, so neither counts as I/O time.
    """
    collect = workload.sharing is Sharing.COLLECT
    plan = (
        None if collect and who.rank != choreography.COLLECTOR else workload.plan(run, phase, who)
    )
    executor = _engine.Executor(
        target,
        seed=run.seed,
        in_flight=lanes(run, plan, collect),
        verify=run.verify,
        buffer_bytes=run.transfer_bytes if plan is not None else 0,
    )
    world.barrier()
    t0_ns = _engine.clock_ns()
    executor.start(t0_ns)
    if collect:
        extra = choreography.collect(world, executor, run, phase, who, plan, t0_ns)
        return RankFigures.from_engine(who, executor.figures(), extra)
    assert plan is not None, "only a contributor to collect-and-write goes without a plan"
    if shared_upload(run, workload, phase):
        choreography.shared_object(world, executor, run, plan)
        return RankFigures.from_engine(who, executor.figures())
    # fio's time_based: the engine's lanes go round their transfers until the deadline.
    until_ns = None if run.duration_s is None else t0_ns + int(run.duration_s * 1e9)
    interrupts.wait_for(
        lambda: executor.run(*plan.columns(), shuffle=plan.shuffle, until_ns=until_ns),
        settle=True,
    )
    return RankFigures.from_engine(who, executor.figures())
