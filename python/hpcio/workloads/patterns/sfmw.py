"""sfmw (N-1): every rank writes its own region of one shared file, then reads a region back."""

from __future__ import annotations

from typing import ClassVar

from hpcio.spec.model import RunSpec
from hpcio.workloads.contract import Phase, Plan, RankInfo, Sharing, own_runs, read_plan, write_plan

SHARED_KEY = "hpcio-shared.dat"


class SfmwPattern:
    name: ClassVar[str] = "sfmw"
    sharing: ClassVar[Sharing] = Sharing.RANGE
    phases: ClassVar[tuple[Phase, ...]] = (Phase.WRITE, Phase.READ)
    prepared_by: ClassVar[str | None] = None

    def plan(self, run: RunSpec, phase: Phase, who: RankInfo) -> Plan:
        if phase is Phase.WRITE:
            return write_plan(run, SHARED_KEY, own_runs(run, who.rank, shared=True))
        source = who.read_source(run.reorder)
        return read_plan(run, SHARED_KEY, own_runs(run, source, shared=True))

    def keys(self, run: RunSpec) -> list[str]:
        return [SHARED_KEY]
