"""The only door to MPI: Comm over mpi4py, SerialComm, topology, self-launch, abort_on_error."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from hpcio.errors import HpcioError, LaunchError
from hpcio.runner import interrupts

T = TypeVar("T")

#: Set by every launcher we know of inside the processes it starts.
_MPI_JOB_VARIABLES = (
    "OMPI_COMM_WORLD_SIZE",
    "PMI_SIZE",
    "PMIX_RANK",
    "MPI_LOCALNRANKS",
    "HPCIO_LAUNCHED",
)


@dataclass(frozen=True, slots=True)
class Topology:
    """Where this rank runs: hosts in order of first rank, node index, rank within the node."""

    hosts: tuple[str, ...]
    node: int
    local_rank: int
    ranks_per_node: int

    @property
    def nodes(self) -> int:
        return len(self.hosts)


class Request(Protocol):
    def wait(self) -> None: ...


class Comm(Protocol):
    rank: int
    size: int

    def barrier(self) -> None: ...
    def bcast(self, obj: T, root: int = 0) -> T: ...
    def gather(self, obj: T, root: int = 0) -> list[T] | None: ...
    def allgather(self, obj: T) -> list[T]: ...
    def send_bytes(self, buf: Any, dest: int, tag: int) -> None: ...
    def recv_bytes(self, buf: Any, source: int, tag: int) -> None: ...
    def isend_bytes(self, buf: Any, dest: int, tag: int) -> Request: ...
    def irecv_bytes(self, buf: Any, source: int, tag: int) -> Request: ...
    def abort(self, code: int) -> None: ...
    def mpi(self) -> Any:
        """The real mpi4py communicator of this world (a duplicate, so a library's messages
        never meet hpcio's): parallel HDF5, NetCDF and MPI-IO need one."""
        ...


class SerialComm:
    """A world of one rank; never imports mpi4py."""

    rank = 0
    size = 1

    def barrier(self) -> None:
        pass

    def bcast(self, obj: T, root: int = 0) -> T:
        return obj

    def gather(self, obj: T, root: int = 0) -> list[T] | None:
        return [obj]

    def allgather(self, obj: T) -> list[T]:
        return [obj]

    def send_bytes(self, buf: Any, dest: int, tag: int) -> None:
        raise LaunchError("a single-rank world has no one to send to")

    def recv_bytes(self, buf: Any, source: int, tag: int) -> None:
        raise LaunchError("a single-rank world has no one to receive from")

    def isend_bytes(self, buf: Any, dest: int, tag: int) -> Request:
        raise LaunchError("a single-rank world has no one to send to")

    def irecv_bytes(self, buf: Any, source: int, tag: int) -> Request:
        raise LaunchError("a single-rank world has no one to receive from")

    def abort(self, code: int) -> None:
        sys.exit(code)

    def mpi(self) -> Any:
        """MPI's own world of one process (MPI starts here, as a singleton, on first use)."""
        from mpi4py import MPI

        return MPI.COMM_SELF.Dup()


class MpiComm:
    """mpi4py, on a Dup() of the communicator it is given so hpcio's messages stay apart.

    Every wait lets a signal through (see interrupts): a rank waiting for one that was stopped
    still gets to clean up when mpiexec sends it SIGTERM."""

    def __init__(self, comm: Any = None) -> None:
        from mpi4py import MPI

        self._comm = (comm if comm is not None else MPI.COMM_WORLD).Dup()
        self.rank: int = self._comm.Get_rank()
        self.size: int = self._comm.Get_size()
        # Object collectives wait in a helper thread, which MPI must allow.
        self._threads = MPI.Query_thread() >= MPI.THREAD_SERIALIZED
        self._library: Any = None

    def _waited(self, call: Callable[[], T]) -> T:
        return interrupts.wait_for(call) if self._threads else call()

    def barrier(self) -> None:
        # Polled rather than threaded: the phase's t0 follows at once on every rank.
        _poll(self._comm.Ibarrier())

    def bcast(self, obj: T, root: int = 0) -> T:
        return self._waited(lambda: self._comm.bcast(obj, root=root))

    def gather(self, obj: T, root: int = 0) -> list[T] | None:
        return self._waited(lambda: self._comm.gather(obj, root=root))

    def allgather(self, obj: T) -> list[T]:
        return self._waited(lambda: self._comm.allgather(obj))

    def send_bytes(self, buf: Any, dest: int, tag: int) -> None:
        _poll(self._comm.Isend(buf, dest=dest, tag=tag))

    def recv_bytes(self, buf: Any, source: int, tag: int) -> None:
        _poll(self._comm.Irecv(buf, source=source, tag=tag))

    def isend_bytes(self, buf: Any, dest: int, tag: int) -> Request:
        return _MpiRequest(self._comm.Isend(buf, dest=dest, tag=tag))

    def irecv_bytes(self, buf: Any, source: int, tag: int) -> Request:
        return _MpiRequest(self._comm.Irecv(buf, source=source, tag=tag))

    def abort(self, code: int) -> None:
        self._comm.Abort(code)

    def mpi(self) -> Any:
        if self._library is None:
            self._library = self._comm.Dup()
        return self._library


class _MpiRequest:
    def __init__(self, request: Any) -> None:
        self._request = request

    def wait(self) -> None:
        _poll(self._request)


def _poll(request: Any) -> None:
    """Wait for an MPI request in Python, where a signal handler can run between tests."""
    while not request.Test():
        pass


def topology(world: Comm) -> Topology:
    """Nodes are told apart by host name, numbered in the order of their lowest rank."""
    names = world.allgather(socket.gethostname())
    hosts = tuple(dict.fromkeys(names))
    me = names[world.rank]
    per_node = max(names.count(h) for h in hosts)
    local = names[: world.rank].count(me)
    return Topology(hosts=hosts, node=hosts.index(me), local_rank=local, ranks_per_node=per_node)


def inside_mpi_job() -> bool:
    return any(v in os.environ for v in _MPI_JOB_VARIABLES)


def launched_by_hpcio() -> bool:
    """True in the ranks of an `hpcio ... -n N` that started itself under mpiexec."""
    return "HPCIO_LAUNCHED" in os.environ


def open_world() -> Comm:
    """MPI when launched by an MPI launcher, else a world of one rank."""
    return MpiComm() if inside_mpi_job() else SerialComm()


def launch_command(ranks: int, argv: Sequence[str]) -> list[str]:
    """The mpiexec command that runs `hpcio argv` on `ranks` ranks on this machine.

    HPCIO_MPIEXEC overrides the launcher (for example "mpiexec --hostfile hosts").
    """
    launcher = os.environ.get("HPCIO_MPIEXEC", "").split()
    if launcher and shutil.which(launcher[0]) is None:
        raise LaunchError(
            f"HPCIO_MPIEXEC names '{launcher[0]}', which is not a program on PATH; set it to "
            'your launcher (e.g. "mpiexec --hostfile hosts") or unset it to use mpiexec'
        )
    if not launcher:
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
            for name in ("HPCIO_STORE_OPTIONS", "HPCIO_STDOUT_SPOOL"):
                if name in os.environ:
                    # Open MPI passes the environment to ranks on other nodes only when told.
                    launcher += ["-x", name]
    return [*launcher, "-n", str(ranks), sys.executable, "-m", "hpcio", *argv]


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

    Raises:
        Interrupted: this process was told to stop; the job has ended.
    """
    env = dict(os.environ, HPCIO_LAUNCHED="1")
    # Open MPI's mpiexec gives ranks this long between SIGTERM and SIGKILL (default 1 s):
    # too short to remove the run's files on a loaded node.
    env.setdefault(_OPEN_MPI_KILL_DELAY, str(_KILL_DELAY_S))
    # Its own process group is a background one: no stdin, which it would stop to read.
    job = subprocess.Popen(
        launch_command(ranks, argv), env=env, stdin=subprocess.DEVNULL, process_group=0,
        preexec_fn=interrupts.die_with_parent, stdout=subprocess.PIPE,
    )  # fmt: skip
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

    saved = {number: signal.signal(number, forward) for number in interrupts.SIGNALS}
    try:
        code = job.wait()
        forwarder.join(timeout=30)  # what the ranks printed last
    finally:
        if received and job.poll() is None:
            _end(job)
        for number, handler in saved.items():
            signal.signal(number, handler)
    if received:
        raise interrupts.Interrupted(received[0])
    return code


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


@contextlib.contextmanager
def abort_on_error(world: Comm) -> Iterator[None]:
    """An unexpected exception on one rank aborts the job instead of leaving the others waiting
    in a collective. An interrupt ends this rank at once after its own clean-up (never a
    collective: the others may be gone); mpiexec then stops the rest, which clean up alike.
    HpcioErrors are raised collectively by design and pass through."""
    saved = interrupts.install()
    if world.size > 1:
        interrupts.die_with_parent()  # mpiexec gone: stop, do not write on alone
    try:
        yield
    except KeyboardInterrupt as exc:
        if world.size > 1:
            code = exc.exit_code if isinstance(exc, interrupts.Interrupted) else 130
            if world.rank == 0 and not launched_by_hpcio():  # else the launcher says it
                print(f"hpcio: interrupted ({_signal_name(code)})", file=sys.stderr)
            sys.stdout.flush()
            sys.stderr.flush()
            # No MPI_Finalize: it waits for ranks that may never come.
            os._exit(code)
        raise
    except (HpcioError, SystemExit):
        raise
    except BaseException as exc:
        if world.size > 1:
            said = " ".join(str(exc).split())  # one line, as every hpcio: error: line
            print(f"hpcio: error: rank {world.rank}: {type(exc).__name__}: {said}", file=sys.stderr)
            sys.stderr.flush()
            world.abort(1)
        raise
    finally:
        interrupts.restore(saved)


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(code - 128).name
    except ValueError:
        return f"exit {code}"
