"""Executor.abort_shared: rank 0 aborts the shared upload it began from the engine's own record
of it, so an interrupt that lands before Python holds the upload's id, or while the
interrupted call still runs on the executor, leaves no multipart upload open (S3 bills for its
parts)."""

from __future__ import annotations

from hpcio import _engine
from hpcio.workloads.plans import Op, PlanBuilder, Runs

PART = 5 << 20
KEY = "shared.dat"


def executor():
    return _engine.Executor(_engine.Target("memory://"), seed=1)


def some_writes(seconds):
    builder = PlanBuilder()
    builder.control(Op.OPEN_WRITE, "other")
    builder.runs(Op.WRITE, "other", Runs.of(0, 4, 0), 4096)
    builder.control(Op.CLOSE, "other")
    return builder.build().for_engine(), _engine.clock_ns() + int(seconds * 1e9)


def test_the_upload_begun_is_aborted_without_its_id():
    shared = executor()
    upload_id = shared.begin_shared(KEY, PART)
    assert upload_id is not None, shared.figures().first_errors
    assert shared.abort_shared(KEY) is None
    assert not shared.finish_shared(KEY, upload_id, [])  # the store no longer knows it


def test_the_abort_waits_for_a_call_still_running_on_the_executor():
    shared = executor()
    upload_id = shared.begin_shared(KEY, PART)
    assert upload_id is not None
    plan, until_ns = some_writes(0.5)
    shared.start(_engine.clock_ns())
    shared.run_background(plan, until_ns=until_ns)
    assert shared.busy  # the abort below comes while the plan runs
    assert shared.abort_shared(KEY) is None
    assert not shared.busy
    assert not shared.finish_shared(KEY, upload_id, [])


def test_a_completed_upload_is_not_aborted_afterwards():
    shared = executor()
    upload_id = shared.begin_shared(KEY, PART)
    assert upload_id is not None
    assert shared.finish_shared(KEY, upload_id, []), shared.figures().first_errors
    assert shared.abort_shared(KEY) is None  # nothing of this rank's is open any more
    assert shared.abort_shared("never-begun") is None
