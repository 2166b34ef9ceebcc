"""mdtest's documents in every output: the console's summary, `report` (markdown, HTML) and
`compare` show its rates of calls, and no bandwidth of bytes it never counts (issue 29)."""

import json
import re
from pathlib import Path
from statistics import fmean

import pytest
from hpcio.live.console import progress_line, summary
from hpcio.results.io import read as read_documents
from hpcio.runner.pagecache import WRITE_CACHE_WARNING
from hpcio.units import format_bytes
from hpcio.workloads import registry
from hpcio.workloads.mdtest import rates

RECORDED = (
    Path(__file__).resolve().parents[1] / "data" / "mdtest" / "two-ranks-two-iterations.jsonl"
)


def test_the_console_says_rates_not_bandwidth():
    (doc,) = read_documents(RECORDED)
    text = summary(doc)
    assert "MiB/s" not in text  # no bandwidth line, table or figure
    lines = text.splitlines()
    (head,) = [i for i, line in enumerate(lines) if "mdtest (ops/s)" in line]
    made = [title for key, title in rates.PHASES if f"{key}_ops_per_s" in doc.phases[0].metrics]
    assert [line.split("  ")[1].strip() for line in lines[head + 1 : head + 1 + len(made)]] == made
    line = progress_line(doc.phases[1], 2, registry.get("mdtest"))
    assert line.startswith("  iter 2/2  ops/s: tree create ")
    assert "MiB/s" not in line


def test_a_pattern_keeps_its_bandwidth_line():
    (doc,) = read_documents(Path(__file__).parents[1] / "data" / "null" / "mfmw-one-rank.jsonl")
    line = progress_line(doc.phases[0], 1, registry.get("mfmw"))
    assert "MiB/s" in line
    assert summary(doc).splitlines()[0].startswith("  phase  bandwidth (MiB/s)")


def test_report_shows_the_rates_table_and_no_bandwidth_table(hpcio):
    done = hpcio("report", RECORDED)
    assert done.returncode == 0, done.stderr
    assert "metadata rates (mdtest" in done.stdout
    assert "Bandwidth" not in done.stdout


def test_the_html_page_ranks_no_bandwidth_of_mdtest(hpcio, tmp_path, parse_page):
    page = tmp_path / "page.html"
    done = hpcio("report", RECORDED, "--html", page)
    assert done.returncode == 0, done.stderr
    parsed = parse_page(page.read_text())
    assert "best and worst runs" not in parsed.text
    assert "metadata rates (mdtest" in parsed.text
    _, (row,) = parsed.rows("runs")
    assert row["Bandwidth (MiB/s)"][0] == "-"


def scaled_rates(out, factor, phase):
    """The recorded document with `phase`'s rate in every iteration scaled by `factor`."""
    record = json.loads(RECORDED.read_text())
    for figures in record["phases"]:
        figures["metrics"][f"{phase}_ops_per_s"] *= factor
    out.write_text(json.dumps(record) + "\n")
    return out


def test_compare_ops_pairs_each_mdtest_phase(hpcio, tmp_path):
    faster = scaled_rates(tmp_path / "b.jsonl", 3.0, "file_create")
    done = hpcio("compare", RECORDED, faster, "--metric", "ops", "--format", "json")
    assert (done.returncode, done.stderr) == (0, "")
    points = {p["phase"]: p for p in json.loads(done.stdout)["points"]}
    raw = json.loads(RECORDED.read_text())
    made = [key for key, _ in rates.PHASES if f"{key}_ops_per_s" in raw["phases"][0]["metrics"]]
    assert list(points) == made
    expected = fmean(p["metrics"]["file_create_ops_per_s"] for p in raw["phases"])
    assert points["file_create"]["a"]["mean"] == pytest.approx(expected)
    assert points["file_create"]["ratio"] == pytest.approx(3.0)
    assert points["dir_stat"]["ratio"] == pytest.approx(1.0)


def test_compare_bandwidth_of_mdtest_alone_names_the_metric(hpcio, error_line):
    done = hpcio("compare", RECORDED, RECORDED)
    assert done.returncode == 2
    assert error_line(done).endswith("give --metric ops")


def test_compare_ops_without_mdtest_is_refused(hpcio, error_line):
    pattern = Path(__file__).parents[1] / "data" / "null" / "mfmw-one-rank.jsonl"
    done = hpcio("compare", pattern, RECORDED, "--metric", "ops")
    assert done.returncode == 2
    assert "holds no mdtest runs" in error_line(done)


@pytest.mark.parametrize(
    ("more", "warned"),
    [
        ((), False),
        (("--write-bytes", "1KiB"), True),
        # mdtest -y: each file synced before its close.
        (("--write-bytes", "1KiB", "--fsync"), False),
    ],
)
def test_the_write_page_cache_warning_only_where_files_hold_bytes(
    hpcio, target_dir, tmp_path, more, warned
):
    out = tmp_path / "r.jsonl"
    done = hpcio("run", "--workload", "mdtest", "--target", f"file://{target_dir}",
                 "--items", "20", "-o", out, *more)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (doc,) = read_documents(out)
    found = [w for w in doc.warnings if w.startswith(WRITE_CACHE_WARNING)]
    assert bool(found) == warned
    assert any(line.startswith(f"  warning: {WRITE_CACHE_WARNING}") for line in
               done.stdout.splitlines()) == warned  # fmt: skip
    if warned:
        # 20 files of 1 KiB on the one rank's node.
        assert f"{WRITE_CACHE_WARNING}: {format_bytes(20 * 1024)} per node" in found[0]


def test_an_object_stores_phases_in_the_order_they_ran_and_no_cpu_per_gib(hpcio):
    done = hpcio("run", "--workload", "mdtest", "--target", "memory://", "--items-kind", "files",
                 "--write-bytes", "1", "--read-bytes", "1", "--items", "20")  # fmt: skip
    assert done.returncode == 0, done.stderr
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("  iter 1/1")]
    # PUT, LIST, GET, DELETE: the order objects.run_objects makes them.
    rate = r"[\d,]+"
    assert re.fullmatch(
        rf"  iter 1/1  ops/s: file create {rate} list {rate} read {rate} remove {rate}  "
        r"\([\d.]+ s\)",
        line,
    )
    # 20 one-byte objects: a CPU time per GiB of them would say nothing.
    assert "CPU-s/GiB" not in done.stdout
    assert "of a core per rank" in done.stdout


def test_a_report_of_only_mdtest_runs_opens_with_its_table(hpcio):
    done = hpcio("report", RECORDED)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("### metadata rates (mdtest")


def test_a_client_bound_mdtest_run_is_warned_of_its_rates_not_a_bandwidth():
    from hpcio.runner.cpu import client_bound_warning

    mdtest = registry.get("mdtest")
    assert not mdtest.shows_bandwidth
    said = client_bound_warning("write", 2, 2, "rates of calls (ops/s)")
    assert "bandwidth" not in said
    assert said.endswith("its rates of calls (ops/s) measure the client's CPU, not the storage")
    assert "the write bandwidth measures the client's CPU" in client_bound_warning("write", 1, 2)
