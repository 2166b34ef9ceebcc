"""hpcio: HPC I/O patterns on POSIX file systems and object storage, with real MPI ranks."""

import functools
import os

# hpcio does no linear algebra: numpy's OpenBLAS would otherwise start a worker thread per
# core that spins beside the I/O lanes (1 % of a 2-core node in a 32-lane profile, by perf).
# Set before numpy is first imported; a user's own setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__all__ = ["__version__"]


def __getattr__(name: str) -> str:
    # importlib.metadata costs 40 ms of imports (email, zipfile...): looked up only when asked,
    # not by every `hpcio` that only parses its options or reads results.
    if name == "__version__":
        return _version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.cache
def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("hpcio")
    except PackageNotFoundError:  # running from a source tree without an install
        return "0.0.0+unknown"
