"""python-files' params (workloads/python_files.py): a light module, imported by the option
path without the workload."""

from __future__ import annotations

from dataclasses import dataclass

from hpcio.options import POSITIVE, SIZE, option


@dataclass(frozen=True, slots=True, kw_only=True)
class PythonFilesParams:
    files: int = option("--files", kind=POSITIVE, default=4, help="python-files: files per rank")
    file_size_bytes: int = option(
        "--file-size", kind=SIZE, unit="bytes", default=1 << 20,
        help="python-files, listing: bytes in each file",
    )  # fmt: skip
    block_bytes: int = option(
        "--block", kind=SIZE, unit="bytes", default=256 << 10,
        help="python-files: bytes per os.pwrite / os.pread call",
    )  # fmt: skip
