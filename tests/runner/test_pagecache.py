import pytest
from hpcio.runner import pagecache
from specs import run_spec

MiB, GiB = 1 << 20, 1 << 30


def spec(pattern="mfmw", **changes):
    return run_spec(pattern, **{"ranks": 8, "size_per_rank_bytes": 64 * MiB,
                                "transfer_bytes": MiB, **changes})  # fmt: skip


def cache_record(run, **job):
    return pagecache.cache_record(run, run.workload, **job)


def test_small_data_set_may_be_read_from_ram():
    c = cache_record(spec(), nodes=2, ram_bytes=16 * GiB, reads=True)
    assert (c.data_set_bytes, c.data_per_node_bytes, c.node_ram_bytes) == (
        512 * MiB,
        256 * MiB,
        16 * GiB,
    )
    assert c.read_back_from == "data this rank wrote"
    assert c.reads_may_hit_page_cache is True
    assert (c.direct_io, c.fsync_in_write_phase, c.caches_dropped) == (False, False, False)
    assert c.notes[0] == "page cache not bypassed (no --direct)"
    assert c.notes[-1] == (
        "reads may be served from RAM: 256 MiB per node is less than the "
        "node's 16 GiB and was written on this node"
    )


def test_data_set_larger_than_ram_is_not_cached():
    c = cache_record(spec(), nodes=1, ram_bytes=256 * MiB, reads=True)
    assert c.reads_may_hit_page_cache is False


def test_write_only_runs_read_nothing_from_cache():
    c = cache_record(spec(), nodes=1, ram_bytes=16 * GiB, reads=False)
    assert c.reads_may_hit_page_cache is False


def test_direct_bypasses_the_cache():
    c = cache_record(spec(direct=True, fsync=True), nodes=1, ram_bytes=16 * GiB, reads=True)
    assert (c.direct_io, c.fsync_in_write_phase, c.reads_may_hit_page_cache) == (True, True, False)
    assert "O_DIRECT: the page cache was bypassed for writes and reads" in c.notes
    assert "fsync before close, inside the timed write phase" in c.notes


@pytest.mark.parametrize(
    ("nodes", "read_from", "may_hit"),
    [
        (1, "data written by another rank on the same node", True),
        (2, "data written by a rank on another node", False),
    ],
)
def test_reorder(nodes, read_from, may_hit):
    c = cache_record(spec(reorder=True), nodes=nodes, ram_bytes=16 * GiB, reads=True)
    assert (c.read_back_from, c.reads_may_hit_page_cache) == (read_from, may_hit)


def test_sfmr_every_node_holds_the_whole_file():
    c = cache_record(spec("sfmr"), nodes=2, ram_bytes=16 * GiB, reads=True)
    assert c.data_per_node_bytes == c.data_set_bytes == 512 * MiB
    assert c.read_back_from == "data written by all ranks"


def test_sfmr_reading_everything_is_not_changed_by_reorder():
    # With --read-scope all every rank reads the whole file; --reorder cannot change whose data
    # that is, so the record must not claim reads came from one other rank.
    c = cache_record(spec("sfmr", reorder=True), nodes=1, ram_bytes=16 * GiB, reads=True)
    assert c.read_back_from == "data written by all ranks"


def test_sfsw_reads_go_through_rank_0():
    c = cache_record(spec("sfsw", reorder=True), nodes=2, ram_bytes=16 * GiB, reads=True)
    assert c.read_back_from == "rank 0 reads the file and sends each rank its data"
