"""A Python body's phase: the workload's own code on every rank between the phase barrier and
its end, with the real communicator, timed through the engine's Recorder. Its figures are the
kind a plan yields (spans, histograms, timeline, series), so reports cannot tell them apart."""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from hpcio import _engine
from hpcio.runner import choreography, interrupts
from hpcio.runner.aggregate import RankFigures
from hpcio.runner.cpu import CpuClock
from hpcio.runner.tracing import Tracer
from hpcio.runner.world import Comm
from hpcio.workloads.contract import Phase, PythonBody, RankInfo, SharedUploadBody
from hpcio.workloads.plans import Plan

T = TypeVar("T")

if TYPE_CHECKING:
    from hpcio.runner.stage import Stage
    from hpcio.spec.model import RunSpec


class _Background:
    """An executor that runs plans while the body goes on. Once joined it is idle, and the
    next plan of the same lanes and buffer size runs on it: a body that starts a plan per
    step (training's prefetch) allocates its buffers once, not once a step."""

    def __init__(self, executor: _engine.Executor, lanes: int, buffer_bytes: int) -> None:
        self.executor = executor
        self.lanes = lanes
        self.buffer_bytes = buffer_bytes
        self.joined = True

    def start(self, plan: Plan) -> None:
        self.executor.run_background(plan.for_engine())
        self.joined = False

    def wait(self) -> None:
        if self.joined:
            return
        if self.executor.busy:
            interrupts.wait_for(self.executor.wait, settle=True)
        else:  # done already: joins at once, no helper thread needed for signals
            self.executor.wait()
        self.joined = True

    def failed(self) -> bool:
        """Joined, and some of its operations failed (their messages are in the figures)."""
        return self.joined and self.executor.figures().errors > 0


class BodyContext:
    """What the body gets (workloads/contract.py Context)."""

    def __init__(
        self,
        world: Comm,
        target: _engine.Target,
        run: RunSpec,
        phase: Phase,
        who: RankInfo,
        trace_room: int = _engine.TRACE_LIMIT,
    ) -> None:
        self.run = run
        #: Operations the rank's trace may still keep: the recorder and each executor keep
        #: no more (runner/tracing.py).
        self._trace_room = trace_room
        self.phase = phase
        self.who = who
        self.target = target
        self.recorder = _engine.Recorder(trace=run.trace, trace_limit=trace_room)
        self.metrics: dict[str, Any] = {}
        self._world = world
        self._t0_ns = 0
        self._background: list[_Background] = []
        #: Figures of the plans write_from ran.
        self._written: list[_engine.Figures] = []
        #: (start, end) on clock_ns's scale of the body's own metadata work (see finding).
        self._finding: tuple[int, int] | None = None
        self._written_traces: list[_engine.TraceColumns | None] = []
        # An executor counts the target's requests since it started, so plans running at
        # once would each count the others'. This one runs nothing: from the phase's start
        # it counts every request this rank's plans made, once. It starts here, before the
        # phase's barrier (nothing is requested in between): its start copies the target's
        # counters and time-to-first-byte histograms, 0.05-4 ms that were timed before the
        # body's first open.
        self._requests = _engine.Executor(target, seed=run.seed)
        self._requests.start(_engine.clock_ns())

    def communicator(self) -> Any:
        """The job's mpi4py communicator, a duplicate of the world's for this body alone."""
        return self._world.mpi()

    def barrier(self) -> None:
        self._world.barrier()

    def background(
        self, plan: Plan, in_flight: int, buffer_bytes: int | None = None
    ) -> _Background:
        lanes = max(1, min(in_flight, plan.largest_batch))
        size = max(buffer_bytes or 0, plan.largest_transfer)
        running = next(
            (b for b in self._background
             if b.joined and b.lanes == lanes and b.buffer_bytes >= size),
            None,
        )  # fmt: skip
        if running is None:
            executor = _engine.Executor(
                self.target, seed=self.run.seed, in_flight=lanes, verify=self.run.verify,
                buffer_bytes=size, trace=self.run.trace, trace_limit=self._trace_room,
            )  # fmt: skip
            executor.start(self._t0_ns)
            running = _Background(executor, lanes, size)
            self._background.append(running)
        running.start(plan)
        return running

    def write_from(self, plan: Plan, source: np.ndarray, in_flight: int) -> None:
        """Run `plan` on the engine now (GIL released), its writes taking the bytes of
        `source` (each batch of transfers from its start: one file per plan) instead of the
        payload; its figures join the rank's."""
        executor = _engine.Executor(
            self.target,
            seed=self.run.seed,
            in_flight=max(1, min(in_flight, plan.largest_batch)),
            trace=self.run.trace,
            trace_limit=self._trace_room,
        )
        executor.start(self._t0_ns)
        engine_plan = plan.for_engine()
        interrupts.wait_for(
            lambda: executor.run(engine_plan, source=source),
            settle=True,
        )
        self._written.append(executor.figures())
        self._written_traces.append(executor.take_trace())

    def shared_upload(self, plan: Plan, part_bytes: int) -> None:
        """Collective (every rank calls it, in the same order): each rank's `plan` puts its
        parts of one object, an upload or block list rank 0 starts and completes (N-1 on an
        object store, runner/choreography.py); its figures join the rank's."""
        executor = _engine.Executor(
            self.target, seed=self.run.seed, in_flight=1, verify=self.run.verify,
            buffer_bytes=plan.largest_transfer, trace=self.run.trace,
            trace_limit=self._trace_room,
        )  # fmt: skip
        executor.start(self._t0_ns)
        choreography.shared_object(self._world, executor, SharedUploadBody(plan, part_bytes, 1))
        self._written.append(executor.figures())
        self._written_traces.append(executor.take_trace())

    def path(self, key: str) -> str:
        return os.path.join(self.run.target.path, key)

    def interruptible(self, call: Callable[[], T]) -> T:
        """In a helper thread while this one waits for a signal (interrupts.wait_for), where
        MPI allows calls from another thread (the call may make MPI's); else here."""
        mpi: Any = sys.modules.get("mpi4py.MPI")
        running = mpi is not None and mpi.Is_initialized() and not mpi.Is_finalized()
        if running and mpi.Query_thread() < mpi.THREAD_SERIALIZED:
            return call()
        return interrupts.wait_for(call, settle=True)

    def finding(self, start_ns: int, end_ns: int) -> None:
        """The body spent `start_ns`..`end_ns` (clock_ns) finding its files (a listing,
        stats): it joins the phase's open span, so the phase's time includes it."""
        span = (start_ns, end_ns)
        self._finding = span if self._finding is None else (
            min(self._finding[0], start_ns), max(self._finding[1], end_ns)
        )  # fmt: skip

    def opened_ns(self, open_ns: tuple[int, int] | None) -> tuple[int, int] | None:
        """`open_ns` (since t0) widened by the time spent finding files."""
        if self._finding is None:
            return open_ns
        found = (self._finding[0] - self._t0_ns, self._finding[1] - self._t0_ns)
        return found if open_ns is None else (min(open_ns[0], found[0]), max(open_ns[1], found[1]))

    def start(self, t0_ns: int) -> None:
        self._t0_ns = t0_ns
        self.recorder.start(t0_ns)

    def requests(self) -> tuple[dict[str, int], int, int, dict[str, int]]:
        """(requests by kind, throttled, retried, failed requests by cause) of the phase: the
        body's own calls and every plan's, each request once; after figures()."""
        own = self.recorder.figures()
        plans = self._requests.figures()
        kinds = {**own.requests}
        for kind, count in plans.requests.items():
            kinds[kind] = kinds.get(kind, 0) + count
        failures = {**own.store_failures}
        for cause, count in plans.store_failures.items():
            failures[cause] = failures.get(cause, 0) + count
        return kinds, own.throttled + plans.throttled, own.retried + plans.retried, failures

    def traced(self, tracer: Tracer) -> None:
        """Hand the body's own operations and its plans' to `tracer`; after figures()."""
        tracer.add(self.recorder.take_trace())
        for running in self._background:
            tracer.add(running.executor.take_trace())
        for columns in self._written_traces:
            tracer.add(columns)

    def figures(self) -> _engine.Figures:
        """The Recorder's figures with those of every plan run."""
        figures = self.recorder.figures()
        for running in self._background:
            running.wait()
            figures = figures.merged(running.executor.figures())
        for written in self._written:
            figures = figures.merged(written)
        return figures


def _communicator_ready(world: Comm) -> None:
    """Make the bodies' communicator (a Dup of the world's, made once) before the phase's
    barrier: the first Dup took 40-55 ms of the first library phase, between t0 and the first
    open (Open MPI sets up the new communicator's collectives), on a 2-rank run at load 9. Only
    where MPI runs already (every rank calls this in the same order, so the Dup, a collective,
    matches): a world of one does not start MPI for a body that may not need it."""
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is not None and mpi.Is_initialized() and not mpi.Is_finalized():
        world.mpi()


def run_python_body(stage: Stage, phase: Phase, body: PythonBody) -> RankFigures:
    """Barrier, t0, the body on this rank, its figures. An OSError in the body is an error of
    the phase (every rank then fails alike); anything else is a bug and propagates."""
    world, who, tracer = stage.world, stage.who, stage.tracer
    room = _engine.TRACE_LIMIT if tracer is None else tracer.room
    context = BodyContext(world, stage.target, stage.run, phase, who, room)
    _communicator_ready(world)
    world.barrier()
    clock = CpuClock()
    context.start(_engine.clock_ns())
    try:
        body.call(context)
    except OSError as e:
        context.recorder.error(f"{type(e).__name__}: {e}")
    merged = context.figures()  # waits for the body's background plans: part of the phase
    figures = RankFigures.from_engine(who, merged, metrics=context.metrics, cpu=clock.stop())
    if tracer is not None:
        context.traced(tracer)
    requests, throttled, retried, failures = context.requests()
    return dataclasses.replace(
        figures,
        open_ns=context.opened_ns(figures.open_ns),
        requests=requests,
        throttled=throttled,
        retried=retried,
        store_failures=failures,
    )
