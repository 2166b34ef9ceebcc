"""Trace figures (matplotlib's object API, as report/plots.py): a heat map of bytes moved per
rank over time (Darshan's heatmap module), and offset against time for each file."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from hpcio.trace.operations import DATA_OPS, Operations

#: Time bins of the heat map (Darshan's heatmap module keeps a fixed number of bins too).
BINS = 200
#: Files drawn at most, the busiest first: a trace of an N-N run has a file per rank.
MOST_FILES = 16


def draw(ops: Operations, directory: str | Path) -> list[Path]:
    """Writes heatmap.png and offsets-<file>.png into `directory`; the paths written."""
    from matplotlib.figure import Figure

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    moved = ops.select(np.isin(ops.op, list(DATA_OPS)))
    written: list[Path] = []
    if len(moved) == 0:
        return written
    seconds = (moved.start_ns + moved.end_ns) / 2e9
    ranks = int(moved.rank.max()) + 1
    end = max(float(seconds.max()), 1e-9)
    grid, _, _ = np.histogram2d(
        moved.rank, seconds, bins=(ranks, BINS), range=((0, ranks), (0, end)),
        weights=moved.length / 2**20,
    )  # fmt: skip
    figure = Figure(figsize=(9, max(2.5, min(12, 0.3 * ranks + 1.5))))
    axes = figure.add_subplot()
    image = axes.imshow(
        grid, aspect="auto", origin="lower", extent=(0, end, 0, ranks), cmap="viridis",
        interpolation="nearest",
    )  # fmt: skip
    figure.colorbar(image, ax=axes, label=f"MiB per {end / BINS * 1e3:.3g} ms")
    axes.set_xlabel("time since the run's origin (s)")
    axes.set_ylabel("rank")
    axes.set_title("bytes moved per rank over time (reads and writes)")
    written.append(out / "heatmap.png")
    figure.savefig(written[-1], dpi=110, bbox_inches="tight")

    files, counts = np.unique(moved.file, return_counts=True)
    for file in files[np.argsort(-counts, kind="stable")][:MOST_FILES]:
        one = moved.select(moved.file == file)
        figure = Figure(figsize=(8, 4))
        axes = figure.add_subplot()
        for op, colour in (("write", "tab:red"), ("read", "tab:blue")):
            mask = one.op == op
            if mask.any():
                axes.scatter(
                    one.start_ns[mask] / 1e9, one.offset[mask] / 2**20, s=6, c=colour, label=op
                )
        axes.set_xlabel("start (s since the run's origin)")
        axes.set_ylabel("offset (MiB)")
        axes.set_title(f"{file}: offset against time")
        axes.legend(loc="best")
        name = re.sub(r"[^A-Za-z0-9._-]+", "_", str(file)).strip("_") or "file"
        written.append(out / f"offsets-{name}.png")
        figure.savefig(written[-1], dpi=110, bbox_inches="tight")
    return written
