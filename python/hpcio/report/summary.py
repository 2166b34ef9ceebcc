"""The opening of a report: the answer first. Per phase, one headline chart (bandwidth of each
workload on each target at the largest size per rank the documents hold) and the best and
worst runs; the page's warnings follow, grouped into ranges of runs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hpcio.report.plots import Plot
from hpcio.report.points import per_rank_bytes, target_label
from hpcio.results.schema import ResultDocument
from hpcio.results.stats import headline_bandwidth_mib_s
from hpcio.units import format_bytes
from hpcio.workloads import shown

#: Runs shown at each end of a phase's ranking.
EXTREMES = 3


@dataclass(frozen=True, slots=True)
class Ranked:
    """A run in a phase's ranking (`number` counts from 1 in the report's order)."""

    number: int
    label: str
    target: str
    ranks: int
    per_rank_bytes: int
    bandwidth_mib_s: float


def phases(docs: Sequence[ResultDocument]) -> list[str]:
    return list(dict.fromkeys(phase for d in docs for phase in d.summary))


def ranked(docs: Sequence[ResultDocument], phase: str) -> list[Ranked]:
    """Every run with `phase`, fastest first."""
    found = [
        Ranked(
            number,
            shown.label(d.workload, d.settings),
            target_label(d.run),
            d.ranks,
            per_rank_bytes(d),
            headline_bandwidth_mib_s(d, phase),
        )
        for number, d in enumerate(docs, start=1)
        if phase in d.summary
    ]
    return sorted(found, key=lambda r: (-r.bandwidth_mib_s, r.number))


def extremes(docs: Sequence[ResultDocument], phase: str) -> tuple[list[Ranked], list[Ranked]]:
    """The best and the worst runs of `phase`, worst first among the worst; with few runs the
    better half are the best and the rest the worst (two runs: one of each)."""
    order = ranked(docs, phase)
    best = order[: min(EXTREMES, (len(order) + 1) // 2)]
    worst = order[len(best) :][::-1][:EXTREMES]
    return best, worst


def headline(docs: Sequence[ResultDocument], phase: str) -> Plot:
    """A bar per (workload, target): its bandwidth at the largest size per rank it ran (the
    most ranks there, when it ran several)."""
    from matplotlib.figure import Figure

    chosen: dict[tuple[str, str], Ranked] = {}
    for run in ranked(docs, phase):
        key = (run.label, run.target)
        held = chosen.get(key)
        if held is None or (run.per_rank_bytes, run.ranks) > (held.per_rank_bytes, held.ranks):
            chosen[key] = run
    bars = sorted(chosen.values(), key=lambda r: r.bandwidth_mib_s)
    # Each bar's name sits above it, not beside: the bars keep the figure's whole width, and
    # a phone's narrow page (where the figure scrolls) still shows names and bars together.
    figure = Figure(figsize=(6.0, 0.9 + 0.5 * len(bars)), layout="constrained")
    axes = figure.add_subplot()
    positions = range(len(bars))
    axes.barh(positions, [r.bandwidth_mib_s for r in bars], height=0.45,
              color=[f"C{i % 10}" for i in positions])  # fmt: skip
    axes.set_yticks([])
    for position, run in zip(positions, bars, strict=True):
        name = (
            f"{run.label} on {run.target}, {format_bytes(run.per_rank_bytes)}/rank, "
            f"{run.ranks} rank(s)"
        )
        axes.annotate(name, (0, position + 0.26), va="bottom", fontsize="small")
        axes.annotate(f" {run.bandwidth_mib_s:,.0f}", (run.bandwidth_mib_s, position),
                      va="center", fontsize="small")  # fmt: skip
    axes.set_ylim(-0.5, len(bars) - 0.1)
    axes.set_xlabel(f"{phase} bandwidth (MiB/s), bytes over mean phase time")
    axes.margins(x=0.15)
    axes.grid(True, axis="x", alpha=0.3)
    return Plot(f"headline-{phase}", f"{phase}: bandwidth at the largest size per rank", figure)
