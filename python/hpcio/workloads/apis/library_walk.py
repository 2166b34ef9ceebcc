"""A rank's engine plan walked through a library API (--api mpiio|hdf5|netcdf|pnetcdf); not
to be confused with workloads/replay/, which replays a Darshan log.

The plan says which files to open and which transfers to make, in order; here each open,
write, read, sync and close is the library's call, timed by the Recorder (open, create and
close inside the phase, as IOR times them). A shared file is opened by every rank together on
the job's communicator, so the library can aggregate collective calls; a file of a rank's own
on MPI.COMM_SELF. Payloads are the engine's, so --verify checks every byte read as posix does.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hpcio.workloads import apis
from hpcio.workloads.contract import Context, PythonBody
from hpcio.workloads.native import _engine
from hpcio.workloads.plans import Op, Plan

#: The one variable (or dataset) of a library's file: the file's bytes, as IOR's HDF5 and
#: NCMPI backends hold them.
VARIABLE = "data"


@dataclass(frozen=True, slots=True)
class Layout:
    """How the library files of a run are made."""

    api: str
    #: All ranks open each file together (a shared file); else each rank its own.
    shared: bool
    collective: bool
    hints: tuple[str, ...] = ()
    #: Bytes of the shared file (all ranks must create it alike); a rank's own files are as
    #: long as its plan writes in them.
    shared_bytes: int = 0
    #: Chunk bytes of the variable (hdf5, netcdf); None: contiguous.
    chunk_bytes: int | None = None


def body(plan: Plan, layout: Layout) -> PythonBody:
    """The phase's body; made before the phase's barrier, so what it loads is not timed."""
    _load_mpi_io()
    return PythonBody(_Walk(plan, layout))


class _Walk:
    """The walk of one phase, with what it needs made before the phase's barrier: in a rank,
    the library loaded (if the spec's checks have not loaded it already) and the read buffer
    allocated and touched. Between the barrier and the first open there is then only the walk
    itself: a rank that does more there under a busy node reaches the collective open later,
    and the other rank's open waits for it."""

    def __init__(self, plan: Plan, layout: Layout) -> None:
        self.plan, self.layout = plan, layout
        self.extents = None if layout.shared else _extents(plan)
        self.largest = max(plan.largest_transfer, 1)
        self.writes = bool(np.any(plan.ops == int(Op.WRITE)))
        self.reads = bool(np.any(plan.ops == int(Op.READ)))
        self._buffer: np.ndarray | None = None
        if _in_a_rank():
            # The launcher makes bodies too (to count transfers): it loads and allocates nothing.
            apis.library(layout.api).available()
            self.buffer()

    def buffer(self) -> np.ndarray:
        """Reads' buffer, which the libraries overwrite (empty in a walk that only writes)."""
        if self._buffer is None:
            self._buffer = _touched(self.largest if self.reads else 0)
        return self._buffer

    def __call__(self, context: Context) -> None:
        _run(self, context)


def _touched(size: int) -> np.ndarray:
    """A buffer whose pages are in: a first touch inside the phase would fault each in."""
    buffer = np.empty(size, np.uint8)
    buffer.fill(0)
    return buffer


def _in_a_rank() -> bool:
    """MPI runs in this process (a rank; the launcher never starts it)."""
    mpi = sys.modules.get("mpi4py.MPI")
    return mpi is not None and mpi.Is_initialized() and not mpi.Is_finalized()


_mpi_io_loaded = False


def _load_mpi_io() -> None:
    """Load Open MPI's I/O layer once per rank, outside any phase: its first MPI_File_open
    loads it (13 components with Open MPI 4.1: io/ompio and romio, fcoll, fbtl, fs,
    sharedfp), which took 150-400 ms on a busy node, inside the first write phase's open.
    IOR loads it before its phases, checking the test directory with MPI_File_open. Every
    library API here goes through MPI-IO; /dev/null needs no target. Only where MPI is
    running already: the launcher also makes bodies (to count transfers), and must not
    start MPI."""
    global _mpi_io_loaded
    if _mpi_io_loaded or not _in_a_rank():
        return
    _mpi_io_loaded = True
    mpi = sys.modules["mpi4py.MPI"]
    with contextlib.suppress(mpi.Exception):  # the real open will say what is wrong
        mpi.File.Open(mpi.COMM_SELF, os.devnull, mpi.MODE_RDONLY).Close()


#: Bytes per transfer of a plan expanded into one row per transfer (Plan.per_transfer's seven
#: columns), which a shuffled plan needs to replay the engine's order.
EXPANDED_BYTES_PER_TRANSFER = 41
_SLICE = 1 << 16


def operations(plan: Plan) -> Iterator[tuple[int, int, int, int, int]]:
    """(op, key index, offset, length, writer) of every operation, in order. An ordered plan is
    expanded run by run as it goes (memory stays that of its rows; with several files the
    library visits one after the other rather than the engine's round robin); a shuffled one
    takes the engine's order, one row per transfer, made into Python numbers a slice at a
    time."""
    if plan.shuffle is None:
        for op, index, offset, length, count, stride, writer in zip(
            plan.ops.tolist(), plan.key_index.tolist(), plan.offsets.tolist(),
            plan.lengths.tolist(), plan.counts.tolist(), plan.strides.tolist(),
            plan.writers.tolist(), strict=True,
        ):  # fmt: skip
            for n in range(count):
                yield op, index, offset + n * stride, length, writer
        return
    rows = plan.per_transfer()
    for start in range(0, len(rows), _SLICE):
        part = rows.rows(start, start + _SLICE)
        yield from zip(
            part.ops.tolist(), part.key_index.tolist(), part.offsets.tolist(),
            part.lengths.tolist(), part.writers.tolist(), strict=True,
        )  # fmt: skip


def _extents(plan: Plan) -> np.ndarray:
    """Bytes of each of the plan's files: the end of the last transfer in it."""
    extents = np.zeros(len(plan.keys), np.uint64)
    moves = ((plan.ops == int(Op.WRITE)) | (plan.ops == int(Op.READ))) & (plan.counts > 0)
    last = plan.offsets + (plan.counts - np.uint64(1)) * plan.strides + plan.lengths
    np.maximum.at(extents, plan.key_index[moves], last[moves])
    return extents


def _run(walk: _Walk, context: Context) -> None:
    from mpi4py import MPI

    plan, layout = walk.plan, walk.layout
    library = apis.library(layout.api)
    comm = context.communicator() if layout.shared else MPI.COMM_SELF
    # Without hints the libraries get MPI_INFO_NULL, as IOR gives them: an empty info object
    # is still copied and parsed by every open.
    info = mpi_info(layout.hints) if layout.hints else MPI.INFO_NULL
    run, recorder = context.run, context.recorder
    extents = walk.extents
    # Writes go from a buffer the engine re-stamps (bytes that are already the payload stay),
    # reads into a buffer of their own. A phase that only reads makes no payload: its filling
    # (a millisecond per MiB on a busy node) would be timed.
    payload = _engine.PayloadBuffer(run.seed, walk.largest) if walk.writes else None
    written = payload.view if payload is not None else None
    buffer = walk.buffer()
    files: dict[int, Any] = {}
    clock = _engine.clock_ns
    steps = operations(plan)
    for op, index, offset, length, writer in steps:
        key = plan.keys[index]
        start = clock()
        try:
            if op in (Op.OPEN_WRITE, Op.OPEN_READ):
                size = layout.shared_bytes if extents is None else int(extents[index])
                files[index] = library.open_file(
                    context.path(key), comm, info, create=op == Op.OPEN_WRITE, size=size,
                    chunk=layout.chunk_bytes, collective=layout.collective,
                )  # fmt: skip
                recorder.record("open", start, clock(), file=key)
                if layout.hints and "mpiio_hints_in_effect" not in context.metrics:
                    held = files[index].hints_in_effect(layout.hints)
                    if held is not None:
                        context.metrics["mpiio_hints_in_effect"] = held
            elif op == Op.WRITE:
                assert payload is not None and written is not None  # the plan writes
                payload.fill(writer, key, offset, length)
                start = clock()  # the payload is made outside the call, as the engine does
                files[index].write(offset, written[:length])
                recorder.record("write", start, clock(), length, file=key, offset=offset)
            elif op == Op.READ:
                data = files[index].read(offset, buffer[:length])
                recorder.record("read", start, clock(), length, file=key, offset=offset)
                if run.verify:
                    check(context, key, data, writer, offset)
            elif op == Op.SYNC:
                files[index].sync()
                recorder.record("sync", start, clock(), file=key)
            elif op == Op.CLOSE:
                files.pop(index).close()
                recorder.record("close", start, clock(), file=key)
        except library.Error as e:
            if layout.shared and layout.collective:
                _keep_step(files, steps, plan, layout, context, comm, info)
            _abandon(library, files)
            raise OSError(f"{layout.api} {Op(op).name.lower()} {key}: {e}") from None
    if layout.hints:
        info.Free()


def _keep_step(
    files: dict[int, Any], steps: Iterator[tuple[int, int, int, int, int]], plan: Plan,
    layout: Layout, context: Context, comm: Any, info: Any,
) -> None:  # fmt: skip
    """After an error on a shared file in collective mode, make the rest of the plan's calls
    with nothing to move, their errors ignored: a library's collective error can be this
    rank's alone (HDF5's is), and the other ranks wait for this one in the next collective
    call."""
    library = apis.library(layout.api)
    empty = np.empty(0, np.uint8)
    for op, index, offset, _, _ in steps:
        try:
            if op in (Op.OPEN_WRITE, Op.OPEN_READ):
                files[index] = library.open_file(
                    context.path(plan.keys[index]), comm, info, create=op == Op.OPEN_WRITE,
                    size=layout.shared_bytes, chunk=layout.chunk_bytes, collective=True,
                )  # fmt: skip
            elif index not in files:
                continue
            elif op == Op.WRITE:
                files[index].write(offset, empty)
            elif op == Op.READ:
                files[index].read(offset, empty)
            elif op == Op.SYNC:
                files[index].sync()
            elif op == Op.CLOSE:
                files.pop(index).close()
        except library.Error:
            pass


def _abandon(library: Any, files: dict[int, Any]) -> None:
    """Close a rank's files after an error, ignoring theirs: left open, the library closes them
    when Python exits, after MPI has finalized (h5py's tracebacks and an MPI abort)."""
    for opened in files.values():
        with contextlib.suppress(library.Error):
            getattr(opened, "abandon", opened.close)()
    files.clear()


def mpi_info(hints: Sequence[str]) -> Any:
    """An MPI.Info holding `hints` ("key=value" each); the caller frees it."""
    from mpi4py import MPI

    info = MPI.Info.Create()
    for pair in hints:
        key, _, value = pair.partition("=")
        info.Set(key.strip(), value.strip())
    return info


def hints_in_effect(held: Any, hints: Sequence[str]) -> str:
    """The asked hints as MPI holds them once the file is open ("key=value,..."; "key=?"
    where it dropped one), so a result says what MPI-IO really used. `held`: an MPI.Info."""
    found = []
    for pair in hints:
        key = pair.partition("=")[0].strip()
        value = held.Get(key)
        found.append(f"{key}={value if value is not None else '?'}")
    return ",".join(found)


def check(context: Context, key: str, data: np.ndarray, writer: int, offset: int) -> None:
    found = _engine.payload_check(data, context.run.seed, writer, key, offset)
    if found is not None:
        at, expected, got = found
        context.recorder.error(
            f"verify failed: {key} offset {at}: expected 0x{expected:02x}, found 0x{got:02x} "
            f"(data of rank {writer})"
        )
