"""The unet3d data set as DLIO lays it out: a folder of its own (DLIO's data_folder) holding
`train/`, one sample per file, and an empty `valid/` (DLIO's reader needs it). A sample is an
npz (np.savez, no compression) of one uint8 array whose size is the product of two dimensions
drawn as DLIO's generator draws them, seeded. The sizes and names follow from (scale,
samples, seed) alone, so datagen and every training run agree on them without reading the
data set back. Data sets written before issue 26 (files at the target's top level, each size
one normal draw) stay readable (`flat`). A data set for O_DIRECT (`--direct`) pads each file
with zeros to a multiple of 4 KiB, which np.load ignores, and is named apart ("-a4k"), so a
directory can hold both and a run never reads the other kind."""

from __future__ import annotations

import functools
import io
import math
import re
from dataclasses import dataclass

import numpy as np

from hpcio.workloads.native import _engine
from hpcio.workloads.patterns.common import DIRECT_ALIGN
from hpcio.workloads.training import tfrecord

#: DLIO's unet3d configs (configs/workload/unet3d_*.yaml): record_length_bytes and _stdev.
SAMPLE_MEAN_BYTES = 146_600_628
SAMPLE_STDEV_BYTES = 68_341_808
FORMATS = ("npz", "tfrecord")


@dataclass(frozen=True, slots=True)
class SampleKind:
    """What a training workload's samples are: its DLIO config's dataset section."""

    model: str
    mean_bytes: int
    stdev_bytes: int
    #: The file's container: npz (np.savez) or tfrecord (tfrecord.py).
    format: str
    #: DLIO's num_samples_per_file: a file's records all have its one drawn size, as DLIO's
    #: TFRecord generator writes them (tf_generator.py: one shape a file).
    samples_per_file: int = 1


UNET3D = SampleKind("unet3d", SAMPLE_MEAN_BYTES, SAMPLE_STDEV_BYTES, "npz")
#: --scale small divides sample sizes and the compute time per step by this, so a step asks
#: the storage for the same bytes per second of compute as at full scale (the AU of a
#: bandwidth-bound target stays comparable) while the data set fits one machine.
SMALL_DIVISOR = 16
SCALES = ("full", "small")

#: DLIO's folders: the training samples and the evaluation's (empty: hpcio does not evaluate).
TRAIN_FOLDER = "train"
VALID_FOLDER = "valid"

_SAMPLE = rf"img_[0-9]{{7,}}_of_[0-9]{{7,}}\.({'|'.join(FORMATS)})"
#: A data set's folder and what it holds (train/ and its samples, valid/), or a sample of a
#: flat data set (before issue 26).
_KEY = re.compile(
    rf"hpcio-[a-z0-9]+-(full|small)-s[0-9]+(-a4k)?"
    rf"(-n[0-9]+(/({TRAIN_FOLDER}(/{_SAMPLE})?|{VALID_FOLDER}))?|-{_SAMPLE})"
)


@dataclass(frozen=True, slots=True)
class DataSet:
    scale: str
    samples: int
    seed: int
    #: Files padded to DIRECT_ALIGN, for O_DIRECT reads and writes.
    aligned: bool = False
    #: hpcio's layout before issue 26: files at the top level, sizes one normal draw each.
    flat: bool = False
    kind: SampleKind = UNET3D

    @property
    def divisor(self) -> int:
        return SMALL_DIVISOR if self.scale == "small" else 1

    @property
    def _name(self) -> str:
        aligned = "-a4k" if self.aligned else ""
        return f"hpcio-{self.kind.model}-{self.scale}-s{self.seed}{aligned}"

    @property
    def folder(self) -> str:
        """DLIO's data_folder: train/ and valid/ are below it."""
        return f"{self._name}-n{self.samples}"

    def key(self, index: int) -> str:
        sample = f"img_{index:07d}_of_{self.samples:07d}.{self.kind.format}"
        if self.flat:
            return f"{self._name}-{sample}"
        return f"{self.folder}/{TRAIN_FOLDER}/{sample}"

    def keys(self) -> list[str]:
        return [self.key(i) for i in range(self.samples)]

    @property
    def sample_count(self) -> int:
        """Samples in the data set: its files (`samples`) x the samples each holds."""
        return self.samples * self.kind.samples_per_file

    def record_bytes(self) -> np.ndarray:
        """Each file's record size in its container (a file of several samples is that many
        records, end to end)."""
        return self.array_bytes() + container_bytes(self.kind.format)

    def array_bytes(self) -> np.ndarray:
        """Each file's sample (array) size in bytes (int64), drawn once with the seed: see
        `dlio_sizes` (a `flat` data set: one draw from N(mean, stdev), at least one byte)."""
        rng = np.random.default_rng([self.seed, 0x554E4554])  # "UNET": apart from payloads
        mean = self.kind.mean_bytes / self.divisor
        stdev = self.kind.stdev_bytes / self.divisor
        if self.flat:
            return np.maximum(rng.normal(mean, stdev, self.samples).astype(np.int64), 1)
        return dlio_sizes(rng, mean, stdev, self.samples)

    def file_bytes(self) -> np.ndarray:
        """Each sample's file size: the array and its container's fixed bytes (np.savez's
        headers, a TFRecord's length and CRCs), and the padding to DIRECT_ALIGN of an aligned
        data set."""
        size = self.record_bytes() * self.kind.samples_per_file
        if self.aligned:
            size = -(-size // DIRECT_ALIGN) * DIRECT_ALIGN
        return size

    def total_bytes(self) -> int:
        return int(self.file_bytes().sum())


def dlio_sizes(rng: np.random.Generator, mean: float, stdev: float, samples: int) -> np.ndarray:
    """Sample sizes as DLIO's generator draws them (data_generator.py, get_dimension, and
    config.py, derive_configurations): a side of int(sqrt(mean)) bytes, two sides a sample
    each drawn from N(side, stdev / 2 / sqrt(mean)) and cut to a whole number at least 1, the
    size their product. Its mean is about the configured mean; its spread about 0.71 of the
    configured stdev (sqrt(2) x side x stdev / 2 / sqrt(mean))."""
    side = int(math.sqrt(mean))
    if stdev <= 0:
        return np.full(samples, side * side, np.int64)
    drawn = rng.normal(side, stdev / 2.0 / math.sqrt(mean), 2 * samples)
    sides = np.maximum(drawn.astype(np.int64), 1)
    return sides[0::2] * sides[1::2]


def owns_key(name: str) -> bool:
    return _KEY.fullmatch(name) is not None


def container_bytes(format: str) -> int:
    """Bytes a file's container adds to its sample."""
    return tfrecord.OVERHEAD_BYTES if format == "tfrecord" else npz_overhead_bytes()


@functools.cache
def npz_overhead_bytes() -> int:
    """Bytes np.savez adds around a 1-D uint8 array (zip headers, the .npy header): the same
    for every size (the .npy header is padded to 64 bytes; numpy forces zip64)."""
    out = io.BytesIO()
    np.savez(out, x=np.zeros(1, np.uint8))
    return len(out.getvalue()) - 1


class _Into(io.RawIOBase):
    """A seekable file over a preallocated buffer: np.savez writes the npz straight into the
    bytes the engine then writes, so a sample is held once plus its array."""

    def __init__(self, buffer: np.ndarray) -> None:
        self._buffer = buffer.data.cast("B")
        self._at = 0
        self.end = 0

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def write(self, data) -> int:
        view = memoryview(data).cast("B")
        stop = self._at + len(view)
        if stop > len(self._buffer):
            raise ValueError(f"npz larger than its planned {len(self._buffer)} bytes")
        self._buffer[self._at : stop] = view
        self._at = stop
        self.end = max(self.end, stop)
        return len(view)

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._at, io.SEEK_END: self.end}[whence]
        self._at = base + offset
        return self._at

    def tell(self) -> int:
        return self._at


def aligned_buffer(size: int) -> np.ndarray:
    """`size` bytes starting on a DIRECT_ALIGN boundary: O_DIRECT writes from the caller's
    buffer need its address aligned, which numpy does not promise."""
    raw = np.empty(size + DIRECT_ALIGN, np.uint8)
    skip = -raw.ctypes.data % DIRECT_ALIGN
    return raw[skip : skip + size]


def npz_sample(data_set: DataSet, index: int, array_bytes: int, out: np.ndarray) -> np.ndarray:
    """File `index` as its bytes, built in `out` (at least its file size): the engine's
    payload for the file's key (incompressible, as DLIO's random bytes) as one npz array `x`,
    which np.load reads back, or TFRecord records (samples_per_file of them, each its share
    of the payload); zeros after it up to an aligned data set's file size."""
    records = data_set.kind.samples_per_file
    array = np.empty(array_bytes * records, np.uint8)
    _engine.payload_fill(array, data_set.seed, 0, data_set.key(index), 0)
    size = (array_bytes + container_bytes(data_set.kind.format)) * records
    if data_set.kind.format == "tfrecord":
        written = 0
        for payload in np.split(array, records):
            written += tfrecord.into(out[written:], payload)
    elif records > 1:
        raise ValueError("npz: one sample a file")
    else:
        into = _Into(out[:size])
        np.savez(into, x=array)
        written = into.end
    if written != size:
        raise ValueError(f"{data_set.kind.format}: wrote {written} bytes, {size} planned")
    padded = -(-size // DIRECT_ALIGN) * DIRECT_ALIGN if data_set.aligned else size
    out[size:padded] = 0
    return out[:padded]
