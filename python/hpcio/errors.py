"""The HpcioError tree: one class per way a run can fail, each with its exit code."""

from __future__ import annotations

#: Exit code for input the user can fix (options, sizes, targets): argparse uses it too.
USAGE_EXIT = 2
#: Exit code for a run that started and failed (I/O errors, verification mismatches).
FAILURE_EXIT = 1


class HpcioError(Exception):
    """Base of every error hpcio reports as one line."""

    exit_code = USAGE_EXIT

    def __init__(self, *args: object, every_rank: bool = False) -> None:
        super().__init__(*args)
        #: Raised by every rank of a job alike (what rank 0 told them all): the ranks can end
        #: without mpiexec stopping any of them (runner/exit_status.py).
        self.every_rank = every_rank


class SpecError(HpcioError, ValueError):
    """An option or size that cannot make a valid run."""


class TargetError(HpcioError, OSError):
    """A target that cannot be used as asked: missing, read-only, direct I/O refused."""


class LaunchError(HpcioError, RuntimeError):
    """MPI could not be started or found."""


class ResultsError(HpcioError, ValueError):
    """A results file that is not hpcio's or cannot be read."""


class RunFailedError(HpcioError, RuntimeError):
    """A run started but an operation failed or read back wrong data."""

    exit_code = FAILURE_EXIT
