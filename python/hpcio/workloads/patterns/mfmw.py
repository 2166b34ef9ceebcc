"""mfmw (N-N): every rank writes its own file, then reads one back (another rank's with reorder)."""

from __future__ import annotations

from typing import ClassVar

from hpcio.spec.model import RunSpec
from hpcio.workloads._base import (
    Phase,
    Plan,
    RankInfo,
    Sharing,
    in_visit_order,
    own_offsets,
    read_plan,
    write_plan,
)


def rank_key(rank: int) -> str:
    return f"hpcio-rank{rank:06d}.dat"


class MfmwPattern:
    name: ClassVar[str] = "mfmw"
    sharing: ClassVar[Sharing] = Sharing.PRIVATE
    phases: ClassVar[tuple[Phase, ...]] = (Phase.WRITE, Phase.READ)
    prepared_by: ClassVar[str | None] = None

    def plan(self, run: RunSpec, phase: Phase, who: RankInfo) -> Plan:
        if phase is Phase.WRITE:
            offsets = own_offsets(run, who.rank, shared=False)
            offsets = in_visit_order(run, offsets, who.rank, phase)
            return write_plan(run, rank_key(who.rank), offsets, who.rank)
        source = who.read_source(run.reorder)
        offsets = in_visit_order(run, own_offsets(run, source, shared=False), who.rank, phase)
        return read_plan(run, rank_key(source), offsets, source)

    def keys(self, run: RunSpec) -> list[str]:
        return [rank_key(r) for r in range(run.ranks)]
