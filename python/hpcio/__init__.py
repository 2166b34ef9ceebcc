"""hpcio: HPC I/O patterns on POSIX file systems and object storage, with real MPI ranks."""

import os
from importlib.metadata import PackageNotFoundError, version

# hpcio does no linear algebra: numpy's OpenBLAS would otherwise start a worker thread per
# core that spins beside the I/O lanes (1 % of a 2-core node in a 32-lane profile, by perf).
# Set before numpy is first imported; a user's own setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

try:
    __version__ = version("hpcio")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
