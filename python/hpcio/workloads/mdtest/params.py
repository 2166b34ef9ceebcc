"""mdtest's params (mdtest's -n -I -z -b -u -w -e -F/-D -W; workload.py runs them): a light
module, imported by the option path without the workload."""

from __future__ import annotations

from dataclasses import dataclass

from hpcio.options import DURATION, FLAG, POSITIVE, SIZE_OR_ZERO, WHOLE, choice, option


@dataclass(frozen=True, slots=True, kw_only=True)
class MdtestParams:
    items: int = option(
        "--items", kind=POSITIVE, default=1000, metavar="N",
        help="mdtest: files (and directories) each rank makes (mdtest -n)",
    )  # fmt: skip
    items_per_dir: int = option(
        "--items-per-dir", kind=WHOLE, default=0, metavar="N",
        help="mdtest: items of each rank in each tree directory; 0: --items spread over the "
        "tree (mdtest -I)",
    )  # fmt: skip
    depth: int = option(
        "--depth", kind=WHOLE, default=0,
        help="mdtest: levels of directories below the tree's root (mdtest -z)",
    )  # fmt: skip
    branch: int = option(
        "--branch", kind=POSITIVE, default=1,
        help="mdtest: subdirectories of each tree directory (mdtest -b)",
    )  # fmt: skip
    dir_per_rank: bool = option(
        "--dir-per-rank", kind=FLAG, default=False,
        help="mdtest: a tree per rank, not one tree every rank shares (mdtest -u)",
    )  # fmt: skip
    items_kind: str = option(
        "--items-kind", kind=choice("both", "files", "dirs"), default="both",
        help="mdtest: the phases of files, of directories, or both (mdtest -F, -D)",
    )  # fmt: skip
    write_bytes: int = option(
        "--write-bytes", kind=SIZE_OR_ZERO, unit="bytes", default=0,
        help="mdtest: bytes written to each file when it is created (mdtest -w)",
    )  # fmt: skip
    read_bytes: int = option(
        "--read-bytes", kind=SIZE_OR_ZERO, unit="bytes", default=0,
        help="mdtest: bytes read from each file in the read phase (mdtest -e)",
    )  # fmt: skip
    stonewall_s: float | None = option(
        "--stonewall", kind=DURATION, unit="s", default=None,
        help="mdtest: file creation stops making new files after this long, then every rank "
        "goes on to the most files any rank made (mdtest -W)",
    )  # fmt: skip
    op_latency: bool = option(
        "--op-latency", kind=FLAG, default=False,
        help="mdtest: time every call for latency percentiles (two clock reads a call, "
        "which mdtest does not make)",
    )  # fmt: skip
