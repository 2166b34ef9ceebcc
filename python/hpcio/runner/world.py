"""The only door to MPI: Comm over mpi4py, SerialComm, topology, abort_on_error (mpiexec.py starts
hpcio under mpiexec)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from hpcio.errors import HpcioError, LaunchError
from hpcio.runner import heap, interrupts

T = TypeVar("T")

#: Set by every launcher we know of inside the processes it starts.
_MPI_JOB_VARIABLES = (
    "OMPI_COMM_WORLD_SIZE",
    "PMI_SIZE",
    "PMIX_RANK",
    "MPI_LOCALNRANKS",
    "HPCIO_LAUNCHED",
)


#: Open MPI's settings for a process no launcher started (a singleton), unless the user set
#: them: no helper daemon (the process spawns nothing), and the ob1 PML, so that the PSM2 MTL
#: is not loaded: libpsm2's constructor sleeps about 0.23 s looking for Omni-Path hardware.
#: A world of one sends no message to another process, so neither changes what it measures;
#: MPI's start took 0.35-0.40 s and takes 0.07 s with them (`python -c "from mpi4py import MPI"`).
_SINGLETON_MCA = {"OMPI_MCA_ess_singleton_isolated": "1", "OMPI_MCA_pml": "ob1"}


def import_mpi() -> Any:
    """mpi4py.MPI, whose import starts MPI: in a process no launcher started, with
    _SINGLETON_MCA for that start only (they are not left for a job this process launches)."""
    if "mpi4py.MPI" in sys.modules or inside_mpi_job():
        from mpi4py import MPI

        return MPI
    added = {name: value for name, value in _SINGLETON_MCA.items() if name not in os.environ}
    os.environ.update(added)
    try:
        from mpi4py import MPI
    finally:
        for name in added:
            os.environ.pop(name, None)
    return MPI


@dataclass(frozen=True, slots=True)
class Topology:
    """Where this rank runs: hosts in order of first rank, node index, rank within the node,
    and the node of every rank."""

    hosts: tuple[str, ...]
    node: int
    local_rank: int
    ranks_per_node: int
    placement: tuple[int, ...] = ()

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
    def reduce(self, obj: T, merge: Callable[[T, T], T], root: int = 0) -> T | None:
        """Every rank's `obj` merged pairwise up a tree: `root` gets the result, the others
        None. `merge` must be associative and commutative."""
        ...

    def allreduce(self, obj: T, merge: Callable[[T, T], T]) -> T: ...
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

    def reduce(self, obj: T, merge: Callable[[T, T], T], root: int = 0) -> T | None:
        return obj

    def allreduce(self, obj: T, merge: Callable[[T, T], T]) -> T:
        return obj

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
        return import_mpi().COMM_SELF.Dup()


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
        """Every rank here, then every rank leaving at once. Ranks that arrive early sleep
        until the last one comes, then all meet again in a tight poll, so the phase's t0
        follows at once on every rank.

        An early rank that spun instead had used up its turn on a core by the time the
        last one came. On a node whose cores are shared, the scheduler then took its core
        inside the phase's first collective call, and the other rank waited for it: a 1 ms
        collective open took 30-150 ms. Under one busy process per core, opens of PnetCDF
        over 20 ms fell from 41 of 96 to 21 of 96 phases with the sleep, IOR's level
        (docs/benchmarks.md, "Early ranks sleep at the barrier")."""
        _poll(self._comm.Ibarrier(), sleep_s=_EARLY_RANK_SLEEP_S)
        _poll(self._comm.Ibarrier())

    def bcast(self, obj: T, root: int = 0) -> T:
        return self._waited(lambda: self._comm.bcast(obj, root=root))

    def gather(self, obj: T, root: int = 0) -> list[T] | None:
        return self._waited(lambda: self._comm.gather(obj, root=root))

    def allgather(self, obj: T) -> list[T]:
        return self._waited(lambda: self._comm.allgather(obj))

    def reduce(self, obj: T, merge: Callable[[T, T], T], root: int = 0) -> T | None:
        # mpi4py reduces Python objects up a binomial tree (mpi4py.rc.fast_reduce): a rank
        # merges log2(size) objects, never the whole world's.
        return self._with_op(merge, lambda op: self._comm.reduce(obj, op=op, root=root))

    def allreduce(self, obj: T, merge: Callable[[T, T], T]) -> T:
        return self._with_op(merge, lambda op: self._comm.allreduce(obj, op=op))

    def _with_op(self, merge: Callable[[T, T], T], call: Callable[[Any], Any]) -> Any:
        from mpi4py import MPI

        # Ops on Python objects get the objects (mpi4py's stubs only know buffer ops).
        merged: Any = lambda a, b, _datatype: merge(a, b)  # noqa: E731
        op = MPI.Op.Create(merged, commute=True)
        try:
            return self._waited(lambda: call(op))
        finally:
            op.Free()

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


#: How long an early rank sleeps between two tests of the barrier: short beside a phase, long
#: enough to leave the core to others.
_EARLY_RANK_SLEEP_S = 0.0002


def _poll(request: Any, sleep_s: float = 0.0) -> None:
    """Wait for an MPI request in Python, where a signal handler can run between tests, and
    sleeping `sleep_s` between them when it is not 0."""
    while not request.Test():
        if sleep_s:
            time.sleep(sleep_s)


def topology(world: Comm) -> Topology:
    """Nodes are told apart by host name, numbered in the order of their lowest rank."""
    gathered = world.allgather((socket.gethostname(), os.getpid()))
    names = [host for host, _ in gathered]
    interrupts.know_rank0(*gathered[0])  # an interrupted rank leaves after rank 0 (its host)
    # Counted in one pass: names.count() per host would be quadratic in a world of many
    # nodes (10,000 ranks on 2,500 nodes: 25 million comparisons on every rank).
    ranks_on = Counter(names)
    hosts = tuple(ranks_on)
    me = names[world.rank]
    local = names[: world.rank].count(me)
    index = {h: i for i, h in enumerate(hosts)}
    return Topology(
        hosts=hosts,
        node=index[me],
        local_rank=local,
        ranks_per_node=max(ranks_on.values()),
        placement=tuple(index[n] for n in names),
    )


def inside_mpi_job() -> bool:
    return any(v in os.environ for v in _MPI_JOB_VARIABLES)


def refuse_tasks_without_mpi() -> None:
    """Fail when Slurm's srun started this process as one of several tasks that MPI does not
    join (srun --mpi=none, or an srun without PMI for this MPI): each task would run alone, as
    a world of one, and append its own document.

    Raises:
        LaunchError: this is one of such tasks.
    """
    tasks = os.environ.get("SLURM_STEP_NUM_TASKS", "")
    if tasks.isdigit() and int(tasks) > 1 and not inside_mpi_job():
        raise LaunchError(
            f"srun started {tasks} tasks but no MPI job reached them (no PMIx/PMI variables): "
            "start hpcio with srun --mpi=pmix (srun --mpi=list shows yours) or mpiexec"
        )


def launched_by_hpcio() -> bool:
    """True in the ranks of an `hpcio ... -n N` that started itself under mpiexec."""
    return "HPCIO_LAUNCHED" in os.environ


def open_world() -> Comm:
    """MPI when launched by an MPI launcher, else a world of one rank; either way with the C
    heap at its steady state (runner/heap.py), before MPI or a library allocates."""
    heap.settle()
    return MpiComm() if inside_mpi_job() else SerialComm()


@contextlib.contextmanager
def abort_on_error(world: Comm) -> Iterator[None]:
    """An unexpected exception on one rank aborts the job instead of leaving the others waiting
    in a collective. An interrupt ends this rank at once after its own clean-up (never a
    collective: the others may be gone); mpiexec then stops the rest, which clean up alike.
    HpcioErrors are raised collectively by design and pass through."""
    saved = interrupts.install()
    if world.size > 1:
        interrupts.die_with_parent()  # mpiexec gone: stop, do not write on alone
        interrupts.stop_with_launcher()
    try:
        yield
    except KeyboardInterrupt as exc:
        if world.size > 1:
            code = exc.exit_code if isinstance(exc, interrupts.Interrupted) else 130
            if world.rank == 0 and not launched_by_hpcio():  # else the launcher says it
                with contextlib.suppress(OSError):  # stderr went with a SIGKILLed mpiexec
                    print(f"hpcio: interrupted ({_signal_name(code)})", file=sys.stderr)
            interrupts.leave(code)
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
