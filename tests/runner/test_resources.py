import pytest
from hpcio.errors import SpecError
from hpcio.runner.resources import check_memory, check_space, disk_need, memory_need
from specs import run_spec

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30


def spec(workload="mfmw", **changes):
    settings = {"ranks": 4, "size_per_rank_bytes": 4 * MiB, "transfer_bytes": MiB}
    return run_spec(workload, **{**settings, **changes})


def test_lanes_never_outnumber_transfers():
    # --in-flight 4096 (the most) on a 1 MiB run: one transfer, so one buffer, not 4096.
    run = spec(size_per_rank_bytes=MiB, in_flight=4096)
    assert memory_need(run, ranks_per_node=4).bytes == 4 * MiB
    assert memory_need(spec(in_flight=3), ranks_per_node=2).bytes == 2 * 3 * MiB


def test_whole_file_readers_count_the_file_s_transfers():
    run = spec("sfmr", in_flight=16)  # 16 MiB file, every rank reads all of it
    assert memory_need(run, ranks_per_node=4).bytes == 4 * 16 * MiB
    assert memory_need(spec("sfmr", in_flight=16, read_scope="own"), 4).bytes == 4 * 4 * MiB


def test_master_io_holds_gather_chunks():
    run = spec("sfsw", size_per_rank_bytes=64 * MiB, gather_chunk_bytes=8 * MiB,
               in_flight=4)  # fmt: skip
    # The collector: 4 lanes of 1 MiB and two 8 MiB chunks; three other ranks: a chunk each.
    assert memory_need(run, ranks_per_node=4).bytes == 4 * MiB + 2 * 8 * MiB + 3 * 8 * MiB


def test_memory_check_against_what_is_available():
    run = spec(in_flight=4)  # 4 ranks x 4 lanes x 1 MiB = 16 MiB
    check_memory(run, 4, available_bytes=22 * MiB)
    check_memory(run, 4, available_bytes=0)  # unknown: nothing to check against
    with pytest.raises(SpecError) as refused:
        check_memory(run, 4, available_bytes=20 * MiB)
    assert str(refused.value) == (
        "buffers would take 16 MiB per node (4 rank(s) x 4 in flight x 1 MiB transfer), more "
        "than the 15 MiB a node can spare (75% of its 20 MiB MemAvailable): lower --in-flight "
        "or --transfer"
    )


def test_disk_need_of_writers_readers_and_rewrites(tmp_path):
    directory = str(tmp_path)
    assert disk_need(spec(), directory) == 16 * MiB
    assert disk_need(spec(iterations=5, keep=True), directory) == 16 * MiB  # same files again
    assert disk_need(spec("mfmr"), directory) == 16 * MiB  # laid out first
    assert disk_need(spec(phases=("read",)), directory) == 0
    assert disk_need(spec(duration_s=5.0), directory) == 16 * MiB
    (tmp_path / "hpcio-rank000000.dat").write_bytes(bytes(4 * MiB))
    assert disk_need(spec(), directory) == 12 * MiB


@pytest.mark.parametrize(
    ("workload", "lower"),
    [
        ("mfmw", "--size-per-rank or -n"),
        ("streaming", "--size"),
        ("iozone", "--file-sizes or -n"),
    ],
)
def test_space_refusal_names_the_command_s_own_option(tmp_path, workload, lower):
    run = spec(workload, size_per_rank_bytes=1 << 50, transfer_bytes=1 << 20)
    with pytest.raises(SpecError) as refused:
        check_space(run, str(tmp_path))
    assert f"free there: lower {lower}, or give --no-space-check" in str(refused.value)


def test_cores_per_node_unions_each_hosts_masks_and_takes_the_smallest():
    import os

    from hpcio.runner import resources
    from hpcio.runner.world import SerialComm

    assert resources.cores_per_node(SerialComm()) == len(os.sched_getaffinity(0))
    ranks = [{"a": frozenset({0})}, {"b": frozenset({0, 1, 2})}, {"a": frozenset({1})}]
    merged = ranks[0]
    for other in ranks[1:]:
        merged = resources._union_by_host(merged, other)
    assert merged == {"a": frozenset({0, 1}), "b": frozenset({0, 1, 2})}
