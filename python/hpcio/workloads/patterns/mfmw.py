"""mfmw (N-N): every rank writes its own file, then reads one back (another rank's with reorder)."""

from __future__ import annotations

from typing import ClassVar

from hpcio.spec.model import RunSpec
from hpcio.workloads.contract import (
    Phase,
    Plan,
    RankInfo,
    Runs,
    Sharing,
    order,
    own_runs,
    read_plan,
    write_plan,
)

#: rank_key and rank_keys' names, as a regular expression.
RANK_KEY_PATTERN = r"hpcio-rank[0-9]{6,}(-file[0-9]{6,})?\.dat"


def rank_key(rank: int) -> str:
    return f"hpcio-rank{rank:06d}.dat"


def rank_keys(run: RunSpec, rank: int) -> list[str]:
    """The rank's file, or its --files-per-rank files."""
    if run.files_per_rank == 1:
        return [rank_key(rank)]
    return [f"hpcio-rank{rank:06d}-file{f:06d}.dat" for f in range(run.files_per_rank)]


def file_runs(run: RunSpec, rank: int) -> Runs:
    """The transfers in each of `rank`'s files."""
    if run.files_per_rank == 1:
        return own_runs(run, rank, shared=False)
    return Runs.of(0, run.file_size_bytes // run.transfer_bytes, rank)


class MfmwPattern:
    name: ClassVar[str] = "mfmw"
    sharing: ClassVar[Sharing] = Sharing.PRIVATE
    phases: ClassVar[tuple[Phase, ...]] = (Phase.WRITE, Phase.READ)
    prepared_by: ClassVar[str | None] = None

    def plan(self, run: RunSpec, phase: Phase, who: RankInfo) -> Plan:
        # Several files take turns, as fio's file_service_type=roundrobin; random order
        # (fio's randrw) is computed by the engine from (seed, rank, phase).
        shuffle = order(run, who.rank, phase)
        if phase is Phase.WRITE:
            keys = rank_keys(run, who.rank)
            return write_plan(run, keys, file_runs(run, who.rank), shuffle)
        source = who.read_source(run.reorder)
        return read_plan(run, rank_keys(run, source), file_runs(run, source), shuffle)

    def keys(self, run: RunSpec) -> list[str]:
        return [key for r in range(run.ranks) for key in rank_keys(run, r)]
