"""A job's exit code handed from rank 0 to the hpcio that launched it through a file, so that
ranks ending on an error they all raised can exit 0.

Open MPI's mpiexec answers any rank's non-zero exit by stopping the ranks still running:
SIGCONT, one kill delay, SIGTERM, another, SIGKILL. It waits out both delays (2 x 5 s under
hpcio, which lengthens them so that interrupted ranks can remove their files) even when those
ranks are already leaving on their own, so a failed run took 10 s longer to end than it ran.
An error every rank raised (a phase that failed, told to all by rank 0) leaves nothing to
stop: each rank exits 0 and rank 0 writes the code into the launcher's file. A rank 0 that
cannot (the file is on another node) exits with the code, as every rank did before.
"""

from __future__ import annotations

import contextlib
import os
import tempfile

from hpcio.runner.processes import alive

#: The file the launching hpcio made for rank 0's exit code (runner/mpiexec.relaunch).
VARIABLE = "HPCIO_EXIT_STATUS_FILE"
_RANK_VARIABLES = ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK")
#: Its name begins with this and the launcher's PID.
_PREFIX = "hpcio-exit-status-"


def made(directory: str | None = None) -> str:
    """A new empty file for rank 0's exit code, named after this process, in `directory` (the
    temporary one). Files of launchers that died without removing theirs (SIGKILL) are
    removed first."""
    directory = directory or tempfile.gettempdir()
    with contextlib.suppress(OSError):
        for name in os.listdir(directory):
            pid = name.removeprefix(_PREFIX).split("-")[0]
            if name.startswith(_PREFIX) and pid.isdigit() and not alive(int(pid)):
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(directory, name))
    handle, path = tempfile.mkstemp(prefix=f"{_PREFIX}{os.getpid()}-", dir=directory)
    os.close(handle)
    return path


def of_rank(code: int, every_rank: bool) -> int:
    """The exit code a rank ends with for an error whose exit code is `code`; `every_rank`:
    every rank of the job raised it alike."""
    path = os.environ.get(VARIABLE)
    if path is None or not every_rank or code == 0:
        return code
    if _rank() != 0:
        return 0
    try:
        # r+: the launcher's file, never one made on a node it is not on.
        with open(path, "r+") as status:
            status.write(str(code))
    except OSError:
        return code
    return 0


def handed(path: str, code: int) -> int:
    """The job's exit code: mpiexec's `code`, or when that is 0 the code rank 0 left in `path`;
    the file is removed."""
    written = ""
    with contextlib.suppress(OSError), open(path) as status:
        written = status.read().strip()
    with contextlib.suppress(OSError):
        os.unlink(path)
    if code == 0 and written.isdigit():
        return int(written)
    return code


def _rank() -> int | None:
    for name in _RANK_VARIABLES:
        if name in os.environ:
            with contextlib.suppress(ValueError):
                return int(os.environ[name])
    return None
