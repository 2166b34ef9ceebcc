"""A real one-node Slurm cluster on 127.0.0.1 for the tests: Debian's slurm-wlm (22.05) and
munge, each daemon on its own configuration, key, socket, ports, state and spool directories
under a temporary directory, started in the foreground and stopped by PID.

Nothing here touches the machine's own /etc/slurm or /etc/munge: the clients (sbatch, squeue,
scontrol) find this cluster through SLURM_CONF in `Cluster.env`."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

#: The programs the cluster needs (scripts/setup installs them as root).
PROGRAMS = ("munged", "slurmctld", "slurmd", "sbatch", "scontrol", "sinfo", "scancel", "squeue")
NODE = "hpcio-node"
#: Bounds on waits that only end a hung test: nothing is timed against them.
START_TIMEOUT_S = 60.0
JOB_TIMEOUT_S = 300.0
#: Slurm's states of a job that has ended.
ENDED = frozenset(
    {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL",
     "DEADLINE", "PREEMPTED"}
)  # fmt: skip


def missing() -> str | None:
    """Why the cluster cannot run here (one line), or None."""
    if os.geteuid() != 0:
        return "a Slurm cluster in the tests needs root (SlurmUser=root)"
    absent = [name for name in PROGRAMS if _which(name) is None]
    if absent:
        return (
            f"Slurm is not installed ({', '.join(absent)} missing): scripts/setup installs "
            "Debian's slurm-wlm and munge as root"
        )
    return None


def _which(name: str) -> str | None:
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")


@dataclass
class Job:
    id: str
    state: str
    exit_code: str


@dataclass
class Cluster:
    """A running cluster: `env` for its clients; submit, wait."""

    directory: Path
    env: dict[str, str]

    def submit(self, script: Path, *, cwd: Path, env: dict[str, str] | None = None) -> str:
        """sbatch `script` from `cwd` (the job's working directory); its job id."""
        done = subprocess.run(
            ["sbatch", "--parsable", str(script)],
            cwd=cwd,
            env={**(env or os.environ), **self.env},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip().split(";")[0]

    def wait(self, job_id: str) -> Job:
        """The job once it has ended (a generous bound only stops a hung test)."""
        deadline = time.monotonic() + JOB_TIMEOUT_S
        while True:
            fields = self._job_fields(job_id)
            state = fields.get("JobState", "")
            if state in ENDED:
                return Job(job_id, state, fields.get("ExitCode", ""))
            if time.monotonic() > deadline:
                raise TimeoutError(f"job {job_id} still {state} after {JOB_TIMEOUT_S} s")
            time.sleep(0.5)

    def _job_fields(self, job_id: str) -> dict[str, str]:
        done = subprocess.run(
            ["scontrol", "show", "job", "-o", job_id],
            env={**os.environ, **self.env},
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        return dict(w.split("=", 1) for w in done.stdout.split() if "=" in w)

    def node_state(self) -> str:
        done = subprocess.run(
            ["sinfo", "-h", "-n", NODE, "-o", "%T"],
            env={**os.environ, **self.env},
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        return done.stdout.strip()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _config(directory: Path, cpus: int) -> str:
    return f"""\
ClusterName=hpcio-test
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={directory}/munge/socket
StateSaveLocation={directory}/state
SlurmdSpoolDir={directory}/spool
SlurmctldPidFile={directory}/slurmctld.pid
SlurmdPidFile={directory}/slurmd.pid
SlurmctldLogFile={directory}/log/slurmctld.log
SlurmdLogFile={directory}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
InactiveLimit=0
MinJobAge=600
NodeName={NODE} NodeHostname=localhost NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN
PartitionName=debug Nodes={NODE} Default=YES MaxTime=INFINITE State=UP
"""


@contextlib.contextmanager
def running(directory: Path) -> Iterator[Cluster]:
    """munged, slurmctld and slurmd for a one-node cluster under `directory`, up until the node
    is idle; on the way out (a failed test too) its jobs cancelled and each daemon stopped by
    PID."""
    for sub in ("munge", "state", "spool", "log"):
        (directory / sub).mkdir(parents=True, exist_ok=True)
    (directory / "munge").chmod(0o700)
    key = directory / "munge" / "key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    conf = directory / "slurm.conf"
    conf.write_text(_config(directory, os.cpu_count() or 1))
    cluster = Cluster(directory, {"SLURM_CONF": str(conf)})
    daemons: list[subprocess.Popen[bytes]] = []
    try:
        munge = directory / "munge"
        daemons.append(_start(directory, "munged", [
            "-F", "--force", f"--socket={munge}/socket", f"--key-file={key}",
            f"--pid-file={munge}/pid", f"--log-file={munge}/log", f"--seed-file={munge}/seed",
        ]))  # fmt: skip
        _until(lambda: (munge / "socket").exists(), "munged to open its socket", daemons)
        daemons.append(_start(directory, "slurmctld", ["-D", "-c", "-f", str(conf)]))
        daemons.append(_start(directory, "slurmd", ["-D", "-c", "-N", NODE, "-f", str(conf)]))
        _until(lambda: cluster.node_state() == "idle", "the node to be idle", daemons)
        yield cluster
    finally:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            _cancel_jobs(cluster)
        for daemon in reversed(daemons):
            _stop(daemon)


def _start(directory: Path, program: str, args: list[str]) -> subprocess.Popen[bytes]:
    out = open(directory / "log" / f"{program}.out", "wb")  # noqa: SIM115 (the daemon's)
    try:
        return subprocess.Popen(
            [_which(program) or program, *args],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    finally:
        out.close()


def _until(ready, what: str, daemons: list[subprocess.Popen[bytes]]) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while not ready():
        dead = [d for d in daemons if d.poll() is not None]
        if dead:
            raise RuntimeError(f"{Path(str(dead[0].args[0])).name} exited while waiting for {what}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {START_TIMEOUT_S} s for {what}")
        time.sleep(0.2)


def _cancel_jobs(cluster: Cluster) -> None:
    env = {**os.environ, **cluster.env}
    subprocess.run(["scancel", "--full", "-u", "root"], env=env, timeout=30, check=False,
                   capture_output=True)  # fmt: skip
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        queue = subprocess.run(["squeue", "-h"], env=env, capture_output=True, text=True,
                               timeout=30, check=False)  # fmt: skip
        if not queue.stdout.strip():
            return
        time.sleep(0.5)


def _stop(daemon: subprocess.Popen[bytes]) -> None:
    if daemon.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(daemon.pid, signal.SIGTERM)
    try:
        daemon.wait(timeout=30)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.kill(daemon.pid, signal.SIGKILL)
        daemon.wait()
