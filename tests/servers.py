"""Real local object-storage servers for the tests, on 127.0.0.1 and nowhere else.

`scripts/servers install` (run by scripts/test) puts them in .servers/:

| class          | server                           | protocol           | target URL            |
| -------------- | -------------------------------- | ------------------ | --------------------- |
| S3Server       | versitygw (posix backend, a dir) | S3                 | s3://hpcio-test/...   |
| AzuriteServer  | Azurite (blob service only)      | Azure Blob         | az://hpcio-test/...   |
| FakeGcsServer  | fake-gcs-server (filesystem)     | GCS JSON + XML API | gs://hpcio-test/...   |

Each class is a context manager: it starts its server on a free 127.0.0.1 port with explicit
credentials, its data in a temporary directory, waits (bounded) until the server answers a
real HTTP request, creates the bucket/container `bucket`, and on exit stops the process by its
PID (SIGTERM, then SIGKILL after `stop_timeout`). `server.env` holds the variables that point
both the Rust `object_store` crate (the engine builds its stores with `*Builder::from_env()`)
and the official SDKs at the server; `server.environ()` is a whole environment for a
subprocess (hpcio under mpiexec) with every other cloud variable and proxy removed. Explicit
credentials everywhere mean no client ever asks a cloud metadata service (169.254.169.254)
for some.

object_store 0.14 configuration, per server (the env var, lowercased, is also the config key
for `with_config` / hpcio's --store-option, except where noted):

S3 (versitygw):
    AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY   the server's root credentials
    AWS_ENDPOINT=http://127.0.0.1:PORT          (AWS_ENDPOINT_URL is an alias, read by boto3 too)
    AWS_REGION=us-east-1
    AWS_ALLOW_HTTP=true
    AWS_VIRTUAL_HOSTED_STYLE_REQUEST=false      path-style: http://127.0.0.1:PORT/bucket/key
    AWS_EC2_METADATA_DISABLED=true              for AWS SDKs; object_store ignores it (it never
                                                looks up credentials when keys are given)

Azure (Azurite):
    AZURE_STORAGE_ACCOUNT_NAME=devstoreaccount1
    AZURE_STORAGE_ACCOUNT_KEY=<the well-known dev key>
    AZURE_STORAGE_USE_EMULATOR=true
    AZURITE_BLOB_STORAGE_URL=http://127.0.0.1:PORT   env var only, no config key: with
        use_emulator, MicrosoftAzureBuilder::build() reads it from the process environment
        (default http://127.0.0.1:10000) and then ignores azure_storage_endpoint; it puts the
        account name as the first path segment (http://127.0.0.1:PORT/devstoreaccount1/c/k).
    Without the env var, config keys alone work too (see AzuriteServer.store_options):
        azure_storage_account_name, azure_storage_account_key,
        azure_storage_endpoint=http://127.0.0.1:PORT/devstoreaccount1, azure_allow_http=true
        (and use_emulator unset or false).

GCS (fake-gcs-server):
    GOOGLE_SERVICE_ACCOUNT_KEY={"disable_oauth": true, "gcs_base_url": "http://127.0.0.1:PORT",
        "private_key": "", "private_key_id": "", "client_email": ""}
        disable_oauth makes object_store send no token and fetch none (no OAuth, no metadata
        server); a key, not a file, so nothing is written outside the temp dir.
    GOOGLE_BASE_URL=http://127.0.0.1:PORT  (google_base_url; also in the key above)
    GOOGLE_ALLOW_HTTP=true
    STORAGE_EMULATOR_HOST=http://127.0.0.1:PORT  for Google's own SDKs
    What fake-gcs-server accepts from object_store: see FakeGcsServer.
"""

from __future__ import annotations

import contextlib
import ctypes
import http.client
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar

REPO = Path(__file__).resolve().parents[1]
#: Where scripts/servers installs the servers.
SERVERS_DIR = REPO / ".servers"
LOOPBACK = "127.0.0.1"
#: The bucket / container each server starts with.
DEFAULT_BUCKET = "hpcio-test"
#: Environment variables that could point a client at a real cloud or through a proxy.
_FOREIGN_PREFIXES = ("AWS_", "AZURE_", "AZURITE_", "GOOGLE_", "GCS_", "STORAGE_EMULATOR_HOST")
_PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


class ServerError(RuntimeError):
    """A server did not start, or did not answer in time; carries the tail of its log."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now (the server may still lose a
    race for it; start() then retries on another port)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


def _die_with_parent() -> None:
    """In the child, before exec: get SIGTERM when the test process dies, even by SIGKILL, so
    no server outlives a killed pytest (Linux prctl PR_SET_PDEATHSIG). The signal comes when
    the *thread* that started the server ends: start servers from the main thread (pytest's
    fixtures do), not from a short-lived worker thread."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG


def pid_alive(pid: int) -> bool:
    """Whether a process with this PID exists (a reaped child no longer does)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _socket_inodes(pid: int) -> set[str]:
    inodes = set()
    fd_dir = Path(f"/proc/{pid}/fd")
    for fd in fd_dir.iterdir():
        with contextlib.suppress(OSError):
            target = os.readlink(fd)
            if target.startswith("socket:["):
                inodes.add(target[len("socket:[") : -1])
    return inodes


def _decode_address(hex_address: str) -> tuple[str, int]:
    host_hex, port_hex = hex_address.split(":")
    raw = bytes.fromhex(host_hex)
    if len(raw) == 4:
        host = socket.inet_ntop(socket.AF_INET, raw[::-1])
    else:  # /proc/net/tcp6: four little-endian 32-bit words
        words = b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4))
        host = socket.inet_ntop(socket.AF_INET6, words)
    return host, int(port_hex, 16)


def tcp_sockets(pid: int) -> list[dict[str, Any]]:
    """The TCP sockets process `pid` holds, from /proc (Linux): dicts with `local` and
    `remote` (host, port) and `state` ('LISTEN', 'ESTABLISHED', ...)."""
    states = {"0A": "LISTEN", "01": "ESTABLISHED", "06": "TIME_WAIT", "08": "CLOSE_WAIT"}
    inodes = _socket_inodes(pid)
    found = []
    for table in (f"/proc/{pid}/net/tcp", f"/proc/{pid}/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                if fields[9] in inodes:
                    found.append(
                        {
                            "local": _decode_address(fields[1]),
                            "remote": _decode_address(fields[2]),
                            "state": states.get(fields[3], fields[3]),
                        }
                    )
    return found


class LocalServer:
    """One server process on 127.0.0.1 with its data in a temporary directory.

    Subclasses say how to start the server (`_command`), how to create a bucket, and which
    variables point clients at it (`env`). Use as a context manager, or start()/stop().
    """

    #: Short name, used for the data directory and the log file.
    name: ClassVar[str]
    #: Target URL scheme of hpcio for this kind of store.
    scheme: ClassVar[str]

    def __init__(
        self,
        root: Path | None = None,
        *,
        bucket: str = DEFAULT_BUCKET,
        startup_timeout: float = 30.0,
        stop_timeout: float = 10.0,
    ) -> None:
        """`root`: a directory for the server's data and log (a fresh temporary directory,
        removed on stop, when None)."""
        self.bucket = bucket
        self.startup_timeout = startup_timeout
        self.stop_timeout = stop_timeout
        self._given_root = root
        self.root: Path | None = None
        self.port: int | None = None
        self.process: subprocess.Popen[bytes] | None = None
        #: Seconds from starting the process to its first HTTP answer.
        self.startup_seconds: float | None = None

    # -- what subclasses provide -------------------------------------------------------------

    @classmethod
    def executable(cls) -> Path:
        """The installed program (a binary, or the script node runs)."""
        raise NotImplementedError

    @classmethod
    def missing(cls) -> str | None:
        """Why this server cannot start here (not installed), or None."""
        if not cls.executable().exists():
            return f"{cls.name} is not installed in {SERVERS_DIR}: run scripts/servers install"
        return None

    def _command(self, port: int, data: Path) -> list[str]:
        raise NotImplementedError

    #: A path that answers an unauthenticated GET with some HTTP status once the server is up.
    _ready_path: ClassVar[str] = "/"

    def _create_bucket(self) -> None:
        raise NotImplementedError

    @property
    def env(self) -> dict[str, str]:
        """Variables pointing object_store and the official SDKs at this server."""
        raise NotImplementedError

    @property
    def store_options(self) -> dict[str, str]:
        """object_store config keys (hpcio --store-option key=value) reaching this server
        without any of `env`."""
        raise NotImplementedError

    # -- common ------------------------------------------------------------------------------

    @property
    def pid(self) -> int:
        """The server's process ID."""
        assert self.process is not None, "not started"
        return self.process.pid

    @property
    def endpoint(self) -> str:
        """http://127.0.0.1:PORT"""
        assert self.port is not None, "not started"
        return f"http://{LOOPBACK}:{self.port}"

    @property
    def data_dir(self) -> Path:
        assert self.root is not None, "not started"
        return self.root / "data"

    @property
    def log_path(self) -> Path:
        assert self.root is not None, "not started"
        return self.root / f"{self.name}.log"

    def url(self, prefix: str = "") -> str:
        """hpcio's target URL for `prefix` in this server's bucket, e.g. s3://hpcio-test/run1."""
        return f"{self.scheme}://{self.bucket}/{prefix}".rstrip("/")

    def environ(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """An environment for a subprocess: `base` (default os.environ) without any cloud or
        proxy variable, plus `env`, plus NO_PROXY for the loopback address."""
        base = dict(os.environ if base is None else base)
        clean = {
            key: value
            for key, value in base.items()
            if not key.startswith(_FOREIGN_PREFIXES) and key.lower() not in _PROXY_VARIABLES
        }
        clean.update(self.env)
        clean["NO_PROXY"] = clean["no_proxy"] = f"{LOOPBACK},localhost"
        return clean

    def log_tail(self, lines: int = 30) -> str:
        """The last lines the server printed."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def start(self) -> LocalServer:
        """Start the server, wait until it answers, create the bucket. Retries on another port
        when the chosen one was taken in the meantime."""
        missing = self.missing()
        if missing:
            raise ServerError(missing)
        if self._given_root is None:
            self.root = Path(tempfile.mkdtemp(prefix=f"hpcio-{self.name}-"))
        else:
            self.root = Path(self._given_root)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        for attempt in range(3):
            self.port = free_port()
            try:
                self._launch()
                break
            except ServerError:
                taken = "address already in use" in self.log_tail().lower()
                self._stop_process()
                if not taken or attempt == 2:
                    self._remove_root()
                    raise
        try:
            self._create_bucket()
        except BaseException:
            self.stop()
            raise
        return self

    def _launch(self) -> None:
        command = self._command(self.port, self.data_dir)
        started = time.monotonic()
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.root,
                env=self._server_environ(),
                preexec_fn=_die_with_parent if sys.platform == "linux" else None,
            )
        deadline = started + self.startup_timeout
        while True:
            if self.process.poll() is not None:
                raise ServerError(
                    f"{self.name} exited with status {self.process.returncode} while starting:\n"
                    f"{self.log_tail()}"
                )
            if self._answers():
                self.startup_seconds = time.monotonic() - started
                return
            if time.monotonic() > deadline:
                raise ServerError(
                    f"{self.name} did not answer on {self.endpoint} within "
                    f"{self.startup_timeout} s:\n{self.log_tail()}"
                )
            time.sleep(0.01)

    def _server_environ(self) -> dict[str, str]:
        """The server's own environment: the caller's, less its cloud and proxy variables."""
        return {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(_FOREIGN_PREFIXES) and key.lower() not in _PROXY_VARIABLES
        }

    def _answers(self) -> bool:
        """Whether the server answers an HTTP GET of `_ready_path` (any status will do)."""
        if self.endpoint.startswith("https://"):
            unverified = ssl._create_unverified_context()  # our own self-signed certificate
            connection = http.client.HTTPSConnection(LOOPBACK, self.port, timeout=1.0,
                                                     context=unverified)  # fmt: skip
        else:
            connection = http.client.HTTPConnection(LOOPBACK, self.port, timeout=1.0)
        try:
            connection.request("GET", self._ready_path)
            connection.getresponse().read()
            return True
        except (OSError, http.client.HTTPException):
            return False
        finally:
            connection.close()

    def stop(self) -> None:
        """Stop the server by its PID (SIGTERM, SIGKILL after stop_timeout) and remove a
        temporary data directory this object created."""
        self._stop_process()
        self._remove_root()

    def _stop_process(self) -> None:
        process = self.process
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(self.stop_timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(self.stop_timeout)

    def _remove_root(self) -> None:
        if self._given_root is None and self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        where = self.endpoint if self.port else "not started"
        return f"{type(self).__name__}({where}, bucket={self.bucket!r})"


class S3Server(LocalServer):
    """versitygw serving a directory over S3 (posix backend: a bucket is a directory, an
    object a file). Single-account mode with the root credentials below.

    `tls=True` serves https with a self-signed certificate for 127.0.0.1 made at start (by
    openssl), as real S3 endpoints are: clients are told to accept it (object_store
    allow_invalid_certificates, boto3 verify=False); benchmarks only, never a real cloud.
    """

    def __init__(self, *args: Any, tls: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tls = tls

    name = "versitygw"
    scheme = "s3"
    access_key = "hpcio-test-access-key"
    secret_key = "hpcio-test-secret-key"
    region = "us-east-1"

    @classmethod
    def executable(cls) -> Path:
        return SERVERS_DIR / "bin" / "versitygw"

    def _command(self, port: int, data: Path) -> list[str]:
        command = [
            str(self.executable()),
            "--access", self.access_key,
            "--secret", self.secret_key,
            "--region", self.region,
            "--port", f"{LOOPBACK}:{port}",
            "--quiet",
        ]  # fmt: skip
        if self.tls:
            cert, key = self._certificate()
            command += ["--cert", str(cert), "--key", str(key)]
        command.append("posix")
        if not _has_user_xattrs(data):
            # The posix backend keeps metadata in user xattrs; without them, in a side dir.
            sidecar = data.parent / "sidecar"
            sidecar.mkdir(exist_ok=True)
            command += ["--sidecar", str(sidecar)]
        return [*command, str(data)]

    def _certificate(self) -> tuple[Path, Path]:
        assert self.root is not None, "not started"
        cert, key = self.root / "cert.pem", self.root / "key.pem"
        if not cert.exists():
            subprocess.run(
                ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                 "-nodes", "-days", "1", "-subj", f"/CN={LOOPBACK}",
                 "-addext", f"subjectAltName=IP:{LOOPBACK}",
                 "-keyout", str(key), "-out", str(cert)],
                check=True, capture_output=True,
            )  # fmt: skip
        return cert, key

    @property
    def endpoint(self) -> str:
        """http://127.0.0.1:PORT, or https:// with tls."""
        return super().endpoint.replace("http://", "https://") if self.tls else super().endpoint

    @property
    def env(self) -> dict[str, str]:
        trust = {"AWS_ALLOW_INVALID_CERTIFICATES": "true"} if self.tls else {}
        return {
            **trust,
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "AWS_ENDPOINT": self.endpoint,
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_REGION": self.region,
            "AWS_DEFAULT_REGION": self.region,
            "AWS_ALLOW_HTTP": "true",
            "AWS_VIRTUAL_HOSTED_STYLE_REQUEST": "false",
            "AWS_EC2_METADATA_DISABLED": "true",
        }

    @property
    def store_options(self) -> dict[str, str]:
        return {
            "aws_access_key_id": self.access_key,
            "aws_secret_access_key": self.secret_key,
            "aws_endpoint": self.endpoint,
            "aws_region": self.region,
            "aws_allow_http": "true",
            "aws_virtual_hosted_style_request": "false",
            **({"allow_invalid_certificates": "true"} if self.tls else {}),
        }

    def client(self) -> Any:
        """A boto3 S3 client for this server: explicit keys, path-style, few retries."""
        import boto3
        from botocore.config import Config

        if self.tls:
            import urllib3

            urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
        return boto3.session.Session().client(
            "s3",
            endpoint_url=self.endpoint,
            verify=not self.tls,
            aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key,
            region_name=self.region,
            config=Config(
                s3={"addressing_style": "path"},
                retries={"max_attempts": 2, "mode": "standard"},
                connect_timeout=5,
                read_timeout=30,
            ),
        )

    def _create_bucket(self) -> None:
        self.client().create_bucket(Bucket=self.bucket)


def _has_user_xattrs(directory: Path) -> bool:
    probe = directory / ".xattr-probe"
    try:
        probe.touch()
        os.setxattr(probe, "user.hpcio", b"1")
        return True
    except (OSError, AttributeError):
        return False
    finally:
        probe.unlink(missing_ok=True)


class AzuriteServer(LocalServer):
    """Azurite's blob service (node), storing in a directory, telemetry off."""

    name = "azurite"
    scheme = "az"
    #: Azurite's well-known development account and key (public, documented by Microsoft).
    account = "devstoreaccount1"
    account_key = (
        "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
    )
    _ready_path = f"/{account}?comp=list"

    @classmethod
    def executable(cls) -> Path:
        return (
            SERVERS_DIR
            / "azurite"
            / "node_modules"
            / "azurite"
            / "dist"
            / "src"
            / "blob"
            / "main.js"
        )

    @classmethod
    def missing(cls) -> str | None:
        if shutil.which("node") is None:
            return "azurite needs node (Node.js) on PATH"
        return super().missing()

    def _command(self, port: int, data: Path) -> list[str]:
        # `node main.js` rather than the .bin/azurite-blob wrapper: one process, whose PID is
        # the server's.
        return [
            shutil.which("node") or "node",
            str(self.executable()),
            "--blobHost", LOOPBACK,
            "--blobPort", str(port),
            "--location", str(data),
            "--skipApiVersionCheck",
            "--disableTelemetry",
            "--loose",
            "--silent",
        ]  # fmt: skip

    @property
    def blob_endpoint(self) -> str:
        """http://127.0.0.1:PORT/devstoreaccount1 (path-style account, as Azurite serves it)."""
        return f"{self.endpoint}/{self.account}"

    @property
    def connection_string(self) -> str:
        """For the Azure SDKs and CLI."""
        return (
            f"DefaultEndpointsProtocol=http;AccountName={self.account};"
            f"AccountKey={self.account_key};BlobEndpoint={self.blob_endpoint};"
        )

    @property
    def env(self) -> dict[str, str]:
        return {
            "AZURE_STORAGE_ACCOUNT_NAME": self.account,
            "AZURE_STORAGE_ACCOUNT_KEY": self.account_key,
            "AZURE_STORAGE_USE_EMULATOR": "true",
            "AZURITE_BLOB_STORAGE_URL": self.endpoint,
            "AZURE_STORAGE_CONNECTION_STRING": self.connection_string,
        }

    @property
    def store_options(self) -> dict[str, str]:
        return {
            "azure_storage_account_name": self.account,
            "azure_storage_account_key": self.account_key,
            "azure_storage_endpoint": self.blob_endpoint,
            "azure_allow_http": "true",
        }

    def service_client(self) -> Any:
        """An azure-storage-blob BlobServiceClient for this server."""
        from azure.storage.blob import BlobServiceClient

        return BlobServiceClient.from_connection_string(self.connection_string)

    def container_client(self) -> Any:
        """A ContainerClient for `bucket`."""
        return self.service_client().get_container_client(self.bucket)

    def _create_bucket(self) -> None:
        self.service_client().create_container(self.bucket)


class FakeGcsServer(LocalServer):
    """fake-gcs-server (filesystem backend), plain HTTP, no authentication.

    What it accepts from object_store 0.14.2 (probed with each call, fake-gcs-server
    v1.56.1): READS ONLY. head, get, ranged get (also several ranges and a suffix range),
    list (with and without delimiter) and delete work, on objects put there through the JSON
    API (`upload`). Every write object_store makes goes through GCS's XML API and is refused
    with HTTP 400 {"message": "invalid uploadType"}: put (PUT /bucket/key), copy (PUT with
    x-goog-copy-source), and multipart -- create (POST ?uploads), hence put_part, complete,
    abort, and the streaming put_multipart. The server routes PUT/POST /bucket/key to its
    JSON-API upload handler, which wants ?uploadType=media|multipart|resumable (or a signed
    URL's X-Goog-Algorithm), and it has no XML multipart API at all. So gs:// targets can be
    read-tested here (seed with `upload`) but not write-tested.

    `-public-host 127.0.0.1:PORT` is needed for the reads: object_store sends path-style
    XML requests (http://127.0.0.1:PORT/bucket/key) and the server takes them as such only
    when the Host header equals its public host (by default storage.googleapis.com; another
    Host would be taken as a virtual-hosted bucket name).
    """

    name = "fake-gcs-server"
    scheme = "gs"
    project = "hpcio-test"
    _ready_path = "/storage/v1/b"

    @classmethod
    def executable(cls) -> Path:
        return SERVERS_DIR / "bin" / "fake-gcs-server"

    def _command(self, port: int, data: Path) -> list[str]:
        return [
            str(self.executable()),
            "-scheme", "http",
            "-host", LOOPBACK,
            "-port", str(port),
            "-external-url", f"http://{LOOPBACK}:{port}",
            "-public-host", f"{LOOPBACK}:{port}",
            "-backend", "filesystem",
            "-filesystem-root", str(data),
            "-log-level", "warn",
        ]  # fmt: skip

    @property
    def service_account_key(self) -> str:
        """A service account key that turns object_store's OAuth off and sets the base URL."""
        return json.dumps(
            {
                "disable_oauth": True,
                "gcs_base_url": self.endpoint,
                "private_key": "",
                "private_key_id": "",
                "client_email": "",
            }
        )

    @property
    def env(self) -> dict[str, str]:
        return {
            "GOOGLE_SERVICE_ACCOUNT_KEY": self.service_account_key,
            "GOOGLE_BASE_URL": self.endpoint,
            "GOOGLE_ALLOW_HTTP": "true",
            "STORAGE_EMULATOR_HOST": self.endpoint,
        }

    @property
    def store_options(self) -> dict[str, str]:
        return {
            "google_service_account_key": self.service_account_key,
            "google_base_url": self.endpoint,
            "google_allow_http": "true",
        }

    # A minimal client of GCS's JSON API (no SDK needed; the server wants no authentication).

    def request(
        self, method: str, path: str, body: bytes | None = None, headers: dict | None = None
    ) -> tuple[int, bytes]:
        """One HTTP request to the server -> (status, body)."""
        connection = http.client.HTTPConnection(LOOPBACK, self.port, timeout=30)
        try:
            connection.request(method, path, body=body, headers=headers or {})
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()

    def _json(self, method: str, path: str, payload: dict | None = None) -> dict:
        body = None if payload is None else json.dumps(payload).encode()
        status, data = self.request(method, path, body, {"Content-Type": "application/json"})
        if status >= 300:
            raise ServerError(f"{method} {path}: HTTP {status}: {data[:300]!r}")
        return json.loads(data) if data else {}

    def _create_bucket(self) -> None:
        self._json("POST", f"/storage/v1/b?project={self.project}", {"name": self.bucket})

    def upload(self, name: str, data: bytes) -> dict:
        """Upload one object through the JSON API's simple media upload -> its metadata."""
        quoted = urllib.parse.quote(name, safe="")
        path = f"/upload/storage/v1/b/{self.bucket}/o?uploadType=media&name={quoted}"
        status, body = self.request(
            "POST", path, data, {"Content-Type": "application/octet-stream"}
        )
        if status >= 300:
            raise ServerError(f"upload {name}: HTTP {status}: {body[:300]!r}")
        return json.loads(body)

    def download(self, name: str) -> bytes:
        """One object's bytes (JSON API, alt=media)."""
        quoted = urllib.parse.quote(name, safe="")
        status, body = self.request("GET", f"/storage/v1/b/{self.bucket}/o/{quoted}?alt=media")
        if status != 200:
            raise ServerError(f"download {name}: HTTP {status}: {body[:300]!r}")
        return body

    def list(self, prefix: str = "") -> list[dict]:
        """Metadata of the objects under `prefix` (one page; enough for tests)."""
        query = urllib.parse.urlencode({"prefix": prefix})
        return self._json("GET", f"/storage/v1/b/{self.bucket}/o?{query}").get("items", [])

    def delete(self, name: str) -> None:
        quoted = urllib.parse.quote(name, safe="")
        self._json("DELETE", f"/storage/v1/b/{self.bucket}/o/{quoted}")


class CephCluster:
    """A one-node Ceph cluster (scripts/servers ceph-start: monitor, manager, one bluestore OSD
    on a sparse file, MDS, radosgw, a ceph-fuse mount), every daemon on 127.0.0.1, its whole
    state in a temporary directory; stopped by the PIDs it recorded (ceph-stop), the directory
    then removed. Needs root and Debian's ceph packages (scripts/servers install).

    `.mount`: the CephFS mount (ceph-fuse); `.gateway()`: radosgw as an S3Server-like object
    with the S3 credentials made for this cluster; `.conf`: its ceph.conf, for `ceph -c`.
    """

    name = "ceph"

    def __init__(self, startup_timeout: float = 240.0) -> None:
        self.startup_timeout = startup_timeout
        self.root: Path | None = None
        self.settings: dict[str, str] = {}
        #: Seconds ceph-start took, to HEALTH_OK, every placement group active+clean, mounted.
        self.startup_seconds: float | None = None

    @classmethod
    def missing(cls) -> str | None:
        """Why the cluster cannot start here, or None."""
        if os.geteuid() != 0:
            return "the Ceph cluster needs root (its OSD and the ceph-fuse mount)"
        for program in ("ceph", "ceph-mon", "ceph-osd", "ceph-mds", "radosgw", "ceph-fuse"):
            if shutil.which(program) is None:
                return f"Ceph is not installed ({program}): run scripts/servers install as root"
        if not Path("/dev/fuse").exists():
            return "no /dev/fuse here: ceph-fuse cannot mount"
        return None

    def _script(self, action: str) -> subprocess.CompletedProcess[str]:
        assert self.root is not None
        environ = {k: v for k, v in os.environ.items() if not k.startswith(_FOREIGN_PREFIXES)}
        return subprocess.run(
            [str(REPO / "scripts" / "servers"), action, str(self.root)],
            capture_output=True, text=True, timeout=self.startup_timeout, env=environ,
            check=False,
        )  # fmt: skip

    def start(self) -> CephCluster:
        missing = self.missing()
        if missing:
            raise ServerError(missing)
        self.root = Path(tempfile.mkdtemp(prefix="hpcio-ceph-"))
        started = time.monotonic()
        try:
            done = self._script("ceph-start")
        except BaseException:
            self.stop()
            raise
        if done.returncode != 0:
            log = done.stderr.strip()
            self.stop()
            raise ServerError(f"the Ceph cluster did not start:\n{log}")
        self.startup_seconds = time.monotonic() - started
        for line in (self.root / "cluster.env").read_text().splitlines():
            key, _, value = line.partition("=")
            self.settings[key] = value
        return self

    def stop(self) -> None:
        if self.root is None:
            return
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._script("ceph-stop")
        shutil.rmtree(self.root, ignore_errors=True)
        self.root = None

    @property
    def conf(self) -> Path:
        return Path(self.settings["CEPH_CONF"])

    @property
    def mount(self) -> Path:
        return Path(self.settings["CEPH_MOUNT"])

    def pids(self) -> list[int]:
        """The PIDs of the cluster's daemons and ceph-fuse."""
        assert self.root is not None, "not started"
        return [int(p.read_text()) for p in sorted((self.root / "run").glob("*.pid"))]

    def gateway(self, bucket: str = DEFAULT_BUCKET) -> RadosGateway:
        """radosgw with `bucket` created (radosgw's first bucket takes seconds: it makes its
        pools)."""
        gateway = RadosGateway(self, bucket=bucket)
        gateway.start()
        return gateway

    def __enter__(self) -> CephCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class RadosGateway(S3Server):
    """radosgw of a running CephCluster, used as S3Server is (env, store_options, client(),
    url()); the cluster owns the process: start() only creates the bucket, stop() does
    nothing. Its objects live in RADOS, so there is no `data_dir`."""

    name = "radosgw"

    def __init__(self, cluster: CephCluster, *, bucket: str = DEFAULT_BUCKET) -> None:
        super().__init__(bucket=bucket)
        self.cluster = cluster
        self.access_key = cluster.settings["RGW_ACCESS_KEY"]  # type: ignore[misc]
        self.secret_key = cluster.settings["RGW_SECRET_KEY"]  # type: ignore[misc]
        self.port = int(cluster.settings["RGW_ENDPOINT"].rsplit(":", 1)[1])

    @classmethod
    def missing(cls) -> str | None:
        return CephCluster.missing()

    @property
    def data_dir(self) -> Path:
        raise AttributeError("radosgw keeps its objects in RADOS: there is no data directory")

    def start(self) -> RadosGateway:
        with contextlib.suppress(Exception):
            self.client().head_bucket(Bucket=self.bucket)
            return self
        self._create_bucket()
        return self

    def stop(self) -> None:
        """The cluster stops radosgw."""


#: The S3 servers the object-store tests run against where a test names them all
#: (`@pytest.mark.parametrize("s3_server", servers.S3_GATEWAYS, indirect=True)`).
S3_GATEWAYS = ("versitygw", "radosgw")

#: All server classes, for parametrized tests.
SERVERS: tuple[type[LocalServer], ...] = (S3Server, AzuriteServer, FakeGcsServer)


@contextlib.contextmanager
def running(kind: type[LocalServer], root: Path | None = None, **kwargs: Any) -> Iterator[Any]:
    """`with running(S3Server) as server:` -- the server, stopped by PID on exit."""
    server = kind(root, **kwargs)
    server.start()
    try:
        yield server
    finally:
        server.stop()


# -- network conditions: toxiproxy in front of a server, and a capped link -------------------


class Toxiproxy:
    """toxiproxy-server (scripts/servers installs it), its API on 127.0.0.1 and a free port;
    stopped by its PID. Each proxy it opens listens where the caller says (127.0.0.1, or the
    host end of a Link) and forwards to a server on 127.0.0.1."""

    def __init__(self, root: Path, stop_timeout: float = 10.0) -> None:
        self.root = root
        self.stop_timeout = stop_timeout
        self.port: int | None = None
        self.process: subprocess.Popen[bytes] | None = None

    @staticmethod
    def executable() -> Path:
        return SERVERS_DIR / "bin" / "toxiproxy-server"

    @classmethod
    def missing(cls) -> str | None:
        if not cls.executable().exists():
            return f"toxiproxy is not installed in {SERVERS_DIR}: run scripts/servers install"
        return None

    @property
    def api(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    def start(self) -> Toxiproxy:
        missing = self.missing()
        if missing:
            raise ServerError(missing)
        self.root.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        with open(self.root / "toxiproxy.log", "ab") as log:
            self.process = subprocess.Popen(
                [str(self.executable()), "-host", LOOPBACK, "-port", str(self.port)],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                preexec_fn=_die_with_parent,
            )  # fmt: skip
        deadline = time.monotonic() + 10
        while True:
            if self.process.poll() is not None:
                log_text = (self.root / "toxiproxy.log").read_text(errors="replace")
                raise ServerError(f"toxiproxy exited while starting:\n{log_text[-2000:]}")
            with contextlib.suppress(OSError, http.client.HTTPException):
                self._call("GET", "/version")
                return self
            if time.monotonic() > deadline:
                self.stop()
                raise ServerError(f"toxiproxy did not answer on {self.api} within 10 s")
            time.sleep(0.05)

    def stop(self) -> None:
        process = self.process
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(self.stop_timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(self.stop_timeout)

    def _call(self, method: str, path: str, payload: Any = None) -> Any:
        connection = http.client.HTTPConnection(LOOPBACK, self.port, timeout=5)
        try:
            body = None if payload is None else json.dumps(payload)
            connection.request(method, path, body, {"Content-Type": "application/json"})
            response = connection.getresponse()
            text = response.read().decode()
            if response.status >= 300:
                raise ServerError(f"toxiproxy {method} {path}: {response.status} {text}")
            return json.loads(text) if text.strip() else None
        finally:
            connection.close()

    def proxy(self, name: str, listen_host: str, upstream_port: int) -> int:
        """Open proxy `name` on listen_host and a free port, to 127.0.0.1:upstream_port;
        returns the port it listens on."""
        made = self._call("POST", "/proxies", {
            "name": name, "listen": f"{listen_host}:0",
            "upstream": f"{LOOPBACK}:{upstream_port}", "enabled": True,
        })  # fmt: skip
        return int(made["listen"].rsplit(":", 1)[1])

    def add_toxic(self, proxy: str, toxic: dict[str, Any]) -> None:
        self._call("POST", f"/proxies/{proxy}/toxics", toxic)

    def remove_toxic(self, proxy: str, name: str) -> None:
        self._call("DELETE", f"/proxies/{proxy}/toxics/{name}")

    def toxics(self, proxy: str) -> list[dict[str, Any]]:
        return list(self._call("GET", f"/proxies/{proxy}/toxics"))

    def __enter__(self) -> Toxiproxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


#: The links' subnets (10.231.16.0/24 to 10.231.215.0/24, one a link): a veth pair between this
#: namespace and one the test makes, never routed anywhere.
LINK_NETWORK = "10.231"


@dataclass(frozen=True)
class Link:
    """A veth pair from this network namespace to one made for it, with a token-bucket cap
    (tbf) on both ends. The proxy listens on the near end (`address`, in this namespace);
    hpcio runs in the far one (`enter`): every byte between them crosses the capped pair."""

    netns: str
    device: str
    address: str
    mbit: float

    @property
    def enter(self) -> list[str]:
        """The command prefix that runs a program on the far side of the link."""
        return ["nsenter", f"--net=/run/netns/{self.netns}", "--"]


def link_missing() -> str | None:
    """Why a capped link cannot be made here, in one line; None when it can."""
    if not sys.platform.startswith("linux"):
        return "a capped link needs Linux network namespaces"
    if os.geteuid() != 0:
        return "a capped link needs root (a network namespace, a veth pair, tc)"
    for program in ("ip", "tc", "nsenter"):
        if shutil.which(program) is None:
            return f"a capped link needs {program} on PATH"
    return None


def _run_ip(*args: str) -> None:
    done = subprocess.run(list(args), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ServerError(f"{' '.join(args)}: {done.stderr.strip()}")


def _tbf(device: str, mbit: float, netns: str | None = None) -> None:
    # The bucket must hold a whole GSO super-packet (64 KiB) and a millisecond of traffic, or
    # tbf drops what the kernel hands it in one piece; the queue holds 50 ms before dropping.
    burst = max(256 * 1024, int(mbit * 1e6 / 8 / 1000))
    where = ["ip", "netns", "exec", netns] if netns else []
    _run_ip(*where, "tc", "qdisc", "add", "dev", device, "root", "tbf",
            "rate", f"{mbit:g}mbit", "burst", str(burst), "latency", "50ms")  # fmt: skip


@contextlib.contextmanager
def capped_link(mbit: float) -> Iterator[Link]:
    """A Link capped at `mbit` Mbit/s each way; the namespace, and with it the pair, is
    removed on exit, also after a failure, and every process left in it is killed by PID."""
    tag = f"{os.getpid() % 100000}{time.monotonic_ns() % 1000:03d}"
    netns, device = f"hpcio-link-{tag}", f"hpl{tag}"[:15]
    subnet = f"{LINK_NETWORK}.{16 + int(tag) % 200}"
    near, far = f"{subnet}.1", f"{subnet}.2"
    made = False
    try:
        _run_ip("ip", "netns", "add", netns)
        made = True
        _run_ip("ip", "-n", netns, "link", "set", "lo", "up")
        _run_ip("ip", "link", "add", device, "type", "veth", "peer", "name", "eth0",
                "netns", netns)  # fmt: skip
        _run_ip("ip", "addr", "add", f"{near}/24", "dev", device)
        _run_ip("ip", "link", "set", device, "up")
        _run_ip("ip", "-n", netns, "addr", "add", f"{far}/24", "dev", "eth0")
        _run_ip("ip", "-n", netns, "link", "set", "eth0", "up")
        _tbf(device, mbit)
        _tbf("eth0", mbit, netns)
        yield Link(netns, device, near, mbit)
    finally:
        if made:
            with contextlib.suppress(OSError):
                inode = os.stat(f"/run/netns/{netns}").st_ino
                for entry in os.listdir("/proc"):
                    if entry.isdigit() and entry != str(os.getpid()):
                        with contextlib.suppress(OSError):
                            if os.stat(f"/proc/{entry}/ns/net").st_ino == inode:
                                os.kill(int(entry), signal.SIGKILL)
            subprocess.run(["ip", "netns", "del", netns], capture_output=True, check=False)
        subprocess.run(["ip", "link", "del", device], capture_output=True, check=False)


@dataclass
class ProxiedStore:
    """A server behind toxiproxy (and a Link where one was asked for), under a named condition
    of hpcio.conditions. `env`/`environ()` point clients at the proxy; `command(args)` runs a
    program where the client must run (the far side of the link); `server` is still reachable
    directly on 127.0.0.1 for checking what was written."""

    server: LocalServer
    toxiproxy: Toxiproxy
    proxy_name: str
    listen: str
    port: int
    link: Link | None
    cap_mib_s: float | None

    @property
    def endpoint(self) -> str:
        return f"http://{self.listen}:{self.port}"

    @property
    def env(self) -> dict[str, str]:
        direct = f"{LOOPBACK}:{self.server.port}"
        return {
            k: v.replace(direct, f"{self.listen}:{self.port}") for k, v in self.server.env.items()
        }

    def environ(self, base: dict[str, str] | None = None) -> dict[str, str]:
        environ = self.server.environ(base)
        environ.update(self.env)
        environ["NO_PROXY"] = environ["no_proxy"] = f"{LOOPBACK},localhost,{self.listen}"
        return environ

    def url(self, prefix: str = "") -> str:
        return self.server.url(prefix)

    def command(self, args: list[str]) -> list[str]:
        return [*(self.link.enter if self.link else []), *args]

    def set_toxics(self, toxics: list[dict[str, Any]]) -> None:
        """Replace the proxy's toxics (a test turns a fault on or off between runs)."""
        for toxic in self.toxiproxy.toxics(self.proxy_name):
            self.toxiproxy.remove_toxic(self.proxy_name, toxic["name"])
        for toxic in toxics:
            self.toxiproxy.add_toxic(self.proxy_name, toxic)


@contextlib.contextmanager
def proxied_store(
    server: LocalServer,
    condition: str,
    *,
    link: bool = False,
    toxics: list[dict[str, Any]] | None = None,
    root: Path | None = None,
) -> Iterator[ProxiedStore]:
    """`server` (started) behind a toxiproxy of its own with the toxics of `condition`
    (hpcio.conditions; `toxics` replaces them), and with link=True behind a Link capped at the
    condition's link_mbit. Everything it started is stopped by PID on exit."""
    from hpcio import conditions

    chosen = conditions.condition(condition)
    workdir = Path(tempfile.mkdtemp(prefix="hpcio-toxiproxy-")) if root is None else root
    try:
        with contextlib.ExitStack() as stack:
            proxy = stack.enter_context(Toxiproxy(workdir))
            made_link = stack.enter_context(capped_link(chosen.link_mbit)) if link else None
            listen = made_link.address if made_link else LOOPBACK
            name = f"{server.name}-{condition}"
            assert server.port is not None, "start the server first"
            port = proxy.proxy(name, listen, server.port)
            store = ProxiedStore(server, proxy, name, listen, port, made_link,
                                 chosen.link_mib_s if link else None)  # fmt: skip
            store.set_toxics(chosen.toxics() if toxics is None else toxics)
            yield store
    finally:
        if root is None:
            shutil.rmtree(workdir, ignore_errors=True)
