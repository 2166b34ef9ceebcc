"""--api netcdf: a file's byte ranges as slices of one 1-D ubyte variable of a NetCDF-4 file,
through netCDF4-python in parallel mode (on parallel HDF5), independent or collective, the
variable contiguous or chunked (--chunk-size), without fill values."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from typing import Any

import numpy as np

from hpcio.workloads.apis.detach import detach
from hpcio.workloads.apis.library_walk import VARIABLE

Error = (OSError, RuntimeError, ValueError)
_ONE = np.zeros(1, np.uint8)


def available() -> str | None:
    if importlib.util.find_spec("netCDF4") is None:
        return "--api netcdf needs netCDF4 built with parallel support (scripts/setup installs it)"
    if not _parallel():
        return (
            "--api netcdf: this netCDF4 has no parallel support; scripts/setup builds it "
            "against Debian's libnetcdf-mpi-dev"
        )
    return None


#: Set in the ranks of an MPI job (Open MPI, MPICH/PMI, PMIx; hpcio's own launch).
_IN_A_JOB = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS", "HPCIO_LAUNCHED")


def _parallel() -> bool:
    """netCDF4's parallel support. Importing netCDF4 starts MPI (it imports mpi4py.MPI): a rank
    (MPI starts there anyway) imports it; the process that launches the job, where MPI must
    not start, asks a child process instead."""
    if "mpi4py.MPI" in sys.modules or any(name in os.environ for name in _IN_A_JOB):
        import netCDF4

        return bool(netCDF4.__has_parallel4_support__)
    check = "import netCDF4, sys; sys.exit(0 if netCDF4.__has_parallel4_support__ else 3)"
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, timeout=120)
    return done.returncode == 0


def open_file(
    path: str, comm: Any, info: Any, *, create: bool, size: int, chunk: int | None,
    collective: bool,
) -> NetcdfFile:  # fmt: skip
    import netCDF4

    if not create and not os.path.exists(path):
        # netCDF4 in parallel mode says "[Errno 9] Bad file descriptor" for a missing file.
        raise FileNotFoundError("no such file or directory")
    handle = netCDF4.Dataset(
        path, "w" if create else "r", parallel=True, comm=comm, info=info, format="NETCDF4"
    )
    if create:
        handle.createDimension("x", size)
        variable = handle.createVariable(
            VARIABLE, "u1", ("x",), contiguous=chunk is None,
            chunksizes=(chunk,) if chunk else None, fill_value=False,
        )  # fmt: skip
    else:
        variable = handle.variables[VARIABLE]
    variable.set_auto_maskandscale(False)
    variable.set_collective(collective)
    return NetcdfFile(handle, variable, path if create else None)


class NetcdfFile:
    def __init__(self, handle: Any, variable: Any, written: str | None) -> None:
        self._handle = handle
        self._variable = variable
        self._written = written  # the path of a file this run writes

    def write(self, offset: int, data: np.ndarray) -> None:
        if not len(data):
            # A collective call made after this rank's error, so the others are not left
            # waiting: netCDF4-python makes no call for an empty slice, so one byte goes (the
            # run has failed and its files are removed).
            self._variable[offset : offset + 1] = _ONE
            return
        self._variable[offset : offset + len(data)] = data

    def read(self, offset: int, out: np.ndarray) -> np.ndarray:
        if not len(out):
            _ = self._variable[offset : offset + 1]  # as write: the collective call must be made
            return out
        # netCDF4-python reads into an array of its own, so that array is the result. Copying
        # it into `out` made reads 4x slower than a plain script's `var[a:b]` (bench/
        # vs_libraries): beside the copy, the array was freed at once, glibc gave the top of
        # its heap back, and the next read faulted 1 MiB of fresh pages in.
        return self._variable[offset : offset + len(out)]

    def sync(self) -> None:
        self._handle.sync()

    def close(self) -> None:
        self._handle.close()

    def abandon(self) -> None:
        """Close the file after an error; the run has failed and the files it wrote go. Such a
        file is detached from its storage first (see detach.detach)."""
        if self._written is not None:
            detach(self._written)
        self._handle.close()

    def hints_in_effect(self, hints: tuple[str, ...]) -> str | None:
        return None  # NetCDF keeps the MPI file to itself: the hints are recorded as asked
