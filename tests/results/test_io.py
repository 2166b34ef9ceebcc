import json
import re
import statistics

import pytest
from hpcio.errors import ResultsError
from hpcio.results import io as results_io
from hpcio.results.schema import SCHEMA_VERSION, ResultDocument
from recorded import V1

MiB = 1 << 20


@pytest.fixture(scope="module")
def results(tmp_path_factory, hpcio, file_url):
    """One real two-iteration mfmw document, written by the CLI."""
    root = tmp_path_factory.mktemp("io")
    target = root / "target"
    target.mkdir()
    path = root / "results.jsonl"
    more = ["--pattern", "mfmw", "--size-per-rank", "1MiB", "--transfer", "256KiB", "-i", "2"]
    done = hpcio("run", *more, "--target", file_url(target), "-o", path)
    assert done.returncode == 0, done.stderr
    assert list(target.iterdir()) == []
    return path


@pytest.fixture(scope="module")
def record(results):
    lines = results.read_text().splitlines()
    assert len(lines) == 1
    return json.loads(lines[0])


def test_document_identity(record):
    assert record["schema_version"] == SCHEMA_VERSION == 3
    assert record["kind"] == "hpcio.result"
    assert (record["ranks"], record["nodes"], record["ranks_per_node"]) == (1, 1, 1)
    assert record["run"]["workload"] == "mfmw"
    assert record["run"]["params"]["size_per_rank_bytes"] == MiB
    assert record["run"]["params"]["transfer_bytes"] == 256 << 10
    assert record["run"]["target"]["kind"] == "posix"


def test_phases_per_iteration(record):
    phases = [(p["phase"], p["iteration"]) for p in record["phases"]]
    assert phases == [("write", 0), ("read", 0), ("write", 1), ("read", 1)]
    for p in record["phases"]:
        assert (p["bytes_total"], p["ops_total"], p["errors"], p["ranks"]) == (MiB, 4, 0, 1)
        assert p["latency"]["count"] == 4
        assert p["bandwidth_bytes_per_s"] == pytest.approx(MiB / p["phase_time_s"])


def test_per_rank_times(record):
    for p in record["phases"]:
        (only,) = p["per_rank"]
        assert (only["rank"], only["node"], only["bytes"]) == (0, 0, MiB)
        assert only["end_s"] - only["start_s"] == pytest.approx(p["phase_time_s"], abs=1e-9)
        assert only["transfer_s"] == pytest.approx(p["transfer_time_s"])
        assert only["open_s"] <= p["phase_time_s"] and only["close_s"] <= p["phase_time_s"]


def test_summary_statistics(record):
    for phase in ("write", "read"):
        s = record["summary"][phase]
        assert s["iterations"] == 2
        bandwidths = [
            p["bandwidth_bytes_per_s"] / MiB for p in record["phases"] if p["phase"] == phase
        ]
        bw = s["bandwidth_mib_s"]
        assert set(bw) == {"mean", "median", "min", "max", "stddev"}
        assert bw["mean"] == pytest.approx(statistics.fmean(bandwidths))
        assert bw["median"] == pytest.approx(statistics.median(bandwidths))
        assert (bw["min"], bw["max"]) == (min(bandwidths), max(bandwidths))
        assert bw["stddev"] == pytest.approx(statistics.pstdev(bandwidths))
        seconds = [p["phase_time_s"] for p in record["phases"] if p["phase"] == phase]
        assert s["seconds"]["mean"] == pytest.approx(statistics.fmean(seconds))
        assert s["latency"]["count"] == 8


def test_cache_record(record):
    cache = record["cache"]
    assert cache["direct_io"] is False
    assert cache["fsync_in_write_phase"] is False
    assert cache["caches_dropped"] is False
    assert cache["data_set_bytes"] == MiB
    assert cache["read_back_from"] == "data this rank wrote"
    assert "page cache not bypassed (no --direct)" in cache["notes"]


def test_read_gives_the_document(results, record):
    (doc,) = results_io.read(results)
    assert isinstance(doc, ResultDocument)
    assert json.loads(json.dumps(doc.to_dict())) == record
    assert (
        doc.summary["write"].bandwidth_mib_s.mean
        == record["summary"]["write"]["bandwidth_mib_s"]["mean"]
    )


def test_append_read_round_trip(results, tmp_path):
    (doc,) = results_io.read(results)
    path = tmp_path / "again.jsonl"
    results_io.append(path, doc)
    results_io.append(path, doc)
    assert len(path.read_text().splitlines()) == 2
    assert results_io.read(path) == [doc, doc]


def test_non_hpcio_line_is_named_by_file_and_line(results, tmp_path):
    good = results.read_text().splitlines()[0]
    path = tmp_path / "mixed.jsonl"
    path.write_text(f"{good}\n{json.dumps({'bw': 1})}\n{good}\n")
    with pytest.raises(
        ResultsError, match=f"^{re.escape(str(path))}:2: not an hpcio result document$"
    ):
        results_io.read(path)


def test_broken_line_inside_the_file_is_an_error(results, tmp_path):
    good = results.read_text().splitlines()[0]
    path = tmp_path / "broken.jsonl"
    path.write_text(f"{good}\n{good[:100]}\n{good}\n")
    with pytest.raises(
        ResultsError, match=f"^{re.escape(str(path))}:2: not an hpcio result document \\(not JSON"
    ):
        results_io.read(path)


def test_other_schema_version_is_refused(record, tmp_path):
    path = tmp_path / "future.jsonl"
    path.write_text(json.dumps(dict(record, schema_version=4)) + "\n")
    with pytest.raises(
        ResultsError,
        match=f"^{re.escape(str(path))}:1: schema version 4 \\(this hpcio reads 1, 2, 3\\)$",
    ):
        results_io.read(path)


def test_truncated_last_line_is_skipped(results, tmp_path):
    good = results.read_text().splitlines()[0]
    path = tmp_path / "killed.jsonl"
    path.write_text(f"{good}\n{good}\n{good[: len(good) // 2]}")
    assert len(results_io.read(path)) == 2


def test_append_after_truncated_last_line_keeps_every_document(results, tmp_path):
    # A sweep killed mid-write, then resumed: the resumed documents must stay readable.
    good = results.read_text().splitlines()[0]
    (doc,) = results_io.read(results)
    path = tmp_path / "resumed.jsonl"
    path.write_text(f"{good}\n{good[: len(good) // 2]}")
    results_io.append(path, doc)
    results_io.append(path, doc)
    assert len(results_io.read(path)) == 3


def test_missing_file(tmp_path):
    with pytest.raises(ResultsError, match=r"cannot read results .*missing\.jsonl"):
        results_io.read(tmp_path / "missing.jsonl")


def test_unwritable_results_path(results, tmp_path):
    (doc,) = results_io.read(results)
    with pytest.raises(ResultsError, match="cannot write results"):
        results_io.append(tmp_path, doc)


def _interrupted(record, iterations):
    """`record` as a run stopped after `iterations` iterations would have left it."""
    partial = dict(record, status="interrupted")
    partial["phases"] = [p for p in record["phases"] if p["iteration"] < iterations]
    return ResultDocument.from_dict(partial)


def test_run_line_is_replaced_in_place_and_appends_after_others(results, record, tmp_path):
    path = tmp_path / "r.jsonl"
    results_io.append(path, ResultDocument.from_dict(record))  # an earlier run's document
    line = results_io.RunLine(str(path))
    assert line.kept() is None
    line.write(_interrupted(record, 1))
    assert [d.status for d in results_io.read(path)] == ["complete", "interrupted"]
    assert len(line.kept().phases) == len(record["phases"]) // 2
    line.write(ResultDocument.from_dict(record))
    documents = results_io.read(path)
    assert [d.status for d in documents] == ["complete", "complete"]
    assert documents[1] == ResultDocument.from_dict(record)
    assert line.kept() is None  # complete: nothing interrupted to report


def test_run_line_that_shrinks_leaves_no_fragment(results, record, tmp_path):
    path = tmp_path / "r.jsonl"
    line = results_io.RunLine(str(path))
    line.write(ResultDocument.from_dict(record))
    line.write(_interrupted(record, 1))  # shorter than the line it replaces
    assert path.read_text().count("\n") == 1
    (document,) = results_io.read(path)
    assert document.status == "interrupted"
    results_io.append(path, ResultDocument.from_dict(record))
    assert [d.status for d in results_io.read(path)] == ["interrupted", "complete"]


def test_run_line_goes_after_a_line_appended_meanwhile(results, record, tmp_path):
    path = tmp_path / "r.jsonl"
    line = results_io.RunLine(str(path))
    line.write(_interrupted(record, 1))
    results_io.append(path, ResultDocument.from_dict(record))  # another writer
    line.write(ResultDocument.from_dict(record))
    assert [d.status for d in results_io.read(path)] == ["interrupted", "complete", "complete"]


def test_partial_file_of_earlier_versions_is_recovered(tmp_path):
    path = tmp_path / "r.jsonl"
    old = tmp_path / "r.jsonl.partial"
    # A recorded interrupted run's document, as hpcio before RunLine kept it aside.
    old.write_text((V1 / "file-interrupted.jsonl").read_text().strip() + "\n")
    assert results_io.recover_partial(path)
    (doc,) = results_io.read(path)
    assert (doc.status, doc.summary["write"].iterations) == ("interrupted", 2)
    assert not old.exists()
    assert not results_io.recover_partial(path)
