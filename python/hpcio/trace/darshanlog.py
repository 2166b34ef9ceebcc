"""Opening a Darshan log through pydarshan (the optional `darshan` wheel), once the log has
been found whole: darshan-util's C library crashes the process (SIGSEGV) on some damaged logs,
raises from pandas on others, and reads a log cut inside its DXT section as one without DXT."""

from __future__ import annotations

import contextlib
import gc
import importlib.util
import multiprocessing
import multiprocessing.connection
import multiprocessing.context
import os
import signal
import struct
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from hpcio.trace.operations import TraceError

MISSING = (
    "reading Darshan logs needs pydarshan: pip install 'hpcio[characterize]' (or: pip install "
    "darshan)"
)


def open_log(log_path: str | os.PathLike):
    """A darshan.DarshanReport with every record read.

    Raises: TraceError for a missing file, a file that is not a Darshan log, or no pydarshan."""
    path = Path(log_path)
    if not path.is_file():
        raise TraceError(f"{path}: no such file" if not path.exists() else f"{path}: not a file")
    # Found, not imported: pydarshan imports pandas (about 0.45 s), which a log refused by
    # check_whole never needs in this process.
    if importlib.util.find_spec("darshan") is None:
        raise TraceError(MISSING)
    if path.stat().st_size == 0:
        raise TraceError(f"{path}: empty file, not a Darshan log")
    check_whole(path)
    try:
        import darshan
    except ImportError:
        raise TraceError(MISSING) from None
    with _quiet_stderr():
        try:
            return darshan.DarshanReport(str(path), read_all=True)
        except Exception:  # pydarshan raises bare RuntimeError/ValueError/OSError
            pass
        # The half-made report complains again when collected: let it do so here, quietly.
        gc.collect()
    raise TraceError(f"{path}: not a readable Darshan log")


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """darshan-util's C library prints its own "Error: ..." lines on file descriptor 2; the
    one line hpcio prints says the same."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


#: darshan-logutils.h: struct darshan_header: version string (8 bytes), magic number (int64),
#: compression type (1 byte, padded), partial flag (uint32), then the name map and one map per
#: module, each {uint64 offset, uint64 length}. Logs of every version hpcio reads have at least
#: 16 module maps (DARSHAN_MAX_MODS).
_MAGIC = 6567223
_MAPS_AT = 24
_MODULE_MAPS = 16
_HEADER_BYTES = _MAPS_AT + 16 * (1 + _MODULE_MAPS)
#: Seconds the child may take to read a log (pydarshan reads a large DXT log in seconds).
_READ_TIMEOUT_S = 600
#: What a child found, by the log's identity (_identity): a process that opens one log again
#: (replay's source, then its summary; a test suite's shared sample logs) starts no second
#: child. A log rewritten since has another identity.
_READ: dict[tuple[object, ...], tuple[dict[str, int], bool]] = {}


def check_whole(path: Path) -> None:
    """Refuse a damaged log before pydarshan reads it in hpcio's process: a header that is not
    Darshan's, a section that the file ends inside (named, DXT's included), or a log that
    darshan-util cannot read without failing or crashing (tried in a child process).

    Raises:
        TraceError: one line naming the log and what is wrong with it.
    """
    size = path.stat().st_size
    with open(path, "rb") as log:
        header = log.read(_HEADER_BYTES)
    if len(header) < 16 or struct.unpack_from("<q", header, 8)[0] != _MAGIC:
        raise TraceError(f"{path}: not a Darshan log (no Darshan header)")
    if len(header) < _HEADER_BYTES:
        raise TraceError(
            f"{path}: the log is cut short ({size} bytes; its header alone is {_HEADER_BYTES})"
        )
    name_end = sum(struct.unpack_from("<QQ", header, _MAPS_AT))
    if name_end > size:
        raise TraceError(
            f"{path}: the log is cut short ({size} bytes; its file names end at byte {name_end})"
        )
    cut = {
        length: offset + length
        for index in range(_MODULE_MAPS)
        for offset, length in [struct.unpack_from("<QQ", header, _MAPS_AT + 16 * (1 + index))]
        if length and offset + length > size
    }
    modules, readable = _read_in_child(path)
    if cut:
        names = [name for name, length in modules.items() if length in cut] or ["a module's"]
        end = max(cut.values())
        lost = ", ".join(names) + (" sections end" if len(names) > 1 else " section ends")
        counters = (
            ": replaying or summarising its counters alone would be another workload"
            if all(name.startswith("DXT") for name in names)
            else ""
        )
        raise TraceError(
            f"{path}: the log is cut short ({size} bytes; its {lost} at byte {end})"
            f"{counters}; use the whole log"
        )
    if not readable:
        raise TraceError(f"{path}: a damaged Darshan log (pydarshan cannot read its records)")


def _read_in_child(path: Path) -> tuple[dict[str, int], bool]:
    """The log's modules (name -> section bytes), and whether a child process read every
    record: once per log and process (_READ)."""
    identity = _identity(path)
    if identity not in _READ:
        _READ[identity] = _read_in_new_child(path)
    modules, readable = _READ[identity]
    return dict(modules), readable


def _identity(path: Path) -> tuple[object, ...]:
    """The file at `path` as it is now: which file, its size, its last change (ns)."""
    about = path.stat()
    return (
        str(path.resolve()),
        about.st_dev,
        about.st_ino,
        about.st_size,
        about.st_mtime_ns,
        about.st_ctime_ns,
    )


def _read_in_new_child(path: Path) -> tuple[dict[str, int], bool]:
    """Read the log in a child forked from a server that imported pydarshan once (pandas'
    import is about 0.45 s of CPU; a fork from the server 12-23 ms): a process that checks
    many logs (a sweep of replays, a test suite) pays for that import once, and a crash in
    darshan-util's reader still takes only the child."""
    context = _children()
    receiving, sending = context.Pipe(duplex=False)
    child = context.Process(target=_read_log, args=(str(path), sending), daemon=True)
    child.start()
    sending.close()
    modules: dict[str, int] | None = None
    whole = False
    deadline = time.monotonic() + _READ_TIMEOUT_S
    ended = False
    try:
        while receiving.poll(max(0.0, deadline - time.monotonic())):
            try:
                message = receiving.recv()
            except EOFError:  # the child has ended, however it ended
                ended = True
                break
            if modules is None:
                modules = message
            else:
                whole = message is True
        else:
            raise TraceError(f"{path}: pydarshan did not finish reading it in {_READ_TIMEOUT_S} s")
    finally:
        receiving.close()
        if not ended:  # timed out or interrupted
            child.kill()
        child.join()
    if child.exitcode is not None and child.exitcode < 0:
        name = signal.Signals(-child.exitcode).name
        raise TraceError(f"{path}: a damaged Darshan log (darshan-util's reader died of {name})")
    if modules is None:
        raise TraceError(f"{path}: not a readable Darshan log")
    return {str(k): int(v) for k, v in modules.items()}, whole and child.exitcode == 0


def _children() -> multiprocessing.context.ForkServerContext:
    """The context whose children fork from a server that imported pydarshan (and this module,
    which each child runs) before its first child."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["darshan", "darshan.backend.cffi_backend", __name__])
    return context


def _read_log(path: str, sending: multiprocessing.connection.Connection) -> None:
    """In the child: send the log's modules (name -> section bytes; darshan-util renumbers an
    old log's modules, so they are matched to the header's sections by length), then read every
    record (the read that may crash) and send True. Its output goes nowhere: a damaged log's
    reader prints garbage bytes and darshan-util its own error lines."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    import darshan
    from darshan.backend import cffi_backend as backend

    log = backend.log_open(path)
    modules = {name: about["len"] for name, about in backend.log_get_modules(log).items()}
    backend.log_close(log)
    sending.send(modules)
    report = darshan.DarshanReport(path, read_all=True)
    for records in report.records.values():
        records.to_df()
    sending.send(True)
