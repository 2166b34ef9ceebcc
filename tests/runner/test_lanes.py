"""How many in-flight lanes (each with a transfer's buffer) a rank's phase gets."""

from hpcio.runner.phase import lanes
from hpcio.spec.model import RunSpec
from hpcio.spec.target import TargetSpec
from hpcio.workloads import patterns
from hpcio.workloads.contract import Phase, RankInfo

KiB, MiB = 1 << 10, 1 << 20


def spec(pattern="mfmw", size=MiB, transfer=MiB, in_flight=4096, **more):
    return RunSpec(
        pattern=pattern, target=TargetSpec.from_url("file:///tmp/x"), ranks=2,
        size_per_rank_bytes=size, transfer_bytes=transfer, in_flight=in_flight, **more,
    ).validate()  # fmt: skip


def plan(run, rank=0):
    return patterns.get(run.pattern).plan(run, Phase.WRITE, RankInfo(rank, 2))


def test_a_typo_in_in_flight_gets_no_more_lanes_than_transfers():
    run = spec()  # --in-flight 4096 on a 1 MiB run reserved 4096 buffers of 1 MiB
    assert lanes(run, plan(run), collect=False) == 1
    run = spec(size=8 * MiB, transfer=4 * KiB, files_per_rank=4)
    assert lanes(run, plan(run), collect=False) == 2 * 1024  # transfers of the 4 files


def test_lanes_are_the_in_flight_depth_when_there_is_work_for_them():
    run = spec(size=64 * MiB, in_flight=8)
    assert lanes(run, plan(run), collect=False) == 8


def test_the_collector_gets_no_more_lanes_than_a_chunk_has_transfers():
    run = spec("sfsw", size=MiB, transfer=64 * KiB, gather_chunk_bytes=256 * KiB)
    assert lanes(run, plan(run), collect=True) == 4
    assert lanes(run, None, collect=True) == 1  # a contributor sends messages
