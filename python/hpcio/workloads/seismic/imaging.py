"""imaging: the RTM study's imaging step (reference 004). Every rank reads its slab of the
velocity volume and a shot file of its own (--shot-size), then writes its image cube
(--image-size), all through the same --library. Before each iteration, untimed, the workload
lays out what it reads itself (the volume as `volume` writes it, and the shot files), so one
command measures the step; --phases read alone reads what an earlier --keep run left.

Shot files and image cubes are traces of the volume's depth (z samples each): a SEG-Y file, an
HDF5 dataset or a zarr array per rank, written by that rank alone (no communicator)."""

from __future__ import annotations

import dataclasses
import functools
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from hpcio.errors import SpecError
from hpcio.units import format_bytes
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
from hpcio.workloads.seismic import stores, velocity
from hpcio.workloads.seismic import volume as volumes
from hpcio.workloads.seismic.libraries import compressors, count_requests, timed
from hpcio.workloads.seismic.params import ImagingParams

if TYPE_CHECKING:
    from hpcio.spec.model import RunSpec

_EXTENSIONS = {"segy": "segy", "hdf5": "h5", "zarr": "zarr"}
_KEY = re.compile(r"hpcio-(shot|image)-rank[0-9]{6,}\.(segy|h5|zarr(/[A-Za-z0-9._/-]+)?)")
#: Traces per zarr chunk of a shot or image array: about 8 MiB.
_CHUNK_BYTES = 8 << 20


@dataclass(frozen=True, slots=True, kw_only=True)
class _LayingOut(ImagingParams):
    """The same params, for the untimed write of the volume and the shot files."""


def file_key(kind: str, rank: int, library: str) -> str:
    return f"hpcio-{kind}-rank{rank:06d}.{_EXTENSIONS[library]}"


def _traces(run: RunSpec, nbytes: int) -> tuple[int, int]:
    """(traces, samples) of a per-rank file of about `nbytes` (whole traces)."""
    nz = run.params.volume[2]
    return max(1, -(-nbytes // (nz * velocity.SAMPLE_BYTES))), nz


def _content(run: RunSpec, kind: str, rank: int, shape: tuple[int, int]) -> np.ndarray:
    # Its own seed per file and rank: a file read back as another's is found.
    seed = (run.seed * 1_000_003 + 2 * rank + (kind == "image")) % (1 << 63)
    traces, nz = shape
    return velocity.slab(run.params.data, seed, (traces, 1, nz), 0, traces).reshape(shape)


class Imaging(Workload):
    name = "imaging"
    family = "library"
    params = ImagingParams
    summary = "the RTM study's imaging step: read a volume slab and a shot file, write an image"
    own_phases = (Phase.READ, Phase.WRITE)
    lower = {"buffers": "--volume, --shot-size or --image-size",  # noqa: RUF012
             "data": "--volume, --shot-size or --image-size",
             "disk": "--volume, --shot-size, --image-size or -n"}  # fmt: skip

    def validate(self, run: RunSpec) -> None:
        super().validate(run)
        volumes.check(run, self.name)
        if run.phases == ("write",):
            raise SpecError("imaging reads, then writes: use --phases read, or no --phases")

    def body(self, run: RunSpec, phase: Phase, who: RankInfo) -> Body:
        if isinstance(run.params, _LayingOut):
            return PythonBody(_lay_out)
        # What the phase writes or compares with, made now: untimed, as the engine's payloads.
        kind, nbytes = ("image", run.params.image_bytes)
        if phase is Phase.READ:
            kind, nbytes = ("shot", run.params.shot_bytes)
        data = _content(run, kind, who.rank, _traces(run, nbytes))
        if phase is Phase.WRITE:
            return PythonBody(functools.partial(_write_image, data=data))
        volume = volumes.volume_body(run, phase, who).call
        return PythonBody(functools.partial(_read, volume=volume, expected=data))

    def lay_out(self, run: RunSpec) -> RunSpec | None:
        if run.phases == ("read",):
            return None  # an earlier --keep run's data
        fields = {f.name: getattr(run.params, f.name) for f in dataclasses.fields(ImagingParams)}
        return dataclasses.replace(run, params=_LayingOut(**fields))

    def planned_transfers(self, run: RunSpec, phase: Phase, sample: int = 64) -> int | None:
        # The library makes the requests; building a body would make a rank's data too.
        return None

    def keys(self, run: RunSpec) -> list[str]:
        keys = volumes.volume_keys(run)
        for kind, nbytes in (("shot", run.params.shot_bytes), ("image", run.params.image_bytes)):
            for rank in range(run.ranks):
                keys += _file_keys(run, file_key(kind, rank, run.params.library), nbytes)
        return keys

    def owns_key(self, name: str) -> bool:
        return _KEY.fullmatch(name) is not None

    def in_flight(self, run: RunSpec) -> int:
        return 10 if run.params.library == "zarr" else 1

    def stored_bytes(self, run: RunSpec) -> int:
        p = run.params
        per_rank = sum(np.prod(_traces(run, n)) for n in (p.shot_bytes, p.image_bytes))
        return volumes.volume_bytes(run) + int(per_rank) * velocity.SAMPLE_BYTES * run.ranks

    def moved_bytes(self, run: RunSpec, phase: Phase) -> int:
        p = run.params
        if phase is Phase.WRITE:
            return int(np.prod(_traces(run, p.image_bytes))) * velocity.SAMPLE_BYTES * run.ranks
        shots = int(np.prod(_traces(run, p.shot_bytes))) * velocity.SAMPLE_BYTES * run.ranks
        return volumes.layout_of(run).raw_bytes + shots

    def memory(self, run: RunSpec, ranks_per_node: int) -> MemoryNeed:
        p = run.params
        slab = volumes.slab_memory(run, ranks_per_node, self.lower["buffers"])
        files = ranks_per_node * 2 * max(p.shot_bytes, p.image_bytes)
        return MemoryNeed(slab.bytes + files, f"{slab.breakdown}, and 2 x the larger of shot "
                          "and image per rank", self.lower["buffers"])  # fmt: skip

    def cache_facts(self, run: RunSpec) -> CacheFacts:
        # The volume and shots were laid out just before the reads, by this node.
        return CacheFacts(data_set_bytes=self.moved_bytes(run, Phase.READ),
                          read_back_from="its volume slab and its own shot file, laid out "
                          "just before", reads_local_data=True)  # fmt: skip

    def describe(self, run: RunSpec) -> str:
        p = run.params
        return (f"{volumes.Volume().describe(run)}; per rank a {format_bytes(p.shot_bytes)} "
                f"shot file read, a {format_bytes(p.image_bytes)} image written")  # fmt: skip

    def disk_words(self, run: RunSpec) -> str:
        return f"the volume and {run.ranks} rank(s) x (shot + image)"

    def reduce_metrics(self, per_rank: Sequence[dict[str, Any]]) -> dict[str, Any]:
        return volumes.with_ratios(super().reduce_metrics(per_rank))

    def label(self, settings: dict[str, Any]) -> str:
        return volumes.library_label(self.name, settings)


def _file_keys(run: RunSpec, key: str, nbytes: int) -> list[str]:
    if run.params.library != "zarr":
        return [key]
    traces, _ = _traces(run, nbytes)
    per_chunk = _chunk_traces(run, traces)
    return [f"{key}/zarr.json", *(f"{key}/c/{i}/0" for i in range(-(-traces // per_chunk)))]


def _chunk_traces(run: RunSpec, traces: int) -> int:
    return max(1, min(traces, _CHUNK_BYTES // (run.params.volume[2] * velocity.SAMPLE_BYTES)))


def _lay_out(context: Context) -> None:
    volumes.write_volume(context)
    run, rank = context.run, context.who.rank
    shape = _traces(run, run.params.shot_bytes)
    _write_file(context, file_key("shot", rank, run.params.library),
                _content(run, "shot", rank, shape))  # fmt: skip


def _read(context: Context, volume: Any, expected: np.ndarray) -> None:
    volume(context)
    run, rank = context.run, context.who.rank
    key = file_key("shot", rank, run.params.library)
    found = _read_file(context, key, expected.shape)
    if run.verify and found is not None:
        differs = velocity.first_difference(expected, found)
        if differs is not None:
            at, want, got = differs
            context.recorder.error(
                f"verify failed: {key} at trace {at[0] if at else '?'}, sample "
                f"{at[1] if at else '?'}: expected {want:g}, found {got:g}"
            )


def _write_image(context: Context, data: np.ndarray) -> None:
    key = file_key("image", context.who.rank, context.run.params.library)
    _write_file(context, key, data)


def _write_file(context: Context, key: str, data: np.ndarray) -> None:
    """`data` (traces x samples) as this rank's own file through the run's library."""
    run = context.run
    library = run.params.library
    traces, nz = data.shape
    t = _engine.clock_ns()
    if library == "zarr":
        import zarr

        with stores.store_errors():
            store = stores.zarr_store(run.target, key)
            array = zarr.create_array(
                store, shape=data.shape, chunks=(_chunk_traces(run, traces), nz),
                dtype="float32", compressors=compressors(run.params.compression),
                fill_value=0.0, overwrite=True, config={"write_empty_chunks": True},
            )  # fmt: skip
            context.recorder.record("open", t, _engine.clock_ns(), file=key)
            timed(context, "write", data.nbytes, array.__setitem__, slice(None), data, file=key)
            timed(context, "close", 0, store.close, file=key)
            context.metrics["stored_bytes"] = context.metrics.get("stored_bytes", 0) + (
                store.put_bytes
            )
            count_requests(context.metrics, store)
    elif library == "hdf5":
        import h5py

        f = h5py.File(context.path(key), "w")
        context.recorder.record("open", t, _engine.clock_ns(), file=key)
        timed(context, "write", data.nbytes, _hdf5_dataset, f, data, file=key)
        timed(context, "close", 0, f.close, file=key)
    else:
        import segyio

        spec = segyio.spec()
        spec.samples, spec.tracecount, spec.format = list(range(nz)), traces, 5
        f = segyio.create(context.path(key), spec)
        context.recorder.record("open", t, _engine.clock_ns(), file=key)
        timed(context, "write", data.nbytes, _segy_traces, f, segyio, data, file=key)
        timed(context, "close", 0, f.close, file=key)
    if library != "zarr":
        stored = context.metrics.get("stored_bytes", 0) + os.path.getsize(context.path(key))
        context.metrics["stored_bytes"] = stored
    context.metrics["raw_bytes"] = context.metrics.get("raw_bytes", 0) + data.nbytes


def _hdf5_dataset(f: Any, data: np.ndarray) -> None:
    f.create_dataset("traces", data=data)


def _segy_traces(f: Any, segyio: Any, data: np.ndarray) -> None:
    for index, trace in enumerate(data):
        f.header[index] = {segyio.TraceField.TRACE_SEQUENCE_FILE: index + 1}
        f.trace[index] = trace


def _read_file(context: Context, key: str, shape: tuple[int, int]) -> np.ndarray | None:
    run = context.run
    library = run.params.library
    nbytes = shape[0] * shape[1] * velocity.SAMPLE_BYTES
    t = _engine.clock_ns()
    if library == "zarr":
        import zarr

        with stores.store_errors():
            store = stores.zarr_store(run.target, key, read_only=True)
            array = zarr.open_array(store, mode="r")
            context.recorder.record("open", t, _engine.clock_ns(), file=key)
            try:
                found = timed(context, "read", nbytes, array.__getitem__, slice(None), file=key)
            except (ValueError, RuntimeError, TypeError) as e:
                context.recorder.error(f"{key}: cannot decode: {e}")
                found = None
            timed(context, "close", 0, store.close, file=key)
            context.metrics["fetched_bytes"] = (
                context.metrics.get("fetched_bytes", 0) + store.fetched_bytes
            )
            count_requests(context.metrics, store)
    elif library == "hdf5":
        import h5py

        f = h5py.File(context.path(key), "r")
        context.recorder.record("open", t, _engine.clock_ns(), file=key)
        found = timed(context, "read", nbytes, f["traces"].__getitem__, slice(None), file=key)
        timed(context, "close", 0, f.close, file=key)
    else:
        import segyio

        f = segyio.open(context.path(key), "r", ignore_geometry=True)
        context.recorder.record("open", t, _engine.clock_ns(), file=key)
        found = timed(context, "read", nbytes, f.trace.raw.__getitem__, slice(None), file=key)
        timed(context, "close", 0, f.close, file=key)
    context.metrics["raw_bytes"] = context.metrics.get("raw_bytes", 0) + nbytes
    return found
