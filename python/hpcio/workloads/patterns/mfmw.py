"""mfmw (N-N): every rank writes its own file, then reads one back (another rank's with reorder)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from hpcio.spec.model import RunSpec
from hpcio.workloads._base import (
    Phase,
    Plan,
    RankInfo,
    Sharing,
    own_offsets,
    read_plan,
    visit_order,
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


def file_offsets(run: RunSpec, rank: int) -> np.ndarray:
    """Offsets of the transfers in each of `rank`'s files."""
    if run.files_per_rank == 1:
        return own_offsets(run, rank, shared=False)
    count = run.file_size_bytes // run.transfer_bytes
    return np.arange(count, dtype=np.uint64) * np.uint64(run.transfer_bytes)


class MfmwPattern:
    name: ClassVar[str] = "mfmw"
    sharing: ClassVar[Sharing] = Sharing.PRIVATE
    phases: ClassVar[tuple[Phase, ...]] = (Phase.WRITE, Phase.READ)
    prepared_by: ClassVar[str | None] = None

    def plan(self, run: RunSpec, phase: Phase, who: RankInfo) -> Plan:
        if phase is Phase.WRITE:
            keys = rank_keys(run, who.rank)
            visits = visit_order(run, len(keys), file_offsets(run, who.rank), who.rank, phase)
            return write_plan(run, keys, visits, who.rank)
        source = who.read_source(run.reorder)
        keys = rank_keys(run, source)
        visits = visit_order(run, len(keys), file_offsets(run, source), who.rank, phase)
        return read_plan(run, keys, visits, source)

    def keys(self, run: RunSpec) -> list[str]:
        return [key for r in range(run.ranks) for key in rank_keys(run, r)]
