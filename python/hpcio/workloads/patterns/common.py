"""What the five patterns share: their sizes, their plans' building blocks, and the answers
the runner, limits, page-cache notes and reports ask every workload for."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from hpcio.errors import SpecError
from hpcio.units import format_bytes
from hpcio.workloads import apis, striping
from hpcio.workloads.contract import (
    Body,
    CacheFacts,
    MemoryNeed,
    Phase,
    PlanBody,
    RankInfo,
    Workload,
    Written,
)
from hpcio.workloads.patterns.params import MAX_IN_FLIGHT, PatternParams
from hpcio.workloads.plans import Op, Plan, PlanBuilder, Runs

if TYPE_CHECKING:
    from hpcio.spec.model import RunSpec
    from hpcio.workloads.apis import library_walk

#: The APIs whose files hold a dataset that may be chunked, and HDF5's largest chunk.
CHUNKED_APIS = ("hdf5", "netcdf")
MAX_CHUNK = (4 << 30) - 1

#: O_DIRECT needs offsets, lengths and buffers aligned to the logical block size; 4 KiB covers
#: every block device and file system hpcio is used on.
DIRECT_ALIGN = 4096


def segments(run: RunSpec) -> int:
    return getattr(run.params, "segments", 1)


def block_bytes(run: RunSpec) -> int:
    """Contiguous bytes one rank owns in each segment (IOR's block size)."""
    return run.params.size_per_rank_bytes // segments(run)


def file_bytes(run: RunSpec) -> int:
    """Bytes written per iteration by all ranks (the studies' "File Size")."""
    return run.params.size_per_rank_bytes * run.ranks


def own_runs(run: RunSpec, rank: int, *, shared: bool) -> Runs:
    """`rank`'s data: segment i of it sits at i*size*block + rank*block in a shared file, at
    i*block in its own (where the segments make one run)."""
    block = block_bytes(run)
    per_block = block // run.params.transfer_bytes
    if not shared:
        return Runs.of(0, per_block * segments(run), rank)
    i = np.arange(segments(run), dtype=np.uint64)
    starts = i * np.uint64(run.ranks * block) + np.uint64(rank * block)
    return Runs.of(starts, per_block, rank)


def every_block(run: RunSpec) -> Runs:
    """A whole shared file, a run per block so each names the rank that wrote it."""
    block = block_bytes(run)
    blocks = np.arange(segments(run) * run.ranks, dtype=np.uint64)
    writers = (blocks % np.uint64(run.ranks)).astype(np.uint32)
    return Runs.of(blocks * np.uint64(block), block // run.params.transfer_bytes, writers)


def order(run: RunSpec, rank: int, phase: Phase) -> tuple[int, int, int] | None:
    """The seed of `rank`'s random order in `phase`, or None for ascending order."""
    if not getattr(run.params, "random_offsets", False):
        return None
    return (run.seed % (1 << 64), rank, list(Phase).index(phase))


def write_plan(
    run: RunSpec, keys: str | Sequence[str], runs: Runs, shuffle: tuple[int, int, int] | None = None
) -> Plan:
    """Open every key, write `runs` in each (the keys taking turns, so in-flight transfers
    span files), fsync each with --fsync, close each."""
    return _file_plan(Op.WRITE, run, keys, runs, shuffle)


def read_plan(
    run: RunSpec, keys: str | Sequence[str], runs: Runs, shuffle: tuple[int, int, int] | None = None
) -> Plan:
    """Open every key, read `runs` in each (the keys taking turns), close each."""
    return _file_plan(Op.READ, run, keys, runs, shuffle)


def _file_plan(
    op: Op,
    run: RunSpec,
    keys: str | Sequence[str],
    runs: Runs,
    shuffle: tuple[int, int, int] | None,
) -> Plan:
    keys = [keys] if isinstance(keys, str) else list(keys)
    writing = op is Op.WRITE
    builder = PlanBuilder()
    builder.controls(Op.OPEN_WRITE if writing else Op.OPEN_READ, keys)
    builder.runs_in_each(op, keys, runs, run.params.transfer_bytes)
    if writing and run.fsync:
        builder.controls(Op.SYNC, keys)
    builder.controls(Op.CLOSE, keys)
    return builder.build(shuffle)


class PatternWorkload(Workload):
    """A pattern: `size_per_rank` per rank in transfers, through an engine plan, or through
    another API (`--api`), which does the same plan's I/O in a Python body."""

    #: All ranks share one file (opened by all of them together under MPI-IO).
    shared_file = True

    family = "pattern"
    params = PatternParams
    #: The options that lower a figure, as the command that made the run names them.
    lower = {  # noqa: RUF012
        "buffers": "--in-flight or --transfer",
        "data": "--size-per-rank",
        "disk": "--size-per-rank or -n",
    }

    def validate(self, run: RunSpec) -> None:
        super().validate(run)
        p = run.params
        for option, value in (("--size-per-rank", p.size_per_rank_bytes),
                              ("--transfer", p.transfer_bytes), ("--in-flight", p.in_flight),
                              ("--segments", segments(run))):  # fmt: skip
            if value < 1:
                raise SpecError(f"{option} must be at least 1, got {value}")
        if p.in_flight > MAX_IN_FLIGHT:
            raise SpecError(
                f"--in-flight {p.in_flight} is more than {MAX_IN_FLIGHT}: each transfer in "
                "flight is a thread of the engine on every rank"
            )
        if p.size_per_rank_bytes % segments(run):
            raise SpecError(
                f"--size-per-rank {format_bytes(p.size_per_rank_bytes)} does not split into "
                f"{segments(run)} equal segments"
            )
        if block_bytes(run) % p.transfer_bytes:
            what = "size per rank" if segments(run) == 1 else "size per rank / segments"
            raise SpecError(
                f"{what} ({format_bytes(block_bytes(run))}) is not a multiple of the transfer "
                f"({format_bytes(p.transfer_bytes)})"
            )
        if p.api != "posix":
            self._validate_api(run)
        elif p.collective:
            raise SpecError(
                "--collective is for --api mpiio, hdf5, netcdf or pnetcdf; posix calls are "
                "independent"
            )
        elif p.hints:
            raise SpecError(
                "--hint is for --api mpiio, hdf5, netcdf or pnetcdf; posix takes no MPI-IO hints"
            )
        if p.chunk_bytes is not None:
            self._validate_chunk(run)
        if run.direct and p.transfer_bytes % DIRECT_ALIGN:
            raise SpecError(
                f"--direct needs a transfer that is a multiple of {format_bytes(DIRECT_ALIGN)}, "
                f"got {format_bytes(p.transfer_bytes)}"
            )

    def engine_body(self, run: RunSpec, phase: Phase, who: RankInfo) -> Body:
        """The rank's I/O as the engine does it (posix)."""
        raise NotImplementedError

    def body(self, run: RunSpec, phase: Phase, who: RankInfo) -> Body:
        body = self.engine_body(run, phase, who)
        if run.params.api == "posix":
            return body
        from hpcio.workloads.apis import library_walk

        assert isinstance(body, PlanBody)
        return library_walk.body(body.plan, self.api_layout(run), run.seed)

    def api_layout(self, run: RunSpec) -> library_walk.Layout:
        from hpcio.workloads.apis import library_walk

        p = run.params
        return library_walk.Layout(
            api=p.api,
            shared=self.shared_file,
            collective=p.collective,
            hints=(*p.hints, *striping.hints(run, self)),
            shared_bytes=file_bytes(run),
            chunk_bytes=p.chunk_bytes,
        )

    def uses_mpiio(self, run: RunSpec) -> bool:
        return run.params.api != "posix"

    def label(self, settings: dict[str, Any]) -> str:
        """The pattern, with the API when it is not the engine's own: 'sfmw (hdf5)'."""
        api = settings.get("api", "posix")
        return self.name if api == "posix" else f"{self.name} ({api})"

    def _validate_api(self, run: RunSpec) -> None:
        p = run.params
        if run.target.is_object_store:
            raise SpecError(
                f"--api {p.api} does its I/O through a file system: give a file:// target "
                "(object stores take --api posix)"
            )
        if getattr(p, "duration_s", None) is not None:
            raise SpecError(f"--duration is for --api posix, not {p.api}")
        if run.direct:
            raise SpecError(f"--direct is for --api posix; {p.api} goes through MPI's own I/O")
        if p.in_flight != 1:
            # A library call blocks until its transfer is done: one is in flight, always.
            raise SpecError(
                f"--in-flight is for --api posix; {p.api} makes one blocking call at a time"
            )
        keys = [pair.partition("=")[0].strip() for pair in p.hints]
        twice = sorted({key for key in keys if keys.count(key) > 1})
        if twice:
            raise SpecError(
                f"--hint {twice[0]} is given {keys.count(twice[0])} times: give each hint once"
            )
        missing = apis.missing(p.api)
        if missing is not None:
            raise SpecError(missing)

    def _validate_chunk(self, run: RunSpec) -> None:
        p = run.params
        if p.api not in CHUNKED_APIS:
            raise SpecError(
                f"--chunk-size is for --api hdf5 or netcdf (chunked datasets), not {p.api}"
            )
        if p.chunk_bytes < 1 or block_bytes(run) % p.chunk_bytes:
            raise SpecError(
                f"--chunk-size {format_bytes(p.chunk_bytes)} does not divide each rank's block "
                f"of {format_bytes(block_bytes(run))}: the chunks would straddle ranks' data"
            )
        if p.chunk_bytes > MAX_CHUNK:
            raise SpecError(f"--chunk-size: {p.api} chunks are at most {format_bytes(MAX_CHUNK)}")

    def in_flight(self, run: RunSpec) -> int:
        """Never more than the run has transfers."""
        p = run.params
        return min(p.in_flight, max(1, file_bytes(run) // p.transfer_bytes))

    def objects_written(self, run: RunSpec) -> list[Written]:
        return [Written("the shared object", file_bytes(run), run.params.transfer_bytes, True)]

    def stored_bytes(self, run: RunSpec) -> int:
        return file_bytes(run)

    def transfers_per_call(self, run: RunSpec) -> int:
        """Transfers in one engine call of a rank: its phase's whole plan."""
        return run.params.size_per_rank_bytes // run.params.transfer_bytes

    def lanes(self, run: RunSpec) -> int:
        return max(1, min(run.params.in_flight, self.transfers_per_call(run)))

    def memory(self, run: RunSpec, ranks_per_node: int) -> MemoryNeed:
        """Each rank's lanes x transfer; a memory:// target also holds the data."""
        transfer = run.params.transfer_bytes
        per_rank = self.lanes(run) * transfer
        in_flight = f"{self.lanes(run)} in flight x {format_bytes(transfer)} transfer"
        options = self.lower["buffers"]
        if run.params.api != "posix" and getattr(run.params, "random_offsets", False):
            # A library replays a shuffled plan from a row per transfer (apis/library_walk.py).
            from hpcio.workloads.apis.library_walk import EXPANDED_BYTES_PER_TRANSFER

            table = self.transfers_per_call(run) * EXPANDED_BYTES_PER_TRANSFER
            per_rank += table
            in_flight += f" + a {format_bytes(table)} table of the random order"
            options = "--size-per-rank"
        need = MemoryNeed(
            ranks_per_node * per_rank, f"{ranks_per_node} rank(s) x {in_flight}", options
        )
        return self.with_memory_target(run, need)

    def with_memory_target(self, run: RunSpec, need: MemoryNeed) -> MemoryNeed:
        if not run.target.in_process:
            return need
        data = file_bytes(run)
        return MemoryNeed(
            need.bytes + data,
            f"{need.breakdown} + {format_bytes(data)} of data in memory://",
            f"{self.lower['data']}, {need.options}",
        )

    def cache_facts(self, run: RunSpec) -> CacheFacts:
        return CacheFacts(data_set_bytes=file_bytes(run), reorder=run.params.reorder)

    def describe(self, run: RunSpec) -> str:
        p = run.params
        return (
            f"{format_bytes(p.size_per_rank_bytes)} per rank, transfer "
            f"{format_bytes(p.transfer_bytes)}, {segments(run)} segment(s)"
        )

    def disk_words(self, run: RunSpec) -> str:
        """How the stored bytes are made up, for the free-space check's message."""
        return f"{run.ranks} rank(s) x {format_bytes(run.params.size_per_rank_bytes)}"
