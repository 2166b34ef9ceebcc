"""One self-contained HTML page per report or comparison: tables, plots inline, environment,
every run's spec, and warnings. It opens with no network: styles are inline, plots are data:
URIs, and a Content-Security-Policy forbids the page any other source."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape

from hpcio.report.compare import Comparison, cells, columns, summary_lines, tables
from hpcio.report.families import family_grids
from hpcio.report.grid import Grid
from hpcio.report.plots import Plot, PlotSet, render
from hpcio.report.points import describe, per_rank_bytes, spec_fields, target_label
from hpcio.report.tables import Table, format_cell, study_tables
from hpcio.results.schema import PAGE_CACHE_WARNING, PhaseSummary, ResultDocument
from hpcio.results.stats import headline_bandwidth_mib_s
from hpcio.units import format_bytes, format_counts
from hpcio.workloads import shown

#: Browsers refuse anything but inline styles and data: images, so nothing is fetched even if
#: a value in a document looked like a URL.
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222;
       padding: 0 1em; }
h1 { margin-bottom: 0.2em; }
h2 { border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin-top: 2em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; }
th { background: #f2f2f2; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.beyond td { background: #fff3cd; }
figure { margin: 0 0 1em; min-width: 0; }
figure img { max-width: 100%; border: 1px solid #eee; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(560px, 100%), 1fr));
        gap: 1em; align-items: start; }
.scroll { overflow-x: auto; max-width: 100%; }
td { overflow-wrap: anywhere; }
td:first-child, th:first-child { white-space: nowrap; }
details > .scroll { margin-left: 1em; }
figcaption { font-size: 0.9em; color: #555; }
.warnings li { margin: 0.3em 0; }
.note { color: #555; font-size: 0.9em; }
pre { background: #f7f7f7; padding: 0.6em; overflow-x: auto; font-size: 0.85em; }
nav a { margin-right: 1em; display: inline-block; }
@media (max-width: 600px) {
  body { margin: 1em auto; padding: 0 0.5em; }
  table { font-size: 0.8em; }
  td { overflow-wrap: normal; }
  /* A plot shrunk to a phone's width has 6 px text: keep it legible and let it scroll. */
  figure { overflow-x: auto; }
  figure img { max-width: none; width: 560px; }
}
"""

_NUMBER = re.compile(r"^(-?[0-9.]+|N/A)$")
#: A printed number, as the family grids write them: digits with thousands commas, a decimal
#: point, a sign, a unit-less percent.
_FIGURE = re.compile(r"[-+]?[0-9][0-9,]*(\.[0-9]+)?%?")
#: A cell: its text, or (text, the number it shows) so the page keeps full precision.
Cell = str | tuple[str, float | None]


def report_page(
    docs: Sequence[ResultDocument],
    plots: PlotSet,
    sources: Sequence[str],
    across: str = "target",
) -> str:
    """The page of `hpcio report --html`: the studies' tables (their columns along `across`),
    every plot, warnings, the environment and every run with its spec."""
    intro = (
        f"{len(docs)} run(s) from {', '.join(sources)}; measured "
        f"{min(d.started_at_utc for d in docs)} to {max(d.finished_at_utc for d in docs)} (UTC)."
    )
    tables = _study_tables(study_tables(docs, across)) + _grids(family_grids(docs))
    sections = [
        ("summary", "Summary", _summary(docs)),
        ("warnings", "Warnings", _warnings(docs)),
        ("environment", "Environment", _environment(docs)),
        ("tables", "Tables", tables),
        ("plots", "Plots", _plots(plots)),
        ("runs", "Runs", _runs(docs)),
    ]
    return _page("hpcio report", intro, sections)


def _grids(grids: Sequence[Grid]) -> str:
    """The family tables, each under its title with its notes."""
    parts = []
    for g in grids:
        parts.append(f"<h3>{escape(g.title)}</h3>")
        parts.append(_table(g.columns, g.rows, table_id=f"family-{_slug(g.title)}"))
        parts.extend(f'<p class="note">Note: {escape(n)}</p>' for n in g.notes)
    return "\n" + "\n".join(parts) if parts else ""


def comparison_page(
    comparison: Comparison,
    plots: PlotSet,
    a_docs: Sequence[ResultDocument],
    b_docs: Sequence[ResultDocument],
) -> str:
    """The page of `hpcio compare --html`: the comparison tables and plots, then each file's
    warnings, environment and runs."""
    intro = "<br>".join(escape(line) for line in summary_lines(comparison))
    sections = [
        ("comparison", "Comparison", _comparison_tables(comparison)),
        ("plots", "Plots", _plots(plots)),
    ]
    for side, docs in (("a", a_docs), ("b", b_docs)):
        name = escape(comparison.a_name if side == "a" else comparison.b_name)
        anchor = f"{side}-"
        body = (
            f"<h3>Warnings</h3>{_warnings(docs)}"
            f"<h3>Environment</h3>{_environment(docs, anchor=anchor)}"
            f"<h3>Runs</h3>{_runs(docs, anchor=anchor)}"
        )
        sections.append((f"file-{side}", f"{side.upper()}: {name}", body))
    return _page("hpcio compare", intro, sections, intro_is_html=True)


def _page(
    title: str,
    intro: str,
    sections: Sequence[tuple[str, str, str]],
    *,
    intro_is_html: bool = False,
) -> str:
    nav = " ".join(f'<a href="#{anchor}">{heading}</a>' for anchor, heading, _ in sections)
    body = "\n".join(
        f'<section id="{anchor}"><h2>{heading}</h2>\n{content}</section>'
        for anchor, heading, content in sections
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        f"<title>{escape(title)}</title>\n<style>{_STYLE}</style></head>\n<body>\n"
        f"<h1>{escape(title)}</h1>\n"
        f"<p>{intro if intro_is_html else escape(intro)}</p>\n<nav>{nav}</nav>\n{body}\n"
        "</body></html>\n"
    )


def _table(
    headers: Sequence[str],
    rows: Iterable[Sequence[Cell]],
    *,
    table_id: str | None = None,
    row_classes: Sequence[str] = (),
) -> str:
    attributes = f' id="{escape(table_id)}"' if table_id else ""
    lines = [f"<table{attributes}><thead><tr>"]
    lines.extend(f"<th>{escape(h)}</th>" for h in headers)
    lines.append("</tr></thead><tbody>")
    for index, row in enumerate(rows):
        css = row_classes[index] if index < len(row_classes) else ""
        lines.append(f'<tr class="{css}">' if css else "<tr>")
        for cell in row:
            if isinstance(cell, tuple):
                text, value = cell
                data = "" if value is None else f' data-value="{value!r}"'
                lines.append(f'<td class="num"{data}>{escape(text)}</td>')
            elif _FIGURE.fullmatch(cell):
                # A family grid's printed figure ("1,126,961", "0.002"): never broken mid-number.
                lines.append(f'<td class="num">{escape(cell)}</td>')
            else:
                lines.append(f"<td>{escape(cell)}</td>")
        lines.append("</tr>")
    lines.append("</tbody></table>")
    # A wide table scrolls inside its own box on a narrow screen, not the whole page.
    return '<div class="scroll">' + "".join(lines) + "</div>"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _study_tables(tables_: Sequence[Table]) -> str:
    parts = []
    for t in tables_:
        rows = [
            [(format_cell(v, k), v) for v, k in zip(row, t.kinds, strict=True)] for row in t.rows
        ]
        parts.append(f"<h3>{escape(t.title)}</h3>")
        parts.append(_table(t.columns, rows, table_id=f"table-{_slug(t.title)}"))
        parts.extend(f'<p class="note">Note: {escape(n)}</p>' for n in t.notes)
    parts.append(
        '<p class="note">Latency is the mean phase time over iterations; Bandwidth is File '
        "Size / Latency, or for time-based runs the bytes moved per iteration / Latency.</p>"
    )
    return "\n".join(parts)


def _plots(plots: PlotSet) -> str:
    figures = "".join(_figure(plot) for plot in plots.plots)
    notes = "".join(f'<p class="note">{escape(reason)}</p>' for reason in plots.skipped)
    return f'<div class="grid">{figures}</div>{notes}'


def _figure(plot: Plot) -> str:
    return (
        f'<figure><img id="plot-{escape(plot.name)}" alt="{escape(plot.title)}" '
        f'src="{_data_uri(plot)}"><figcaption>{escape(plot.title)}</figcaption></figure>'
    )


def _summary(docs: Sequence[ResultDocument]) -> str:
    """The answer first: a headline chart per phase, then its best and worst runs."""
    from hpcio.report import summary

    charts, tables_ = [], []
    # mdtest's rates are in its family table: it has no bandwidth to rank.
    ranked = [d for d in docs if shown.shows_bandwidth(d.workload)]
    for phase in summary.phases(ranked):
        charts.append(_figure(summary.headline(ranked, phase)))
        best, worst = summary.extremes(ranked, phase)
        rows: list[list[Cell]] = [
            [which, str(r.number), r.label, r.target, (str(r.ranks), r.ranks),
             _size(r.per_rank_bytes), (f"{r.bandwidth_mib_s:.1f}", r.bandwidth_mib_s)]
            for which, chosen in (("best", best), ("worst", worst)) for r in chosen
        ]  # fmt: skip
        headers = ["", "Run", "Workload", "Target", "Ranks", "Size per rank",
                   f"{phase} MiB/s"]  # fmt: skip
        tables_.append(f"<div><h3>{escape(phase)}: best and worst runs</h3>"
                       f"{_table(headers, rows, table_id=f'extremes-{phase}')}</div>")  # fmt: skip
    count = len(caveats(docs))
    said = (
        f'<p class="note">{count} warning(s) below: read them before the figures.</p>'
        if count
        else ""
    )
    return (
        f'<div class="grid">{"".join(charts)}</div><div class="grid">{"".join(tables_)}</div>{said}'
    )


def _data_uri(plot: Plot) -> str:
    # An SVG in an <img> is its own document: the ids matplotlib gives its clip paths and
    # markers cannot collide with another plot's, as they would inlined as <svg> elements.
    return "data:image/svg+xml;base64," + base64.b64encode(render(plot, "svg")).decode("ascii")


def _run_title(doc: ResultDocument) -> str:
    fields = spec_fields(doc.run)
    return describe(fields, ["workload", "target", "size_per_rank_bytes", "ranks"])


@dataclass(frozen=True, slots=True)
class Caveat:
    """One warning on the page, with the per-run lines behind it."""

    text: str
    details: tuple[str, ...] = ()


def caveats(docs: Sequence[ResultDocument]) -> list[Caveat]:
    """Every cause for doubt in the documents: reads that may have come from the page cache
    (with each run's cache notes), more ranks on a node than cores, interrupted runs, failed
    operations, throttled or retried requests, an engine built without optimisation. Runs are
    numbered from 1 in the order of the files."""
    titled = [(n, _run_title(d), d) for n, d in enumerate(docs, start=1)]
    found = []
    cached = [(n, title, d) for n, title, d in titled if d.cache.reads_may_hit_page_cache]
    if cached:
        found.append(
            Caveat(
                f"{_runs_label([n for n, _, _ in cached])}: reads may have been served from the "
                "page cache; their read figures may measure memory, not storage",
                tuple(f"run {n} ({title}): " + "; ".join(d.cache.notes) for n, title, d in cached),
            )
        )
    each: dict[str, list[tuple[int, str]]] = {}  # a warning -> the runs it is about

    def about(n: int, title: str, text: str) -> None:
        each.setdefault(text, []).append((n, title))

    for n, title, doc in titled:
        for warning in doc.warnings:
            if warning.startswith(PAGE_CACHE_WARNING):
                continue  # gathered above, over all runs
            about(n, title, warning)
        if doc.cores_per_node is not None and doc.ranks_per_node > doc.cores_per_node:
            about(n, title, f"ranks outnumber cores: {doc.ranks_per_node} ranks per node on "
                  f"{doc.cores_per_node} cores; ranks shared cores, which slows what its "
                  "figures measure")  # fmt: skip
        if doc.status != "complete":
            about(n, title, f"{doc.status}: its figures hold only the iterations that finished")
        for name, summary in doc.summary.items():
            if summary.throttled or summary.retried:
                causes = summary.store_failures
                by_cause = f" (by cause: {format_counts(causes)})" if causes else ""
                about(n, title, f"{name}: the store throttled {summary.throttled} response(s); "
                      f"{summary.retried} request(s) were retried{by_cause}")  # fmt: skip
        for phase in doc.phases:
            if phase.errors:
                first = "; ".join(phase.first_errors)
                about(n, title, f"{phase.phase} iteration {phase.iteration + 1}: {phase.errors} "
                      "failed operation(s)" + (f": {first}" if first else ""))  # fmt: skip
    # The same words about several runs are one warning with their range, not one per run.
    for text, runs in each.items():
        if len(runs) == 1:
            ((n, title),) = runs
            found.append(Caveat(f"run {n} ({title}): {text}"))
        else:
            found.append(Caveat(
                f"{_runs_label([n for n, _ in runs])}: {text}",
                tuple(f"run {n}: {title}" for n, title in runs),
            ))  # fmt: skip
    debug = [n for n, _, d in titled if d.engine.get("debug_build")]
    if debug:
        found.append(
            Caveat(
                f"{_runs_label(debug)}: the engine was built without optimisation; their "
                "figures are meaningless (build with ./scripts/setup)"
            )
        )
    return found


def _runs_label(numbers: Sequence[int]) -> str:
    return ("run " if len(numbers) == 1 else "runs ") + _spans(numbers)


def _warnings(docs: Sequence[ResultDocument]) -> str:
    found = caveats(docs)
    if not found:
        return '<p class="note">None.</p>'
    items = []
    for caveat in found:
        details = ""
        if caveat.details:
            details = (
                "<details><summary>each run</summary><ul>"
                + "".join(f"<li>{escape(line)}</li>" for line in caveat.details)
                + "</ul></details>"
            )
        items.append(f"<li>{escape(caveat.text)}{details}</li>")
    return '<ul class="warnings">' + "".join(items) + "</ul>"


def _environment(docs: Sequence[ResultDocument], *, anchor: str = "") -> str:
    """One row per distinct job shape and build: hosts, ranks, nodes, ranks per node."""
    groups: dict[tuple[str, int, int, int, str, str], list[int]] = {}
    for number, doc in enumerate(docs, start=1):
        build = "debug" if doc.engine.get("debug_build") else "release"
        shape = (", ".join(doc.hosts), doc.ranks, doc.nodes, doc.ranks_per_node)
        groups.setdefault((*shape, doc.hpcio_version, build), []).append(number)
    rows: list[list[Cell]] = []
    for (hosts, ranks, nodes, per_node, version, build), numbers in groups.items():
        chosen = [docs[n - 1] for n in numbers]
        rows.append(
            [
                _spans(numbers),
                hosts,
                (str(ranks), ranks),
                (str(nodes), nodes),
                (str(per_node), per_node),
                version,
                build,
                min(d.started_at_utc for d in chosen),
                max(d.finished_at_utc for d in chosen),
            ]
        )
    headers = [
        "Runs",
        "Hosts",
        "Ranks",
        "Nodes",
        "Ranks per node",
        "hpcio",
        "Engine",
        "First start (UTC)",
        "Last end (UTC)",
    ]
    return _table(headers, rows, table_id=f"{anchor}environment")


def _spans(numbers: Sequence[int]) -> str:
    """[1, 2, 3, 5] -> '1-3, 5'."""
    spans: list[list[int]] = []
    for n in numbers:
        if spans and spans[-1][1] == n - 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)


def _runs(docs: Sequence[ResultDocument], *, anchor: str = "") -> str:
    """Every run's figures per phase (the spread and per-op latencies folded beneath), then its
    full spec as it is in the document."""
    headers = ["Run", "Workload", "Target", "Ranks", "Size per rank", "Transfer",
               "Iterations", "Phase", "Bandwidth (MiB/s)", "Time mean (s)"]  # fmt: skip
    detail_headers = ["Run", "Phase", "Bandwidth mean of iterations (MiB/s)", "stddev", "min",
                      "max", "p50 op (ms)", "p99 op (ms)", "TTFB p50 (ms)", "TTFB p99 (ms)",
                      "req/s"]  # fmt: skip
    rows: list[list[Cell]] = []
    details: list[list[Cell]] = []
    for number, doc in enumerate(docs, start=1):
        run, settings = doc.run, doc.settings
        bandwidths = shown.shows_bandwidth(doc.workload)
        for phase, s in doc.summary.items():
            bw = s.bandwidth_mib_s
            headline = headline_bandwidth_mib_s(doc, phase)
            # A workload of rates (mdtest) moves no bytes the engine counts: no bandwidth.
            spread: list[Cell] = [
                (f"{bw.mean:.3f}", bw.mean), (f"{bw.stddev:.3f}", bw.stddev),
                (f"{bw.min:.3f}", bw.min), (f"{bw.max:.3f}", bw.max),
            ] if bandwidths else ["-"] * 4  # fmt: skip
            rows.append([
                str(number), shown.label(doc.workload, settings), target_label(run),
                (str(doc.ranks), doc.ranks), _size(per_rank_bytes(doc)),
                _size(settings.get("transfer_bytes")), (str(s.iterations), s.iterations), phase,
                (f"{headline:.3f}", headline) if bandwidths else "-",
                (f"{s.seconds.mean:.5f}", s.seconds.mean),
            ])  # fmt: skip
            latency: list[Cell] = [
                (f"{s.latency.p50_s * 1e3:.3f}", s.latency.p50_s * 1e3),
                (f"{s.latency.p99_s * 1e3:.3f}", s.latency.p99_s * 1e3),
            ] if bandwidths else ["-"] * 2  # fmt: skip
            details.append([
                str(number), phase, *spread, *latency,
                *_first_byte(phase, s),
            ])  # fmt: skip
            for name, side in (("reads", s.read_side), ("writes", s.write_side)):
                if side is None:
                    continue
                # A mixed phase's side: its bytes over the phase time, its operations' latency.
                sbw, label = side.bandwidth_mib_s, f"{phase}: {name}"
                rows.append([
                    str(number), shown.label(doc.workload, settings),
                    str(run["target"]["url"]), (str(doc.ranks), doc.ranks),
                    _size(per_rank_bytes(doc)), _size(settings.get("transfer_bytes")),
                    (str(s.iterations), s.iterations), label, (f"{sbw.mean:.3f}", sbw.mean),
                    (f"{s.seconds.mean:.5f}", s.seconds.mean),
                ])  # fmt: skip
                side_latency = side.latency
                details.append([
                    str(number), label, (f"{sbw.mean:.3f}", sbw.mean),
                    (f"{sbw.stddev:.3f}", sbw.stddev), (f"{sbw.min:.3f}", sbw.min),
                    (f"{sbw.max:.3f}", sbw.max),
                    *(((f"{q * 1e3:.3f}", q * 1e3)
                       for q in (side_latency.p50_s, side_latency.p99_s))
                      if side_latency else (("-", None), ("-", None))),
                    ("-", None), ("-", None), ("-", None),
                ])  # fmt: skip
    specs = "\n".join(
        f'<details id="{anchor}spec-{number}"><summary>run {number}: '
        f"{escape(_run_title(doc))}</summary><pre>{escape(json.dumps(doc.run, indent=2))}"
        "</pre></details>"
        for number, doc in enumerate(docs, start=1)
    )
    folded = (
        "<details><summary>spread over iterations and per-op latency, per run and phase"
        f"</summary>{_table(detail_headers, details, table_id=f'{anchor}runs-detail')}</details>"
    )
    return _table(headers, rows, table_id=f"{anchor}runs") + folded + "\n<h3>Specs</h3>\n" + specs


def _first_byte(phase: str, s: PhaseSummary) -> list[Cell]:
    """An object-store phase's time to first byte (GETs for a read, PUTs and parts for a
    write) at p50 and p99, and its requests per second; "-" where not recorded."""
    ttfb = (s.ttfb_get or s.ttfb_put) if phase == "read" else (s.ttfb_put or s.ttfb_get)
    rate = s.requests_per_s.mean if s.requests_per_s else None
    cells: list[Cell] = [
        (f"{q * 1e3:.3f}", q * 1e3) if q is not None else ("-", None)
        for q in ((ttfb.p50_s, ttfb.p99_s) if ttfb else (None, None))
    ]
    return [*cells, (f"{rate:.0f}", rate) if rate is not None else ("-", None)]


def _size(n_bytes: int | None) -> Cell:
    """A size as the size formatter prints it, its bytes as the cell's value."""
    if n_bytes is None:
        return ("-", None)
    return (format_bytes(n_bytes), float(n_bytes))


def _comparison_tables(comparison: Comparison) -> str:
    headers = columns(comparison)
    parts = []
    for title, points in tables(comparison):
        rows: list[list[Cell]] = [
            [(c, None) if _NUMBER.match(c) else c for c in cells(comparison, p)] for p in points
        ]
        classes = ["beyond" if p.difference == "beyond spread" else "" for p in points]
        parts.append(f"<h3>{escape(title)}</h3>")
        parts.append(_table(headers, rows, table_id=f"compare-{_slug(title)}", row_classes=classes))
    if not parts:
        parts.append('<p class="note">No points.</p>')
    return "\n".join(parts)
