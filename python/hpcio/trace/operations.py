"""The operations table: one row per I/O operation, in columns.

It is what `--trace` writes (one file per rank), what `hpcio trace summary` and
`hpcio darshan summary` count, and what a replay turns back into a workload. A trace file is
a numpy `.npz` archive (see docs/trace.md): numpy is already a base dependency, and one rank
writes its columns in one call at the end of the run, never during a timed phase."""

from __future__ import annotations

import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hpcio.errors import HpcioError

SUFFIX = ".npz"
# Bumped when a column changes meaning; load() refuses versions it does not know.
FORMAT_VERSION = 1
COLUMNS = ("rank", "file", "op", "offset", "length", "start_ns", "end_ns")
# Ops that move bytes (the ones a replay moves); every other op is metadata.
DATA_OPS = frozenset({"read", "write"})


class TraceError(HpcioError):
    """A trace file or Darshan log that cannot be read."""


@dataclass(frozen=True)
class Operations:
    """One row per I/O operation, in columns (numpy arrays of equal length)."""

    rank: np.ndarray  # int32
    file: np.ndarray  # str: a path relative to the target, or an object key
    op: np.ndarray  # str: "open" "create" "read" "write" "fsync" "close" "stat" "list" ...
    offset: np.ndarray  # int64, -1 where the op has none
    length: np.ndarray  # int64 bytes moved (0 for metadata ops)
    start_ns: np.ndarray  # int64, from one origin shared by all ranks of the run
    end_ns: np.ndarray  # int64

    def __len__(self) -> int:
        return len(self.rank)

    def select(self, mask: np.ndarray) -> Operations:
        """The rows where mask is true (a boolean array or an index array)."""
        return Operations(**{name: getattr(self, name)[mask] for name in COLUMNS})

    def sorted_by_start(self) -> Operations:
        return self.select(np.argsort(self.start_ns, kind="stable"))


def empty() -> Operations:
    return build([], [], [], [], [], [], [])


def build(rank, file, op, offset, length, start_ns, end_ns) -> Operations:
    """An Operations from any sequences, with the contract's dtypes."""
    return Operations(
        rank=np.asarray(rank, dtype=np.int32),
        file=np.asarray(file, dtype=str),
        op=np.asarray(op, dtype=str),
        offset=np.asarray(offset, dtype=np.int64),
        length=np.asarray(length, dtype=np.int64),
        start_ns=np.asarray(start_ns, dtype=np.int64),
        end_ns=np.asarray(end_ns, dtype=np.int64),
    )


def concat(parts: list[Operations]) -> Operations:
    if not parts:
        return empty()
    return Operations(
        **{name: np.concatenate([getattr(part, name) for part in parts]) for name in COLUMNS}
    )


def rank_file_name(rank: int) -> str:
    return f"rank-{rank:05d}{SUFFIX}"


def write(path: str | os.PathLike, ops: Operations) -> None:
    """Writes one rank's (or any) operations to one .npz file.

    Strings are stored once each, as a table plus an int32 index per row, so a trace of a
    million writes to one file costs four bytes a row for its file column."""
    files, file_index = np.unique(ops.file, return_inverse=True)
    op_names, op_index = np.unique(ops.op, return_inverse=True)
    write_columns(path, ops.rank, files, file_index, op_names, op_index, ops.offset, ops.length,
                  ops.start_ns, ops.end_ns)  # fmt: skip


def write_columns(
    path: str | os.PathLike,
    rank: np.ndarray,
    files: np.ndarray,
    file_index: np.ndarray,
    op_names: np.ndarray,
    op_index: np.ndarray,
    offset: np.ndarray,
    length: np.ndarray,
    start_ns: np.ndarray,
    end_ns: np.ndarray,
    target_kind: str | None = None,
) -> None:
    """write(), from the tables and indices themselves (a rank's tracer has them already:
    millions of rows need never become strings). `target_kind`: the kind of target the
    operations went to ("posix", "s3", ...), kept beside the columns (kind_of reads it)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    kind = {} if target_kind is None else {"target_kind": np.asarray(target_kind, dtype=str)}
    with open(partial, "wb") as out:
        np.savez(
            out,
            # numpy's stub lets a ** dict fill savez's allow_pickle (a bool): this one's
            # only key is target_kind.
            **kind,  # type: ignore[arg-type]
            format_version=np.int32(FORMAT_VERSION),
            rank=np.asarray(rank, dtype=np.int32),
            files=np.asarray(files, dtype=str),
            file_index=np.asarray(file_index, dtype=np.int32),
            op_names=np.asarray(op_names, dtype=str),
            op_index=np.asarray(op_index, dtype=np.int8 if len(op_names) < 128 else np.int32),
            offset=np.asarray(offset, dtype=np.int64),
            length=np.asarray(length, dtype=np.int64),
            start_ns=np.asarray(start_ns, dtype=np.int64),
            end_ns=np.asarray(end_ns, dtype=np.int64),
        )
    os.replace(partial, target)


def load(path: str | os.PathLike) -> Operations:
    """An hpcio trace: one rank's file, or a directory of them (searched recursively).

    Raises: TraceError for a missing path, a directory without trace files, a directory with
    the traces of several runs (one application's ranks would be two jobs'), or a file that
    is not an hpcio trace."""
    where = Path(path)
    if where.is_dir():
        found = sorted(where.rglob(f"rank-*{SUFFIX}"))
        if not found:
            raise TraceError(f"{where}: no trace files (rank-NNNNN{SUFFIX}) in this directory")
        runs = sorted({one.parent for one in found})
        if len(runs) > 1:
            named = ", ".join(str(run.relative_to(where)) or "." for run in runs[:4])
            more = f" and {len(runs) - 4} more" if len(runs) > 4 else ""
            raise TraceError(
                f"{where} holds the traces of {len(runs)} runs ({named}{more}): give one run's "
                f"directory, e.g. {runs[0]}"
            )
        return concat([load_file(one) for one in found])
    if not where.exists():
        raise TraceError(f"{where}: no such file or directory")
    return load_file(where)


def kind_of(path: str | os.PathLike) -> str | None:
    """The target kind a trace's operations went to ("posix", "s3", ...): what its first
    rank's file says, or None for a trace written before files said it (they were all
    counted as POSIX) or one that does not say."""
    where = Path(path)
    found = sorted(where.rglob(f"rank-*{SUFFIX}")) if where.is_dir() else [where]
    if not found:
        return None
    try:
        with np.load(found[0], allow_pickle=False) as archive:
            return str(archive["target_kind"]) if "target_kind" in archive.files else None
    except (ValueError, KeyError, zipfile.BadZipFile, EOFError, OSError):
        return None


def load_file(path: Path) -> Operations:
    try:
        with np.load(path, allow_pickle=False) as archive:
            version = int(archive["format_version"])
            if version > FORMAT_VERSION:
                raise TraceError(
                    f"{path}: trace format {version} is newer than this hpcio reads "
                    f"({FORMAT_VERSION})"
                )
            return Operations(
                rank=archive["rank"].astype(np.int32, copy=False),
                file=archive["files"][archive["file_index"]],
                op=archive["op_names"][archive["op_index"]],
                offset=archive["offset"],
                length=archive["length"],
                start_ns=archive["start_ns"],
                end_ns=archive["end_ns"],
            )
    except (ValueError, KeyError, zipfile.BadZipFile, EOFError):
        raise TraceError(f"{path}: not an hpcio trace file (rank-NNNNN{SUFFIX})") from None
    except OSError as error:
        raise TraceError(f"{path}: cannot read ({error.strerror or error})") from None


def from_darshan_dxt(log_path: str | os.PathLike) -> Operations | None:
    """The DXT segments of a Darshan log (POSIX and MPI-IO), or None when it has none.

    Times are Darshan's seconds since the job's start, here in ns; file names come from the
    log's name records. Raises: TraceError (no pydarshan, not a Darshan log)."""
    from hpcio.trace.darshanlog import open_log  # pydarshan is an optional extra

    report = open_log(log_path)
    parts = [dxt_operations(report, module) for module in ("DXT_POSIX", "DXT_MPIIO")]
    found = [part for part in parts if part is not None and len(part)]
    if not found:
        return None
    return concat(found).sorted_by_start()


def dxt_operations(report, module: str) -> Operations | None:
    """One DXT module's segments as operations (None where the log lacks the module)."""
    if module not in report.records:
        return None
    names = report.name_records
    columns: dict[str, list] = {name: [] for name in COLUMNS}
    for record in report.records[module].to_df():
        file_name = names.get(record["id"], str(record["id"]))
        for op, key in (("read", "read_segments"), ("write", "write_segments")):
            segments = record.get(key)
            if segments is None or len(segments) == 0:
                continue
            count = len(segments)
            columns["rank"].append(np.full(count, record["rank"], dtype=np.int32))
            columns["file"].append(np.full(count, file_name, dtype=object))
            columns["op"].append(np.full(count, op, dtype=object))
            columns["offset"].append(segments["offset"].to_numpy(dtype=np.int64))
            columns["length"].append(segments["length"].to_numpy(dtype=np.int64))
            times = [segments[k].to_numpy(dtype=np.float64) for k in ("start_time", "end_time")]
            if not all(np.isfinite(t).all() and (t >= 0).all() for t in times):
                raise TraceError(
                    f"a damaged Darshan log: {module} segments of rank {record['rank']} have "
                    "times that are not times (negative or not a number)"
                )
            columns["start_ns"].append(seconds_to_ns(times[0]))
            columns["end_ns"].append(seconds_to_ns(times[1]))
    if not columns["rank"]:
        return None
    return build(*(np.concatenate(columns[name]) for name in COLUMNS))


def seconds_to_ns(seconds: np.ndarray) -> np.ndarray:
    return np.rint(np.asarray(seconds, dtype=np.float64) * 1e9).astype(np.int64)
