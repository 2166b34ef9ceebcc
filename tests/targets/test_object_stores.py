"""Every pattern on real local servers (versitygw for S3, Azurite for Azure Blob), 4 ranks,
--verify, and what hpcio wrote read back byte for byte with each provider's official SDK."""

import json

import numpy as np
import pytest
from hpcio import _engine

pytestmark = pytest.mark.mpi

MiB = 1 << 20
SIZES = ("--size-per-rank", "10MiB", "--part-size", "5MiB", "--concurrency", "2")


# radosgw: the one-node Ceph cluster's S3 gateway (tests/servers.py, marked ceph).
@pytest.fixture(params=["s3", "azure", pytest.param("radosgw", marks=pytest.mark.ceph)])
def server(request):
    return request.getfixturevalue(f"{request.param}_server")


def is_s3(server):
    return server.url().startswith("s3://")


def run(hpcio, server, prefix, *args, ranks=4):
    return hpcio("run", "-n", ranks, "--target", server.url(prefix), *SIZES, "-q", *args,
                 env=server.env)  # fmt: skip


@pytest.mark.parametrize("pattern", ["sfsw", "sfmw", "mfmw", "sfmr", "mfmr"])
def test_every_pattern_verifies(hpcio, server, tmp_path, pattern):
    out = tmp_path / "r.jsonl"
    done = run(hpcio, server, f"p-{pattern}", "--pattern", pattern, "--verify", "-i", "2",
               "-o", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    assert doc["ranks"] == 4
    assert doc["run"]["target"]["kind"] == ("s3" if is_s3(server) else "azure")
    # Plain http: S3 bodies are signed, as boto3 signs them there (unsigned is for TLS).
    signing = doc["engine"].get("payload_signing")
    assert signing == ("payload signed (SHA-256)" if is_s3(server) else None)
    for phase in doc["phases"]:
        expected = 4 * 10 * MiB * (4 if pattern == "sfmr" else 1)
        assert phase["bytes_total"] == expected
        assert phase["errors"] == 0
        assert phase["throttled"] == 0
    if pattern in ("sfmw", "mfmw", "sfsw"):
        writes = doc["phases"][0]["requests"]
        staged = "upload_part" if is_s3(server) else "put_block"
        assert writes[staged] == 8  # 40 MiB in parts of 5 MiB, whichever rank sent them
        committed = "complete_multipart" if is_s3(server) else "put_block_list"
        assert writes[committed] == (4 if pattern == "mfmw" else 1)
    assert _hpcio_objects(server, f"p-{pattern}") == []  # removed after each iteration


def _hpcio_objects(server, prefix):
    if is_s3(server):
        listed = server.client().list_objects_v2(Bucket=server.bucket, Prefix=f"{prefix}/")
        return [o["Key"] for o in listed.get("Contents", [])]
    return [b.name for b in server.container_client().list_blobs(name_starts_with=f"{prefix}/")]


def _download(server, key):
    if is_s3(server):
        return server.client().get_object(Bucket=server.bucket, Key=key)["Body"].read()
    return server.container_client().download_blob(key).readall()


def _expected(seed, writer, key, offset, length):
    buf = np.empty(length, np.uint8)
    _engine.payload_fill(buf, seed, writer, key, offset)
    return buf.tobytes()


def test_shared_object_reads_back_with_the_sdk(hpcio, server):
    done = run(hpcio, server, "sdk-sfmw", "--pattern", "sfmw", "--segments", "2",
               "--phases", "write", "--keep")  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = _download(server, "sdk-sfmw/hpcio-shared.dat")
    assert len(data) == 40 * MiB
    block = 5 * MiB  # 10 MiB per rank in 2 segments, interleaved across 4 ranks
    for index in range(8):
        writer = index % 4
        offset = index * block
        expected = _expected(1, writer, "hpcio-shared.dat", offset, block)
        assert data[offset : offset + block] == expected, f"block {index} (rank {writer})"


def test_private_objects_read_back_with_the_sdk(hpcio, server):
    done = run(hpcio, server, "sdk-mfmw", "--pattern", "mfmw", "--phases", "write", "--keep",
               "--seed", "7")  # fmt: skip
    assert done.returncode == 0, done.stderr
    for rank in range(4):
        key = f"hpcio-rank{rank:06d}.dat"
        assert _download(server, f"sdk-mfmw/{key}") == _expected(7, rank, key, 0, 10 * MiB)


def test_no_upload_or_uncommitted_block_is_left(hpcio, server):
    done = run(hpcio, server, "leftovers", "--pattern", "sfmw")
    assert done.returncode == 0, done.stderr
    if is_s3(server):
        uploads = server.client().list_multipart_uploads(Bucket=server.bucket)
        assert uploads.get("Uploads", []) == []
    assert _hpcio_objects(server, "leftovers") == []


def test_clean_deletes_only_hpcios_objects(hpcio, server):
    done = run(hpcio, server, "clean", "--pattern", "mfmw", "--phases", "write", "--keep")
    assert done.returncode == 0, done.stderr
    if is_s3(server):
        server.client().put_object(Bucket=server.bucket, Key="clean/theirs.dat", Body=b"x")
    else:
        server.container_client().upload_blob("clean/theirs.dat", b"x")
    cleaned = hpcio("clean", "--target", server.url("clean"), env=server.env)
    assert cleaned.returncode == 0, cleaned.stderr
    assert "hpcio clean: 4 of hpcio's objects" in cleaned.stdout
    assert _hpcio_objects(server, "clean") == ["clean/theirs.dat"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"bucket": "no-such-bucket"}, "the bucket or container does not exist"),
        ({"secret": True}, "the credentials were rejected"),
        ({"endpoint": "http://127.0.0.1:9"}, "cannot connect to the endpoint"),
    ],
)
def test_unusable_target_is_one_line(hpcio, server, error_line, change, message):
    env = dict(server.env)
    url = server.url("bad")
    if "bucket" in change:
        url = url.replace(server.bucket, change["bucket"])
    if "secret" in change:
        for key in ("AWS_SECRET_ACCESS_KEY", "AZURE_STORAGE_ACCOUNT_KEY"):
            if key in env:
                env[key] = "d3Jvbmcgc2VjcmV0"
        env.pop("AZURE_STORAGE_CONNECTION_STRING", None)
    if "endpoint" in change:
        for key in ("AWS_ENDPOINT", "AWS_ENDPOINT_URL", "AZURITE_BLOB_STORAGE_URL"):
            if key in env:
                env[key] = change["endpoint"]
    done = hpcio("run", "-n", 2, "--pattern", "sfmw", "--target", url, *SIZES, env=env)
    assert done.returncode == 2
    line = error_line(done)
    assert f": {message}" in line, line  # then, where it has them, the store's own words
    assert env.get("AWS_SECRET_ACCESS_KEY", "") not in line or "AWS_SECRET_ACCESS_KEY" not in env


def test_part_below_the_minimum_is_refused(hpcio, s3_server, error_line):
    done = hpcio("run", "-n", 2, "--pattern", "sfmw", "--target", s3_server.url("small"),
                 "--size-per-rank", "4MiB", "--part-size", "1MiB", env=s3_server.env)  # fmt: skip
    assert done.returncode == 2
    assert error_line(done) == (
        "hpcio: error: s3: multipart parts must be at least 5 MiB (except the last); "
        "--part-size is 1 MiB: use --part-size 8MiB or more"
    )


def test_credentials_never_reach_output(hpcio, server, tmp_path):
    out = tmp_path / "r.jsonl"
    done = run(hpcio, server, "secrets", "--pattern", "mfmw", "-o", out, ranks=2)
    assert done.returncode == 0, done.stderr
    secrets = [v for k, v in server.env.items() if "KEY" in k or "SECRET" in k]
    text = done.stdout + done.stderr + out.read_text()
    assert secrets and not any(s in text for s in secrets)


def test_several_objects_per_rank_are_single_puts_in_flight(hpcio, s3_server, tmp_path):
    out = tmp_path / "r.jsonl"
    done = hpcio("run", "-n", 1, "--pattern", "mfmw", "--target", s3_server.url("many"),
                 "--size-per-rank", "16MiB", "--files-per-rank", "16", "--part-size", "1MiB",
                 "--concurrency", "4", "--verify", "-q", "-o", out, env=s3_server.env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    write, read = json.loads(out.read_text())["phases"]
    assert write["requests"] == {"put": 16}  # 1 MiB objects need no multipart upload
    assert read["requests"] == {"get": 16}
    assert read["bytes_total"] == 16 << 20
    assert _hpcio_objects(s3_server, "many") == []


def test_unsigned_payloads_on_request(hpcio, s3_server, tmp_path):
    out = tmp_path / "r.jsonl"
    done = hpcio("run", "-n", 1, "--pattern", "mfmw", "--target", s3_server.url("unsigned"),
                 "--size-per-rank", "4MiB", "--files-per-rank", "4", "--part-size", "1MiB",
                 "--store-option", "unsigned_payload=true", "--verify", "-q", "-o", out,
                 env=s3_server.env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    assert doc["engine"]["payload_signing"] == "unsigned payload"
    assert [p["errors"] for p in doc["phases"]] == [0, 0]


def test_over_tls_payloads_go_unsigned_and_read_back(hpcio, tmp_path):
    """An https endpoint (versitygw with a self-signed certificate), as real S3 endpoints
    are: hpcio sends bodies unsigned there, as the AWS SDKs do, and the data is intact."""
    import servers

    if servers.S3Server.missing():
        pytest.skip(servers.S3Server.missing())
    out = tmp_path / "r.jsonl"
    with servers.running(servers.S3Server, tmp_path / "tls", tls=True) as tls_server:
        assert tls_server.endpoint.startswith("https://127.0.0.1:")
        done = hpcio("run", "-n", 1, "--pattern", "mfmw", "--target", tls_server.url("tls"),
                     "--size-per-rank", "4MiB", "--files-per-rank", "2", "--part-size", "2MiB",
                     "--keep", "--verify", "-q", "-o", out, env=tls_server.env)  # fmt: skip
        assert done.returncode == 0, done.stderr
        doc = json.loads(out.read_text())
        assert doc["engine"]["payload_signing"] == "unsigned payload"
        assert [p["errors"] for p in doc["phases"]] == [0, 0]
        listed = tls_server.client().list_objects_v2(Bucket=tls_server.bucket, Prefix="tls/")
        keys = sorted(o["Key"] for o in listed["Contents"])
        assert len(keys) == 2
        body = tls_server.client().get_object(Bucket=tls_server.bucket, Key=keys[0])["Body"]
        name = keys[0].removeprefix("tls/")
        assert body.read() == _expected(1, 0, name, 0, 2 * MiB)
