"""The fio study's two tables (reference 003) from the documents of `hpcio profile` runs."""

from __future__ import annotations

import base64
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from hpcio.report.grid import Grid, grid
from hpcio.report.points import describe, point_key, spec_fields, varying_fields
from hpcio.report.pooled import headline_bandwidth_mib_s, pooled_latency
from hpcio.results.schema import LatencyPercentiles, ResultDocument, SideFigures
from hpcio.results.stats import merged_latency_percentiles
from hpcio.workloads import shown

_PHASES = (("write", "Writes"), ("read", "Reads"))
#: A mixed phase's sides (--rwmix-read): rows only where some run had one.
_SIDES = (("read", "Mixed reads"), ("write", "Mixed writes"))
_MIB = float(1 << 20)
_LATENCIES = (("mean_s", "Avg."), ("p50_s", "Median"), ("p99_s", "99%"))
_NONE = "-"
_BANDWIDTH_TITLE = "Bandwidth (MiB/s, bytes over mean phase time)"
_LATENCY_TITLE = "Latency per operation (ms)"


def is_profile(doc: ResultDocument) -> bool:
    """A document of one of the fio study's storage profiles."""
    return shown.family_of(doc.workload) == "profile"


def profile_name(doc: ResultDocument) -> str:
    """The profile (or other workload) a document measured."""
    return shown.label(doc.workload, doc.settings)


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = (c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True))
        return "| " + " | ".join((first, *rest)) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), rule, *(line(r) for r in rows)])


def profile_columns(docs: Sequence[ResultDocument]) -> list[tuple[str, list[ResultDocument]]]:
    """One column per measured configuration, a profile's together, in order of appearance:
    its profile's name, and where one profile ran in several configurations what differs
    between them; documents of the same configuration (a run repeated) share a column that
    says how many they were."""
    groups: dict[object, list[ResultDocument]] = {}
    for doc in docs:
        groups.setdefault(point_key(doc.run), []).append(doc)
    columns = []
    for group in groups.values():
        name = profile_name(group[0])
        same_name = [d.run for g in groups.values() if profile_name(g[0]) == name for d in g]
        # A setting the profile takes per target (no page cache to bypass on a store, a store
        # counted as fsync'd, an object per transfer) is the target's: its URL says it.
        varying = [f for f in varying_fields(same_name)
                   if f != "workload" and not _set_per_target(same_name, f)]  # fmt: skip
        label = name
        if varying:
            label += f" ({describe(spec_fields(group[0].run), varying)})"
        if len(group) > 1:
            label += f" [{len(group)} runs]"
        columns.append((label, group))
    # One profile's targets side by side, as the study sets its storages side by side.
    order = list(dict.fromkeys(profile_name(group[0]) for group in groups.values()))
    return sorted(columns, key=lambda column: order.index(profile_name(column[1][0])))


def _set_per_target(runs: Sequence[Mapping[str, Any]], name: str) -> bool:
    """Whether field `name` differs between `runs` only from one target to another."""
    values: dict[object, set[object]] = {}
    for run in runs:
        fields = spec_fields(run)
        if name != "target" and name in fields:
            values.setdefault(fields["target"], set()).add(fields[name])
    return len(values) > 1 and all(len(found) == 1 for found in values.values())


def _with_phase(group: Sequence[ResultDocument], phase: str) -> list[ResultDocument]:
    return [doc for doc in group if phase in doc.summary]


def bandwidth_table(docs: Sequence[ResultDocument]) -> str:
    """MiB/s (the headline: bytes over mean phase time) per phase (rows) and profile
    (columns)."""
    found = bandwidth_grid(docs)
    return _table(found.columns, found.rows)


def bandwidth_grid(docs: Sequence[ResultDocument]) -> Grid:
    columns = profile_columns(docs)
    rows = []
    for phase, label in _PHASES:
        cells = [f"{label}:"]
        for _, group in columns:
            chosen = _with_phase(group, phase)
            mean = headline_bandwidth_mib_s(chosen, phase) if chosen else None
            cells.append(_NONE if mean is None else f"{mean:.2f}")
        rows.append(cells)
    for side, label in _sides_shown(docs):
        cells = [f"{label}:"]
        for _, group in columns:
            sides = _sides(group, side)
            mean = statistics.fmean(s.bandwidth_bytes_per_s for s in sides) if sides else None
            cells.append(_NONE if mean is None else f"{mean / _MIB:.2f}")
        rows.append(cells)
    return grid(
        _on_targets(_BANDWIDTH_TITLE, docs), ("MiB/s", *(name for name, _ in columns)), rows
    )


def latency_table(docs: Sequence[ResultDocument]) -> str:
    """Per-op latency in ms (average, median, 99th) per phase (rows) and profile (columns)."""
    found = latency_grid(docs)
    return _table(found.columns, found.rows)


def latency_grid(docs: Sequence[ResultDocument]) -> Grid:
    columns = profile_columns(docs)
    rows = []
    for phase, label in _PHASES:
        latencies = [
            pooled_latency(chosen, phase) if (chosen := _with_phase(group, phase)) else None
            for _, group in columns
        ]
        rows.extend(_latency_rows(label, latencies))
    for side, label in _sides_shown(docs):
        merged = []
        for _, group in columns:
            hdrs = [base64.b64decode(s.latency_hdr_b64) for s in _sides(group, side)
                    if s.latency_hdr_b64]  # fmt: skip
            merged.append(merged_latency_percentiles(hdrs) if hdrs else None)
        rows.extend(_latency_rows(label, merged))
    return grid(_on_targets(_LATENCY_TITLE, docs), ("in ms", *(name for name, _ in columns)), rows)


def _latency_rows(label: str, latencies: Sequence[LatencyPercentiles | None]) -> list[list[str]]:
    """A row per statistic (mean, p50, ...) of `label`, a cell in ms per column."""
    rows = []
    for field, statistic in _LATENCIES:
        cells = [f"{label} {statistic}:"]
        for latency in latencies:
            value = None if latency is None else getattr(latency, field) * 1e3
            cells.append(_NONE if value is None else f"{value:.3f}")
        rows.append(cells)
    return rows


def _sides(group: Sequence[ResultDocument], side: str) -> list[SideFigures]:
    """Every iteration's `side` of a mixed phase in `group`."""
    return [s for d in group for p in d.phases if (s := getattr(p, f"{side}_side")) is not None]


def _sides_shown(docs: Sequence[ResultDocument]) -> tuple[tuple[str, str], ...]:
    return _SIDES if _sides(docs, "read") else ()


def _on_targets(title: str, docs: Sequence[ResultDocument]) -> str:
    urls = dict.fromkeys(str(doc.run["target"]["url"]) for doc in docs)
    return f"{title} on {', '.join(urls)}" if urls else title


def profile_grids(docs: Sequence[ResultDocument]) -> list[Grid]:
    """The fio study's two tables of the profile runs among `docs` (none without them)."""
    profiled = [doc for doc in docs if is_profile(doc)]
    return [bandwidth_grid(profiled), latency_grid(profiled)] if profiled else []


def profile_tables(docs: Sequence[ResultDocument]) -> str:
    """Both tables with their titles, as `hpcio profile` prints them."""
    lines = [
        _on_targets(_BANDWIDTH_TITLE, docs),
        bandwidth_table(docs),
        "",
        _on_targets(_LATENCY_TITLE, docs),
        latency_table(docs),
    ]
    warned = dict.fromkeys(f"warning: {profile_name(d)}: {w}" for d in docs for w in d.warnings)
    lines.extend(warned)
    return "\n".join(lines)
