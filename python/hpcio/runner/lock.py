"""One run at a time on a POSIX target directory. Two runs on the same files overwrite and
remove each other's data mid-phase and report "verify failed", which makes sound storage look
corrupt; the second run is refused instead, naming the first.

The lock is an flock on LOCK_KEY in the target directory, held until the process ends: the
kernel lets go of it when the holder dies, so a run that was killed leaves nothing that blocks
(its file is reused, and `hpcio clean` removes it). A launching hpcio holds the lock for the
ranks it starts: they find its token in their environment and do not take it again.
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

from hpcio.errors import TargetError
from hpcio.spec.model import RunSpec

#: Starts with "hpcio-" like every file hpcio makes, so `hpcio clean` removes a stale one.
LOCK_KEY = "hpcio-run.lock"
#: Set by the process that holds the lock, inherited by the ranks it launches.
TOKEN_VARIABLE = "HPCIO_LOCK_TOKEN"

#: Lock file path -> descriptor, for the locks this process holds.
_held: dict[str, int] = {}


def hold(run: RunSpec) -> None:
    """Hold the lock on `run`'s target directory until this process exits; nothing for an
    object store, a lock this process or its launcher already holds, or a file system without
    flock.

    Raises:
        TargetError: another live run holds it (its host, pid and start are named).
    """
    if run.target.is_object_store:
        return
    path = os.path.join(run.target.path, LOCK_KEY)
    if path in _held:
        return
    fd = _acquire(path, run)
    if fd is None:
        return
    _held[path] = fd
    token = os.environ.setdefault(TOKEN_VARIABLE, uuid.uuid4().hex)
    started = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{socket.gethostname()} {os.getpid()} {started} {token}\n".encode(), 0)
    atexit.register(_release, path)


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
            if holder.endswith(" " + os.environ.get(TOKEN_VARIABLE, "-")):
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
        else "its lock file says no more"
    )
    return (
        f"target {run.target.url} is in use by another hpcio run ({who}); wait for it to end "
        "or use another directory"
    )


def _release(path: str) -> None:
    fd = _held.pop(path, None)
    if fd is None:
        return
    with contextlib.suppress(OSError):
        os.unlink(path)  # while still locked, so no one can take the lock on the old file
    os.close(fd)
