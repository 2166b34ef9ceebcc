"""The library APIs walk a rank's engine plan: the same operations as the engine makes, with
no per-transfer table for an ordered plan."""

import pytest
from hpcio.workloads.apis import library_walk
from hpcio.workloads.contract import Phase
from specs import body_of, run_spec

MiB = 1 << 20


def engine_order(plan):
    rows = plan.per_transfer()
    return list(zip(rows.ops.tolist(), rows.key_index.tolist(), rows.offsets.tolist(),
                    rows.lengths.tolist(), rows.writers.tolist(), strict=True))  # fmt: skip


@pytest.mark.parametrize(
    ("pattern", "settings"),
    [("sfmw", {"segments": 4}), ("mfmw", {}), ("sfmr", {"reorder": True}),
     ("mfmw", {"random_offsets": True}), ("mfmw", {"files_per_rank": 1, "fsync": True})],
)  # fmt: skip
@pytest.mark.parametrize("phase", [Phase.WRITE, Phase.READ])
def test_a_single_file_plan_replays_in_the_engine_s_order(pattern, settings, phase):
    if pattern == "sfmr" and phase is Phase.WRITE:
        pytest.skip("sfmr only reads")
    run = run_spec(pattern, ranks=4, size_per_rank_bytes=4 * MiB, transfer_bytes=256 << 10,
                   **settings)  # fmt: skip
    plan = body_of(run, phase, 2).plan
    assert list(library_walk.operations(plan)) == engine_order(plan)


def test_several_files_replay_every_transfer_once():
    run = run_spec("mfmw", ranks=2, size_per_rank_bytes=4 * MiB, transfer_bytes=256 << 10,
                   files_per_rank=4)  # fmt: skip
    plan = body_of(run, Phase.WRITE, 1).plan
    assert sorted(library_walk.operations(plan)) == sorted(engine_order(plan))


def test_each_file_is_as_long_as_its_last_transfer():
    run = run_spec("mfmw", ranks=2, size_per_rank_bytes=4 * MiB, transfer_bytes=256 << 10,
                   files_per_rank=4)  # fmt: skip
    plan = body_of(run, Phase.WRITE, 1).plan
    assert library_walk._extents(plan).tolist() == [MiB] * 4
