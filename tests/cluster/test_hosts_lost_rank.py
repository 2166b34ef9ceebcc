"""A rank killed on the second host, the job launched on the first: the job ends with a clear
error, the ranks left anywhere stop and remove the run's files, and the results file keeps the
iterations that finished (status "interrupted"). As tests/mpi/test_interrupts.py on one host."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time

import pytest
from test_hosts_patterns import data_files

#: Open MPI gives ranks this long between SIGTERM and SIGKILL (default 1 s): a loaded 2-core
#: machine may not schedule a rank that soon (tests/mpi/test_interrupts.py's SLOW_NODE).
SLOW_NODE = {"OMPI_MCA_odls_base_sigkill_timeout": "5"}


def long_run(target, out):
    return ["--pattern", "mfmw", "--target", f"file://{target}", "--size-per-rank", "8MiB",
            "--fsync", "-i", "1000", "-o", str(out)]  # fmt: skip


def hpcio_ranks(cluster, host, launcher=None):
    """PIDs of the hpcio ranks running on `host` (not the launching hpcio, `launcher`)."""
    found = []
    for pid in set(cluster.processes_on(host)) - {launcher}:
        with contextlib.suppress(OSError), open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            words = cmdline.read().split(b"\0")
            if words[1:3] == [b"-m", b"hpcio"] and not words[0].endswith(b"mpiexec"):
                found.append(pid)
    return found


def wait_for(condition, deadline_s=60):
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError("condition never met")


@pytest.mark.parametrize("launch", ["mpiexec", "self"])
def test_rank_killed_on_the_second_host(cluster, tmp_path, launch):
    target, out = tmp_path / "target", tmp_path / "r.jsonl"
    target.mkdir()
    run = [sys.executable, "-m", "hpcio", "run", *long_run(target, out)]
    if launch == "mpiexec":  # the user's own mpiexec on the first host
        job = cluster.start([*cluster.mpiexec(), "-n", "4", *run], SLOW_NODE)
    else:  # hpcio run -n 4 on the first host, starting its ranks through HPCIO_MPIEXEC
        job = cluster.start([*run, "-n", "4"], {**SLOW_NODE, "HPCIO_MPIEXEC": cluster.launcher()})
    ranks = lambda host: hpcio_ranks(cluster, host, launcher=job.pid)  # noqa: E731
    wait_for(lambda: len(ranks(0)) == 2 and len(ranks(1)) == 2)
    wait_for(lambda: out.exists() and out.read_text().endswith("\n"))  # an iteration is kept
    victim = max(ranks(1))
    os.kill(victim, signal.SIGKILL)
    _, err = job.communicate(timeout=120)
    assert job.returncode != 0
    assert "Traceback" not in err
    if launch == "self":
        assert job.returncode == 128 + signal.SIGKILL
        assert "hpcio: error: the MPI job failed: a rank was killed (signal 9)" in err
    wait_for(lambda: not ranks(0) and not ranks(1))
    (doc,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert doc["status"] == "interrupted"
    assert doc["hosts"] == ["node1", "node2"]
    done = doc["summary"]["write"]["iterations"]
    assert 1 <= done < 1000
    assert f"kept the {done} finished iteration(s) in {out}" in err
    assert not (out.parent / f"{out.name}.partial").exists()
    assert data_files(target) == []
