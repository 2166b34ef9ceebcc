"""hpcio: HPC I/O patterns on POSIX file systems and object storage, with real MPI ranks."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("hpcio")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
