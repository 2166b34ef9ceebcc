"""--api mpiio: a file's byte ranges through MPI-IO (mpi4py's MPI.File), as IOR's -a MPIIO:
Write_at/Read_at, or Write_at_all/Read_at_all with --collective. Every call's error is raised
(the file's error handler returns it; mpi4py raises it), and every transfer's count of bytes is
checked: ompio returns success with fewer bytes written when the file system is full."""

from __future__ import annotations

from typing import Any

import numpy as np

from hpcio.workloads.apis.library_walk import hints_in_effect
from hpcio.workloads.apis.shortfall import short_write


def available() -> str | None:
    return None  # mpi4py is a dependency of hpcio itself


class Error(Exception):
    pass


def open_file(
    path: str, comm: Any, info: Any, *, create: bool, size: int, chunk: int | None,
    collective: bool,
) -> MpiioFile:  # fmt: skip
    from mpi4py import MPI

    mode = MPI.MODE_WRONLY | MPI.MODE_CREATE if create else MPI.MODE_RDONLY
    try:
        handle = MPI.File.Open(comm, path, mode, info)
    except MPI.Exception as e:
        raise Error(e.Get_error_string()) from None
    # MPI's default for files, said here so that no MPI_File_set_errhandler elsewhere (a
    # library's, a site's) makes an error fatal or silent.
    handle.Set_errhandler(MPI.ERRORS_RETURN)
    return MpiioFile(handle, path, collective)


class MpiioFile:
    def __init__(self, handle: Any, path: str, collective: bool) -> None:
        from mpi4py import MPI

        self._handle, self._path = handle, path
        self._write = handle.Write_at_all if collective else handle.Write_at
        self._read = handle.Read_at_all if collective else handle.Read_at
        self._status = MPI.Status()
        self._byte = MPI.BYTE

    def write(self, offset: int, data: np.ndarray) -> None:
        self._call(self._write, offset, data, self._status)
        written = self._status.Get_count(self._byte)
        if written != len(data):
            raise Error(short_write(self._path, len(data), written, offset))

    def read(self, offset: int, out: np.ndarray) -> np.ndarray:
        self._call(self._read, offset, out, self._status)
        got = self._status.Get_count(self._byte)
        if got != len(out):
            raise Error(f"read {got} of {len(out)} bytes at offset {offset} (the file is shorter)")
        return out

    def sync(self) -> None:
        self._call(self._handle.Sync)

    def close(self) -> None:
        self._call(self._handle.Close)

    def hints_in_effect(self, hints: tuple[str, ...]) -> str:
        held = self._handle.Get_info()
        try:
            return hints_in_effect(held, hints)
        finally:
            held.Free()

    @staticmethod
    def _call(method: Any, *args: Any) -> None:
        from mpi4py import MPI

        try:
            method(*args)
        except MPI.Exception as e:
            raise Error(e.Get_error_string()) from None
