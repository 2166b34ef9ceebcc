"""Result documents as flat rows: one per run and phase (or per run, phase and iteration),
each holding every spec field, the target and every metric, under names that say what they
are. `hpcio report --format rows` writes them as one CSV (elbencho's --csvfile, IOR's CSV
summary), which `pandas.read_csv` reads in one line.

Two bandwidths, each under its own name: IOR's Mean (the mean of every iteration's bytes over
its phase time) and the studies' (bytes per iteration over the mean phase time, the Bandwidth
of the report's tables). They differ whenever the phase times do."""

from __future__ import annotations

import base64
import csv
import io
import statistics
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from hpcio.report.cost import OBJECT_KINDS
from hpcio.report.points import spec_fields
from hpcio.results.schema import PhaseFigures, ResultDocument
from hpcio.results.stats import merged_latency_percentiles

_MIB = float(1 << 20)
#: Requests that each finish one whole object on an object store.
_OBJECT_DONE = ("put", "complete_multipart", "put_block_list")
#: The columns every row starts with, in this order; spec fields and metrics follow.
LEADING = ("run", "phase", "iteration", "workload", "target_kind", "target_url", "ranks")

Row = dict[str, Any]


def redacted_url(url: str) -> str:
    """A target URL with no secret in it: a password in the authority and query values (an
    Azure SAS token) are replaced."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        user, host = netloc.rsplit("@", 1)
        netloc = f"{user.split(':', 1)[0]}:REDACTED@{host}" if ":" in user else netloc
    query = "&".join(
        f"{pair.split('=', 1)[0]}=REDACTED" if "=" in pair else pair
        for pair in parts.query.split("&")
        if pair
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def rows(docs: Sequence[ResultDocument], *, per_iteration: bool = False) -> list[Row]:
    """One row per document (run, numbered from 1 in the order given) and phase; with
    `per_iteration`, one per iteration of each phase instead."""
    found = []
    for number, doc in enumerate(docs, start=1):
        for phase in doc.summary:
            figures = [p for p in doc.phases if p.phase == phase]
            if per_iteration:
                for p in figures:
                    found.append(_row(number, doc, phase, [p], p.iteration))
                    found += _target_rows(found[-1], doc, [p])
            else:
                found.append(_row(number, doc, phase, figures, None))
                found += _target_rows(found[-1], doc, figures)
    return found


def _target_rows(whole: Row, doc: ResultDocument, figures: Sequence[PhaseFigures]) -> list[Row]:
    """With several targets, the whole run's row says `target_part` "all" and names every
    target; a row per target follows, its figures over the ranks that used it."""
    recorded = doc.run.get("targets")
    if not recorded or not figures:
        return []
    whole["target_url"] = "+".join(redacted_url(str(t["url"])) for t in recorded)
    whole["target_part"] = "all"
    found = []
    for index, target in enumerate(recorded):
        mine = [p.targets[index] for p in figures if index < len(p.targets)]
        if not mine:
            continue
        times = [t.phase_time_s for t in mine]
        mean_time = statistics.fmean(times)
        moved = statistics.fmean(t.bytes_total for t in mine)
        ops = statistics.fmean(t.ops_total for t in mine)
        requests = statistics.fmean(sum(t.requests.values()) for t in mine)
        row = {k: v for k, v in whole.items() if k in LEADING or k not in _METRIC_NAMES}
        row.update({
            "target_url": redacted_url(str(target["url"])),
            "target_endpoint": target.get("endpoint"),
            "target_part": f"{index + 1} of {len(recorded)}",
            "ranks": mine[0].ranks,
            "iterations": len(mine),
            "bytes_per_iteration": moved,
            "phase_time_mean_s": mean_time,
            "phase_time_min_s": min(times),
            "phase_time_max_s": max(times),
            "bandwidth_mean_of_iterations_mib_s": statistics.fmean(
                t.bandwidth_bytes_per_s / _MIB for t in mine
            ),
            "bandwidth_bytes_over_mean_time_mib_s": moved / _MIB / mean_time if mean_time else None,
            "ops_per_iteration": ops,
            "ops_per_s": ops / mean_time if mean_time else None,
            "op_latency_p50_s": mine[-1].latency.p50_s,
            "op_latency_p99_s": mine[-1].latency.p99_s,
            "op_latency_max_s": mine[-1].latency.max_s,
            "requests_per_s": requests / mean_time if mean_time else None,
            "failed_requests": sum(sum(t.store_failures.values()) for t in mine),
            "errors": sum(t.errors for t in mine),
        })  # fmt: skip
        found.append(row)
    return found


#: The whole run's figures, which a per-target row does not carry over (it has its own).
_METRIC_NAMES = frozenset({
    "iterations", "bytes_per_iteration", "phase_time_mean_s", "phase_time_min_s",
    "phase_time_max_s", "phase_time_stddev_s", "bandwidth_mean_of_iterations_mib_s",
    "bandwidth_bytes_over_mean_time_mib_s", "ops_per_iteration", "ops_per_s", "objects_per_s",
    "open_time_mean_s", "transfer_time_mean_s", "close_time_mean_s", "op_latency_count",
    "op_latency_mean_s", "op_latency_p50_s", "op_latency_p90_s", "op_latency_p99_s",
    "op_latency_p999_s", "op_latency_max_s", "ttfb_get_p50_s", "ttfb_get_p99_s",
    "ttfb_put_p50_s", "ttfb_put_p99_s", "requests_per_s", "failed_requests", "errors",
    "reads_may_hit_page_cache",
})  # fmt: skip


def _row(
    number: int,
    doc: ResultDocument,
    phase: str,
    figures: Sequence[PhaseFigures],
    iteration: int | None,
) -> Row:
    target = doc.run["target"]
    row: Row = {
        "run": number,
        "phase": phase,
        "iteration": iteration,
        "workload": doc.workload,
        "target_kind": target.get("kind"),
        "target_url": redacted_url(str(target["url"])),
        "ranks": doc.ranks,
        "ranks_per_node": doc.ranks_per_node,
        "nodes": len(doc.hosts) if doc.hosts else None,
    }
    row.update(
        (name, _cell(value))
        for name, value in spec_fields(doc.run).items()
        if name not in row and name != "target"
    )
    row.update(_metrics(doc, phase, figures))
    return row


def _metrics(doc: ResultDocument, phase: str, figures: Sequence[PhaseFigures]) -> Row:
    if not figures:
        return {"iterations": 0}
    times = [p.phase_time_s for p in figures]
    mean_time = statistics.fmean(times)
    moved = statistics.fmean(p.bytes_total for p in figures)
    ops = statistics.fmean(p.ops_total for p in figures)
    done = statistics.fmean(sum(p.requests.get(k, 0) for k in _OBJECT_DONE) for p in figures)
    on_objects = doc.run["target"].get("kind") in OBJECT_KINDS
    latency = doc.summary[phase].latency if len(figures) > 1 else figures[0].latency
    row: Row = {
        "iterations": len(figures),
        "bytes_per_iteration": moved,
        "phase_time_mean_s": mean_time,
        "phase_time_min_s": min(times),
        "phase_time_max_s": max(times),
        "phase_time_stddev_s": statistics.pstdev(times) if len(times) > 1 else 0.0,
        "bandwidth_mean_of_iterations_mib_s": statistics.fmean(
            p.bandwidth_bytes_per_s / _MIB for p in figures
        ),
        "bandwidth_bytes_over_mean_time_mib_s": moved / _MIB / mean_time if mean_time else None,
        "ops_per_iteration": ops,
        "ops_per_s": ops / mean_time if mean_time else None,
        "objects_per_s": done / mean_time
        if on_objects and done and mean_time
        else _objects_opened_per_s(figures)
        if on_objects
        else None,
        "open_time_mean_s": statistics.fmean(p.open_time_s for p in figures),
        "transfer_time_mean_s": statistics.fmean(p.transfer_time_s for p in figures),
        "close_time_mean_s": statistics.fmean(p.close_time_s for p in figures),
        "op_latency_count": latency.count,
        "op_latency_mean_s": latency.mean_s,
        "op_latency_p50_s": latency.p50_s,
        "op_latency_p90_s": latency.p90_s,
        "op_latency_p99_s": latency.p99_s,
        "op_latency_p999_s": latency.p999_s,
        "op_latency_max_s": latency.max_s,
        **_first_byte(doc, phase, figures, mean_time),
        **_sides(figures),
        "failed_requests": sum(_failed(p) for p in figures),
        "errors": sum(p.errors for p in figures),
        # A mixed phase's reads count as reads, as the run's page-cache record counts them.
        "reads_may_hit_page_cache": doc.cache.reads_may_hit_page_cache
        if phase in _READING_PHASES
        else None,
    }
    row.update(_family_figures(figures))
    return row


#: Phases with reads in them: a mixed phase (--rwmix-read) reads too.
_READING_PHASES = frozenset({"read", "mixed"})


def _first_byte(
    doc: ResultDocument, phase: str, figures: Sequence[PhaseFigures], mean_time: float
) -> Row:
    """Time to first byte of GETs and of PUTs/parts, p50 and p99 over every iteration's
    requests, and storage requests per second (all kinds, over the mean phase time); absent
    where no request went to a store (and in documents older than schema version 3)."""
    summary = doc.summary[phase]
    found: Row = {}
    for name in ("get", "put"):
        ttfb = (
            getattr(summary, f"ttfb_{name}")
            if len(figures) > 1
            else getattr(figures[0], f"ttfb_{name}")
        )
        if ttfb is not None:
            found[f"ttfb_{name}_p50_s"] = ttfb.p50_s
            found[f"ttfb_{name}_p99_s"] = ttfb.p99_s
    if found or any(p.requests_per_s is not None for p in figures):
        requests = statistics.fmean(sum(p.requests.values()) for p in figures)
        found["requests_per_s"] = requests / mean_time if mean_time else None
    return found


def _sides(figures: Sequence[PhaseFigures]) -> Row:
    """A mixed phase's reads and writes apart (`read_`/`write_` bandwidth as the phase's
    bytes over its time, operations, latency p50 and p99 over every iteration's) and the share
    of reads the draw made; absent in other phases."""
    found: Row = {}
    for name in ("read", "write"):
        sides = [s for p in figures if (s := getattr(p, f"{name}_side")) is not None]
        if not sides:
            continue
        found[f"{name}_bandwidth_mib_s"] = statistics.fmean(
            s.bandwidth_bytes_per_s / _MIB for s in sides
        )
        found[f"{name}_ops_per_iteration"] = statistics.fmean(s.ops_total for s in sides)
        hdrs = [base64.b64decode(s.latency_hdr_b64) for s in sides if s.latency_hdr_b64]
        if hdrs:
            latency = merged_latency_percentiles(hdrs)
            found[f"{name}_op_latency_p50_s"] = latency.p50_s
            found[f"{name}_op_latency_p99_s"] = latency.p99_s
    reads, writes = found.get("read_ops_per_iteration"), found.get("write_ops_per_iteration")
    if reads is not None and writes is not None and reads + writes:
        found["read_share_percent"] = 100 * reads / (reads + writes)
    return found


def _objects_opened_per_s(figures: Sequence[PhaseFigures]) -> float | None:
    """Where no object was completed (a read phase): objects opened per second, each rank's
    open of a shared one counted (schema version 3 on); None before."""
    rates = [p.objects_per_s for p in figures if p.objects_per_s is not None]
    return statistics.fmean(rates) if rates else None


def _failed(figures: PhaseFigures) -> int:
    """Object-store requests that failed and were retried; in a document older than the
    count by cause, those throttled and retried."""
    return sum(figures.store_failures.values()) or figures.throttled + figures.retried


def _family_figures(figures: Sequence[PhaseFigures]) -> Row:
    """The workload's own figures (AU, samples/s, read amplification, ...): each number's
    mean over the iterations that have it, as `metric_<name>`."""
    names = dict.fromkeys(name for p in figures for name in (p.metrics or {}))
    found: Row = {}
    for name in names:
        values = [(p.metrics or {}).get(name) for p in figures]
        numbers = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
        if numbers:
            found[f"metric_{name}"] = statistics.fmean(numbers)
    return found


def _cell(value: Any) -> Any:
    """A spec value as one CSV cell: lists joined with '+' (a comma would be a column)."""
    if isinstance(value, tuple | list):
        return "+".join(str(v) for v in value)
    return value


def columns(found: Iterable[Row]) -> list[str]:
    """Every column of the rows, the leading ones first, the rest in order of appearance."""
    names = dict.fromkeys(LEADING)
    for row in found:
        names.update(dict.fromkeys(row))
    return list(names)


def render_rows(found: Sequence[Row]) -> str:
    """The rows as one CSV with one header line; an absent figure is an empty cell."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns(found), lineterminator="\n", restval="")
    writer.writeheader()
    for row in found:
        writer.writerow({k: "" if v is None else v for k, v in row.items()})
    return out.getvalue()
