"""The studies' tables from result documents: per pattern and phase, one row per size, one
Latency/Bandwidth column pair per target. Latency is the mean phase time over iterations and
Bandwidth is File Size / Latency, so every row is consistent (as in reference/000_*, 001_*)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass

from hpcio.results.schema import ResultDocument

_MIB = float(1 << 20)


@dataclass(frozen=True, slots=True)
class Table:
    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[float | None, ...], ...]
    notes: tuple[str, ...] = ()


def study_tables(docs: Sequence[ResultDocument]) -> list[Table]:
    """One table per (pattern, phase), in the order they first appear; later documents for the
    same point replace earlier ones."""
    cells: dict[tuple[str, str], dict[tuple[int, int], dict[str, float]]] = {}
    targets: dict[tuple[str, str], list[str]] = {}
    cached: dict[tuple[str, str], set[str]] = {}
    for doc in docs:
        run = doc.run
        file_bytes = int(run["size_per_rank_bytes"]) * doc.ranks
        for phase, summary in doc.summary.items():
            key = (str(run["pattern"]), phase)
            url = str(run["target"]["url"])  # type: ignore[index]
            targets.setdefault(key, [])
            if url not in targets[key]:
                targets[key].append(url)
            row = cells.setdefault(key, {}).setdefault(
                (file_bytes, int(run["size_per_rank_bytes"])), {}
            )
            row[url] = summary.seconds.mean
            if phase == "read" and doc.cache.reads_may_hit_page_cache:
                cached.setdefault(key, set()).add(url)
    tables = []
    for (pattern, phase), rows in cells.items():
        urls = targets[(pattern, phase)]
        labels = [""] if len(urls) == 1 else [f"{u} " for u in urls]
        columns = ["File Size (MiB)", "File Size Per Proc (MiB)"]
        for label in labels:
            columns += [f"{label}Latency (s)", f"{label}Bandwidth (MiB/s)"]
        body = []
        for (file_bytes, per_proc), by_url in sorted(rows.items()):
            line: list[float | None] = [file_bytes / _MIB, per_proc / _MIB]
            for url in urls:
                latency = by_url.get(url)
                bandwidth = file_bytes / _MIB / latency if latency else None
                line += [latency, bandwidth]
            body.append(tuple(line))
        notes = tuple(
            f"reads from {url} may have been served from the page cache (no --direct, data set "
            "smaller than RAM): see each document's cache record"
            for url in urls
            if url in cached.get((pattern, phase), ())
        )
        tables.append(Table(f"{pattern} {phase}", tuple(columns), tuple(body), notes))
    return tables


def format_cell(value: float | None, column: int) -> str:
    """Columns are two sizes, then (latency, bandwidth) pairs: format by position, never by a
    header, which holds a target URL that may contain any word."""
    if value is None:
        return "N/A"
    if column < 2:
        return f"{value:g}"
    return f"{value:.5f}" if column % 2 == 0 else f"{value:.3f}"


def render(tables: Sequence[Table], fmt: str) -> str:
    """Tables as Markdown ("md"), CSV ("csv", with a pattern/phase column) or JSON ("json")."""
    if fmt == "json":
        return (
            json.dumps(
                [
                    {
                        "title": t.title,
                        "columns": list(t.columns),
                        "rows": [list(r) for r in t.rows],
                        "notes": list(t.notes),
                    }
                    for t in tables
                ],
                indent=2,
            )
            + "\n"
        )
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        for t in tables:
            writer.writerow(["table", *t.columns])
            writer.writerows(
                [t.title, *(format_cell(v, c) for c, v in enumerate(r))] for r in t.rows
            )
        return out.getvalue()
    parts = []
    for t in tables:
        parts.append(f"### {t.title}\n")
        parts.append("| " + " | ".join(t.columns) + " |")
        parts.append("|" + "|".join(" ---: " for _ in t.columns) + "|")
        for r in t.rows:
            parts.append("| " + " | ".join(format_cell(v, c) for c, v in enumerate(r)) + " |")
        parts.extend(["", *(f"Note: {n}" for n in t.notes)] if t.notes else [])
        parts.append("")
    return "\n".join(parts)
