import dataclasses

import numpy as np
import pytest
from hpcio.errors import SpecError
from hpcio.spec import presets
from hpcio.spec.model import RunSpec
from hpcio.spec.target import TargetSpec
from hpcio.workloads import registry
from hpcio.workloads.contract import Phase
from hpcio.workloads.patterns.common import file_bytes
from hpcio.workloads.patterns.mfmw import file_size_bytes, rank_key
from hpcio.workloads.plans import Op
from hpcio.workloads.profiles import storage
from specs import plan_of, run_spec

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
POSIX = TargetSpec.from_url("file:///tmp/x")


def profile_spec(name, ranks=2, size=64 * KiB * 2, target=POSIX, **more):
    return presets.profile_run(
        storage.get(name), target, ranks=ranks, size_bytes=size, node_ram_bytes=8 * GiB, **more
    )


def transfer_offsets(run, phase, rank=0):
    plan = plan_of(run, phase, rank).per_transfer()
    moving = plan.ops == (Op.WRITE if phase is Phase.WRITE else Op.READ)
    return plan.offsets[moving], plan


def test_sequential_profile_visits_offsets_in_order():
    run = profile_spec("min-latency", size=2 * 16 * KiB)
    offsets, plan = transfer_offsets(run, Phase.WRITE, rank=1)
    assert offsets.tolist() == [0, 4 * KiB, 8 * KiB, 12 * KiB]
    assert plan.keys == (rank_key(1),)
    assert plan.ops.tolist() == [Op.OPEN_WRITE, *[Op.WRITE] * 4, Op.CLOSE]


@pytest.mark.parametrize("phase", [Phase.WRITE, Phase.READ])
def test_random_profile_visits_every_offset_once(phase):
    run = profile_spec("max-latency", size=2 * MiB)
    offsets, _ = transfer_offsets(run, phase)
    expected = np.arange(0, MiB, 4 * KiB, dtype=np.uint64)
    assert len(offsets) == len(expected) == 256
    assert np.array_equal(np.sort(offsets), expected)
    assert not np.array_equal(offsets, expected)


def test_random_order_is_seeded_and_differs_by_rank_phase_and_seed():
    run = profile_spec("random-throughput", size=2 * MiB)
    write0, _ = transfer_offsets(run, Phase.WRITE, rank=0)
    assert np.array_equal(write0, transfer_offsets(run, Phase.WRITE, rank=0)[0])
    assert not np.array_equal(write0, transfer_offsets(run, Phase.WRITE, rank=1)[0])
    assert not np.array_equal(write0, transfer_offsets(run, Phase.READ, rank=0)[0])
    reseeded = dataclasses.replace(run, seed=2)
    assert not np.array_equal(write0, transfer_offsets(reseeded, Phase.WRITE, rank=0)[0])


def test_random_read_checks_the_writer_of_each_offset():
    run = profile_spec("max-latency", size=2 * MiB)
    _, plan = transfer_offsets(run, Phase.READ, rank=1)
    assert set(plan.writers[plan.ops == Op.READ].tolist()) == {1}


@pytest.mark.parametrize(
    ("name", "phases", "transfer", "in_flight", "direct", "random"),
    [
        ("streaming", "write read", MiB, 32, False, False),
        ("max-latency", "write read", 4 * KiB, 1, False, True),
        ("min-latency", "write read", 4 * KiB, 1, True, False),
        ("random-throughput", "write read", 4 * KiB, 32, False, True),
        ("small-wss", "read", MiB, 32, True, False),
    ],
)
def test_profiles_as_runs(name, phases, transfer, in_flight, direct, random):
    run = profile_spec(name, ranks=4, size=8 * MiB)
    p = run.params
    assert run.workload.name == name
    assert registry.get(name).phases(run) == tuple(Phase(w) for w in phases.split())
    assert (p.transfer_bytes, p.in_flight) == (transfer, in_flight)
    assert (run.direct, p.random_offsets) == (direct, random)
    assert p.size_per_rank_bytes == 2 * MiB


def test_default_sizes():
    streaming = profile_spec("streaming", ranks=4, size=None)
    assert file_bytes(streaming) == 16 * GiB  # twice the 8 GiB of RAM
    on_two = presets.profile_run(storage.get("streaming"), POSIX, ranks=4, size_bytes=None,
                             node_ram_bytes=8 * GiB, nodes=2)  # fmt: skip
    assert file_bytes(on_two) == 32 * GiB  # twice each node's RAM
    assert file_bytes(profile_spec("small-wss", ranks=1, size=None)) == GiB
    assert file_bytes(profile_spec("max-latency", ranks=1, size=None)) == GiB


S3 = TargetSpec.from_url("s3://bucket/prefix")


def test_a_rank_has_a_file_per_request_in_flight_as_fios_jobs_do():
    run = profile_spec("streaming", ranks=1, size=64 * MiB)
    assert (run.params.files_per_rank, file_size_bytes(run)) == (32, 2 * MiB)
    offsets, plan = transfer_offsets(run, Phase.WRITE)
    files = plan.key_index[plan.ops == Op.WRITE]
    # Round robin: the first 32 transfers (one per lane) go to 32 different files.
    assert len(set(files[:32].tolist())) == 32
    assert offsets[:32].tolist() == [0] * 32 and offsets[32:64].tolist() == [MiB] * 32
    assert profile_spec("streaming", ranks=1, size=8 * MiB).params.files_per_rank == 8  # 1 MiB
    assert profile_spec("max-latency", ranks=1).params.files_per_rank == 1  # one in flight


def test_on_object_stores_every_transfer_is_an_object_of_its_own():
    run = profile_spec("min-latency", ranks=2, size=2 * 16 * KiB, target=S3)
    assert (run.params.files_per_rank, file_size_bytes(run)) == (4, 4 * KiB)
    offsets, plan = transfer_offsets(run, Phase.WRITE, rank=1)
    assert offsets.tolist() == [0] * 4
    written = [plan.keys[k] for k in plan.key_index[plan.ops == Op.WRITE]]
    assert written == sorted(written) and len(set(written)) == 4


def test_random_order_on_object_stores_visits_the_objects_in_random_order():
    run = profile_spec("random-throughput", ranks=1, size=256 * 4 * KiB, target=S3)
    for phase in (Phase.WRITE, Phase.READ):
        _, plan = transfer_offsets(run, phase)
        moving = plan.ops == (Op.WRITE if phase is Phase.WRITE else Op.READ)
        visited = [plan.keys[k] for k in plan.key_index[moving]]
        assert sorted(visited) == sorted(set(visited)) and len(visited) == 256
        assert visited != sorted(visited)


def test_default_size_of_small_transfers_on_object_stores_is_64_mib():
    assert file_bytes(profile_spec("max-latency", ranks=1, size=None, target=S3)) == 64 * MiB
    assert file_bytes(profile_spec("small-wss", ranks=1, size=None, target=S3)) == GiB


def test_size_splits_into_whole_transfers_per_rank():
    run = profile_spec("streaming", ranks=3, size=10 * MiB)
    assert run.params.size_per_rank_bytes == 3 * MiB


def test_direct_forces_o_direct_on_posix_only():
    assert profile_spec("streaming", size=2 * MiB, direct=True).direct
    memory = TargetSpec.from_url("memory://")
    assert not profile_spec("min-latency", ranks=1, target=memory).direct


@pytest.mark.parametrize(
    ("name", "size", "target", "message"),
    [
        ("nope", MiB, POSIX, "unknown profile 'nope'; choose one of streaming, max-latency"),
        ("streaming", KiB, POSIX, "is less than one 1 MiB transfer per rank; use --size 2MiB"),
    ],
)
def test_bad_profiles_are_refused(name, size, target, message):
    with pytest.raises(SpecError, match=message):
        profile_spec(name, size=size, target=target)


def test_unknown_node_ram_needs_size():
    with pytest.raises(SpecError, match="give --size"):
        presets.profile_run(
            storage.get("streaming"), POSIX, ranks=1, size_bytes=None, node_ram_bytes=0
        )


def test_random_offsets_and_durations_only_with_files_of_a_rank_s_own():
    """Other patterns' params do not have them (the command line's refusal: test_no_harm)."""
    for field in ("random_offsets", "duration_s"):
        assert registry.taking(field, "pattern") == ["mfmw", "mfmr"]
        assert set(registry.taking(field, "profile")) == set(storage.PROFILES)


def test_plain_runs_and_profiles_are_told_apart_by_workload():
    plain = run_spec("mfmw", ranks=1, size_per_rank_bytes=MiB, transfer_bytes=MiB).to_dict()
    assert plain["workload"] == "mfmw" and "profile" not in plain
    assert (plain["params"]["random_offsets"], plain["params"]["duration_s"]) == (False, None)
    profiled = profile_spec("max-latency")
    assert profiled.to_dict()["workload"] == "max-latency"
    assert RunSpec.from_dict(profiled.to_dict()) == profiled


@pytest.mark.parametrize(
    ("name", "target", "duration", "message"),
    [
        ("streaming", POSIX, 0.0, "--duration must be more than 0 seconds, got 0"),
    ],
)
def test_bad_durations_are_refused(name, target, duration, message):
    with pytest.raises(SpecError, match=message):
        profile_spec(name, size=2 * MiB, target=target, duration_s=duration)


def test_duration_refuses_rewriting_an_object_in_parts():
    azure = TargetSpec.from_url("az://container/p")
    assert profile_spec("max-latency", target=azure, duration_s=1.0).params.duration_s == 1.0
    with pytest.raises(SpecError, match="azure object is written once"):
        run_spec("mfmw", "az://container/p", size_per_rank_bytes=2 * MiB, transfer_bytes=MiB,
                 duration_s=1.0)  # fmt: skip


def test_duration_is_recorded_and_reads_alone_may_be_timed_on_object_stores():
    memory = TargetSpec.from_url("memory://")
    run = profile_spec("small-wss", ranks=1, size=2 * MiB, target=memory, duration_s=0.5)
    assert run.to_dict()["params"]["duration_s"] == 0.5


def test_in_flight_overrides_the_profiles():
    assert profile_spec("streaming", size=2 * MiB, in_flight=8).params.in_flight == 8
    assert profile_spec("max-latency").params.in_flight == 1
