"""--api netcdf: a file's byte ranges as slices of one 1-D ubyte variable of a NetCDF-4 file,
through netCDF4-python in parallel mode (on parallel HDF5), independent or collective, the
variable contiguous or chunked (--chunk-size), without fill values."""

from __future__ import annotations

from typing import Any

import numpy as np

from hpcio.workloads.apis.replay import VARIABLE

Error = (OSError, RuntimeError, ValueError)


def available() -> str | None:
    try:
        import netCDF4
    except ImportError:
        return "--api netcdf needs netCDF4 built with parallel support (scripts/setup installs it)"
    if not netCDF4.__has_parallel4_support__:
        return (
            "--api netcdf: this netCDF4 has no parallel support; scripts/setup builds it "
            "against Debian's libnetcdf-mpi-dev"
        )
    return None


def open_file(
    path: str, comm: Any, info: Any, *, create: bool, size: int, chunk: int | None,
    collective: bool,
) -> NetcdfFile:  # fmt: skip
    import netCDF4

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
    return NetcdfFile(handle, variable)


class NetcdfFile:
    def __init__(self, handle: Any, variable: Any) -> None:
        self._handle = handle
        self._variable = variable

    def write(self, offset: int, data: np.ndarray) -> None:
        self._variable[offset : offset + len(data)] = data

    def read(self, offset: int, out: np.ndarray) -> None:
        out[:] = self._variable[offset : offset + len(out)]

    def sync(self) -> None:
        self._handle.sync()

    def close(self) -> None:
        self._handle.close()

    def hints_in_effect(self, hints: tuple[str, ...]) -> str | None:
        return None  # NetCDF keeps the MPI file to itself: the hints are recorded as asked
