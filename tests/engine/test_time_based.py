"""fio's time_based inside the engine: lanes go round their own files until the deadline."""

import numpy as np
import pytest
from hpcio import _engine
from hpcio.workloads.plans import Op, PlanBuilder, Runs

KiB = 1 << 10
FILES, BLOCKS = 4, 8  # four files of 8 x 4 KiB


def plan_of(op: Op, open_op: Op):
    builder = PlanBuilder()
    keys = [f"f{i}" for i in range(FILES)]
    for key in keys:
        builder.control(open_op, key)
    for key in keys:  # the files take turns
        builder.runs(op, key, Runs.of(0, BLOCKS, 0), 4 * KiB)
    for key in keys:
        builder.control(Op.CLOSE, key)
    return builder.build()


@pytest.mark.parametrize("in_flight", [1, 4])
def test_lanes_repeat_until_the_deadline_then_close_once(engine_run, target_dir, in_flight):
    write = engine_run(plan_of(Op.WRITE, Op.OPEN_WRITE), in_flight=in_flight, seconds=0.2)
    rows = FILES * BLOCKS
    assert write.errors == 0
    assert write.ops > 3 * rows  # went round more than three times
    assert write.bytes == write.ops * 4 * KiB
    assert write.transfer_ns[1] >= 0.2e9  # no lane stopped before the deadline
    assert write.requests == {"open": FILES, "write": write.ops, "close": FILES}
    for i in range(FILES):
        data = np.fromfile(target_dir / f"f{i}", np.uint8)
        assert len(data) == BLOCKS * 4 * KiB
        assert _engine.payload_check(data, 1, 0, f"f{i}", 0) is None

    read = engine_run(plan_of(Op.READ, Op.OPEN_READ), in_flight=in_flight, verify=True,
                      seconds=0.2)  # fmt: skip
    assert read.errors == 0
    assert read.ops > 3 * rows
    assert read.transfer_ns[1] >= 0.2e9


def test_a_past_deadline_still_moves_a_transfer_per_lane(engine_run):
    write = engine_run(plan_of(Op.WRITE, Op.OPEN_WRITE), in_flight=4, seconds=0)
    assert 1 <= write.ops <= 4


def test_time_based_runs_refuse_caller_buffers(target_dir):
    plan = plan_of(Op.WRITE, Op.OPEN_WRITE)
    executor = _engine.Executor(_engine.Target(f"file://{target_dir}"), seed=1)
    source = np.zeros(FILES * BLOCKS * 4 * KiB, np.uint8)
    with pytest.raises(ValueError, match="payload data only"):
        executor.run(plan.for_engine(), source=source, until_ns=1)


@pytest.mark.parametrize("in_flight", [1, 4])
def test_a_cancelled_run_stops_at_once_and_closes_its_files(engine_run, in_flight):
    """An interrupt sets the cancel flag while a phase runs with the GIL released."""
    _engine.cancel(True)
    try:
        write = engine_run(plan_of(Op.WRITE, Op.OPEN_WRITE), in_flight=in_flight, seconds=3600)
    finally:
        _engine.cancel(False)
    assert write.ops == 0  # an hour's phase: not one transfer, not even an open
    assert write.requests == {}
    again = engine_run(plan_of(Op.WRITE, Op.OPEN_WRITE), in_flight=in_flight, seconds=0)
    assert again.ops >= 1  # cleared: later runs move data again
