"""sfsw through a library API: the collector (rank 0) alone opens the file, on MPI.COMM_SELF,
and writes every rank's data as it arrives; reading, it reads each piece and sends it to the
rank that reads it back. The collector receives (or sends) the next piece while it writes (or
reads) the current one, so it holds two pieces, never the file, as the engine's sfsw does."""

from __future__ import annotations

import contextlib
import functools
from typing import Any

import numpy as np

from hpcio.workloads import apis, double_buffer
from hpcio.workloads.apis.library_walk import Layout, check, mpi_info
from hpcio.workloads.contract import CollectBody, Context, Phase, PythonBody
from hpcio.workloads.native import _engine
from hpcio.workloads.plans import Op

_TAG = 7302


def body(collect: CollectBody, layout: Layout, phase: Phase) -> PythonBody:
    return PythonBody(functools.partial(_run, collect, layout, phase))


def _run(collect: CollectBody, layout: Layout, phase: Phase, context: Context) -> None:
    comm = context.communicator()
    if comm.rank == collect.collector:
        _collector(collect, layout, phase, context, comm)
        return
    writing = phase is Phase.WRITE
    source = comm.rank if writing else collect.reads_from[comm.rank]
    pieces = collect.pieces[source]
    largest = max((length for _, length in pieces), default=0)
    payload = _engine.PayloadBuffer(context.run.seed, largest) if writing else None
    buffer = payload.view if payload is not None else np.empty(largest, np.uint8)
    for offset, length in pieces:
        data = buffer[:length]
        if payload is not None:
            payload.fill(source, collect.key, offset, length)
            comm.Send(data, dest=collect.collector, tag=_TAG)
        else:
            comm.Recv(data, source=collect.collector, tag=_TAG)
            if context.run.verify:
                check(context, collect.key, data, source, offset)


def _collector(collect: CollectBody, layout: Layout, phase: Phase, context: Context, comm) -> None:
    from mpi4py import MPI

    library = apis.library(layout.api)
    recorder, clock = context.recorder, _engine.clock_ns
    info = mpi_info(layout.hints)
    pieces = [(writer, *piece) for writer, mine in enumerate(collect.pieces) for piece in mine]
    largest = max(length for _, _, length in pieces)
    buffers = (np.empty(largest, np.uint8), np.empty(largest, np.uint8))
    reader_of = {source: rank for rank, source in enumerate(collect.reads_from)}
    writing = phase is Phase.WRITE
    try:
        start = clock()
        opened = library.open_file(
            context.path(collect.key), MPI.COMM_SELF, info, create=writing,
            size=collect.file_bytes, chunk=layout.chunk_bytes, collective=False,
        )  # fmt: skip
        recorder.record("open", start, clock(), file=collect.key)
    except library.Error as e:
        info.Free()
        _refuse_pieces(collect, pieces, buffers, reader_of, writing, comm)
        raise OSError(f"{layout.api} {collect.key}: {e}") from None
    try:
        if writing:
            _collect_and_write(collect, pieces, buffers, opened, context, comm)
            if any(op == Op.SYNC for op in collect.plan.ops.tolist()):
                start = clock()
                opened.sync()
                recorder.record("sync", start, clock(), file=collect.key)
        else:
            _read_and_scatter(collect, pieces, buffers, reader_of, opened, context, comm)
        start = clock()
        opened.close()
        recorder.record("close", start, clock(), file=collect.key)
    except library.Error as e:
        with contextlib.suppress(library.Error):
            # Left open, the library would close it after MPI has finalized.
            getattr(opened, "abandon", opened.close)()
        raise OSError(f"{layout.api} {collect.key}: {e}") from None
    finally:
        info.Free()


def _refuse_pieces(collect, pieces, buffers, reader_of, writing: bool, comm) -> None:
    """Receive (writing) or send (reading: zeros, which a verifying reader finds wrong) every
    remote piece of `pieces` without the library, so that no rank is left blocked in a send or
    a receive (or writing into a freed buffer) once the collector has failed."""
    for writer, _, length in pieces:
        if writing and writer != collect.collector:
            comm.Recv(buffers[0][:length], source=writer, tag=_TAG)
        elif not writing and reader_of[writer] != collect.collector:
            buffers[0][:length] = 0
            comm.Send(buffers[0][:length], dest=reader_of[writer], tag=_TAG)


class _Request:
    """An mpi4py request, waited on as double_buffer waits, keeping its bytes alive."""

    def __init__(self, request: Any, data: np.ndarray) -> None:
        self._request, self._data = request, data

    def wait(self) -> None:
        self._request.Wait()


def _collect_and_write(collect, pieces, buffers, opened, context: Context, comm) -> None:
    """The collector's own pieces are made in a third buffer; double_buffer receives what a
    failed write leaves, so no rank is left blocked in its send."""
    run, recorder, clock = context.run, context.recorder, _engine.clock_ns
    own = _engine.PayloadBuffer(run.seed, len(buffers[0]))

    def write(writer: int, offset: int, length: int, data: np.ndarray | None) -> None:
        if data is None:
            own.fill(writer, collect.key, offset, length)
            data = own.view[:length]
        start = clock()
        opened.write(offset, data)
        recorder.record("write", start, clock(), length, file=collect.key, offset=offset)

    double_buffer.collect_and_write(
        pieces,
        collect.collector,
        buffers,
        lambda buffer, writer: _Request(comm.Irecv(buffer, source=writer, tag=_TAG), buffer),
        write,
    )


def _read_and_scatter(collect, pieces, buffers, reader_of, opened, context: Context, comm) -> None:
    recorder, clock = context.recorder, _engine.clock_ns

    def read(writer: int, offset: int, length: int, buffer: np.ndarray) -> np.ndarray:
        start = clock()
        # The bytes read: the buffer, or an array of the library's own (netcdf).
        data = opened.read(offset, buffer)
        recorder.record("read", start, clock(), length, file=collect.key, offset=offset)
        return data

    def keep(data: np.ndarray, writer: int, offset: int) -> None:
        if context.run.verify:
            check(context, collect.key, data, writer, offset)

    double_buffer.read_and_scatter(
        pieces,
        collect.collector,
        buffers,
        reader_of,
        read,
        lambda data, reader: _Request(comm.Isend(data, dest=reader, tag=_TAG), data),
        keep,
    )
