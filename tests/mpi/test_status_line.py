"""The live status line of a real 2-rank run: drawn on a terminal (a pseudo-terminal here), not
on a pipe and not with -q."""

import os
import pty
import select
import signal
import subprocess
import sys

import pytest

pytestmark = pytest.mark.mpi


def run_args(target_dir, *more, duration="2.5s"):
    return (
        "run", "-n", "2", "--pattern", "mfmw", "--target", str(target_dir),
        "--size-per-rank", "8MiB", "--transfer", "64KiB", "--duration", duration, *more,
    )  # fmt: skip


def environment():
    prefixes = ("OMPI_", "PMI_", "PMIX_", "HPCIO_")  # a rank's settings are not this run's
    return {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}


def on_a_terminal(*args):
    """Run `python -m hpcio args` with stdin, stdout and stderr a pseudo-terminal; all it wrote
    and its exit code."""
    leader, follower = pty.openpty()
    job = subprocess.Popen(
        [sys.executable, "-m", "hpcio", *map(str, args)],
        stdin=follower, stdout=follower, stderr=follower, env=environment(), close_fds=True,
    )  # fmt: skip
    os.close(follower)
    seen = bytearray()
    while True:
        ready, _, _ = select.select([leader], [], [], 120)
        if not ready:
            job.kill()
            break
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed: every process on it has ended
            break
        if not chunk:
            break
        seen.extend(chunk)
    os.close(leader)
    return job.wait(timeout=60), seen.decode(errors="replace")


def test_a_terminal_sees_the_status_line_of_every_phase(target_dir):
    code, seen = on_a_terminal(*run_args(target_dir))
    assert code == 0, seen
    for phase in ("write", "read"):
        lines = [part for part in seen.split("\r") if part.startswith(f"[{phase}]")]
        assert lines, seen
        # Both ranks are on this node: the line adds up both, so it does not say "[1/2 ranks]".
        assert all("MiB/s" in line and "op/s" in line and "left" in line for line in lines)
        assert not any("ranks]" in line for line in lines), lines
    assert "iter 1/1  write" in seen and "iter 1/1  read" in seen


def test_a_pipe_or_q_sees_none(target_dir):
    done = subprocess.run(
        [sys.executable, "-m", "hpcio", *run_args(target_dir)],
        capture_output=True, text=True, env=environment(), timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "iter 1/1  write" in done.stdout
    assert "[write]" not in done.stdout + done.stderr and "\r" not in done.stderr
    code, seen = on_a_terminal(*run_args(target_dir, "-q"))
    assert code == 0, seen
    assert "[write]" not in seen and "[read]" not in seen


def test_an_interrupted_run_leaves_no_status_files(target_dir):
    """SIGTERM to the job (as scancel sends) while the line is drawn: the ranks still remove
    their status files from /dev/shm (memory that outlives the job) before they exit."""
    before = {name for name in os.listdir("/dev/shm") if name.startswith("hpcio-status-")}
    leader, follower = pty.openpty()
    job = subprocess.Popen(
        [sys.executable, "-m", "hpcio", *run_args(target_dir, duration="30s")],
        stdin=follower, stdout=follower, stderr=follower, env=environment(), close_fds=True,
        start_new_session=True,
    )  # fmt: skip
    os.close(follower)
    seen = bytearray()
    signalled = False
    while True:
        ready, _, _ = select.select([leader], [], [], 120)
        if not ready:
            os.killpg(job.pid, signal.SIGKILL)
            break
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        seen.extend(chunk)
        if not signalled and b"[write]" in seen:
            os.killpg(job.pid, signal.SIGTERM)
            signalled = True
    os.close(leader)
    code = job.wait(timeout=60)
    assert signalled, seen.decode(errors="replace")
    assert code != 0
    after = {name for name in os.listdir("/dev/shm") if name.startswith("hpcio-status-")}
    assert after <= before, after - before
