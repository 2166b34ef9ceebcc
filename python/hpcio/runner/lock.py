"""One run at a time on a target directory or prefix. Two runs on the same files overwrite and
remove each other's data mid-phase and report "verify failed", which makes sound storage look
corrupt; the second run is refused instead, naming the first.

POSIX: an flock on LOCK_KEY in the target directory, held until the process ends; the kernel
lets go of it when the holder dies, so a run that was killed leaves nothing that blocks (its
file is reused, and `hpcio clean` removes it). Object stores: a LOCK_KEY object naming the
holder, removed at exit; one left by a dead process of this host does not block, one from
another host is removed by `hpcio clean`. A launching hpcio holds the lock for the ranks it
starts: they find its token in their environment and do not take it again.
"""

from __future__ import annotations

import atexit
import contextlib
import datetime
import errno
import fcntl
import os
import socket
import uuid
from typing import TYPE_CHECKING, Any

import numpy as np

from hpcio.errors import TargetError
from hpcio.runner.processes import alive
from hpcio.workloads.plans import Op, Plan, PlanBuilder, Runs

if TYPE_CHECKING:
    from hpcio.spec.model import RunSpec

#: Starts with "hpcio-" like every file hpcio makes, so `hpcio clean` removes a stale one.
LOCK_KEY = "hpcio-run.lock"
#: Set by the process that holds the lock, inherited by the ranks it launches.
TOKEN_VARIABLE = "HPCIO_LOCK_TOKEN"

#: Lock file path -> descriptor (object stores: URL -> -1), for the locks this process holds.
_held: dict[str, int] = {}
#: Object stores: URL -> the engine target its lock object is removed through.
_held_objects: dict[str, Any] = {}
#: Lock file paths our launcher holds for us: removed by a rank if the launcher was killed.
_inherited: set[str] = set()


def hold(run: RunSpec) -> None:
    """Hold the lock on `run`'s target directory until this process exits; nothing for an
    object store, a lock this process or its launcher already holds, or a file system without
    flock.

    Raises:
        TargetError: another live run holds it (its host, pid and start are named).
    """
    if not run.target.traits.lasting:
        return  # objects that live and die with this one process, or none kept at all
    if run.target.is_object_store:
        _hold_object(run)
        return
    path = os.path.join(run.target.path, LOCK_KEY)
    if path in _held:
        return
    fd = _acquire(path, run)
    if fd is None:
        if _ours(_read_path(path)):
            _inherited.add(path)
        return
    _held[path] = fd
    os.ftruncate(fd, 0)
    os.pwrite(fd, _record().encode(), 0)
    atexit.register(_release, path)


def _record() -> str:
    """Who holds the lock: host, pid, start (UTC) and the token its ranks inherit."""
    token = os.environ.setdefault(TOKEN_VARIABLE, uuid.uuid4().hex)
    started = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    return f"{socket.gethostname()} {os.getpid()} {started} {token}"


def _ours(holder: str) -> bool:
    """The record is this process's, or its launcher's (the token the ranks inherited)."""
    return holder.endswith(" " + os.environ.get(TOKEN_VARIABLE, "-"))


def _acquire(path: str, run: RunSpec) -> int | None:
    """A descriptor holding the flock on `path`, or None where no lock is needed or possible."""
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as e:
            if e.errno in (errno.EACCES, errno.EROFS, errno.EPERM) and not run.writes:
                return None  # reading a read-only directory cannot harm another run's data
            raise TargetError(f"target {run.target.url}: cannot create {LOCK_KEY}: "
                              f"{e.strerror}") from None  # fmt: skip
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            holder = _read(fd)
            os.close(fd)
            if e.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS):
                return None  # no flock here (some NFS mounts): run unlocked, as before
            if _ours(holder):
                return None  # our launcher holds it for us
            raise TargetError(_in_use(run, holder)) from None
        # The holder before us may have removed the file between our open and our flock:
        # then we hold a lock on a file no one else will ever open. Start again.
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)


def _read_path(path: str) -> str:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return ""
    try:
        return _read(fd)
    finally:
        os.close(fd)


def release_all() -> None:
    """Let go of every lock this process holds, now: a rank interrupted under mpiexec leaves
    with os._exit, which runs no atexit handler, and must not leave its lock file in the
    user's directory. A lock our launcher took for us goes too once that launcher is dead
    (SIGKILLed: nobody else is left to remove it)."""
    for path in [p for p in _held if p not in _held_objects]:
        _release(path)
    for url, target in list(_held_objects.items()):
        _held.pop(url, None)
        _held_objects.pop(url, None)
        # Removed unread: an interrupted engine may not read it back, and it is ours.
        with contextlib.suppress(Exception):
            target.remove([LOCK_KEY])
    for path in list(_inherited):
        _inherited.discard(path)
        _remove_if_holder_dead(path)


def _remove_if_holder_dead(path: str) -> None:
    """Remove the lock file at `path` if its record is our launcher's and the flock is free
    (the kernel dropped it with the launcher): taken first, so no new run's lock goes."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if _ours(_read(fd)) and os.stat(path).st_ino == os.fstat(fd).st_ino:
            os.unlink(path)
    except OSError:
        pass  # our launcher still holds it and removes it itself
    finally:
        os.close(fd)


def _read(fd: int) -> str:
    try:
        return os.pread(fd, 4096, 0).decode(errors="replace").strip()
    except OSError:
        return ""


def _in_use(run: RunSpec, holder: str) -> str:
    parts = holder.split()
    who = (
        f"host {parts[0]}, pid {parts[1]}, started {parts[2]}"
        if len(parts) >= 3
        else "its lock says no more"
    )
    if not run.target.is_object_store:
        return (
            f"target {run.target.url} is in use by another hpcio run ({who}); wait for it to "
            "end or use another directory"
        )
    return (
        f"target {run.target.url} is in use by another hpcio run ({who}); wait for it to end "
        f"or use another prefix (if that run is gone, `hpcio clean --target {run.target.url}` "
        "removes its lock)"
    )


# -- object stores: a lock object, since they have no flock ---------------------------------

#: The lock object's fixed size: a record, padded, so a reader knows how much to read.
_RECORD_BYTES = 256


def _hold_object(run: RunSpec) -> None:
    """Write LOCK_KEY under the prefix unless a live run's is there; removed at exit. Object
    stores offer no atomic create here, so two runs started within one round trip of each
    other can still both pass: the lock catches the runs that overlap, not a photo finish."""
    from hpcio import _engine

    url = run.target.url
    if url in _held:
        return
    target = _engine.Target(url, options=dict(run.target.options))
    holder = _read_object(target)
    if holder is not None and not _ours(holder) and not _dead_here(holder):
        raise TargetError(_in_use(run, holder))
    if holder is not None and _ours(holder):
        return
    # A read-only run tries once: a store that takes no write (fake-gcs-server) answers alike.
    written = _write_object_retrying if run.writes else _write_object
    if not written(target, _record()):
        if run.writes:
            raise TargetError(f"target {url}: cannot write its lock object {LOCK_KEY}")
        return  # a read-only prefix: reading cannot harm another run's data
    _held[url] = -1
    _held_objects[url] = target
    atexit.register(_release_object, target, url)


def _dead_here(holder: str) -> bool:
    """The holder ran on this host and its process is gone."""
    parts = holder.split()
    if len(parts) < 2 or parts[0] != socket.gethostname() or not parts[1].isdigit():
        return False
    return not alive(int(parts[1]))


def _one_transfer(op: Op, opening: Op) -> Plan:
    """Open LOCK_KEY, move its one record, close it."""
    builder = PlanBuilder().control(opening, LOCK_KEY)
    builder.runs(op, LOCK_KEY, Runs.of(0, 1, 0), _RECORD_BYTES)
    return builder.control(Op.CLOSE, LOCK_KEY).build()


def _read_object(target: Any) -> str | None:
    from hpcio import _engine

    try:
        if LOCK_KEY not in target.list(LOCK_KEY):
            return None
    except OSError:
        return None
    buffer = np.zeros(_RECORD_BYTES, np.uint8)
    executor = _engine.Executor(target, seed=0)
    executor.run(_one_transfer(Op.READ, Op.OPEN_READ).for_engine(), sink=buffer)
    if executor.figures().errors:
        return None  # gone between the listing and the read
    return bytes(buffer).decode(errors="replace").strip()


def _write_object(target: Any, record: str) -> bool:
    from hpcio import _engine

    data = np.frombuffer(record.ljust(_RECORD_BYTES)[:_RECORD_BYTES].encode(), np.uint8)
    executor = _engine.Executor(target, seed=0)
    executor.run(_one_transfer(Op.WRITE, Op.OPEN_WRITE).for_engine(), source=data)
    return not executor.figures().errors


def _write_object_retrying(target: Any, record: str) -> bool:
    """Write the lock object, tried again as cleanup.retrying does: a PUT whose answer was
    lost (a reset, issue 28) may have landed all the same, and a run that gave up then would
    leave its lock behind. Where every try failed, a lock of ours that did land is removed."""
    from hpcio.runner.cleanup import retrying

    def write() -> None:
        if not _write_object(target, record):
            raise OSError(0, f"cannot write {LOCK_KEY}")

    try:
        retrying(write)
    except OSError:
        with contextlib.suppress(OSError):
            holder = retrying(lambda: _read_object_or_raise(target))
            if holder is not None and _ours(holder):
                retrying(lambda: target.remove([LOCK_KEY]))
        return False
    return True


def _release_object(target: Any, url: str) -> None:
    """Remove our lock object. Each step is retried (cleanup.retrying): the store may still
    reset or stall requests as it did during the run (issue 28), and a lock left behind would
    block the next run on this prefix."""
    from hpcio.runner.cleanup import retrying

    if _held.pop(url, None) is None:
        return  # released already (release_all)
    _held_objects.pop(url, None)
    with contextlib.suppress(OSError):
        holder = retrying(lambda: _read_object_or_raise(target))
        if holder is not None and _ours(holder):  # never another run's, had one raced us
            retrying(lambda: target.remove([LOCK_KEY]))


def _read_object_or_raise(target: Any) -> str | None:
    """The lock object's record, None if there is none; OSError if the store failed to say."""
    if LOCK_KEY not in target.list(LOCK_KEY):
        return None
    holder = _read_object(target)
    if holder is None and LOCK_KEY in target.list(LOCK_KEY):
        raise OSError(0, f"cannot read {LOCK_KEY}")  # a failed read, not a vanished lock
    return holder


def _release(path: str) -> None:
    fd = _held.pop(path, None)
    if fd is None:
        return
    with contextlib.suppress(OSError):
        os.unlink(path)  # while still locked, so no one can take the lock on the old file
    os.close(fd)
