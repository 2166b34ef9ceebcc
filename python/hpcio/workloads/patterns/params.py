"""The patterns' parameters, each declared once (flag, suite key, kind, unit, default, help).
Options only some patterns take live in the params of those patterns alone, so a workload that
does not declare an option cannot be given it."""

from __future__ import annotations

from dataclasses import dataclass

from hpcio.options import DURATION, FLAG, PAIRS, POSITIVE, SIZE, WHOLE, choice, option
from hpcio.workloads.apis import APIS, WHAT

#: Transfers in flight per rank: each is an engine lane with a transfer's buffer, and a node
#: runs many ranks; deeper queues than this measure the scheduler, not the storage.
MAX_IN_FLIGHT = 4096


def files_per_rank_option() -> int:
    """--files-per-rank, declared once for every workload that takes it (the patterns with a
    file per rank, listing)."""
    return option(
        "--files-per-rank",
        kind=POSITIVE,
        default=1,
        metavar="K",
        help="K files or objects per rank, all in flight together (fio's nrfiles)",
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class PatternParams:
    """What every pattern takes: how much each rank moves, and in what pieces."""

    size_per_rank_bytes: int = option(
        "--size-per-rank",
        kind=SIZE,
        unit="bytes",
        key="size_per_rank",
        help="bytes each rank writes, e.g. 256MiB (required for a pattern)",
    )
    transfer_bytes: int = option(
        "--transfer",
        aliases=("--part-size",),
        kind=SIZE,
        unit="bytes",
        default=1 << 20,
        help="bytes per I/O call: one pwrite/pread, one part or block, one ranged GET "
        "(--part-size is the same option)",
    )
    in_flight: int = option(
        "--in-flight",
        aliases=("--concurrency",),
        kind=POSITIVE,
        default=1,
        help="transfers (parts, GETs) in flight per rank (--concurrency is the same option); "
        "on s3://, az:// and gs:// 8, fewer where 8 transfers would pass 128 MiB, else",
    )
    reorder: bool = option(
        "--reorder",
        kind=FLAG,
        default=False,
        help="read back another rank's data (another node's when there are several)",
    )
    api: str = option(
        "--api",
        kind=choice(*APIS),
        default="posix",
        help="the interface the bytes go through (IOR's -a): "
        + "; ".join(f"{api}: {what}" for api, what in WHAT.items()),
    )
    collective: bool = option(
        "--collective",
        kind=FLAG,
        default=False,
        help="mpiio, hdf5, netcdf, pnetcdf: collective calls (MPI-IO's Write_at_all, "
        "HDF5's and NetCDF's collective transfers, PnetCDF's _all calls) instead of "
        "independent ones",
    )
    hints: tuple[str, ...] = option(
        "--hint",
        kind=PAIRS,
        default=(),
        metavar="KEY=VALUE",
        help="mpiio, hdf5, netcdf, pnetcdf: an MPI-IO hint given to every open (cb_nodes=2, "
        "romio_cb_write=enable, ...); repeatable; recorded in the result",
    )
    chunk_bytes: int | None = option(
        "--chunk-size",
        kind=SIZE,
        unit="bytes",
        default=None,
        help="hdf5, netcdf: a chunked dataset of chunks this size (default: contiguous)",
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class SharedFileParams(PatternParams):
    """One file for all ranks: each rank's data may be interleaved in segments (IOR -s)."""

    segments: int = option(
        "--segments",
        kind=POSITIVE,
        default=1,
        help="interleave each rank's data in S segments (IOR -s); shared-file patterns",
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class CollectParams(SharedFileParams):
    gather_chunk_bytes: int = option(
        "--gather-chunk",
        kind=SIZE,
        unit="bytes",
        default=64 << 20,
        measures=False,
        help="sfsw: bytes per gather message",
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class SharedReadParams(SharedFileParams):
    read_scope: str = option(
        "--read-scope",
        kind=choice("all", "own"),
        default="all",
        help="sfmr: every rank reads the whole file (all) or its region (own)",
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class FilePerRankParams(PatternParams):
    """Files of a rank's own: several of them, random order, time-based phases (fio's)."""

    files_per_rank: int = files_per_rank_option()
    random_offsets: bool = option(
        "--random",
        kind=FLAG,
        default=False,
        key="random",
        help="visit each rank's transfers once each in a seeded random order (fio's "
        "randwrite and randread)",
    )
    duration_s: float | None = option(
        "--duration",
        kind=DURATION,
        unit="s",
        default=None,
        metavar="TIME",
        help="repeat each phase's transfers for this long: 30s, 5m, 1h or seconds "
        "(fio's time_based)",
    )
    rwmix_read_pct: int | None = option(
        "--rwmix-read",
        kind=WHOLE,
        unit="%",
        default=None,
        metavar="PCT",
        key="rwmix_read",
        help="one timed phase, mixed, instead of write then read: each transfer is drawn a "
        "read or a write from the seeded generator (--seed), PCT percent of them reads, on the "
        "rank's own files; the files are laid out untimed before each iteration, and what "
        "is timed is the mixed phase alone, with figures for each side",
    )
