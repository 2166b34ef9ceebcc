"""mfmr (N-N read): every rank reads its own file (another rank's with reorder)."""

from __future__ import annotations

from typing import ClassVar

from hpcio.spec.model import RunSpec
from hpcio.workloads.contract import Phase, Plan, RankInfo, Sharing
from hpcio.workloads.patterns.mfmw import MfmwPattern


class MfmrPattern:
    name: ClassVar[str] = "mfmr"
    sharing: ClassVar[Sharing] = Sharing.PRIVATE
    phases: ClassVar[tuple[Phase, ...]] = (Phase.READ,)
    prepared_by: ClassVar[str | None] = "mfmw"

    def plan(self, run: RunSpec, phase: Phase, who: RankInfo) -> Plan:
        return MfmwPattern().plan(run, phase, who)

    def keys(self, run: RunSpec) -> list[str]:
        return MfmwPattern().keys(run)
