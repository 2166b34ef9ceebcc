"""The addresses of C functions in a library this process has loaded already (h5py's libhdf5,
mpi4py's libmpi), for the engine's rows of library reads and writes
(engine/src/library_rows.rs). It is the copy the Python wrappers call, so the handles they
opened are valid in it."""

from __future__ import annotations

import ctypes
import functools
import os
import re


@functools.cache
def library(pattern: str) -> ctypes.CDLL | None:
    """The loaded shared library whose file name matches `pattern` (a regular expression, from
    the start of the name), or None."""
    try:
        with open("/proc/self/maps") as maps:
            paths = sorted({line.split()[-1] for line in maps if ".so" in line})
    except OSError:
        return None  # not Linux: the Python loop reads
    for path in paths:
        if re.match(pattern, os.path.basename(path)):
            try:
                return ctypes.CDLL(path)
            except OSError:
                return None
    return None


def addresses(lib: ctypes.CDLL | None, *names: str) -> tuple[int, ...] | None:
    """The addresses of `names` in `lib`; None when the library or a name is missing."""
    if lib is None:
        return None
    try:
        found = tuple(ctypes.cast(getattr(lib, name), ctypes.c_void_p).value or 0 for name in names)
    except AttributeError:
        return None
    return found if all(found) else None
