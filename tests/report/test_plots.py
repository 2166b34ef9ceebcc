import base64
import dataclasses
import re
import xml.etree.ElementTree as ET

import pytest
import recorded
from hpcio import _engine
from hpcio.report import plots
from hpcio.results import io as results_io

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def curves(figure):
    """{legend label: (xs, means, [(low, high), ...])} of an error-bar figure."""
    found = {}
    for container in figure.axes[0].containers:
        data_line, _, (bars,) = container.lines
        found[container.get_label()] = (
            list(data_line.get_xdata()),
            list(data_line.get_ydata()),
            [(low, high) for (_, low), (_, high) in bars.get_segments()],
        )
    return found


def label(doc, *more):
    """A legend label in files of one target: the target, which every line shares, is left
    out."""
    return " ".join([doc.workload, *more])


def test_bandwidth_vs_size_draws_each_documents_mean_min_and_max(results):
    docs = results_io.read(results.a)
    for phase in ("write", "read"):
        figure = plots.bandwidth_vs_size(
            plots.series_by_point(docs, phase, without="size_per_rank_bytes"), phase
        )
        assert figure.axes[0].get_xscale() == "log"
        expected = {}
        for doc in docs:
            xs, means, bars = expected.setdefault(label(doc), ([], [], []))
            stats = doc.summary[phase].bandwidth_mib_s
            xs.append(doc.params["size_per_rank_bytes"])
            means.append(stats.mean)
            bars.append((stats.min, stats.max))
        drawn = curves(figure)
        assert sorted(drawn) == sorted(expected)
        for name, (xs, means, bars) in expected.items():
            assert drawn[name][:2] == (xs, means)
            # Error bars are drawn as mean - (mean - min): equal up to rounding.
            flat = [value for bar in bars for value in bar]
            assert [v for bar in drawn[name][2] for v in bar] == pytest.approx(flat, rel=1e-12)
        assert sorted(expected) == ["mfmw", "sfmw"]


def test_latency_vs_size_draws_mean_phase_times(results):
    docs = results_io.read(results.a)
    figure = plots.latency_vs_size(
        plots.series_by_point(docs, "write", without="size_per_rank_bytes"), "write"
    )
    drawn = curves(figure)
    for doc in docs:
        xs, means, bars = drawn[label(doc)]
        seconds = doc.summary["write"].seconds
        at = xs.index(doc.params["size_per_rank_bytes"])
        assert means[at] == seconds.mean
        assert bars[at] == pytest.approx((seconds.min, seconds.max), rel=1e-12)


def test_lines_are_told_apart_by_what_differs(results):
    docs = results_io.read(results.combined("mixed.jsonl", results.a, results.one))
    labels = set(
        curves(
            plots.bandwidth_vs_size(
                plots.series_by_point(docs, "read", without="size_per_rank_bytes"), "read"
            )
        )
    )
    assert labels == {f"{p} {n}" for p in ("sfmw", "mfmw") for n in ("2 ranks", "1 rank")}


def test_legends_name_the_target_only_where_lines_differ_by_it(results):
    docs = results_io.read(results.combined("targets.jsonl", results.one, results.t2_file))
    series = plots.series_by_point(docs, "write", without="size_per_rank_bytes")
    assert len({str(d.run["target"]["url"]) for d in docs}) == 2
    for one in series:
        url = str(one.docs[0].run["target"]["url"])
        assert one.label.startswith(f"{one.docs[0].workload} {url}")


def test_latency_cdf_follows_the_merged_histograms(results):
    docs = results_io.read(results.a)
    figure = plots.latency_cdf(plots.series_by_point(docs, "write"), "write")
    lines = {line.get_label(): line for line in figure.axes[0].get_lines()}
    assert len(lines) == len(docs)
    half = plots.CDF_QUANTILES.index(0.5)
    for doc in docs:
        size = f"{doc.params['size_per_rank_bytes'] >> 20} MiB/rank"
        line = lines[label(doc, size)]
        latencies_s = list(line.get_xdata())
        assert list(line.get_ydata()) == list(plots.CDF_QUANTILES)
        assert latencies_s == sorted(latencies_s)
        # The runner summarised the same merged histograms: its median must be the CDF's.
        assert latencies_s[half] == pytest.approx(doc.summary["write"].latency.p50_s, rel=1e-9)
        assert latencies_s[-1] <= doc.summary["write"].latency.max_s
        parts = [base64.b64decode(p.latency_hdr_b64) for p in doc.phases if p.phase == "write"]
        assert len(parts) == doc.run["iterations"]
        merged = _engine.histogram_summary(_engine.histogram_merge(parts), [0.9])
        assert latencies_s[plots.CDF_QUANTILES.index(0.9)] == merged["quantiles_ns"][0] / 1e9


def test_bandwidth_vs_ranks_needs_two_rank_counts(results):
    two_ranks = results_io.read(results.a)
    made = plots.report_plots(two_ranks)
    assert not [p for p in made.plots if p.name.startswith("bandwidth-vs-ranks")]
    assert tuple(n for n in made.skipped if n.startswith("bandwidth vs ranks")) == (
        "bandwidth vs ranks (write): skipped, every run has 2 rank(s)",
        "bandwidth vs ranks (read): skipped, every run has 2 rank(s)",
    )


def test_bandwidth_vs_ranks(results):
    docs = results_io.read(results.combined("ranks.jsonl", results.a, results.one))
    (plot,) = [p for p in plots.report_plots(docs).plots if p.name == "bandwidth-vs-ranks-read"]
    drawn = curves(plot.figure)
    assert len(drawn) == 4  # two patterns x two sizes
    for doc in docs:
        size = f"{doc.params['size_per_rank_bytes'] >> 20} MiB/rank"
        xs, means, _ = drawn[label(doc, size)]
        assert xs == [1, 2]
        assert means[xs.index(doc.ranks)] == doc.summary["read"].bandwidth_mib_s.mean


def test_one_figure_of_each_kind(results):
    docs = results_io.read(
        results.combined("all.jsonl", results.a, results.one, results.t2_file, results.timed)
    )
    names = [p.name for p in plots.report_plots(docs).plots]
    phases = ("write", "read")
    assert sorted(names) == sorted(
        [f"bandwidth-vs-size-{p}" for p in phases]
        + [f"latency-vs-size-{p}" for p in phases]
        + [f"latency-cdf-{pattern}-{p}" for pattern in ("sfmw", "mfmw") for p in phases]
        + [f"bandwidth-vs-ranks-{p}" for p in phases]
        + [f"over-time-{p}" for p in phases]
    )


def test_svg_is_the_same_for_the_same_documents(results):
    docs = results_io.read(results.a)
    first, second = (plots.report_plots(docs).plots[0] for _ in range(2))
    assert plots.render(first, "svg") == plots.render(second, "svg")


@pytest.fixture(scope="module")
def plotted(results, hpcio, tmp_path_factory):
    """`hpcio report A --plots DIR` into a DIR that does not exist yet: (DIR, its output). Drawn
    once for the tests that read the files (matplotlib takes a second or two)."""
    out = tmp_path_factory.mktemp("plotted") / "new" / "plots"
    return out, hpcio("report", results.a, "--plots", out)


def test_cli_writes_png_and_svg_and_prints_paths(results, plotted):
    out, done = plotted
    docs = results_io.read(results.a)
    assert (done.returncode, done.stderr) == (0, "")
    names = [p.name for p in plots.report_plots(docs).plots]
    printed = done.stdout.splitlines()
    assert printed == [
        *(str(out / f"{n}.{ext}") for n in names for ext in ("png", "svg")),
        *plots.report_plots(docs).skipped,
    ]
    assert printed[-2:] == [
        "bandwidth vs ranks (write): skipped, every run has 2 rank(s)",
        "bandwidth vs ranks (read): skipped, every run has 2 rank(s)",
    ]
    assert sorted(p.name for p in out.iterdir()) == sorted(
        f"{n}.{ext}" for n in names for ext in ("png", "svg")
    )
    for name in names:
        assert (out / f"{name}.png").read_bytes().startswith(PNG_SIGNATURE)
        root = ET.fromstring((out / f"{name}.svg").read_bytes())
        assert root.tag == "{http://www.w3.org/2000/svg}svg"


def test_png_holds_the_lines(plotted):
    from PIL import Image

    out, done = plotted
    assert done.returncode == 0, done.stderr
    image = Image.open(out / "bandwidth-vs-size-write.png").convert("RGB")
    colours = {colour for _, colour in image.getcolors(maxcolors=1 << 20)}
    # The first two series are drawn in matplotlib's C0 and C1.
    assert (0x1F, 0x77, 0xB4) in colours
    assert (0xFF, 0x7F, 0x0E) in colours


def test_plots_onto_a_file_is_refused(results, hpcio, error_line, tmp_path):
    taken = tmp_path / "taken"
    taken.write_text("")
    done = hpcio("report", results.a, "--plots", taken)
    assert done.returncode == 2
    assert error_line(done) == f"hpcio: error: --plots {taken}: exists and is not a directory"


def test_over_time_draws_each_kinds_first_iteration_rate_and_p99(results):
    docs = results_io.read(results.timed)
    panels = plots.panels_by_kind(docs, "write")
    figure = plots.over_time(panels, "write")
    assert len(figure.axes) == 2 * len(panels) == 2 * len(docs)
    for at, (panel, doc) in enumerate(zip(panels, docs, strict=True)):
        rate, tail = figure.axes[2 * at : 2 * at + 2]
        assert tail.get_yscale() == "log"
        # One target, one iteration: the line needs no legend, the title says the kind.
        assert rate.get_legend() is None
        mib = doc.params["size_per_rank_bytes"] // 2**20
        assert rate.get_title() == panel.title == f"{mib} MiB/rank"
        (line,), (p99_line,) = rate.get_lines(), tail.get_lines()
        first = next(p for p in doc.phases if p.phase == "write")
        assert list(line.get_ydata()) == pytest.approx(first.series.mib_s)
        step = first.series.interval_s
        starts = [i * step for i in range(len(first.series.mib_s))]
        assert list(line.get_xdata()) == pytest.approx(starts)
        p99_ms = [float("nan") if v is None else v * 1e3 for v in first.series.p99_s]
        assert list(p99_line.get_ydata()) == pytest.approx(p99_ms, nan_ok=True)
    names = [p.name for p in plots.report_plots(docs).plots]
    assert "over-time-write" in names and "over-time-read" in names


def on_target(doc, url, drop_intervals):
    """`doc` as if run on `url`, its phases `drop_intervals` intervals shorter: a run of the
    same kind elsewhere, of another length."""
    phases = []
    for phase in doc.phases:
        series = phase.series
        if series is not None:
            cut = len(series.mib_s) - drop_intervals
            series = dataclasses.replace(series, mib_s=series.mib_s[:cut], p99_s=series.p99_s[:cut])
        phases.append(dataclasses.replace(phase, series=series))
    run = {**doc.run, "target": {**doc.run["target"], "url": url}}
    return dataclasses.replace(doc, run=run, phases=tuple(phases))


def test_runs_of_different_lengths_get_one_panel_per_kind_targets_as_lines(results):
    timed = results_io.read(results.timed)
    docs = timed + [on_target(doc, "file:///elsewhere", 3) for doc in timed]
    (plot,) = [p for p in plots.report_plots(docs).plots if p.name == "over-time-write"]
    axes = plot.figure.axes
    # Two kinds (1 MiB and 2 MiB per rank), each a rate and a p99 panel: not one crowded panel.
    assert len(axes) == 4
    titles = [axes[0].get_title(), axes[2].get_title()]
    assert titles == ["1 MiB/rank", "2 MiB/rank"]
    for rate, tail in (axes[0:2], axes[2:4]):
        # The lines are the targets, and the legend names only them.
        labels = [t.get_text() for t in rate.get_legend().get_texts()]
        assert labels == ["file:///tmp/hpcio-v1/t1", "file:///elsewhere"]
        long, short = (len(line.get_xdata()) for line in rate.get_lines())
        assert long == short + 3
        assert tail.get_shared_x_axes().joined(rate, tail)
    # One y scale for the figure, so heights compare across the kinds.
    assert axes[0].get_shared_y_axes().joined(axes[0], axes[2])
    assert not axes[0].get_shared_x_axes().joined(axes[0], axes[2])


def test_one_target_draws_its_iterations_as_lines():
    from hpcio.results.schema import TimeSeries

    doc = results_io.read(recorded.V1 / "file-timed.jsonl")[0]
    series = next(p.series for p in doc.phases if p.phase == "write")
    again = [dataclasses.replace(p, iteration=1) for p in doc.phases]
    twice = dataclasses.replace(doc, phases=doc.phases + tuple(again))
    (panel,) = plots.panels_by_kind([twice], "write")
    assert [label for label, _ in panel.lines] == ["iteration 0", "iteration 1"]
    assert all(isinstance(s, TimeSeries) and s == series for _, s in panel.lines)


def with_read_series(doc, intervals):
    """`doc` with its read phases' series cut to `intervals` intervals, as a phase shorter than
    the engine's 10 ms buckets records one."""
    phases = []
    for phase in doc.phases:
        if phase.phase == "read" and phase.series is not None:
            series = phase.series
            cut = dataclasses.replace(
                series, mib_s=series.mib_s[:intervals], p99_s=series.p99_s[:intervals]
            )
            phase = dataclasses.replace(phase, series=cut)
        phases.append(phase)
    return dataclasses.replace(doc, phases=tuple(phases))


def test_over_time_of_phases_too_short_to_draw_is_skipped_with_a_note(results):
    short = [with_read_series(doc, 1) for doc in results_io.read(results.timed)]
    made = plots.report_plots(short)
    names = [p.name for p in made.plots]
    assert "over-time-write" in names and "over-time-read" not in names
    assert made.skipped[0] == (
        "read over time: skipped, every read phase is too short to draw (fewer than 2 "
        "intervals of the engine's 10 ms)"
    )


def test_over_time_leaves_out_the_runs_too_short_to_draw(results):
    long, short = results_io.read(results.timed)
    made = plots.report_plots([long, with_read_series(short, 1)])
    (plot,) = [p for p in made.plots if p.name == "over-time-read"]
    rate, _ = plot.figure.axes
    assert len(rate.get_lines()) == 1
    assert made.skipped[0] == (
        "read over time: 1 run(s) left out, their read phase too short to draw (fewer than 2 "
        "intervals of the engine's 10 ms)"
    )


def test_a_repeated_point_is_drawn_from_all_its_runs(results):
    docs = results_io.read(results.combined("repeated.jsonl", results.a, results.again))
    (plot,) = [p for p in plots.report_plots(docs).plots if p.name == "bandwidth-vs-size-write"]
    drawn = curves(plot.figure)
    assert len(drawn) == 2  # sfmw and mfmw, each measured twice at every size
    for pattern in ("sfmw", "mfmw"):
        chosen = [d for d in docs if d.workload == pattern]
        xs, means, bars = drawn[label(chosen[0])]
        for x, mean, (low, high) in zip(xs, means, bars, strict=True):
            rates = [
                p.bandwidth_bytes_per_s / (1 << 20)
                for d in chosen
                if d.params["size_per_rank_bytes"] == x
                for p in d.phases
                if p.phase == "write"
            ]
            assert len(rates) == 2 + 3
            assert mean == pytest.approx(sum(rates) / len(rates), rel=1e-12)
            assert (low, high) == pytest.approx((min(rates), max(rates)), rel=1e-12)


def test_vs_ranks_needs_a_configuration_at_two_rank_counts():
    """One rank on t1 and two on t2: two rank counts, but no line would have two points."""
    docs = [*results_io.read(recorded.V1 / "file-1rank.jsonl"),
            *results_io.read(recorded.V1 / "file-t2-2ranks.jsonl")]  # fmt: skip
    made = plots.report_plots(docs)
    assert not [p for p in made.plots if p.name.startswith("bandwidth-vs-ranks")]
    assert (
        "bandwidth vs ranks (write): skipped, no configuration ran at two rank counts or more"
        in (made.skipped)
    )


def test_plot_file_names_are_shell_safe():
    """IOzone's tests have spaces in their names ('random read'): its CDF plots do not."""
    docs = results_io.read(recorded.V1 / "profile-iozone.jsonl")
    names = [p.name for p in plots.report_plots(docs).plots]
    assert "latency-cdf-iozone-random-read-read" in names
    assert all(re.fullmatch(r"[A-Za-z0-9._-]+", name) for name in names), names
    assert plots.file_safe("volume zarr(blosc) collective") == "volume-zarr-blosc-collective"
