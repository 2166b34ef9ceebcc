"""The mdtest workload on an S3 store (versitygw on 127.0.0.1): each rank PUTs its objects,
lists its tree's prefix, GETs and DELETEs them; the requests billed are exactly those."""

import json

import pytest

pytestmark = pytest.mark.mpi


def test_put_list_get_delete_of_every_object(hpcio, s3_server, tmp_path):
    out = tmp_path / "md.jsonl"
    url = s3_server.url("mdtest-objects")
    done = hpcio("run", "-n", 2, "--workload", "mdtest", "--target", url, "--items", 12,
                 "--depth", 1, "--branch", 2, "--dir-per-rank", "--items-kind", "files",
                 "--write-bytes", "512", "--read-bytes", "512", "-q", "-o", out,
                 env=s3_server.env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (phase,) = json.loads(out.read_text().splitlines()[-1])["phases"]
    m = phase["metrics"]
    assert phase["errors"] == 0 and m["failed_calls"] == 0
    for key in ("file_create", "file_read", "file_remove"):
        assert m[f"{key}_items"] == 2 * 12 and m[f"{key}_ops_per_s"] > 0
    assert m["file_list_items"] == 2 * 12  # each rank's tree holds its 12 objects
    assert "dir_create_items" not in m and "tree_create_items" not in m
    assert phase["requests"]["put"] == 2 * 12
    assert phase["requests"]["get"] == 2 * 12
    assert phase["bytes_total"] == 2 * 2 * 12 * 512  # written and read
    assert (
        s3_server.client()
        .list_objects_v2(Bucket="hpcio-test", Prefix="mdtest-objects/")
        .get("KeyCount", 0)
        == 0
    )
