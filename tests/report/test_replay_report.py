"""A replay's document (tests/data/replay: the test trace of tests/replay_logs.py replayed on
versitygw with 2 ranks) in `hpcio report` and `hpcio cost`: the read phase moved 16 KiB of
files holding 20 MiB, so its bandwidth is what it moved over its time. Its log's path was
made /nonexistent/replayed-trace after the run: reports and prices never need the log."""

from pathlib import Path

from hpcio.report.tables import study_tables
from hpcio.results import io as results_io

DOC = Path(__file__).resolve().parents[1] / "data" / "replay" / "trace-s3-2ranks.jsonl"
MiB = 1 << 20


def test_a_replays_bandwidth_is_what_its_phase_moved_over_its_time():
    (doc,) = results_io.read(DOC)
    tables = {t.title: t for t in study_tables([doc])}
    read = tables[f"replay replayed-trace read on {doc.run['target']['url']}"]
    phase = next(p for p in doc.phases if p.phase == "read")
    row = dict(zip(read.columns, read.rows[0], strict=True))
    assert phase.bytes_total == 4 * 4096
    assert row["Moved Per Iteration (MiB)"] * MiB == phase.bytes_total
    assert abs(row["Bandwidth (MiB/s)"] - phase.bytes_total / MiB / phase.phase_time_s) < 1e-9


def test_cost_bills_a_replays_requests_by_kind(hpcio):
    priced = hpcio("cost", DOC)
    assert priced.returncode == 0, priced.stderr
    assert "put 5, get 4, create_multipart 2, upload_part 4, complete_multipart 2" in priced.stdout
    assert "put_copy_post_list 13, get_select_other 4" in priced.stdout
