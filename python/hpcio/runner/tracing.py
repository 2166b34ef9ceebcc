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
    return f"{now}-{run.workload}-{secrets.token_hex(3)}"


class Tracer:
    """One rank's trace of one run."""

    def __init__(self, rank: int, origin_ns: int, directory: str, run: RunSpec) -> None:
        self.rank = rank
        self.origin_ns = origin_ns
        self.directory = directory
        # Python bodies name files by their path; the trace names them as the plans do.
        self._prefix = "" if run.target.is_object_store else run.target.path.rstrip("/") + "/"
        self._parts: list[operations.Operations] = []

    @property
    def path(self) -> Path:
        return Path(self.directory) / operations.rank_file_name(self.rank)

    def add(self, columns: _engine.TraceColumns | None) -> None:
        """What an executor's or recorder's take_trace() returned (None: it did not trace)."""
        if columns is None:
            return
        names, codes, index, offsets, lengths, starts, ends = columns
        if len(codes) == 0:
            return
        files = np.asarray([self._relative(n) for n in names] or [""], dtype=str)
        origin = np.uint64(self.origin_ns)
        self._parts.append(
            operations.Operations(
                rank=np.full(len(codes), self.rank, dtype=np.int32),
                file=files[index],
                op=OP_NAMES[codes],
                offset=offsets,
                length=lengths.astype(np.int64),
                # Before the origin cannot happen (it is read first); int64 keeps it signed.
                start_ns=starts.astype(np.int64) - np.int64(origin),
                end_ns=ends.astype(np.int64) - np.int64(origin),
            )
        )

    def _relative(self, name: str) -> str:
        return name[len(self._prefix) :] if self._prefix and name.startswith(self._prefix) else name

    def write(self) -> int:
        """Writes this rank's file (also when it traced nothing); its operation count."""
        ops = operations.concat(self._parts).sorted_by_start()
        operations.write(self.path, ops)
        return len(ops)


def record(directory: str, ranks: int, total: int) -> dict[str, object]:
    """The result document's `trace` field."""
    return {
        "directory": directory,
        "format": f"npz-{operations.FORMAT_VERSION}",
        "files": ranks,
        "operations": total,
    }
