"""Figures from result documents (matplotlib, imported only when a figure is drawn): bandwidth
and latency against size per rank, per-op latency CDFs, bandwidth against ranks, and each
phase over time (MiB/s and p99 latency per interval).

Figures are built on matplotlib's object API (`Figure`), never pyplot: no global figure
registry, no GUI backend; PNG goes through Agg and SVG through matplotlib's SVG writer.
"""

from __future__ import annotations

import base64
import functools
import io
import math
import re
import textwrap
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hpcio.errors import SpecError
from hpcio.report.points import (
    PointKey,
    describe,
    per_rank_bytes,
    point_key,
    spec_fields,
    target_label,
    varying_fields,
)
from hpcio.report.pooled import iterations_of, pooled_stats
from hpcio.results import hdr
from hpcio.results.schema import ResultDocument, TimeSeries
from hpcio.units import format_bytes
from hpcio.workloads import shown

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
#: matplotlib (with fontTools and Pillow, ~95 MB) is an extra: compute nodes never draw.
PLOTS_EXTRA = "pip install 'hpcio[plots]'"


def require_matplotlib(option: str) -> None:
    """Refuse `option` (--plots, --html) before any work when matplotlib is not installed.

    Raises:
        SpecError: one line naming the extra that brings it.
    """
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise SpecError(
            f"{option} draws with matplotlib, which is not installed: {PLOTS_EXTRA}"
        ) from None


#: Quantiles sampled for a CDF: evenly up to 0.99, then ever closer to 1 in the tail, where
#: the slow operations live (the histograms hold 3 significant digits, so more would not help).
CDF_QUANTILES = (
    *(i / 100 for i in range(100)),
    *(1 - 10 ** (-2 - 2 * i / 99) for i in range(100)),
)
#: A phase over time is drawn from this many intervals up: one interval is a flat step with
#: nothing to show (a phase under the engine's 10 ms buckets has only one).
MIN_INTERVALS = 2
#: PNG resolution; SVG is resolution-free.
PNG_DPI = 150
#: Above this ratio of largest to smallest value a y axis is logarithmic.
LOG_Y_ABOVE = 20.0
#: Small panels over time per row of the figure: three fit a page's width and stay readable.
OVER_TIME_COLUMNS = 3
#: A small panel's title wraps at this many characters, so neighbours' titles never overlap.
PANEL_TITLE_CHARS = 42
#: Labels up to this long fit two to a row of a legend under the axes.
LEGEND_TWO_COLUMNS_CHARS = 45
#: Height a row of the legend under the axes adds to the figure (small font, 150 dpi).
LEGEND_ROW_INCHES = 0.22
_LINESTYLES = ("-", "--", ":", "-.")
_MARKERS = ("o", "s", "^", "D", "v", "P", "X")


@dataclass(frozen=True, slots=True)
class Plot:
    """One figure: `name` is its file stem and its id in the HTML page."""

    name: str
    title: str
    figure: Figure
    #: Bytes already drawn, by format: --plots and --html share one SVG (render).
    drawn: dict[str, bytes] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class PlotSet:
    """Every figure the documents support, and the ones they do not, with the reason."""

    plots: tuple[Plot, ...]
    skipped: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Series:
    """One line: a legend label and its documents."""

    label: str
    docs: tuple[ResultDocument, ...]
    linestyle: str = "-"
    #: Index into the colour cycle; None: the series' position.
    colour: int | None = None


def report_plots(docs: Sequence[ResultDocument]) -> PlotSet:
    """Bandwidth vs size and latency vs size per phase, bandwidth vs global data size per
    phase for workloads sized so (the NetCDF codes), a latency CDF per pattern and phase, and
    bandwidth vs ranks per phase when the documents hold more than one rank count; training
    runs' AU and I/O wait."""
    from hpcio.report.training import training_plots

    # Training runs have figures of their own (AU, I/O wait per step), not sizes and phases.
    trained = [d for d in docs if shown.family_of(d.workload) == "training"]
    # mdtest's figures are rates of calls: its table says them, a bandwidth plot would be 0.
    docs = [d for d in docs if shown.family_of(d.workload) != "training"
            and shown.shows_bandwidth(d.workload)]  # fmt: skip
    plots: list[Plot] = list(training_plots(trained))
    skipped: list[str] = []
    for phase in _phases(docs):
        plots.append(
            Plot(
                f"bandwidth-vs-size-{phase}",
                f"{phase} bandwidth vs size per rank",
                bandwidth_vs_size(
                    series_by_point(docs, phase, without="size_per_rank_bytes"), phase
                ),
            )
        )
        plots.append(
            Plot(
                f"latency-vs-size-{phase}",
                f"{phase} phase time vs size per rank",
                latency_vs_size(series_by_point(docs, phase, without="size_per_rank_bytes"), phase),
            )
        )
    global_docs = [d for d in docs if shown.sized_globally(d.workload)]
    for phase in _phases(global_docs):
        plots.append(
            Plot(
                f"bandwidth-vs-global-size-{phase}",
                f"{phase} bandwidth vs global data size",
                bandwidth_vs_global_size(
                    series_by_point(global_docs, phase, without="size_per_rank_bytes"), phase
                ),
            )
        )
    for pattern, phase in _patterns_and_phases(docs):
        chosen = [d for d in docs if shown.label(d.workload, d.settings) == pattern]
        plots.append(
            Plot(
                f"latency-cdf-{file_safe(pattern)}-{phase}",
                f"{pattern} {phase} per-op latency CDF",
                latency_cdf(series_by_point(chosen, phase), phase),
            )
        )
    for phase in _phases(docs):
        timed = [d for d in docs if _first_series(d, phase) is not None]
        drawn = [d for d in timed if len(_first_series(d, phase) or ()) >= MIN_INTERVALS]
        if timed and not drawn:
            skipped.append(
                f"{phase} over time: skipped, every {phase} phase is too short to draw (fewer "
                f"than {MIN_INTERVALS} intervals of the engine's 10 ms)"
            )
        elif drawn:
            if len(drawn) < len(timed):
                skipped.append(
                    f"{phase} over time: {len(timed) - len(drawn)} run(s) left out, their "
                    f"{phase} phase too short to draw (fewer than {MIN_INTERVALS} intervals "
                    "of the engine's 10 ms)"
                )
            plots.append(
                Plot(
                    f"over-time-{phase}",
                    f"{phase} over time per run kind: MiB/s and p99 latency per interval",
                    over_time(panels_by_kind(drawn, phase), phase),
                )
            )
    for phase in _phases(docs):
        counts = sorted({d.ranks for d in docs if phase in d.summary})
        lines = series_by_point(docs, phase, without="ranks")
        if not any(len({d.ranks for d in line.docs}) > 1 for line in lines):
            why = (
                f"every run has {counts[0]} rank(s)"
                if len(counts) < 2
                else "no configuration ran at two rank counts or more"
            )
            skipped.append(f"bandwidth vs ranks ({phase}): skipped, {why}")
            continue
        plots.append(
            Plot(
                f"bandwidth-vs-ranks-{phase}",
                f"{phase} bandwidth vs ranks",
                bandwidth_vs_ranks(series_by_point(docs, phase, without="ranks"), phase),
            )
        )
    return PlotSet(tuple(plots), tuple(skipped))


def file_safe(text: str) -> str:
    """`text` as part of a file name a shell takes as it is: runs of anything but letters,
    digits, '.', '_' and '-' become one '-'."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")


def series_by_point(
    docs: Sequence[ResultDocument], phase: str, *, without: str | None = None
) -> list[Series]:
    """Documents with `phase`, one series per point with the x-axis field (`without`) left
    out. Labels name the pattern, the target and whatever else differs between series."""
    dropped = () if without is None else (without,)
    groups = list(_groups(docs, phase, dropped).values())
    labels = distinguishing_labels([group[0].run for group in groups], dropped)
    return [Series(label, tuple(group)) for label, group in zip(labels, groups, strict=True)]


def distinguishing_labels(
    runs: Sequence[Mapping[str, Any]], dropped: Sequence[str] = ()
) -> list[str]:
    """Each run named by what tells it apart from the others: its workload and its target
    where those differ, then the fields that differ between the runs of its own workload (a
    profile beside IOzone is named 'streaming', not by every param the two do not share).
    `dropped` fields (a plot's x axis) are never named."""
    varying = [name for name in varying_fields(runs) if name not in dropped]
    first = [name for name in ("workload", "target") if name in varying]
    labels = []
    for run in runs:
        kin = [other for other in runs if other.get("workload") == run.get("workload")]
        own = [n for n in varying_fields(kin) if n not in dropped and n not in first]
        labels.append(describe(spec_fields(run), first + own or ["workload"]))
    return labels


def _groups(
    docs: Iterable[ResultDocument], phase: str, dropped: Sequence[str]
) -> dict[PointKey, list[ResultDocument]]:
    groups: dict[PointKey, list[ResultDocument]] = {}
    for doc in docs:
        if phase in doc.summary:
            groups.setdefault(point_key(doc.run, without=dropped), []).append(doc)
    return groups


def _shown_fields(docs: Iterable[ResultDocument], phase: str, dropped: Sequence[str]) -> list[str]:
    """The fields that differ between the lines, pattern and target first, the x-axis field
    left out: what every line shares would only crowd the legend. One line is named by its
    pattern."""
    varying = [
        name
        for name in varying_fields(d.run for d in docs if phase in d.summary)
        if name not in dropped
    ]
    first = [name for name in ("workload", "target") if name in varying]
    shown = first + [name for name in varying if name not in first]
    return shown or ["workload"]


def bandwidth_vs_size(series: Sequence[Series], phase: str) -> Figure:
    """Mean bandwidth over iterations against size per rank (log2), min..max as error bars."""
    return _summary_figure(
        series,
        phase,
        x=per_rank_bytes,
        statistic="bandwidth_mib_s",
        xlabel="size per rank",
        ylabel=f"{phase} bandwidth (MiB/s), mean; bars min..max",
        x_tick=format_bytes,
    )


def bandwidth_vs_global_size(series: Sequence[Series], phase: str) -> Figure:
    """Mean bandwidth against the bytes all ranks move per iteration (log2): the x axis of
    reference/002's figure 1, for workloads whose studies plot it so."""
    return _summary_figure(
        series,
        phase,
        x=lambda doc: per_rank_bytes(doc) * doc.ranks,
        statistic="bandwidth_mib_s",
        xlabel="global data size (all ranks)",
        ylabel=f"{phase} bandwidth (MiB/s), mean; bars min..max",
        x_tick=format_bytes,
    )


def latency_vs_size(series: Sequence[Series], phase: str) -> Figure:
    """Mean phase time over iterations (the studies' Latency) against size per rank (log2)."""
    return _summary_figure(
        series,
        phase,
        x=per_rank_bytes,
        statistic="seconds",
        xlabel="size per rank",
        ylabel=f"{phase} phase time (s), mean; bars min..max",
        x_tick=format_bytes,
    )


def bandwidth_vs_ranks(series: Sequence[Series], phase: str) -> Figure:
    """Mean bandwidth against the number of ranks (log2), one line per size and target."""
    return _summary_figure(
        series,
        phase,
        x=lambda doc: doc.ranks,
        statistic="bandwidth_mib_s",
        xlabel="ranks",
        ylabel=f"{phase} bandwidth (MiB/s), mean; bars min..max",
        x_tick=lambda ranks: f"{ranks:g}",
    )


def latency_cdf(series: Sequence[Series], phase: str) -> Figure:
    """Fraction of operations at or below each per-op latency, from each document's
    histograms of all iterations merged (exact: counts add), on a log latency axis."""
    figure, axes = _new_figure()
    for index, one in enumerate(series):
        # A series here is one point: a repeated point's documents merge their histograms.
        latencies_s = latency_quantiles_s(one.docs, phase, CDF_QUANTILES)
        axes.plot(
            latencies_s,
            CDF_QUANTILES,
            drawstyle="steps-post",
            label=one.label,
            **_line_style(index if one.colour is None else one.colour),
        )
    axes.set_xscale("log")
    _few_minor_labels(axes)
    axes.set_xlabel(f"{phase} per-op latency (s)")
    axes.set_ylabel("fraction of operations")
    axes.set_ylim(0, 1.01)
    axes.grid(True, which="both", alpha=0.3)
    _legend(axes)
    return figure


#: A line over time: its legend label and the series it draws.
Line = tuple[str, TimeSeries]


@dataclass(frozen=True, slots=True)
class Panel:
    """One run kind's small panel over time: a title naming what sets the kind apart from the
    others, and its lines, each a legend label and one phase iteration's series."""

    title: str
    lines: tuple[Line, ...]


def panels_by_kind(docs: Sequence[ResultDocument], phase: str) -> list[Panel]:
    """One panel per run kind (the same workload and settings, targets aside) of the documents
    whose `phase` has a series. Inside a kind the lines are its targets, each its last run's
    first iteration; a kind measured on one target draws its iterations instead. Titles and
    legends name only what differs: between the kinds, and between a panel's lines."""
    kinds: dict[PointKey, list[ResultDocument]] = {}
    for doc in docs:
        if any(p.phase == phase and p.series for p in doc.phases):
            kinds.setdefault(point_key(doc.run, without=("target",)), []).append(doc)
    titles = distinguishing_labels([kind[0].run for kind in kinds.values()], ("target",))
    panels = []
    for title, kind in zip(titles, kinds.values(), strict=True):
        points = _groups(kind, phase, ())
        if len(points) > 1:
            lines = tuple(
                (target_label(point[-1].run), _first_timed(point[-1], phase))
                for point in points.values()
            )
        else:
            lines = _iteration_lines(kind, phase)
        panels.append(Panel(title, lines))
    return panels


def over_time(panels: Sequence[Panel], phase: str) -> Figure:
    """Each run kind's `phase` over time as small multiples: MiB/s completed in each interval
    (top) and the p99 latency of the operations completed in it (bottom, log), so a stall or
    a cache filling up shows where a mean hides it. The y axes are shared across the panels,
    so heights compare; each panel's x axis is its own runs' time, so a short run is not
    squeezed into a corner of a long one's."""
    from matplotlib.figure import Figure

    columns = min(len(panels), OVER_TIME_COLUMNS)
    rows = -(-len(panels) // columns)
    figure = Figure(figsize=(3.6 * columns + 1.0, 4.2 * rows + 0.4), layout="constrained")
    grid = figure.add_gridspec(2 * rows, columns)
    first_rate: Axes | None = None
    first_tail: Axes | None = None
    for at, panel in enumerate(panels):
        row, column = divmod(at, columns)
        rate = figure.add_subplot(grid[2 * row, column], sharey=first_rate)
        tail = figure.add_subplot(grid[2 * row + 1, column], sharex=rate, sharey=first_tail)
        first_rate, first_tail = first_rate or rate, first_tail or tail
        for index, (label, series) in enumerate(panel.lines):
            starts = [i * series.interval_s for i in range(len(series.mib_s))]
            style = _line_style(index)
            rate.plot(starts, series.mib_s, drawstyle="steps-post", label=label, **style)
            p99 = [float("nan") if v is None else v * 1e3 for v in series.p99_s]
            tail.plot(starts, p99, drawstyle="steps-post", **style)
        rate.set_title(textwrap.fill(panel.title, PANEL_TITLE_CHARS), fontsize="small")
        rate.set_ylim(bottom=0)
        rate.tick_params(labelbottom=False)
        tail.set_yscale("log")
        tail.set_xlabel("s from the phase's start", fontsize="small")
        if column == 0:
            rate.set_ylabel(f"{phase} MiB/s")
            tail.set_ylabel("p99 per-op latency (ms)")
        for axes in (rate, tail):
            axes.grid(True, which="both", alpha=0.3)
            axes.tick_params(labelsize="small")
        if len(panel.lines) > 1:
            rate.legend(fontsize="x-small", loc="lower right")
    return figure


def _iteration_lines(runs: Sequence[ResultDocument], phase: str) -> tuple[Line, ...]:
    """Every iteration of one point's runs that has a series to draw, each its own line. An
    iteration under MIN_INTERVALS is one flat step: nothing to see, only a legend entry."""
    lines = []
    for number, doc in enumerate(runs, start=1):
        for figures in doc.phases:
            series = figures.series
            if figures.phase != phase or series is None or len(series.mib_s) < MIN_INTERVALS:
                continue
            which = f"iteration {figures.iteration}"
            lines.append((f"run {number} {which}" if len(runs) > 1 else which, series))
    return tuple(lines)


def _first_timed(doc: ResultDocument, phase: str) -> TimeSeries:
    """The series of the first iteration of `phase` that has one (the caller made sure)."""
    return next(p.series for p in doc.phases if p.phase == phase and p.series is not None)


def latency_quantiles_s(
    docs: Sequence[ResultDocument], phase: str, quantiles: Sequence[float]
) -> list[float]:
    """Per-op latency in seconds at each quantile of `phase`, over every iteration of `docs`."""
    parts = [hdr.decode(base64.b64decode(p.latency_hdr_b64)) for p in iterations_of(docs, phase)]
    if not parts:
        return [0.0] * len(quantiles)
    return [ns / 1e9 for ns in hdr.merge(parts).values_at_quantiles(quantiles)]


def write_files(plot: Plot, directory: Path) -> list[Path]:
    """Write `<name>.png` and `<name>.svg` into `directory`; return their paths."""
    paths = []
    for fmt in ("png", "svg"):
        path = directory / f"{plot.name}.{fmt}"
        path.write_bytes(render(plot, fmt))
        paths.append(path)
    return paths


def render(plot: Plot, fmt: str) -> bytes:
    """The figure as PNG or SVG bytes, drawn once per format (a figure is not changed once
    made). SVG carries no date and fixed ids, so the same documents give the same file."""
    if fmt not in plot.drawn:
        plot.drawn[fmt] = _draw(plot, fmt)
    return plot.drawn[fmt]


def _draw(plot: Plot, fmt: str) -> bytes:
    import matplotlib

    _share_math_parses()
    out = io.BytesIO()
    metadata: dict[str, Any] = {"Date": None} if fmt == "svg" else {}
    with matplotlib.rc_context({"svg.hashsalt": plot.name}):
        plot.figure.savefig(out, format=fmt, dpi=PNG_DPI, bbox_inches="tight", metadata=metadata)
    return out.getvalue()


@functools.cache
def _share_math_parses() -> None:
    """Keep matplotlib's parsed math text (log axes' tick labels such as $10^{-3}$) for the
    whole process. matplotlib caches a parse per parser object, and each savefig makes new
    parsers (one per renderer), so every figure parsed the same labels again with pyparsing:
    a fifth of a report's drawing time. The parse is the same function on the same arguments,
    so the figures are byte for byte the same. Without the private hook (another matplotlib)
    nothing changes but the speed."""
    from matplotlib.mathtext import MathTextParser

    parse = getattr(MathTextParser.__dict__.get("_parse_cached"), "__wrapped__", None)
    if parse is None:
        return
    # A parser holds nothing but its output type (the pyparsing grammar is a class attribute),
    # so one parser of each type gives what any other would.
    parsers: dict[str, Any] = {"vector": MathTextParser("path"), "raster": MathTextParser("agg")}

    @functools.lru_cache(maxsize=256)
    def by_output(output_type: str, *args: Any) -> Any:
        return parse(parsers[output_type], *args)

    def shared(self: Any, *args: Any) -> Any:
        if self._output_type not in parsers:  # an output type this matplotlib added
            return parse(self, *args)
        return by_output(self._output_type, *args)

    MathTextParser._parse_cached = shared  # type: ignore[attr-defined]


def _summary_figure(
    series: Sequence[Series],
    phase: str,
    *,
    x: Callable[[ResultDocument], float],
    statistic: str,
    xlabel: str,
    ylabel: str,
    x_tick: Callable[[float], str],
) -> Figure:
    """One line per series of a summary statistic against x (log2), min..max as error bars."""
    figure, axes = _new_figure()
    ticks: set[float] = set()
    values: list[float] = []
    for index, one in enumerate(series):
        # Documents of the same x (a run repeated) pool their iterations, as in the tables.
        at_x: dict[float, list[ResultDocument]] = {}
        for doc in one.docs:
            at_x.setdefault(x(doc), []).append(doc)
        xs = sorted(at_x)
        stats = [pooled_stats(at_x[v], phase, statistic) for v in xs]
        means = [s.mean for s in stats]
        axes.errorbar(
            xs,
            means,
            yerr=[[s.mean - s.min for s in stats], [s.max - s.mean for s in stats]],
            capsize=3,
            label=one.label,
            **_style(index if one.colour is None else one.colour, one.linestyle),
        )
        ticks.update(xs)
        values.extend(v for s in stats for v in (s.min, s.max) if v > 0)
    axes.set_xscale("log", base=2)
    axes.set_xticks(sorted(ticks), [x_tick(t) for t in sorted(ticks)])
    axes.minorticks_off()
    if values and max(values) / min(values) > LOG_Y_ABOVE:
        axes.set_yscale("log")
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.grid(True, which="major", alpha=0.3)
    _legend(axes)
    return figure


def _new_figure() -> tuple[Figure, Axes]:
    from matplotlib.figure import Figure

    figure = Figure(figsize=(8, 4.8), layout="constrained")
    return figure, figure.add_subplot()


def _style(index: int, linestyle: str) -> dict[str, Any]:
    """Colours first (ten of them), then markers, so up to 70 lines stay distinguishable."""
    return {
        "color": f"C{index % 10}",
        "marker": _MARKERS[(index // 10) % len(_MARKERS)],
        "markersize": 4,
        "linestyle": linestyle,
    }


def _line_style(index: int) -> dict[str, Any]:
    """For lines without markers (a CDF has one point per quantile): colours, then dashes."""
    return {"color": f"C{index % 10}", "linestyle": _LINESTYLES[(index // 10) % len(_LINESTYLES)]}


def _legend(axes: Axes) -> None:
    """Under the axes and their tick labels, the figure grown to hold it: beside them a legend
    takes the width the lines need, and on a phone's narrow page the plot would shrink to a
    strip."""
    handles, labels = axes.get_legend_handles_labels()
    if not labels:
        return
    columns = 2 if max(len(label) for label in labels) <= LEGEND_TWO_COLUMNS_CHARS else 1
    figure = axes.get_figure(root=True)
    assert figure is not None
    width, height = figure.get_size_inches()
    figure.set_size_inches(width, height + LEGEND_ROW_INCHES * -(-len(labels) // columns))
    # "outside": the constrained layout makes room below every axes' decorations.
    figure.legend(handles, labels, fontsize="small", loc="outside lower center", ncols=columns)


def _few_minor_labels(axes: Axes) -> None:
    """On a log x axis spanning less than two decades matplotlib labels every minor tick
    (2, 3, 4, 6 x 10^k), and the labels run into each other: label only 2 and 5 x 10^k, and
    only where fewer than two powers of ten are in view to label the axis."""
    from matplotlib.ticker import LogFormatterSciNotation

    class TwoAndFive(LogFormatterSciNotation):
        def __call__(self, x: float, pos: int | None = None) -> str:
            low, high = sorted(self.axis.get_view_interval()) if self.axis else (0.0, 0.0)
            if low > 0 and math.floor(math.log10(high)) - math.ceil(math.log10(low)) >= 1:
                return ""
            mantissa = x / 10 ** math.floor(math.log10(x) + 1e-9) if x > 0 else 0.0
            if round(mantissa) not in (2, 5) or abs(mantissa - round(mantissa)) > 1e-6:
                return ""
            return str(super().__call__(x, pos))

    axes.xaxis.set_minor_formatter(TwoAndFive(labelOnlyBase=False, minor_thresholds=(2, 2)))


def _first_series(doc: ResultDocument, phase: str) -> tuple[float, ...] | None:
    """MiB/s per interval of the first iteration of `phase` that has them, or None."""
    first = next((p.series for p in doc.phases if p.phase == phase and p.series), None)
    return None if first is None else first.mib_s


def _phases(docs: Iterable[ResultDocument]) -> list[str]:
    return list(dict.fromkeys(phase for d in docs for phase in d.summary))


def _patterns_and_phases(docs: Iterable[ResultDocument]) -> list[tuple[str, str]]:
    return list(
        dict.fromkeys((shown.label(d.workload, d.settings), p) for d in docs for p in d.summary)
    )


def comparison_plots(
    sources: Mapping[str, Sequence[ResultDocument]],
    metric: str = "bandwidth",
    ignore: Sequence[str] = (),
) -> PlotSet:
    """Bandwidth (or, with metric "latency", phase time) vs size per phase for several result
    files on one figure: the same point (matched without the `ignore` fields, as the
    comparison does) has the same colour in every file, and each file its own line style."""
    from hpcio.report.training import training_plots

    draw = bandwidth_vs_size if metric == "bandwidth" else latency_vs_size
    # Training runs have no size per rank: their AU and I/O wait, A's and B's runs together.
    trained = [d for docs in sources.values() for d in docs
               if shown.family_of(d.workload) == "training"]  # fmt: skip
    sources = {
        name: [
            d
            for d in docs
            if shown.family_of(d.workload) != "training" and shown.shows_bandwidth(d.workload)
        ]
        for name, docs in sources.items()
    }
    every = [d for docs in sources.values() for d in docs]
    dropped = ("size_per_rank_bytes",)
    matched_on = (*dropped, *ignore)
    plots = list(training_plots(trained))
    if metric == "au":
        return PlotSet(tuple(plots), ())
    for phase in _phases(every):
        legend_fields = _shown_fields(every, phase, dropped)
        colours = {key: i for i, key in enumerate(_groups(every, phase, matched_on))}
        series = [
            Series(
                f"{name}: {describe(spec_fields(group[0].run), legend_fields)}",
                tuple(group),
                _LINESTYLES[index % len(_LINESTYLES)],
                colours[point_key(group[0].run, without=matched_on)],
            )
            for index, (name, docs) in enumerate(sources.items())
            for group in _groups(docs, phase, dropped).values()
        ]
        plots.append(
            Plot(
                f"compare-{metric}-vs-size-{phase}",
                f"{phase} {metric} vs size per rank, compared",
                draw(series, phase),
            )
        )
    return PlotSet(tuple(plots), ())
