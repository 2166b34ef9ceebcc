"""A run over several targets (issue 28), target by target: one table per run and phase, a row
per target (figures reduced over the ranks that used it) and a row of the totals."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from hpcio.report.grid import Grid, grid
from hpcio.report.points import shown_target
from hpcio.results.schema import PhaseFigures, ResultDocument, TargetFigures
from hpcio.workloads import shown

_MIB = float(1 << 20)
COLUMNS = (
    "Target",
    "Ranks",
    "Moved Per Iteration (MiB)",
    "Latency (s)",
    "Bandwidth (MiB/s)",
    "p50 op (ms)",
    "p99 op (ms)",
    "Requests Per Iteration",
    "Failed Requests Per Iteration",
)
ALL = "all targets"


def target_grids(docs: Sequence[ResultDocument]) -> list[Grid]:
    """A table per run and phase of every run with several targets; none for the others."""
    found = []
    for number, doc in enumerate(docs, start=1):
        recorded = doc.run.get("targets")
        if not recorded:
            continue
        for phase in doc.summary:
            figures = [p for p in doc.phases if p.phase == phase and p.targets]
            if not figures:
                continue
            rows = [
                _row(shown_target(t), [p.targets[i] for p in figures if i < len(p.targets)])
                for i, t in enumerate(recorded)
            ]
            rows.append(_total(figures))
            label = shown.label(doc.workload, doc.settings)
            title = f"run {number}: {label} {phase} over {len(recorded)} targets"
            mapping = doc.run.get("target_mapping", "round-robin")
            found.append(grid(title, COLUMNS, rows, _note(mapping, len(recorded))))
    return found


def _note(mapping: str, count: int) -> str:
    return (
        f"ranks spread {mapping}: rank r used target r mod {count}. Each target's Latency is "
        "the phase time of its own ranks (barrier to their last close), its Bandwidth the "
        "bytes they moved over it; the last row is the whole run's, as every other table "
        "shows it. Op percentiles are the last iteration's, merged over each target's ranks"
    )


def _row(name: str, figures: Sequence[TargetFigures]) -> list[str]:
    if not figures:
        return [name, *(["N/A"] * (len(COLUMNS) - 1))]
    seconds = statistics.fmean(f.phase_time_s for f in figures)
    moved = statistics.fmean(f.bytes_total for f in figures)
    failed = statistics.fmean(sum(f.store_failures.values()) for f in figures)
    return _cells(name, figures[0].ranks, moved, seconds, figures[-1], failed,
                  statistics.fmean(sum(f.requests.values()) for f in figures))  # fmt: skip


def _total(figures: Sequence[PhaseFigures]) -> list[str]:
    seconds = statistics.fmean(p.phase_time_s for p in figures)
    moved = statistics.fmean(p.bytes_total for p in figures)
    failed = statistics.fmean(sum(p.store_failures.values()) for p in figures)
    return _cells(ALL, figures[0].ranks, moved, seconds, figures[-1], failed,
                  statistics.fmean(sum(p.requests.values()) for p in figures))  # fmt: skip


def _cells(
    name: str,
    ranks: int,
    moved: float,
    seconds: float,
    last: TargetFigures | PhaseFigures,
    failed: float,
    requests: float,
) -> list[str]:
    """Percentiles are the last iteration's (each iteration's histogram is its own)."""
    bandwidth = f"{moved / _MIB / seconds:.3f}" if seconds else "N/A"
    return [
        name,
        str(ranks),
        f"{moved / _MIB:.1f}",
        f"{seconds:.5f}",
        bandwidth,
        f"{last.latency.p50_s * 1e3:.3f}",
        f"{last.latency.p99_s * 1e3:.3f}",
        f"{requests:.0f}",
        f"{failed:.1f}",
    ]


def render_markdown(grids: Sequence[Grid]) -> str:
    """The tables as Markdown, as `hpcio report` prints the study tables."""
    parts = []
    for g in grids:
        parts += [f"### {g.title}\n", "| " + " | ".join(g.columns) + " |"]
        parts.append("|" + "|".join(" ---: " for _ in g.columns) + "|")
        parts += ["| " + " | ".join(r) + " |" for r in g.rows]
        parts += ["", *(f"Note: {n}" for n in g.notes), ""]
    return "\n".join(parts)
