"""What a replay reads: the application's reads and writes, per application rank, from a
Darshan log (its DXT segments when it has them, else its counters) or an hpcio trace."""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hpcio.errors import SpecError
from hpcio.trace import operations
from hpcio.workloads.replay import counters

#: The "replayed from" values a result records.
DXT, COUNTERS, HPCIO_TRACE = "dxt", "counters", "hpcio-trace"


@dataclass(frozen=True)
class Source:
    #: Reads and writes only, in the application's order (by start time).
    ops: operations.Operations
    replayed_from: str
    #: Ranks the application ran with (the log's nprocs, or the trace's ranks).
    app_ranks: int
    #: Where replayed_from is counters: whether the log's bytes and buckets were met exactly.
    exact: bool = True


def load(path: str, shrink: int = 1) -> Source:
    """The application's I/O in `path`, every offset and length divided by `shrink` (lengths
    at least 1 byte).

    Raises:
        SpecError: no such file, not a Darshan log or hpcio trace, or no reads or writes.
    """
    where = Path(path)
    try:
        stamp = where.stat().st_mtime_ns
    except OSError as e:
        raise SpecError(f"{path}: {e.strerror.lower() if e.strerror else e}") from None
    return _load(str(where.resolve()), stamp, shrink)


@functools.lru_cache(maxsize=4)
def _load(path: str, stamp: int, shrink: int) -> Source:
    source = _read(Path(path))
    ops = source.ops.select(np.isin(source.ops.op, ("read", "write")))
    if not len(ops):
        raise SpecError(f"{path}: the {source.replayed_from} records hold no reads or writes")
    ops = ops.sorted_by_start()
    if shrink > 1:
        ops = operations.Operations(
            rank=ops.rank, file=ops.file, op=ops.op, offset=ops.offset // shrink,
            length=np.maximum(ops.length // shrink, 1), start_ns=ops.start_ns, end_ns=ops.end_ns,
        )  # fmt: skip
    return Source(ops, source.replayed_from, source.app_ranks, source.exact)


def _read(path: Path) -> Source:
    if path.is_dir() or path.suffix == operations.SUFFIX:
        try:
            ops = operations.load(path)
        except operations.TraceError as e:
            raise SpecError(str(e)) from None
        # A rank that made no operation still wrote its file: the files say how many ran.
        files = path.rglob(f"rank-*{operations.SUFFIX}") if path.is_dir() else [path]
        numbers = [int(f.stem[5:]) for f in files if f.stem[5:].isdigit()]
        ranks = max([*numbers, int(ops.rank.max()) if len(ops) else 0]) + 1
        return Source(ops, HPCIO_TRACE, ranks)
    from hpcio.trace.darshanlog import open_log

    if not _darshan_header(path):
        raise SpecError(f"{path}: not a Darshan log or an hpcio trace (no Darshan header)")
    report, problem = None, ""
    with _c_stderr_silenced():
        try:
            report = open_log(path)
        except operations.TraceError as e:
            problem = str(e)  # the exception (and the failed report it holds) goes here
    if report is None:
        raise SpecError(problem)
    try:
        return _from_report(report, path)
    finally:
        # Closed now: pydarshan closes a report from __del__, and a collection that falls
        # inside its next cffi call deadlocks on cffi's lock (seen opening a second log).
        report._cleanup()


def _from_report(report, path: Path) -> Source:
    app_ranks = int(report.metadata["job"]["nprocs"])
    # The POSIX segments are what reached the file system; MPI-IO's are the same bytes one
    # layer up (replaying both would move them twice).
    for module in ("DXT_POSIX", "DXT_MPIIO"):
        found = operations.dxt_operations(report, module)
        if found is not None and len(found):
            return Source(found, DXT, app_ranks)
    synthesis = counters.synthesize(report, app_ranks)
    if synthesis is None:
        raise SpecError(f"{path}: the log has neither DXT segments nor POSIX counters")
    return Source(synthesis.ops, COUNTERS, app_ranks, synthesis.exact)


#: darshan-log-format.h's DARSHAN_MAGIC_NR, after the 8-byte version string.
_DARSHAN_MAGIC = 6567223


@contextlib.contextmanager
def _c_stderr_silenced() -> Iterator[None]:
    """File descriptor 2 to /dev/null: darshan-util's C code prints its own lines for a
    damaged log ("Error: failed to read darshan log file header."), and hpcio says one."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
        try:
            yield
        finally:
            gc.collect()  # a failed report's __del__ prints as well
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _darshan_header(path: Path) -> bool:
    """Whether `path` starts as a Darshan log does: pydarshan's C library prints its own
    errors to the process's stderr for anything else, before Python hears of them."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(16)
    except OSError as e:
        raise SpecError(f"{path}: {e.strerror.lower() if e.strerror else e}") from None
    if len(head) < 16:
        return False
    magic = head[8:16]
    return _DARSHAN_MAGIC in (int.from_bytes(magic, "little"), int.from_bytes(magic, "big"))


def key_of(paths: np.ndarray) -> dict[str, str]:
    """The target name of each application path: `hpcio-replay-NNNNN-BASENAME`, N the path's
    place among the log's paths in sorted order, BASENAME its last component with anything
    but letters, digits, '.', '_' and '-' made '_' (so two directories' `out.h5` stay apart
    and every name is flat, the same on a file system and an object store)."""
    names = {}
    for index, app_path in enumerate(sorted(set(paths.tolist()))):
        base = os.path.basename(str(app_path).rstrip("/")) or "file"
        safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in base)[:80]
        names[app_path] = f"hpcio-replay-{index:05d}-{safe}"
    return names
