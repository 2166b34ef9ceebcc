"""The studies' tables from result documents: per pattern, phase and configuration, one row per
size, one Latency/Bandwidth column pair per target. Latency is the mean phase time over
iterations and Bandwidth is File Size / Latency, so every row is consistent (as in
reference/000_*, 001_*); a time-based run's Bandwidth is the bytes it moved / Latency."""

from __future__ import annotations

import base64
import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass

from hpcio.report.grid import Grid
from hpcio.report.points import (
    PointKey,
    describe,
    per_rank_bytes,
    point_key,
    spec_fields,
    target_label,
    varying_fields,
)
from hpcio.report.pooled import is_time_based, mean_bytes_moved, mean_seconds
from hpcio.results.schema import ResultDocument
from hpcio.results.stats import merged_latency_percentiles
from hpcio.units import format_counts
from hpcio.workloads import shown

_MIB = float(1 << 20)
#: Spec fields a table spreads over its rows (sizes, ranks) and columns (targets); every other
#: field that differs between runs gives them tables of their own.
_ROW_AND_COLUMN_FIELDS = ("workload", "target", "ranks", "size_per_rank_bytes", "ranks_per_node")
#: Settings a suite may make per target that a table then says in a note, not its title.
_PER_TARGET_FIELDS = ("transfer_bytes", "fsync", "in_flight")
_PER_TARGET_WHY = {
    "in_flight": " (requests in flight per rank: an object store's default is deeper)",
    "transfer_bytes": " (a transfer is at most the size per rank)",
    "fsync": " (an object store's write is durable at its commit: counted as fsync)",
}
#: Families whose documents have their own tables (report/training.py): a size per rank
#: and a phase time say nothing of a training run.
_OWN_TABLES = ("training",)
#: How each kind of column prints.
_FORMATS = {
    "size": "g",
    "moved": ".1f",
    "latency": ".5f",
    "bandwidth": ".3f",
    "failed": ".1f",
    "runs": "d",
    "count": "d",
}


@dataclass(frozen=True, slots=True)
class Table:
    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[float | None, ...], ...]
    notes: tuple[str, ...] = ()
    #: Each column's kind (a key of _FORMATS): cells print by kind, never by header, which
    #: holds a target URL that may contain any word.
    kinds: tuple[str, ...] = ()


@dataclass(slots=True)
class _Group:
    """The documents of one table: one pattern, phase and configuration."""

    pattern: str
    phase: str
    docs: list[ResultDocument]


def study_tables(docs: Sequence[ResultDocument], across: str = "target") -> list[Table]:
    """One table per pattern, phase and configuration (every spec field that shapes the I/O
    but sizes, ranks and the compared axis `across`), in the order they first appear, titled
    by what differs from the other tables of the pattern and phase; one Latency/Bandwidth
    column pair per value of `across` (a spec field: the target by default, or the API, the
    stripe count, the transfer size...). Documents of the same point (a run repeated) are
    pooled: Latency is the mean over all their iterations, and a Runs column says how many
    there were."""
    fixed = _row_and_column_fields(across)
    # Settings made per target (a suite's [object_store] transfer, a transfer capped at the
    # size per rank, fsync on POSIX beside a store's commit) do not split a study's table when
    # no cell mixes two values: its notes say them per target.
    in_notes = tuple(
        name for name in _PER_TARGET_FIELDS if name != across and _set_per_point(docs, name)
    )
    fixed = (*fixed, *in_notes)
    if across == "workload":
        # Runs of two workloads never share the params only one of them takes.
        every = [set(spec_fields(doc.run)) for doc in docs] or [set()]
        fixed = (*fixed, *sorted(set.union(*every) - every[0].intersection(*every[1:])))
    groups: dict[tuple[str, str, PointKey], _Group] = {}
    for doc in docs:
        if shown.family_of(doc.workload) in _OWN_TABLES or not shown.shows_bandwidth(doc.workload):
            continue
        # The API in the columns: the pattern's tables hold every API's runs.
        pattern = {"api": doc.workload, "workload": ""}.get(
            across, shown.label(doc.workload, doc.settings)
        )
        for phase in doc.summary:
            config = point_key(doc.run, without=fixed)
            groups.setdefault((pattern, phase, config), _Group(pattern, phase, [])).docs.append(doc)
    by_phase: dict[tuple[str, str], list[ResultDocument]] = {}
    for (pattern, phase, _), group in groups.items():
        by_phase.setdefault((pattern, phase), []).extend(group.docs)
    varying = {
        key: [name for name in varying_fields(d.run for d in chosen) if name not in fixed]
        for key, chosen in by_phase.items()
    }
    return [
        _table(group, varying[(group.pattern, group.phase)], across, in_notes)
        for group in groups.values()
    ]


def _set_per_point(docs: Sequence[ResultDocument], name: str) -> bool:
    """Whether spec field `name` differs between the documents, but only from one target or
    size per rank to another within a workload's runs (a checkpoint's saves fsync, its loads
    do not): then no cell of a table mixes two values, and no two runs of one target and
    size were made to compare them."""
    values: dict[tuple[object, ...], set[object]] = {}
    for doc in docs:
        fields = spec_fields(doc.run)
        if name in fields:
            label = shown.label(doc.workload, doc.settings)
            cell = (label, fields["target"], fields.get("size_per_rank_bytes"))
            values.setdefault(cell, set()).add(fields[name])
    differ = len(set().union(*values.values())) > 1 if values else False
    return differ and all(len(found) == 1 for found in values.values())


def _per_target_note(group: _Group, urls: Sequence[str], name: str) -> str | None:
    """The values of field `name` a table's runs had, per target, when not in its title."""
    every = {spec_fields(d.run).get(name) for d in group.docs}
    if len(every) < 2:
        return None  # one value in this table: nothing it would have split
    said = []
    for url in urls:
        mine = [spec_fields(d.run) for d in group.docs if target_label(d.run) == url]
        found = list(dict.fromkeys(fields[name] for fields in mine if name in fields))
        if found:
            words = ", ".join(describe({name: value}, [name]) for value in sorted(found))
            said.append(f"{words} on {url}")
    if not said:
        return None
    return "; ".join(said) + _PER_TARGET_WHY.get(name, "")


def _row_and_column_fields(across: str) -> tuple[str, ...]:
    if across == "target":
        return _ROW_AND_COLUMN_FIELDS
    return (*(f for f in _ROW_AND_COLUMN_FIELDS if f != "target"), across)


def column_value(doc: ResultDocument, across: str) -> str:
    """A document's column in a table compared along `across`: its target URL, or the
    field's value in words ('api hdf5', '4 stripes', 'transfer 1 MiB')."""
    if across == "target":
        return target_label(doc.run)
    return describe(spec_fields(doc.run), [across])


def known_fields(docs: Sequence[ResultDocument]) -> list[str]:
    """The spec fields of `docs`, which `--across` may name."""
    return list(dict.fromkeys(name for doc in docs for name in spec_fields(doc.run)))


def _table(
    group: _Group, varying: Sequence[str], across: str = "target", in_notes: Sequence[str] = ()
) -> Table:
    phase = group.phase
    fields = spec_fields(group.docs[0].run)
    urls = list(dict.fromkeys(target_label(d.run) for d in group.docs))
    name = group.pattern or " vs ".join(
        dict.fromkeys(shown.label(d.workload, d.settings) for d in group.docs)
    )
    title = f"{name} {phase} on {', '.join(urls)}"
    if across != "target":
        title += f", by {across}"
    # The title already names the targets ("on URL"): a target told apart again would repeat it.
    varying = [name for name in varying if name != "target"]
    if varying:
        title += ": " + ", ".join(describe(fields, [name]) for name in varying)
    # A time-based run's phases, and a replay's, move other than File Size: show what moved.
    timed = is_time_based(group.docs[0].run) or not shown.moves_data_set(
        str(group.docs[0].run["workload"])
    )
    # Layouts asked for (a suite's ranks_per_node) are rows, as study 001's Procs/Node x Nodes.
    by_layout = across != "ranks_per_node" and len({_layout(d) for d in group.docs}) > 1
    cells: dict[tuple[int, ...], dict[str, list[ResultDocument]]] = {}
    for doc in group.docs:
        per_proc = per_rank_bytes(doc)
        column = column_value(doc, across)
        row = (*(_layout(doc) if by_layout else ()), per_proc * doc.ranks, per_proc)
        cells.setdefault(row, {}).setdefault(column, []).append(doc)
    repeated = any(len(d) > 1 for by_url in cells.values() for d in by_url.values())
    pushed_back = any(failed_requests(d, phase) for d in group.docs)
    per_target = [
        *(["moved"] if timed else []),
        "latency",
        "bandwidth",
        *(["failed"] if pushed_back else []),
        *(["runs"] if repeated else []),
    ]
    headers = {
        "moved": "Moved Per Iteration (MiB)",
        "latency": "Latency (s)",
        "bandwidth": "Bandwidth (MiB/s)",
        "failed": "Failed Requests Per Iteration",
        "runs": "Runs",
    }
    values = list(dict.fromkeys(column_value(d, across) for d in group.docs))
    labels = [""] if len(values) == 1 and across == "target" else [f"{v} " for v in values]
    columns = [*(["Procs/Node", "Nodes"] if by_layout else []), "File Size (MiB)",
               "File Size Per Proc (MiB)"]  # fmt: skip
    kinds = [*(["count", "count"] if by_layout else []), "size", "size"]
    for label in labels:
        columns += [f"{label}{headers[kind]}" for kind in per_target]
        kinds += per_target
    body = []
    for key, by_url in sorted(cells.items()):
        *layout, file_bytes, per_proc = key
        line: list[float | None] = [*map(float, layout), file_bytes / _MIB, per_proc / _MIB]
        for value in values:
            chosen = by_url.get(value)
            if not chosen:
                line += [None] * len(per_target)
                continue
            latency = mean_seconds(chosen, phase)
            moved = mean_bytes_moved(chosen, phase) if timed else file_bytes
            figures = {
                "moved": moved / _MIB,
                "latency": latency,
                "bandwidth": moved / _MIB / latency if latency else None,
                "failed": sum(failed_requests(d, phase) for d in chosen)
                / sum(d.summary[phase].iterations for d in chosen),
                "runs": float(len(chosen)),
            }
            line += [figures[kind] for kind in per_target]
        body.append(tuple(line))
    notes = _notes(group, urls, timed, repeated)
    said = (_per_target_note(group, urls, name) for name in in_notes)
    notes = (*notes, *(note for note in said if note))
    if by_layout and any(_layout(d)[0] != d.ranks_per_node for d in group.docs):
        notes = (LAYOUT_ASKED, *notes)
    return Table(title, tuple(columns), tuple(body), notes, tuple(kinds))


def _layout(doc: ResultDocument) -> tuple[int, int]:
    """(ranks per node, nodes) as the run asked for them, or as the job had them where the run
    asked for none."""
    per_node = doc.run.get("ranks_per_node") or doc.ranks_per_node
    return per_node, -(-doc.ranks // per_node)


def failed_requests(doc: ResultDocument, phase: str) -> int:
    """Object-store requests of `phase` that failed and were retried (or failed the run), all
    iterations; a document older than the count by cause has the throttled and retried ones."""
    s = doc.summary[phase]
    return sum(s.store_failures.values()) or s.throttled + s.retried


#: Said under a Procs/Node x Nodes table whose jobs did not have the layout their runs asked.
LAYOUT_ASKED = (
    "Procs/Node and Nodes are the layout each run asked for; some jobs ran with another "
    "(on one machine every rank shares one host): each document's ranks_per_node says which"
)
#: What the studies' "Latency" is, said under every table that keeps their header.
LATENCY_NOTE = (
    "Latency is the studies' name for the phase time (barrier to the last rank's close or "
    "commit, mean over iterations), not a per-operation latency (report --format rows gives "
    "those as op_latency_*); Bandwidth is the studies' bytes / mean phase time, the headline "
    "of every output, which differs from the mean of the iterations' bandwidths (IOR's Mean, "
    "shown beside it as 'mean of iterations') when the iterations' times do"
)


def _notes(group: _Group, urls: Sequence[str], timed: bool, repeated: bool) -> tuple[str, ...]:
    notes = []
    if timed and not is_time_based(group.docs[0].run):
        notes.append(
            "Moved Per Iteration is the bytes the phase read or wrote (all ranks, mean over "
            "iterations), File Size what its files hold; Bandwidth is Moved Per Iteration / "
            "Latency"
        )
    elif timed:
        seconds = group.docs[0].settings["duration_s"]
        notes.append(
            f"time-based: each phase repeated its transfers for {seconds:g} s over files of "
            "File Size in all; Moved Per Iteration is the bytes one phase moved (all ranks, "
            "mean over iterations) and Bandwidth is Moved Per Iteration / Latency"
        )
    if repeated:
        notes.append(
            "Runs: documents measuring the same point (a run repeated); Latency is the mean "
            "over all their iterations"
        )
    if group.phase == "read":
        notes.extend(
            f"reads from {url} may have been served from the page cache (no --direct, data set "
            "smaller than RAM): see each document's cache record"
            for url in urls
            if any(
                d.cache.reads_may_hit_page_cache and target_label(d.run) == url for d in group.docs
            )
        )
    for url in urls:
        mine = [d for d in group.docs if target_label(d.run) == url]
        causes: dict[str, int] = {}
        for doc in mine:
            for cause, count in doc.summary[group.phase].store_failures.items():
                causes[cause] = causes.get(cause, 0) + count
        if causes:
            notes.append(
                f"failed requests to {url}, all iterations, by cause: {format_counts(causes)}; "
                "each was retried. Bandwidth that stops growing while they grow is the store's "
                "saturation, not the client's"
            )
        notes.extend(first_byte_note(mine, group.phase, url))
        notes.extend(sides_note(mine, group.phase, url))
        bound = sorted(
            {per_rank_bytes(d) for d in mine if d.summary[group.phase].client_bound_iterations}
        )
        if bound:
            sizes = ", ".join(f"{b / _MIB:g}" for b in bound)
            notes.append(
                f"client-bound on {url} at File Size Per Proc {sizes} MiB: the ranks were on a "
                "core or waiting for one over 90% of the phase, so Bandwidth there measures the "
                "client's CPU, not the storage"
            )
    crowded = {
        (d.ranks_per_node, d.cores_per_node)
        for d in group.docs
        if d.cores_per_node is not None and d.ranks_per_node > d.cores_per_node
    }
    notes.extend(
        f"ranks outnumber cores: {ranks} ranks per node on {cores} cores; ranks shared cores, "
        "which slows what these figures measure"
        for ranks, cores in sorted(crowded)
    )
    return (*notes, LATENCY_NOTE)


def first_byte_note(docs: Sequence[ResultDocument], phase: str, url: str) -> list[str]:
    """Time to first byte of `phase`'s GETs (a read) or PUTs and parts (a write) on `url`, from
    every run's and iteration's histograms merged, and requests per second (mean over runs);
    nothing where no request to a store was timed (POSIX, documents before schema version 3)."""
    name = "get" if phase == "read" else "put"
    parts = [
        base64.b64decode(encoded)
        for d in docs
        for p in d.phases
        if p.phase == phase and (encoded := getattr(p, f"ttfb_{name}_hdr_b64"))
    ]
    if not parts:
        return []
    ttfb = merged_latency_percentiles(parts)
    rates = [s.requests_per_s.mean for d in docs if (s := d.summary[phase]).requests_per_s]
    rate = f"; {sum(rates) / len(rates):.0f} requests/s" if rates else ""
    what = "GETs, until the headers" if name == "get" else "PUTs and parts, until the answer"
    return [
        f"time to first byte on {url} ({what}; every run and iteration): p50 "
        f"{ttfb.p50_s * 1e3:.1f} ms, p99 {ttfb.p99_s * 1e3:.1f} ms{rate}"
    ]


def sides_note(docs: Sequence[ResultDocument], phase: str, url: str) -> list[str]:
    """A mixed phase's reads and writes on `url` apart: each side's bandwidth (its bytes over
    the phase time, mean over runs and iterations), p99 latency from every histogram merged,
    and the share of reads made; nothing in other phases."""
    said = []
    ops = {}
    for name in ("read", "write"):
        sides = [s for d in docs for p in d.phases if p.phase == phase
                 if (s := getattr(p, f"{name}_side")) is not None]  # fmt: skip
        if not sides:
            return []
        ops[name] = sum(s.ops_total for s in sides)
        bandwidth = sum(s.bandwidth_bytes_per_s for s in sides) / len(sides) / _MIB
        hdrs = [base64.b64decode(s.latency_hdr_b64) for s in sides if s.latency_hdr_b64]
        p99 = f" (p99 {merged_latency_percentiles(hdrs).p99_s * 1e3:.3f} ms)" if hdrs else ""
        said.append(f"{name} {bandwidth:.1f} MiB/s{p99}")
    total = ops["read"] + ops["write"]
    share = f", {100 * ops['read'] / total:.0f}% of operations reads" if total else ""
    return [f"mixed on {url}, each side's bytes over the phase time: {', '.join(said)}{share}"]


def format_cell(value: float | None, kind: str) -> str:
    """A cell as its column's kind prints it; N/A where there is no value."""
    if value is None:
        return "N/A"
    return f"{int(value) if kind in ('runs', 'count') else value:{_FORMATS[kind]}}"


def render(tables: Sequence[Table], fmt: str, grids: Sequence[Grid] = ()) -> str:
    """Tables as Markdown ("md"), CSV ("csv", with a pattern/phase column) or JSON ("json");
    CSV and JSON add the family tables `grids` after them (Markdown prints those in each
    study's own layout)."""
    if fmt == "json":
        return (
            json.dumps(
                [
                    *(
                        {
                            "title": t.title,
                            "columns": list(t.columns),
                            "rows": [list(r) for r in t.rows],
                            "notes": list(t.notes),
                        }
                        for t in tables
                    ),
                    *(g.to_json() for g in grids),
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
                [t.title, *(format_cell(v, k) for v, k in zip(r, t.kinds, strict=True))]
                for r in t.rows
            )
        for g in grids:
            writer.writerow(["table", *g.columns])
            writer.writerows([g.title, *r] for r in g.rows)
        return out.getvalue()
    parts = []
    for t in tables:
        parts.append(f"### {t.title}\n")
        parts.append("| " + " | ".join(t.columns) + " |")
        parts.append("|" + "|".join(" ---: " for _ in t.columns) + "|")
        for r in t.rows:
            cells = (format_cell(v, k) for v, k in zip(r, t.kinds, strict=True))
            parts.append("| " + " | ".join(cells) + " |")
        parts.extend(["", *(f"Note: {n}" for n in t.notes)] if t.notes else [])
        parts.append("")
    return "\n".join(parts)
