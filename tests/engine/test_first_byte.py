"""Time to first byte and request rates (engine/src/first_byte.rs, runner/aggregate.py): every
object-store phase reports them beside per-op latency; under a delay, TTFB shows the delay."""

import json

import pytest
from hpcio.report.rows import rows
from hpcio.results import io as results_io
from hpcio.results.schema import ResultDocument

DELAY_S = 0.02
#: HDR histograms keep 3 significant digits: a value may read as low as this much under it.
HDR_SLACK = 1e-3


@pytest.fixture(scope="module")
def delayed_run(hpcio, tmp_path_factory):
    out = tmp_path_factory.mktemp("ttfb") / "r.jsonl"
    done = hpcio("run", "--pattern", "mfmw", "--target", "null://?delay=20ms", "-n", "1",
                        "--size-per-rank", "4MiB", "--transfer", "1MiB", "--in-flight", "2",
                        "-i", "2", "-o", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return out, done.stdout


def test_ttfb_p50_shows_the_delay_of_every_get_and_put(delayed_run):
    out, _ = delayed_run
    doc = json.loads(out.read_text().splitlines()[0])
    assert doc["schema_version"] == 3
    for phase in doc["phases"]:
        name = "get" if phase["phase"] == "read" else "put"
        other = "put" if name == "get" else "get"
        ttfb = phase[f"ttfb_{name}"]
        assert ttfb["count"] == 4, phase["phase"]  # one per transfer
        # A lower bound only: a loaded machine makes requests later, never earlier.
        assert ttfb["p50_s"] >= DELAY_S * (1 - HDR_SLACK)
        assert ttfb["p99_s"] >= ttfb["p50_s"]
        assert phase[f"ttfb_{other}"] is None and phase[f"ttfb_{other}_hdr_b64"] is None
        requests = sum(phase["requests"].values())
        assert phase["requests_per_s"] == pytest.approx(requests / phase["phase_time_s"])
        assert phase["objects_per_s"] == pytest.approx(1 / phase["phase_time_s"])
    summary = doc["summary"]
    assert summary["write"]["ttfb_put"]["count"] == 8  # both iterations' histograms merged
    assert summary["read"]["ttfb_get"]["count"] == 8
    assert summary["read"]["requests_per_s"]["mean"] > 0


def test_console_rows_and_document_reader_show_it(delayed_run):
    out, stdout = delayed_run
    progress = [line for line in stdout.splitlines() if line.startswith("  iter ")]
    assert len(progress) == 4 and all("TTFB " in line and " req/s" in line for line in progress)
    assert any(line.startswith("  requests: write: TTFB put p50 ") for line in stdout.splitlines())
    docs = results_io.read(out)
    found = {row["phase"]: row for row in rows(docs)}
    assert found["read"]["ttfb_get_p50_s"] >= DELAY_S * (1 - HDR_SLACK)
    assert found["write"]["ttfb_put_p99_s"] >= DELAY_S * (1 - HDR_SLACK)
    assert "ttfb_get_p50_s" not in found["write"]
    assert found["read"]["requests_per_s"] > 0
    assert found["read"]["objects_per_s"] > 0  # objects opened, where none were completed


def test_posix_phases_have_no_ttfb(hpcio, target_dir, file_url, tmp_path):
    out = tmp_path / "r.jsonl"
    done = hpcio("run", "--pattern", "mfmw", "--target", file_url(target_dir), "-n", "1",
                 "--size-per-rank", "1MiB", "-q", "-o", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = results_io.read(out)[0]
    assert all(p.ttfb_get is None and p.ttfb_put is None for p in doc.phases)
    assert all(p.requests_per_s and p.requests_per_s > 0 for p in doc.phases)
    assert not any(name.startswith("ttfb_") for row in rows([doc]) for name in row)
    assert "TTFB" not in done.stdout


def test_a_version_2_document_still_reads(delayed_run, tmp_path):
    out, _ = delayed_run
    record = json.loads(out.read_text().splitlines()[0])
    record["schema_version"] = 2
    for phase in record["phases"]:
        for name in ("ttfb_get", "ttfb_get_hdr_b64", "ttfb_put", "ttfb_put_hdr_b64",
                     "requests_per_s", "objects_per_s"):  # fmt: skip
            del phase[name]
    for summary in record["summary"].values():
        for name in ("ttfb_get", "ttfb_put", "requests_per_s", "objects_per_s"):
            del summary[name]
    old = tmp_path / "v2.jsonl"
    old.write_text(json.dumps(record) + "\n")
    doc = results_io.read(old)[0]
    assert doc.schema_version == 2 and doc.phases[0].ttfb_put is None
    assert not any(name.startswith("ttfb_") for row in rows([doc]) for name in row)
    assert ResultDocument.from_dict(record).summary["read"].ttfb_get is None


def test_every_table_format_notes_it_under_the_object_store_table(delayed_run):
    from hpcio.report.tables import render, study_tables

    out, _ = delayed_run
    tables = study_tables(results_io.read(out))
    notes = {t.title.split(" on ")[0]: t.notes for t in tables}
    (read,) = [n for n in notes["mfmw read"] if n.startswith("time to first byte")]
    p50_ms = float(read.split("p50 ")[1].split(" ms")[0])
    assert p50_ms >= DELAY_S * 1e3 * (1 - HDR_SLACK) and "requests/s" in read
    assert "GETs" in read and any("PUTs" in n for n in notes["mfmw write"])
    for fmt in ("md", "json"):
        assert "time to first byte on null://?delay=20ms" in render(tables, fmt)
