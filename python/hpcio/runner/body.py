"""A Python body's phase: the workload's own code on every rank between the phase barrier and
its end, with the real communicator, timed through the engine's Recorder. Its figures are the
kind a plan yields (spans, histograms, timeline, series), so reports cannot tell them apart."""

from __future__ import annotations

import os
from typing import Any

from hpcio import _engine
from hpcio.runner import interrupts
from hpcio.runner.aggregate import RankFigures
from hpcio.runner.world import Comm
from hpcio.spec.model import RunSpec
from hpcio.workloads.contract import Phase, PythonBody, RankInfo
from hpcio.workloads.plans import Plan


class _Background:
    """A plan the engine runs while the body goes on."""

    def __init__(self, executor: _engine.Executor) -> None:
        self.executor = executor

    def wait(self) -> None:
        interrupts.wait_for(self.executor.wait, settle=True)


class BodyContext:
    """What the body gets (workloads/contract.py Context)."""

    def __init__(
        self,
        world: Comm,
        target: _engine.Target,
        run: RunSpec,
        phase: Phase,
        who: RankInfo,
    ) -> None:
        self.run = run
        self.phase = phase
        self.who = who
        self.target = target
        self.recorder = _engine.Recorder()
        self.metrics: dict[str, Any] = {}
        self._world = world
        self._t0_ns = 0
        self._background: list[_Background] = []

    def communicator(self) -> Any:
        """The job's mpi4py communicator, a duplicate of the world's for this body alone."""
        return self._world.mpi()

    def background(self, plan: Plan, in_flight: int) -> _Background:
        executor = _engine.Executor(
            self.target,
            seed=self.run.seed,
            in_flight=max(1, min(in_flight, plan.largest_batch)),
            verify=self.run.verify,
            buffer_bytes=plan.largest_transfer,
        )
        executor.start(self._t0_ns)
        executor.run_background(*plan.columns(), shuffle=plan.shuffle)
        running = _Background(executor)
        self._background.append(running)
        return running

    def path(self, key: str) -> str:
        return os.path.join(self.run.target.path, key)

    def start(self, t0_ns: int) -> None:
        self._t0_ns = t0_ns
        self.recorder.start(t0_ns)

    def figures(self) -> _engine.Figures:
        """The Recorder's figures with those of every background plan."""
        figures = self.recorder.figures()
        for running in self._background:
            running.wait()
            figures = figures.merged(running.executor.figures())
        return figures


def run_python_body(
    world: Comm,
    target: _engine.Target,
    run: RunSpec,
    phase: Phase,
    who: RankInfo,
    body: PythonBody,
) -> RankFigures:
    """Barrier, t0, the body on this rank, its figures. An OSError in the body is an error of
    the phase (every rank then fails alike); anything else is a bug and propagates."""
    context = BodyContext(world, target, run, phase, who)
    world.barrier()
    context.start(_engine.clock_ns())
    try:
        body.call(context)
    except OSError as e:
        context.recorder.error(f"{type(e).__name__}: {e}")
    return RankFigures.from_engine(who, context.figures(), metrics=context.metrics)
