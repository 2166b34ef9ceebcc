"""--api pnetcdf: a file's byte ranges as slices of one 1-D NC_UBYTE variable of a CDF-5 file,
through PnetCDF's C API (IOR's -a NCMPI). Its Python binding does not build against Open MPI,
so the library is called through ctypes with the raw MPI handles mpi4py exposes. Every call's
return code is checked, and a written file's size once it is closed: over Open MPI's ompio,
PnetCDF returns NC_NOERR for writes the file system refused (a full disk)."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
from typing import Any

import numpy as np

from hpcio.workloads.apis.library_walk import VARIABLE
from hpcio.workloads.apis.shortfall import short_file
from hpcio.workloads.native import _engine

NC_NOWRITE = 0x0000
NC_CLOBBER = 0x0000
NC_64BIT_DATA = 0x0020  # CDF-5: 64-bit sizes, and NC_UBYTE
NC_UBYTE = 7

_int = ctypes.c_int
_offset = ctypes.c_longlong  # MPI_Offset
_p = ctypes.c_void_p


class Error(Exception):
    pass


@functools.cache
def _library() -> ctypes.CDLL:
    name = ctypes.util.find_library("pnetcdf")
    if name is None:
        raise Error("no libpnetcdf on this machine")
    lib = ctypes.CDLL(name)
    ptr = ctypes.POINTER
    signatures = {
        "ncmpi_create": [_p, ctypes.c_char_p, _int, _p, ptr(_int)],
        "ncmpi_open": [_p, ctypes.c_char_p, _int, _p, ptr(_int)],
        "ncmpi_def_dim": [_int, ctypes.c_char_p, _offset, ptr(_int)],
        "ncmpi_def_var": [_int, ctypes.c_char_p, _int, _int, ptr(_int), ptr(_int)],
        "ncmpi_inq_varid": [_int, ctypes.c_char_p, ptr(_int)],
        "ncmpi_inq_varoffset": [_int, _int, ptr(_offset)],
        "ncmpi_enddef": [_int],
        "ncmpi_begin_indep_data": [_int],
        "ncmpi_end_indep_data": [_int],
        "ncmpi_put_vara_uchar_all": [_int, _int, ptr(_offset), ptr(_offset), _p],
        "ncmpi_put_vara_uchar": [_int, _int, ptr(_offset), ptr(_offset), _p],
        "ncmpi_get_vara_uchar_all": [_int, _int, ptr(_offset), ptr(_offset), _p],
        "ncmpi_get_vara_uchar": [_int, _int, ptr(_offset), ptr(_offset), _p],
        "ncmpi_sync": [_int],
        "ncmpi_close": [_int],
    }
    for name, arguments in signatures.items():
        function = getattr(lib, name)
        function.argtypes = arguments
        function.restype = _int
    lib.ncmpi_strerror.argtypes = [_int]
    lib.ncmpi_strerror.restype = ctypes.c_char_p
    return lib


def available() -> str | None:
    try:
        _library()
    except (Error, OSError):
        return "--api pnetcdf needs libpnetcdf (Debian's libpnetcdf-dev; scripts/setup installs it)"
    return None


def _checked(status: int) -> None:
    if status != 0:
        raise Error(_said(status))


def _said(status: int) -> str:
    return _library().ncmpi_strerror(status).decode(errors="replace")


def open_file(
    path: str, comm: Any, info: Any, *, create: bool, size: int, chunk: int | None,
    collective: bool,
) -> PnetcdfFile:  # fmt: skip
    lib = _library()
    ncid, varid = _int(), _int()
    raw_comm, raw_info = _p(comm.handle), _p(info.handle)
    if create:
        _checked(lib.ncmpi_create(raw_comm, path.encode(), NC_CLOBBER | NC_64BIT_DATA,
                                  raw_info, ctypes.byref(ncid)))  # fmt: skip
        dimid = _int()
        _checked(lib.ncmpi_def_dim(ncid, b"x", size, ctypes.byref(dimid)))
        _checked(lib.ncmpi_def_var(ncid, VARIABLE.encode(), NC_UBYTE, 1, ctypes.byref(dimid),
                                   ctypes.byref(varid)))  # fmt: skip
        _checked(lib.ncmpi_enddef(ncid))
    else:
        _checked(lib.ncmpi_open(raw_comm, path.encode(), NC_NOWRITE, raw_info,
                                ctypes.byref(ncid)))  # fmt: skip
        _checked(lib.ncmpi_inq_varid(ncid, VARIABLE.encode(), ctypes.byref(varid)))
    if not collective:
        _checked(lib.ncmpi_begin_indep_data(ncid))
    begin = _offset()
    _checked(lib.ncmpi_inq_varoffset(ncid, varid, ctypes.byref(begin)))
    return PnetcdfFile(lib, ncid.value, varid.value, collective, path, begin.value)


class PnetcdfFile:
    def __init__(
        self, lib: ctypes.CDLL, ncid: int, varid: int, collective: bool, path: str, begin: int
    ) -> None:
        self._lib, self._ncid, self._varid = lib, ncid, varid
        self._collective = collective
        self._path = path
        #: File offset of the variable's first byte, and the end of this rank's writes in it.
        self._begin, self._written_end = begin, 0
        self._put = lib.ncmpi_put_vara_uchar_all if collective else lib.ncmpi_put_vara_uchar
        self._get = lib.ncmpi_get_vara_uchar_all if collective else lib.ncmpi_get_vara_uchar
        self._start, self._count = _offset(), _offset()

    def _call(self, function: Any, offset: int, buffer: np.ndarray) -> None:
        self._start.value, self._count.value = offset, len(buffer)
        _checked(function(self._ncid, self._varid, ctypes.byref(self._start),
                          ctypes.byref(self._count), buffer.ctypes.data))  # fmt: skip

    def write(self, offset: int, data: np.ndarray) -> None:
        self._call(self._put, offset, data)
        self._written_end = max(self._written_end, offset + len(data))

    def read(self, offset: int, out: np.ndarray) -> np.ndarray:
        self._call(self._get, offset, out)
        return out

    def row(
        self, through: _engine.RowThrough, length: int, offset: int, stride: int, count: int
    ) -> _engine.LibraryRow | None:
        """`count` reads into a buffer or writes from a payload (`through`) of `length` bytes,
        from `offset` every `stride`, made by the engine (library_walk._Calls.row)."""
        writing = isinstance(through, tuple)
        call = ctypes.cast(self._put if writing else self._get, ctypes.c_void_p).value
        if not call:
            return None
        made = _engine.pnetcdf_row(call, (self._ncid, self._varid), through, offset, stride, count)
        if writing and len(made[0]):
            self._written_end = max(
                self._written_end, offset + (len(made[0]) - 1) * stride + length
            )
        return made

    def row_error(
        self, code: int, detail: int, words: str | None, offset: int, length: int, writing: bool
    ) -> str:
        """A failed call of a row, in words, without making it again."""
        return _said(code)

    def sync(self) -> None:
        _checked(self._lib.ncmpi_sync(self._ncid))

    def close(self) -> None:
        if not self._collective:
            _checked(self._lib.ncmpi_end_indep_data(self._ncid))
        _checked(self._lib.ncmpi_close(self._ncid))
        if self._written_end:
            wanted = self._begin + self._written_end
            try:
                found = os.stat(self._path).st_size
            except OSError as e:
                raise Error(f"after close: {e.strerror}") from None
            if found < wanted:
                raise Error(short_file(self._path, wanted, found))

    def hints_in_effect(self, hints: tuple[str, ...]) -> str | None:
        return None  # recorded as asked
