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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from hpcio.errors import HpcioError, LaunchError

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


class MpiComm:
    """mpi4py, on a Dup() of the communicator it is given so hpcio's messages stay apart."""

    def __init__(self, comm: Any = None) -> None:
        from mpi4py import MPI

        self._comm = (comm if comm is not None else MPI.COMM_WORLD).Dup()
        self.rank: int = self._comm.Get_rank()
        self.size: int = self._comm.Get_size()

    def barrier(self) -> None:
        self._comm.Barrier()

    def bcast(self, obj: T, root: int = 0) -> T:
        return self._comm.bcast(obj, root=root)

    def gather(self, obj: T, root: int = 0) -> list[T] | None:
        return self._comm.gather(obj, root=root)

    def allgather(self, obj: T) -> list[T]:
        return self._comm.allgather(obj)

    def send_bytes(self, buf: Any, dest: int, tag: int) -> None:
        self._comm.Send(buf, dest=dest, tag=tag)

    def recv_bytes(self, buf: Any, source: int, tag: int) -> None:
        self._comm.Recv(buf, source=source, tag=tag)

    def isend_bytes(self, buf: Any, dest: int, tag: int) -> Request:
        return _MpiRequest(self._comm.Isend(buf, dest=dest, tag=tag))

    def irecv_bytes(self, buf: Any, source: int, tag: int) -> Request:
        return _MpiRequest(self._comm.Irecv(buf, source=source, tag=tag))

    def abort(self, code: int) -> None:
        self._comm.Abort(code)


class _MpiRequest:
    def __init__(self, request: Any) -> None:
        self._request = request

    def wait(self) -> None:
        self._request.Wait()


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
            if "HPCIO_STORE_OPTIONS" in os.environ:
                # Open MPI passes the environment to ranks on other nodes only when told.
                launcher += ["-x", "HPCIO_STORE_OPTIONS"]
    return [*launcher, "-n", str(ranks), sys.executable, "-m", "hpcio", *argv]


def _is_open_mpi(mpiexec: str) -> bool:
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "Open MPI" in out.stdout or "OpenRTE" in out.stdout


def relaunch(ranks: int, argv: Sequence[str]) -> int:
    """Run hpcio again under mpiexec with `ranks` ranks; its exit code."""
    env = dict(os.environ, HPCIO_LAUNCHED="1")
    job = subprocess.Popen(launch_command(ranks, argv), env=env, stdout=subprocess.PIPE)
    assert job.stdout is not None
    forwarder = threading.Thread(target=_forward, args=(job.stdout.fileno(),), daemon=True)
    forwarder.start()
    try:
        code = job.wait()
        forwarder.join(timeout=30)  # what the ranks printed last
        return code
    except KeyboardInterrupt:
        # Ctrl-C reached the whole process group; if it came to us alone, pass it on. Then
        # wait for the ranks to stop, so the caller can clean up after them.
        job.send_signal(signal.SIGINT)
        try:
            job.wait(timeout=60)
        except subprocess.TimeoutExpired:
            job.kill()
            job.wait()
        return 130


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
    """An unexpected exception or an interrupt on one rank aborts the job instead of leaving the
    others waiting in a collective. HpcioErrors are raised collectively by design and pass
    through."""
    try:
        yield
    except KeyboardInterrupt:
        # The other ranks may be waiting for this one in a collective: take the job down.
        if world.size > 1:
            print(f"hpcio: interrupted (rank {world.rank})", file=sys.stderr)
            sys.stderr.flush()
            world.abort(130)
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
