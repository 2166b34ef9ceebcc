"""RunSpec: one validated run (pattern x target x sizes x ranks), as a frozen dataclass."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

from hpcio.errors import SpecError
from hpcio.spec.target import TargetSpec
from hpcio.units import format_bytes

PATTERNS = ("sfsw", "sfmw", "mfmw", "sfmr", "mfmr")
#: Transfers in flight per rank: each is an engine thread with a transfer's buffer, and a node
#: runs many ranks; deeper queues than this measure the scheduler, not the storage.
MAX_IN_FLIGHT = 4096
#: O_DIRECT needs offsets, lengths and buffers aligned to the logical block size; 4 KiB covers
#: every block device and file system hpcio is used on.
DIRECT_ALIGN = 4096
#: The phase orders --phases accepts: a read phase reads what the write before it wrote.
PHASE_ORDERS = (("write",), ("read",), ("write", "read"))


@dataclass(frozen=True, slots=True)
class RunSpec:
    """Everything that defines a run. Sizes in bytes; ranks is the MPI world size."""

    pattern: str
    target: TargetSpec
    ranks: int
    size_per_rank_bytes: int
    transfer_bytes: int
    segments: int = 1
    iterations: int = 1
    fsync: bool = False
    direct: bool = False
    verify: bool = False
    keep: bool = False
    reorder: bool = False
    read_scope: Literal["all", "own"] = "all"
    gather_chunk_bytes: int = 64 << 20
    in_flight: int = 1
    seed: int = 1
    #: Timed phases to run; None runs the pattern's own (reading patterns lay their data out
    #: untimed first). ("read",) alone reads data an earlier run left with --keep (IOR's -r).
    phases: tuple[str, ...] | None = None
    #: Ranks per node the run asked for (a suite's "5 nodes x 4" layout), kept so that points
    #: differing only in layout stay apart; None: whatever the launcher gave. The layout the
    #: job really had is the document's own `ranks_per_node`.
    ranks_per_node: int | None = None
    #: Transfers in a seeded random order (a permutation of the same offsets, a new one per
    #: rank and phase) instead of ascending; mfmw and mfmr only. The fio profiles use it.
    random_offsets: bool = False
    #: The storage profile (`hpcio profile`) this run measures; None for plain runs.
    profile: str | None = None
    #: fio's time_based: each timed phase repeats its transfers until this many seconds have
    #: passed (checked between chunks); a write phase then rewrites a file laid out untimed
    #: first. None: every phase moves its data once.
    duration_s: float | None = None
    #: Files (objects) each rank writes or reads in mfmw/mfmr, each size_per_rank / K bytes,
    #: all open at once so --in-flight transfers span them (fio's nrfiles): K small objects
    #: go up as K PUTs in flight from one rank.
    files_per_rank: int = 1
    #: Write back and drop the page cache on every node before each timed read phase
    #: (root only: /proc/sys/vm/drop_caches), so reads come from storage.
    drop_caches: bool = False
    #: Refuse a POSIX run whose data would not fit in the target's free space; False
    #: (--no-space-check) for file systems that report free space wrongly.
    space_check: bool = True

    @property
    def block_bytes(self) -> int:
        """Contiguous bytes one rank owns in each segment (IOR's block size)."""
        return self.size_per_rank_bytes // self.segments

    @property
    def file_bytes(self) -> int:
        """Bytes written per iteration by all ranks (the studies' "File Size")."""
        return self.size_per_rank_bytes * self.ranks

    def validate(self) -> RunSpec:
        """Check every constraint that does not need the target; returns self.

        Raises:
            SpecError: one line naming the option and a value that would work.
        """
        if self.pattern not in PATTERNS:
            raise SpecError(
                f"unknown pattern '{self.pattern}'; choose one of {', '.join(PATTERNS)}"
            )
        for name in (
            "ranks",
            "size_per_rank_bytes",
            "transfer_bytes",
            "segments",
            "iterations",
            "gather_chunk_bytes",
            "in_flight",
        ):
            if getattr(self, name) < 1:
                raise SpecError(f"{_option(name)} must be at least 1, got {getattr(self, name)}")
        if self.in_flight > MAX_IN_FLIGHT:
            raise SpecError(
                f"--in-flight {self.in_flight} is more than {MAX_IN_FLIGHT}: each transfer in "
                "flight is a thread of the engine on every rank"
            )
        if self.size_per_rank_bytes % self.segments:
            raise SpecError(
                f"--size-per-rank {format_bytes(self.size_per_rank_bytes)} does not split into "
                f"{self.segments} equal segments"
            )
        if self.block_bytes % self.transfer_bytes:
            what = "size per rank" if self.segments == 1 else "size per rank / segments"
            raise SpecError(
                f"{what} ({format_bytes(self.block_bytes)}) is not a multiple of the transfer "
                f"({format_bytes(self.transfer_bytes)})"
            )
        if self.target.is_object_store:
            self._validate_object_store()
        if self.direct and self.transfer_bytes % DIRECT_ALIGN:
            raise SpecError(
                f"--direct needs a transfer that is a multiple of {format_bytes(DIRECT_ALIGN)}, "
                f"got {format_bytes(self.transfer_bytes)}"
            )
        if self.phases is not None:
            if self.phases not in PHASE_ORDERS:
                # read,write would read before writing: the reads find nothing of this run.
                raise SpecError(
                    f"--phases takes write, read or write,read; got {','.join(self.phases)}"
                )
            if "write" in self.phases and self.pattern in ("sfmr", "mfmr"):
                raise SpecError(f"{self.pattern} only reads; use --phases read or sfmw/mfmw")
        if self.ranks_per_node is not None and not 1 <= self.ranks_per_node <= self.ranks:
            raise SpecError(
                f"ranks per node must be from 1 to the {self.ranks} ranks, "
                f"got {self.ranks_per_node}"
            )
        if self.duration_s is not None:
            self._validate_duration()
        if self.files_per_rank != 1:
            self._validate_files_per_rank()
        if self.random_offsets and self.pattern not in ("mfmw", "mfmr"):
            raise SpecError(f"random offsets work with mfmw and mfmr, not {self.pattern}")
        if not 0 <= self.seed < 1 << 64:
            raise SpecError(f"--seed must be from 0 to 2**64-1, got {self.seed}")
        if self.read_scope not in ("all", "own"):
            raise SpecError(f"--read-scope must be 'all' or 'own', got '{self.read_scope}'")
        return self

    def _validate_files_per_rank(self) -> None:
        k = self.files_per_rank
        if k < 1:
            raise SpecError(f"--files-per-rank must be at least 1, got {k}")
        if self.pattern not in ("mfmw", "mfmr"):
            raise SpecError(f"--files-per-rank works with mfmw and mfmr, not {self.pattern}")
        if self.segments != 1:
            raise SpecError("--files-per-rank does not combine with --segments")
        if self.size_per_rank_bytes % (k * self.transfer_bytes):
            raise SpecError(
                f"--size-per-rank {format_bytes(self.size_per_rank_bytes)} does not split into "
                f"{k} files of whole transfers ({format_bytes(self.transfer_bytes)})"
            )

    @property
    def writes(self) -> bool:
        """The run writes its own data (a write phase, or a reading pattern's layout); one that
        only reads what an earlier run left (--phases read) must never remove it."""
        return self.phases is None or "write" in self.phases

    @property
    def file_size_bytes(self) -> int:
        """Bytes in each file or object of a rank (mfmw/mfmr)."""
        return self.size_per_rank_bytes // self.files_per_rank

    def _validate_duration(self) -> None:
        assert self.duration_s is not None
        if not self.duration_s > 0:
            raise SpecError(f"--duration must be more than 0 seconds, got {self.duration_s:g}")
        if self.pattern not in ("mfmw", "mfmr"):
            raise SpecError(f"--duration works with mfmw and mfmr, not {self.pattern}")
        writes = self.phases is None or "write" in self.phases
        in_parts = self.file_size_bytes > self.transfer_bytes
        if self.target.is_object_store and self.pattern == "mfmw" and writes and in_parts:
            raise SpecError(
                f"--duration: a {self.target.kind} object is written once (repeating its parts "
                "would repeat them in its upload); time only reads, or make each object one "
                "transfer (--files-per-rank = size per rank / transfer), which re-PUTs it"
            )

    def _validate_object_store(self) -> None:
        if self.direct:
            raise SpecError(
                f"--direct: {self.target.kind} targets have no page cache to bypass; drop --direct"
            )
        if self.drop_caches:
            raise SpecError(
                f"--drop-caches: {self.target.kind} targets have no page cache to drop; "
                "drop --drop-caches"
            )
        if self.target.kind == "memory" and self.ranks > 1:
            raise SpecError("memory:// lives inside one process: use -n 1")

    def to_dict(self) -> dict[str, object]:
        """The spec as a result document records it (target redacted)."""
        record = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        record["target"] = self.target.redacted()
        if self.ranks_per_node is None:
            # Absent rather than null, so documents of plain runs keep the fields they always
            # had and compare equal to those written before the field existed.
            del record["ranks_per_node"]
        if not self.random_offsets:
            del record["random_offsets"]
        if self.profile is None:
            del record["profile"]
        if self.duration_s is None:
            del record["duration_s"]
        if self.files_per_rank == 1:
            del record["files_per_rank"]
        if not self.drop_caches:
            del record["drop_caches"]
        # A safety check, not part of what is measured: documents and sweep points ignore it.
        del record["space_check"]
        return record

    @classmethod
    def from_dict(cls, record: dict[str, object]) -> RunSpec:
        """Rebuild a spec from a result document's `run` record."""
        fields = {f.name for f in dataclasses.fields(cls)}
        values: dict[str, Any] = {k: v for k, v in record.items() if k in fields}
        target = record["target"]
        assert isinstance(target, dict)
        values["target"] = TargetSpec.from_url(str(target["url"]))
        if values.get("phases") is not None:
            values["phases"] = tuple(values["phases"])
        return cls(**values)


def _option(field_name: str) -> str:
    names = {
        "ranks": "-n",
        "iterations": "-i",
        "size_per_rank_bytes": "--size-per-rank",
        "transfer_bytes": "--transfer",
        "gather_chunk_bytes": "--gather-chunk",
        "in_flight": "--in-flight",
        "segments": "--segments",
    }
    return names.get(field_name, field_name)
