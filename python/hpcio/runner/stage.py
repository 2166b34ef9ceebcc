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
    workload), this rank's place in the job, and its tracer (--trace; None without)."""

    world: Comm
    target: _engine.Target
    run: RunSpec
    who: RankInfo
    tracer: Tracer | None = None

    @property
    def workload(self) -> Workload:
        return self.run.workload

    def with_run(self, run: RunSpec) -> Stage:
        """The same stage for another run on the same target (a workload's untimed layout)."""
        return dataclasses.replace(self, run=run)
