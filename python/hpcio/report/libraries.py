"""The RTM study's tables (reference 004) from `volume` and `imaging` runs: one line per
library and target, with the volume's stored and raw size, the create (write phase) time, the
step's I/O time (write and read phase: an imaging run's is the study's single-shot run time
without its compute) and the bandwidths, so libraries written to the same target compare in
one table."""

from __future__ import annotations

from collections.abc import Sequence
from statistics import mean

from hpcio.report.grid import Grid, grid
from hpcio.report.pooled import headline_bandwidth_mib_s, pooled_stats
from hpcio.results.schema import ResultDocument
from hpcio.workloads import shown

FAMILY = "library"
_COLUMNS = ("Library", "Target", "Ranks", "Volume", "Stored (MiB)", "Raw (MiB)", "Raw/stored",
            "Create (s)", "Step I/O (s)", "Write (MiB/s)", "Read (MiB/s)", "Runs")  # fmt: skip


def is_library_run(doc: ResultDocument) -> bool:
    return shown.family_of(doc.workload) == FAMILY


_TITLE = "libraries: write phase (volume: the create) and read phase"
_NOTE = (
    "MiB/s are of float32 samples (not SEG-Y's trace headers or any library's metadata); "
    "imaging writes its image cubes and reads its volume slabs and shot files; Raw/stored "
    "above 1 is compression. Step I/O (s) is the mean write phase time plus the mean read "
    "phase time: for imaging, one shot's I/O, the study's single-shot run time less its "
    "compute (which hpcio does not run). MiB/s is the headline: bytes over the mean phase time."
)


def library_table(docs: Sequence[ResultDocument]) -> str:
    """Markdown: the library runs among `docs`, grouped by label, target, ranks and volume
    (runs of one group pooled); "" when there are none."""
    found = library_grids(docs)
    if not found:
        return ""
    (table,) = found
    lines = [
        f"### {table.title}",
        "",
        "| " + " | ".join(table.columns) + " |",
        "| --- | --- | ---: | --- | " + " | ".join("---:" for _ in table.columns[4:]) + " |",
        *("| " + " | ".join(cells) + " |" for cells in table.rows),
        "",
        *table.notes,
    ]
    return "\n".join(lines) + "\n"


def library_grids(docs: Sequence[ResultDocument]) -> list[Grid]:
    """The RTM study's library table of the library runs among `docs` (none without them)."""
    groups: dict[tuple[str, str, int, str], list[ResultDocument]] = {}
    for doc in docs:
        if is_library_run(doc) and "write" in doc.summary:
            shape = "x".join(str(s) for s in doc.params.get("volume", ()))
            key = (shown.label(doc.workload, doc.settings), str(doc.run["target"]["url"]),
                   doc.ranks, shape)  # fmt: skip
            groups.setdefault(key, []).append(doc)
    if not groups:
        return []
    rows = []
    for (label, url, ranks, shape), chosen in groups.items():
        writes = [p for d in chosen for p in d.phases if p.phase == "write"]
        stored = mean(p.metrics.get("stored_bytes", 0) for p in writes)
        raw = mean(p.metrics.get("raw_bytes", 0) for p in writes)
        read = _mib_s(chosen, "read")
        cells = [
            label, url, str(ranks), shape, f"{stored / 2**20:.2f}", f"{raw / 2**20:.2f}",
            f"{raw / stored:.1f}" if stored else "-",
            f"{pooled_stats(chosen, 'write', 'seconds').mean:.3f}",
            _step_s(chosen),
            f"{headline_bandwidth_mib_s(chosen, 'write'):.1f}",
            read, str(len(chosen)),
        ]  # fmt: skip
        rows.append(cells)
    return [grid(_TITLE, _COLUMNS, rows, _NOTE)]


def _step_s(docs: Sequence[ResultDocument]) -> str:
    """The mean write phase time plus the mean read phase time ("-" without reads)."""
    if not all("read" in d.summary for d in docs):
        return "-"
    seconds = sum(pooled_stats(docs, phase, "seconds").mean for phase in ("write", "read"))
    return f"{seconds:.3f}"


def _mib_s(docs: Sequence[ResultDocument], phase: str) -> str:
    if not all(phase in d.summary for d in docs):
        return "-"
    return f"{headline_bandwidth_mib_s(docs, phase):.1f}"
