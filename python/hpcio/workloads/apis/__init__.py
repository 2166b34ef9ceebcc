"""The interfaces a pattern's bytes can go through besides the engine's own (IOR's -a): each
library module opens a file its way and writes and reads byte ranges of it; replay.py does a
rank's engine plan through one of them, in a Python body timed by the engine's Recorder.

A new API is one module here with `available()` and `open_file(...)` (see mpiio.py) and its
name in LIBRARIES."""

from __future__ import annotations

import importlib
from types import ModuleType

#: Library APIs, each a module of this package; "posix" is the engine's own.
LIBRARIES = ("mpiio", "hdf5", "netcdf", "pnetcdf")
APIS = ("posix", *LIBRARIES)
#: What each API is, for help and errors.
WHAT = {
    "posix": "the engine's pwrite/pread, or the object store's requests",
    "mpiio": "MPI-IO through mpi4py's MPI.File",
    "hdf5": "parallel HDF5 through h5py's mpio driver",
    "netcdf": "parallel NetCDF-4 through netCDF4-python",
    "pnetcdf": "PnetCDF's C API (CDF-5 files)",
}


def library(api: str) -> ModuleType:
    return importlib.import_module(f"hpcio.workloads.apis.{api}")


def missing(api: str) -> str | None:
    """Why `api` cannot run on this machine (one line), or None when it can."""
    if api == "posix":
        return None
    return library(api).available()
