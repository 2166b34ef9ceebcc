"""--api mpiio: a file's byte ranges through MPI-IO (mpi4py's MPI.File), as IOR's -a MPIIO:
Write_at/Read_at, or Write_at_all/Read_at_all with --collective. Every call's error is raised
(the file's error handler returns it; mpi4py raises it), and every transfer's count of bytes is
checked: ompio returns success with fewer bytes written when the file system is full."""

from __future__ import annotations

from typing import Any

import numpy as np

from hpcio.workloads.apis import loaded
from hpcio.workloads.apis.library_walk import hints_in_effect
from hpcio.workloads.apis.shortfall import short_write
from hpcio.workloads.native import _engine

#: What the engine's row says of a call that moved fewer bytes than asked (library_rows.rs).
_SHORT = -1


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


def _short_read(got: int, wanted: int, offset: int) -> str:
    return f"read {got} of {wanted} bytes at offset {offset} (the file is shorter)"


def find_row_functions() -> None:
    """Look up what rows call, before a phase (library_walk)."""
    _row_functions(collective=False, writing=False)


def _row_functions(collective: bool, writing: bool) -> tuple[int, int] | None:
    from mpi4py import MPI

    if not MPI.Get_library_version().startswith("Open MPI"):
        return None
    call = f"MPI_File_{'write' if writing else 'read'}_at{'_all' if collective else ''}"
    found = loaded.addresses(loaded.library(r"libmpi\.so"), call, "MPI_Get_count")
    return (found[0], found[1]) if found else None


class MpiioFile:
    def __init__(self, handle: Any, path: str, collective: bool) -> None:
        from mpi4py import MPI

        self._handle, self._path, self._collective = handle, path, collective
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
            raise Error(_short_read(got, len(out), offset))
        return out

    def row(
        self, through: _engine.RowThrough, length: int, offset: int, stride: int, count: int
    ) -> _engine.LibraryRow | None:
        """`count` reads into a buffer or writes from a payload (`through`) of `length` bytes,
        from `offset` every `stride`, made by the engine (library_walk._Calls.row); None where
        MPI is not Open MPI (whose handles are pointers)."""
        from mpi4py import MPI

        functions = _row_functions(self._collective, writing=isinstance(through, tuple))
        if functions is None:
            return None
        handles = (MPI._handleof(self._handle), MPI._handleof(self._byte),
                   MPI._addressof(self._status))  # fmt: skip
        return _engine.mpiio_row(functions, handles, through, offset, stride, count)

    def row_error(
        self, code: int, detail: int, words: str | None, offset: int, length: int, writing: bool
    ) -> str:
        """A failed call of a row, in words, without making it again."""
        from mpi4py import MPI

        if code == _SHORT:
            if writing:
                return short_write(self._path, length, detail, offset)
            return _short_read(detail, length, offset)
        return MPI.Get_error_string(code)

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
