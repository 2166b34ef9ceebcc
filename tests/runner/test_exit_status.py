"""A job's exit code handed from rank 0 to its launcher through a file (runner/exit_status.py):
ranks ending on an error every rank raised exit 0, so that Open MPI's mpiexec has no rank to
stop; the launcher still returns the error's code."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hpcio.runner import exit_status


@pytest.fixture
def status(tmp_path, monkeypatch):
    path = tmp_path / "status"
    path.write_text("")
    monkeypatch.setenv(exit_status.VARIABLE, str(path))
    for name in ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"):
        monkeypatch.delenv(name, raising=False)
    return path


def test_rank0_hands_the_code_over_and_every_rank_exits_0(status, monkeypatch):
    monkeypatch.setenv("OMPI_COMM_WORLD_RANK", "1")
    assert exit_status.of_rank(1, every_rank=True) == 0
    assert status.read_text() == ""
    monkeypatch.setenv("OMPI_COMM_WORLD_RANK", "0")
    assert exit_status.of_rank(1, every_rank=True) == 0
    assert exit_status.handed(str(status), 0) == 1
    assert not status.exists()


def test_an_error_of_one_rank_exits_with_its_code(status, monkeypatch):
    # The others may wait for this rank in a collective call: mpiexec must stop them.
    for rank in ("0", "1"):
        monkeypatch.setenv("PMI_RANK", rank)
        assert exit_status.of_rank(2, every_rank=False) == 2
    assert exit_status.handed(str(status), 2) == 2


def test_rank0_without_the_launchers_file_exits_with_the_code(status, monkeypatch):
    # Rank 0 on another node than the launcher: no file there, none made.
    status.unlink()
    monkeypatch.setenv("OMPI_COMM_WORLD_RANK", "0")
    assert exit_status.of_rank(1, every_rank=True) == 1
    assert not status.exists()
    assert exit_status.handed(str(status), 1) == 1


def test_mpiexecs_own_failure_wins(status):
    # A rank killed by a signal: mpiexec's code, whatever rank 0 wrote before.
    status.write_text("1")
    assert exit_status.handed(str(status), 139) == 139


def test_outside_a_launch_of_hpcios_the_code_is_the_errors(monkeypatch):
    monkeypatch.delenv(exit_status.VARIABLE, raising=False)
    assert exit_status.of_rank(1, every_rank=True) == 1


def test_a_dead_launchers_file_is_removed_when_the_next_is_made(tmp_path):
    # A launcher killed by SIGKILL cannot remove its file; the next launch does.
    finished = subprocess.Popen(["true"])
    finished.wait()
    stale = tmp_path / f"hpcio-exit-status-{finished.pid}-abc"
    stale.write_text("")
    mine = Path(exit_status.made(str(tmp_path)))
    assert mine.name.startswith(f"hpcio-exit-status-{os.getpid()}-")
    assert not stale.exists() and mine.exists()
    # A live launcher's file stays.
    assert Path(exit_status.made(str(tmp_path))).exists() and mine.exists()
