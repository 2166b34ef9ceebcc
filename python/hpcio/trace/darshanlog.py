"""Opening a Darshan log through pydarshan (the optional `darshan` wheel)."""

from __future__ import annotations

import os
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
    with open(path, "rb") as handle:
        head = handle.read(8)
    # Every Darshan log starts with its version string "darshan-logs/..." or a gzip/bzip2
    # region; pydarshan's C library aborts the process on some garbage instead of raising.
    if not head:
        raise TraceError(f"{path}: empty file, not a Darshan log")
    try:
        return darshan.DarshanReport(str(path), read_all=True)
    except Exception as error:  # pydarshan raises bare RuntimeError/ValueError/OSError
        raise TraceError(f"{path}: not a readable Darshan log ({error})") from None
