"""A data set DLIO generated, found by listing a directory: its training files and sizes."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass

import numpy as np

from hpcio.workloads.training.dataset import TRAIN_FOLDER, owns_key


@dataclass(frozen=True, slots=True)
class FoundDataSet:
    """The files a training run reads, as listed: keys relative to the target, sizes as
    stat() gave them, in DLIO's order (sorted), the first `samples` of `found`."""

    folder: str
    names: tuple[str, ...]
    sizes: tuple[int, ...]
    found: int
    found_bytes: int

    @property
    def samples(self) -> int:
        return len(self.names)

    def key(self, index: int) -> str:
        return self.names[index]

    def keys(self) -> list[str]:
        return list(self.names)

    def file_bytes(self) -> np.ndarray:
        return np.array(self.sizes, dtype=np.int64)

    def total_bytes(self) -> int:
        return sum(self.sizes)


def find_dlio(root: str, samples: int, extension: str = "npz") -> FoundDataSet | None:
    """DLIO's training files under `root`: `root/train/*.EXT`, or `root/train/*/*.EXT` when
    train/ holds subfolders (num_subfolders_train), or `root/*.EXT` when `root` is the train
    folder itself; hpcio's own samples left out. None when there are none. Like DLIO, takes
    the first `samples` of the sorted list when it holds more."""
    try:
        stamp = os.stat(os.path.join(root, TRAIN_FOLDER)).st_mtime_ns
    except OSError:
        stamp = 0
    return _find(root, samples, extension, stamp)


@functools.lru_cache(maxsize=8)
def _find(root: str, samples: int, extension: str, _stamp: int) -> FoundDataSet | None:
    train = os.path.join(root, TRAIN_FOLDER)
    folder, prefix = (train, f"{TRAIN_FOLDER}/") if os.path.isdir(train) else (root, "")
    listed = _listing(folder, extension)
    if not listed:
        return None
    # DLIO sorts its list by the files' own names (subfolders aside).
    relative = sorted(((f"{prefix}{name}", size) for name, size in listed),
                      key=lambda found: os.path.basename(found[0]))  # fmt: skip
    used = relative[:samples]
    return FoundDataSet(
        folder=folder,
        names=tuple(n for n, _ in used),
        sizes=tuple(s for _, s in used),
        found=len(relative),
        found_bytes=sum(s for _, s in relative),
    )


def _listing(folder: str, extension: str) -> list[tuple[str, int]]:
    """(name relative to `folder`, bytes) of its DLIO files, one level of subfolders deep."""
    found = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    for entry in entries:
        if entry.is_dir():
            for inner in os.scandir(entry.path):
                if _is_dlio_file(inner, extension):
                    found.append((f"{entry.name}/{inner.name}", inner.stat().st_size))
        elif _is_dlio_file(entry, extension):
            found.append((entry.name, entry.stat().st_size))
    return found


def _is_dlio_file(entry: os.DirEntry[str], extension: str) -> bool:
    name = entry.name
    return entry.is_file() and name.endswith(f".{extension}") and not owns_key(name)
