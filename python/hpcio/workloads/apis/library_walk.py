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
import itertools
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


def body(plan: Plan, layout: Layout, seed: int) -> PythonBody:
    """The phase's body (writes carry `seed`'s payload); made before the phase's barrier, so
    what it loads is not timed."""
    _load_mpi_io()
    return PythonBody(_Walk(plan, layout, seed))


class _Walk:
    """The walk of one phase, with what it needs made before the phase's barrier: in a rank,
    the library loaded (if the spec's checks have not loaded it already), the read buffer
    allocated and touched, and the write buffer holding the first write's payload. Between
    the barrier and the first open there is then only the walk itself: a rank that does more
    there under a busy node reaches the collective open later, and the other rank's open
    waits for it."""

    def __init__(self, plan: Plan, layout: Layout, seed: int) -> None:
        self.plan, self.layout, self.seed = plan, layout, seed
        self.extents = None if layout.shared else _extents(plan)
        self.largest = max(plan.largest_transfer, 1)
        self.writes = bool(np.any(plan.ops == int(Op.WRITE)))
        self.reads = bool(np.any(plan.ops == int(Op.READ)))
        self._buffer: np.ndarray | None = None
        self._payload: _engine.PayloadBuffer | None = None
        if _in_a_rank():
            # The launcher makes bodies too (to count transfers): it loads and allocates nothing.
            library = apis.library(layout.api)
            library.available()
            # The engine makes rows of reads and writes: find the library's functions now, the
            # first lookup reads the process's map of loaded files (milliseconds).
            if hasattr(library, "find_row_functions"):
                library.find_row_functions()
            self.buffer()
            self.payload()

    def buffer(self) -> np.ndarray:
        """Reads' buffer, which the libraries overwrite (empty in a walk that only writes)."""
        if self._buffer is None:
            self._buffer = _touched(self.largest if self.reads else 0)
        return self._buffer

    def payload(self) -> _engine.PayloadBuffer | None:
        """Writes' buffer (None in a walk that only reads), made holding the first write's
        payload: its first filling, 1.6 ms for 1 MiB on a busy node, faults its pages in and
        writes every byte, where the writes after it rewrite only their stamps."""
        if self._payload is None and self.writes:
            self._payload = _engine.PayloadBuffer(self.seed, self.largest)
            first = int(np.flatnonzero(self.plan.ops == int(Op.WRITE))[0])
            plan = self.plan
            self._payload.fill(int(plan.writers[first]), plan.keys[int(plan.key_index[first])],
                               int(plan.offsets[first]), int(plan.lengths[first]))  # fmt: skip
        return self._payload

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


#: A plan's row: (op, key index, offset, length, count, stride, writer); `count` transfers
#: `stride` bytes apart.
Row = tuple[int, int, int, int, int, int, int]
#: One operation: (op, key index, offset, length, writer).
Step = tuple[int, int, int, int, int]


def rows(plan: Plan) -> Iterator[Row]:
    """The plan's rows in the order a library makes them. An ordered plan's own rows (memory
    stays that of its rows; with several files the library visits one after the other rather
    than the engine's round robin); a shuffled one takes the engine's order, one row per
    transfer, made into Python numbers a slice at a time."""
    if plan.shuffle is None:
        yield from zip(
            plan.ops.tolist(), plan.key_index.tolist(), plan.offsets.tolist(),
            plan.lengths.tolist(), plan.counts.tolist(), plan.strides.tolist(),
            plan.writers.tolist(), strict=True,
        )  # fmt: skip
        return
    expanded = plan.per_transfer()
    for start in range(0, len(expanded), _SLICE):
        part = expanded.rows(start, start + _SLICE)
        for op, index, offset, length, writer in zip(
            part.ops.tolist(), part.key_index.tolist(), part.offsets.tolist(),
            part.lengths.tolist(), part.writers.tolist(), strict=True,
        ):  # fmt: skip
            yield op, index, offset, length, 1, 0, writer


def _steps(row: Row, first: int = 0) -> Iterator[Step]:
    """The row's operations from its `first` transfer on."""
    op, index, offset, length, count, stride, writer = row
    for n in range(first, count):
        yield op, index, offset + n * stride, length, writer


def operations(plan: Plan) -> Iterator[Step]:
    """(op, key index, offset, length, writer) of every operation, in order."""
    for row in rows(plan):
        yield from _steps(row)


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
    comm = context.communicator() if layout.shared else MPI.COMM_SELF
    # Without hints the libraries get MPI_INFO_NULL, as IOR gives them: an empty info object
    # is still copied and parsed by every open.
    info = mpi_info(layout.hints) if layout.hints else MPI.INFO_NULL
    calls = _Calls(walk, context, comm, info)
    error = calls.library.Error  # a class, or a tuple of them (h5py's)
    failures = (*(error if isinstance(error, tuple) else (error,)), RowCallError)
    # An untraced row of reads or writes is made in a loop of its own (_Calls.row): a traced
    # one keeps each call's file and offset, which only a call at a time records.
    in_rows = not context.run.trace
    plan_rows = rows(plan)
    pending: Iterator[Step] = iter(())
    row: Row | None = None
    try:
        for row in plan_rows:
            if in_rows and row[0] in (Op.READ, Op.WRITE) and row[4] > 1:
                try:
                    calls.row(row)
                finally:
                    pending = _steps(row, calls.row_done + 1)  # those after a failed call
                continue
            pending = _steps(row)
            for step in pending:
                calls.step(step)
    except failures as e:
        assert row is not None  # a row's call failed
        if layout.shared and layout.collective:
            remaining = itertools.chain(pending, (s for r in plan_rows for s in _steps(r)))
            _keep_step(calls, remaining)
        _abandon(calls)
        raise OSError(f"{layout.api} {Op(row[0]).name.lower()} {plan.keys[row[1]]}: {e}") from None
    if layout.hints:
        info.Free()


class RowCallError(Exception):
    """A call of a row the engine made failed: the library's words for it (a module's Error
    may be a tuple of the exceptions its Python binding raises, as h5py's are)."""


class _Calls:
    """A phase's library calls, each timed and recorded, and the files they have open."""

    def __init__(self, walk: _Walk, context: Context, comm: Any, info: Any) -> None:
        self.walk, self.context, self.comm, self.info = walk, context, comm, info
        self.library = apis.library(walk.layout.api)
        self.files: dict[int, Any] = {}
        #: Shared files open for writing whose closes the ranks agree on (`abandoned`).
        self.agreeing: set[int] = set()
        #: Calls of the last row `row` made that succeeded.
        self.row_done = 0
        # Writes go from a buffer the engine re-stamps (bytes that are already the payload
        # stay), reads into a buffer of their own.
        self.payload = walk.payload()

    def step(self, step: Step) -> None:
        op, index, offset, length, writer = step
        walk, context, files = self.walk, self.context, self.files
        layout, recorder = walk.layout, context.recorder
        key = walk.plan.keys[index]
        clock = _engine.clock_ns
        start = clock()
        if op in (Op.OPEN_WRITE, Op.OPEN_READ):
            size = layout.shared_bytes if walk.extents is None else int(walk.extents[index])
            files[index] = self.library.open_file(
                context.path(key), self.comm, self.info, create=op == Op.OPEN_WRITE,
                size=size, chunk=layout.chunk_bytes, collective=layout.collective,
            )  # fmt: skip
            recorder.record("open", start, clock(), file=key)
            if op == Op.OPEN_WRITE and layout.shared and hasattr(files[index], "abandon"):
                self.agreeing.add(index)
            if layout.hints and "mpiio_hints_in_effect" not in context.metrics:
                held = files[index].hints_in_effect(layout.hints)
                if held is not None:
                    context.metrics["mpiio_hints_in_effect"] = held
        elif op == Op.WRITE:
            payload = self.payload
            assert payload is not None  # the plan writes
            payload.fill(writer, key, offset, length)
            start = clock()  # the payload is made outside the call, as the engine does
            files[index].write(offset, payload.view[:length])
            recorder.record("write", start, clock(), length, file=key, offset=offset)
        elif op == Op.READ:
            data = files[index].read(offset, walk.buffer()[:length])
            recorder.record("read", start, clock(), length, file=key, offset=offset)
            if context.run.verify:
                check(context, key, data, writer, offset)
        elif op == Op.SYNC:
            files[index].sync()
            recorder.record("sync", start, clock(), file=key)
        elif op == Op.CLOSE:
            if self.abandoned(index, failed=False):
                # Another rank's call failed: the phase fails there.
                self.abandon(index)
                return
            files.pop(index).close()
            recorder.record("close", start, clock(), file=key)

    def abandoned(self, index: int, failed: bool) -> bool:
        """Whether shared file `index` is to be abandoned, not closed: asked of every rank
        together before a shared written file's close (one allreduce; a rank's own files and
        files only read need none), True if a call on it failed on any rank. On a full disk a
        rank whose own calls succeeded fails in the close as the others do, half-way, and the
        next call on that file kills the rank (apis/detach.py)."""
        if index not in self.agreeing:
            return failed
        from mpi4py import MPI

        self.agreeing.discard(index)
        return bool(self.comm.allreduce(int(failed), op=MPI.MAX))

    def abandon(self, index: int) -> None:
        """Close file `index` after an error, ignoring the library's: left open, the library
        closes it when Python exits, after MPI has finalized (h5py's tracebacks and an MPI
        abort). A library that can abandons it (detaches a written file from its storage)."""
        opened = self.files.pop(index)
        with contextlib.suppress(self.library.Error):
            getattr(opened, "abandon", opened.close)()

    def row(self, row: Row) -> None:
        """A row's reads or writes, one after the other, with nothing between two calls but
        the clock (and a write's payload stamps), recorded together when the row ends or
        fails; `row_done` counts the calls that succeeded. Where the file's library can, the
        engine makes the calls (`row` of apis/*.py; not the reads of --verify, each checked in
        Python): a Python loop between two calls, however short, costs 30-40 us a call on a
        node whose cores are contended, IOR's C loop a few (docs/benchmarks.md, issue 27)."""
        op, index, offset, length, count, stride, writer = row
        opened, writing = self.files[index], op == Op.WRITE
        self.row_done = 0
        native = getattr(opened, "row", None)
        if writing:
            assert self.payload is not None  # the plan writes
            through: _engine.RowThrough = (self.payload, writer, self.walk.plan.keys[index],
                                           length)  # fmt: skip
        else:
            through = self.walk.buffer()[:length]
        made = None
        if native is not None and (writing or not self.context.run.verify):
            made = self.context.interruptible(
                lambda: native(through, length, offset, stride, count)
            )
        if made is not None:
            starts, ends, failed = made
            self._record_many(op, starts, ends, length)
            self.row_done = len(starts)
            if failed is not None:
                at = offset + len(starts) * stride
                raise RowCallError(opened.row_error(*failed, at, length, writing))
            return
        if writing:
            for step in _steps(row):
                self.step(step)
                self.row_done += 1
            return
        assert isinstance(through, np.ndarray)
        self._read_row_here(row, opened, through)

    def _read_row_here(self, row: Row, opened: Any, view: np.ndarray) -> None:
        _, index, offset, length, count, stride, writer = row
        key, context = self.walk.plan.keys[index], self.context
        read, clock, verify = opened.read, _engine.clock_ns, context.run.verify
        times: list[int] = []
        try:
            for n in range(count):
                at = offset + n * stride
                start = clock()
                data = read(at, view)
                times += (start, clock())
                if verify:
                    check(context, key, data, writer, at)
        finally:
            self.row_done = done = len(times) // 2
            if done:
                columns = np.array(times, np.uint64).reshape(done, 2)
                self._record_many(Op.READ, columns[:, 0], columns[:, 1], length)

    def _record_many(self, op: int, starts: np.ndarray, ends: np.ndarray, length: int) -> None:
        if len(starts):
            self.context.recorder.record_many(
                np.full(len(starts), int(op), np.uint8), np.ascontiguousarray(starts),
                np.ascontiguousarray(ends), np.full(len(starts), length, np.uint64),
            )  # fmt: skip


def _keep_step(calls: _Calls, steps: Iterator[Step]) -> None:
    """After an error on a shared file in collective mode, make the rest of the plan's calls
    with nothing to move, their errors ignored: a library's collective error can be this
    rank's alone (HDF5's is), and the other ranks wait for this one in the next collective
    call. Its files are abandoned, not closed."""
    files, library, plan, layout = calls.files, calls.library, calls.walk.plan, calls.walk.layout
    empty = np.empty(0, np.uint8)
    for op, index, offset, _, _ in steps:
        try:
            if op in (Op.OPEN_WRITE, Op.OPEN_READ):
                files[index] = library.open_file(
                    calls.context.path(plan.keys[index]), calls.comm, calls.info,
                    create=op == Op.OPEN_WRITE, size=layout.shared_bytes,
                    chunk=layout.chunk_bytes, collective=True,
                )  # fmt: skip
                if op == Op.OPEN_WRITE and hasattr(files[index], "abandon"):
                    calls.agreeing.add(index)
            elif index not in files:
                continue
            elif op == Op.WRITE:
                files[index].write(offset, empty)
            elif op == Op.READ:
                files[index].read(offset, empty)
            elif op == Op.SYNC:
                files[index].sync()
            elif op == Op.CLOSE:
                calls.abandoned(index, failed=True)
                calls.abandon(index)
        except library.Error:
            pass


def _abandon(calls: _Calls) -> None:
    """Abandon the files a rank still has open after an error (`_Calls.abandon`)."""
    for index in list(calls.files):
        calls.abandoned(index, failed=True)
        calls.abandon(index)


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
