"""Opening a Darshan log through pydarshan (the optional `darshan` wheel)."""

from __future__ import annotations

import contextlib
import gc
import os
import sys
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
    try:
        import darshan
    except ImportError:
        raise TraceError(MISSING) from None
    if path.stat().st_size == 0:
        raise TraceError(f"{path}: empty file, not a Darshan log")
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
