"""Why a library's write came up short when the library itself said nothing: Open MPI's ompio
prints the file system's refusal (ENOSPC) and returns success with fewer bytes written, and
PnetCDF, over it, returns NC_NOERR. The free space of the file's file system says which."""

from __future__ import annotations

import os


def short_write(path: str, wanted: int, written: int, offset: int) -> str:
    """One line: `written` of `wanted` bytes at `offset` of `path`, and the likely cause."""
    return f"wrote {written} of {wanted} bytes at offset {offset}{_cause(path, wanted - written)}"


def short_file(path: str, wanted: int, found: int) -> str:
    """One line: the file holds `found` bytes where the rank's writes end at `wanted`."""
    return f"the file holds {found} bytes but this rank's writes end at byte {wanted}" + _cause(
        path, wanted - found
    )


def _cause(path: str, missing: int) -> str:
    try:
        held = os.statvfs(os.path.dirname(path) or ".")
    except OSError:
        return ""
    free = held.f_bavail * held.f_frsize
    if free < missing:
        return f": No space left on device ({free} bytes free)"
    return ": the file system refused the rest (see the MPI library's message above)"
