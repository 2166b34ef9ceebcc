"""How many in-flight lanes (each with a transfer's buffer) a rank's phase gets."""

from hpcio.runner.choreography import chunk_transfers
from hpcio.runner.phase import lanes
from hpcio.workloads.contract import CollectBody, Phase
from specs import body_of, run_spec

KiB, MiB = 1 << 10, 1 << 20


def spec(pattern="mfmw", size=MiB, transfer=MiB, in_flight=4096, **more):
    return run_spec(
        pattern, ranks=2, size_per_rank_bytes=size, transfer_bytes=transfer,
        in_flight=in_flight, **more,
    )  # fmt: skip


def lanes_of(run, rank=0):
    """The lanes runner/phase.py gives the engine for this rank's write phase."""
    body = body_of(run, Phase.WRITE, rank)
    if isinstance(body, CollectBody):
        return lanes(body.in_flight, chunk_transfers(body))
    return lanes(body.in_flight, body.plan.largest_batch)


def test_a_typo_in_in_flight_gets_no_more_lanes_than_transfers():
    run = spec()  # --in-flight 4096 on a 1 MiB run reserved 4096 buffers of 1 MiB
    assert lanes_of(run) == 1
    run = spec(size=8 * MiB, transfer=4 * KiB, files_per_rank=4)
    assert lanes_of(run) == 2 * 1024  # transfers of the 4 files


def test_lanes_are_the_in_flight_depth_when_there_is_work_for_them():
    run = spec(size=64 * MiB, in_flight=8)
    assert lanes_of(run) == 8


def test_the_collector_gets_no_more_lanes_than_a_chunk_has_transfers():
    run = spec("sfsw", size=MiB, transfer=64 * KiB, gather_chunk_bytes=256 * KiB)
    assert lanes_of(run) == 4
    assert lanes_of(spec("sfsw", size=MiB, transfer=64 * KiB, in_flight=2)) == 2
