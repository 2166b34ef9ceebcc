"""--stripe-count and --stripe-size: the layout of the files a run creates, on Lustre or CephFS.

On CephFS (the kernel client or ceph-fuse: the target directory answers the virtual extended
attribute ceph.dir.entries), each file is created empty before the write phase and given its
layout with the extended attribute ceph.file.layout (stripe_unit, stripe_count, object_size:
a layout can only be set while a file is empty), then read back and checked. Where `lfs`
exists, each file is created empty with `lfs setstripe`. Both are untimed, as a layout set on
the directory beforehand would be, so every API and the engine write into the file. Elsewhere
a run that writes through MPI-IO (--api mpiio, hdf5, netcdf, pnetcdf, and the library
workloads built on them) passes them as ROMIO's striping_factor and striping_unit hints,
which Lustre's ADIO driver applies when it creates the file and other file systems ignore:
such a run says so in a warning. A document records which was used (`run.striping`)."""

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
CEPHFS = "cephfs-layout"
#: The methods that lay each file out before the write phase (lay_out).
LAID_OUT = (LFS, CEPHFS)
#: A CephFS layout attribute and the CephFS object size where the directory's layout says none.
CEPHFS_LAYOUT = "ceph.file.layout"
CEPHFS_DEFAULT_OBJECT_BYTES = 4 << 20


def asked(run: RunSpec) -> bool:
    return run.stripe_count is not None or run.stripe_size_bytes is not None


def method(run: RunSpec, workload: Workload) -> str | None:
    """How the run's stripe options are carried out: LFS, HINTS, or None (none asked)."""
    if not asked(run):
        return None
    if not run.target.is_object_store and on_cephfs(run.target.path):
        return CEPHFS
    if shutil.which("lfs") is not None:
        return LFS
    return HINTS if workload.uses_mpiio(run) else None


def lays_out(run: RunSpec, workload: Workload) -> bool:
    """Whether each file is created with its layout before the write phase (lay_out)."""
    return method(run, workload) in LAID_OUT


def on_cephfs(path: str) -> bool:
    """Whether `path` (or, while it does not exist yet, the directory it will be made in) is
    on CephFS: only CephFS answers its virtual attribute ceph.dir.entries."""
    path = os.path.abspath(path)
    while not os.path.exists(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    try:
        os.getxattr(path, "ceph.dir.entries")
    except OSError:
        return False
    return True


def validate(run: RunSpec, workload: Workload) -> None:
    """Raises: SpecError where no way to set the layout exists."""
    if not asked(run):
        return
    if run.target.is_object_store:
        raise SpecError(
            f"--stripe-count and --stripe-size are Lustre layouts: {run.target.kind} targets "
            "have none"
        )
    how = method(run, workload)
    if how == CEPHFS and run.stripe_size_bytes is not None and run.stripe_size_bytes % 65536:
        raise SpecError(
            f"--stripe-size: CephFS stripe units are multiples of 64 KiB, got "
            f"{run.stripe_size_bytes} bytes"
        )
    if how is None:
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


def warnings(run: RunSpec, workload: Workload) -> tuple[str, ...]:
    """Where the stripe options were given but nothing applies them."""
    if method(run, workload) != HINTS:
        return ()
    return (
        "--stripe-count/--stripe-size went to MPI-IO as the hints striping_factor and "
        "striping_unit, which only Lustre's ADIO driver applies: on this file system they had "
        "no effect on the layout",
    )


def cephfs_layout(run: RunSpec, current: dict[str, int]) -> dict[str, int]:
    """The layout a file gets from the run's options over its `current` one (the directory's):
    the object size is kept when it is a multiple of the stripe unit, else made the least
    multiple above it (CephFS requires object_size % stripe_unit == 0)."""
    unit = run.stripe_size_bytes or current.get("stripe_unit", CEPHFS_DEFAULT_OBJECT_BYTES)
    count = run.stripe_count or current.get("stripe_count", 1)
    objects = current.get("object_size", CEPHFS_DEFAULT_OBJECT_BYTES)
    if objects % unit:
        objects = unit * -(-objects // unit)
    return {"stripe_unit": unit, "stripe_count": count, "object_size": objects}


def read_cephfs_layout(path: str) -> dict[str, int]:
    """A CephFS file's layout: stripe_unit, stripe_count, object_size (the pool left out)."""
    said = os.getxattr(path, CEPHFS_LAYOUT).decode()
    fields = dict(item.split("=", 1) for item in said.split())
    return {k: int(fields[k]) for k in ("stripe_unit", "stripe_count", "object_size")}


def _set_cephfs_layout(run: RunSpec, path: str) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.close(fd)
        wanted = cephfs_layout(run, read_cephfs_layout(path))
        value = " ".join(f"{k}={v}" for k, v in wanted.items())
        os.setxattr(path, CEPHFS_LAYOUT, value.encode())
        got = read_cephfs_layout(path)
    except OSError as e:
        raise HpcioError(f"CephFS layout of {path}: {e.strerror or e}") from None
    if got != wanted:
        raise HpcioError(f"CephFS layout of {path}: asked {wanted}, the file has {got}")


def lay_out(run: RunSpec, paths: list[str], how: str = LFS) -> None:
    """Create each of `paths` empty with the run's layout, by `how` (LFS or CEPHFS); a file
    that exists keeps its old layout, so it is removed first: it is the run's own and about to
    be rewritten. A CephFS layout is read back and checked.

    Raises:
        HpcioError: lfs or CephFS refused, or the layout read back is not the one asked (one
            line with what was said).
    """
    for path in paths:
        if how == CEPHFS:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            _set_cephfs_layout(run, path)
            continue
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        done = subprocess.run(setstripe_command(run, path), capture_output=True, text=True)
        if done.returncode != 0:
            said = (done.stderr or done.stdout).strip().splitlines()
            raise HpcioError(f"lfs setstripe {path}: {said[-1] if said else 'failed'}")
