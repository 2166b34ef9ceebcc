"""MLPerf Storage's checkpoint table from the documents of `hpcio checkpoint`: per model and
target, the time to save and to load the whole checkpoint (the slowest rank's, as the phase
time is) and the throughput that gives."""

from __future__ import annotations

from collections.abc import Sequence

from hpcio.report.grid import Grid, grid
from hpcio.report.points import per_rank_bytes
from hpcio.report.profiles import _table
from hpcio.results.schema import ResultDocument
from hpcio.units import format_bytes
from hpcio.workloads import shown

_GIB = float(1 << 30)
_TITLE = "checkpoints (MLPerf Storage)"
HEADER = ("Model", "Ranks", "Checkpoint", "Target", "Save (s)", "Save (GiB/s)", "Load (s)",
          "Load (GiB/s)")  # fmt: skip


def is_checkpoint(doc: ResultDocument) -> bool:
    return shown.family_of(doc.workload) == "checkpoint"


def checkpoint_grids(docs: Sequence[ResultDocument]) -> list[Grid]:
    """The checkpoint table of the checkpoint runs among `docs` (none without them)."""
    rows: dict[tuple[str, int, int, str], dict[str, float]] = {}
    for doc in docs:
        if not is_checkpoint(doc):
            continue
        total = per_rank_bytes(doc) * doc.ranks
        key = (doc.workload, doc.ranks, total, str(doc.run["target"]["url"]))
        for phase, summary in doc.summary.items():
            rows.setdefault(key, {})[phase] = summary.seconds.mean
    if not rows:
        return []
    lines = []
    for (model, ranks, total, target), seconds in rows.items():
        cells = [model, str(ranks), format_bytes(total), target]
        for phase in ("write", "read"):
            took = seconds.get(phase)
            cells += ["-", "-"] if took is None else [f"{took:.3f}", f"{total / _GIB / took:.3f}"]
        lines.append(cells)
    return [grid(_TITLE, HEADER, lines)]


def checkpoint_table(docs: Sequence[ResultDocument]) -> str:
    """One row per (model, ranks, checkpoint size, target): the mean over the saves and over
    the loads of the phase time, and the checkpoint's bytes over it. '' without checkpoints."""
    found = checkpoint_grids(docs)
    if not found:
        return ""
    (table,) = found
    return f"### {table.title}\n\n" + _table(table.columns, table.rows) + "\n"
