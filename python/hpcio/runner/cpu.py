"""The client's CPU over a phase: each rank's user and system time in its phase window, and
what it says about the phase's figure.

getrusage(RUSAGE_SELF) covers every thread of the rank's process: the engine's lanes and its
I/O runtime as well as Python, and threads that ended inside the window. A rank whose threads
were on a core or runnable and waiting for one (Linux schedstat's run delay) for more than
CLIENT_BOUND_FRACTION of its window, on average over the ranks, was limited by its own CPU
(payload generation, copies, checksums, TLS, MPI's busy polling), not by the storage: the
phase's bandwidth then measures the client. The wait counts because on a node whose cores are
shared (other ranks, other jobs) a CPU-bound rank gets less than a core and is no less bound."""

from __future__ import annotations

import os
import resource
from collections.abc import Sequence
from dataclasses import dataclass

from hpcio import _engine
from hpcio.results.schema import CpuFigures, PhaseFigures

#: Above this mean fraction of a core per rank a phase is client-bound.
CLIENT_BOUND_FRACTION = 0.9
#: Starts every document warning about a client-bound phase (report/html.py gathers them).
CLIENT_BOUND_WARNING = "client-bound"
_GIB = float(1 << 30)
_NS = 1e9


@dataclass(frozen=True, slots=True)
class RankCpu:
    """One rank's CPU seconds over its phase window, the time its threads waited for a core
    (None where the kernel keeps no schedstat), and the window's wall-clock length."""

    user_s: float
    system_s: float
    window_s: float
    waited_s: float | None = None

    @property
    def core_fraction(self) -> float:
        """Cores this rank kept busy on average over its window (above 1 with threads)."""
        return (self.user_s + self.system_s) / self.window_s if self.window_s > 0 else 0.0

    @property
    def demand_fraction(self) -> float:
        """Cores this rank was on or waiting for, on average over its window."""
        waited = self.waited_s or 0.0
        return (self.user_s + self.system_s + waited) / self.window_s if self.window_s > 0 else 0.0


class CpuClock:
    """Started right after the phase barrier, stopped when the rank's share of the phase ends;
    the barrier's own wait (MPI polls) is outside."""

    def __init__(self) -> None:
        self._wall_ns = _engine.clock_ns()
        self._usage = resource.getrusage(resource.RUSAGE_SELF)
        self._threads = _thread_run_delays()
        self._ended_ns = _engine.ended_threads_waited_ns()

    def stop(self) -> RankCpu:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        threads = _thread_run_delays()
        waited = None
        if threads:
            # Live threads from the start or from their birth in the window; those that ended
            # in it (a plan's lanes, the runner's helper) counted themselves as they ended.
            live = sum(ns - self._threads.get(tid, 0) for tid, ns in threads.items())
            waited = (live + _engine.ended_threads_waited_ns() - self._ended_ns) / _NS
        return RankCpu(
            user_s=usage.ru_utime - self._usage.ru_utime,
            system_s=usage.ru_stime - self._usage.ru_stime,
            window_s=(_engine.clock_ns() - self._wall_ns) / _NS,
            waited_s=waited,
        )


def _thread_run_delays() -> dict[int, int]:
    """Each live thread's run delay so far (ns), by thread id; empty without schedstat."""
    delays = {}
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return {}
    for tid in tids:
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                delays[int(tid)] = int(f.read().split()[1])
        except (OSError, ValueError, IndexError):
            continue  # ended meanwhile, or no schedstat
    return delays


def phase_cpu(ranks: Sequence[RankCpu], bytes_moved: int) -> CpuFigures:
    """CPU-seconds of all ranks per GiB moved (None when nothing moved), the mean and the
    largest fraction of a core over ranks, and whether the mean makes the phase client-bound."""
    user = sum(r.user_s for r in ranks)
    system = sum(r.system_s for r in ranks)
    fractions = [r.core_fraction for r in ranks]
    demand = _mean([r.demand_fraction for r in ranks])
    waits = [r.waited_s for r in ranks]
    return CpuFigures(
        user_s=user,
        system_s=system,
        seconds_per_gib=(user + system) / (bytes_moved / _GIB) if bytes_moved else None,
        core_fraction_mean=_mean(fractions),
        core_fraction_max=max(fractions, default=0.0),
        client_bound=client_bound(demand),
        waited_s=None if None in waits else sum(w or 0.0 for w in waits),
        demand_fraction_mean=demand,
    )


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def client_bound(demand_fraction_mean: float) -> bool:
    """Whether ranks on a core or waiting for one for this fraction of their windows, on
    average, were bound by the client's CPU."""
    return demand_fraction_mean > CLIENT_BOUND_FRACTION


def client_bound_warnings(
    figures: Sequence[PhaseFigures], measures: str = "bandwidth"
) -> tuple[str, ...]:
    """A warning per phase that was client-bound in any iteration; `measures` names what the
    run's figures are ("bandwidth", or mdtest's "rates of calls (ops/s)")."""
    found = []
    for phase in dict.fromkeys(f.phase for f in figures):
        measured = [f.cpu for f in figures if f.phase == phase and f.cpu is not None]
        flagged = sum(c.client_bound for c in measured)
        if flagged:
            found.append(client_bound_warning(phase, flagged, len(measured), measures))
    return tuple(found)


def client_bound_warning(
    phase: str, flagged: int, iterations: int, measures: str = "bandwidth"
) -> str:
    """The document's warning for a phase flagged in `flagged` of its `iterations` (no
    figures in it, so that runs alike share one warning in a report)."""
    what = (
        f"the {phase} bandwidth measures" if measures == "bandwidth" else f"its {measures} measure"
    )
    return (
        f"{CLIENT_BOUND_WARNING}: {phase} in {flagged} of {iterations} iteration(s): the ranks "
        f"were on a core or waiting for one over {CLIENT_BOUND_FRACTION:.0%} of the phase; "
        f"{what} the client's CPU, not the storage"
    )
