import pytest
from hpcio.errors import SpecError
from hpcio.spec import presets
from hpcio.spec.target import TargetSpec
from hpcio.workloads.profiles import iozone

KiB = 1 << 10
POSIX = TargetSpec.from_url("file:///tmp/x")


def runs(file_sizes, record_sizes, **more):
    return presets.iozone_runs(
        POSIX, ranks=1, file_sizes=file_sizes, record_sizes=record_sizes, **more
    )


def test_six_runs_per_point_in_iozones_order():
    planned = runs([64 * KiB], [4 * KiB], verify=True)
    assert {r.workload.name for r in planned} == {"iozone"}
    assert [r.params.test for r in planned] == list(iozone.TESTS)
    assert [r.phases for r in planned] == [("write",), ("write",), ("read",), ("read",),
                                           ("read",), ("write",)]  # fmt: skip
    assert [r.params.random_offsets for r in planned] == [False] * 4 + [True] * 2
    assert [r.keep for r in planned] == [True] * 5 + [False]  # the last test removes the file
    assert [r.verify for r in planned] == [False, False, True, True, True, False]
    assert {
        (r.params.size_per_rank_bytes, r.params.transfer_bytes, r.params.in_flight) for r in planned
    } == {(64 * KiB, 4 * KiB, 1)}


def test_records_larger_than_the_file_are_skipped():
    planned = runs([64 * KiB, 128 * KiB], [64 * KiB, 128 * KiB])
    points = [(r.params.size_per_rank_bytes, r.params.transfer_bytes) for r in planned[::6]]
    assert points == [(64 * KiB, 64 * KiB), (128 * KiB, 64 * KiB), (128 * KiB, 128 * KiB)]


def test_no_point_at_all_is_refused():
    with pytest.raises(SpecError, match="no record size"):
        runs([4 * KiB], [64 * KiB])


def test_iterations_keep_and_in_flight_reach_every_run():
    planned = runs([64 * KiB], [4 * KiB], iterations=3, keep=True, in_flight=4)
    assert {(r.iterations, r.keep, r.params.in_flight) for r in planned} == {(3, True, 4)}
