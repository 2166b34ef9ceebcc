"""`hpcio report --format rows`: every run and phase as one flat CSV row, read by pandas in
one line, its figures those of the documents."""

import io

import pandas as pd
import pytest
import recorded
from hpcio.report.rows import redacted_url, rows
from hpcio.report.tables import study_tables
from hpcio.results import io as results_io

FILES = (
    recorded.V1 / "s3-2ranks.jsonl",
    recorded.V1 / "file-t2-2ranks.jsonl",
    recorded.V1 / "profile-all.jsonl",
)


@pytest.fixture(scope="module")
def docs():
    return [doc for path in FILES for doc in results_io.read(path)]


@pytest.fixture(scope="module")
def frame(hpcio):
    done = hpcio("report", *FILES, "--format", "rows")
    assert done.returncode == 0, done.stderr
    return pd.read_csv(io.StringIO(done.stdout))


def test_one_row_per_run_and_phase(docs, frame):
    assert len(frame) == sum(len(doc.summary) for doc in docs)
    assert list(frame.columns[:6]) == [
        "run", "phase", "iteration", "workload", "target_kind", "target_url",
    ]  # fmt: skip
    for number, doc in enumerate(docs, start=1):
        mine = frame[frame.run == number]
        assert sorted(mine.phase) == sorted(doc.summary)
        assert set(mine.target_url) == {doc.run["target"]["url"]}
        assert set(mine.target_kind) == {doc.run["target"]["kind"]}
        assert set(mine.workload) == {doc.workload}


def test_both_bandwidths_are_the_documents(docs, frame):
    for number, doc in enumerate(docs, start=1):
        for phase, summary in doc.summary.items():
            row = frame[(frame.run == number) & (frame.phase == phase)].iloc[0]
            assert row.bandwidth_mean_of_iterations_mib_s == pytest.approx(
                summary.bandwidth_mib_s.mean
            )
            assert row.phase_time_mean_s == pytest.approx(summary.seconds.mean)
            expected = summary.bytes_total / (1 << 20) / summary.seconds.mean
            assert row.bandwidth_bytes_over_mean_time_mib_s == pytest.approx(expected)
            assert row.op_latency_p99_s == pytest.approx(summary.latency.p99_s)
            ops = sum(p.ops_total for p in doc.phases if p.phase == phase) / summary.iterations
            assert row.ops_per_s == pytest.approx(ops / summary.seconds.mean)


def test_the_studies_bandwidth_is_the_tables(docs, frame):
    """The rows' bytes-over-mean-time bandwidth is the Bandwidth of the s3 run's table."""
    s3 = [d for d in docs if d.run["target"]["kind"] == "s3" and d.workload == "mfmw"][:1]
    (table,) = [t for t in study_tables(s3) if t.title.startswith("mfmw write")]
    bandwidth = table.rows[0][table.kinds.index("bandwidth")]
    (row,) = [r for r in rows(s3) if r["phase"] == "write"]
    assert row["bandwidth_bytes_over_mean_time_mib_s"] == pytest.approx(bandwidth)


def test_object_stores_count_objects_per_second(frame):
    writes = frame[(frame.target_kind == "s3") & (frame.phase == "write")]
    assert (writes.objects_per_s > 0).all()
    assert frame[frame.target_kind == "posix"].objects_per_s.isna().all()


def test_rows_per_iteration(docs, hpcio):
    done = hpcio("report", FILES[0], "--format", "rows", "--per-iteration")
    assert done.returncode == 0, done.stderr
    frame = pd.read_csv(io.StringIO(done.stdout))
    s3 = results_io.read(FILES[0])
    assert len(frame) == sum(len(doc.phases) for doc in s3)
    first = s3[0].phases[0]
    row = frame[(frame.run == 1) & (frame.iteration == first.iteration)]
    row = row[row.phase == first.phase].iloc[0]
    assert row.phase_time_mean_s == pytest.approx(first.phase_time_s)
    assert row.bandwidth_mean_of_iterations_mib_s == pytest.approx(
        first.bandwidth_bytes_per_s / (1 << 20)
    )


def test_per_iteration_needs_rows(hpcio, error_line):
    done = hpcio("report", FILES[0], "--per-iteration")
    assert done.returncode == 2
    assert error_line(done) == "hpcio: error: --per-iteration is for --format rows"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("s3://bucket/prefix", "s3://bucket/prefix"),
        ("az://c/p?sv=2024&sig=abc123", "az://c/p?sv=REDACTED&sig=REDACTED"),
        ("s3://user:secret@host/b", "s3://user:REDACTED@host/b"),
        ("file:///scratch/run1", "file:///scratch/run1"),
    ],
)
def test_urls_carry_no_secret(url, shown):
    assert redacted_url(url) == shown
