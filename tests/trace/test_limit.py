"""A trace keeps at most a limit of operations per rank; the rest are counted and the
document says so, so a long time-based run cannot fill a node's memory with its trace."""

from types import SimpleNamespace

import numpy as np
from hpcio import _engine
from hpcio.runner import tracing
from hpcio.spec.target import TargetSpec
from hpcio.trace import operations


def recorded(limit: int, count: int) -> tuple:
    recorder = _engine.Recorder(trace=True, trace_limit=limit)
    recorder.start(0)
    for n in range(count):
        recorder.record("write", 10 * n, 10 * n + 5, 4096, file="f", offset=4096 * n)
    columns = recorder.take_trace()
    assert columns is not None
    return columns


def test_the_engine_keeps_the_first_operations_up_to_its_limit_and_counts_the_rest():
    columns = recorded(3, 5)
    offsets, not_kept = columns[3], columns[-1]
    assert list(offsets) == [0, 4096, 8192]
    assert not_kept == 2
    # Without a limit given, the default one (far above this) keeps everything.
    assert recorded(_engine.TRACE_LIMIT, 5)[-1] == 0
    assert len(recorded(_engine.TRACE_LIMIT, 5)[1]) == 5


def test_a_rank_keeps_at_most_its_limit_over_the_whole_run(tmp_path):
    # The tracer asks the run only where its files are.
    run = SimpleNamespace(target=TargetSpec.from_url(f"file://{tmp_path}"))
    tracer = tracing.Tracer(0, 0, str(tmp_path), run, limit=4)
    tracer.add(recorded(10, 3))  # 3 kept
    tracer.add(recorded(2, 3))  # 2 recorded, 1 not kept by the engine; 1 more than room
    assert tracer.write() == 4
    assert tracer.not_kept == 2
    kept = operations.load(tracer.path)
    assert len(kept.offset) == 4
    assert np.all(np.diff(kept.start_ns) >= 0)


def test_the_document_says_how_many_operations_are_not_in_the_trace():
    whole = tracing.record("d", 2, [(10, 0), (10, 0)])
    assert "operations_not_kept" not in whole
    assert tracing.warnings(whole) == ()
    cut = tracing.record("d", 3, [(16, 5), (16, 0), (16, 7)])
    assert (cut["operations"], cut["operations_not_kept"], cut["ranks_at_limit"]) == (48, 12, 2)
    (warning,) = tracing.warnings(cut)
    assert "2 rank(s) reached the limit" in warning and "12 later operation(s)" in warning
