"""How a seismic volume is cut: ranks own whole slabs along x (the inline axis), made of
pieces a library call writes or reads at once: one chunk for zarr, a few inlines for HDF5 and
SEG-Y. Every rank computes the same layout from the run alone."""

from __future__ import annotations

from dataclasses import dataclass

from hpcio.workloads.seismic.velocity import SAMPLE_BYTES

Shape = tuple[int, int, int]
Box = tuple[tuple[int, int, int], tuple[int, int, int]]

#: Bytes of samples one HDF5 or SEG-Y call moves at most (a whole inline when one is larger).
PIECE_BYTES = 16 << 20


@dataclass(frozen=True, slots=True)
class Layout:
    shape: Shape
    #: Zarr's chunk; for HDF5 and SEG-Y (planes per piece, ny, nz).
    chunk: Shape
    ranks: int

    @property
    def raw_bytes(self) -> int:
        nx, ny, nz = self.shape
        return nx * ny * nz * SAMPLE_BYTES

    @property
    def slabs(self) -> int:
        """Chunk slabs along x, the unit ranks share out."""
        return self.shape[0] // self.chunk[0]

    def x_range(self, rank: int) -> tuple[int, int]:
        """The planes rank `rank` owns (block distribution of whole chunk slabs)."""
        first = rank * self.slabs // self.ranks
        last = (rank + 1) * self.slabs // self.ranks
        cx = self.chunk[0]
        return first * cx, min(last * cx, self.shape[0])

    def pieces(self, rank: int) -> list[Box]:
        """The boxes rank `rank` writes or reads, one library call each, in order."""
        x0, x1 = self.x_range(rank)
        cx, cy, cz = self.chunk
        _, ny, nz = self.shape
        return [
            ((x, y, z), (min(x + cx, x1), min(y + cy, ny), min(z + cz, nz)))
            for x in range(x0, x1, cx)
            for y in range(0, ny, cy)
            for z in range(0, nz, cz)
        ]

    def most_pieces(self) -> int:
        """The most pieces any rank has (collective HDF5 calls: every rank makes as many)."""
        return max(len(self.pieces(r)) for r in range(self.ranks))


def plane_layout(shape: Shape, ranks: int) -> Layout:
    """HDF5 and SEG-Y: pieces of whole inlines, up to PIECE_BYTES each (one inline at least),
    the volume shared out by inline."""
    _, ny, nz = shape
    planes = max(1, PIECE_BYTES // (ny * nz * SAMPLE_BYTES))
    return _PlaneLayout(shape, (planes, ny, nz), ranks)


@dataclass(frozen=True, slots=True)
class _PlaneLayout(Layout):
    @property
    def slabs(self) -> int:
        return self.shape[0]

    def x_range(self, rank: int) -> tuple[int, int]:
        return rank * self.shape[0] // self.ranks, (rank + 1) * self.shape[0] // self.ranks


def default_chunk(shape: Shape, ranks: int) -> Shape:
    """A zarr chunk when --chunk is not given: whole traces (all of z), about 8 MiB, with x
    and y sizes that divide the volume and enough slabs along x for every rank."""
    nx, ny, nz = shape
    per_trace = nz * SAMPLE_BYTES
    traces = max(1, (8 << 20) // per_trace)
    cy = _largest_divisor(ny, max(1, int(traces**0.5)))
    cx = _largest_divisor(nx, min(max(1, traces // cy), max(1, nx // ranks)))
    return cx, cy, nz


def _largest_divisor(n: int, at_most: int) -> int:
    return next(d for d in range(min(n, at_most), 0, -1) if n % d == 0)
