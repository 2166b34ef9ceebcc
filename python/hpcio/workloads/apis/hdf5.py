"""--api hdf5: a file's byte ranges as hyperslabs of one 1-D byte dataset, through parallel
HDF5 (h5py's mpio driver), as IOR's -a HDF5: independent or collective transfers, a
contiguous dataset or a chunked one (--chunk-size). The dataset is made without fill values
(IOR's noFill), so creating it writes no zeros the run would not count."""

from __future__ import annotations

from typing import Any

import numpy as np

from hpcio.workloads.apis import loaded
from hpcio.workloads.apis.detach import detach
from hpcio.workloads.apis.library_walk import VARIABLE
from hpcio.workloads.native import _engine

Error = (OSError, RuntimeError, ValueError)
#: The buffer of a call that moves nothing: h5py wants one element behind the empty selection.
_ONE = np.zeros(1, np.uint8)


def find_row_functions() -> None:
    """Look up what rows call, before a phase (library_walk)."""
    _row_functions()


def _row_functions(writing: bool = False) -> tuple[int, int, int] | None:
    # h5py's own libhdf5 (the parallel build's name ends in _openmpi or _mpich), not _hl.
    lib = loaded.library(r"libhdf5(_openmpi|_mpich)?(-[0-9a-f]+)?\.so")
    call = "H5Dwrite" if writing else "H5Dread"
    found = loaded.addresses(lib, "H5Sselect_hyperslab", call, "H5Ewalk2")
    return (found[0], found[1], found[2]) if found else None


def available() -> str | None:
    try:
        import h5py
    except ImportError:
        return "--api hdf5 needs h5py built with parallel HDF5 (scripts/setup installs it)"
    if not h5py.get_config().mpi:
        return (
            "--api hdf5: this h5py is built without MPI (no mpio driver); scripts/setup builds "
            "it against Debian's libhdf5-openmpi-dev"
        )
    return None


def open_file(
    path: str, comm: Any, info: Any, *, create: bool, size: int, chunk: int | None,
    collective: bool,
) -> Hdf5File:  # fmt: skip
    import h5py

    handle = h5py.File(path, "w" if create else "r", driver="mpio", comm=comm, info=info)
    if create:
        dataset = handle.create_dataset(
            VARIABLE, (size,), dtype="u1", chunks=(chunk,) if chunk else None, fill_time="never"
        )
    else:
        dataset = handle[VARIABLE]
    return Hdf5File(handle, dataset, collective, path if create else None)


class Hdf5File:
    def __init__(self, handle: Any, dataset: Any, collective: bool, path: str | None) -> None:
        import h5py

        #: `path`: the file this run created (None for a file opened to read, kept or not).
        self._handle, self._path = handle, path
        self._id = dataset.id
        self._space = self._id.get_space()
        self._transfer = h5py.h5p.create(h5py.h5p.DATASET_XFER)
        mode = h5py.h5fd.MPIO_COLLECTIVE if collective else h5py.h5fd.MPIO_INDEPENDENT
        self._transfer.set_dxpl_mpio(mode)
        self._memory: dict[int, Any] = {}
        # The buffers are always bytes: without a memory type h5py builds one from the
        # array's dtype at every call (h5t.py_create), ~10 us of a 1 MiB read's ~150 us.
        self._bytes = h5py.h5t.py_create(np.dtype(np.uint8))

    def _spaces(self, offset: int, length: int) -> tuple[Any, Any]:
        import h5py

        memory = self._memory.get(length)
        if memory is None:
            # Nothing to move (a collective call made after this rank's error, so the others
            # are not left waiting): HDF5 selects none rather than an empty hyperslab.
            memory = self._memory[length] = h5py.h5s.create_simple((max(length, 1),))
            if not length:
                memory.select_none()
        if length:
            self._space.select_hyperslab((offset,), (length,))
        else:
            self._space.select_none()
        return memory, self._space

    def write(self, offset: int, data: np.ndarray) -> None:
        memory, file = self._spaces(offset, len(data))
        self._id.write(
            memory, file, data if len(data) else _ONE, mtype=self._bytes, dxpl=self._transfer
        )

    def read(self, offset: int, out: np.ndarray) -> np.ndarray:
        memory, file = self._spaces(offset, len(out))
        self._id.read(
            memory, file, out if len(out) else _ONE.copy(), mtype=self._bytes, dxpl=self._transfer
        )
        return out

    def row(
        self, through: _engine.RowThrough, length: int, offset: int, stride: int, count: int
    ) -> _engine.LibraryRow | None:
        """`count` reads into a buffer or writes from a payload (`through`) of `length` bytes,
        from `offset` every `stride`, made by the engine (library_walk._Calls.row); None where
        it cannot call this process's libhdf5. A failed call's words are HDF5's error stack,
        as h5py says it ("file write failed ... No space left on device")."""
        functions = _row_functions(writing=isinstance(through, tuple))
        if functions is None or not length:
            return None
        memory, file = self._spaces(offset, length)
        ids = (self._id.id, self._bytes.id, memory.id, file.id, self._transfer.id)
        return _engine.hdf5_row(functions, ids, through, offset, stride, count)

    def row_error(
        self, code: int, detail: int, words: str | None, offset: int, length: int, writing: bool
    ) -> str:
        """A failed call of a row, in words (HDF5's, read by the row), without making it again."""
        if words:
            return words
        call = "H5Dwrite" if writing else "H5Dread"
        return f"{call} of {length} bytes at offset {offset} failed (it returned {code})"

    def sync(self) -> None:
        self._handle.flush()

    def close(self) -> None:
        self._handle.close()

    def abandon(self) -> None:
        """Close the file after an error; the run has failed and the files it wrote go. Such a
        file is detached from its storage first (see detach.detach)."""
        if self._path is not None:
            detach(self._path)
        self.close()

    def hints_in_effect(self, hints: tuple[str, ...]) -> str | None:
        return None  # HDF5 keeps the MPI file to itself: the hints are recorded as asked
