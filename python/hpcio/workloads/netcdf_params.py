"""The NetCDF programs' params (workloads/netcdf_codes.py): a light module, imported by the
option path without the workloads."""

from __future__ import annotations

from dataclasses import dataclass

from hpcio.options import FLAG, SIZE, option


@dataclass(frozen=True, slots=True, kw_only=True)
class NetcdfParams:
    size_per_rank_bytes: int = option(
        "--size-per-rank", kind=SIZE, unit="bytes", key="size_per_rank",
        help="bytes each rank writes (256MiB)",
    )  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class SpokespersonParams(NetcdfParams):
    gather_chunk_bytes: int = option(
        "--gather-chunk", kind=SIZE, unit="bytes", default=64 << 20, measures=False,
        help="sfsw, collect_and_write, read_distribute: bytes per message to or from rank 0",
    )  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class ParallelParams(NetcdfParams):
    collective: bool = option(
        "--collective", kind=FLAG, default=False,
        help="collective transfers (allwrite, allread: NetCDF's collective mode)",
    )  # fmt: skip
