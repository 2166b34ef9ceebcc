import io
import os

import pytest
from hpcio import _engine
from hpcio.live import status
from hpcio.live.status import Goal, Slot, format_status, p99_s, phase_status, read_totals
from hpcio.live.terminal import (
    STATUS_VARIABLE,
    STDOUT_VARIABLE,
    note_streams,
    status_line_wanted,
    stdout_columns,
)
from hpcio.runner.world import SerialComm

MIB = 1 << 20


class Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


@pytest.mark.parametrize(
    ("environ", "tty", "quiet", "wanted"),
    [
        ({}, True, False, True),
        ({}, False, False, False),  # a pipe, or a batch job's log file
        ({"SLURM_JOB_ID": "42"}, False, False, False),
        ({}, True, True, False),  # -q
        ({STATUS_VARIABLE: "1"}, False, False, True),  # a rank: its launcher had a terminal
        ({STATUS_VARIABLE: "0"}, True, False, False),  # its launcher wrote to a pipe
        ({STATUS_VARIABLE: "1"}, True, True, False),  # -q wins over what was inherited
    ],
)
def test_a_line_only_on_a_terminal_and_never_with_q(environ, tty, quiet, wanted):
    environ = dict(environ)
    note_streams(quiet, environ, stdout=Stream(False), stderr=Stream(tty))
    assert status_line_wanted(environ) is wanted


def test_a_stream_without_isatty_is_no_terminal():
    environ: dict[str, str] = {}
    note_streams(False, environ, stdout=object(), stderr=object())  # type: ignore[arg-type]
    assert not status_line_wanted(environ)


@pytest.mark.parametrize(("tty", "columns"), [(True, 80), (False, None)])
def test_stdout_is_noted_with_its_width_when_a_terminal(monkeypatch, tty, columns):
    monkeypatch.setenv("COLUMNS", "80")
    environ: dict[str, str] = {}
    note_streams(False, environ, stdout=Stream(tty), stderr=Stream(False))
    assert stdout_columns(environ) == columns
    assert stdout_columns({STDOUT_VARIABLE: "80"}) == 80  # a rank: its launcher's terminal


def line(goal, elapsed_s=3.0, bytes_done=0, ranks_seen=2, p99=0.00421):
    return format_status(
        "write", elapsed_s=elapsed_s, bytes_per_s=812.3 * MIB, ops_per_s=203.4, p99=p99,
        goal=goal, bytes_done=bytes_done, ranks_seen=ranks_seen, ranks=2,
    )  # fmt: skip


def test_the_line_says_rates_p99_and_what_is_left():
    assert line(Goal(bytes_total=100 * MIB), bytes_done=25 * MIB) == (
        "[write]      812.3 MiB/s        203 op/s  p99 4.21 ms   25% eta 0:00:09"
    )
    assert line(Goal(duration_s=10.0), elapsed_s=2.6).endswith("p99 4.21 ms  0:00:07 left")
    assert line(Goal(duration_s=1.0), elapsed_s=2.0).endswith("0:00:00 left")
    assert line(Goal(), elapsed_s=65).endswith("0:01:05 elapsed")
    assert line(Goal(bytes_total=MIB), bytes_done=0).endswith("  0% eta -")
    assert line(Goal(bytes_total=MIB), bytes_done=2 * MIB).endswith("100% eta 0:00:00")
    assert "p99 -" in line(Goal(), p99=None)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0.00421, "4.21 ms"), (6.651e-6, "6.65 us"), (2.5, "2.5 s"), (0.0, "0 us")],
)
def test_latency_in_the_unit_that_reads_best(seconds, text):
    assert status.format_latency(seconds) == text


def test_the_line_says_when_it_does_not_add_up_every_rank():
    assert line(Goal(), ranks_seen=2).endswith("elapsed")
    assert line(Goal(), ranks_seen=1).endswith("elapsed  [1/2 ranks]")


def test_p99_is_the_top_of_the_bucket_holding_the_99th_percentile():
    tops = [10, 20, 30, 40]
    assert p99_s([0, 0, 0, 0], tops) is None
    assert p99_s([98, 1, 1, 0], tops) == pytest.approx(20e-9)
    assert p99_s([50, 0, 0, 50], tops) == pytest.approx(40e-9)
    assert p99_s([100, 0, 0, 0], tops) == pytest.approx(10e-9)


def test_the_engines_buckets_cover_every_latency_in_order():
    tops = _engine.live_bucket_tops()
    assert tops == sorted(tops) and len(set(tops)) == len(tops)
    assert tops[0] == 0 and tops[-1] == 2**64 - 1


def test_slots_add_up_what_each_rank_recorded_since_the_phase_began(tmp_path):
    directory = str(tmp_path / "status")
    recorder = _engine.Recorder()
    recorder.start(_engine.clock_ns())
    recorder.record("write", 0, 1_000, 4096)  # before the phase: not counted
    slots = [Slot(directory, rank) for rank in range(3)]
    t = _engine.clock_ns()
    for nbytes in (4096, 8192):
        recorder.record("write", t, t + 2_000_000, nbytes)
    for slot in slots[:2]:
        slot.publish()
    totals = read_totals(directory)
    # One process: each published slot holds both writes; the third never published.
    assert (totals.bytes, totals.ops, totals.ranks_seen) == (2 * 12288, 4, 3)
    assert p99_s(totals.latency_counts, _engine.live_bucket_tops()) == pytest.approx(
        2e-3, rel=1 / 16
    )
    for slot in slots:
        slot.remove()
    assert not os.path.exists(directory)
    assert read_totals(directory).ranks_seen == 0


def test_no_line_without_a_terminal_and_nothing_left_behind(monkeypatch, tmp_path):
    made = []
    monkeypatch.setattr(status, "status_directory", lambda: made.append(1) or str(tmp_path / "s"))
    with phase_status(SerialComm(), "write", Goal(), {STATUS_VARIABLE: "0"}):
        pass
    assert made == []


def test_a_phase_on_a_terminal_draws_then_clears_its_line(monkeypatch, tmp_path):
    directory = tmp_path / "s"
    out = Stream(True)
    monkeypatch.setattr(status, "status_directory", lambda: str(directory))
    monkeypatch.setattr(status, "REDRAW_EVERY_S", 0.01)
    monkeypatch.setattr(status, "PUBLISH_EVERY_S", 0.01)
    monkeypatch.setattr(status.sys, "stderr", out)
    recorder = _engine.Recorder()
    with phase_status(SerialComm(), "read", Goal(bytes_total=MIB), {STATUS_VARIABLE: "1"}):
        t = _engine.clock_ns()
        recorder.start(t)
        recorder.record("read", t, t + 1000, MIB)
        while "100%" not in out.getvalue():
            status.time.sleep(0.01)
    drawn = out.getvalue()
    assert drawn.startswith("\r[read]") and drawn.endswith("\r\x1b[K")
    assert not directory.exists()


def test_a_bar_that_owns_the_terminal_gets_the_line_instead_of_stderr(monkeypatch, tmp_path):
    drawn: list[str] = []
    out = Stream(True)
    monkeypatch.setattr(status, "status_directory", lambda: str(tmp_path / "s"))
    monkeypatch.setattr(status, "REDRAW_EVERY_S", 0.01)
    monkeypatch.setattr(status.sys, "stderr", out)
    with (
        status.drawn_by(drawn.append),
        phase_status(SerialComm(), "write", Goal(), {STATUS_VARIABLE: "1"}),
    ):
        while not drawn:
            status.time.sleep(0.01)
    assert drawn[0].startswith("[write]") and drawn[-1] == ""
    assert out.getvalue() == ""
    assert status._drawers == []
