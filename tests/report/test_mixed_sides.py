"""A mixed phase's sides (--rwmix-read) in every output: the documents read back, the rows,
the study tables' notes, the console summary, the profile tables and `compare`; documents
without a mixed phase read and show as before."""

import json
import re
from pathlib import Path

import pytest
import recorded
from hpcio.live.console import summary
from hpcio.report.profiles import bandwidth_table, latency_table
from hpcio.report.rows import rows
from hpcio.report.tables import study_tables
from hpcio.results import io as results_io

MIXED = Path(__file__).resolve().parents[1] / "data" / "mixed" / "file-2ranks.jsonl"
MiB = float(1 << 20)


@pytest.fixture(scope="module")
def docs():
    return results_io.read(MIXED)


def test_each_iteration_and_the_summary_keep_both_sides(docs):
    for doc in docs:
        for phase in doc.phases:
            read, write = phase.read_side, phase.write_side
            assert read.ops_total + write.ops_total == phase.ops_total
            assert read.bytes_total + write.bytes_total == phase.bytes_total
            expected = read.bytes_total / phase.phase_time_s
            assert read.bandwidth_bytes_per_s == pytest.approx(expected)
            assert read.latency.count == read.ops_total
        side = doc.summary["mixed"].read_side
        assert side.ops_total == doc.phases[0].read_side.ops_total
        assert side.bandwidth_mib_s.mean == pytest.approx(
            sum(p.read_side.bandwidth_bytes_per_s for p in doc.phases) / len(doc.phases) / MiB
        )


def test_older_documents_have_no_sides():
    (doc, *_) = results_io.read(recorded.V1 / "file-2ranks.jsonl")
    assert all(p.read_side is None and p.write_side is None for p in doc.phases)
    assert all(s.read_side is None for s in doc.summary.values())
    assert not any(name.startswith("read_") for row in rows([doc]) for name in row)


def test_rows_hold_each_side(docs):
    (row, _) = rows(docs)
    doc = docs[0]
    reads = doc.phases[0].read_side.ops_total
    writes = doc.phases[0].write_side.ops_total
    assert row["read_ops_per_iteration"] == reads and row["write_ops_per_iteration"] == writes
    assert row["read_share_percent"] == pytest.approx(100 * reads / (reads + writes))
    assert row["read_bandwidth_mib_s"] == pytest.approx(
        doc.summary["mixed"].read_side.bandwidth_mib_s.mean
    )
    assert row["write_op_latency_p99_s"] > 0


def test_the_study_table_and_the_console_say_both_sides(docs):
    (table, *_) = study_tables(docs[:1])
    (note,) = [n for n in table.notes if n.startswith("mixed on")]
    assert "read " in note and "write " in note and "% of operations reads" in note
    said = summary(docs[0])
    assert "mixed  read " in said and "write " in said and "% reads)" in said


def test_the_profile_tables_add_the_mixed_rows(docs):
    bandwidth = bandwidth_table(docs[1:])
    mean = docs[1].summary["mixed"].write_side.bandwidth_mib_s.mean
    assert re.search(rf"\| Mixed writes: +\| +{mean:.2f} \|", bandwidth)
    assert "Mixed reads 99%:" in latency_table(docs[1:])


def test_compare_compares_each_side(hpcio, docs):
    done = hpcio("compare", MIXED, MIXED, "--metric", "write-bandwidth", "--format", "json")
    assert done.returncode == 0, done.stderr
    points = json.loads(done.stdout)["points"]
    assert len(points) == 2
    for point in points:
        assert point["ratio"] == pytest.approx(1.0)
    means = sorted(p["a"]["mean"] for p in points)
    expected = sorted(d.summary["mixed"].write_side.bandwidth_mib_s.mean for d in docs)
    assert means == pytest.approx(expected)


def test_compare_refuses_a_side_of_files_without_a_mixed_phase(hpcio):
    old = recorded.V1 / "file-2ranks.jsonl"
    done = hpcio("compare", old, old, "--metric", "read-bandwidth")
    assert done.returncode == 2
    assert done.stderr.strip().endswith(
        "holds no mixed phases (--rwmix-read); compare bandwidth instead"
    )


def test_the_html_report_has_a_row_for_each_side(page_of):
    pytest.importorskip("matplotlib")
    text = page_of(MIXED)
    # Each run's table row and its detail row, for each side.
    assert text.count(">mixed: reads<") == 4 and text.count(">mixed: writes<") == 4


def test_a_mixed_rows_reads_say_whether_they_may_be_ram(docs):
    import dataclasses

    # A mixed phase's reads count as reads, as the run's page-cache record counts them.
    for cached in (False, True):
        doc = dataclasses.replace(
            docs[0], cache=dataclasses.replace(docs[0].cache, reads_may_hit_page_cache=cached)
        )
        (row,) = rows([doc])
        assert row["phase"] == "mixed"
        assert row["reads_may_hit_page_cache"] is cached
