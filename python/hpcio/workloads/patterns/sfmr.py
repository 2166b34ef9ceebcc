"""sfmr (N-1 read, broadcast input): every rank reads the whole shared file, or its own region."""

from __future__ import annotations

from typing import ClassVar

from hpcio.spec.model import RunSpec
from hpcio.workloads.contract import Phase, Plan, RankInfo, Sharing, every_block, read_plan
from hpcio.workloads.patterns.sfmw import SHARED_KEY, SfmwPattern


class SfmrPattern:
    name: ClassVar[str] = "sfmr"
    sharing: ClassVar[Sharing] = Sharing.RANGE
    phases: ClassVar[tuple[Phase, ...]] = (Phase.READ,)
    prepared_by: ClassVar[str | None] = "sfmw"

    def plan(self, run: RunSpec, phase: Phase, who: RankInfo) -> Plan:
        if phase is Phase.WRITE:
            return SfmwPattern().plan(run, phase, who)
        if run.read_scope == "own":
            return SfmwPattern().plan(run, Phase.READ, who)
        return read_plan(run, SHARED_KEY, every_block(run))

    def keys(self, run: RunSpec) -> list[str]:
        return [SHARED_KEY]
