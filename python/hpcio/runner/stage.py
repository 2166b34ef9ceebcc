"""Stage: where and as whom this rank runs a run's phases, the one object that travels from
runner/run.py's iterations down to each phase body."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hpcio import _engine
    from hpcio.runner.tracing import Tracer
    from hpcio.runner.world import Comm
    from hpcio.spec.model import RunSpec
    from hpcio.workloads.contract import RankInfo, Workload


@dataclass(frozen=True)
class Stage:
    """The job's world, this rank's engine handle on the target, the run (which carries its
    workload) as this rank does it (on its own target: RunSpec.for_rank), this rank's place in
    the job, its tracer (--trace; None without), and the whole run with all its targets (None:
    the same as `run`)."""

    world: Comm
    target: _engine.Target
    run: RunSpec
    who: RankInfo
    tracer: Tracer | None = None
    whole_run: RunSpec | None = None

    @property
    def targets(self) -> int:
        """How many targets the run spreads its ranks over."""
        return len(self.whole_run.targets) if self.whole_run is not None else 1

    def on_every_target(self, run: RunSpec) -> list[RunSpec]:
        """`run` (this rank's, or a layout of it) once per target of the whole run: what
        removing a run's files must go through, since any rank's keys may be on any target."""
        if self.whole_run is None or not self.whole_run.extra_targets:
            return [run]
        return [dataclasses.replace(run, target=t) for t in self.whole_run.targets]

    @property
    def workload(self) -> Workload:
        return self.run.workload

    def with_run(self, run: RunSpec) -> Stage:
        """The same stage for another run on the same target (a workload's untimed layout)."""
        return dataclasses.replace(self, run=run)
