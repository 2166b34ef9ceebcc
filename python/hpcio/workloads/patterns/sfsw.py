"""sfsw (master I/O): ranks send their data to rank 0 in bounded chunks, rank 0 writes one file;
reading, rank 0 reads and scatters. The chunks are cut here; runner/choreography.py moves them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from hpcio.errors import SpecError
from hpcio.units import format_bytes
from hpcio.workloads.contract import (
    Body,
    CacheFacts,
    CollectBody,
    MemoryNeed,
    Phase,
    RankInfo,
)
from hpcio.workloads.patterns.common import (
    PatternWorkload,
    block_bytes,
    file_bytes,
    read_plan,
    segments,
    write_plan,
)
from hpcio.workloads.patterns.params import CollectParams
from hpcio.workloads.plans import Runs

if TYPE_CHECKING:
    from hpcio.spec.model import RunSpec

SFSW_KEY = "hpcio-single.dat"
COLLECTOR = 0


def chunk_bytes(run: RunSpec) -> int:
    """The largest piece moved at once: --gather-chunk in whole transfers, within one block."""
    p = run.params
    chunk = max(p.transfer_bytes, p.gather_chunk_bytes // p.transfer_bytes * p.transfer_bytes)
    return min(chunk, block_bytes(run))


def chunks(run: RunSpec, rank: int) -> tuple[tuple[int, int], ...]:
    """(file offset, length) pieces of `rank`'s data in the shared file, each at most
    --gather-chunk (rounded down to whole transfers) and inside one segment."""
    chunk = chunk_bytes(run)
    block = block_bytes(run)
    pieces = []
    for segment in range(segments(run)):
        start = segment * run.ranks * block + rank * block
        for offset in range(start, start + block, chunk):
            pieces.append((offset, min(chunk, start + block - offset)))
    return tuple(pieces)


class Sfsw(PatternWorkload):
    name = "sfsw"
    params = CollectParams
    summary = "master I/O: ranks send their data to rank 0, which writes one file"

    def engine_body(self, run: RunSpec, phase: Phase, who: RankInfo) -> Body:
        """The collector's open and close (with fsync); the chunks go between them."""
        none = Runs.of(np.zeros(0, np.uint64), 0, COLLECTOR)
        plan = write_plan if phase is Phase.WRITE else read_plan
        reads_from = who.read_sources(run.params.reorder)
        mine = who.rank == COLLECTOR
        return CollectBody(
            plan=plan(run, SFSW_KEY, none),
            key=SFSW_KEY,
            transfer_bytes=run.params.transfer_bytes,
            file_bytes=file_bytes(run),
            # Every rank's pieces on the collector; a contributor needs its own and its source's.
            pieces=tuple(
                chunks(run, r) if mine or r in (who.rank, reads_from[who.rank]) else ()
                for r in range(run.ranks)
            ),
            reads_from=reads_from,
            in_flight=run.params.in_flight,
            collector=COLLECTOR,
        )

    def body(self, run: RunSpec, phase: Phase, who: RankInfo) -> Body:
        body = self.engine_body(run, phase, who)
        if run.params.api == "posix":
            return body
        from hpcio.workloads.apis import collect

        assert isinstance(body, CollectBody)
        return collect.body(body, self.api_layout(run), phase)

    def validate(self, run: RunSpec) -> None:
        super().validate(run)
        if run.params.collective:
            raise SpecError(
                "--collective: in sfsw rank 0 alone opens the file and calls the library; "
                "collective calls need every rank (use sfmw)"
            )

    def keys(self, run: RunSpec) -> list[str]:
        return [SFSW_KEY]

    def owns_key(self, name: str) -> bool:
        return name == SFSW_KEY

    def transfers_per_call(self, run: RunSpec) -> int:
        return chunk_bytes(run) // run.params.transfer_bytes

    def memory(self, run: RunSpec, ranks_per_node: int) -> MemoryNeed:
        """The collector: its lanes and two gather chunks; every other rank one chunk."""
        transfer = run.params.transfer_bytes
        in_flight = f"{self.lanes(run)} in flight x {format_bytes(transfer)} transfer"
        chunk = chunk_bytes(run)
        others = ranks_per_node - 1
        # Through a library the collector makes its own pieces in a third buffer.
        held = 2 if run.params.api == "posix" else 3
        breakdown = f"rank 0: {in_flight} + {held} gather chunks of {format_bytes(chunk)}"
        if others:
            breakdown += f"; {others} other rank(s): 1 chunk each"
        need = MemoryNeed(
            self.lanes(run) * transfer + held * chunk + others * chunk,
            breakdown,
            "--gather-chunk, --in-flight or --transfer",
        )
        return self.with_memory_target(run, need)

    def cache_facts(self, run: RunSpec) -> CacheFacts:
        # The file sits on rank 0's node, which reads all of it.
        return CacheFacts(
            data_set_bytes=file_bytes(run),
            whole_data_per_node=True,
            read_back_from="rank 0 reads the file and sends each rank its data",
            reads_local_data=True,
            reorder=run.params.reorder,
        )
