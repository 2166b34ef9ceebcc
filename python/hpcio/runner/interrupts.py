"""Ctrl-C and SIGTERM (scancel, a Slurm time limit, mpiexec stopping its job) as one clean
interrupt: the signal reaches Python within a transfer even while the engine runs a phase or
MPI waits for another rank, and the processes a run starts die with it."""

from __future__ import annotations

import contextlib
import ctypes
import faulthandler
import os
import select
import signal
import socket
import sys
import threading
from collections.abc import Callable
from typing import NoReturn, TypeVar

from hpcio import _engine

T = TypeVar("T")

SIGNALS = (signal.SIGINT, signal.SIGTERM)

#: How long an interrupted rank lets its engine call finish its transfers in flight, so the
#: files it removes next are not written again behind it.
_SETTLE_S = 0.5

_PR_SET_PDEATHSIG = 1


class Interrupted(KeyboardInterrupt):
    """The run was stopped by a signal; the process exits with 128 + its number."""

    def __init__(self, signal_number: int) -> None:
        super().__init__(signal_number)
        self.signal_number = signal_number

    @property
    def exit_code(self) -> int:
        return 128 + self.signal_number

    @property
    def signal_name(self) -> str:
        return signal.Signals(self.signal_number).name


#: A run that seems stuck prints where each thread of each process is, and goes on, on this
#: signal: `kill -USR1` to `hpcio run -n N` or to Open MPI's mpiexec (which passes it on).
STACKS_SIGNAL = signal.SIGUSR1


def install() -> dict[int, object]:
    """Make SIGINT and SIGTERM raise Interrupted in the main thread (once: a second signal
    must not cut the clean-up short), and STACKS_SIGNAL print every thread's stack; the
    handlers they had, for restore()."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    handlers: dict[int, object] = {n: signal.signal(n, _interrupt) for n in SIGNALS}
    handlers[STACKS_SIGNAL] = signal.signal(STACKS_SIGNAL, _print_stacks)
    return handlers


def restore(handlers: dict[int, object]) -> None:
    for number, handler in handlers.items():
        if handler is not None:  # None: set outside Python, which cannot be put back from here
            signal.signal(number, handler)  # type: ignore[arg-type]


def _print_stacks(_signal_number: int, _frame: object) -> None:
    """Every thread's stack on stderr, read while this thread holds the GIL, so no thread
    starts, ends or changes its frames meanwhile. faulthandler's own handler read them from
    C while they ran, and a rank that starts a thread per MPI wait crashed (SIGSEGV) within
    tens to hundreds of SIGUSR1s. It comes at once also while the others wait inside MPI or
    the engine: the main thread waits for them in Python (wait_for)."""
    with contextlib.suppress(OSError, ValueError):
        faulthandler.dump_traceback(file=2, all_threads=True)  # fd 2: stderr


def _interrupt(signal_number: int, _frame: object) -> None:
    for number in SIGNALS:
        signal.signal(number, signal.SIG_IGN)
    _engine.cancel(True)  # the phase running in another thread stops after its transfer
    raise Interrupted(signal_number)


def wait_for(call: Callable[[], T], *, settle: bool = False) -> T:
    """`call()`, run in a helper thread while the main thread waits, so that a signal handler
    can run meanwhile: the engine and MPI release the GIL but do not return to Python.

    With `settle` (engine calls), an interrupt waits briefly for `call` to stop first.
    """
    if threading.current_thread() is not threading.main_thread():
        return call()
    outcome: list[T] = []
    failure: list[BaseException] = []
    done = threading.Event()

    def body() -> None:
        try:
            outcome.append(call())
        except BaseException as e:  # handed to the main thread below
            failure.append(e)
        finally:
            _engine.thread_ends()  # its wait for a core belongs to the phase (runner/cpu.py)
            done.set()

    # An Event, not Thread.join: a signal raised inside join() breaks the thread's lock.
    threading.Thread(target=body, name="hpcio-wait", daemon=True).start()
    try:
        while not done.wait(0.2):
            pass
    except BaseException:
        if settle:
            _engine.cancel(True)  # also when Python's own SIGINT handler raised
            done.wait(_SETTLE_S)
        raise
    if failure:
        raise failure[0]
    return outcome[0]


#: Host and PID of rank 0, once the run's ranks know each other (runner/world.py topology).
_rank0: tuple[str, int] | None = None
#: How long an interrupted rank waits for rank 0 on its host to finish its clean-up.
_RANK0_WAIT_S = 10.0


def know_rank0(host: str, pid: int) -> None:
    global _rank0
    _rank0 = (host, pid)


def leave(code: int) -> NoReturn:
    """End an interrupted rank at once with `code`: no MPI_Finalize (it waits for ranks that
    may never come), so first what it and atexit would have removed: the target's lock and
    Open MPI's shared-memory segments. A rank on rank 0's host leaves after rank 0."""
    from hpcio.runner import cleanup, lock

    try:
        _engine.cancel(False)  # the lock object of an object store is read (ours?) and removed
        lock.release_all()
        cleanup.remove_mpi_segments()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError):  # a pipe to a SIGKILLed mpiexec
                stream.flush()
        _wait_for_rank0()
    finally:
        os._exit(code)  # whatever the clean-up met: a stopped rank says no more


def _wait_for_rank0() -> None:
    """Rank 0 removes every file of the run and the lock, the others only their share, so
    it takes longest; and mpiexec SIGKILLs what is left of a job the moment one of its ranks
    exits with an error. Waiting here keeps rank 0 alive until its clean-up is done."""
    if _rank0 is None or _rank0[1] == os.getpid() or _rank0[0] != socket.gethostname():
        return
    try:
        rank0 = os.pidfd_open(_rank0[1])
    except OSError:
        return  # gone already, or no pidfd (Linux before 5.3)
    try:
        select.select([rank0], [], [], _RANK0_WAIT_S)  # readable once it has exited
    finally:
        os.close(rank0)


#: Set by a self-launching hpcio for the ranks it starts: "HOST:PID" of itself.
LAUNCHER_VARIABLE = "HPCIO_LAUNCHER"


def stop_with_launcher() -> None:
    """On a rank a self-launching hpcio started on this host: SIGTERM this process as soon as
    that hpcio is gone (SIGKILLed, out of memory), so the rank stops and cleans up as on
    scancel's SIGTERM. mpiexec, which the launcher's death stops, would tell its ranks only
    after its own kill delay (seconds), and they would go on writing meanwhile."""
    host, _, pid = os.environ.get(LAUNCHER_VARIABLE, "").partition(":")
    if not pid.isdigit() or host != socket.gethostname():
        return
    if threading.current_thread() is not threading.main_thread():
        return
    try:
        watched = os.pidfd_open(int(pid))
    except ProcessLookupError:
        os.kill(os.getpid(), signal.SIGTERM)  # gone already
        return
    except OSError:
        return  # no pidfd (Linux before 5.3): mpiexec's own stop still comes

    def watch() -> None:
        select.select([watched], [], [])  # readable once the process has exited
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="hpcio-launcher-watch", daemon=True).start()


def die_with_parent(signal_number: int = signal.SIGTERM) -> None:
    """Ask Linux to send `signal_number` to this process when its parent dies, so a killed
    launcher (or mpiexec) leaves no process doing I/O behind. A no-op elsewhere."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal_number, 0, 0, 0)
    except (OSError, AttributeError):
        return
