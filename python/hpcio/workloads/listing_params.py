"""listing's params (workloads/listing.py): a light module, imported by the option path
without the workload."""

from __future__ import annotations

from dataclasses import dataclass

from hpcio.options import POSITIVE, SIZE, choice, option
from hpcio.workloads.patterns.params import files_per_rank_option


@dataclass(frozen=True, slots=True, kw_only=True)
class ListingParams:
    """--files-per-rank, --file-size and --in-flight are the patterns' and python-files'
    options (one flag, one field), with their defaults, so `hpcio run --help` holds for all."""

    lister: str = option(
        "--lister",
        kind=choice("every", "rank0"),
        default="every",
        help="listing: every rank lists the target (and stats each file on POSIX) before "
        "reading (every), or rank 0 alone does and broadcasts the listing (rank0)",
    )
    files_per_rank: int = files_per_rank_option()
    file_size_bytes: int = option(
        "--file-size",
        kind=SIZE,
        unit="bytes",
        default=1 << 20,
        help="bytes in each file (python-files, listing; listing moves each in one transfer)",
    )
    in_flight: int = option(
        "--in-flight",
        kind=POSITIVE,
        default=1,
        help="transfers (parts, GETs) in flight per rank (--concurrency is the same option)",
    )
