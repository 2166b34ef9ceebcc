"""The Recorder: a Python body that does its own I/O gets the figures a plan doing that I/O
gets, so reports cannot tell the two kinds of phase apart."""

from __future__ import annotations

import dataclasses
import os

import numpy as np
import pytest
from hpcio import _engine
from hpcio.runner.aggregate import RankFigures, phase_figures
from hpcio.workloads.contract import RankInfo
from hpcio.workloads.plans import Op, PlanBuilder, Runs

KiB = 1 << 10
FILES, BLOCKS, BLOCK = 3, 8, 64 * KiB
SEED = 7


def write_plan():
    builder = PlanBuilder()
    keys = [f"f{i}" for i in range(FILES)]
    for key in keys:
        builder.control(Op.OPEN_WRITE, key)
    for key in keys:
        builder.runs(Op.WRITE, key, Runs.of(0, BLOCKS, 0), BLOCK)
    for key in keys:
        builder.control(Op.SYNC, key)
    for key in keys:
        builder.control(Op.CLOSE, key)
    return builder.build()


def read_plan():
    builder = PlanBuilder()
    for i in range(FILES):
        builder.control(Op.OPEN_READ, f"f{i}")
        builder.runs(Op.READ, f"f{i}", Runs.of(0, BLOCKS, 0), BLOCK)
        builder.control(Op.CLOSE, f"f{i}")
    return builder.build()


def python_body(directory, recorder: _engine.Recorder) -> None:
    """What the plan above does, with plain os calls, each timed and recorded."""
    clock, buf = _engine.clock_ns, np.empty(BLOCK, np.uint8)
    for i in range(FILES):
        t = clock()
        fd = os.open(directory / f"f{i}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        recorder.record("open", t, clock())
        for b in range(BLOCKS):
            _engine.payload_fill(buf, SEED, 0, f"f{i}", b * BLOCK)
            t = clock()
            os.pwrite(fd, buf, b * BLOCK)
            recorder.record("write", t, clock(), BLOCK)
        t = clock()
        os.fsync(fd)
        recorder.record("sync", t, clock())
        t = clock()
        os.close(fd)
        recorder.record("close", t, clock())


def recorded(directory) -> _engine.Figures:
    recorder = _engine.Recorder()
    recorder.start(_engine.clock_ns())
    python_body(directory, recorder)
    return recorder.figures()


def test_a_python_body_yields_the_figures_of_a_plan_doing_the_same_io(engine_run, target_dir):
    planned = engine_run(write_plan(), seed=SEED)
    body = recorded(target_dir)
    for figures in (planned, body):
        assert (figures.bytes, figures.ops, figures.errors) == (FILES * BLOCKS * BLOCK, 24, 0)
        assert figures.requests == {"open": 3, "write": 24, "fsync": 3, "close": 3}
        assert _engine.histogram_summary(figures.latency_hdr, [0.5])["count"] == 24
        assert sum(figures.timeline_bytes) == FILES * BLOCKS * BLOCK
        assert sum(ops for _, _, ops in figures.latency_series) == 24
        assert None not in (figures.open_ns, figures.transfer_ns, figures.close_ns)
        assert figures.open_ns[0] <= figures.transfer_ns[0] <= figures.close_ns[1]
    # The body wrote the payload itself: the engine reads it back and finds it right.
    check = engine_run(read_plan(), seed=SEED, verify=True)
    assert (check.errors, check.bytes) == (0, FILES * BLOCKS * BLOCK)


def test_times_are_ns_since_t0_and_land_where_a_plan_puts_them():
    recorder = _engine.Recorder()
    t0 = 10**12
    recorder.start(t0)
    recorder.record("open", t0 + 1_000, t0 + 2_000)
    recorder.record("read", t0 + 2_000, t0 + 252_000, 4096)  # ends in timeline bucket 2
    recorder.record("read", t0 + 300_000, t0 + 300_700, 4096)
    recorder.record("close", t0 + 400_000, t0 + 400_050)
    f = recorder.figures()
    assert (f.open_ns, f.transfer_ns, f.close_ns) == (
        (1_000, 2_000),
        (2_000, 300_700),
        (400_000, 400_050),
    )
    assert (f.bytes, f.ops) == (8192, 2)
    summary = _engine.histogram_summary(f.latency_hdr, [0.5])
    assert (summary["count"], summary["min_ns"]) == (2, 700)
    assert summary["max_ns"] == pytest.approx(250_000, rel=1e-3)
    assert (f.timeline_width_ns, f.timeline_bytes) == (100_000, [0, 0, 4096, 4096])
    assert [(i, ops) for i, _, ops in f.latency_series] == [(0, 1), (0, 1)]
    assert f.requests == {"open": 1, "read": 2, "close": 1}


def test_record_many_is_record_one_by_one():
    rng = np.random.default_rng(3)
    n = 5_000
    ops = rng.choice(np.array([Op.OPEN_WRITE, Op.WRITE, Op.READ, Op.SYNC, Op.CLOSE], np.uint8), n)
    starts = np.sort(rng.integers(0, 10**10, n)).astype(np.uint64)
    ends = starts + rng.integers(0, 10**7, n).astype(np.uint64)
    nbytes = np.where((ops == Op.WRITE) | (ops == Op.READ), 4096, 0).astype(np.uint64)
    names = {Op.OPEN_WRITE: "open", Op.WRITE: "write", Op.READ: "read", Op.SYNC: "sync",
             Op.CLOSE: "close"}  # fmt: skip
    many, one = _engine.Recorder(), _engine.Recorder()
    many.record_many(ops, starts, ends, nbytes)
    for op, s, e, b in zip(ops, starts, ends, nbytes, strict=True):
        one.record(names[Op(op)], int(s), int(e), int(b))
    a, b = many.figures(), one.figures()
    for field in ("open_ns", "transfer_ns", "close_ns", "bytes", "ops", "latency_hdr",
                  "timeline_width_ns", "timeline_bytes", "latency_series_width_ns",
                  "latency_series", "requests"):  # fmt: skip
        assert getattr(a, field) == getattr(b, field), field


def test_bad_records_are_refused_whole():
    recorder = _engine.Recorder()
    with pytest.raises(ValueError, match="unknown operation 'fsync'"):
        recorder.record("fsync", 0, 1)
    with pytest.raises(ValueError, match="before it starts"):
        recorder.record("write", 5, 4, 1)
    u64 = lambda *v: np.array(v, np.uint64)  # noqa: E731
    with pytest.raises(ValueError, match="row 1: it ends before it starts"):
        recorder.record_many(np.array([3, 3], np.uint8), u64(0, 9), u64(1, 8), u64(1, 1))
    with pytest.raises(ValueError, match="row 1: unknown plan op code 9"):
        recorder.record_many(np.array([3, 9], np.uint8), u64(0, 0), u64(1, 1), u64(1, 1))
    with pytest.raises(ValueError, match="differ in length"):
        recorder.record_many(np.array([3], np.uint8), u64(0, 0), u64(1, 1), u64(1, 1))
    assert recorder.figures().ops == 0  # nothing of a refused call was recorded


def test_errors_are_counted_and_the_first_kept():
    recorder = _engine.Recorder()
    for n in range(7):
        recorder.error(f"read f{n}: EIO")
    f = recorder.figures()
    assert (f.errors, f.first_errors) == (7, [f"read f{n}: EIO" for n in range(5)])


def test_merged_is_the_union(engine_run, target_dir):
    planned = engine_run(write_plan(), seed=SEED)
    body = recorded(target_dir)
    both = planned.merged(body)
    assert (both.bytes, both.ops) == (planned.bytes + body.bytes, planned.ops + body.ops)
    assert both.requests == {k: 2 * v for k, v in planned.requests.items()}
    assert _engine.histogram_summary(both.latency_hdr, [0.5])["count"] == 48
    assert both.open_ns == (
        min(planned.open_ns[0], body.open_ns[0]),
        max(planned.open_ns[1], body.open_ns[1]),
    )
    assert sum(both.timeline_bytes) == 2 * FILES * BLOCKS * BLOCK
    assert (planned.ops, body.ops) == (24, 24)  # merged() leaves both as they were


def test_the_runner_reduces_recorded_figures_as_it_reduces_a_plans(engine_run, target_dir):
    def reduce(figures: _engine.Figures):
        ranks = [RankFigures.from_engine(RankInfo(r, 2), figures) for r in range(2)]
        return phase_figures("write", 0, ranks)

    planned, body = reduce(engine_run(write_plan(), seed=SEED)), reduce(recorded(target_dir))
    for reduced in (planned, body):
        assert (reduced.bytes_total, reduced.ops_total, reduced.errors) == (2 * 1.5 * 2**20, 48, 0)
        assert reduced.latency.count == 48
        assert reduced.requests == {"open": 6, "write": 48, "fsync": 6, "close": 6}
        assert reduced.bandwidth_bytes_per_s == pytest.approx(
            reduced.bytes_total / reduced.phase_time_s
        )
        assert sum(reduced.series.mib_s) * reduced.series.interval_s == pytest.approx(3.0)
        assert min(reduced.open_time_s, reduced.transfer_time_s, reduced.close_time_s) > 0
    kinds = {f.name: type(getattr(planned, f.name)) for f in dataclasses.fields(planned)}
    assert kinds == {f.name: type(getattr(body, f.name)) for f in dataclasses.fields(body)}
