"""Darshan's counters from an operations table, hand-computed for a known sequence; and from
real Darshan logs (the pydarshan wheel's samples), against the counters the log itself holds."""

import json
import os

import numpy as np
import pytest
from hpcio.trace import operations, summary

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
darshan = pytest.importorskip("darshan", reason="pip install 'hpcio[characterize]'")
SAMPLES = os.path.dirname(darshan.__file__)
DXT_SIMPLE = os.path.join(SAMPLES, "tests", "input", "sample-dxt-simple.darshan")
DXT_JAVA = os.path.join(SAMPLES, "examples", "example_logs", "dxt.darshan")
SAMPLE = os.path.join(SAMPLES, "tests", "input", "sample.darshan")
DXT_CHECKED = ("POSIX_WRITES", "POSIX_BYTES_WRITTEN", "POSIX_SEQ_WRITES", "POSIX_CONSEC_WRITES",
               "POSIX_SIZE_WRITE_0_100", "POSIX_SIZE_WRITE_1K_10K", "POSIX_ACCESS1_ACCESS",
               "POSIX_ACCESS1_COUNT", "POSIX_MAX_BYTE_WRITTEN")  # fmt: skip
LOG_CHECKED = ("POSIX_READS", "POSIX_WRITES", "POSIX_BYTES_READ", "POSIX_BYTES_WRITTEN",
               "POSIX_SEQ_WRITES", "POSIX_SIZE_WRITE_100K_1M", "POSIX_ACCESS1_ACCESS")  # fmt: skip


def known() -> operations.Operations:
    """Rank 0 opens a, writes five pieces (overlapping in time), reads two, closes; rank 1
    reads 10 bytes of a at offset 1."""
    rows = [
        (0, "a", "open", -1, 0, 0, 5),
        (0, "a", "write", 0, 100, 10, 25),
        (0, "a", "write", 100, 101, 20, 35),  # right after the last byte: seq and consec
        (0, "a", "write", 300, 50, 30, 45),  # past it: seq
        (0, "a", "write", 200, 1024, 40, 55),  # back: neither
        (0, "a", "write", 5000, 50, 50, 65),  # seq
        (0, "a", "read", 0, MiB, 100, 110),  # at 0, Darshan's start: neither
        (0, "a", "read", MiB, GiB + 1, 120, 130),  # consec
        (0, "a", "close", -1, 0, 140, 145),
        (1, "a", "read", 1, 10, 7, 9),  # Darshan's last byte starts at 0: offset 1 is consec
    ]
    return operations.build(*zip(*rows, strict=True))


def test_counters_are_darshan_s_for_a_known_sequence():
    rows = summary.from_operations(known())
    assert [(r.module, r.rank, r.file) for r in rows] == [("POSIX", 0, "a"), ("POSIX", 1, "a")]
    c = rows[0].counters
    expected = {
        "POSIX_OPENS": 1,
        "POSIX_WRITES": 5,
        "POSIX_READS": 2,
        "POSIX_BYTES_WRITTEN": 100 + 101 + 50 + 1024 + 50,
        "POSIX_BYTES_READ": MiB + GiB + 1,
        "POSIX_SEQ_WRITES": 3,
        "POSIX_CONSEC_WRITES": 1,
        "POSIX_SEQ_READS": 1,
        "POSIX_CONSEC_READS": 1,
        "POSIX_MAX_BYTE_WRITTEN": 5049,
        "POSIX_MAX_BYTE_READ": MiB + GiB,
        "POSIX_RW_SWITCHES": 1,
        "POSIX_SIZE_WRITE_0_100": 3,  # 100 (bounds are inclusive), 50, 50
        "POSIX_SIZE_WRITE_100_1K": 2,  # 101, 1024
        "POSIX_SIZE_READ_100K_1M": 1,
        "POSIX_SIZE_READ_1G_PLUS": 1,
        "POSIX_ACCESS1_ACCESS": 50,
        "POSIX_ACCESS1_COUNT": 2,
        # Equally common sizes: the larger first.
        "POSIX_ACCESS2_ACCESS": GiB + 1,
        "POSIX_ACCESS3_ACCESS": MiB,
        "POSIX_ACCESS4_ACCESS": 1024,
        "POSIX_ACCESS4_COUNT": 1,
    }
    assert {k: c[k] for k in expected} == expected
    assert sum(v for k, v in c.items() if "_SIZE_" in k) == 7
    # Writes overlap: 10..65 ns once, not 5 x 15; reads 2 x 10; open and close 5 each.
    assert c["POSIX_F_WRITE_TIME"] == pytest.approx(55e-9)
    assert c["POSIX_F_READ_TIME"] == pytest.approx(20e-9)
    assert c["POSIX_F_META_TIME"] == pytest.approx(10e-9)
    assert (c["POSIX_F_WRITE_START_TIMESTAMP"], c["POSIX_F_WRITE_END_TIMESTAMP"]) == (
        pytest.approx(10e-9),
        pytest.approx(65e-9),
    )
    other = rows[1].counters
    assert (other["POSIX_READS"], other["POSIX_SEQ_READS"], other["POSIX_CONSEC_READS"]) == (
        1,
        1,
        1,
    )
    assert other["POSIX_WRITES"] == 0


@pytest.mark.parametrize(("length", "bucket"), [(0, "0_100"), (100, "0_100"), (101, "100_1K"),
    (1024, "100_1K"), (1025, "1K_10K"), (4 * MiB, "1M_4M"), (GiB, "100M_1G"),
    (GiB + 1, "1G_PLUS")])  # fmt: skip
def test_buckets_are_darshan_s(length, bucket):
    assert summary.bucket(length) == bucket


def test_a_trace_file_round_trips_and_a_directory_holds_every_rank(tmp_path):
    ops = known()
    for rank in (0, 1):
        operations.write(
            tmp_path / "run" / operations.rank_file_name(rank), ops.select(ops.rank == rank)
        )
    back = operations.load(tmp_path / "run")
    assert len(back) == len(ops)
    for name in operations.COLUMNS:
        assert np.array_equal(np.sort(getattr(back, name)), np.sort(getattr(ops, name))), name
    assert back.offset.dtype == np.int64 and back.rank.dtype == np.int32


def test_dxt_segments_summarize_to_the_log_s_own_posix_counters():
    """The counters computed from a log's DXT segments are the ones Darshan's runtime counted."""
    report = darshan.DarshanReport(DXT_SIMPLE, read_all=True)
    frame = report.records["POSIX"].to_df()["counters"]
    everything = operations.from_darshan_dxt(DXT_SIMPLE)
    assert everything is not None and len(everything) == 3  # 2 POSIX segments, 1 MPI-IO
    assert operations.from_darshan_dxt(SAMPLE) is None  # no DXT in it
    computed = summary.from_operations(operations.dxt_operations(report, "DXT_POSIX"))
    assert len(computed) == 2
    for row in computed:
        (record_id,) = [i for i, name in report.name_records.items() if name == row.file]
        logged = frame[(frame["id"] == record_id) & (frame["rank"] == row.rank)].iloc[0]
        for name in DXT_CHECKED:
            assert row.counters[name] == logged[name], (row.file, name)


def test_a_larger_dxt_log_matches_its_counts_and_buckets_everywhere():
    report = darshan.DarshanReport(DXT_JAVA, read_all=True)
    ops = operations.dxt_operations(report, "DXT_POSIX")
    logged = {(r.rank, r.file): r.counters for r in summary.from_darshan_records(report)
              if r.module == "POSIX"}  # fmt: skip
    computed = summary.from_operations(ops)
    assert len(computed) > 100
    for row in computed:
        theirs = logged[(row.rank, row.file)]
        for name, value in row.counters.items():
            if (
                name.endswith(("_READS", "_WRITES", "_BYTES_READ", "_BYTES_WRITTEN"))
                or "_SIZE_" in name
            ):
                if "SEQ" in name or "CONSEC" in name:
                    continue  # position-based reads (read(), not pread) of pipes differ
                assert value == theirs[name], (row.file, name)


def test_a_log_s_records_are_the_counters_pydarshan_reports():
    report = darshan.DarshanReport(SAMPLE, read_all=True)
    rows = summary.from_darshan_records(report)
    assert {r.module for r in rows} >= {"POSIX", "MPI-IO"}
    frames = report.records["POSIX"].to_df()
    counters, fcounters = frames["counters"], frames["fcounters"]
    posix = [r for r in rows if r.module == "POSIX"]
    assert len(posix) == len(counters)
    for i in (0, len(posix) // 2, len(posix) - 1):
        row = posix[i]
        assert row.file == report.name_records[int(counters["id"].iloc[i])]
        for name in LOG_CHECKED:
            assert row.counters[name] == counters[name].iloc[i]
        write_time = fcounters["POSIX_F_WRITE_TIME"].iloc[i]
        assert row.counters["POSIX_F_WRITE_TIME"] == write_time
    mpiio = next(r for r in rows if r.module == "MPI-IO")
    assert "MPIIO_COLL_WRITES" in mpiio.counters and "MPIIO_BYTES_WRITTEN" in mpiio.counters


def test_darshan_summary_prints_every_module_and_the_dxt_segments(hpcio_in_process):
    done = hpcio_in_process("darshan", "summary", DXT_SIMPLE, "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert {r["module"] for r in rows} == {"POSIX", "MPI-IO", "DXT_POSIX", "DXT_MPIIO"}
    dxt_mpiio = next(r for r in rows if r["module"] == "DXT_MPIIO")
    assert dxt_mpiio["counters"]["MPIIO_BYTES_WRITTEN"] == 4000
    table = hpcio_in_process("darshan", "summary", DXT_SIMPLE)
    assert "DXT_POSIX" in table.stdout and "POSIX_BYTES_WRITTEN" in table.stdout


@pytest.mark.parametrize("command", ["darshan", "trace"])
def test_bad_input_is_one_line(hpcio, capfd, tmp_path, command, error_line):
    not_a_log = tmp_path / "x.darshan"
    not_a_log.write_text("hello\n")
    for path, says in ((tmp_path / "missing", "no such file"), (not_a_log, "not a")):
        capfd.readouterr()
        # In pytest's process (tests/test_hostile.py keeps real-process samples of these):
        # nothing may reach the descriptors past the one line either.
        done = hpcio(command, "summary", path)
        assert capfd.readouterr() == ("", "")
        assert done.returncode == 2
        assert says in error_line(done)
        assert "Traceback" not in done.stderr and "Error:" not in done.stderr


def test_without_pydarshan_a_log_is_refused_in_one_line(monkeypatch, hpcio_in_process):
    monkeypatch.setitem(__import__("sys").modules, "darshan", None)  # import darshan fails
    done = hpcio_in_process("darshan", "summary", SAMPLE)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "hpcio: error: reading Darshan logs needs pydarshan: pip install "
        "'hpcio[characterize]' (or: pip install darshan)"
    )
