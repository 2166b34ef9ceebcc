"""The child that reads a Darshan log before hpcio does (trace/darshanlog.py) runs once per log
and process: a log opened again is not read again, a log changed since is."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from hpcio.trace import darshanlog
from replay_logs import darshan_sample


@pytest.fixture
def children(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The command lines of the processes darshanlog starts (each still runs)."""
    started: list[list[str]] = []
    run = subprocess.run

    def counted(command, *args, **kwargs):
        started.append(list(command))
        return run(command, *args, **kwargs)

    monkeypatch.setattr(darshanlog.subprocess, "run", counted)
    return started


def test_a_log_opened_twice_is_read_by_one_child(tmp_path, children):
    log = tmp_path / "simple.darshan"
    shutil.copyfile(darshan_sample("sample-dxt-simple.darshan"), log)
    first = darshanlog.open_log(log)
    second = darshanlog.open_log(log)
    assert len(children) == 1, children
    assert str(log) in children[0]
    assert set(first.records) == set(second.records)
    first._cleanup()
    second._cleanup()


def test_a_log_changed_in_place_is_read_again(tmp_path, children):
    log = tmp_path / "simple.darshan"
    shutil.copyfile(darshan_sample("sample-dxt-simple.darshan"), log)
    darshanlog.open_log(log)._cleanup()
    whole = log.read_bytes()
    log.write_bytes(whole[:6000])  # now cut inside its DXT section
    with pytest.raises(darshanlog.TraceError, match="DXT_POSIX"):
        darshanlog.open_log(log)
    assert len(children) == 2, children


def test_another_copy_of_a_log_is_read_by_its_own_child(tmp_path, children):
    for name in ("one.darshan", "two.darshan"):
        shutil.copyfile(darshan_sample("sample-dxt-simple.darshan"), tmp_path / name)
        darshanlog.open_log(tmp_path / name)._cleanup()
    assert len(children) == 2, children
