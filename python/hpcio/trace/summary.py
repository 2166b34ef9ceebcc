"""Darshan-style counters per module, rank and file: computed from an operations table (an
hpcio trace, or a Darshan log's DXT segments), or taken from a Darshan log's own records;
printed as a table (rich) or JSON. Darshan's counter names are the vocabulary, and its
definitions the meaning (darshan-runtime's POSIX module):

- SEQ: an access at a higher offset than where the rank's previous access of that kind to the
  file left off (offset > last byte); CONSEC: immediately after it (offset == last byte + 1).
  The last byte starts at 0, as Darshan's does, so a first access at offset 0 is neither.
- SIZE_*: Darshan's access-size buckets (0-100 B, 100 B-1 KiB, ... 1 GiB+, upper bounds
  inclusive); ACCESS1..4: the four most common access sizes, reads and writes together.
- F_*_TIME: seconds in reads, writes and metadata (open, close, fsync, ...), overlapping
  operations counted once (Darshan's no-overlap timer); F_*_TIMESTAMP: seconds from the
  trace's origin."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from hpcio import kinds
from hpcio.trace.operations import Operations

#: Upper bounds (inclusive) of Darshan's access-size buckets, and their names.
BUCKETS = (
    (100, "0_100"),
    (1024, "100_1K"),
    (10 * 1024, "1K_10K"),
    (100 * 1024, "10K_100K"),
    (1024**2, "100K_1M"),
    (4 * 1024**2, "1M_4M"),
    (10 * 1024**2, "4M_10M"),
    (100 * 1024**2, "10M_100M"),
    (1024**3, "100M_1G"),
    (None, "1G_PLUS"),
)
#: The counters a summary shows, in Darshan's order (without the module's prefix).
COUNTERS = (
    "OPENS",
    "READS",
    "WRITES",
    "FSYNCS",
    "BYTES_READ",
    "BYTES_WRITTEN",
    "MAX_BYTE_READ",
    "MAX_BYTE_WRITTEN",
    "CONSEC_READS",
    "CONSEC_WRITES",
    "SEQ_READS",
    "SEQ_WRITES",
    "RW_SWITCHES",
    *(f"SIZE_READ_{name}" for _, name in BUCKETS),
    *(f"SIZE_WRITE_{name}" for _, name in BUCKETS),
    *(f"ACCESS{i}_ACCESS" for i in range(1, 5)),
    *(f"ACCESS{i}_COUNT" for i in range(1, 5)),
    "F_OPEN_START_TIMESTAMP",
    "F_READ_START_TIMESTAMP",
    "F_WRITE_START_TIMESTAMP",
    "F_READ_END_TIMESTAMP",
    "F_WRITE_END_TIMESTAMP",
    "F_CLOSE_END_TIMESTAMP",
    "F_READ_TIME",
    "F_WRITE_TIME",
    "F_META_TIME",
)
#: Counters of MPI-IO and STDIO records shown besides those that share POSIX's names.
OTHER_COUNTERS = (
    "INDEP_OPENS",
    "COLL_OPENS",
    "INDEP_READS",
    "INDEP_WRITES",
    "COLL_READS",
    "COLL_WRITES",
    "SPLIT_READS",
    "SPLIT_WRITES",
    "NB_READS",
    "NB_WRITES",
    "SYNCS",
    "FLUSHES",
    "SEEKS",
    *(f"SIZE_READ_AGG_{name}" for _, name in BUCKETS),
    *(f"SIZE_WRITE_AGG_{name}" for _, name in BUCKETS),
)
META_OPS = frozenset({"open", "create", "close", "fsync", "commit", "stat", "list", "delete"})
#: A Darshan log's module names -> the prefix of their counters.
PREFIXES = {"POSIX": "POSIX", "MPI-IO": "MPIIO", "STDIO": "STDIO"}


@dataclass(frozen=True)
class Row:
    """One record: a module's counters for one rank (-1: all ranks, Darshan's shared record)
    and one file."""

    module: str
    rank: int
    file: str
    counters: dict[str, float | int]


def bucket(length: int) -> str:
    for top, name in BUCKETS:
        if top is None or length <= top:
            return name
    raise AssertionError("the last bucket has no top")


def module_for(target_kind: str | None) -> str:
    """The module a trace's records are named by: POSIX for a file system's (and for a trace
    that does not say its kind), else the target kind's name ("S3", "AZURE", "GCS"), its
    counters prefixed the same way: Darshan has no module for an object store's requests."""
    kind = target_kind or "posix"
    known = kinds.KINDS.get(kind)
    if known is not None and not known.object_store:
        return "POSIX"
    return kind.upper()


def from_operations(ops: Operations, module: str = "POSIX") -> list[Row]:
    """Darshan's counters for every (rank, file) of `ops`, ranks then files in order; `module`
    names the records and prefixes their counters (a Darshan module, or module_for's)."""
    rows = []
    ordered = ops.sorted_by_start()
    for rank in np.unique(ordered.rank):
        mine = ordered.select(ordered.rank == rank)
        for file in sorted(set(mine.file.tolist())):
            one = mine.select(mine.file == file)
            prefix = PREFIXES.get(module, module)
            rows.append(Row(module, int(rank), str(file), counters(one, prefix)))
    return rows


def counters(ops: Operations, prefix: str = "POSIX") -> dict[str, float | int]:
    """One rank's counters for one file (ops of that rank and file, in start order)."""
    c: dict[str, float | int] = dict.fromkeys(
        (f"{prefix}_{name}" for name in COUNTERS if not name.startswith("F_")), 0
    )
    last_byte = {"read": 0, "write": 0}
    sizes: Counter[int] = Counter()
    last_kind = None
    kinds = {"read": "READ", "write": "WRITE"}
    for op, offset, length in zip(
        ops.op.tolist(), ops.offset.tolist(), ops.length.tolist(), strict=True
    ):
        if op in kinds:
            kind = kinds[op]
            noun = "READS" if op == "read" else "WRITES"
            c[f"{prefix}_{noun}"] += 1
            c[f"{prefix}_BYTES_{'READ' if op == 'read' else 'WRITTEN'}"] += length
            if offset > last_byte[op]:
                c[f"{prefix}_SEQ_{noun}"] += 1
            if offset == last_byte[op] + 1:
                c[f"{prefix}_CONSEC_{noun}"] += 1
            last_byte[op] = offset + length - 1
            most = f"{prefix}_MAX_BYTE_{'READ' if op == 'read' else 'WRITTEN'}"
            c[most] = max(c[most], offset + length - 1)
            c[f"{prefix}_SIZE_{kind}_{bucket(length)}"] += 1
            sizes[length] += 1
            if last_kind is not None and last_kind != op:
                c[f"{prefix}_RW_SWITCHES"] += 1
            last_kind = op
        elif op in ("open", "create"):
            c[f"{prefix}_OPENS"] += 1
        elif op == "fsync":
            c[f"{prefix}_FSYNCS"] += 1
    # Most common first; equally common: the larger size first.
    common = sorted(sizes.items(), key=lambda item: (-item[1], -item[0]))[:4]
    for i in range(4):
        size, count = common[i] if i < len(common) else (0, 0)
        c[f"{prefix}_ACCESS{i + 1}_ACCESS"] = size
        c[f"{prefix}_ACCESS{i + 1}_COUNT"] = count
    c.update(_times(ops, prefix))
    return c


def _times(ops: Operations, prefix: str) -> dict[str, float]:
    seconds = 1e-9
    out: dict[str, float] = {}

    def span(mask: np.ndarray) -> tuple[float, float]:
        if not mask.any():
            return 0.0, 0.0
        return float(ops.start_ns[mask].min()) * seconds, float(ops.end_ns[mask].max()) * seconds

    reads, writes = ops.op == "read", ops.op == "write"
    opens, closes = np.isin(ops.op, ["open", "create"]), np.isin(ops.op, ["close", "commit"])
    meta = np.isin(ops.op, list(META_OPS))
    out[f"{prefix}_F_OPEN_START_TIMESTAMP"] = span(opens)[0]
    out[f"{prefix}_F_READ_START_TIMESTAMP"], out[f"{prefix}_F_READ_END_TIMESTAMP"] = span(reads)
    out[f"{prefix}_F_WRITE_START_TIMESTAMP"], out[f"{prefix}_F_WRITE_END_TIMESTAMP"] = span(writes)
    out[f"{prefix}_F_CLOSE_END_TIMESTAMP"] = span(closes)[1]
    out[f"{prefix}_F_READ_TIME"] = _no_overlap(ops, reads) * seconds
    out[f"{prefix}_F_WRITE_TIME"] = _no_overlap(ops, writes) * seconds
    out[f"{prefix}_F_META_TIME"] = _no_overlap(ops, meta) * seconds
    return out


def _no_overlap(ops: Operations, mask: np.ndarray) -> int:
    """ns covered by the selected operations, time two of them overlap counted once (in start
    order, as Darshan's DARSHAN_TIMER_INC_NO_OVERLAP)."""
    total, last_end = 0, None
    for start, end in zip(ops.start_ns[mask].tolist(), ops.end_ns[mask].tolist(), strict=True):
        if last_end is None or start >= last_end:
            total += end - start
        elif end > last_end:
            total += end - last_end
        last_end = end if last_end is None else max(last_end, end)
    return total


def from_darshan_records(report: Any) -> list[Row]:
    """The POSIX, MPI-IO and STDIO records of a pydarshan report, with the log's own values
    of the counters a summary shows (those the module has)."""
    rows = []
    names = report.name_records
    for module, prefix in PREFIXES.items():
        if module not in report.records:
            continue
        frames = report.records[module].to_df()
        ints, floats = frames["counters"], frames.get("fcounters")
        shown = [f"{prefix}_{n}" for n in (*COUNTERS, *OTHER_COUNTERS)]
        # Column by column: a row of mixed columns would turn the 64-bit ids into floats.
        columns = {n: ints[n].to_numpy().tolist() for n in shown if n in ints.columns}
        if floats is not None:
            columns |= {n: floats[n].to_numpy().tolist() for n in shown if n in floats.columns}
        ids, ranks = ints["id"].to_numpy().tolist(), ints["rank"].to_numpy().tolist()
        for i, (record_id, rank) in enumerate(zip(ids, ranks, strict=True)):
            values = {name: column[i] for name, column in columns.items()}
            file = names.get(record_id, str(record_id))
            rows.append(Row(module, int(rank), file, values))
    return rows


def to_json(rows: list[Row]) -> str:
    return json.dumps(
        [
            {"module": r.module, "rank": r.rank, "file": r.file, "counters": r.counters}
            for r in rows
        ],
        indent=1,
    )


def render(rows: list[Row], title: str, console: Any = None) -> None:
    """A table per module, darshan-parser's way: one line per non-zero counter of a record."""
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    if not rows:
        console.print(f"{title}: no operations")
        return
    for module in dict.fromkeys(r.module for r in rows):
        table = Table(title=f"{title}: {module}", title_justify="left")
        table.add_column("rank", justify="right")
        table.add_column("file", overflow="fold")
        table.add_column("counter", no_wrap=True)
        table.add_column("value", justify="right")
        for row in (r for r in rows if r.module == module):
            rank = "all" if row.rank == -1 else str(row.rank)
            first = True
            for name, value in row.counters.items():
                if not value:
                    continue
                shown = f"{value:.6f}" if isinstance(value, float) else str(value)
                table.add_row(rank if first else "", row.file if first else "", name, shown)
                first = False
            table.add_section()
        console.print(table)
