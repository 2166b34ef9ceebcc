import numpy as np
import pytest
from hpcio.errors import SpecError
from hpcio.workloads import registry
from hpcio.workloads.contract import Phase, RankInfo
from hpcio.workloads.plans import Op
from specs import plan_of, run_spec

KiB, MiB = 1 << 10, 1 << 20


def spec(pattern="mfmw", **kw):
    values = dict(ranks=2, size_per_rank_bytes=4 * MiB, transfer_bytes=1 * MiB, files_per_rank=2)
    values.update(kw)
    return run_spec(pattern, **values)


def test_all_files_open_before_any_transfer_and_are_visited_round_robin():
    plan = plan_of(spec(fsync=True), Phase.WRITE, RankInfo(1, 2)).per_transfer()
    keys = [plan.keys[i] for i in plan.key_index]
    assert (
        plan.ops.tolist() == [Op.OPEN_WRITE] * 2 + [Op.WRITE] * 4 + [Op.SYNC] * 2 + [Op.CLOSE] * 2
    )
    # Like fio's file_service_type=roundrobin: transfers in flight fall in different files.
    assert keys[2:6] == ["hpcio-rank000001-file000000.dat", "hpcio-rank000001-file000001.dat"] * 2
    assert plan.offsets[2:6].tolist() == [0, 0, MiB, MiB]
    assert np.all(plan.writers[plan.ops == Op.WRITE] == 1)


def test_reorder_reads_the_other_ranks_files():
    plan = plan_of(spec(reorder=True), Phase.READ, RankInfo(0, 2)).per_transfer()
    assert set(plan.keys) == {"hpcio-rank000001-file000000.dat", "hpcio-rank000001-file000001.dat"}
    assert np.all(plan.writers[plan.ops == Op.READ] == 1)


def test_one_file_keeps_the_old_names():
    run = spec(files_per_rank=1)
    assert registry.get("mfmw").keys(run) == ["hpcio-rank000000.dat", "hpcio-rank000001.dat"]
    assert run.to_dict()["params"]["files_per_rank"] == 1
    assert spec().to_dict()["params"]["files_per_rank"] == 2


def test_keys_cover_every_file_for_cleanup():
    assert len(registry.get("mfmr").keys(spec("mfmr", files_per_rank=4))) == 8


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        (dict(files_per_rank=3), "does not split into 3 files of whole transfers"),
        (dict(files_per_rank=0), "--files-per-rank must be at least 1"),
    ],
)
def test_refusals(kw, message):
    with pytest.raises(SpecError, match=message):
        spec(**kw)


def test_only_files_of_a_rank_s_own_take_files_per_rank_and_only_shared_ones_segments():
    """The params of the other patterns do not have the field, so it cannot be given to them
    (the command line's message for trying: tests/test_no_harm.py)."""
    assert registry.taking("files_per_rank", "pattern") == ["mfmw", "mfmr"]
    assert registry.taking("segments", "pattern") == ["sfsw", "sfmw", "sfmr"]
    assert not hasattr(spec("sfmw").params, "files_per_rank")


def test_random_order_keeps_files_round_robin_and_visits_every_transfer_once():
    run = spec(random_offsets=True, files_per_rank=4, size_per_rank_bytes=4 * 8 * MiB)
    plan = plan_of(run, Phase.WRITE, RankInfo(0, 2)).per_transfer()
    moving = plan.ops == Op.WRITE
    files, offsets = plan.key_index[moving], plan.offsets[moving]
    pairs = list(zip(files.tolist(), offsets.tolist(), strict=True))
    assert len(set(pairs)) == len(pairs) == 32  # each (file, offset) once
    for step in range(8):  # every window of 4 consecutive transfers: 4 different files
        assert len(set(files[4 * step : 4 * step + 4].tolist())) == 4
    first_file = files[0]
    own = offsets[files == first_file].tolist()
    assert sorted(own) == [i * MiB for i in range(8)] and own != sorted(own)
