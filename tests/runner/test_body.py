"""The Python-body phase (runner/body.py) on one rank: the Recorder's figures, a plan in the
background merged into them, metrics, and an OSError that fails the phase, not the process."""

import numpy as np
from hpcio import _engine
from hpcio.runner.body import run_python_body
from hpcio.runner.stage import Stage
from hpcio.runner.world import SerialComm
from hpcio.workloads.contract import Phase, PythonBody, RankInfo
from specs import plan_of, run_spec

MiB = 1 << 20


def _phase(run, call, phase=Phase.WRITE):
    target = _engine.Target(run.target.url)
    stage = Stage(SerialComm(), target, run, RankInfo(0, 1))
    return run_python_body(stage, phase, PythonBody(call))


def test_a_background_plan_and_the_bodys_own_calls_make_one_figures():
    run = run_spec("mfmw", "memory://", size_per_rank_bytes=4 * MiB, transfer_bytes=MiB)
    writes = plan_of(run, Phase.WRITE)

    def body(context):
        running = context.background(writes, in_flight=2)
        start = _engine.clock_ns()
        context.recorder.record("read", start, start + 1_000, 4096)  # the body's own call
        running.wait()
        context.metrics["samples"] = 3

    figures = _phase(run, body)
    assert figures.bytes == 4 * MiB + 4096
    assert figures.ops == 4 + 1
    assert figures.requests["read"] == 1
    assert figures.metrics == {"samples": 3}
    assert figures.errors == 0
    assert figures.transfer_ns is not None and figures.open_ns is not None


def test_an_oserror_in_the_body_is_an_error_of_the_phase():
    run = run_spec("mfmw", "memory://", size_per_rank_bytes=MiB, transfer_bytes=MiB)

    def body(context):
        raise FileNotFoundError(2, "No such file or directory", "/nowhere/x")

    figures = _phase(run, body)
    assert figures.errors == 1
    assert "FileNotFoundError" in figures.first_errors[0]


def test_plans_running_at_once_count_each_request_once(target_dir):
    """Each executor counts the target's requests since it started: two plans in flight
    together would each count the other's (training prefetches so), unless the phase counts
    them once for the rank."""
    run = run_spec("mfmw", f"file://{target_dir}", size_per_rank_bytes=4 * MiB,
                   transfer_bytes=MiB)  # fmt: skip
    writes = plan_of(run, Phase.WRITE)
    written = _phase(run, lambda context: context.background(writes, in_flight=1).wait())
    assert written.requests["write"] == 4

    def two_at_once(context):
        first = context.background(plan_of(run, Phase.READ), in_flight=1)
        second = context.background(plan_of(run, Phase.READ), in_flight=1)
        first.wait()
        second.wait()
        context.write_from(writes, np.zeros(4 * MiB, np.uint8), in_flight=1)

    figures = _phase(run, two_at_once, Phase.READ)
    assert figures.ops == 4 + 4 + 4
    assert figures.requests["read"] == 8
    assert figures.requests["write"] == 4
    assert figures.requests["open"] == 3
