"""mfmw (N-N): every rank writes its own file (or --files-per-rank files), then reads one back
(another rank's with --reorder), in order or in a seeded random order, once or for --duration;
with --rwmix-read, one mixed phase of reads and writes in its own files instead."""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING

from hpcio.errors import SpecError
from hpcio.units import format_bytes
from hpcio.workloads.contract import Body, Phase, PlanBody, RankInfo, Written
from hpcio.workloads.patterns.common import (
    PatternWorkload,
    file_bytes,
    order,
    own_runs,
    read_plan,
    write_plan,
)
from hpcio.workloads.patterns.mix import mixed, mixed_plan
from hpcio.workloads.patterns.params import FilePerRankParams
from hpcio.workloads.plans import Runs

if TYPE_CHECKING:
    from hpcio.spec.model import RunSpec

#: rank_key and rank_keys' names, as a regular expression.
RANK_KEY_PATTERN = r"hpcio-rank[0-9]{6,}(-file[0-9]{6,})?\.dat"


def rank_key(rank: int) -> str:
    return f"hpcio-rank{rank:06d}.dat"


def rank_keys(run: RunSpec, rank: int) -> list[str]:
    """The rank's file, or its --files-per-rank files."""
    if run.params.files_per_rank == 1:
        return [rank_key(rank)]
    return [f"hpcio-rank{rank:06d}-file{f:06d}.dat" for f in range(run.params.files_per_rank)]


def file_size_bytes(run: RunSpec) -> int:
    """Bytes in each file or object of a rank."""
    return run.params.size_per_rank_bytes // run.params.files_per_rank


def file_runs(run: RunSpec, rank: int) -> Runs:
    """The transfers in each of `rank`'s files."""
    if run.params.files_per_rank == 1:
        return own_runs(run, rank, shared=False)
    return Runs.of(0, file_size_bytes(run) // run.params.transfer_bytes, rank)


class Mfmw(PatternWorkload):
    name = "mfmw"
    params = FilePerRankParams
    summary = "N-N: every rank writes its own file, then reads one back"
    shared_file = False

    def engine_body(self, run: RunSpec, phase: Phase, who: RankInfo) -> Body:
        # Several files take turns, as fio's file_service_type=roundrobin; random order
        # (fio's randrw) is computed by the engine from (seed, rank, phase).
        p = run.params
        shuffle = order(run, who.rank, phase)
        if phase is Phase.MIXED:
            per_file = file_size_bytes(run) // p.transfer_bytes
            plan = mixed_plan(run, rank_keys(run, who.rank), per_file, who.rank, shuffle)
        elif phase is Phase.WRITE:
            keys = rank_keys(run, who.rank)
            plan = write_plan(run, keys, file_runs(run, who.rank), shuffle)
        else:
            source = who.read_source(p.reorder)
            plan = read_plan(run, rank_keys(run, source), file_runs(run, source), shuffle)
        return PlanBody(plan, p.in_flight, p.duration_s)

    def keys(self, run: RunSpec) -> list[str]:
        return [key for r in range(run.ranks) for key in rank_keys(run, r)]

    def owns_key(self, name: str) -> bool:
        return re.fullmatch(RANK_KEY_PATTERN, name) is not None

    def phases(self, run: RunSpec) -> tuple[Phase, ...]:
        return (Phase.MIXED,) if mixed(run) else super().phases(run)

    def lay_out(self, run: RunSpec) -> RunSpec | None:
        """Time-based writes rewrite a laid-out file (fio's layout), so the reads that follow
        find every byte however far the writes got: once through, in order, untimed. A mixed
        phase reads the files it writes: laid out before each iteration (on an object store
        its writes leave only the parts they wrote)."""
        if mixed(run):
            return untimed_layout(run)
        if run.params.duration_s is None or Phase.WRITE not in self.phases(run):
            return None
        return untimed_layout(run)

    def validate(self, run: RunSpec) -> None:
        super().validate(run)
        p = run.params
        k = p.files_per_rank
        if k < 1:
            raise SpecError(f"--files-per-rank must be at least 1, got {k}")
        if p.size_per_rank_bytes % (k * p.transfer_bytes):
            raise SpecError(
                f"--size-per-rank {format_bytes(p.size_per_rank_bytes)} does not split into "
                f"{k} files of whole transfers ({format_bytes(p.transfer_bytes)})"
            )
        if p.duration_s is not None:
            if not p.duration_s > 0:
                raise SpecError(f"--duration must be more than 0 seconds, got {p.duration_s:g}")
            in_parts = file_size_bytes(run) > p.transfer_bytes
            writes = Phase.WRITE in self.phases(run) or mixed(run)
            if run.target.is_object_store and writes and in_parts:
                raise SpecError(
                    f"--duration: a {run.target.kind} object is written once (repeating its "
                    "parts would repeat them in its upload); time only reads, or make each "
                    "object one transfer (--files-per-rank = size per rank / transfer), which "
                    "re-PUTs it"
                )

        if mixed(run):
            self._validate_mix(run)

    def _validate_mix(self, run: RunSpec) -> None:
        p = run.params
        if not 0 <= p.rwmix_read_pct <= 100:
            raise SpecError(
                f"--rwmix-read takes the percentage of transfers that read, 0 to 100, "
                f"got {p.rwmix_read_pct}"
            )
        if run.phases is not None:
            raise SpecError(
                "--rwmix-read makes one timed phase, mixed, of reads and writes: "
                "drop --phases " + ",".join(run.phases)
            )
        if p.reorder:
            raise SpecError("--rwmix-read reads and writes each rank's own files: drop --reorder")
        if p.api != "posix":
            raise SpecError(f"--rwmix-read is for --api posix (the engine), not {p.api}")

    def objects_written(self, run: RunSpec) -> list[Written]:
        what = "each rank's object" if run.params.files_per_rank == 1 else "each object"
        return [Written(what, file_size_bytes(run), run.params.transfer_bytes, shared=False)]

    def stored_bytes(self, run: RunSpec) -> int:
        return file_bytes(run)

    def describe(self, run: RunSpec) -> str:
        seconds = run.params.duration_s
        timed = f", each phase for {seconds:g} s" if seconds is not None else ""
        mix = ""
        if mixed(run):
            mix = f", mixed: {run.params.rwmix_read_pct}% reads"
        return super().describe(run) + mix + timed


def untimed_layout(run: RunSpec) -> RunSpec:
    """The untimed write that lays out a run's files: once through, in order, fsync'd."""
    p = dataclasses.replace(run.params, duration_s=None, random_offsets=False, rwmix_read_pct=None)
    return dataclasses.replace(run, params=p, fsync=True, verify=False)
