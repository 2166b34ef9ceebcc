"""--trace: each rank keeps the operations its engine calls traced, and writes them to a file
of its own when the run ends (no gather: a trace is as long as the run has operations).

Times are ns from the run's origin: the clock read right after a barrier before the first
phase, on every rank, so the ranks' rows line up to the barrier's precision."""

from __future__ import annotations

import datetime
import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from hpcio import _engine
from hpcio.results import io as results_io
from hpcio.trace import operations

if TYPE_CHECKING:
    from hpcio.spec.model import RunSpec

#: Where traces go without -o (or with -o -), relative to the working directory.
DEFAULT_ROOT = "hpcio-trace"
#: Op names by the engine's trace codes.
OP_NAMES = np.asarray(_engine.TRACE_OPS)


def root_for(output: str | None) -> str:
    """The directory that holds the traces of the runs whose documents go to `output`:
    results.jsonl -> results.trace; stdout or no -o -> ./hpcio-trace."""
    spool = os.environ.get(results_io.SPOOL_VARIABLE)
    if output is None or output == results_io.STDOUT or output == spool:
        return os.path.abspath(DEFAULT_ROOT)
    stem, _ = os.path.splitext(os.path.abspath(output))
    return stem + ".trace"


def run_id(run: RunSpec) -> str:
    """A name for one run's trace directory: when it started, what it ran, and a random tail
    so two runs in the same second do not share one. Rank 0's is broadcast to the others."""
    now = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{now}-{run.workload.name}-{secrets.token_hex(3)}"


class Tracer:
    """One rank's trace of one run: the engine's columns as they came (op codes, file
    indices), so millions of rows never become Python strings."""

    def __init__(
        self, rank: int, origin_ns: int, directory: str, run: RunSpec,
        limit: int = _engine.TRACE_LIMIT,
    ) -> None:  # fmt: skip
        self.rank = rank
        self.origin_ns = origin_ns
        self.directory = directory
        self._kind = run.target.kind
        # Python bodies name files by their path; the trace names them as the plans do.
        self._prefix = "" if run.target.is_object_store else run.target.path.rstrip("/") + "/"
        self._files: dict[str, int] = {}
        self._parts: list[tuple[np.ndarray, ...]] = []
        #: Operations this rank may still keep, and those past that, counted only.
        self._room = limit
        self.not_kept = 0

    @property
    def room(self) -> int:
        """Operations this rank's trace may still keep."""
        return self._room

    @property
    def path(self) -> Path:
        return Path(self.directory) / operations.rank_file_name(self.rank)

    def add(self, columns: _engine.TraceColumns | None) -> None:
        """What an executor's or recorder's take_trace() returned (None: it did not trace)."""
        if columns is None:
            return
        names, codes, index, offsets, lengths, starts, ends, dropped = columns
        self.not_kept += dropped
        if len(codes) > self._room:
            self.not_kept += len(codes) - self._room
            room = self._room
            codes, index, offsets = codes[:room], index[:room], offsets[:room]
            lengths, starts, ends = lengths[:room], starts[:room], ends[:room]
        if len(codes) == 0:
            return
        self._room -= len(codes)
        ours = np.asarray(
            [self._files.setdefault(self._relative(n), len(self._files)) for n in names],
            dtype=np.int32,
        )
        self._parts.append((codes, ours[index], offsets, lengths, starts, ends))

    def _relative(self, name: str) -> str:
        return name[len(self._prefix) :] if self._prefix and name.startswith(self._prefix) else name

    def write(self) -> int:
        """Writes this rank's file (also when it traced nothing); its operation count."""
        if self._parts:
            codes, files, offsets, lengths, starts, ends = (
                np.concatenate(column) for column in zip(*self._parts, strict=True)
            )
        else:
            codes, files = np.zeros(0, np.uint8), np.zeros(0, np.int32)
            offsets, lengths, starts, ends = (np.zeros(0, np.int64) for _ in range(4))
        order = np.argsort(starts, kind="stable")
        origin = np.int64(self.origin_ns)
        operations.write_columns(
            self.path,
            rank=np.full(len(codes), self.rank, dtype=np.int32),
            files=np.asarray(list(self._files) or [""], dtype=str),
            file_index=files[order],
            op_names=OP_NAMES,
            op_index=codes[order],
            offset=offsets[order],
            length=lengths[order],
            # The origin is read before any operation starts: no time is negative.
            start_ns=starts[order].astype(np.int64) - origin,
            end_ns=ends[order].astype(np.int64) - origin,
            target_kind=self._kind,
        )
        return len(codes)


def record(directory: str, ranks: int, counts: list[tuple[int, int]]) -> dict[str, object]:
    """The result document's `trace` field, from each rank's (kept, not kept) operations."""
    traced: dict[str, object] = {
        "directory": directory,
        "format": f"npz-{operations.FORMAT_VERSION}",
        "files": ranks,
        "operations": sum(kept for kept, _ in counts),
    }
    not_kept = sum(n for _, n in counts)
    if not_kept:
        traced["operations_not_kept"] = not_kept
        traced["limit_per_rank"] = _engine.TRACE_LIMIT
        traced["ranks_at_limit"] = sum(1 for _, n in counts if n)
    return traced


def warnings(traced: dict[str, object] | None) -> tuple[str, ...]:
    """The document's warning when ranks traced more operations than they keep."""
    if not traced or not traced.get("operations_not_kept"):
        return ()
    return (
        f"trace: {traced['ranks_at_limit']} rank(s) reached the limit of "
        f"{traced['limit_per_rank']:,} traced operations per rank; "
        f"{traced['operations_not_kept']:,} later operation(s) are not in the trace "
        "(the figures count them all)",
    )
