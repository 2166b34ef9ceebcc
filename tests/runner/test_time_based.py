import numpy as np
from hpcio.runner.time_based import chunk_rows, run_until
from hpcio.workloads._base import Op, PlanBuilder

KiB, MiB = 1 << 10, 1 << 20


class Recorder:
    """Stands in for the engine executor: keeps each call's ops and offsets."""

    def __init__(self):
        self.calls = []

    def run(self, ops, key_index, offsets, lengths, writers, keys):
        self.calls.append((ops.tolist(), offsets.tolist()))


def five_transfers():
    offsets = np.arange(5, dtype=np.uint64) * np.uint64(4 * KiB)
    builder = PlanBuilder().control(Op.OPEN_WRITE, "f")
    builder.transfers(Op.WRITE, "f", offsets, 4 * KiB, 0)
    return builder.control(Op.SYNC, "f").control(Op.CLOSE, "f").build()


def ticking(*times):
    values = iter(times)
    return lambda: next(values)


def test_transfers_wrap_around_until_the_deadline_open_and_close_once():
    recorder = Recorder()
    # 2 rows by 10 ns: 0.2 rows/ns, so 6 rows fill the 30 ns left (cut at the plan's end);
    # 5 rows by 25 ns: 3 rows fill the 15 ns left.
    run_until(recorder, five_transfers(), deadline_ns=40, first_rows=2,
              clock=ticking(0, 10, 25, 40))  # fmt: skip
    k = 4 * KiB
    assert recorder.calls == [
        ([Op.OPEN_WRITE], [0]),
        ([Op.WRITE] * 2, [0, k]),
        ([Op.WRITE] * 3, [2 * k, 3 * k, 4 * k]),
        ([Op.WRITE] * 3, [0, k, 2 * k]),
        ([Op.SYNC, Op.CLOSE], [0, 0]),
    ]


def test_chunks_keep_at_least_min_rows():
    recorder = Recorder()
    # 1 row by 50 ns would size the next chunk at 1 row for the 50 ns left: min_rows wins.
    run_until(recorder, five_transfers(), deadline_ns=100, first_rows=1, min_rows=3,
              clock=ticking(0, 50, 100))  # fmt: skip
    assert [len(ops) for ops, _ in recorder.calls] == [1, 1, 3, 2]


def test_one_chunk_runs_even_past_the_deadline():
    recorder = Recorder()
    run_until(recorder, five_transfers(), deadline_ns=0, first_rows=8, clock=ticking(0, 5))
    assert [len(ops) for ops, _ in recorder.calls] == [1, 5, 2]


def test_first_chunk_holds_about_64_mib_and_keeps_every_lane_busy():
    assert chunk_rows(MiB, 32) == 8 * 32
    assert chunk_rows(16 * MiB, 1) == 8
    assert chunk_rows(4 * KiB, 1) == 16_384
