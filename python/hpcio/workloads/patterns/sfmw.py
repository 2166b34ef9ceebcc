"""sfmw (N-1): every rank writes its own region of one shared file, then reads a region back.
On object stores the regions are parts of one upload that rank 0 starts and completes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hpcio.workloads.contract import Body, Phase, PlanBody, RankInfo, SharedUploadBody
from hpcio.workloads.patterns.common import PatternWorkload, own_runs, read_plan, write_plan
from hpcio.workloads.patterns.params import SharedFileParams

if TYPE_CHECKING:
    from hpcio.spec.model import RunSpec

SHARED_KEY = "hpcio-shared.dat"


class Sfmw(PatternWorkload):
    name = "sfmw"
    params = SharedFileParams
    summary = "N-1: every rank writes its region of one shared file"

    def engine_body(self, run: RunSpec, phase: Phase, who: RankInfo) -> Body:
        p = run.params
        if phase is Phase.WRITE:
            plan = write_plan(run, SHARED_KEY, own_runs(run, who.rank, shared=True))
            if run.target.is_object_store:
                return SharedUploadBody(plan, p.transfer_bytes, p.in_flight)
            return PlanBody(plan, p.in_flight)
        source = who.read_source(p.reorder)
        return PlanBody(read_plan(run, SHARED_KEY, own_runs(run, source, shared=True)), p.in_flight)

    def keys(self, run: RunSpec) -> list[str]:
        return [SHARED_KEY]

    def owns_key(self, name: str) -> bool:
        return name == SHARED_KEY
