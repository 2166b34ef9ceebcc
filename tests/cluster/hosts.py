"""Several "hosts" on this one machine, for tests of what only a multi-node job exercises:
placement, node counting, --reorder across nodes, per-node page-cache drops, clean-up after a
rank lost on another node.

Each host is a network namespace (its own address on a veth pair to a bridge that lives in a
namespace of its own, on a private subnet that is never routed anywhere) under a UTS namespace
(its own host name), running Debian's sshd on its own config, host key and port, with a
key-based login for root; the keys live in a temporary directory. Open MPI's ssh launcher
starts ranks on them from a hostfile, as on a cluster without a scheduler. The hosts share
this machine's mount namespace, so every one sees the same files: /work/main/.venv's python,
the tests' PYTHONPATH, and the target directories.

What this does NOT simulate: the hosts share one kernel and one page cache, so a read of
"another node's" data may still come from RAM here, and a page-cache drop on one host drops
it for all. These tests check placement and logic, never cache or bandwidth figures.

Everything made here is removed by name and PID when the fixture ends, also when a test
failed: the processes that ran inside a host's namespaces (sshd and the sessions and ranks it
started), then the namespaces, which take their links and the bridge with them.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

#: A private subnet: the bridge that joins the hosts has no uplink, so nothing leaves it.
SUBNET = "10.231.15"
#: sshd of host i listens on this port + i (ports are per namespace, so any would do; distinct
#: ones keep a host's log lines and ssh config entries apart).
SSH_PORT_BASE = 2200
#: Variables by which hpcio and Open MPI decide they already run inside an MPI job.
_MPI_PREFIXES = ("OMPI_", "PMI_", "PMIX_", "MPI_LOCALNRANKS", "HPCIO_")
_SSHD = "/usr/sbin/sshd"
_SETUP_TIMEOUT_S = 30
#: The hpcio under test, for the ranks on every host (mpiexec -x PYTHONPATH hands it on).
_HPCIO_SOURCE = str(Path(__file__).resolve().parents[2] / "python")


@dataclass(frozen=True)
class Host:
    name: str
    address: str
    port: int
    netns: str
    sshd_pid: int

    def namespaces(self) -> list[str]:
        """nsenter's options that enter this host (its network and its host name)."""
        return [f"--net=/run/netns/{self.netns}", f"--uts=/proc/{self.sshd_pid}/ns/uts"]


@dataclass(frozen=True)
class Cluster:
    hosts: tuple[Host, ...]
    hostfile: Path
    ssh_config: Path
    #: ranks a host takes before the next one gets any (the hostfile's slots=)
    slots: int

    @property
    def subnet(self) -> str:
        return f"{SUBNET}.0/24"

    def mpiexec(self, *options: str) -> list[str]:
        """Open MPI's mpiexec as a cluster without a scheduler runs it: the hostfile, ssh with
        this cluster's config, its out-of-band and TCP traffic on the bridge's subnet, and the
        test's PYTHONPATH handed to the ranks on every host."""
        return [
            "mpiexec", "--allow-run-as-root", "-q", "--hostfile", str(self.hostfile),
            "--mca", "plm_rsh_agent", f"ssh -F {self.ssh_config}",
            "--mca", "oob_tcp_if_include", self.subnet,
            "--mca", "btl_tcp_if_include", self.subnet,
            "-x", "PYTHONPATH", *options,
        ]  # fmt: skip

    def launcher(self, *options: str) -> str:
        """mpiexec() as one HPCIO_MPIEXEC value (quoted where a word has spaces)."""
        import shlex

        return shlex.join(self.mpiexec(*options))

    def on(self, host: int, command: Sequence[str]) -> list[str]:
        """`command` run on host `host` (0: the first)."""
        return ["nsenter", *self.hosts[host].namespaces(), "--", *command]

    def start(
        self, command: Sequence[str], env: dict[str, str] | None = None, host: int = 0
    ) -> subprocess.Popen[str]:
        """`command` on `host` in a session of its own, as a batch job's shell starts it,
        without the MPI variables of whatever runs pytest."""
        clean = {k: v for k, v in os.environ.items() if not k.startswith(_MPI_PREFIXES)}
        clean["PYTHONPATH"] = _HPCIO_SOURCE
        return subprocess.Popen(
            self.on(host, command), env={**clean, **(env or {})}, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, start_new_session=True,
        )  # fmt: skip

    def run(
        self, command: Sequence[str], env: dict[str, str] | None = None, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        job = self.start(command, env)
        try:
            out, err = job.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _end_session(job)
            raise
        return subprocess.CompletedProcess(job.args, job.returncode, out, err)

    def processes_on(self, host: int) -> list[int]:
        """Every process running in host `host`'s network namespace (sshd among them)."""
        return _processes_in(_netns_inode(self.hosts[host].netns))


def missing() -> str | None:
    """Why hosts cannot be made here, in one line; None when they can."""
    if not sys.platform.startswith("linux"):
        return "simulated hosts need Linux namespaces"
    if os.geteuid() != 0:
        return "simulated hosts need root (network and UTS namespaces)"
    for program in ("ip", "nsenter", "unshare", "ssh", "ssh-keygen", "mpiexec"):
        if shutil.which(program) is None:
            return f"simulated hosts need {program} on PATH"
    if not os.access(_SSHD, os.X_OK):
        return f"simulated hosts need {_SSHD} (Debian's openssh-server; scripts/setup installs it)"
    version = subprocess.run(["mpiexec", "--version"], capture_output=True, text=True, check=False)
    if "Open MPI" not in version.stdout and "OpenRTE" not in version.stdout:
        return "simulated hosts are launched with Open MPI's ssh launcher; mpiexec is not it"
    return None


@contextlib.contextmanager
def cluster(directory: Path, count: int = 2, slots: int = 2) -> Iterator[Cluster]:
    """`count` (2 to 4) hosts named node1.. with `slots` ranks each in the hostfile; keys,
    configs and logs in `directory`. Raises RuntimeError where a namespace cannot be made
    (the caller skips)."""
    assert 2 <= count <= 4
    tag = f"hpcio-{os.getpid()}-{time.monotonic_ns() % 100000}"
    switch = f"{tag}-sw"
    made: list[str] = []  # namespaces, removed in reverse
    sshd: list[subprocess.Popen[bytes]] = []
    hosts: list[Host] = []
    try:
        _ip("netns", "add", switch)
        made.append(switch)
        _ip("-n", switch, "link", "add", "br0", "type", "bridge")
        _ip("-n", switch, "link", "set", "br0", "up")
        keys = _keys(directory)
        for i in range(1, count + 1):
            netns = f"{tag}-h{i}"
            _ip("netns", "add", netns)
            made.append(netns)
            _ip("-n", netns, "link", "set", "lo", "up")
            _ip("link", "add", f"h{i}", "netns", switch, "type", "veth",
                "peer", "name", "eth0", "netns", netns)  # fmt: skip
            _ip("-n", switch, "link", "set", f"h{i}", "master", "br0", "up")
            address = f"{SUBNET}.{10 + i}"
            _ip("-n", netns, "addr", "add", f"{address}/24", "dev", "eth0")
            _ip("-n", netns, "link", "set", "eth0", "up")
            name, port = f"node{i}", SSH_PORT_BASE + i
            config = directory / f"sshd-{name}.conf"
            config.write_text(_sshd_config(address, port, keys))
            log = open(directory / f"sshd-{name}.log", "wb")  # noqa: SIM115 (sshd keeps it)
            # nsenter, unshare and sh each exec the next: the PID is sshd's.
            daemon = subprocess.Popen(
                ["nsenter", f"--net=/run/netns/{netns}", "--", "unshare", "--uts", "--",
                 "sh", "-c", f'hostname {name} && exec {_SSHD} -D -e -f "$0"', str(config)],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
            )  # fmt: skip
            log.close()
            sshd.append(daemon)
            hosts.append(Host(name, address, port, netns, daemon.pid))
        ssh_config = directory / "ssh_config"
        ssh_config.write_text(_ssh_config(hosts, keys))
        hostfile = directory / "hostfile"
        hostfile.write_text("".join(f"{h.address} slots={slots}\n" for h in hosts))
        made_cluster = Cluster(tuple(hosts), hostfile, ssh_config, slots)
        for i, host in enumerate(hosts):
            _wait_for_login(made_cluster, i, host, directory)
        yield made_cluster
    finally:
        inodes = [_netns_inode(n) for n in made]
        for daemon in sshd:
            with contextlib.suppress(ProcessLookupError):
                daemon.send_signal(signal.SIGTERM)
        for inode in inodes:
            for pid in _processes_in(inode):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)  # a rank or session a test left behind
        for daemon in sshd:
            try:
                daemon.wait(timeout=10)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait()
        for netns in reversed(made):
            subprocess.run(["ip", "netns", "del", netns], capture_output=True, check=False)


def _wait_for_login(made: Cluster, index: int, host: Host, directory: Path) -> None:
    """Until `host` answers ssh from the first host with its own name."""
    deadline = time.monotonic() + _SETUP_TIMEOUT_S
    said = ""
    while time.monotonic() < deadline:
        login = subprocess.run(
            made.on(0, ["ssh", "-F", str(made.ssh_config), host.address, "hostname"]),
            capture_output=True, text=True, timeout=_SETUP_TIMEOUT_S, check=False,
        )  # fmt: skip
        if login.returncode == 0 and login.stdout.strip() == host.name:
            return
        said = (login.stderr or login.stdout).strip()
        time.sleep(0.1)
    log = (directory / f"sshd-{host.name}.log").read_text(errors="replace").strip()
    raise RuntimeError(f"ssh to {host.name} failed: {said or '?'}; sshd said: {log or '-'}")


def _keys(directory: Path) -> dict[str, Path]:
    """A host key (shared by the hosts) and root's login key, with its authorized_keys."""
    keys = {}
    for name in ("host_key", "login_key"):
        keys[name] = directory / name
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(keys[name])],
            check=True, capture_output=True, timeout=_SETUP_TIMEOUT_S,
        )  # fmt: skip
    keys["authorized_keys"] = directory / "authorized_keys"
    shutil.copy(f"{keys['login_key']}.pub", keys["authorized_keys"])
    # sshd refuses to start without its privilege-separation directory (the system's, kept).
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
    return keys


def _sshd_config(address: str, port: int, keys: dict[str, Path]) -> str:
    return (
        f"ListenAddress {address}\nPort {port}\nHostKey {keys['host_key']}\n"
        f"AuthorizedKeysFile {keys['authorized_keys']}\nPidFile none\n"
        "PermitRootLogin prohibit-password\nPasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\nUsePAM no\nPrintMotd no\n"
        # The keys sit in pytest's temporary directory, whose modes sshd would otherwise judge.
        "StrictModes no\n"
    )


def _ssh_config(hosts: Sequence[Host], keys: dict[str, Path]) -> str:
    each = "".join(f"Host {h.address} {h.name}\n  HostName {h.address}\n  Port {h.port}\n"
                   for h in hosts)  # fmt: skip
    return each + (
        f"Host *\n  User root\n  IdentityFile {keys['login_key']}\n  IdentitiesOnly yes\n"
        "  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n"
        "  BatchMode yes\n  ConnectTimeout 10\n"
    )


def _ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")


def _netns_inode(netns: str) -> int | None:
    try:
        return os.stat(f"/run/netns/{netns}").st_ino
    except OSError:
        return None


def _processes_in(netns_inode: int | None) -> list[int]:
    """PIDs whose network namespace is the one with this inode (none for None)."""
    if netns_inode is None:
        return []
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                if os.stat(f"/proc/{entry}/ns/net").st_ino == netns_inode:
                    found.append(int(entry))
    return found


def _end_session(job: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(job.pid, signal.SIGKILL)
    job.communicate()
