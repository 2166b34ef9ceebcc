import numpy as np
import pytest
from hpcio.errors import SpecError
from hpcio.workloads import registry
from hpcio.workloads.contract import Phase, RankInfo
from hpcio.workloads.patterns.common import file_bytes
from hpcio.workloads.patterns.mfmw import rank_key
from hpcio.workloads.patterns.sfmw import SHARED_KEY
from hpcio.workloads.patterns.sfsw import SFSW_KEY, chunks
from hpcio.workloads.plans import Op
from specs import body_of, plan_of, run_spec

KiB = 1 << 10
BLOCK = 64 * KiB


def spec(pattern="sfmw", ranks=4, segments=1, block=BLOCK, transfer=BLOCK, **more):
    """`segments` blocks per rank: a shared file's interleaved segments, or one after the
    other in a rank's own file (whose params have no segments)."""
    return run_spec(
        pattern,
        ranks=ranks,
        size_per_rank_bytes=segments * block,
        transfer_bytes=transfer,
        segments=segments,
        **more,
    )


def transfers(plan, op):
    rows = plan.ops == op
    return plan.offsets[rows].tolist(), plan.lengths[rows].tolist(), plan.writers[rows].tolist()


def test_sfmw_write_offsets_interleave_segments():
    plan = plan_of(spec(segments=2), Phase.WRITE, RankInfo(1, 4)).per_transfer()
    assert plan.offsets[plan.ops == Op.WRITE].tolist() == [BLOCK, 5 * BLOCK]


def test_sfmw_write_plan_rows():
    plan = plan_of(
        spec(segments=2, transfer=BLOCK // 2), Phase.WRITE, RankInfo(2, 4)
    ).per_transfer()
    t = BLOCK // 2
    assert plan.ops.tolist() == [Op.OPEN_WRITE, Op.WRITE, Op.WRITE, Op.WRITE, Op.WRITE, Op.CLOSE]
    assert plan.keys == (SHARED_KEY,)
    assert plan.key_index.tolist() == [0] * 6
    assert transfers(plan, Op.WRITE) == (
        [2 * BLOCK, 2 * BLOCK + t, 6 * BLOCK, 6 * BLOCK + t],
        [t] * 4,
        [2] * 4,
    )
    assert plan.transfer_bytes_total == 2 * BLOCK


def test_sfmw_ranks_tile_the_shared_file_exactly_once():
    run = spec(segments=3, transfer=BLOCK // 4)
    offsets = np.concatenate(
        [plan_of(run, Phase.WRITE, RankInfo(r, 4)).per_transfer().offsets[1:-1] for r in range(4)]
    )
    assert sorted(offsets.tolist()) == list(range(0, file_bytes(run), run.params.transfer_bytes))


def test_sfmw_read_reads_own_region_back():
    run = spec(segments=2)
    plan = plan_of(run, Phase.READ, RankInfo(3, 4)).per_transfer()
    assert plan.ops.tolist() == [Op.OPEN_READ, Op.READ, Op.READ, Op.CLOSE]
    assert transfers(plan, Op.READ) == ([3 * BLOCK, 7 * BLOCK], [BLOCK] * 2, [3, 3])


def test_mfmw_write_offsets_are_in_the_rank_file():
    run = spec("mfmw", segments=2, transfer=BLOCK // 2)
    plan = plan_of(run, Phase.WRITE, RankInfo(3, 4)).per_transfer()
    t = BLOCK // 2
    assert plan.keys == ("hpcio-rank000003.dat",)
    assert transfers(plan, Op.WRITE) == ([0, t, BLOCK, BLOCK + t], [t] * 4, [3] * 4)


def test_mfmw_every_rank_has_its_own_file():
    run = spec("mfmw")
    keys = [plan_of(run, Phase.WRITE, RankInfo(r, 4)).per_transfer().keys for r in range(4)]
    assert keys == [(rank_key(r),) for r in range(4)]
    assert registry.get("mfmw").keys(run) == [rank_key(r) for r in range(4)]
    assert rank_key(12) == "hpcio-rank000012.dat"


def test_mfmw_read_without_reorder_reads_own_file():
    plan = plan_of(spec("mfmw"), Phase.READ, RankInfo(2, 4)).per_transfer()
    assert plan.keys == (rank_key(2),)
    assert transfers(plan, Op.READ) == ([0], [BLOCK], [2])


def test_sfmr_all_reads_whole_file_with_owners():
    run = spec("sfmr", ranks=2, segments=2)
    plan = plan_of(run, Phase.READ, RankInfo(1, 2)).per_transfer()
    assert plan.keys == (SHARED_KEY,)
    # segment 0: rank 0, rank 1; segment 1: rank 0, rank 1
    assert transfers(plan, Op.READ) == ([0, BLOCK, 2 * BLOCK, 3 * BLOCK], [BLOCK] * 4, [0, 1, 0, 1])
    assert plan.transfer_bytes_total == file_bytes(run)


def test_sfmr_all_with_small_transfers_names_the_owner_of_each():
    run = spec("sfmr", ranks=3, transfer=BLOCK // 2)
    offsets, _, writers = transfers(
        plan_of(run, Phase.READ, RankInfo(0, 3)).per_transfer(), Op.READ
    )
    assert offsets == [i * BLOCK // 2 for i in range(6)]
    assert writers == [0, 0, 1, 1, 2, 2]


def test_sfmr_own_reads_only_the_rank_region():
    run = spec("sfmr", segments=2, read_scope="own")
    plan = plan_of(run, Phase.READ, RankInfo(1, 4)).per_transfer()
    assert transfers(plan, Op.READ) == ([BLOCK, 5 * BLOCK], [BLOCK] * 2, [1, 1])


def test_reading_patterns_are_prepared_by_their_writers():
    for reader, writer in (("sfmr", "sfmw"), ("mfmr", "mfmw")):
        reading = spec(reader)
        layout = registry.get(reader).prepare(reading)
        assert registry.get(reader).phases(reading) == (Phase.READ,)
        assert layout.fsync and not layout.verify
        # The layout writes what the writing pattern writes, so the reads find its files.
        assert plan_of(layout, Phase.WRITE, 1).keys == plan_of(spec(writer), Phase.WRITE, 1).keys
        # Data an earlier --keep run left is read as it is: nothing is laid out.
        assert registry.get(reader).prepare(spec(reader, phases=("read",))) is None
    run = spec("mfmr", segments=2)
    mfmr = plan_of(run, Phase.READ, RankInfo(1, 4)).per_transfer()
    assert transfers(mfmr, Op.READ) == ([0, BLOCK], [BLOCK] * 2, [1, 1])
    assert mfmr.keys == (rank_key(1),)


@pytest.mark.parametrize(("rank", "expected"), [(0, 1), (1, 2), (2, 3), (3, 0)])
def test_reorder_on_one_node_reads_next_rank(rank, expected):
    who = RankInfo(rank, 4, node=0, local_rank=rank, ranks_per_node=4, nodes=1)
    assert who.read_source(reorder=True) == expected
    assert who.read_source(reorder=False) == rank


@pytest.mark.parametrize(("rank", "expected"), [(0, 2), (1, 3), (2, 4), (3, 5), (4, 0), (5, 1)])
def test_reorder_on_several_nodes_reads_next_node(rank, expected):
    who = RankInfo(rank, 6, node=rank // 2, local_rank=rank % 2, ranks_per_node=2, nodes=3)
    assert who.read_source(reorder=True) == expected


@pytest.mark.parametrize(
    ("placement", "expected"),
    [
        ((0, 0, 1, 1), (2, 3, 0, 1)),  # in blocks (mpiexec's default): IOR's shift
        ((0, 1, 0, 1), (1, 0, 3, 2)),  # round robin (--map-by node): a shift of 2 stays home
        ((0, 1, 2, 0, 1, 2), (1, 2, 0, 4, 5, 3)),
        ((0, 0, 0, 1), (3, 3, 3, 0)),  # a node with fewer ranks is read from by several
    ],
)
def test_reorder_reads_the_next_node_wherever_ranks_are_placed(placement, expected):
    nodes = max(placement) + 1
    per_node = max(placement.count(n) for n in range(nodes))
    sources = []
    for rank, node in enumerate(placement):
        local = placement[:rank].count(node)
        who = RankInfo(rank, len(placement), node, local, per_node, nodes, placement)
        sources.append(who.read_source(reorder=True))
    assert tuple(sources) == expected
    assert all(placement[s] != placement[r] for r, s in enumerate(sources))
    assert who.read_sources(reorder=True) == expected


def test_reorder_alone_reads_itself():
    assert RankInfo(0, 1).read_source(reorder=True) == 0


def test_mfmw_reorder_reads_other_node_file():
    run = spec("mfmw", reorder=True)
    who = RankInfo(1, 4, node=0, local_rank=1, ranks_per_node=2, nodes=2)
    plan = plan_of(run, Phase.READ, who).per_transfer()
    assert plan.keys == (rank_key(3),)
    assert transfers(plan, Op.READ) == ([0], [BLOCK], [3])
    # writing is unaffected by reorder
    assert plan_of(run, Phase.WRITE, who).per_transfer().keys == (rank_key(1),)


def test_sfmw_reorder_reads_next_rank_region():
    run = spec(segments=2, reorder=True)
    plan = plan_of(run, Phase.READ, RankInfo(3, 4)).per_transfer()
    assert transfers(plan, Op.READ) == ([0, 4 * BLOCK], [BLOCK] * 2, [0, 0])


def test_sfsw_chunks_are_bounded_by_the_gather_chunk():
    run = spec("sfsw", ranks=2, block=1024 * KiB, transfer=64 * KiB, gather_chunk_bytes=256 * KiB)
    assert list(chunks(run, 1)) == [(1024 * KiB + k * 256 * KiB, 256 * KiB) for k in range(4)]


def test_sfsw_chunks_round_down_to_whole_transfers():
    run = spec("sfsw", ranks=2, block=1024 * KiB, transfer=64 * KiB, gather_chunk_bytes=200 * KiB)
    pieces = list(chunks(run, 0))
    assert pieces == [(k * 192 * KiB, 192 * KiB) for k in range(5)] + [(960 * KiB, 64 * KiB)]
    assert all(length <= run.params.gather_chunk_bytes for _, length in pieces)
    assert all(length % run.params.transfer_bytes == 0 for _, length in pieces)


def test_sfsw_chunk_never_smaller_than_a_transfer():
    run = spec("sfsw", ranks=2, block=256 * KiB, transfer=128 * KiB, gather_chunk_bytes=KiB)
    assert list(chunks(run, 1)) == [(256 * KiB, 128 * KiB), (384 * KiB, 128 * KiB)]


def test_sfsw_chunks_stay_inside_segments_and_tile_the_file():
    run = spec(
        "sfsw", ranks=3, segments=2, block=96 * KiB, transfer=32 * KiB, gather_chunk_bytes=64 * KiB
    )
    assert list(chunks(run, 1)) == [
        (96 * KiB, 64 * KiB),
        (160 * KiB, 32 * KiB),
        (384 * KiB, 64 * KiB),
        (448 * KiB, 32 * KiB),
    ]
    transfer = run.params.transfer_bytes
    # The collector gets every rank's pieces, by rank.
    assert body_of(run, Phase.WRITE, 0).pieces == tuple(chunks(run, r) for r in range(3))
    covered = []
    for r in range(3):
        for off, length in chunks(run, r):
            assert length % transfer == 0
            covered += range(off, off + length, transfer)
    assert sorted(covered) == list(range(0, file_bytes(run), transfer))


def test_sfsw_plan_is_the_collector_open_and_close():
    plan = plan_of(spec("sfsw", fsync=True), Phase.WRITE, RankInfo(0, 4)).per_transfer()
    assert plan.ops.tolist() == [Op.OPEN_WRITE, Op.SYNC, Op.CLOSE]
    assert plan.keys == (SFSW_KEY,)
    read = plan_of(spec("sfsw"), Phase.READ, RankInfo(0, 4)).per_transfer()
    assert read.ops.tolist() == [Op.OPEN_READ, Op.CLOSE]


@pytest.mark.parametrize("pattern", ["sfmw", "mfmw"])
def test_fsync_adds_one_sync_before_close(pattern):
    plain = plan_of(spec(pattern, transfer=BLOCK // 2), Phase.WRITE, RankInfo(0, 4)).per_transfer()
    synced = plan_of(
        spec(pattern, transfer=BLOCK // 2, fsync=True), Phase.WRITE, RankInfo(0, 4)
    ).per_transfer()
    assert Op.SYNC not in plain.ops.tolist()
    assert synced.ops.tolist() == [Op.OPEN_WRITE, Op.WRITE, Op.WRITE, Op.SYNC, Op.CLOSE]


def test_fsync_does_not_touch_reads():
    plan = plan_of(spec(fsync=True), Phase.READ, RankInfo(0, 4)).per_transfer()
    assert Op.SYNC not in plan.ops.tolist()


def test_plan_columns_have_engine_dtypes():
    plan = plan_of(spec(), Phase.WRITE, RankInfo(0, 4))
    dtypes = [np.uint8, np.uint32, np.uint64, np.uint64, np.uint64, np.uint64, np.uint32]
    assert [c.dtype for c in plan.columns()[:-1]] == dtypes
    assert [c.dtype for c in plan.per_transfer().columns()[:-1]] == dtypes


GiB = 1 << 30


def plan_bytes(plan):
    return sum(c.nbytes for c in plan.columns()[:-1])


@pytest.mark.parametrize(("pattern", "per_rank"), [("sfmw", 1), ("mfmw", 1), ("sfmr", 2)])
def test_a_256_gib_rank_of_4_kib_transfers_is_planned_in_a_few_rows(pattern, per_rank):
    """The plan describes runs, not transfers: these 64 Mi transfers took 3 GB of plan before.
    (sfmr reads the whole file of both ranks.)"""
    run = spec(pattern, ranks=2, block=256 * GiB, transfer=4 * KiB)
    for phase in registry.get(pattern).phases(run):
        plan = plan_of(run, phase, RankInfo(1, 2))
        assert len(plan) <= 4 and plan_bytes(plan) < 1024
        assert plan.transfer_bytes_total == per_rank * 256 * GiB
        assert plan.largest_batch == per_rank * 256 * GiB // (4 * KiB)


def test_sfmr_rows_grow_with_segments_and_ranks_not_transfers():
    run = spec("sfmr", ranks=3, segments=5, block=GiB, transfer=4 * KiB)
    plan = plan_of(run, Phase.READ, RankInfo(0, 3))
    transfers = plan.ops == Op.READ
    assert transfers.sum() == 15  # a run per block
    assert plan.writers[transfers].tolist() == [0, 1, 2] * 5
    assert plan.counts[transfers].tolist() == [GiB // (4 * KiB)] * 15


def test_random_order_is_the_engines_and_stores_no_permutation():
    run = spec("mfmw", ranks=2, block=256 * GiB, transfer=4 * KiB, random_offsets=True)
    write = plan_of(run, Phase.WRITE, RankInfo(1, 2))
    assert write.shuffle == (run.seed, 1, 0) and len(write) == 3
    assert plan_of(run, Phase.READ, RankInfo(1, 2)).shuffle == (run.seed, 1, 1)


def test_large_offsets_do_not_overflow():
    run = spec(ranks=4096, block=1 << 30, transfer=1 << 30)
    plan = plan_of(run, Phase.WRITE, RankInfo(4095, 4096)).per_transfer()
    assert plan.offsets[1] == 4095 * (1 << 30)


def test_unknown_pattern_is_a_spec_error():
    with pytest.raises(SpecError, match="unknown pattern 'sfxw'; did you mean 'sfsw'"):
        registry.get("sfxw", "pattern")
    with pytest.raises(SpecError, match="unknown pattern 'xyz'; choose one of sfsw, sfmw, mfmw"):
        registry.get("xyz", "pattern")


def test_blocks_for_many_keys_are_the_rows_of_one_key_after_another():
    """PlanBuilder.controls and runs_in_each (one numpy block for all keys) give exactly the
    rows that adding each key on its own gives."""
    from hpcio.workloads.plans import Op, PlanBuilder, Runs

    keys = [f"k{i}" for i in range(5)]
    runs = Runs.of([0, 8192], 2, [3, 4])
    one_by_one = PlanBuilder()
    for key in keys:
        one_by_one.control(Op.OPEN_WRITE, key)
    for key in keys:
        one_by_one.runs(Op.WRITE, key, runs, 4096)
    for key in keys:
        one_by_one.control(Op.CLOSE, key)
    blocks = PlanBuilder().controls(Op.OPEN_WRITE, keys)
    blocks.runs_in_each(Op.WRITE, keys, runs, 4096).controls(Op.CLOSE, keys)
    a, b = one_by_one.build(), blocks.build()
    assert a.keys == b.keys == tuple(keys)
    for column_a, column_b in zip(a.columns()[:-1], b.columns()[:-1], strict=True):
        assert column_a.tolist() == column_b.tolist()
