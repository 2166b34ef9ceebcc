"""sfsw (master I/O): ranks send their data to rank 0 in bounded chunks, rank 0 writes one file;
reading, rank 0 reads and scatters. The collective steps live in runner/choreography.py."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from hpcio.spec.model import RunSpec
from hpcio.workloads.contract import Phase, Plan, RankInfo, Runs, Sharing, read_plan, write_plan

SFSW_KEY = "hpcio-single.dat"
COLLECTOR = 0


def chunks(run: RunSpec, rank: int) -> list[tuple[int, int]]:
    """(file offset, length) pieces of `rank`'s data in the shared file, each at most
    --gather-chunk (rounded down to whole transfers) and inside one segment."""
    chunk = max(
        run.transfer_bytes, run.gather_chunk_bytes // run.transfer_bytes * run.transfer_bytes
    )
    pieces = []
    for segment in range(run.segments):
        start = segment * run.ranks * run.block_bytes + rank * run.block_bytes
        for offset in range(start, start + run.block_bytes, chunk):
            pieces.append((offset, min(chunk, start + run.block_bytes - offset)))
    return pieces


def chunk_runs(run: RunSpec, offset: int, length: int, writer: int) -> Runs:
    """The transfers of one chunk, `writer`'s data."""
    return Runs.of(offset, length // run.transfer_bytes, writer)


class SfswPattern:
    name: ClassVar[str] = "sfsw"
    sharing: ClassVar[Sharing] = Sharing.COLLECT
    phases: ClassVar[tuple[Phase, ...]] = (Phase.WRITE, Phase.READ)
    prepared_by: ClassVar[str | None] = None

    def plan(self, run: RunSpec, phase: Phase, who: RankInfo) -> Plan:
        """The collector's open and close (with fsync); chunks are fed between them."""
        none = Runs.of(np.zeros(0, np.uint64), 0, COLLECTOR)
        if phase is Phase.WRITE:
            return write_plan(run, SFSW_KEY, none)
        return read_plan(run, SFSW_KEY, none)

    def keys(self, run: RunSpec) -> list[str]:
        return [SFSW_KEY]
