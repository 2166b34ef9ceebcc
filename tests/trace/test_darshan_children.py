"""The child that reads a Darshan log before hpcio does (trace/darshanlog.py) runs once per log
and process: a log opened again is not read again, a log changed since is."""

from __future__ import annotations

import shutil

import pytest
from hpcio.trace import darshanlog
from replay_logs import darshan_sample


@pytest.fixture
def children(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The arguments of the child processes darshanlog starts (each still runs)."""
    started: list[list[str]] = []
    start = darshanlog.multiprocessing.context.ForkServerProcess.start

    def counted(process) -> None:
        started.append([str(argument) for argument in process._args])
        start(process)

    monkeypatch.setattr(darshanlog.multiprocessing.context.ForkServerProcess, "start", counted)
    return started


def test_one_child_per_log_and_content(tmp_path, children):
    # One log opened twice, another copy of it once, then the first cut inside its DXT section.
    one, two = tmp_path / "one.darshan", tmp_path / "two.darshan"
    for log in (one, two):
        shutil.copyfile(darshan_sample("sample-dxt-simple.darshan"), log)
    first = darshanlog.open_log(one)
    second = darshanlog.open_log(one)
    assert [str(one) in command for command in children] == [True]
    assert set(first.records) == set(second.records)
    first._cleanup()
    second._cleanup()
    darshanlog.open_log(two)._cleanup()
    assert [str(two) in command for command in children] == [False, True]
    one.write_bytes(one.read_bytes()[:6000])
    with pytest.raises(darshanlog.TraceError, match="DXT_POSIX"):
        darshanlog.open_log(one)
    assert [str(one) in command for command in children] == [True, False, True]
