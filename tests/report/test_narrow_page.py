"""The report page and its plots on a phone's width (390 px) and a laptop's (1280 px): nothing
is cut off or drawn over, small text is not shrunk past reading."""

import html
import json
import re

import pytest
from hpcio.report import html as report_html
from hpcio.report import plots, summary
from hpcio.results import io as results_io

#: A plot's text is 10 pt at the figure's size; below this rendered width (CSS px) of an
#: 8-inch figure it falls under about 9 px.
LEGIBLE_PLOT_PX = 500


def layout(page_path, chromium, tmp_path, parse_page, width):
    """Chromium's layout of the page in a viewport `width` px wide: the page's scroll width,
    and each plot's rendered width and its box's (the figure's) visible width. Headless
    Chromium's window is never narrower than 500 px, so the page is laid out in an iframe of
    that width, and posts what it measured to the frame's parent."""
    text = page_path.read_text()
    text = text.replace("default-src 'none';", "default-src 'none'; script-src 'unsafe-inline';")
    probe = (
        "<script>window.addEventListener('load', () => { const images = {};"
        "for (const img of document.images) images[img.id] ="
        " [img.getBoundingClientRect().width, img.parentElement.clientWidth];"
        "parent.postMessage(JSON.stringify({viewport: window.innerWidth,"
        " scroll: document.documentElement.scrollWidth, images}), '*'); });</script>"
    )
    probed = tmp_path / f"probed-{width}.html"
    probed.write_text(text.replace("</body>", probe + "</body>"))
    frame = tmp_path / f"frame-{width}.html"
    frame.write_text(
        "<!doctype html><html><body><script>window.addEventListener('message', (e) =>"
        " document.body.setAttribute('data-layout', e.data));</script>"
        f'<iframe src="{probed.name}" style="width:{width}px;height:2000px;border:0"></iframe>'
        "</body></html>"
    )
    dom = chromium(
        f"--window-size={max(width, 500) + 20},2100",
        "--allow-file-access-from-files",
        "--virtual-time-budget=20000",
        "--dump-dom",
        url=frame.as_uri(),
    ).stdout
    found = re.search(r'data-layout="([^"]*)"', dom)
    assert found, "the page posted no layout"
    measured = json.loads(html.unescape(found.group(1)))
    assert measured["viewport"] == width
    return measured["scroll"], measured["images"]


@pytest.fixture(scope="module")
def page(results, hpcio, tmp_path_factory):
    path = tmp_path_factory.mktemp("narrow") / "report.html"
    done = hpcio("report", results.combined("narrow.jsonl", results.a, results.t2_file),
                 "--html", path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return path


@pytest.mark.parametrize("width", [390, 1280])
def test_the_page_never_scrolls_sideways_and_plots_stay_legible(
    page, chromium, tmp_path, parse_page, width
):
    scroll_width, images = layout(page, chromium, tmp_path, parse_page, width)
    # Wide tables and plots scroll inside their own boxes; the page itself fits the screen.
    assert scroll_width <= width
    assert images
    for name, (shown_px, box_px) in images.items():
        assert box_px <= width, name
        if not name.startswith("plot-headline"):
            assert shown_px >= LEGIBLE_PLOT_PX, (name, shown_px)


def test_legends_go_under_the_axes_and_the_figure_grows_for_them(results):
    docs = results_io.read(results.combined("legend.jsonl", results.a, results.t2_file))
    series = plots.series_by_point(docs, "write", without="size_per_rank_bytes")
    figure = plots.bandwidth_vs_size(series, "write")
    (legend,) = figure.legends
    assert figure.axes[0].get_legend() is None
    assert [t.get_text() for t in legend.get_texts()] == [one.label for one in series]
    few = plots.bandwidth_vs_size(series[:1], "write")
    assert figure.get_size_inches()[1] > few.get_size_inches()[1]


def test_the_headline_names_each_bar_above_it_not_beside(results):
    docs = results_io.read(results.a)
    figure = summary.headline(docs, "write").figure
    (axes,) = figure.axes
    # Names beside the bars would take half the width; above them the bars keep it all.
    assert not [t.get_text() for t in axes.get_yticklabels() if t.get_text()]
    names = [t.get_text() for t in axes.texts if " on " in t.get_text()]
    assert (
        len(names) == len(axes.patches) == len({(d.workload, d.run["target"]["url"]) for d in docs})
    )


def test_a_cdf_within_two_decades_labels_only_2_and_5(results):
    docs = results_io.read(results.a)
    figure = plots.latency_cdf(plots.series_by_point(docs, "write"), "write")
    (axes,) = figure.axes
    axes.set_xlim(1.5e-4, 8e-3)
    figure.canvas.draw()
    shown = [t.get_text() for t in axes.get_xticklabels(minor=True) if t.get_text()]
    assert shown
    assert all(label.startswith(("$\\mathdefault{2", "$\\mathdefault{5")) for label in shown)
    axes.set_xlim(1e-6, 1e-2)
    figure.canvas.draw()
    assert not [t.get_text() for t in axes.get_xticklabels(minor=True) if t.get_text()]


def test_printed_figures_in_a_family_grid_never_break():
    table = report_html._table(["Dir create", "Target"], [["1,126,961", "file:///a/b"]])
    assert '<td class="num">1,126,961</td>' in table
    assert "<td>file:///a/b</td>" in table
