"""A file of a failed run, detached from its storage so that its library can close it."""

from __future__ import annotations

import contextlib
import os

_DESCRIPTORS = "/proc/self/fd"


def detach(path: str) -> None:
    """Point this process's descriptors of `path` at an empty file in memory.

    On a full disk HDF5's close cannot write the file's metadata and fails half-way; the
    file is then half torn down, and the next call on it kills the rank with a segmentation
    fault: h5py closing it again at exit (H5F__close_cb), or netCDF-C listing the file's open
    objects after the failed close (nc4_close_netcdf4_file -> reportopenobjects). Emptying
    the file is not enough: the space may be held by other ranks' files, or the disk filled
    before the file's first byte. Detached, the close writes into memory and succeeds. The
    run has failed: its files are removed, and what the close wrote goes with the
    descriptor. Without memfd_create or /proc (not Linux) nothing changes."""
    real = os.path.realpath(path)
    try:
        spare = os.memfd_create("hpcio-detached")
    except (AttributeError, OSError):
        return
    try:
        for name in os.listdir(_DESCRIPTORS):
            with contextlib.suppress(OSError, ValueError):
                if os.readlink(f"{_DESCRIPTORS}/{name}") == real:
                    os.dup2(spare, int(name))
    except OSError:
        pass
    finally:
        os.close(spare)
