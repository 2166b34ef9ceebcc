"""The volume through each library, on one rank, every call timed by the Recorder (IOR's
timing: create or open and close are inside the phase). Data is generated before each call,
outside it, as the engine makes payloads outside its calls.

zarr: rank 0 creates the array, every rank then writes its own chunks. HDF5: parallel h5py
(the mpio driver on the job's communicator), independent or collective. SEG-Y: rank 0 creates
the file with its textual and binary headers and sets its length; every rank then writes its
traces, each a 240-byte header and its samples, as the format lays them out."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

from hpcio import kinds
from hpcio.workloads.contract import Context
from hpcio.workloads.native import _engine
from hpcio.workloads.seismic import stores, velocity
from hpcio.workloads.seismic.layout import Box, Layout

#: The dataset in an HDF5 file, and a SEG-Y trace's header and its sample interval (us).
DATASET = "velocity"
TRACE_HEADER_BYTES = 240
TEXT_AND_BINARY_HEADER_BYTES = 3600
SAMPLE_INTERVAL_US = 4000


def timed(
    context: Context, op: str, nbytes: int, call: Callable[..., Any], *args: Any,
    file: str | None = None,
) -> Any:  # fmt: skip
    """call(*args), timed as one `op` of `nbytes` on `file` (a key under the target: the
    trace names it; where in it the library put the bytes is the library's own)."""
    t = _engine.clock_ns()
    result = call(*args)
    context.recorder.record(op, t, _engine.clock_ns(), nbytes, file=file)
    return result


#: The data of a piece: made before the phase (`made_before`), or while laying out.
Source = Callable[[Box], np.ndarray]


def generated(run: Any, layout: Layout) -> Source:
    """Pieces made as they are asked for (untimed lay-outs)."""
    return lambda box: velocity.block(run.params.data, run.seed, layout.shape, *box)


def made_before(run: Any, layout: Layout, rank: int) -> Source:
    """Every piece of `rank` made now, before the phase's barrier: the phase then times the
    library and the storage, not the model (the engine makes its payloads outside its calls
    alike). It holds the rank's whole slab."""
    make = generated(run, layout)
    made = {box: make(box) for box in layout.pieces(rank)}
    return made.__getitem__


def _box_bytes(box: Box) -> int:
    (x0, y0, z0), (x1, y1, z1) = box
    return (x1 - x0) * (y1 - y0) * (z1 - z0) * velocity.SAMPLE_BYTES


def _check(context: Context, key: str, box: Box, expected: np.ndarray, found: Any) -> None:
    differs = velocity.first_difference(expected, np.asarray(found))
    if differs is None:
        return
    at, want, got = differs
    where = ", ".join(f"{axis}={box[0][i] + at[i]}" for i, axis in enumerate("xyz")) if at else ""
    context.recorder.error(
        f"verify failed: {key} at {where or 'shape ' + str(np.shape(found))}: "
        f"expected {want:g}, found {got:g}"
    )


class _Figures:
    """One rank's figures for the phase's metrics."""

    def __init__(self, context: Context) -> None:
        self.metrics = context.metrics
        self.metrics.setdefault("raw_bytes", 0)

    def add(self, name: str, value: float) -> None:
        self.metrics[name] = self.metrics.get(name, 0) + value


# --- zarr -------------------------------------------------------------------------------------


def zarr_write(
    context: Context, layout: Layout, root: str, compression: str, source: Source
) -> None:
    import zarr

    run, comm = context.run, context.communicator()
    figures = _Figures(context)
    t = _engine.clock_ns()
    store = stores.zarr_store(run.target, root)
    if context.who.rank == 0:
        zarr.create_array(
            store, shape=layout.shape, chunks=layout.chunk, dtype="float32",
            compressors=compressors(compression), fill_value=0.0, overwrite=True,
            config={"write_empty_chunks": True},
        )  # fmt: skip
    comm.Barrier()
    array = zarr.open_array(store, mode="r+")
    context.recorder.record("open", t, _engine.clock_ns(), file=root)
    pieces = layout.pieces(context.who.rank)
    for box in pieces:
        data = source(box)
        (x0, y0, z0), (x1, y1, z1) = box
        timed(context, "write", data.nbytes, array.__setitem__, np.s_[x0:x1, y0:y1, z0:z1],
              data, file=_chunk_name(root, layout, box))  # fmt: skip
        figures.add("raw_bytes", data.nbytes)
    if run.fsync and not run.target.is_object_store:
        for box in pieces:
            chunk = _chunk_name(root, layout, box)
            timed(context, "sync", 0, _fsync, os.path.join(run.target.path, chunk), file=chunk)
    timed(context, "close", 0, store.close, file=root)
    figures.add("chunks", len(pieces))
    figures.add("stored_bytes", store.put_bytes)
    count_requests(context.metrics, store)


def zarr_read(context: Context, layout: Layout, root: str, source: Source) -> None:
    import zarr

    run = context.run
    figures = _Figures(context)
    t = _engine.clock_ns()
    store = stores.zarr_store(run.target, root, read_only=True)
    array = zarr.open_array(store, mode="r")
    context.recorder.record("open", t, _engine.clock_ns(), file=root)
    pieces = layout.pieces(context.who.rank)
    asked = 0
    for box in pieces:
        (x0, y0, z0), (x1, y1, z1) = box
        try:
            selection = np.s_[x0:x1, y0:y1, z0:z1]
            found = timed(context, "read", _box_bytes(box), array.__getitem__, selection,
                          file=_chunk_name(root, layout, box))  # fmt: skip
        except (ValueError, RuntimeError, TypeError) as e:
            # A chunk the codec cannot decode (a changed byte in compressed data) is bad data.
            context.recorder.error(f"{root} chunk at x={x0}, y={y0}, z={z0}: cannot decode: {e}")
            continue
        asked += _box_bytes(box)
        if run.verify:
            _check(context, root, box, source(box), found)
    timed(context, "close", 0, store.close, file=root)
    figures.add("raw_bytes", asked)
    figures.add("chunks", len(pieces))
    figures.add("fetched_bytes", store.fetched_bytes)
    count_requests(context.metrics, store)


def compressors(compression: str) -> Any:
    if compression == "none":
        return None
    from zarr.codecs import BloscCodec

    return BloscCodec(cname="zstd", clevel=5, shuffle="shuffle")


def count_requests(metrics: dict[str, Any], store: stores.CountedStore) -> None:
    """On an object store, the store's requests by kind (metrics requests_<kind>): the
    phase's own requests count zarr's calls, which become several requests each."""
    if kinds.of(store.kind).store_class is not None:
        for kind, count in store.requests.items():
            metrics[f"requests_{kind}"] = metrics.get(f"requests_{kind}", 0) + count


def chunk_key(layout: Layout, box: Box) -> str:
    """A chunk's key under the array's root (zarr v3's default encoding: c/i/j/k)."""
    return "c/" + "/".join(str(s // c) for s, c in zip(box[0], layout.chunk, strict=True))


def _chunk_name(root: str, layout: Layout, box: Box) -> str:
    """The chunk's key under the target (the trace's file name for it)."""
    return f"{root}/{chunk_key(layout, box)}"


def _fsync(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# --- HDF5 -------------------------------------------------------------------------------------


def hdf5_write(context: Context, layout: Layout, key: str, source: Source) -> None:
    import h5py

    run, comm = context.run, context.communicator()
    figures = _Figures(context)
    t = _engine.clock_ns()
    f = h5py.File(context.path(key), "w", driver="mpio", comm=comm)
    dataset = f.create_dataset(DATASET, shape=layout.shape, dtype="float32")
    context.recorder.record("open", t, _engine.clock_ns(), file=key)
    try:
        for box in _padded(layout, context.who.rank):
            data = None if box is None else source(box)
            nbytes = 0 if data is None else data.nbytes
            timed(context, "write", nbytes, _hdf5_io, dataset, box, data, run.params.collective,
                  file=key)  # fmt: skip
            figures.add("raw_bytes", nbytes)
        if run.fsync:
            timed(context, "sync", 0, f.flush, file=key)
    finally:
        timed(context, "close", 0, f.close, file=key)
    if context.who.rank == 0:
        figures.add("files", 1)
        figures.add("stored_bytes", os.path.getsize(context.path(key)))


def hdf5_read(context: Context, layout: Layout, key: str, source: Source) -> None:
    import h5py

    run, comm = context.run, context.communicator()
    figures = _Figures(context)
    t = _engine.clock_ns()
    f = h5py.File(context.path(key), "r", driver="mpio", comm=comm)
    dataset = f[DATASET]
    context.recorder.record("open", t, _engine.clock_ns(), file=key)
    try:
        for box in _padded(layout, context.who.rank):
            nbytes = 0 if box is None else _box_bytes(box)
            found = timed(context, "read", nbytes, _hdf5_io, dataset, box, None,
                          run.params.collective, file=key)  # fmt: skip
            figures.add("raw_bytes", nbytes)
            if run.verify and box is not None:
                _check(context, key, box, source(box), found)
    finally:
        timed(context, "close", 0, f.close, file=key)
    if context.who.rank == 0:
        figures.add("files", 1)


def _padded(layout: Layout, rank: int) -> list[Box | None]:
    """The rank's pieces, then None up to the most any rank has: in collective mode every
    rank must make every call, those with less to do with an empty selection."""
    mine: list[Box | None] = list(layout.pieces(rank))
    return mine + [None] * (layout.most_pieces() - len(mine))


def _hdf5_io(dataset: Any, box: Box | None, data: np.ndarray | None, collective: bool) -> Any:
    import contextlib

    import h5py

    with dataset.collective if collective else contextlib.nullcontext():
        if box is None:
            # An empty selection on both sides: the call still takes part in the collective.
            file_space = dataset.id.get_space()
            file_space.select_none()
            memory_space = h5py.h5s.create_simple((1,))
            memory_space.select_none()
            buffer = np.empty(1, np.float32)
            if data is None and dataset.file.mode == "r":
                dataset.id.read(memory_space, file_space, buffer, dxpl=dataset._dxpl)
            else:
                dataset.id.write(memory_space, file_space, buffer, dxpl=dataset._dxpl)
            return None
        (x0, y0, z0), (x1, y1, z1) = box
        if data is None:
            return dataset[x0:x1, y0:y1, z0:z1]
        dataset[x0:x1, y0:y1, z0:z1] = data
        return None


# --- SEG-Y ------------------------------------------------------------------------------------


def segy_file_bytes(shape: tuple[int, int, int]) -> int:
    nx, ny, nz = shape
    trace = TRACE_HEADER_BYTES + nz * velocity.SAMPLE_BYTES
    return TEXT_AND_BINARY_HEADER_BYTES + nx * ny * trace


def segy_write(context: Context, layout: Layout, key: str, source: Source) -> None:
    import segyio

    run, comm = context.run, context.communicator()
    figures = _Figures(context)
    path = context.path(key)
    nx, ny, nz = layout.shape
    t = _engine.clock_ns()
    if context.who.rank == 0:
        spec = segyio.spec()
        spec.iline, spec.xline = segyio.TraceField.INLINE_3D, segyio.TraceField.CROSSLINE_3D
        spec.samples = list(range(nz))
        spec.ilines, spec.xlines = list(range(1, nx + 1)), list(range(1, ny + 1))
        spec.format, spec.sorting = 5, segyio.TraceSortingFormat.INLINE_SORTING  # IEEE float
        with segyio.create(path, spec) as created:
            created.text[0] = segyio.tools.create_text_header(
                {1: "hpcio synthetic velocity model", 2: f"inlines {nx} crosslines {ny} "
                 f"samples {nz}", 3: f"data {run.params.data} seed {run.seed}"}
            )  # fmt: skip
            created.bin.update(hdt=SAMPLE_INTERVAL_US, hns=nz)
        # The other ranks open the file for update: it must already hold every trace.
        os.truncate(path, segy_file_bytes(layout.shape))
    comm.Barrier()
    f = segyio.open(path, "r+", ignore_geometry=True)
    context.recorder.record("open", t, _engine.clock_ns(), file=key)
    try:
        for box in layout.pieces(context.who.rank):
            data = source(box)
            (x0, _, _), (x1, _, _) = box
            traces = data.reshape(-1, nz)
            headers = [_trace_header(segyio, x, y, ny, nz) for x in range(x0, x1)
                       for y in range(ny)]  # fmt: skip
            # Bytes of samples, as for every library (the headers are the format's, as HDF5's
            # metadata is): bandwidths of one volume compare across libraries.
            timed(context, "write", data.nbytes, _write_traces, f, x0 * ny, headers, traces,
                  file=key)  # fmt: skip
            figures.add("raw_bytes", data.nbytes)
        if run.fsync:
            timed(context, "sync", 0, _flush_and_fsync, f, path, file=key)
    finally:
        timed(context, "close", 0, f.close, file=key)
    comm.Barrier()  # every rank's traces are in before the size is taken
    if context.who.rank == 0:
        figures.add("files", 1)
        figures.add("stored_bytes", os.path.getsize(path))


def _trace_header(segyio: Any, x: int, y: int, ny: int, nz: int) -> dict[Any, int]:
    field = segyio.TraceField
    return {
        field.TRACE_SEQUENCE_FILE: x * ny + y + 1,
        field.INLINE_3D: x + 1,
        field.CROSSLINE_3D: y + 1,
        field.CDP_X: x * 25,
        field.CDP_Y: y * 25,
        field.TRACE_SAMPLE_COUNT: nz,
        field.TRACE_SAMPLE_INTERVAL: SAMPLE_INTERVAL_US,
    }


def _write_traces(f: Any, first: int, headers: list[dict[Any, int]], traces: np.ndarray) -> None:
    for offset, header in enumerate(headers):
        f.header[first + offset] = header
        f.trace[first + offset] = traces[offset]


def segy_read(context: Context, layout: Layout, key: str, source: Source) -> None:
    import segyio

    run = context.run
    figures = _Figures(context)
    _, ny, nz = layout.shape
    t = _engine.clock_ns()
    f = segyio.open(context.path(key), "r", ignore_geometry=True)
    context.recorder.record("open", t, _engine.clock_ns(), file=key)
    try:
        for box in layout.pieces(context.who.rank):
            (x0, _, _), (x1, _, _) = box
            first, last = x0 * ny, x1 * ny
            nbytes = (last - first) * nz * velocity.SAMPLE_BYTES
            traces = timed(context, "read", nbytes, f.trace.raw.__getitem__, slice(first, last),
                           file=key)  # fmt: skip
            figures.add("raw_bytes", (last - first) * nz * velocity.SAMPLE_BYTES)
            if run.verify:
                found = np.asarray(traces).reshape(x1 - x0, ny, nz)
                _check(context, key, box, source(box), found)
                _check_headers(context, f, segyio, key, x0, x1, ny)
    finally:
        timed(context, "close", 0, f.close, file=key)
    if context.who.rank == 0:
        figures.add("files", 1)


def _flush_and_fsync(f: Any, path: str) -> None:
    f.flush()
    _fsync(path)


def _check_headers(context: Context, f: Any, segyio: Any, key: str, x0: int, x1: int, ny: int):
    first, last = x0 * ny, x1 * ny
    inlines = f.attributes(segyio.TraceField.INLINE_3D)[first:last]
    crosslines = f.attributes(segyio.TraceField.CROSSLINE_3D)[first:last]
    index = np.arange(first, last)
    wrong = (inlines != index // ny + 1) | (crosslines != index % ny + 1)
    if wrong.any():
        trace = int(index[np.argmax(wrong)])
        context.recorder.error(
            f"verify failed: {key} trace {trace}: header says inline "
            f"{inlines[trace - first]} crossline {crosslines[trace - first]}, expected "
            f"{trace // ny + 1} {trace % ny + 1}"
        )
