"""--api mpiio: a file's byte ranges through MPI-IO (mpi4py's MPI.File), as IOR's -a MPIIO:
Write_at/Read_at, or Write_at_all/Read_at_all with --collective."""

from __future__ import annotations

from typing import Any

import numpy as np

from hpcio.workloads.apis.library_walk import hints_in_effect


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
        return MpiioFile(MPI.File.Open(comm, path, mode, info), collective)
    except MPI.Exception as e:
        raise Error(e.Get_error_string()) from None


class MpiioFile:
    def __init__(self, handle: Any, collective: bool) -> None:
        self._handle = handle
        self._write = handle.Write_at_all if collective else handle.Write_at
        self._read = handle.Read_at_all if collective else handle.Read_at

    def write(self, offset: int, data: np.ndarray) -> None:
        self._call(self._write, offset, data)

    def read(self, offset: int, out: np.ndarray) -> np.ndarray:
        self._call(self._read, offset, out)
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
