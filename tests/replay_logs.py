"""Logs the replay tests read: darshan's own sample logs, and a small hpcio trace whose
files go to object stores each way (one PUT, one rank's parts, several ranks' parts of one
upload, an object per write)."""

from pathlib import Path

import numpy as np
from hpcio.trace import operations

MiB = 1 << 20
MS = 1_000_000


def darshan_sample(name: str) -> Path:
    import darshan

    return Path(darshan.__file__).parent / "tests" / "input" / name


def dxt_segments(log: Path) -> list[tuple[int, str, int, int]]:
    """(rank, op, offset, length) of every DXT_POSIX segment, read by pydarshan itself."""
    import darshan

    found = []
    with darshan.DarshanReport(str(log), read_all=True) as report:
        for record in report.records["DXT_POSIX"].to_df():
            for op, column in (("write", "write_segments"), ("read", "read_segments")):
                segments = record[column]
                if len(segments) == 0:
                    continue
                for offset, length in zip(segments["offset"], segments["length"], strict=True):
                    found.append((int(record["rank"]), op, int(offset), int(length)))
    return found


#: (app rank, file, op, offset, length, start ms, end ms)
APP = [
    (0, "/app/ckpt.dat", "write", 0, 5 * MiB, 0, 1),
    (1, "/app/log.txt", "write", 0, 100, 1, 1),
    (0, "/app/ckpt.dat", "write", 5 * MiB, 5 * MiB, 2, 3),
    (1, "/app/log.txt", "write", 100, 100, 2, 2),
    (1, "/app/meta.json", "write", 0, 300, 3, 3),
    (1, "/app/log.txt", "write", 200, 100, 3, 3),
    (2, "/app/input.dat", "read", 0, 4096, 4, 4),
    (2, "/app/input.dat", "read", 8192, 4096, 5, 5),
    (0, "/app/ckpt.dat", "read", 5 * MiB, 4096, 6, 6),
    (1, "/app/log.txt", "write", 100, 50, 7, 7),  # a small in-place update
    (1, "/app/shared.dat", "write", 5 * MiB, 5 * MiB, 8, 9),  # N-1: two ranks' parts
    (0, "/app/shared.dat", "write", 0, 5 * MiB, 8, 9),
    (2, "/app/shared.dat", "read", 5 * MiB - 2048, 4096, 10, 10),  # across both ranks' parts
]


def app_trace(directory: Path) -> Path:
    """APP as an hpcio trace directory (one file per application rank)."""
    rows = np.array(APP, dtype=object)
    for rank in range(3):
        mine = rows[rows[:, 0] == rank]
        operations.write(
            directory / operations.rank_file_name(rank),
            operations.build(mine[:, 0].astype(int), mine[:, 1].astype(str),
                             mine[:, 2].astype(str), mine[:, 3].astype(int),
                             mine[:, 4].astype(int), mine[:, 5].astype(int) * MS,
                             mine[:, 6].astype(int) * MS),
        )  # fmt: skip
    return directory
