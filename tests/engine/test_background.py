"""Executor.run_background: a plan runs on an engine thread while Python works (training
prefetches reads while it computes); wait() joins it, interruptibly."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
from hpcio import _engine
from hpcio.runner import interrupts
from hpcio.workloads.plans import Op, PlanBuilder, Runs

KiB = 1 << 10
HOUR_NS = 3600 * 10**9


def write_plan(files=2, blocks=8):
    builder, keys = PlanBuilder(), [f"f{i}" for i in range(files)]
    for key in keys:
        builder.control(Op.OPEN_WRITE, key)
    for key in keys:  # one batch: the files take turns
        builder.runs(Op.WRITE, key, Runs.of(0, blocks, 0), 4 * KiB)
    for key in keys:
        builder.control(Op.CLOSE, key)
    return builder.build()


@pytest.fixture
def executor(target_dir):
    return _engine.Executor(_engine.Target(f"file://{target_dir}"), seed=1)


def until(condition) -> None:
    """A hang guard, not a timing check: waits for what must come."""
    deadline = time.monotonic() + 60
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert condition()


def written(target_dir):
    """Seen from outside, while the plan runs: it has written to its first file."""
    return lambda: (target_dir / "f0").exists() and (target_dir / "f0").stat().st_size > 0


def test_returns_at_once_refuses_other_calls_and_wait_joins(executor, target_dir):
    plan = write_plan()
    executor.start(_engine.clock_ns())
    executor.run_background(plan.for_engine(), until_ns=_engine.clock_ns() + HOUR_NS)
    assert executor.busy  # an hour's plan cannot have ended
    for call in (
        executor.figures,
        lambda: executor.start(0),
        lambda: executor.run(plan.for_engine()),
    ):
        with pytest.raises(RuntimeError, match="Executor is busy: a plan runs in the background"):
            call()
    with pytest.raises(RuntimeError, match="busy"):
        executor.run_background(plan.for_engine())
    until(written(target_dir))
    _engine.cancel(True)
    try:
        executor.wait()
    finally:
        _engine.cancel(False)
    assert not executor.busy
    figures = executor.figures()  # what it did until it was stopped
    assert (figures.errors, figures.requests["open"]) == (0, 2)
    assert figures.ops >= 1


def test_the_figures_are_those_of_the_same_plan_run_in_the_foreground(target_dir, executor):
    plan = write_plan()
    executor.run_background(plan.for_engine())
    executor.wait()
    executor.wait()  # nothing runs: returns at once
    background = executor.figures()
    foreground = _engine.Executor(_engine.Target(f"file://{target_dir}"), seed=1)
    foreground.run(plan.for_engine())
    expected = foreground.figures()
    for field in ("bytes", "ops", "errors", "requests"):
        assert getattr(background, field) == getattr(expected, field), field
    assert background.bytes == 2 * 8 * 4 * KiB


def test_a_plan_that_ended_needs_no_wait(executor):
    executor.run_background(write_plan().for_engine())
    until(lambda: not executor.busy)
    assert executor.figures().ops == 16


def test_a_bad_plan_is_refused_before_it_starts(executor):
    ops, key_index, *rest, keys = write_plan().columns()
    with pytest.raises(ValueError, match="key index 2 out of range"):
        executor.run_background(_engine.Plan(ops, key_index + 2, *rest, keys))
    assert not executor.busy
    assert executor.figures().ops == 0


def test_a_run_in_another_thread_makes_it_busy_too(executor, target_dir):
    """The GIL is free while run() works in one thread; a call from another is refused,
    not queued behind it."""
    plan = write_plan()
    until_ns = _engine.clock_ns() + HOUR_NS
    runner = threading.Thread(
        target=executor.run, args=(plan.for_engine(),), kwargs={"until_ns": until_ns}
    )
    runner.start()
    try:
        until(written(target_dir))
        assert executor.busy
        with pytest.raises(RuntimeError, match="another thread is running a call on it"):
            executor.figures()
    finally:
        _engine.cancel(True)
        runner.join()
        _engine.cancel(False)
    assert executor.figures().ops >= 1


def test_wait_under_wait_for_gives_way_to_an_interrupt(executor, target_dir):
    """As the runner waits (interrupts.wait_for): SIGINT stops the plan and raises."""

    def interrupt_once_writing() -> None:
        until(written(target_dir))
        os.kill(os.getpid(), signal.SIGINT)

    handlers = interrupts.install()
    executor.run_background(write_plan().for_engine(), until_ns=_engine.clock_ns() + HOUR_NS)
    interrupter = threading.Thread(target=interrupt_once_writing)
    try:
        with pytest.raises(interrupts.Interrupted):
            interrupter.start()  # in here: the signal may come before wait_for is called
            interrupts.wait_for(executor.wait, settle=True)
        until(lambda: not executor.busy)
    finally:
        interrupter.join()
        _engine.cancel(False)
        interrupts.restore(handlers)
    figures = executor.figures()
    assert (figures.errors, figures.requests["open"]) == (0, 2)
    assert figures.transfer_ns is not None
