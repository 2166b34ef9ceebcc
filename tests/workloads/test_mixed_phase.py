"""The mixed phase (--rwmix-read): the seeded draw, its share and interleaving, the plan it
makes, and the runs it refuses."""

import numpy as np
import pytest
from hpcio.errors import SpecError
from hpcio.workloads.contract import Phase, RankInfo
from hpcio.workloads.patterns.mix import draws, side_runs
from hpcio.workloads.plans import Op
from specs import plan_of, run_spec

KiB, MiB = 1 << 10, 1 << 20


def spec(pattern="mfmw", url="file:///tmp", **kw):
    values = dict(ranks=2, size_per_rank_bytes=4 * MiB, transfer_bytes=4 * KiB, rwmix_read_pct=70)
    values.update(kw)
    return run_spec(pattern, url, **values)


def test_the_same_seed_draws_the_same_mix_and_another_seed_another():
    first = draws(7, 1, 2, 1000, 70)
    assert np.array_equal(first, draws(7, 1, 2, 1000, 70))
    assert not np.array_equal(first, draws(8, 1, 2, 1000, 70))
    assert not np.array_equal(first, draws(7, 0, 2, 1000, 70))


@pytest.mark.parametrize("pct", [0, 1, 25, 50, 70, 99, 100])
def test_the_share_of_reads_is_pct_within_the_spread_of_the_draw(pct):
    n = 20_000
    reads = int(draws(3, 0, 1, n, pct).sum())
    # A binomial draw: within 5 standard deviations of n * p (exact at 0 and 100).
    spread = 5 * (n * pct / 100 * (1 - pct / 100)) ** 0.5
    assert abs(reads - n * pct / 100) <= spread


def test_reads_and_writes_interleave_rather_than_follow_each_other():
    read = draws(1, 0, 1, 1000, 50)[0]
    is_read, _, counts = side_runs(read)
    # Many alternations, none of them longer than a draw of 50% makes likely.
    assert len(counts) > 300
    assert counts.max() < 30
    assert is_read.any() and (~is_read).any()


def test_each_side_walks_the_file_in_order_from_its_start():
    read = np.array([True, True, False, True, False, False, True])
    is_read, firsts, counts = side_runs(read)
    assert is_read.tolist() == [True, False, True, False, True]
    assert firsts.tolist() == [0, 0, 2, 1, 3]
    assert counts.tolist() == [2, 1, 1, 2, 1]


@pytest.mark.parametrize("pattern", ["mfmw", "mfmr"])
def test_the_plan_is_the_draw_on_the_ranks_own_files(pattern):
    run = spec(pattern, files_per_rank=2, fsync=True)
    assert run.workload.phases(run) == (Phase.MIXED,)
    assert run.writes
    plan = plan_of(run, Phase.MIXED, RankInfo(1, 2))
    per_file = 2 * MiB // (4 * KiB)
    drawn = draws(run.seed, 1, 2, per_file, 70)
    ops = plan.per_transfer()
    moving = (ops.ops == Op.READ) | (ops.ops == Op.WRITE)
    assert int((ops.ops == Op.READ).sum()) == int(drawn.sum())
    assert int(moving.sum()) == 2 * per_file
    assert set(plan.keys) == {"hpcio-rank000001-file000000.dat", "hpcio-rank000001-file000001.dat"}
    # A key is opened for writing before it is opened for reading; each closes once.
    controls = [Op(o) for o in ops.ops[~moving]]
    assert controls == [Op.OPEN_WRITE] * 2 + [Op.OPEN_READ] * 2 + [Op.SYNC] * 2 + [Op.CLOSE] * 2
    # Every transfer stays in the file, and each side's offsets are its first ones in order.
    assert int(ops.offsets[moving].max()) + 4 * KiB <= 2 * MiB
    assert np.all(ops.writers[moving] == 1)


def test_all_reads_opens_nothing_for_writing():
    plan = plan_of(spec(rwmix_read_pct=100), Phase.MIXED, RankInfo(0, 2))
    assert Op.WRITE not in plan.ops and Op.OPEN_WRITE not in plan.ops


def test_the_layout_is_untimed_each_iteration_and_has_no_mix():
    run = spec(iterations=2)
    laid_out = run.workload.lay_out(run)
    assert laid_out is not None and laid_out.params.rwmix_read_pct is None
    assert run.workload.prepare(run) is None


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        (dict(rwmix_read_pct=101), "0 to 100, got 101"),
        (dict(rwmix_read_pct=-1), "0 to 100, got -1"),
        (dict(phases=("write", "read")), "drop --phases write,read"),
        (dict(reorder=True), "drop --reorder"),
    ],
)
def test_what_a_mix_cannot_do_is_refused_in_one_line(kw, message):
    with pytest.raises(SpecError, match=message):
        spec(**kw)


def test_a_pattern_that_is_not_file_per_process_takes_no_mix():
    run = spec("sfmw")
    assert getattr(run.params, "rwmix_read_pct", None) is None
    assert run.workload.phases(run) == (Phase.WRITE, Phase.READ)
