"""hpcio replay's parts without MPI: the counters synthesis against pydarshan's own counters,
the schedule (ranks, gaps, object mapping) by hand, and the target names."""

import numpy as np
import pytest
from hpcio.errors import SpecError
from hpcio.trace import operations
from hpcio.workloads.replay import counters, schedule, source
from replay_logs import APP, MS, app_trace, darshan_sample

MiB = 1 << 20


def test_counters_synthesis_meets_every_records_bytes_and_buckets_exactly():
    import darshan

    log = darshan_sample("sample.darshan")
    found = source.load(str(log))
    assert found.replayed_from == "counters" and found.exact
    assert found.app_ranks == 2048
    with darshan.DarshanReport(str(log), read_all=True) as report:
        rows = report.records["POSIX"].to_df()["counters"].to_dict("records")
        names = report.name_records
    ops = found.ops
    for row in rows:
        in_file = ops.file == names[row["id"]]
        for op, tag, total in (("write", "WRITE", "POSIX_BYTES_WRITTEN"),
                               ("read", "READ", "POSIX_BYTES_READ")):  # fmt: skip
            mine = in_file & (ops.op == op)
            assert int(ops.length[mine].sum()) == row[total]
            log_buckets = [row[f"POSIX_SIZE_{tag}_{b}"] for b in counters.BUCKETS]
            assert counters.histogram(ops.length[mine]).tolist() == log_buckets
    # The shared file's (rank -1) operations are dealt to all 2048 application ranks.
    assert set(np.unique(ops.rank).tolist()) == set(range(2048))
    # Most of the writes continue where the one before ended (16384 of 16402 sequential).
    writes = ops.op == "write"
    continuing = ops.offset[writes][1:] == (ops.offset + ops.length)[writes][:-1]
    assert continuing.sum() >= 16384 - 18


def test_buckets_are_darshans():
    # darshan-common's DARSHAN_BUCKET_INC: 100 is in 0_100, 101 in 100_1K, 1 GiB in 100M_1G.
    sizes = [0, 100, 101, 1024, 1025, 1 << 20, (1 << 20) + 1, 1 << 30, (1 << 30) + 1]
    assert counters.bucket_of(np.array(sizes)).tolist() == [0, 0, 1, 1, 2, 4, 5, 8, 9]


def test_contradictory_counters_keep_the_buckets_and_say_so():
    # Two accesses of at most 100 bytes cannot make 1000 bytes.
    per_bucket = np.zeros(len(counters.BUCKETS), np.int64)
    per_bucket[0] = 2
    lengths, exact = counters.lengths_for(per_bucket, 1000, [])
    assert not exact and counters.histogram(lengths).tolist() == per_bucket.tolist()
    lengths, exact = counters.lengths_for(per_bucket, 150, [(100, 1)])
    assert exact and sorted(lengths.tolist()) == [50, 100]


def test_dxt_log_replays_its_posix_segments(tmp_path):
    found = source.load(str(darshan_sample("sample-dxt-simple.darshan")))
    assert found.replayed_from == "dxt" and found.app_ranks == 16
    # Not MPI-IO's segments as well: they are the same 4000 bytes one layer up.
    assert sorted(found.ops.length.tolist()) == [40, 4000]


def test_an_hpcio_trace_replays_as_such(tmp_path):
    found = source.load(str(app_trace(tmp_path)))
    assert found.replayed_from == "hpcio-trace" and found.app_ranks == 3
    assert len(found.ops) == len(APP)


def test_a_traces_ranks_are_its_files_even_a_rank_without_operations(tmp_path):
    # A replay's trace: rank 1 had nothing to do, and wrote its (empty) file all the same.
    ops = operations.build([0], ["f"], ["write"], [0], [10], [0], [1])
    operations.write(tmp_path / operations.rank_file_name(0), ops)
    operations.write(tmp_path / operations.rank_file_name(1), operations.empty())
    assert source.load(str(tmp_path)).app_ranks == 2


def test_shrink_divides_offsets_and_lengths_keeping_one_byte(tmp_path):
    found = source.load(str(app_trace(tmp_path)), shrink=1024)
    assert int(found.ops.length.min()) == 1  # 50 bytes / 1024
    assert int(found.ops.length.max()) == 5 * 1024


@pytest.mark.parametrize(
    ("content", "words"),
    [(b"", "no Darshan header"), (b"not a log at all, just text\n", "no Darshan header")],
)
def test_what_is_not_a_log_is_one_error(tmp_path, content, words):
    bad = tmp_path / "bad.darshan"
    bad.write_bytes(content)
    with pytest.raises(SpecError, match=words):
        source.load(str(bad))


def test_target_names_are_flat_distinct_and_deterministic():
    paths = np.array(["/b/out.h5", "/a/out.h5", "/a/we ird:name"])
    names = source.key_of(paths)
    assert names == {
        "/a/out.h5": "hpcio-replay-00000-out.h5",
        "/a/we ird:name": "hpcio-replay-00001-we_ird_name",
        "/b/out.h5": "hpcio-replay-00002-out.h5",
    }


def _ops(rows):
    """(rank, file, op, offset, length, start ms, end ms) rows as Operations."""
    columns = list(zip(*rows, strict=True))
    return operations.build(*columns[:5], np.array(columns[5]) * MS, np.array(columns[6]) * MS)


def test_gaps_are_the_waits_between_a_ranks_operations():
    ops = _ops([(0, "f", "write", 0, 10, 2, 3), (0, "f", "write", 10, 10, 5, 6),
                (0, "f", "read", 0, 10, 6, 7), (0, "f", "write", 20, 10, 10, 11)])  # fmt: skip
    assert (schedule.gaps_before(ops, 0) // MS).tolist() == [2, 2, 0, 3]


def test_gaps_keep_splits_steps_at_each_wait_and_none_makes_one_step():
    ops = _ops([(0, "f", "write", 0, 10, 2, 3), (0, "f", "write", 10, 10, 3, 4),
                (0, "f", "read", 0, 10, 5, 6), (0, "f", "write", 20, 10, 10, 11)])  # fmt: skip
    kept = schedule.steps(ops, 0, 1, "write", keep_gaps=True)
    assert [(s.gap_ns // MS, s.offsets.tolist()) for s in kept] == [(0, [0, 10]), (4, [20])]
    squeezed = schedule.steps(ops, 0, 1, "write", keep_gaps=False)
    assert [(s.gap_ns, s.offsets.tolist()) for s in squeezed] == [(0, [0, 10, 20])]


def test_application_rank_r_runs_on_rank_r_mod_n():
    ops = _ops([(r, f"f{r}", "write", 0, 10 + r, r, r) for r in range(5)])
    mine = [[s.lengths.tolist() for s in schedule.steps(ops, rank, 2, "write", keep_gaps=False)]
            for rank in range(2)]  # fmt: skip
    assert mine == [[[10], [12], [14]], [[11], [13]]]


def test_writes_map_to_a_put_parts_or_an_object_each(tmp_path):
    ops = source.load(str(app_trace(tmp_path))).ops
    expected = {"/app/ckpt.dat": "parts", "/app/meta.json": "put", "/app/log.txt": "separate",
                "/app/shared.dat": "shared"}  # fmt: skip
    assert schedule.object_mapping(ops, 2, "s3") == expected
    assert schedule.object_mapping(ops, 2, "azure") == expected
    # Parts under S3's 5 MiB cannot be parts there, but are blocks on Azure.
    small = _ops([(0, "f", "write", 0, 100, 0, 0), (0, "f", "write", 100, 50, 1, 1)])
    assert schedule.object_mapping(small, 1, "s3") == {"f": "separate"}
    assert schedule.object_mapping(small, 1, "azure") == {"f": "parts"}
    # Several ranks' parts: one upload they share (S3 takes no 100-byte parts).
    shared = _ops([(1, "f", "write", 100, 100, 0, 0), (0, "f", "write", 0, 100, 1, 1)])
    assert schedule.object_mapping(shared, 2, "azure") == {"f": "shared"}
    assert schedule.object_mapping(shared, 2, "s3") == {"f": "separate"}
    # Two ranks writing the same range cannot be parts of one object.
    twice = _ops([(0, "f", "write", 0, 100, 0, 0), (1, "f", "write", 0, 100, 1, 1)])
    assert schedule.object_mapping(twice, 2, "azure") == {"f": "separate"}


def test_an_objects_writes_go_up_in_one_step_and_separate_ones_each_alone(tmp_path):
    ops = source.load(str(app_trace(tmp_path))).ops
    objects = schedule.object_mapping(ops, 2, "s3")
    rank1 = schedule.steps(ops, 1, 2, "write", keep_gaps=True, objects=objects)
    assert [(s.key, s.offsets.tolist(), s.lengths.tolist()) for s in rank1] == [
        ("hpcio-replay-00002-log.txt.w000001-000000", [0], [100]),
        ("hpcio-replay-00002-log.txt.w000001-000001", [0], [100]),
        ("hpcio-replay-00003-meta.json", [0], [300]),
        ("hpcio-replay-00002-log.txt.w000001-000002", [0], [100]),
        ("hpcio-replay-00002-log.txt.w000001-000003", [0], [50]),
        ("hpcio-replay-00004-shared.dat", [5 * MiB], [5 * MiB]),  # last: the ranks meet
    ]
    rank0 = schedule.steps(ops, 0, 2, "write", keep_gaps=True, objects=objects)
    assert [(s.key, s.lengths.tolist(), s.shared_part_bytes) for s in rank0] == [
        ("hpcio-replay-00000-ckpt.dat", [5 * MiB, 5 * MiB], 0),
        ("hpcio-replay-00004-shared.dat", [5 * MiB], 5 * MiB),
    ]
