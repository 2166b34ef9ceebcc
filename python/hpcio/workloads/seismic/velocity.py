"""The data a seismic run writes: a synthetic velocity model, or seeded noise, as float32 by
x-slab. Any slab is a function of the seed and its global coordinates alone, so a rank makes
only its own part and a reader regenerates exactly what any writer wrote.

The model is what an RTM velocity model looks like to a compressor: a few layers whose velocity
rises with depth (1500 m/s water to 4500 m/s basement), separated by gently dipping, smoothly
undulating interfaces. Within a layer the velocity is constant, so a chunk is long runs of
equal values that Blosc shrinks by orders of magnitude (the study's 23 GB went to 136 MB).
The noise is uniform over the same range and does not compress."""

from __future__ import annotations

import numpy as np

from hpcio.workloads.seismic.params import DATA as DATA

V_MIN, V_MAX = 1500.0, 4500.0
LAYERS = 6
#: Bytes a float32 sample takes.
SAMPLE_BYTES = 4


def slab(data: str, seed: int, shape: tuple[int, int, int], x0: int, x1: int) -> np.ndarray:
    """Planes x0..x1 (all y, all z) of the volume `shape` = (nx, ny, nz), float32."""
    if data == "random":
        return _noise(seed, shape, x0, x1)
    return _layered(seed, shape, x0, x1)


def block(
    data: str, seed: int, shape: tuple[int, int, int], start: tuple[int, ...], stop: tuple[int, ...]
) -> np.ndarray:
    """The box start..stop of the volume (a chunk), float32."""
    if data == "random":
        planes = _noise(seed, shape, start[0], stop[0])
    else:
        planes = _layered(seed, shape, start[0], stop[0], start[1], stop[1])
        return np.ascontiguousarray(planes[:, :, start[2] : stop[2]])
    return np.ascontiguousarray(planes[:, start[1] : stop[1], start[2] : stop[2]])


def _layered(
    seed: int, shape: tuple[int, int, int], x0: int, x1: int, y0: int = 0, y1: int | None = None
) -> np.ndarray:
    nx, ny, nz = shape
    y1 = ny if y1 is None else y1
    rng = np.random.default_rng([seed, 0x5E15])
    x = (np.arange(x0, x1, dtype=np.float64) / max(nx, 1))[:, None]
    y = (np.arange(y0, y1, dtype=np.float64) / max(ny, 1))[None, :]
    depth = np.arange(nz, dtype=np.float32)
    velocity = np.full((x1 - x0, y1 - y0, nz), V_MIN, np.float32)
    steps = np.diff(np.linspace(V_MIN, V_MAX, LAYERS + 1)).astype(np.float32)
    for layer in range(1, LAYERS + 1):
        dip_x, dip_y = rng.uniform(-0.04, 0.04, 2)
        wave, phase_x, phase_y = rng.uniform(0.005, 0.02), *rng.uniform(0, 2 * np.pi, 2)
        top = (
            layer / (LAYERS + 1)
            + dip_x * x
            + dip_y * y
            + wave * np.sin(2 * np.pi * 1.3 * x + phase_x) * np.cos(2 * np.pi * 0.9 * y + phase_y)
        )
        # Whole samples: a layer's velocity is constant down to the sample below its top.
        top_sample = np.rint(top * nz).astype(np.float32)
        velocity += steps[layer - 1] * (depth[None, None, :] >= top_sample[:, :, None])
    return velocity


def _noise(seed: int, shape: tuple[int, int, int], x0: int, x1: int) -> np.ndarray:
    _, ny, nz = shape
    out = np.empty((x1 - x0, ny, nz), np.float32)
    for x in range(x0, x1):
        # One generator per plane: a plane's values do not depend on how ranks split the volume.
        rng = np.random.default_rng([seed, 0xA0153, x])
        out[x - x0] = rng.random((ny, nz), dtype=np.float32)
    out *= V_MAX - V_MIN
    out += V_MIN
    return out


def first_difference(
    expected: np.ndarray, found: np.ndarray
) -> tuple[tuple[int, ...], float, float] | None:
    """The first index where `found` differs from `expected` (NaN never equals), with both
    values; None when they are the same."""
    if expected.shape != found.shape:
        return (), float("nan"), float("nan")
    differs = expected.view(np.uint32) != np.asarray(found, np.float32).view(np.uint32)
    if not differs.any():
        return None
    at = np.unravel_index(int(np.argmax(differs)), differs.shape)
    index = tuple(int(i) for i in at)
    return index, float(expected[at]), float(found[at])
