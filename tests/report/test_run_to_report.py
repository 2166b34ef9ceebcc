"""The path from a real run to its report, comparison and cost: a 2-rank sweep (mpiexec)
written by this hpcio, read back by each command. The other report tests read recorded
documents (tests/data/v1); this one keeps what this hpcio writes readable by them."""

import json

import pytest
from hpcio.results import io as results_io

pytestmark = pytest.mark.mpi

MiB = 1 << 20


@pytest.fixture(scope="module")
def swept(tmp_path_factory, hpcio, file_url):
    root = tmp_path_factory.mktemp("run-to-report")
    target = root / "target"
    target.mkdir()
    out = root / "sweep.jsonl"
    done = hpcio("sweep", "--pattern", "sfmw,mfmw", "--sizes", "1MiB..2MiB", "-n", "2",
                 "-i", "2", "--transfer", "256KiB", "-q", "--target", file_url(target),
                 "-o", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return out


def test_report_tables_hold_the_runs_figures(swept, hpcio):
    docs = results_io.read(swept)
    assert len(docs) == 4 and {d.ranks for d in docs} == {2}
    done = hpcio("report", swept, "--format", "json")
    assert (done.returncode, done.stderr) == (0, "")
    tables = {t["title"]: t for t in json.loads(done.stdout)}
    on = f"on {docs[0].run['target']['url']}"
    assert sorted(tables) == [f"{name} {on}" for name in
                              ("mfmw read", "mfmw write", "sfmw read", "sfmw write")]  # fmt: skip
    for doc in docs:
        for phase, summary in doc.summary.items():
            rows = tables[f"{doc.run['workload']} {phase} {on}"]["rows"]
            (row,) = [r for r in rows if r[1] == doc.run["params"]["size_per_rank_bytes"] / MiB]
            assert row[2] == summary.seconds.mean


def test_compare_cost_and_html_read_the_run(swept, hpcio, tmp_path):
    done = hpcio("compare", swept, swept, "--format", "json")
    assert done.returncode == 0, done.stderr
    assert {p["ratio"] for p in json.loads(done.stdout)["points"]} == {1.0}
    done = hpcio("cost", swept, "--as", "s3", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["runs"]) == 4
    page = tmp_path / "page.html"
    done = hpcio("report", swept, "--html", page)
    assert (done.returncode, done.stdout) == (0, f"{page}\n"), done.stderr
    assert page.read_text().endswith("</html>\n")
