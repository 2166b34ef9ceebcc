"""What a figure depends on besides its spec: the software that measured it (hpcio and its
engine, Python, MPI and the launcher, the I/O libraries) and the storage under a target (file
system, mount options, Lustre layout, O_DIRECT, free space, read ceiling; for an object store
its endpoint and where its credentials come from, never the credentials). `hpcio env` prints
them; every result document records the software part, with the command line."""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hpcio import _engine
from hpcio.kinds import Setting
from hpcio.runner import ceiling, world
from hpcio.workloads import striping

if TYPE_CHECKING:
    from hpcio.spec.target import TargetSpec

#: The optional libraries hpcio's workloads use, by distribution name.
LIBRARIES = ("h5py", "netCDF4", "zarr", "numcodecs", "obstore", "segyio")


def software(*, probe: bool = True) -> dict[str, Any]:
    """hpcio, its engine, Python, MPI, the launcher and the I/O libraries. Without `probe`
    (inside a run, for its document) no process is started and no library imported: the
    launcher is left out and a library's parallel support is said only when the run
    imported it."""
    import hpcio

    found = {
        "hpcio": hpcio.__version__,
        "git": git_revision(),
        "engine_build": "debug" if _engine.debug_build() else "release",
        "python": platform.python_version(),
        "mpi": mpi_library(),
        "libraries": libraries(probe=probe),
    }
    if probe:
        found["launcher"] = launcher()
    return found


@functools.cache
def git_revision() -> str | None:
    """The commit of the checkout hpcio runs from (read from .git, no process started: ranks
    should not fork); None for an installed package."""
    git = Path(__file__).resolve().parents[3] / ".git"
    try:
        head = (git / "HEAD").read_text().strip()
        if not head.startswith("ref: "):
            return head[:12]
        ref = head.removeprefix("ref: ")
        loose = git / ref
        if loose.exists():
            return loose.read_text().strip()[:12]
        for line in (git / "packed-refs").read_text().splitlines():
            if line.endswith(" " + ref):
                return line.split()[0][:12]
    except OSError:
        return None
    return None


def mpi_library() -> dict[str, Any]:
    """The MPI library mpi4py was built with and loaded (its own words' first line)."""
    try:
        mpi4py_version = importlib.metadata.version("mpi4py")
        MPI = world.import_mpi()  # noqa: N806 (the module's own name)
    except (ImportError, importlib.metadata.PackageNotFoundError) as e:
        return {"library": None, "error": str(e)}
    said = MPI.Get_library_version().replace("\x00", "").strip()
    library = " ".join(said.splitlines()[0].split())
    major, minor = MPI.Get_version()
    return {"library": library, "standard": f"{major}.{minor}", "mpi4py": mpi4py_version}


def launcher() -> str | None:
    """The launcher `hpcio run -n N` starts (HPCIO_MPIEXEC, else mpiexec on PATH) and, for
    Open MPI's, its version; None where there is none."""
    try:
        chosen = shlex.split(os.environ.get("HPCIO_MPIEXEC", ""))
    except ValueError:
        chosen = []
    program = shutil.which(chosen[0]) if chosen else None
    program = program or shutil.which("mpiexec") or shutil.which("mpirun")
    if program is None:
        return None
    try:
        said = subprocess.run([program, "--version"], capture_output=True, text=True, timeout=10)
        first = said.stdout.strip().splitlines()[0] if said.stdout.strip() else ""
    except (OSError, subprocess.SubprocessError):
        first = ""
    name = shlex.join(chosen) if chosen else program
    return f"{name} ({first})" if first else name


def libraries(*, probe: bool) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for name in LIBRARIES:
        try:
            found[name] = {"version": importlib.metadata.version(name)}
        except importlib.metadata.PackageNotFoundError:
            found[name] = {"version": None}
            continue
        if probe or name in sys.modules:
            parallel = _parallel(name)
            if parallel is not None:
                found[name]["parallel"] = parallel
    if probe or "hpcio.workloads.apis.pnetcdf" in sys.modules:
        # Finding the library runs ldconfig: not inside a run that did not use it.
        from hpcio.workloads.apis import pnetcdf

        found["pnetcdf"] = {"library": pnetcdf.available() is None}
    return found


def _parallel(name: str) -> bool | None:
    """Whether h5py and netCDF4 were built for MPI (None for libraries where it means nothing)."""
    try:
        if name == "h5py":
            import h5py

            return bool(h5py.get_config().mpi)
        if name == "netCDF4":
            import netCDF4

            return bool(netCDF4.__has_parallel4_support__)
    except ImportError:
        return False
    return None


def storage(target: TargetSpec) -> dict[str, Any]:
    """Facts about the storage under `target` (no byte written but a probe file removed at
    once on POSIX; no request to an object store)."""
    if target.is_object_store:
        return object_store(target, os.environ)
    return posix(target.path)


def posix(path: str) -> dict[str, Any]:
    if not os.path.isdir(path):
        return {"path": path, "exists": False}
    mount = ceiling.mount_of(path)
    facts: dict[str, Any] = {
        "path": path,
        "exists": True,
        "file_system": mount.fs_type or None,
        "mount_point": mount.point or None,
        "source": mount.source or None,
        "mount_options": mount.options or None,
    }
    if shutil.which("lfs"):
        try:
            said = subprocess.run(["lfs", "getstripe", "-d", path], capture_output=True,
                                  text=True, timeout=10)  # fmt: skip
            facts["lustre_striping"] = said.stdout.strip() or said.stderr.strip()
        except (OSError, subprocess.SubprocessError) as e:
            facts["lustre_striping"] = f"lfs getstripe failed: {e}"
    if striping.on_cephfs(path):
        facts["cephfs_layout"] = _cephfs_layout(path)
    facts["o_direct"] = _takes_o_direct(path)
    try:
        stat = os.statvfs(path)
        facts["free_bytes"] = stat.f_bavail * stat.f_frsize
        facts["size_bytes"] = stat.f_blocks * stat.f_frsize
    except OSError:
        facts["free_bytes"] = facts["size_bytes"] = None
    limit = ceiling.ceiling(path)
    facts["read_ceiling"] = limit.what
    facts["read_ceiling_bytes_per_s"] = limit.bytes_per_s
    return facts


def _cephfs_layout(directory: str) -> str:
    """The CephFS layout a new file in `directory` gets (its own, or the one it inherits):
    read from a probe file, removed at once."""
    try:
        fd, name = tempfile.mkstemp(prefix=".hpcio-layout-", dir=directory)
    except OSError as e:
        return f"unknown ({e.strerror})"
    os.close(fd)
    try:
        return os.getxattr(name, striping.CEPHFS_LAYOUT).decode()
    except OSError as e:
        return f"unknown ({e.strerror})"
    finally:
        with contextlib.suppress(OSError):
            os.unlink(name)


def _takes_o_direct(directory: str) -> bool | None:
    """Whether a file made in `directory` opens with O_DIRECT (None: nothing can be made)."""
    try:
        fd, name = tempfile.mkstemp(prefix=".hpcio-direct-", dir=directory)
    except OSError:
        return None
    os.close(fd)
    try:
        direct = os.open(name, os.O_RDONLY | getattr(os, "O_DIRECT", 0))
        os.close(direct)
        return hasattr(os, "O_DIRECT")
    except OSError:
        return False
    finally:
        with contextlib.suppress(OSError):
            os.unlink(name)


def object_store(target: TargetSpec, environ: Mapping[str, str]) -> dict[str, Any]:
    """The endpoint and the credential source a run on `target` would use: names of options
    and variables only, never a value but the endpoint's URL."""
    options = {k.lower(): v for k, v in target.options.items()}

    def first(settings: Sequence[Setting]) -> tuple[Setting, str] | None:
        for setting in settings:
            if options.get(setting.key):
                return setting, f"--store-option {setting.key}"
            if environ.get(setting.variable):
                return setting, f"{setting.variable} in the environment"
        return None

    traits = target.traits
    facts: dict[str, Any] = {"url": target.url, "kind": target.kind}
    endpoint = first(traits.endpoints)
    emulated = traits.emulator is not None and first((traits.emulator[0],)) is not None
    if endpoint is not None:
        setting = endpoint[0]
        facts["endpoint"] = options.get(setting.key) or environ.get(setting.variable)
    elif emulated and traits.emulator is not None:
        facts["endpoint"] = traits.emulator[1]
    else:
        facts["endpoint"] = "the provider's default"
    credentials = first(traits.credentials)
    if credentials is not None:
        facts["credentials"] = f"{credentials[0].means} ({credentials[1]})"
    elif traits.no_credentials:
        facts["credentials"] = traits.no_credentials
    else:
        facts["credentials"] = (
            "none found: a run is refused unless this is a VM of the provider (its metadata "
            "service)"
        )
    return facts


def command_line(argv: Sequence[str]) -> list[str]:
    """`argv` as a document records it: the values of --store-option (credentials) hidden."""
    shown: list[str] = []
    hide_next = False
    for word in argv:
        if hide_next:
            key = word.partition("=")[0]
            shown.append(f"{key}=<hidden>")
            hide_next = False
        elif word == "--store-option":
            shown.append(word)
            hide_next = True
        elif word.startswith("--store-option="):
            key = word.removeprefix("--store-option=").partition("=")[0]
            shown.append(f"--store-option={key}=<hidden>")
        else:
            shown.append(word)
    return shown
