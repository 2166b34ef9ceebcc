import base64
import json
import re

import pytest
from hpcio.report import plots
from hpcio.results import io as results_io

MiB = 1 << 20


@pytest.fixture(scope="module")
def report(results, hpcio, tmp_path_factory):
    """A page from two targets and two rank counts, and the documents it came from."""
    source = results.combined("html.jsonl", results.a, results.one, results.t2_file)
    page = tmp_path_factory.mktemp("html") / "report.html"
    done = hpcio("report", source, "--html", page)
    assert (done.returncode, done.stderr, done.stdout) == (0, "", f"{page}\n")
    return page, results_io.read(source)


def expected_plot_ids(docs):
    """The report's plots, and the summary's headline chart per phase."""
    headlines = {f"plot-headline-{phase}" for d in docs for phase in d.summary}
    return {f"plot-{p.name}" for p in plots.report_plots(docs).plots} | headlines


def check_study_tables(page, docs):
    """Every document's mean phase time and bandwidth, in its table, row and target column."""
    checked = 0
    for doc in docs:
        file_mib = doc.params["size_per_rank_bytes"] * doc.ranks / MiB
        per_proc_mib = doc.params["size_per_rank_bytes"] / MiB
        for phase, summary in doc.summary.items():
            url = doc.run["target"]["url"]
            names, rows = page.rows(page.study_table_id(f"{doc.workload} {phase}", url))
            latency_column = next(n for n in names if n in ("Latency (s)", f"{url} Latency (s)"))
            bandwidth_column = latency_column.replace("Latency (s)", "Bandwidth (MiB/s)")
            (row,) = [
                r
                for r in rows
                if r["File Size (MiB)"][0] == f"{file_mib:g}"
                and r["File Size Per Proc (MiB)"][0] == f"{per_proc_mib:g}"
            ]
            latency = summary.seconds.mean
            assert row[latency_column] == (f"{latency:.5f}", repr(latency))
            assert row[bandwidth_column][0] == f"{file_mib / latency:.3f}"
            checked += 1
    assert checked == 2 * len(docs)


def test_page_is_self_contained(report, parse_page):
    path, docs = report
    text = path.read_text()
    page = parse_page(text)
    assert "script" not in page.tags and "link" not in page.tags
    assert all(s.startswith(("data:image/svg+xml;base64,", "#")) for s in page.sources)
    assert not re.search(r"url\(|@import", text)
    assert "Content-Security-Policy" in text
    assert set(page.images) == expected_plot_ids(docs)


def test_tables_hold_the_measured_values(report, parse_page):
    path, docs = report
    check_study_tables(parse_page(path.read_text()), docs)


def headline(doc, phase):
    """Every output's headline bandwidth: bytes of an iteration over the mean phase time."""
    moved = [p.bytes_total for p in doc.phases if p.phase == phase]
    return sum(moved) / len(moved) / MiB / doc.summary[phase].seconds.mean


def test_runs_specs_environment_and_warnings(report, parse_page):
    path, docs = report
    page = parse_page(path.read_text())
    _, rows = page.rows("runs")
    _, folded = page.rows("runs-detail")
    assert len(rows) == len(folded) == sum(len(d.summary) for d in docs)
    for number, doc in enumerate(docs, start=1):
        for phase, summary in doc.summary.items():
            (row,) = [r for r in rows if r["Run"][0] == str(number) and r["Phase"][0] == phase]
            (more,) = [r for r in folded if r["Run"][0] == str(number) and r["Phase"][0] == phase]
            bandwidth = summary.bandwidth_mib_s
            assert float(row["Bandwidth (MiB/s)"][1]) == pytest.approx(headline(doc, phase))
            mean = more["Bandwidth mean of iterations (MiB/s)"]
            assert mean == (f"{bandwidth.mean:.3f}", repr(bandwidth.mean))
            assert row["Time mean (s)"][1] == repr(summary.seconds.mean)
            assert more["stddev"][1] == repr(bandwidth.stddev)
            assert more["p99 op (ms)"][1] == repr(summary.latency.p99_s * 1e3)
        spec_text = page.details[f"spec-{number}"]
        assert json.loads(spec_text[spec_text.index("{") :]) == doc.run
        if doc.cache.reads_may_hit_page_cache:
            for note in doc.cache.notes:
                assert note in page.text


def test_environment_has_a_row_per_job_shape(report, parse_page):
    path, docs = report
    _, rows = parse_page(path.read_text()).rows("environment")
    assert {d.ranks for d in docs} == {1, 2}
    assert len(rows) == 2
    for row in rows:
        ranks = int(row["Ranks"][0])
        shaped = [d for d in docs if d.ranks == ranks]
        doc = shaped[0]
        assert row["Hosts"][0] == ", ".join(doc.hosts)
        assert (row["Nodes"][0], row["Ranks per node"][0]) == (
            str(doc.nodes),
            str(doc.ranks_per_node),
        )
        assert row["hpcio"][0] == doc.hpcio_version
        assert row["Engine"][0] == "release"
        assert row["First start (UTC)"][0] == min(d.started_at_utc for d in shaped)
        assert row["Last end (UTC)"][0] == max(d.finished_at_utc for d in shaped)


def test_warnings_name_failures_interruptions_throttling_and_debug_builds(
    results, tmp_path, parse_page, page_of
):
    record = json.loads(results.a.read_text().splitlines()[0])
    record["phases"][0]["errors"] = 2
    record["phases"][0]["first_errors"] = ["rank 1: pwrite: No space left on device"]
    record["engine"]["debug_build"] = True
    record["status"] = "interrupted"
    record["summary"]["read"]["throttled"] = 3
    record["summary"]["read"]["retried"] = 5
    source = tmp_path / "doubtful.jsonl"
    source.write_text(json.dumps(record) + "\n")
    text = parse_page(page_of(source)).text
    assert (
        "write iteration 1: 2 failed operation(s): rank 1: pwrite: No space left on device" in text
    )
    assert "run 1: the engine was built without optimisation" in text
    title = f"run 1 (sfmw {results.t1.as_uri()} 1 MiB/rank 2 ranks)"
    assert f"{title}: interrupted: its figures hold only the iterations that finished" in text
    assert f"{title}: read: the store throttled 3 response(s); 5 request(s) were retried" in text


def loaded_images(page_path, chromium, tmp_path, parse_page):
    """Chromium's own view of every <img>: a copy of the page with a probe that records each
    image's decoded width once the page has loaded (scripts allowed, images still data: only)."""
    text = page_path.read_text()
    text = text.replace("default-src 'none';", "default-src 'none'; script-src 'unsafe-inline';")
    probe = (
        "<script>window.addEventListener('load', () => { for (const img of "
        "document.images) img.setAttribute('data-width', img.naturalWidth); });</script>"
    )
    probed = tmp_path / "probed.html"
    probed.write_text(text.replace("</body>", probe + "</body>"))
    dom = parse_page(chromium("--dump-dom", url=probed.as_uri()).stdout)
    return {name: int(attrs.get("data-width", 0)) for name, attrs in dom.images.items()}


def test_chromium_renders_every_plot_and_the_tables(report, chromium, tmp_path, parse_page):
    path, docs = report
    dom = parse_page(chromium("--dump-dom", url=path.as_uri()).stdout)
    assert set(dom.images) == expected_plot_ids(docs)
    check_study_tables(dom, docs)
    widths = loaded_images(path, chromium, tmp_path, parse_page)
    assert set(widths) == expected_plot_ids(docs)
    assert all(width > 100 for width in widths.values()), widths


def test_chromium_screenshot_shows_the_plots(report, chromium, tmp_path):
    from PIL import Image

    path, _ = report
    shot = tmp_path / "page.png"
    chromium(
        "--window-size=1300,6000", "--hide-scrollbars", f"--screenshot={shot}", url=path.as_uri()
    )
    image = Image.open(shot).convert("RGB")
    assert image.size == (1300, 6000)
    colours = {colour for _, colour in image.getcolors(maxcolors=1 << 24)}
    # Lines in matplotlib's first colours: the plots were drawn, not only their frames.
    assert (0x1F, 0x77, 0xB4) in colours
    assert (0xFF, 0x7F, 0x0E) in colours


def test_html_into_a_missing_directory_is_refused(results, hpcio, error_line, tmp_path):
    page = tmp_path / "no" / "page.html"
    done = hpcio("report", results.a, "--html", page)
    assert done.returncode == 2
    assert (
        error_line(done) == f"hpcio: error: --html {page}: directory {page.parent} does not exist"
    )
    assert not page.parent.exists()


def test_closed_stdout_still_writes_every_file(results, hpcio, tmp_path):
    # `hpcio report ... --html page.html | head -1`: the reader may go before the paths print.
    page = tmp_path / "page.html"
    # A time-based run is long enough to draw over time; its write phase alone has every kind
    # of figure (bandwidth and phase time vs size, latency CDF, over time), and draws quickly.
    run = json.loads(results.timed.read_text().splitlines()[0])
    del run["summary"]["read"]
    run["phases"] = [p for p in run["phases"] if p["phase"] == "write"]
    source = tmp_path / "closed.jsonl"
    source.write_text(json.dumps(run) + "\n")
    done = hpcio("report", source, "--html", page, "--plots", tmp_path, stdout_closed=True)
    assert "Traceback" not in done.stderr, done.stderr
    assert (done.returncode, done.stderr) == (0, "")
    text = page.read_text()
    assert text.endswith("</html>\n")
    names = ["bandwidth-vs-size-write", "latency-vs-size-write", "latency-cdf-mfmw-write",
             "over-time-write"]  # fmt: skip
    assert sorted(p.name for p in tmp_path.glob("*.??g")) == sorted(
        f"{name}.{fmt}" for name in names for fmt in ("png", "svg")
    )
    # Each figure drawn once: the page shows the very SVG --plots wrote.
    for name in names:
        svg = base64.b64encode((tmp_path / f"{name}.svg").read_bytes()).decode("ascii")
        assert f'id="plot-{name}" alt="' in text
        assert f'src="data:image/svg+xml;base64,{svg}"' in text


def test_a_crowded_node_is_a_warning(results, tmp_path, parse_page, page_of):
    lines = results.a.read_text().splitlines()
    crowded, roomy = json.loads(lines[0]), json.loads(lines[1])
    crowded["cores_per_node"], roomy["cores_per_node"] = 1, 2
    source = tmp_path / "crowded.jsonl"
    source.write_text(json.dumps(crowded) + "\n" + json.dumps(roomy) + "\n")
    text = parse_page(page_of(source)).text
    title = f"run 1 (sfmw {results.t1.as_uri()} 1 MiB/rank 2 ranks)"
    assert f"{title}: ranks outnumber cores: 2 ranks per node on 1 cores" in text
    # The warning for run 1 only, and the notes under its write and read tables.
    assert text.count("ranks outnumber cores") == 3


def test_time_based_tables_divide_the_bytes_moved(results, parse_page, page_of):
    page = parse_page(page_of(results.timed))
    for doc in results_io.read(results.timed):
        per_proc = f"{doc.params['size_per_rank_bytes'] / MiB:g}"
        for phase in ("write", "read"):
            table_id = page.study_table_id(f"mfmw {phase}", doc.run["target"]["url"])
            names, rows = page.rows(table_id)
            assert "Moved Per Iteration (MiB)" in names
            (row,) = [r for r in rows if r["File Size Per Proc (MiB)"][0] == per_proc]
            bandwidth = float(row["Bandwidth (MiB/s)"][1])
            assert bandwidth == pytest.approx(doc.summary[phase].bandwidth_mib_s.mean, rel=1e-9)


def test_the_page_opens_with_the_answer(report, parse_page):
    path, docs = report
    text = path.read_text()
    assert text.index('<section id="summary">') < text.index('<section id="warnings">')
    page = parse_page(text)
    for phase in ("write", "read"):
        assert f"plot-headline-{phase}" in page.images
        _, rows = page.rows(f"extremes-{phase}")
        speeds = sorted(
            ((headline(d, phase), n) for n, d in enumerate(docs, start=1)),
            reverse=True,
        )
        best = [r for r in rows if r[""][0] == "best"]
        worst = [r for r in rows if r[""][0] == "worst"]
        assert [r["Run"][0] for r in best] == [str(n) for _, n in speeds[:3]]
        assert worst[0]["Run"][0] == str(speeds[-1][1])
        assert float(best[0][f"{phase} MiB/s"][1]) == speeds[0][0]


def test_the_same_warning_about_several_runs_is_one_range(results, tmp_path, parse_page, page_of):
    lines = results.a.read_text().splitlines()
    crowded = [json.loads(line) for line in lines[:3]]
    for record in crowded:
        record["cores_per_node"] = 1
    source = tmp_path / "crowded.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in crowded))
    text = parse_page(page_of(source)).text
    assert "runs 1-3: ranks outnumber cores: 2 ranks per node on 1 cores" in text
    assert not re.search(r"run \d \([^)]*\): ranks outnumber cores", text)  # not one per run
