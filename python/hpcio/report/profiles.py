"""The fio study's two tables (reference 003) from the documents of `hpcio profile` runs."""

from __future__ import annotations

from collections.abc import Sequence

from hpcio.results.schema import ResultDocument

_PHASES = (("write", "Writes"), ("read", "Reads"))
_LATENCIES = (("mean_s", "Avg."), ("p50_s", "Median"), ("p99_s", "99%"))
_NONE = "-"


def profile_name(doc: ResultDocument) -> str:
    """The profile a document measured, or its pattern for plain runs."""
    return str(doc.run.get("profile") or doc.run["pattern"])


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = (c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True))
        return "| " + " | ".join((first, *rest)) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), rule, *(line(r) for r in rows)])


def bandwidth_table(docs: Sequence[ResultDocument]) -> str:
    """MiB/s (mean over iterations) per phase (rows) and profile (columns)."""
    rows = []
    for phase, label in _PHASES:
        cells = [f"{label}:"]
        for doc in docs:
            summary = doc.summary.get(phase)
            cells.append(_NONE if summary is None else f"{summary.bandwidth_mib_s.mean:.2f}")
        rows.append(cells)
    return _table(["MiB/s", *(profile_name(d) for d in docs)], rows)


def latency_table(docs: Sequence[ResultDocument]) -> str:
    """Per-op latency in ms (average, median, 99th) per phase (rows) and profile (columns)."""
    rows = []
    for phase, label in _PHASES:
        for field, statistic in _LATENCIES:
            cells = [f"{label} {statistic}:"]
            for doc in docs:
                summary = doc.summary.get(phase)
                value = None if summary is None else getattr(summary.latency, field) * 1e3
                cells.append(_NONE if value is None else f"{value:.3f}")
            rows.append(cells)
    return _table(["in ms", *(profile_name(d) for d in docs)], rows)


def profile_tables(docs: Sequence[ResultDocument]) -> str:
    """Both tables with their titles, as `hpcio profile` prints them."""
    lines = [
        "Bandwidth (MiB/s, mean over iterations)",
        bandwidth_table(docs),
        "",
        "Latency per operation (ms)",
        latency_table(docs),
    ]
    lines.extend(f"warning: {profile_name(d)}: {w}" for d in docs for w in d.warnings)
    return "\n".join(lines)
