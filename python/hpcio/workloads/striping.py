"""--stripe-count and --stripe-size: the Lustre layout of the files a run creates.

Where `lfs` exists, each file is created empty with `lfs setstripe` before the write phase
(untimed, as a layout set on the directory beforehand would be), so every API and the engine
write into it. Elsewhere a run that writes through MPI-IO (--api mpiio, hdf5, netcdf,
pnetcdf, and the library workloads built on them) passes them as ROMIO's striping_factor and
striping_unit hints, which Lustre's ADIO driver applies when it creates the file (and other
file systems ignore). A document records which of the two was used (`run.striping`)."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from typing import TYPE_CHECKING

from hpcio.errors import HpcioError, SpecError

if TYPE_CHECKING:
    from hpcio.spec.model import RunSpec
    from hpcio.workloads.contract import Workload

LFS = "lfs setstripe"
HINTS = "mpiio-hints"


def asked(run: RunSpec) -> bool:
    return run.stripe_count is not None or run.stripe_size_bytes is not None


def method(run: RunSpec, workload: Workload) -> str | None:
    """How the run's stripe options are carried out: LFS, HINTS, or None (none asked)."""
    if not asked(run):
        return None
    if shutil.which("lfs") is not None:
        return LFS
    return HINTS if workload.uses_mpiio(run) else None


def validate(run: RunSpec, workload: Workload) -> None:
    """Raises: SpecError where no way to set the layout exists."""
    if not asked(run):
        return
    if run.target.is_object_store:
        raise SpecError(
            f"--stripe-count and --stripe-size are Lustre layouts: {run.target.kind} targets "
            "have none"
        )
    if method(run, workload) is None:
        raise SpecError(
            "--stripe-count/--stripe-size: there is no lfs here (not a Lustre client) and "
            f"{workload.name} {describe_api(run)} takes no MPI-IO hints; run on Lustre or use "
            "--api mpiio, hdf5, netcdf or pnetcdf"
        )


def describe_api(run: RunSpec) -> str:
    api = getattr(run.params, "api", None)
    return f"with --api {api}" if api else "here"


def hints(run: RunSpec, workload: Workload) -> tuple[str, ...]:
    """The striping hints to give MPI-IO (none where lfs sets the layout)."""
    if method(run, workload) != HINTS:
        return ()
    found = []
    if run.stripe_count is not None:
        found.append(f"striping_factor={run.stripe_count}")
    if run.stripe_size_bytes is not None:
        found.append(f"striping_unit={run.stripe_size_bytes}")
    return tuple(found)


def setstripe_command(run: RunSpec, path: str) -> list[str]:
    command = ["lfs", "setstripe"]
    if run.stripe_count is not None:
        command += ["-c", str(run.stripe_count)]
    if run.stripe_size_bytes is not None:
        command += ["-S", str(run.stripe_size_bytes)]
    return [*command, path]


def lay_out(run: RunSpec, paths: list[str]) -> None:
    """Create each of `paths` empty with the run's layout (a file that exists keeps its old
    layout under lfs, so it is removed first: it is the run's own and about to be rewritten).

    Raises:
        HpcioError: lfs refused (one line with its message).
    """
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        done = subprocess.run(setstripe_command(run, path), capture_output=True, text=True)
        if done.returncode != 0:
            said = (done.stderr or done.stdout).strip().splitlines()
            raise HpcioError(f"lfs setstripe {path}: {said[-1] if said else 'failed'}")
