"""How one mdtest phase is timed on a rank (mdtest.c: phase_prepare, phase_end, updateResult):
barrier, start, the rank's calls, end before the barrier, barrier, end. Each rank's items and
times go into the phase's metrics by mdtest phase name; workload.reduce_metrics makes the
rates from every rank's."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from hpcio.workloads.native import _engine
from hpcio.workloads.plans import Op

if TYPE_CHECKING:
    from hpcio.workloads.contract import Context

_NS = 1e9
#: Failed calls whose message a rank keeps (the rest are counted).
_KEPT_ERRORS = 5


class PhaseClock:
    """Times this rank's mdtest phases, between barriers on `comm` (mpi4py)."""

    def __init__(self, context: Context, comm: Any) -> None:
        self._context = context
        self._comm = comm
        p = context.run.params
        #: Time each call (--op-latency): two clock reads a call, which mdtest does not make.
        self.latencies = bool(p.op_latency)
        self._stonewall_s: float | None = p.stonewall_s
        self._start_ns = 0
        self._first_ns: int | None = None
        self._last_ns = 0
        self._starts: list[int] = []
        self._ends: list[int] = []
        self.failures = 0

    def phase(self, name: str, calls: Callable[[], int]) -> int:
        """Run `calls` (returns the items it made) as mdtest phase `name`; the items."""
        self._context.barrier()
        self._start_ns = start = _engine.clock_ns()
        items = calls()
        before = _engine.clock_ns()
        self._context.barrier()
        end = _engine.clock_ns()
        if self._first_ns is None:
            self._first_ns = start
        self._last_ns = end
        metrics = self._context.metrics
        metrics[f"{name}_items"] = items
        metrics[f"{name}_s"] = (end - start) / _NS
        metrics[f"{name}_before_barrier_s"] = (before - start) / _NS
        if self._starts:
            metrics[f"{name}_hdr"] = _histogram(self._starts, self._ends)
            self._starts, self._ends = [], []
        return items

    def took(self, start_ns: int) -> None:
        """One call, from `start_ns` to now (only when self.latencies)."""
        self._starts.append(start_ns)
        self._ends.append(_engine.clock_ns())

    def stonewall_ns(self) -> int | None:
        """When the current phase stops making new items (mdtest -W), on clock_ns's scale."""
        if self._stonewall_s is None:
            return None
        return self._start_ns + int(self._stonewall_s * _NS)

    def most(self, made: int) -> int:
        """The most items any rank made before the stonewall (every rank calls it)."""
        return max(int(n) for n in self._comm.allgather(made))

    def failed(self, phase: str, path: str, error: OSError) -> None:
        """A call that failed: counted, its message kept for the first few (an error of the
        phase), and the rank goes on to meet the next barrier."""
        self.failures += 1
        if self.failures <= _KEPT_ERRORS:
            self._context.recorder.error(f"{phase}: {path}: {error.strerror or error}")

    def finish(self) -> None:
        """The phases' span joins the hpcio phase's time; failures are counted."""
        if self._first_ns is not None:
            self._context.finding(self._first_ns, self._last_ns)
        self._context.metrics["failed_calls"] = self.failures


def _histogram(starts: list[int], ends: list[int]) -> bytes:
    """The calls' latencies as the engine's mergeable histogram."""
    recorder = _engine.Recorder()
    recorder.start(starts[0])
    count = len(starts)
    recorder.record_many(
        np.full(count, int(Op.READ), np.uint8),
        np.asarray(starts, np.uint64),
        np.asarray(ends, np.uint64),
        np.zeros(count, np.uint64),
    )
    return bytes(recorder.figures().latency_hdr)
