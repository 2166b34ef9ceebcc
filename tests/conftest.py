"""Shared fixtures: the hpcio CLI (in pytest's process where that is safe, else a subprocess),
target directories, documents, engine runs."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple, NoReturn

import pytest
import servers

#: No hpcio command in this suite should come near this; it only stops a hung MPI job.
CLI_TIMEOUT_S = 120
#: Variables by which hpcio decides it already runs inside an MPI job (runner/world.py).
_MPI_PREFIXES = ("OMPI_", "PMI_", "PMIX_", "MPI_LOCALNRANKS", "HPCIO_")


class Completed(NamedTuple):
    returncode: int
    stdout: str
    stderr: str


#: Tests under these directories are all of one kind (the markers are declared in pyproject.toml).
_KIND_BY_DIRECTORY = {
    "mpi": "mpi",
    "targets": "servers",
    "test_servers.py": "servers",
    "cluster": "hosts",
    "ceph": "ceph",
}
#: Fixtures that make a test of a kind wherever it is.
_KIND_BY_FIXTURE = {
    "mpiexec": "mpi",
    "s3_server": "servers",
    "azure_server": "servers",
    "gcs_server": "servers",
    "private_mounts": "root",
    "drops_page_cache": "root",
    "chromium": "browser",
    "cluster": "hosts",
    "four_hosts": "hosts",
    "slurm_cluster": "slurm",
    "ceph_cluster": "ceph",
    "radosgw_server": "ceph",
    "cephfs_dir": "ceph",
}
_KINDS = ("mpi", "servers", "root", "browser", "hosts", "slurm", "ceph")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test mpi, servers, root, browser, hosts or slurm by where it lives and what it
    uses; the rest unit (`pytest -m unit`: no mpiexec, no server, no browser, no root action; the
    unit_guard fixture holds them to the first)."""
    tests = Path(__file__).resolve().parent
    for item in items:
        parts = Path(item.fspath).resolve().relative_to(tests).parts
        kind = _KIND_BY_DIRECTORY.get(parts[0])
        if kind is not None:
            item.add_marker(kind)
        for fixture in getattr(item, "fixturenames", ()):
            if fixture in _KIND_BY_FIXTURE:
                item.add_marker(_KIND_BY_FIXTURE[fixture])
        callspec = getattr(item, "callspec", None)
        if callspec is not None and callspec.params.get("s3_server") == "radosgw":
            item.add_marker("ceph")
        if not any(item.get_closest_marker(k) for k in _KINDS):
            item.add_marker("unit")


@pytest.fixture(autouse=True)
def unit_guard(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """A unit test that starts mpiexec (`hpcio run -n 2` does) fails: it finds on PATH an
    mpiexec that refuses to run. Mark such a test mpi."""
    if request.node.get_closest_marker("unit") is None:
        yield
        return
    global _IN_A_UNIT_TEST
    _IN_A_UNIT_TEST = True
    try:
        yield from _unit_guarded(tmp_path_factory)
    finally:
        _IN_A_UNIT_TEST = False


#: Whether the running test is of the unit layer: only there do one-rank runs go whole in
#: pytest's process (run_whole_in_process); the other layers' runs reach servers, MPI
#: libraries and the engine's runtimes, whose state a process of its own keeps apart.
_IN_A_UNIT_TEST = False


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Say whether the test is of the unit layer before its fixtures are set up, not only once
    unit_guard is: a module's or session's fixture (one run shared by a module's tests) set up
    for a unit test runs its one-rank command in this process as the test itself would."""
    global _IN_A_UNIT_TEST
    _IN_A_UNIT_TEST = item.get_closest_marker("unit") is not None


def _unit_guarded(tmp_path_factory: pytest.TempPathFactory):
    fake = tmp_path_factory.getbasetemp() / "unit-guard-bin"
    if not fake.is_dir():
        fake.mkdir()
        for name in ("mpiexec", "mpirun", "srun"):
            script = fake / name
            script.write_text(
                f"#!/bin/sh\necho 'a test marked unit started {name}: mark it mpi' >&2\nexit 97\n"
            )
            script.chmod(0o755)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PATH", f"{fake}{os.pathsep}{os.environ.get('PATH', '')}")
        yield


def _env() -> dict[str, str]:
    # A pytest started under mpiexec must not make every hpcio it starts believe it is a rank.
    return {k: v for k, v in os.environ.items() if not k.startswith(_MPI_PREFIXES)}


def _without_cloud_settings(environ: dict[str, str]) -> dict[str, str]:
    # A test server's settings must not mix with this machine's (AWS_PROFILE, a CA bundle...).
    return {k: v for k, v in environ.items() if not k.startswith(servers._FOREIGN_PREFIXES)}


def run_cli(
    *args: object,
    launcher: tuple[str, ...] = (),
    timeout: float = CLI_TIMEOUT_S,
    stdout_closed: bool = False,
    env: dict[str, str] | None = None,
) -> Completed:
    """Run `[launcher] python -m hpcio args`; with stdout_closed, its stdout is a pipe nobody
    reads from any more (as in `hpcio ... | head -1` after head has exited). `env` adds to the
    environment (a test server's endpoint and credentials)."""
    command = [*launcher, sys.executable, "-m", "hpcio", *map(str, args)]
    stdout: int = subprocess.PIPE
    if stdout_closed:
        read_end, stdout = os.pipe()
        os.close(read_end)
    try:
        done = subprocess.run(
            command,
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            timeout=timeout,
            env=_env() if env is None else {**_without_cloud_settings(_env()), **env},
            check=False,
        )
    finally:
        if stdout_closed:
            os.close(stdout)
    return Completed(done.returncode, done.stdout or "", done.stderr)


#: Subcommands that only read documents and write files or stdout: no mpiexec, no signal
#: handler, no atexit lock, no os._exit, no environment change. They run in pytest's own process
#: (a `python -m hpcio` costs about 0.2 s of imports; the unit suite starts over a hundred).
IN_PROCESS_COMMANDS = frozenset(
    {"report", "compare", "cost", "template", "trace", "darshan", "completion", "man"}
)
#: Subcommands that check their options in pytest's process and, once they pass, run as a real
#: process: everything before runner/launch.py's entries (parse, validate, probe -o) is safe
#: here; what comes after starts mpiexec, sets signal handlers, takes locks, may os._exit.
#: Every run-making command ends in commands/spine.run, whose launch is one of those entries.
#: Those of WHOLE_IN_PROCESS_COMMANDS run to their end here instead when they run one rank.
CHECKED_IN_PROCESS_COMMANDS = frozenset(
    {"run", "sweep", "suite", "profile", "train", "checkpoint", "replay", "tune"}
)
#: runner/launch.py's entries, through which every command starts running.
_LAUNCH_ENTRIES = ("launch_or_join", "launch_groups", "join")
#: Of CHECKED_IN_PROCESS_COMMANDS, those that run whole in pytest's process when they run one
#: rank (run_whole_in_process): one rank runs in the process that parsed the command, without
#: mpiexec; a signal's os._exit is a rank's under mpiexec only; what a process's end undoes
#: (environment, handlers, locks) run_whole_in_process undoes. A test of the process itself
#: (signals, exit codes as a user gets them, a pipe for stdout) uses hpcio_process.
WHOLE_IN_PROCESS_COMMANDS = frozenset(
    {"run", "sweep", "profile", "train", "checkpoint", "tune", "replay", "suite"}
)
#: Subcommands that reach storage through the engine but start no MPI job, set no signal
#: handler and take no lock: they run in pytest's process in a unit test (whose targets are
#: directories, memory:// and null://), as a real process in the layers that reach servers.
UNIT_IN_PROCESS_COMMANDS = frozenset({"clean"})
#: Subcommands that check their options in pytest's process and, once they pass, run as a real
#: process from where they would probe the machine: `hpcio env` imports mpi4py (which starts
#: MPI in the process that imports it) and runs `mpiexec --version`.
CHECKED_UNTIL_PROBE_COMMANDS = frozenset({"env"})


class _WouldRun(BaseException):
    """Raised in place of a launch entry (a BaseException: hpcio's own handlers let it by)."""


def run_in_process(
    *args: object, stop_at_launch: bool = False, env: dict[str, str] | None = None
) -> Completed | None:
    """hpcio.cli.main(args) with stdout and stderr captured and SystemExit made a return code,
    as `python -m hpcio args` would give them, in the environment run_cli gives (`env` added
    as run_cli adds it). An uncaught exception is not made a returncode: it propagates and
    fails the test, as a traceback on a real process would. With stop_at_launch, None once the
    command would start running (or, for CHECKED_UNTIL_PROBE_COMMANDS, probe the machine)."""
    from hpcio import cli
    from hpcio.runner import launch, machine

    def would_run(*_: object, **__: object) -> NoReturn:
        raise _WouldRun

    stdout, stderr = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        environ = _env() if env is None else {**_without_cloud_settings(_env()), **env}
        for name in os.environ.keys() - environ.keys():
            patch.delenv(name)
        for name, value in environ.items():
            if os.environ.get(name) != value:
                patch.setenv(name, value)
        if stop_at_launch:
            for entry in _LAUNCH_ENTRIES:
                patch.setattr(launch, entry, would_run)
            patch.setattr(machine, "software", would_run)
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                returncode = cli.main([str(arg) for arg in args])
            except SystemExit as exit_:
                returncode = _exit_code(exit_.code, stderr)
            except _WouldRun:
                return None
    return Completed(returncode, stdout.getvalue(), stderr.getvalue())


def run_whole_in_process(*args: object) -> Completed | None:
    """A run-making command of one rank, run to its end in pytest's process as
    run_in_process runs the others, with what a process's end would undo undone here: the
    environment (the journal's and the lock's variables), SIGINT's and SIGTERM's handlers, the
    target locks it holds (released as at its exit), sys.argv (a document records the command
    line). What stays: glibc's malloc thresholds (runner/heap.py sets them as every rank's).
    None when it would start mpiexec after all: the caller runs it as a real process."""
    from hpcio.runner import lock, mpiexec

    def would_launch(*_: object, **__: object) -> NoReturn:
        raise _WouldRun

    environ = dict(os.environ)
    handlers = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    argv = [str(arg) for arg in args]
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(mpiexec, "relaunch", would_launch)
            patch.setattr(sys, "argv", [str(Path(cli_main_file())), *argv])
            stdout, stderr = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
                try:
                    returncode = _cli_main(argv)
                except SystemExit as exit_:
                    returncode = _exit_code(exit_.code, stderr)
                except _WouldRun:
                    return None
            return Completed(returncode, stdout.getvalue(), stderr.getvalue())
    finally:
        lock.release_all()
        for number, handler in handlers.items():
            signal.signal(number, handler)
        os.environ.clear()
        os.environ.update(environ)


def cli_main_file() -> str:
    """What sys.argv[0] is in `python -m hpcio`: hpcio/__main__.py."""
    import hpcio

    return str(Path(hpcio.__file__).with_name("__main__.py"))


def _cli_main(argv: list[str]) -> int:
    from hpcio import cli

    with pytest.MonkeyPatch.context() as patch:
        for name in os.environ.keys() - _env().keys():
            patch.delenv(name)
        return cli.main(argv)


def _runs_one_rank_here(args: tuple[object, ...]) -> bool:
    """No -n above 1 (that starts mpiexec), and no `-o -` or `-o /dev/...` (the process's own
    stdout, or a pipe, which the process itself must meet)."""
    words = [str(arg) for arg in args]
    for flag, value in zip(words, [*words[1:], ""], strict=True):
        if flag in ("-n", "--ranks") and value != "1":
            return False
        if flag in ("-o", "--output") and (value == "-" or value.startswith("/dev/")):
            return False
        if flag.startswith("-n") and flag != "-n":  # -n2
            return False
        if flag.startswith("--ranks=") and flag != "--ranks=1":
            return False
        if flag.startswith(("-o-", "-o/dev/", "--output=-", "--output=/dev/")):
            return False
    return True


def _exit_code(code: object, stderr: io.StringIO) -> int:
    # What the interpreter does with SystemExit(code) at a process's end.
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=stderr)
    return 1


def run_cli_fast(
    *args: object,
    launcher: tuple[str, ...] = (),
    timeout: float = CLI_TIMEOUT_S,
    stdout_closed: bool = False,
    env: dict[str, str] | None = None,
) -> Completed:
    """run_cli, in this process where that is safe: a command of IN_PROCESS_COMMANDS, or in a
    unit test of UNIT_IN_PROCESS_COMMANDS, or of WHOLE_IN_PROCESS_COMMANDS on one rank, or one
    of CHECKED_IN_PROCESS_COMMANDS until it would start running, or of
    CHECKED_UNTIL_PROBE_COMMANDS until it would probe the machine; never when something about
    the process itself (a launcher, a closed stdout) is asked for. With an environment (`env`,
    set here for the call), only the checks before a command of CHECKED_IN_PROCESS_COMMANDS or
    CHECKED_UNTIL_PROBE_COMMANDS would start run here."""
    command = str(args[0]) if args else ""
    checked = CHECKED_IN_PROCESS_COMMANDS | CHECKED_UNTIL_PROBE_COMMANDS
    if not launcher and not stdout_closed and env is not None and command in checked:
        refused = run_in_process(*args, stop_at_launch=True, env=env)
        if refused is not None:
            return refused
    if not launcher and not stdout_closed and env is None:
        if command in IN_PROCESS_COMMANDS or (
            _IN_A_UNIT_TEST and command in UNIT_IN_PROCESS_COMMANDS
        ):
            return run_in_process(*args)  # type: ignore[return-value]
        if _IN_A_UNIT_TEST and command in WHOLE_IN_PROCESS_COMMANDS and _runs_one_rank_here(args):
            done = run_whole_in_process(*args)
            if done is not None:
                return done
        elif command in checked:
            refused = run_in_process(*args, stop_at_launch=True)
            if refused is not None:
                return refused
    return run_cli(*args, launcher=launcher, timeout=timeout, stdout_closed=stdout_closed, env=env)


@pytest.fixture(scope="session")
def hpcio() -> Callable[..., Completed]:
    """hpcio(*args, launcher=(), stdout_closed=False, env=None) runs `python -m hpcio args` ->
    (returncode, stdout, stderr), in this process where that is safe (run_cli_fast).
    tests/test_cli_errors.py keeps every command on a real process."""
    return run_cli_fast


@pytest.fixture(scope="session")
def hpcio_process() -> Callable[..., Completed]:
    """hpcio, always as a real `python -m hpcio` process (exit codes and stderr as users get
    them, tracebacks included)."""
    return run_cli


@pytest.fixture(scope="session")
def hpcio_in_process() -> Callable[..., Completed]:
    """hpcio.cli.main in this process (run_in_process): for IN_PROCESS_COMMANDS, or with
    stop_at_launch=True for CHECKED_IN_PROCESS_COMMANDS."""
    return run_in_process


@pytest.fixture
def target_dir(tmp_path: Path) -> Path:
    """An empty directory to use as a file:// target."""
    path = tmp_path / "target"
    path.mkdir()
    return path


def url(path: Path) -> str:
    return f"file://{path}"


@pytest.fixture(scope="session")
def file_url() -> Callable[[Path], str]:
    """file_url(path) -> 'file:///abs/path'."""
    return url


def documents(path: Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


@pytest.fixture(scope="session")
def read_documents() -> Callable[[Path], list[dict]]:
    """read_documents(path) -> every JSON Lines document in `path`, as plain dicts."""
    return documents


def the_error_line(result: Completed) -> str:
    """The one stderr line of a failed command; fails unless it is exactly one 'hpcio: error:'."""
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("hpcio: error: "), lines[0]
    return lines[0]


@pytest.fixture(scope="session")
def error_line() -> Callable[[Completed], str]:
    return the_error_line


def _open_mpi(mpiexec: str) -> bool:
    out = subprocess.run(
        [mpiexec, "--version"], capture_output=True, text=True, timeout=30, check=False
    )
    return "Open MPI" in out.stdout or "OpenRTE" in out.stdout


@pytest.fixture(scope="session")
def mpiexec() -> Callable[[int], tuple[str, ...]]:
    """mpiexec(n) -> the launcher prefix a user would type to start n ranks on this machine."""
    found = shutil.which("mpiexec") or shutil.which("mpirun")
    if found is None:
        pytest.skip("no mpiexec on PATH")
    extra: tuple[str, ...] = ()
    if _open_mpi(found):
        extra = ("--oversubscribe", "-q") + (("--allow-run-as-root",) if os.geteuid() == 0 else ())
    return lambda n: (found, *extra, "-n", str(n))


@pytest.fixture(scope="session")
def private_mounts() -> None:
    """Mounting in a private mount namespace needs root and unshare(1)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to mount in a private mount namespace")
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare(1) for a private mount namespace")
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, timeout=30, check=False)
    if probe.returncode != 0:
        pytest.skip(f"unshare -m is refused here: {probe.stderr.decode().strip()}")


#: Set to 1 to let tests drop the host's page cache (hpcio --drop-caches, as root).
DROP_CACHES_VARIABLE = "HPCIO_TEST_DROP_CACHES"


@pytest.fixture
def drops_page_cache() -> None:
    """For a test that makes hpcio write /proc/sys/vm/drop_caches: that empties the page cache
    of the whole host, under everyone else's programs, so it runs only when asked."""
    if os.environ.get(DROP_CACHES_VARIABLE) != "1":
        pytest.skip(f"drops the host's page cache: set {DROP_CACHES_VARIABLE}=1 to run it")
    if os.geteuid() != 0:
        pytest.skip("dropping the page cache needs root")


@pytest.fixture
def engine_run(target_dir: Path) -> Callable[..., Any]:
    """engine_run(plan, seed=1, verify=False, in_flight=1, seconds=None) runs `plan` on
    `target_dir` through one engine Executor (as runner/phase.py does; `seconds`: time-based)
    and returns its _engine.Figures."""
    from hpcio import _engine

    target = _engine.Target(url(target_dir))

    def run(plan, *, seed=1, verify=False, in_flight=1, seconds: float | None = None):
        t0_ns = _engine.clock_ns()
        executor = _engine.Executor(
            target, seed=seed, t0_ns=t0_ns, in_flight=in_flight, verify=verify
        )
        until_ns = None if seconds is None else t0_ns + int(seconds * 1e9)
        executor.run(plan.for_engine(), until_ns=until_ns)
        return executor.figures()

    return run


# -- local object-storage servers (tests/servers.py; installed by scripts/servers) -----------


def _serve(kind: type[servers.LocalServer], tmp_path_factory: pytest.TempPathFactory):
    missing = kind.missing()
    if missing:
        pytest.skip(missing)
    with servers.running(kind, tmp_path_factory.mktemp(kind.name)) as server:
        yield server


@pytest.fixture(scope="session")
def versitygw_server(tmp_path_factory: pytest.TempPathFactory):
    yield from _serve(servers.S3Server, tmp_path_factory)


@pytest.fixture(scope="session")
def s3_server(request: pytest.FixtureRequest):
    """versitygw on 127.0.0.1 with bucket 'hpcio-test' (servers.S3Server): .env for
    object_store and the SDKs, .url(prefix) -> s3://hpcio-test/prefix, .client() -> boto3.
    One for the session; stopped by PID at its end. A test parametrized with
    `@pytest.mark.parametrize("s3_server", servers.S3_GATEWAYS, indirect=True)` also runs
    against radosgw (servers.RadosGateway, the ceph_cluster's; marked ceph)."""
    if getattr(request, "param", "versitygw") == "radosgw":
        return request.getfixturevalue("radosgw_server")
    return request.getfixturevalue("versitygw_server")


@pytest.fixture(scope="session")
def ceph_cluster():
    """A one-node Ceph cluster (servers.CephCluster: radosgw, a ceph-fuse mount), started once
    for the session when a ceph test is selected, stopped by PID at its end. Needs root."""
    missing = servers.CephCluster.missing()
    if missing:
        pytest.skip(missing)
    with servers.CephCluster() as cluster:
        yield cluster


@pytest.fixture(scope="session")
def radosgw_server(ceph_cluster: servers.CephCluster):
    """The ceph_cluster's radosgw with bucket 'hpcio-test', used as s3_server is."""
    return ceph_cluster.gateway()


@pytest.fixture
def cephfs_dir(ceph_cluster: servers.CephCluster, tmp_path: Path):
    """A fresh directory on the ceph-fuse mount (removed after the test)."""
    path = ceph_cluster.mount / tmp_path.name
    path.mkdir()
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def azure_server(tmp_path_factory: pytest.TempPathFactory):
    """Azurite on 127.0.0.1 with container 'hpcio-test' (servers.AzuriteServer): .env,
    .url(prefix) -> az://hpcio-test/prefix, .container_client() -> azure-storage-blob."""
    yield from _serve(servers.AzuriteServer, tmp_path_factory)


@pytest.fixture(scope="session")
def gcs_server(tmp_path_factory: pytest.TempPathFactory):
    """fake-gcs-server on 127.0.0.1 with bucket 'hpcio-test' (servers.FakeGcsServer): .env,
    .url(prefix) -> gs://hpcio-test/prefix, .upload/.download/.list through the JSON API.
    object_store can only READ from it (see servers.FakeGcsServer)."""
    yield from _serve(servers.FakeGcsServer, tmp_path_factory)
