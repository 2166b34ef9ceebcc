"""The one-node Ceph cluster (tests/servers.py's CephCluster, scripts/servers ceph-start): every
daemon listens on 127.0.0.1 only, radosgw speaks S3 with the cluster's own credentials, the
ceph-fuse mount is CephFS, and stopping leaves no process and no directory behind."""

from __future__ import annotations

import contextlib
import ipaddress
import os
import subprocess
from pathlib import Path

import pytest
import servers

MIB = 1 << 20


def _is_loopback(host: str) -> bool:
    return ipaddress.ip_address(host.removeprefix("::ffff:")).is_loopback


def _started_with(conf: str) -> list[int]:
    """The PIDs of processes whose command line names `conf`."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        with contextlib.suppress(OSError):
            if conf.encode() in cmdline.read_bytes().split(b"\0"):
                found.append(int(cmdline.parent.name))
    return found


def test_every_daemon_listens_on_loopback_only(ceph_cluster: servers.CephCluster) -> None:
    pids = ceph_cluster.pids()
    assert len(pids) == 6  # mon, mgr, osd, mds, radosgw, ceph-fuse
    listening = [
        s["local"] for pid in pids for s in servers.tcp_sockets(pid) if s["state"] == "LISTEN"
    ]
    assert listening, "no daemon listens"
    assert all(_is_loopback(host) for host, _ in listening), listening


def test_health_ok_and_the_mount_is_cephfs(ceph_cluster: servers.CephCluster) -> None:
    health = subprocess.run(
        ["ceph", "-c", str(ceph_cluster.conf), "health"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert health.stdout.strip() == "HEALTH_OK"
    assert os.path.ismount(ceph_cluster.mount)
    with open("/proc/mounts") as mounts:
        kinds = {line.split()[1]: line.split()[2] for line in mounts}
    assert kinds[str(ceph_cluster.mount)] == "fuse.ceph-fuse"


def test_radosgw_multipart_round_trip(radosgw_server: servers.RadosGateway) -> None:
    s3 = radosgw_server.client()
    key = "smoke/multipart.bin"
    parts = [os.urandom(5 * MIB), os.urandom(1 * MIB)]
    upload = s3.create_multipart_upload(Bucket=radosgw_server.bucket, Key=key)["UploadId"]
    etags = [
        s3.upload_part(
            Bucket=radosgw_server.bucket, Key=key, UploadId=upload, PartNumber=n, Body=body
        )["ETag"]
        for n, body in enumerate(parts, start=1)
    ]
    s3.complete_multipart_upload(
        Bucket=radosgw_server.bucket, Key=key, UploadId=upload,
        MultipartUpload={"Parts": [{"ETag": e, "PartNumber": n} for n, e in enumerate(etags, 1)]},
    )  # fmt: skip
    body = s3.get_object(Bucket=radosgw_server.bucket, Key=key)["Body"].read()
    assert body == b"".join(parts)
    s3.delete_object(Bucket=radosgw_server.bucket, Key=key)


def test_a_cluster_started_and_stopped_leaves_nothing() -> None:
    """A second cluster beside the session's: up, then down by its PIDs, directory gone."""
    missing = servers.CephCluster.missing()
    if missing:
        pytest.skip(missing)
    cluster = servers.CephCluster().start()
    root, pids, mount = cluster.root, cluster.pids(), cluster.mount
    assert root is not None and all(servers.pid_alive(p) for p in pids)
    conf = str(cluster.conf)
    cluster.stop()
    assert not any(servers.pid_alive(p) for p in pids)
    # Nothing else either: an MDS respawned by `ceph fs fail` has a PID of its own.
    assert _started_with(conf) == []
    assert not os.path.ismount(mount)
    assert not root.exists()
