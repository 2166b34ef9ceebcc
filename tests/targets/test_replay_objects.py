"""hpcio replay on versitygw (S3) and Azurite with 2 real ranks: darshan's DXT sample moves the
log's bytes per rank in the log's access sizes (each write one object, read back with the
provider's SDK), and a trace whose files need each object mapping (one PUT, one rank's
parts, two ranks' parts of one upload, an object per write) says how many went each way,
verifies, and is priced by cost."""

import json
from collections import Counter

import numpy as np
import pytest
from hpcio import _engine
from replay_logs import MiB, app_trace, darshan_sample, dxt_segments

pytestmark = pytest.mark.mpi


@pytest.fixture(params=["s3", "azure"])
def server(request):
    return request.getfixturevalue(f"{request.param}_server")


def is_s3(server):
    return server.url().startswith("s3://")


def _objects(server, prefix):
    """{key below prefix: bytes} of every object there."""
    if is_s3(server):
        listed = server.client().list_objects_v2(Bucket=server.bucket, Prefix=f"{prefix}/")
        return {o["Key"].split("/", 1)[1]: o["Size"] for o in listed.get("Contents", [])}
    blobs = server.container_client().list_blobs(name_starts_with=f"{prefix}/")
    return {b.name.split("/", 1)[1]: b.size for b in blobs}


def _download(server, key):
    if is_s3(server):
        return server.client().get_object(Bucket=server.bucket, Key=key)["Body"].read()
    return server.container_client().download_blob(key).readall()


def test_dxt_sample_replays_the_logs_bytes_and_sizes(hpcio, server, tmp_path):
    log = darshan_sample("sample-dxt-simple.darshan")
    out = tmp_path / "r.jsonl"
    prefix = "replay-dxt"
    done = hpcio("replay", log, "--target", server.url(prefix), "-n", 2, "--keep", "-o", out,
                 env=server.env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (write,) = json.loads(out.read_text())["phases"]
    segments = [s for s in dxt_segments(log) if s[1] == "write"]
    per_rank = Counter()
    for app_rank, _, _, length in segments:
        per_rank[app_rank % 2] += length
    assert [r["bytes"] for r in write["per_rank"]] == [per_rank[0], per_rank[1]]
    # Each of the log's writes is one PUT of an object its size: the store holds the sizes.
    assert sorted(_objects(server, prefix).values()) == sorted(s[3] for s in segments)
    assert write["requests"]["put"] == len(segments)
    assert write["metrics"]["files_as_put"] == 2
    key = "hpcio-replay-00001-test.out"
    expected = np.empty(4000, np.uint8)
    _engine.payload_fill(expected, 1, 0, key, 0)
    assert _download(server, f"{prefix}/{key}") == expected.tobytes()


def test_each_write_pattern_is_mapped_and_counted(hpcio, server, tmp_path):
    out = tmp_path / "r.jsonl"
    prefix = "replay-trace"
    done = hpcio("replay", app_trace(tmp_path / "trace"), "--target", server.url(prefix),
                 "-n", 2, "--verify", "-o", out, env=server.env)  # fmt: skip
    (tmp_path / "doc.jsonl").write_text(out.read_text())
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    write, read = doc["phases"]
    metrics = write["metrics"]
    mapped = ("put", "parts", "shared", "separate")
    assert [metrics[f"files_as_{how}"] for how in mapped] == [1, 1, 1, 1]
    assert write["bytes_total"] == 20 * MiB + 350 + 300
    requests = write["requests"]
    if is_s3(server):
        # ckpt.dat's upload from rank 0, and shared.dat's that both ranks put parts of.
        assert (requests["create_multipart"], requests["upload_part"]) == (2, 4)
        assert requests["complete_multipart"] == 2
    else:
        assert (requests["put_block"], requests["put_block_list"]) == (4, 2)
    assert requests["put"] == 1 + 4  # meta.json; the log's four writes, an object each
    assert read["bytes_total"] == 4 * 4096 and read["errors"] == 0
    assert _objects(server, prefix) == {}  # removed after the iteration
    if is_s3(server):  # every upload completed, none left open
        assert server.client().list_multipart_uploads(Bucket=server.bucket).get("Uploads", []) == []
    priced = hpcio("cost", out)
    assert priced.returncode == 0, priced.stderr
    assert "put 5, get 4" in priced.stdout  # priced by request kind, as any run
