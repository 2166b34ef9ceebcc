"""The four NetCDF programs of reference/002 (Exercise 1) as workloads: one float32 variable
`field(y, x)` of a NetCDF-4 file, decomposed across ranks along y, each rank a slab of
--size-per-rank bytes (rank r holds rows r*R .. (r+1)*R-1, as the Fortran codes held theirs).

- collect_and_write: every rank sends its slab to rank 0 in messages of --gather-chunk; rank 0
  alone opens the file (serial netCDF4) and writes each piece as it arrives.
- allwrite: every rank writes its slab into the shared file (netCDF4 in parallel mode, on
  MPI-IO; --collective or independent).
- read_distribute: rank 0 alone reads the variable in pieces of --gather-chunk and sends each
  rank its slab.
- allread: every rank reads its slab in parallel.

Each rank's slab is made from the engine's payload (its bytes keyed by the file name and their
byte offset in the variable) before the first timed call, as the programs held their data in
memory before timing their I/O; --verify checks every byte each rank ends up with. Open, create
and close are inside the phase. The writers' read phase (--phases write,read) is their
reader's, and the readers lay out the file with their writer's write, untimed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib.util
import math
import os
from typing import TYPE_CHECKING, Any

import numpy as np

from hpcio.errors import SpecError
from hpcio.units import format_bytes
from hpcio.workloads import striping
from hpcio.workloads.apis.detach import detach
from hpcio.workloads.apis.library_walk import mpi_info
from hpcio.workloads.contract import (
    Body,
    CacheFacts,
    Context,
    MemoryNeed,
    Phase,
    PythonBody,
    RankInfo,
    Workload,
)
from hpcio.workloads.native import _engine
from hpcio.workloads.netcdf_params import ParallelParams, SpokespersonParams

if TYPE_CHECKING:
    from hpcio.spec.model import RunSpec

#: The one file all four programs write and read, so a reader reads what a --keep writer left.
KEY = "hpcio-netcdf.nc"
VARIABLE = "field"
FLOAT32_BYTES = 4
#: Floats per row of the variable (fewer where a rank's floats do not make whole rows of 1024).
MAX_COLUMNS = 1024
#: Bytes the file holds besides the variable (HDF5 superblock, netCDF header, object
#: headers): a few KiB measured; this much allowed for the free-space check.
FILE_OVERHEAD_BYTES = 1 << 20
#: Rank 0 -> a rank of read_distribute: the read failed, a message instead of data follows.
_DATA, _ABORT = 1, 2
_ERRORS = (OSError, RuntimeError, ValueError)


def columns(run: RunSpec) -> int:
    return math.gcd(run.params.size_per_rank_bytes // FLOAT32_BYTES, MAX_COLUMNS)


def rows_per_rank(run: RunSpec) -> int:
    return run.params.size_per_rank_bytes // FLOAT32_BYTES // columns(run)


def data_bytes(run: RunSpec) -> int:
    """The variable's bytes: all ranks' slabs (the exercise's global data size)."""
    return run.params.size_per_rank_bytes * run.ranks


def chunk_rows(run: RunSpec) -> int:
    """Rows per message to or from rank 0: --gather-chunk in whole rows, within one slab."""
    row = columns(run) * FLOAT32_BYTES
    return max(1, min(rows_per_rank(run), run.params.gather_chunk_bytes // row))


def shape_words(run: RunSpec) -> str:
    return f"{VARIABLE}({run.ranks * rows_per_rank(run)}, {columns(run)}) float32"


def missing_library(name: str) -> str | None:
    """Why this machine cannot run workload `name` (one line), or None. Found, not imported:
    netCDF4's import starts MPI (mpi4py), which the launching process must not do. A netCDF4
    without parallel support fails the parallel codes' open with NetCDF's own words."""
    if importlib.util.find_spec("netCDF4") is None:
        return f"{name} needs netCDF4 (scripts/setup builds it with parallel support)"
    return None


class NetcdfCode(Workload):
    """What the four programs share: the variable, its file, the checks and the words."""

    family = "netcdf"
    sized_globally = True  # reference/002's figure 1
    #: Rank 0 alone does the file's I/O (collect_and_write, read_distribute).
    spokesperson = False
    lower = {"buffers": "--size-per-rank", "data": "--size-per-rank",  # noqa: RUF012
             "disk": "--size-per-rank or -n"}  # fmt: skip

    def validate(self, run: RunSpec) -> None:
        super().validate(run)
        size = run.params.size_per_rank_bytes
        if size < FLOAT32_BYTES or size % FLOAT32_BYTES:
            raise SpecError(
                f"--size-per-rank {format_bytes(size)}: {self.name} writes float32, so a "
                "rank's slab must be a whole number of 4-byte values"
            )
        if run.target.is_object_store:
            raise SpecError(f"{self.name} writes a NetCDF file: give a file:// target")
        if run.direct:
            raise SpecError(f"--direct: {self.name} goes through NetCDF and HDF5's own I/O")
        if striping.asked(run) and striping.method(run, self) is None:
            partner = "allwrite" if self.own_phases == (Phase.WRITE,) else "allread"
            raise SpecError(
                f"--stripe-count/--stripe-size: {self.name}'s file is written by rank 0 through "
                "serial NetCDF, not MPI-IO, so only lfs setstripe can stripe it and there is no "
                f"lfs here; run on Lustre, or stripe {partner} (MPI-IO hints)"
            )
        missing = missing_library(self.name)
        if missing is not None:
            raise SpecError(missing)

    def body(self, run: RunSpec, phase: Phase, who: RankInfo) -> Body:
        if self.spokesperson:
            return PythonBody(_collect_and_write if phase is Phase.WRITE else _read_distribute)
        call = _allwrite if phase is Phase.WRITE else _allread
        return PythonBody(functools.partial(call, hints=striping.hints(run, self)))

    def uses_mpiio(self, run: RunSpec) -> bool:
        # Rank 0's serial file does not go through MPI-IO: only lfs can stripe it.
        return not self.spokesperson

    def keys(self, run: RunSpec) -> list[str]:
        return [KEY]

    def owns_key(self, name: str) -> bool:
        return name == KEY

    def stored_bytes(self, run: RunSpec) -> int:
        return data_bytes(run) + FILE_OVERHEAD_BYTES

    def moved_bytes(self, run: RunSpec, phase: Phase) -> int:
        return data_bytes(run)

    def memory(self, run: RunSpec, ranks_per_node: int) -> MemoryNeed:
        """Every rank holds its slab (the program's data); rank 0 of the spokesperson codes
        also one message's rows."""
        slab = run.params.size_per_rank_bytes
        need = ranks_per_node * slab
        breakdown = f"{ranks_per_node} rank(s) x a slab of {format_bytes(slab)}"
        options = self.lower["buffers"]
        if self.spokesperson:
            message = chunk_rows(run) * columns(run) * FLOAT32_BYTES
            need += message
            breakdown += f" + rank 0: 1 message of {format_bytes(message)}"
            options = "--size-per-rank (--gather-chunk for rank 0's message)"
        return MemoryNeed(need, breakdown, options)

    def cache_facts(self, run: RunSpec) -> CacheFacts:
        if self.spokesperson:
            # The file sits on rank 0's node, which reads all of it.
            return CacheFacts(
                data_set_bytes=data_bytes(run),
                whole_data_per_node=True,
                read_back_from="rank 0 reads the file and sends each rank its slab",
                reads_local_data=True,
            )
        return CacheFacts(data_set_bytes=data_bytes(run), read_back_from="the rank's own slab")

    def describe(self, run: RunSpec) -> str:
        if self.spokesperson:
            message = chunk_rows(run) * columns(run) * FLOAT32_BYTES
            how = f"through rank 0 in messages of {format_bytes(message)}"
        else:
            # The parallel codes send no messages: they have no --gather-chunk.
            how = "collective" if run.params.collective else "independent"
        size = format_bytes(run.params.size_per_rank_bytes)
        return f"{size} per rank, {shape_words(run)}, {how}"

    def disk_words(self, run: RunSpec) -> str:
        return f"{run.ranks} rank(s) x {format_bytes(run.params.size_per_rank_bytes)}"


class ReadingCode(NetcdfCode):
    own_phases = (Phase.READ,)

    def prepare(self, run: RunSpec) -> RunSpec | None:
        if run.phases is not None:
            return None  # --phases read: the file an earlier --keep run left
        return dataclasses.replace(run, fsync=True, verify=False)


class CollectAndWrite(NetcdfCode):
    name = "collect_and_write"
    params = SpokespersonParams
    summary = "reference/002: ranks send their slabs to rank 0, which writes the NetCDF file"
    own_phases = (Phase.WRITE,)
    spokesperson = True


class Allwrite(NetcdfCode):
    name = "allwrite"
    params = ParallelParams
    summary = "reference/002: every rank writes its slab of the NetCDF variable in parallel"
    own_phases = (Phase.WRITE,)


class ReadDistribute(ReadingCode):
    name = "read_distribute"
    params = SpokespersonParams
    summary = "reference/002: rank 0 reads the NetCDF variable and sends each rank its slab"
    spokesperson = True


class Allread(ReadingCode):
    name = "allread"
    params = ParallelParams
    summary = "reference/002: every rank reads its slab of the NetCDF variable in parallel"


WORKLOADS = (CollectAndWrite(), Allwrite(), ReadDistribute(), Allread())


# --- the bodies -----------------------------------------------------------------------------


def _slab_offset(run: RunSpec, rank: int) -> int:
    """Byte offset of `rank`'s slab in the variable (C order: whole rows)."""
    return rank * run.params.size_per_rank_bytes


def _made_slab(run: RunSpec, rank: int) -> np.ndarray:
    slab = np.empty((rows_per_rank(run), columns(run)), np.float32)
    _engine.payload_fill(slab.reshape(-1).view(np.uint8), run.seed, rank, KEY,
                         _slab_offset(run, rank))  # fmt: skip
    return slab


def _create(path: str, run: RunSpec, **parallel: Any) -> tuple[Any, Any]:
    import netCDF4

    handle = netCDF4.Dataset(path, "w", format="NETCDF4", **parallel)
    handle.createDimension("y", run.ranks * rows_per_rank(run))
    handle.createDimension("x", columns(run))
    variable = handle.createVariable(VARIABLE, "f4", ("y", "x"), contiguous=True, fill_value=False)
    variable.set_auto_maskandscale(False)
    return handle, variable


def _open(path: str, **parallel: Any) -> tuple[Any, Any]:
    import netCDF4

    handle = netCDF4.Dataset(path, "r", **parallel)
    variable = handle.variables[VARIABLE]
    variable.set_auto_maskandscale(False)
    return handle, variable


def _sync(context: Context, handle: Any, path: str) -> None:
    """--fsync: NetCDF's sync hands its buffers to the OS; fsync takes them to storage."""
    start = _engine.clock_ns()
    handle.sync()
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    context.recorder.record("sync", start, _engine.clock_ns(), file=KEY)


def _collect_and_write(context: Context) -> None:
    """Rank 0 receives each rank's slab in --gather-chunk messages, in rank order, and writes
    each piece; every rank holds its slab, rank 0 one message more."""
    run, rank, recorder, clock = context.run, context.who.rank, context.recorder, _engine.clock_ns
    comm = context.communicator()
    slab = _made_slab(run, rank)
    rows, step = rows_per_rank(run), chunk_rows(run)
    comm.Barrier()  # every slab made before rank 0's clock starts
    if rank != 0:
        for start in range(0, rows, step):
            comm.Send(slab[start : start + step], dest=0, tag=_DATA)
        return
    path = context.path(KEY)
    message = np.empty((step, columns(run)), np.float32)
    failure: str | None = None
    handle: Any = None
    variable: Any = None
    start = clock()
    try:
        handle, variable = _create(path, run)
        recorder.record("open", start, clock(), file=KEY)
    except _ERRORS as e:
        failure = f"create {KEY}: {e}"
    waited = 0
    for source in range(run.ranks):
        for first in range(0, rows, step):
            count = min(step, rows - first)
            piece = slab[first : first + count]
            if source != 0:
                # Every message is received even after a failure, so no sender waits forever.
                start = clock()
                comm.Recv(message[:count], source=source, tag=_DATA)
                waited += clock() - start
                piece = message[:count]
            if failure is None:
                at = source * rows + first
                start = clock()
                try:
                    variable[at : at + count, :] = piece
                    recorder.record("write", start, clock(), piece.nbytes, file=KEY)
                except _ERRORS as e:
                    failure = f"write {KEY}: {e}"
    context.metrics["gather_wait_s"] = waited / 1e9
    if handle is not None and failure is not None:
        _abandon(handle, path)
    elif handle is not None:
        try:
            if run.fsync:
                _sync(context, handle, path)
            start = clock()
            handle.close()
            recorder.record("close", start, clock(), file=KEY)
        except _ERRORS as e:
            failure = f"close {KEY}: {e}"
    if failure is not None:
        raise OSError(f"netcdf {failure}")


def _read_distribute(context: Context) -> None:
    """Rank 0 reads the variable in --gather-chunk pieces, in rank order, and sends each rank
    its rows; a failed read sends the ranks still waiting the reason instead."""
    from mpi4py import MPI

    run, rank, recorder, clock = context.run, context.who.rank, context.recorder, _engine.clock_ns
    comm = context.communicator()
    rows, step = rows_per_rank(run), chunk_rows(run)
    slab = np.empty((rows, columns(run)), np.float32)
    if rank != 0:
        status = MPI.Status()
        for first in range(0, rows, step):
            comm.Probe(source=0, tag=MPI.ANY_TAG, status=status)
            if status.Get_tag() == _ABORT:
                raise OSError(f"rank 0 could not read {KEY}: {comm.recv(source=0, tag=_ABORT)}")
            comm.Recv(slab[first : first + step], source=0, tag=_DATA)
        _verify(context, slab)
        return
    served = 1  # ranks that have all their rows (rank 0's stay here)
    try:
        start = clock()
        handle, variable = _open(context.path(KEY))
        recorder.record("open", start, clock(), file=KEY)
        try:
            for source in range(run.ranks):
                for first in range(0, rows, step):
                    at = source * rows + first
                    start = clock()
                    piece = variable[at : at + min(step, rows - first), :]
                    recorder.record("read", start, clock(), piece.nbytes, file=KEY)
                    if source == 0:
                        slab[first : first + len(piece)] = piece
                    else:
                        comm.Send(np.ascontiguousarray(piece), dest=source, tag=_DATA)
                served = max(served, source + 1)
        finally:
            start = clock()
            handle.close()
            recorder.record("close", start, clock(), file=KEY)
    except _ERRORS as e:
        for waiting in range(served, run.ranks):
            comm.send(str(e), dest=waiting, tag=_ABORT)
        raise OSError(f"netcdf read {KEY}: {e}") from None
    _verify(context, slab)


def _allwrite(context: Context, hints: tuple[str, ...]) -> None:
    from mpi4py import MPI

    run, rank, recorder, clock = context.run, context.who.rank, context.recorder, _engine.clock_ns
    comm = context.communicator()
    slab = _made_slab(run, rank)
    rows = rows_per_rank(run)
    path = context.path(KEY)
    info = mpi_info(hints)
    comm.Barrier()  # every slab made before any rank's clock starts
    try:
        start = clock()
        handle, variable = _create(path, run, parallel=True, comm=comm, info=info)
        variable.set_collective(run.params.collective)
        recorder.record("open", start, clock(), file=KEY)
    except _ERRORS as e:
        info.Free()
        raise OSError(f"netcdf create {KEY}: {e}") from None
    failure: str | None = None
    what = "write"
    try:
        start = clock()
        variable[rank * rows : (rank + 1) * rows, :] = slab
        recorder.record("write", start, clock(), slab.nbytes, file=KEY)
        if run.fsync:
            what = "sync"
            _sync(context, handle, path)
    except _ERRORS as e:
        failure = f"{what} {KEY}: {e}"
    try:
        start = clock()
        # Whether any rank failed, asked of all before the close: after another rank's error
        # on a full disk this rank's close would fail half-way too (apis/detach.py).
        if comm.allreduce(int(failure is not None), op=MPI.MAX):
            _abandon(handle, path)  # a rank that did not fail returns: the phase fails there
        else:
            handle.close()
            recorder.record("close", start, clock(), file=KEY)
    except _ERRORS as e:
        failure = f"close {KEY}: {e}"
    finally:
        info.Free()
    if failure is not None:
        raise OSError(f"netcdf {failure}")


def _abandon(handle: Any, path: str) -> None:
    """Close a file this run wrote after an error, ignoring the close's: left open, netCDF
    closes it when the handle is collected. It is detached from its storage first (see
    apis.detach.detach)."""
    detach(path)
    with contextlib.suppress(*_ERRORS):
        handle.close()


def _allread(context: Context, hints: tuple[str, ...]) -> None:
    run, rank, recorder, clock = context.run, context.who.rank, context.recorder, _engine.clock_ns
    comm = context.communicator()
    rows = rows_per_rank(run)
    info = mpi_info(hints)
    what = "open"
    try:
        start = clock()
        handle, variable = _open(context.path(KEY), parallel=True, comm=comm, info=info)
        variable.set_collective(run.params.collective)
        recorder.record("open", start, clock(), file=KEY)
        what = "read"
        start = clock()
        slab = variable[rank * rows : (rank + 1) * rows, :]
        recorder.record("read", start, clock(), slab.nbytes, file=KEY)
        what = "close"
        start = clock()
        handle.close()
        recorder.record("close", start, clock(), file=KEY)
    except _ERRORS as e:
        raise OSError(f"netcdf {what} {KEY}: {e}") from None
    finally:
        info.Free()
    _verify(context, slab)


def _verify(context: Context, slab: np.ndarray) -> None:
    """--verify: every byte of the rank's slab against the payload its writer made."""
    run, rank = context.run, context.who.rank
    if not run.verify:
        return
    data = np.ascontiguousarray(slab).reshape(-1).view(np.uint8)
    if data.size != run.params.size_per_rank_bytes:
        context.recorder.error(f"{KEY}: rank {rank} got {data.size} bytes, not its slab")
        return
    found = _engine.payload_check(data, run.seed, rank, KEY, _slab_offset(run, rank))
    if found is not None:
        at, expected, got = found
        context.recorder.error(
            f"verify failed: {KEY} variable {VARIABLE} byte {at}: expected 0x{expected:02x}, "
            f"found 0x{got:02x} (slab of rank {rank})"
        )
