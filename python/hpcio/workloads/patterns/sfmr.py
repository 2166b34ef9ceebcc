"""sfmr (N-1 read, broadcast input): every rank reads the whole shared file, or its own region.
The file is laid out once, untimed, by sfmw's write."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from hpcio.workloads.contract import Body, CacheFacts, Phase, PlanBody, RankInfo
from hpcio.workloads.patterns.common import PatternWorkload, every_block, file_bytes, read_plan
from hpcio.workloads.patterns.params import SharedReadParams
from hpcio.workloads.patterns.sfmw import SHARED_KEY, Sfmw

if TYPE_CHECKING:
    from hpcio.spec.model import RunSpec


class Sfmr(PatternWorkload):
    name = "sfmr"
    params = SharedReadParams
    summary = "N-1 read: every rank reads the whole shared file, or its region"
    own_phases = (Phase.READ,)

    def engine_body(self, run: RunSpec, phase: Phase, who: RankInfo) -> Body:
        if phase is Phase.WRITE or run.params.read_scope == "own":
            return Sfmw().engine_body(run, phase, who)
        return PlanBody(read_plan(run, SHARED_KEY, every_block(run)), run.params.in_flight)

    def prepare(self, run: RunSpec) -> RunSpec | None:
        if run.phases is not None:
            return None  # --phases read: the data an earlier run left
        return dataclasses.replace(run, fsync=True, verify=False)

    def keys(self, run: RunSpec) -> list[str]:
        return [SHARED_KEY]

    def transfers_per_call(self, run: RunSpec) -> int:
        if run.params.read_scope == "all":
            return file_bytes(run) // run.params.transfer_bytes
        return super().transfers_per_call(run)

    def moved_bytes(self, run: RunSpec, phase: Phase) -> int:
        """Whole-file reads: every rank reads all of it."""
        whole = phase is Phase.READ and run.params.read_scope == "all"
        return file_bytes(run) * (run.ranks if whole else 1)

    def cache_facts(self, run: RunSpec) -> CacheFacts:
        whole = run.params.read_scope == "all"
        return CacheFacts(
            data_set_bytes=file_bytes(run),
            whole_data_per_node=whole,
            read_back_from="data written by all ranks" if whole else None,
            reads_local_data=whole,
            rereads=whole,
            reorder=run.params.reorder,
        )

    def describe(self, run: RunSpec) -> str:
        return f"{super().describe(run)}, read scope {run.params.read_scope}"
