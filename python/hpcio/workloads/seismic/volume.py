"""volume: the RTM study's volume-create step (reference 004). The ranks write one synthetic
velocity volume together through SEG-Y, HDF5 or Zarr (uncompressed or Blosc), each rank its
own slab along x, then read their slabs back (--verify compares them with the model)."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

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
    Written,
)
from hpcio.workloads.seismic import layout as layouts
from hpcio.workloads.seismic import stores
from hpcio.workloads.seismic.params import VolumeParams, shape_text
from hpcio.workloads.seismic.velocity import SAMPLE_BYTES

if TYPE_CHECKING:
    from hpcio.spec.model import RunSpec

#: The file (SEG-Y, HDF5) or the array's root (zarr) under the target.
VOLUME_KEYS = {"segy": "hpcio-volume.segy", "hdf5": "hpcio-volume.h5", "zarr": "hpcio-volume.zarr"}
_KEY = re.compile(r"hpcio-volume\.(segy|h5|zarr(/[A-Za-z0-9._/-]+)?)")


def layout_of(run: RunSpec) -> layouts.Layout:
    p = run.params
    if p.library != "zarr":
        return layouts.plane_layout(p.volume, run.ranks)
    chunk = p.chunk or layouts.default_chunk(p.volume, run.ranks)
    return layouts.Layout(p.volume, chunk, run.ranks)


def check(run: RunSpec, name: str) -> None:
    """The checks `volume` and `imaging` share.

    Raises:
        SpecError: one line naming the option.
    """
    p = run.params
    if p.compression != "none" and p.library != "zarr":
        raise SpecError(f"--compression {p.compression} is for --library zarr; {p.library} "
                        "writes uncompressed")  # fmt: skip
    if p.chunk is not None and p.library != "zarr":
        raise SpecError(f"--chunk is for --library zarr; {p.library} writes whole inlines")
    if p.collective and p.library != "hdf5":
        raise SpecError(f"--collective is for --library hdf5; {p.library} calls are independent")
    if run.target.is_object_store and p.library != "zarr":
        raise SpecError(f"--library {p.library} writes files: give a file:// target, or use "
                        "--library zarr on an object store")  # fmt: skip
    if run.target.is_object_store and run.target.traits.store_class is None:
        raise SpecError(
            f"{name} writes through a library's own store: {run.target.traits.scheme}:// has none"
        )
    if run.direct:
        raise SpecError(f"--direct: {name} writes through {p.library}, from unaligned buffers")
    if p.chunk is not None:
        bad = [f"{v} by {c}" for v, c in zip(p.volume, p.chunk, strict=True) if v % c]
        if bad:
            raise SpecError(f"--chunk {shape_text(p.chunk)} does not divide --volume "
                            f"{shape_text(p.volume)} ({', '.join(bad)})")  # fmt: skip
    missing = missing_library(p.library, run.target.is_object_store)
    if missing:
        raise SpecError(missing)
    slabs = layout_of(run).slabs
    if slabs < run.ranks:
        what = "chunk slabs along x" if p.library == "zarr" else "inlines (x)"
        raise SpecError(f"--volume {shape_text(p.volume)} has {slabs} {what} for {run.ranks} "
                        "ranks: each rank needs one at least")  # fmt: skip


def missing_library(library: str, object_store: bool) -> str | None:
    """Why `library` cannot run here (one line), or None."""
    import importlib.util

    needs = {"segy": ["segyio"], "hdf5": ["h5py"], "zarr": ["zarr", "numcodecs"]}[library]
    needs += ["obstore"] if object_store else []
    absent = [name for name in needs if importlib.util.find_spec(name) is None]
    if absent:
        return f"--library {library} needs {' and '.join(absent)} (scripts/setup installs it)"
    if library == "hdf5":
        import h5py

        if not h5py.get_config().mpi:
            return ("--library hdf5: this h5py is built without MPI (no mpio driver); "
                    "scripts/setup builds it against Debian's libhdf5-openmpi-dev")  # fmt: skip
    return None


def volume_keys(run: RunSpec) -> list[str]:
    """The volume's files or objects: a zarr array's metadata and every chunk."""
    p = run.params
    root = VOLUME_KEYS[p.library]
    if p.library != "zarr":
        return [root]
    from hpcio.workloads.seismic.libraries import chunk_key

    grid = layout_of(run)
    chunks = [chunk_key(grid, box) for r in range(grid.ranks) for box in grid.pieces(r)]
    return [f"{root}/zarr.json", *(f"{root}/{c}" for c in chunks)]


def volume_bytes(run: RunSpec) -> int:
    """Bytes the volume takes on its target at most (compression only makes it less)."""
    from hpcio.workloads.seismic.libraries import segy_file_bytes

    grid = layout_of(run)
    return segy_file_bytes(grid.shape) if run.params.library == "segy" else grid.raw_bytes


def write_volume(context: Context, source: Any = None) -> None:
    """The volume's write; `source`: its pieces (None: made as they are written)."""
    from hpcio.workloads.seismic import libraries

    run = context.run
    p, grid, root = run.params, layout_of(run), VOLUME_KEYS[run.params.library]
    source = source or libraries.generated(run, grid)
    if p.library == "zarr":
        with stores.store_errors():
            libraries.zarr_write(context, grid, root, p.compression, source)
    elif p.library == "hdf5":
        libraries.hdf5_write(context, grid, root, source)
    else:
        libraries.segy_write(context, grid, root, source)


def read_volume(context: Context, source: Any = None) -> None:
    """The volume's read; `source`: the pieces --verify compares with."""
    from hpcio.workloads.seismic import libraries

    run = context.run
    p, grid, root = run.params, layout_of(run), VOLUME_KEYS[run.params.library]
    source = source or libraries.generated(run, grid)
    if p.library == "zarr":
        with stores.store_errors():
            libraries.zarr_read(context, grid, root, source)
    elif p.library == "hdf5":
        libraries.hdf5_read(context, grid, root, source)
    else:
        libraries.segy_read(context, grid, root, source)


def volume_body(run: RunSpec, phase: Phase, who: RankInfo) -> PythonBody:
    """The phase's body, with the rank's pieces made now, untimed (a read without --verify
    needs none)."""
    from hpcio.workloads.seismic import libraries

    if phase is Phase.READ and not run.verify:
        return PythonBody(read_volume)
    source = libraries.made_before(run, layout_of(run), who.rank)
    call = write_volume if phase is Phase.WRITE else read_volume
    return PythonBody(functools.partial(call, source=source))


def slab_memory(run: RunSpec, ranks_per_node: int, lower: str) -> MemoryNeed:
    """A rank holds its whole slab, made before the phase, and a piece read back."""
    grid = layout_of(run)
    slab = -(-grid.raw_bytes // run.ranks)
    piece = grid.chunk[0] * grid.chunk[1] * grid.chunk[2] * SAMPLE_BYTES
    return MemoryNeed(ranks_per_node * (slab + 2 * piece),
                      f"{ranks_per_node} rank(s) x (a slab of {format_bytes(slab)} + 2 pieces "
                      f"of {format_bytes(piece)})", lower)  # fmt: skip


def with_ratios(total: dict[str, Any]) -> dict[str, Any]:
    """The metrics summed over ranks, with the ratios made from the sums."""
    if total.get("stored_bytes"):
        total["compression_ratio"] = round(total["raw_bytes"] / total["stored_bytes"], 3)
    if total.get("raw_bytes") and "fetched_bytes" in total:
        total["read_amplification"] = round(total["fetched_bytes"] / total["raw_bytes"], 4)
    return total


def library_label(name: str, settings: dict[str, Any]) -> str:
    """'volume zarr(blosc)', 'volume segy', as the study's table names them."""
    library = str(settings.get("library", ""))
    if library == "zarr":
        library += f"({settings.get('compression', 'none')})"
    if settings.get("collective"):
        library += " collective"
    return f"{name} {library}".strip()


class Volume(Workload):
    name = "volume"
    family = "library"
    params = VolumeParams
    summary = "the RTM study's volume create: one velocity volume through SEG-Y, HDF5 or Zarr"
    lower = {"buffers": "--volume or --chunk", "data": "--volume",  # noqa: RUF012
             "disk": "--volume"}  # fmt: skip

    def validate(self, run: RunSpec) -> None:
        super().validate(run)
        check(run, self.name)

    def body(self, run: RunSpec, phase: Phase, who: RankInfo) -> Body:
        return volume_body(run, phase, who)

    def planned_transfers(self, run: RunSpec, phase: Phase, sample: int = 64) -> int | None:
        # The library makes the requests; building a body would make a rank's data too.
        return None

    def keys(self, run: RunSpec) -> list[str]:
        return volume_keys(run)

    def owns_key(self, name: str) -> bool:
        return _KEY.fullmatch(name) is not None

    def in_flight(self, run: RunSpec) -> int:
        # zarr's event loop has up to 10 chunk requests in flight (async.concurrency).
        return 10 if run.params.library == "zarr" else 1

    def objects_written(self, run: RunSpec) -> list[Written]:
        grid = layout_of(run)
        if run.params.library != "zarr":
            return [Written("the volume file", volume_bytes(run), volume_bytes(run), False)]
        chunk = grid.chunk[0] * grid.chunk[1] * grid.chunk[2] * SAMPLE_BYTES
        return [Written("each chunk", chunk, chunk, False)] * (len(volume_keys(run)) - 1)

    def stored_bytes(self, run: RunSpec) -> int:
        return volume_bytes(run)

    def memory(self, run: RunSpec, ranks_per_node: int) -> MemoryNeed:
        return slab_memory(run, ranks_per_node, self.lower["buffers"])

    def cache_facts(self, run: RunSpec) -> CacheFacts:
        # Each rank reads back the slab it wrote: on one node, from the page cache unless
        # the writes were flushed and dropped.
        # The samples (what the reads ask for; the figure report tables divide by).
        return CacheFacts(data_set_bytes=layout_of(run).raw_bytes, read_back_from="its own slab",
                          reads_local_data=True)  # fmt: skip

    def describe(self, run: RunSpec) -> str:
        p = run.params
        what = p.library + (f" ({p.compression})" if p.library == "zarr" else "")
        if p.library == "zarr":
            what += f", chunks {shape_text(layout_of(run).chunk)}"
        if p.collective:
            what += ", collective"
        return (f"{shape_text(p.volume)} {p.data} volume ({format_bytes(layout_of(run).raw_bytes)}"
                f") through {what}")  # fmt: skip

    def disk_words(self, run: RunSpec) -> str:
        return f"a {shape_text(run.params.volume)} float32 volume"

    def reduce_metrics(self, per_rank: Sequence[dict[str, Any]]) -> dict[str, Any]:
        return with_ratios(super().reduce_metrics(per_rank))

    def label(self, settings: dict[str, Any]) -> str:
        return library_label(self.name, settings)
