"""The local object-storage servers (tests/servers.py) work with the official SDKs, answer on
127.0.0.1 only, and are gone (by PID) when their fixture or context ends."""

from __future__ import annotations

import ipaddress
import os
import re
import sys
import textwrap
import urllib.parse
from collections.abc import Callable
from pathlib import Path

import pytest
import servers

MIB = 1 << 20


def _pattern(seed: int, size: int) -> bytes:
    """`size` bytes that differ from one seed to another and along the buffer."""
    block = bytes((seed * 31 + i) % 251 for i in range(4096))
    return (block * (size // len(block) + 1))[:size]


def _is_loopback(host: str) -> bool:
    return ipaddress.ip_address(host.removeprefix("::ffff:")).is_loopback


# -- S3: versitygw through boto3 ---------------------------------------------------------------


def test_s3_put_get_range_list(s3_server: servers.S3Server) -> None:
    s3 = s3_server.client()
    data = _pattern(1, 100_000)
    s3.put_object(Bucket=s3_server.bucket, Key="smoke/one.bin", Body=data)
    s3.put_object(Bucket=s3_server.bucket, Key="smoke/two.bin", Body=b"two")

    assert s3.get_object(Bucket=s3_server.bucket, Key="smoke/one.bin")["Body"].read() == data
    ranged = s3.get_object(Bucket=s3_server.bucket, Key="smoke/one.bin", Range="bytes=1000-1999")
    assert ranged["Body"].read() == data[1000:2000]
    listed = s3.list_objects_v2(Bucket=s3_server.bucket, Prefix="smoke/")
    assert {(o["Key"], o["Size"]) for o in listed["Contents"]} == {
        ("smoke/one.bin", len(data)),
        ("smoke/two.bin", 3),
    }
    # The posix backend: the bucket is a directory, the object a file.
    assert (s3_server.data_dir / s3_server.bucket / "smoke" / "one.bin").read_bytes() == data


def test_s3_multipart_upload_of_two_5mib_parts(s3_server: servers.S3Server) -> None:
    s3 = s3_server.client()
    key = "smoke/multipart.bin"
    parts = [_pattern(2, 5 * MIB), _pattern(3, 5 * MIB)]
    upload = s3.create_multipart_upload(Bucket=s3_server.bucket, Key=key)["UploadId"]
    etags = [
        s3.upload_part(
            Bucket=s3_server.bucket, Key=key, UploadId=upload, PartNumber=number, Body=body
        )["ETag"]
        for number, body in enumerate(parts, start=1)
    ]
    s3.complete_multipart_upload(
        Bucket=s3_server.bucket,
        Key=key,
        UploadId=upload,
        MultipartUpload={"Parts": [{"ETag": e, "PartNumber": n} for n, e in enumerate(etags, 1)]},
    )

    assert s3.head_object(Bucket=s3_server.bucket, Key=key)["ContentLength"] == 10 * MIB
    assert s3.get_object(Bucket=s3_server.bucket, Key=key)["Body"].read() == b"".join(parts)
    assert s3.list_multipart_uploads(Bucket=s3_server.bucket).get("Uploads", []) == []


# -- Azure: Azurite through azure-storage-blob ------------------------------------------------


def test_azure_stage_two_blocks_commit_download(azure_server: servers.AzuriteServer) -> None:
    from azure.storage.blob import BlobBlock

    container = azure_server.container_client()
    blob = container.get_blob_client("smoke/blocks.bin")
    blocks = [("block-000000", _pattern(4, 5 * MIB)), ("block-000001", _pattern(5, 3 * MIB))]
    for block_id, data in blocks:
        blob.stage_block(block_id, data)
    uncommitted = blob.get_block_list("uncommitted")[1]
    assert sorted(b.id for b in uncommitted) == [b for b, _ in blocks]

    blob.commit_block_list([BlobBlock(block_id=b) for b, _ in blocks])

    assert blob.download_blob().readall() == b"".join(d for _, d in blocks)
    assert blob.download_blob(offset=5 * MIB - 10, length=20).readall() == (
        blocks[0][1][-10:] + blocks[1][1][:10]
    )
    assert blob.get_blob_properties().size == 8 * MIB
    assert [b.name for b in container.list_blobs(name_starts_with="smoke/")] == ["smoke/blocks.bin"]


# -- GCS: fake-gcs-server through its JSON API; what object_store's XML requests get ---------


def test_gcs_json_api_upload_download_list_delete(gcs_server: servers.FakeGcsServer) -> None:
    data = _pattern(6, 300_000)
    assert int(gcs_server.upload("smoke/object.bin", data)["size"]) == len(data)
    assert gcs_server.download("smoke/object.bin") == data
    assert [o["name"] for o in gcs_server.list("smoke/")] == ["smoke/object.bin"]
    gcs_server.delete("smoke/object.bin")
    assert gcs_server.list("smoke/") == []


def _object_store_quote(text: str) -> str:
    """Percent-encode every byte but ASCII letters and digits, as object_store does."""
    return "".join(c if c.isascii() and c.isalnum() else f"%{ord(c):02X}" for c in text)


def _xml_path(server: servers.FakeGcsServer, key: str) -> str:
    """An XML-API path as object_store 0.14 writes it: /bucket/key, both percent-encoded."""
    return f"/{_object_store_quote(server.bucket)}/{_object_store_quote(key)}"


def test_gcs_xml_api_reads_as_object_store_sends_them(gcs_server: servers.FakeGcsServer) -> None:
    data = _pattern(7, 10_000)
    gcs_server.upload("smoke/read.bin", data)
    path = _xml_path(gcs_server, "smoke/read.bin")

    status, body = gcs_server.request("GET", path, headers={"Range": "bytes=100-199"})
    assert (status, body) == (206, data[100:200])
    status, _ = gcs_server.request("HEAD", path)
    assert status == 200
    status, body = gcs_server.request("GET", f"/{gcs_server.bucket}?list-type=2&prefix=smoke%2F")
    assert status == 200
    assert b"<Key>smoke/read.bin</Key>" in body


def test_gcs_emulator_refuses_xml_api_writes(gcs_server: servers.FakeGcsServer) -> None:
    """fake-gcs-server v1.56.1 has no XML-API writes, the only writes object_store makes: a
    plain PUT object and the multipart calls are refused. (Should a later version accept
    them, this fails: then gs:// writes become testable and servers.FakeGcsServer's notes
    change.)"""
    path = _xml_path(gcs_server, "smoke/write.bin")
    status, body = gcs_server.request("PUT", path, b"x" * 10)
    assert status == 400
    assert b"invalid uploadType" in body
    status, body = gcs_server.request("POST", f"{path}?uploads=")
    assert status == 400
    assert b"invalid uploadType" in body


# -- lifecycle: loopback only, stopped by PID ---------------------------------------------------


@pytest.mark.parametrize("kind", servers.SERVERS, ids=lambda kind: kind.name)
def test_server_listens_on_loopback_and_is_gone_after_stop(
    kind: type[servers.LocalServer], record_property: Callable[[str, object], None]
) -> None:
    missing = kind.missing()
    if missing:
        pytest.skip(missing)
    with servers.running(kind) as server:
        pid, root = server.pid, server.root
        record_property("startup_seconds", server.startup_seconds)
        assert servers.pid_alive(pid)
        listening = [s["local"] for s in servers.tcp_sockets(pid) if s["state"] == "LISTEN"]
        assert listening, "the server holds no listening socket"
        assert all(_is_loopback(host) for host, _ in listening), listening
        assert (servers.LOOPBACK, server.port) in listening
        settings = " ".join([*server.env.values(), *server.store_options.values()])
        urls = re.findall(r"https?://[^\s;\"',]+", settings)
        assert urls
        assert all(urllib.parse.urlsplit(u).hostname == servers.LOOPBACK for u in urls), urls
    assert not servers.pid_alive(pid)
    assert server.process.returncode is not None
    assert not root.exists(), "the temporary data directory was not removed"


class _StubbornServer(servers.LocalServer):
    """A plain HTTP server that ignores SIGTERM: stop() must SIGKILL it."""

    name = "stubborn"
    scheme = "s3"

    @classmethod
    def executable(cls) -> Path:
        return Path(sys.executable)

    def _command(self, port: int, data: Path) -> list[str]:
        script = textwrap.dedent(
            f"""
            import http.server, signal
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            http.server.HTTPServer(
                ("{servers.LOOPBACK}", {port}), http.server.SimpleHTTPRequestHandler
            ).serve_forever()
            """
        )
        return [sys.executable, "-c", script]

    def _create_bucket(self) -> None:
        pass

    @property
    def env(self) -> dict[str, str]:
        return {}

    @property
    def store_options(self) -> dict[str, str]:
        return {}


def test_stop_kills_a_server_that_ignores_sigterm() -> None:
    server = _StubbornServer(stop_timeout=0.5)
    with server:
        pid = server.pid
    assert server.process.returncode == -9
    assert not servers.pid_alive(pid)


def test_environ_keeps_no_foreign_cloud_or_proxy_variable(s3_server: servers.S3Server) -> None:
    base = {
        "PATH": os.environ.get("PATH", ""),
        "AWS_PROFILE": "production",
        "AWS_SESSION_TOKEN": "real-token",
        "AZURE_CLIENT_ID": "real-id",
        "GOOGLE_APPLICATION_CREDENTIALS": "/home/me/key.json",
        "HTTPS_PROXY": "http://proxy.example:3128",
        "http_proxy": "http://proxy.example:3128",
    }
    environ = s3_server.environ(base)
    for foreign in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AZURE_CLIENT_ID"):
        assert foreign not in environ
    assert "GOOGLE_APPLICATION_CREDENTIALS" not in environ
    assert "HTTPS_PROXY" not in environ
    assert "http_proxy" not in environ
    assert environ["NO_PROXY"] == "127.0.0.1,localhost"
    assert environ["AWS_ENDPOINT"] == s3_server.endpoint
    assert environ["AWS_EC2_METADATA_DISABLED"] == "true"
    assert environ["PATH"] == base["PATH"]


def test_s3_server_without_user_xattrs_keeps_metadata_in_a_sidecar(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Some file systems (tmpfs before Linux 6.6, some overlays) have no user xattrs, where
    versitygw's posix backend keeps object metadata; there it gets --sidecar."""
    if servers.S3Server.missing():
        pytest.skip(servers.S3Server.missing())
    monkeypatch.setattr(servers, "_has_user_xattrs", lambda directory: False)
    with servers.running(servers.S3Server) as server:
        assert "--sidecar" in server.process.args
        s3 = server.client()
        s3.put_object(Bucket=server.bucket, Key="sidecar/object.bin", Body=b"abc")
        assert (
            s3.get_object(Bucket=server.bucket, Key="sidecar/object.bin")["Body"].read() == b"abc"
        )
