"""Start hpcio again under mpiexec on this machine and end the job cleanly: the launcher's
command line, signals passed on exactly once, the job's stdout forwarded."""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Sequence

from hpcio.errors import LaunchError
from hpcio.runner import exit_status, interrupts


def launch_command(ranks: int, argv: Sequence[str]) -> list[str]:
    """The mpiexec command that runs `hpcio argv` on `ranks` ranks on this machine.

    HPCIO_MPIEXEC overrides the launcher (for example "mpiexec --hostfile hosts"), split as a
    shell would split it (quote a value with spaces: --mca plm_rsh_agent "ssh -F cfg").
    """
    launcher = launcher_words()
    if launcher and shutil.which(launcher[0]) is None:
        raise LaunchError(
            f"HPCIO_MPIEXEC names '{launcher[0]}', which is not a program on PATH; set it to "
            'your launcher (e.g. "mpiexec --hostfile hosts") or unset it to use mpiexec'
        )
    if launcher:
        # Only a program named as MPI's launchers are is asked its version: a script of the
        # user's own is run once per launch, as given.
        named = os.path.basename(launcher[0]) in ("mpiexec", "mpirun", "orterun")
        if named and _is_open_mpi(launcher[0]):
            launcher += _handed_on()
    else:
        found = shutil.which("mpiexec") or shutil.which("mpirun")
        if found is None:
            raise LaunchError("-n needs mpiexec on PATH (run scripts/setup, or launch with srun)")
        launcher = [found]
        if _is_open_mpi(found):
            # Open MPI refuses root and more ranks than cores unless told; -q keeps its
            # multi-line notices off stderr when a rank exits non-zero.
            launcher.append("-q")
            if os.geteuid() == 0:
                launcher.append("--allow-run-as-root")
            if ranks > (os.cpu_count() or 1):
                launcher.append("--oversubscribe")
            # Inside a batch allocation Open MPI's mpiexec places ranks on its other nodes.
            launcher += _handed_on()
    return [*launcher, "-n", str(ranks), sys.executable, "-m", "hpcio", *argv]


def launcher_words() -> list[str]:
    """HPCIO_MPIEXEC as words, split as a shell would split it; [] when it is not set.

    Raises:
        LaunchError: its quotes do not pair up.
    """
    try:
        return shlex.split(os.environ.get("HPCIO_MPIEXEC", ""))
    except ValueError as e:
        raise LaunchError(f"HPCIO_MPIEXEC cannot be split into words: {e}") from None


#: Variables ranks on other nodes need: what the launching hpcio hands its ranks (the job id,
#: its journal, the target lock's token, store options, the stdout spool), and the object
#: stores' endpoints and credentials, which the engine reads from the environment.
_HANDED_ON_PREFIXES = ("HPCIO_", "AWS_", "AZURE_", "GOOGLE_")


def _handed_on() -> list[str]:
    """Open MPI's -x for each variable ranks on other nodes need (by name: the values never
    reach a command line). Open MPI gives them only the environment it is told to: a rank 0
    there without the lock's token finds the target held by its own launcher, and ranks
    without the store's credentials are refused by it."""
    names = sorted({*(n for n in os.environ if n.startswith(_HANDED_ON_PREFIXES)),
                    "HPCIO_LAUNCHED"})  # fmt: skip
    return [word for name in names if name != "HPCIO_MPIEXEC" for word in ("-x", name)]


def _is_open_mpi(mpiexec: str) -> bool:
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "Open MPI" in out.stdout or "OpenRTE" in out.stdout


_OPEN_MPI_KILL_DELAY = "OMPI_MCA_odls_base_sigkill_timeout"
_KILL_DELAY_S = 5


def relaunch(ranks: int, argv: Sequence[str]) -> int:
    """Run hpcio again under mpiexec with `ranks` ranks; its exit code.

    mpiexec runs in its own process group and dies with this process, so that it gets each
    stop exactly once: Open MPI's mpiexec treats a second SIGINT or SIGTERM as "exit now" and
    leaves its ranks running. On the first SIGINT or SIGTERM this process sends SIGTERM to the
    ranks on this node at once (Open MPI's mpiexec would only 1 s later, and SIGKILL them 1 s
    after that), then to mpiexec, waits (bounded) for the job to end, and raises Interrupted.
    interrupts.STACKS_SIGNAL goes on to mpiexec, for every rank to print its stacks.

    Raises:
        Interrupted: this process was told to stop; the job has ended.
    """
    env = dict(os.environ, HPCIO_LAUNCHED="1")
    # The ranks on this node stop the moment this process dies (interrupts.stop_with_launcher).
    env[interrupts.LAUNCHER_VARIABLE] = f"{socket.gethostname()}:{os.getpid()}"
    # Open MPI's mpiexec gives ranks this long between SIGTERM and SIGKILL (default 1 s):
    # too short to remove the run's files on a loaded node.
    env.setdefault(_OPEN_MPI_KILL_DELAY, str(_KILL_DELAY_S))
    command = launch_command(ranks, argv)
    status = exit_status.made()
    env[exit_status.VARIABLE] = status
    try:
        # Its own process group is a background one: no stdin, which it would stop to read.
        job = subprocess.Popen(
            command, env=env, stdin=subprocess.DEVNULL, process_group=0,
            preexec_fn=interrupts.die_with_parent, stdout=subprocess.PIPE,
        )  # fmt: skip
    except BaseException:
        exit_status.handed(status, 0)  # removes it
        raise
    assert job.stdout is not None
    forwarder = threading.Thread(target=_forward, args=(job.stdout.fileno(),), daemon=True)
    forwarder.start()
    received: list[int] = []

    def forward(signal_number: int, _frame: object) -> None:
        if not received:
            received.append(signal_number)
            for pid in [p for p in descendants(job.pid) if _runs_hpcio(p)] + [job.pid]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGTERM)

    def show_stacks(_signal_number: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):  # mpiexec passes it on to every rank
            os.kill(job.pid, interrupts.STACKS_SIGNAL)

    saved = {number: signal.signal(number, forward) for number in interrupts.SIGNALS}
    saved[interrupts.STACKS_SIGNAL] = signal.signal(interrupts.STACKS_SIGNAL, show_stacks)
    try:
        code = job.wait()
        forwarder.join(timeout=30)  # what the ranks printed last
    finally:
        if received and job.poll() is None:
            _end(job)
        for number, handler in saved.items():
            signal.signal(number, handler)
    code = exit_status.handed(status, code)
    if received:
        _restore_terminal()
        raise interrupts.Interrupted(received[0])
    return code


def _restore_terminal() -> None:
    """A rank stopped in the middle of a progress bar leaves its terminal with the cursor
    hidden and the line unfinished: show the cursor, end the line, before hpcio says why."""
    if sys.stdout.isatty():
        with contextlib.suppress(OSError):
            sys.stdout.write("\x1b[?25h\n")
            sys.stdout.flush()


#: Open MPI's mpiexec stops its ranks in two of its kill delays (SIGCONT, wait, SIGTERM, wait,
#: SIGKILL).
_STOP_GRACE_S = 30.0


def _end(job: subprocess.Popen[bytes]) -> None:
    """The job did not end after SIGTERM: kill mpiexec and everything it started here."""
    try:
        job.wait(timeout=_STOP_GRACE_S)
        return
    except subprocess.TimeoutExpired:
        pass
    for pid in [*descendants(job.pid), job.pid]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    job.wait()


def _runs_hpcio(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            words = cmdline.read().split(b"\0")
    except OSError:
        return False
    return words[1:3] == [b"-m", b"hpcio"]


def descendants(pid: int) -> list[int]:
    """Processes under `pid` on this machine, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="utf-8") as stat:
                    parent = int(stat.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _forward(job_stdout: int) -> None:
    """Copy the job's stdout to ours. When our reader goes away (`hpcio sweep ... | head`),
    go on draining it into nothing: mpiexec itself aborts the job, with a backtrace, on a
    write to a closed pipe, and the run and its result documents matter more than the
    commentary."""
    ours = sys.stdout.fileno()
    while chunk := os.read(job_stdout, 1 << 16):
        try:
            while chunk:
                chunk = chunk[os.write(ours, chunk) :]
        except BrokenPipeError:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, ours)
            os.close(devnull)
