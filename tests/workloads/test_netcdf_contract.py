"""What the four NetCDF codes answer the runner without running: their variable's shape, the
bytes they keep and move, the memory they hold, whose data their reads come from, which names
are theirs, and what they refuse."""

import pytest
from hpcio.errors import SpecError
from hpcio.workloads import netcdf_codes, registry
from hpcio.workloads.contract import Phase
from specs import run_spec

MiB = 1 << 20
CODES = ("collect_and_write", "allwrite", "read_distribute", "allread")


def refusal(name, **settings):
    with pytest.raises(SpecError) as caught:
        run_spec(name, **settings)
    return str(caught.value)


@pytest.mark.parametrize("name", CODES)
def test_one_file_one_variable_of_slabs(name):
    run = run_spec(name, ranks=8, size_per_rank_bytes=4 * MiB)
    workload = registry.get(name)
    assert registry.family_of(name) == "netcdf" and registry.sized_globally(name)
    assert workload.keys(run) == ["hpcio-netcdf.nc"]
    assert registry.is_own_key("hpcio-netcdf.nc") and not registry.is_own_key("other.nc")
    assert netcdf_codes.shape_words(run) == "field(8192, 1024) float32"
    assert workload.moved_bytes(run, Phase.WRITE) == 32 * MiB
    assert workload.stored_bytes(run) == 32 * MiB + netcdf_codes.FILE_OVERHEAD_BYTES
    expected = (Phase.WRITE,) if name in ("collect_and_write", "allwrite") else (Phase.READ,)
    assert workload.phases(run) == expected
    assert (workload.prepare(run) is not None) == (expected == (Phase.READ,))


@pytest.mark.parametrize(
    ("name", "collective", "how"),
    [
        ("collect_and_write", False, "through rank 0 in messages of 4 MiB"),
        ("read_distribute", False, "through rank 0 in messages of 4 MiB"),
        ("allwrite", True, "collective"),
        ("allread", False, "independent"),
    ],
)
def test_each_code_says_how_its_data_goes(name, collective, how):
    settings = {"collective": collective} if name.startswith("all") else {}
    run = run_spec(name, ranks=2, size_per_rank_bytes=4 * MiB, **settings)
    assert registry.get(name).describe(run) == f"4 MiB per rank, field(2048, 1024) float32, {how}"


def test_rows_are_1024_floats_or_fewer_where_a_slab_is_not_whole_rows():
    run = run_spec("allwrite", ranks=3, size_per_rank_bytes=6000)  # 1500 floats
    assert netcdf_codes.columns(run) == 4 and netcdf_codes.rows_per_rank(run) == 375


def test_memory_is_each_ranks_slab_and_rank_0s_message():
    spoke = run_spec("collect_and_write", ranks=8, size_per_rank_bytes=64 * MiB,
                     gather_chunk_bytes=16 * MiB)  # fmt: skip
    need = registry.get("collect_and_write").memory(spoke, 8)
    assert need.bytes == 8 * 64 * MiB + 16 * MiB
    assert need.breakdown == "8 rank(s) x a slab of 64 MiB + rank 0: 1 message of 16 MiB"
    parallel = run_spec("allread", ranks=8, size_per_rank_bytes=64 * MiB)
    assert registry.get("allread").memory(parallel, 4).bytes == 4 * 64 * MiB


def test_read_distribute_reads_everything_on_rank_0s_node():
    run = run_spec("read_distribute", ranks=4, size_per_rank_bytes=MiB)
    facts = registry.get("read_distribute").cache_facts(run)
    assert facts.whole_data_per_node and facts.reads_local_data
    assert facts.data_set_bytes == 4 * MiB
    facts = registry.get("allread").cache_facts(run_spec("allread", ranks=4,
                                                         size_per_rank_bytes=MiB))  # fmt: skip
    assert not facts.whole_data_per_node and facts.read_back_from == "the rank's own slab"


def test_only_the_parallel_codes_take_mpiio_hints():
    for name in CODES:
        run = run_spec(name, ranks=2, size_per_rank_bytes=MiB)
        assert registry.get(name).uses_mpiio(run) == (name in ("allwrite", "allread"))


def test_what_the_codes_refuse():
    assert refusal("allwrite", size_per_rank_bytes=6) == (
        "--size-per-rank 6 B: allwrite writes float32, so a rank's slab must be a whole number "
        "of 4-byte values"
    )
    assert refusal("allread", url="s3://bucket/x", size_per_rank_bytes=MiB) == (
        "allread writes a NetCDF file: give a file:// target"
    )
    assert refusal("read_distribute", size_per_rank_bytes=MiB, phases=("write",)) == (
        "read_distribute only reads; use --phases read"
    )
