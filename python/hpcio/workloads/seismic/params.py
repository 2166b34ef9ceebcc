"""The params of volume and imaging (volume.py, imaging.py): a light module, imported by the
option path without the workloads (their libraries, numpy)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hpcio.options import FLAG, SIZE, Kind, choice, option

#: What --data fills the volume with (velocity.py makes each): a layered model, or random.
DATA = ("velocity", "random")
LIBRARIES = ("segy", "hdf5", "zarr")
COMPRESSIONS = ("none", "blosc")


def _shape(value: Any) -> tuple[int, int, int]:
    """A shape "1000x1000x500" (a suite may give [1000, 1000, 500]) -> three sizes of at least 1."""
    parts = value.split("x") if isinstance(value, str) else value
    if not isinstance(parts, list | tuple) or len(parts) != 3:
        raise ValueError(f"must be three sizes such as 1000x1000x500, got {value!r}")
    try:
        sizes = tuple(int(p) for p in parts)
    except (TypeError, ValueError):
        raise ValueError(
            f"must be three whole numbers such as 1000x1000x500, got {value!r}"
        ) from None
    if min(sizes) < 1 or any(isinstance(p, bool) for p in parts):
        raise ValueError(f"sizes must be at least 1, got {value!r}")
    return sizes  # type: ignore[return-value]


SHAPE = Kind("shape", _shape)


def shape_text(shape: Sequence[int]) -> str:
    return "x".join(str(s) for s in shape)


@dataclass(frozen=True, slots=True, kw_only=True)
class VolumeParams:
    volume: tuple[int, int, int] = option(
        "--volume", kind=SHAPE, default=(256, 256, 256), metavar="NXxNYxNZ",
        help="volume, imaging: the velocity volume, x*y traces of z float32 samples",
    )  # fmt: skip
    library: str = option("--library", kind=choice(*LIBRARIES), default="zarr",
                          help="volume, imaging: the I/O library")  # fmt: skip
    compression: str = option(
        "--compression", kind=choice(*COMPRESSIONS), default="none",
        help="volume, imaging: zarr's codec: none, or blosc (zstd with byte shuffle)",
    )  # fmt: skip
    chunk: tuple[int, int, int] | None = option(
        "--chunk", kind=SHAPE, default=None, metavar="AxBxC",
        help="volume, imaging: zarr's chunk shape, dividing the volume (default: whole traces, "
        "about 8 MiB)",
    )  # fmt: skip
    data: str = option(
        "--data", kind=choice(*DATA), default="velocity",
        help="volume, imaging: a layered velocity model (compresses), or random (does not)",
    )  # fmt: skip
    collective: bool = option(
        "--collective", kind=FLAG, default=False,
        help="mpiio, hdf5: collective calls instead of independent ones",
    )  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class ImagingParams(VolumeParams):
    shot_bytes: int = option("--shot-size", kind=SIZE, unit="bytes", default=100 << 20,
                             help="imaging: the shot file each rank reads")  # fmt: skip
    image_bytes: int = option("--image-size", kind=SIZE, unit="bytes", default=300 << 20,
                              help="imaging: the image cube each rank writes")  # fmt: skip
