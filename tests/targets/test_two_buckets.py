"""Several targets in one run (issue 28) against real servers: two versitygw buckets, two
buckets on two versitygw servers (each target its own ?endpoint=), two Azurite containers.
Every target's figures add up to the run's, each rank's objects land on target r mod K, and
nothing is left behind on any of them."""

import json

import pytest
import servers

pytestmark = pytest.mark.mpi


def _documents(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _assert_targets_add_up(doc, count):
    assert doc["run"]["target_mapping"] == "round-robin"
    assert len(doc["run"]["targets"]) == count
    for phase in doc["phases"]:
        parts = phase["targets"]
        assert [p["url"] for p in parts] == [t["url"] for t in doc["run"]["targets"]]
        assert sum(p["bytes_total"] for p in parts) == phase["bytes_total"] > 0
        assert sum(p["ops_total"] for p in parts) == phase["ops_total"]
        assert sum(p["ranks"] for p in parts) == phase["ranks"]
        for kind, count_all in phase["requests"].items():
            assert sum(p["requests"].get(kind, 0) for p in parts) == count_all
        assert all(p["bytes_total"] > 0 and p["bandwidth_bytes_per_s"] > 0 for p in parts)
        assert max(p["phase_time_s"] for p in parts) <= phase["phase_time_s"] + 1e-9


def _s3_keys(client, bucket, prefix):
    found = client.list_objects_v2(Bucket=bucket, Prefix=prefix + "/").get("Contents", [])
    return sorted(o["Key"].removeprefix(prefix + "/") for o in found)


def _s3_uploads(client, bucket, prefix):
    return client.list_multipart_uploads(Bucket=bucket, Prefix=prefix).get("Uploads", [])


def _two_buckets(s3_server, tmp_path, other):
    """The session's bucket and a second one, `other`: the client, the prefix both share and
    the two targets as --target takes them."""
    client = s3_server.client()
    client.create_bucket(Bucket=other)
    prefix = tmp_path.name
    return client, prefix, f"{s3_server.url(prefix)},s3://{other}/{prefix}"


def test_two_s3_buckets_share_the_ranks_and_their_figures(s3_server, tmp_path, hpcio):
    other = "hpcio-test-two"
    client, prefix, targets = _two_buckets(s3_server, tmp_path, other)
    out = tmp_path / "r.jsonl"
    done = hpcio("run", "--pattern", "mfmw", "-n", "4", "--target", targets,
                 "--size-per-rank", "12MiB", "--transfer", "6MiB", "-i", "2", "--verify",
                 "-q", "-o", out, env=s3_server.environ())  # fmt: skip
    assert done.returncode == 0, done.stderr
    (doc,) = _documents(out)
    _assert_targets_add_up(doc, 2)
    assert "hpcio-test-secret-key" not in out.read_text() + done.stdout + done.stderr
    for bucket in (s3_server.bucket, other):
        assert _s3_keys(client, bucket, prefix) == []
        assert _s3_uploads(client, bucket, prefix) == []


def test_each_rank_keeps_its_object_on_target_r_mod_k_and_clean_takes_both(
    s3_server, tmp_path, hpcio
):
    other = "hpcio-test-three"
    client, prefix, targets = _two_buckets(s3_server, tmp_path, other)
    done = hpcio("run", "--pattern", "mfmw", "-n", "4", "--target", targets,
                 "--size-per-rank", "1MiB", "--phases", "write", "--keep", "-q",
                 env=s3_server.environ())  # fmt: skip
    assert done.returncode == 0, done.stderr
    on_first = _s3_keys(client, s3_server.bucket, prefix)
    on_second = _s3_keys(client, other, prefix)
    assert [k for k in on_first if "rank" in k] == ["hpcio-rank000000.dat", "hpcio-rank000002.dat"]
    assert [k for k in on_second if "rank" in k] == ["hpcio-rank000001.dat", "hpcio-rank000003.dat"]
    cleaned = hpcio("clean", "--target", targets, env=s3_server.environ())
    assert cleaned.returncode == 0, cleaned.stderr
    assert cleaned.stdout.count("hpcio clean:") == 2
    assert _s3_keys(client, s3_server.bucket, prefix) == _s3_keys(client, other, prefix) == []


def test_each_target_reaches_its_own_endpoint(s3_server, tmp_path, hpcio):
    with servers.running(servers.S3Server, tmp_path / "second") as second:
        prefix = tmp_path.name
        targets = f"{s3_server.url(prefix)},{second.url(prefix)}?endpoint={second.endpoint}"
        out = tmp_path / "r.jsonl"
        done = hpcio("run", "--pattern", "mfmw", "-n", "2", "--target", targets,
                     "--size-per-rank", "8MiB", "--transfer", "8MiB", "--phases", "write",
                     "--keep", "-q", "-o", out, env=s3_server.environ())  # fmt: skip
        assert done.returncode == 0, done.stderr
        (doc,) = _documents(out)
        _assert_targets_add_up(doc, 2)
        assert doc["run"]["targets"][1]["endpoint"] == second.endpoint
        # Rank 1's object went to the second server alone, rank 0's to the first alone.
        assert _s3_keys(second.client(), second.bucket, prefix) == ["hpcio-rank000001.dat"]
        first = _s3_keys(s3_server.client(), s3_server.bucket, prefix)
        assert first == ["hpcio-rank000000.dat"]
        cleaned = hpcio("clean", "--target", targets, env=s3_server.environ())
        assert cleaned.returncode == 0, cleaned.stderr
        assert _s3_keys(second.client(), second.bucket, prefix) == []
        assert _s3_keys(s3_server.client(), s3_server.bucket, prefix) == []


def test_two_azurite_containers_share_the_ranks(azure_server, tmp_path, hpcio):
    other = "hpcio-test-two"
    service = azure_server.service_client()
    if not service.get_container_client(other).exists():
        service.create_container(other)
    prefix = tmp_path.name
    targets = f"{azure_server.url(prefix)},az://{other}/{prefix}"
    out = tmp_path / "r.jsonl"
    done = hpcio("run", "--pattern", "mfmw", "-n", "2", "--target", targets,
                 "--size-per-rank", "8MiB", "--transfer", "4MiB", "--verify", "-q", "-o", out,
                 env=azure_server.environ())  # fmt: skip
    assert done.returncode == 0, done.stderr
    (doc,) = _documents(out)
    _assert_targets_add_up(doc, 2)
    for container in (azure_server.bucket, other):
        left = service.get_container_client(container).list_blobs(name_starts_with=prefix)
        assert [b.name for b in left] == []


def test_env_checks_each_target_and_tune_runs_on_all_of_them(s3_server, tmp_path, hpcio):
    other = "hpcio-test-four"
    client, prefix, targets = _two_buckets(s3_server, tmp_path, other)
    checked = hpcio("env", "--target", targets, env=s3_server.environ())
    assert checked.returncode == 0, checked.stderr
    assert f"target      {s3_server.url(prefix)} (s3)" in checked.stdout
    assert f"target      s3://{other}/{prefix} (s3)" in checked.stdout
    missing = hpcio("env", "--target", f"{targets},s3://hpcio-no-such-bucket/{prefix}",
                    env=s3_server.environ())  # fmt: skip
    assert missing.returncode == 2
    assert missing.stderr.strip() == (f"hpcio: error: target s3://hpcio-no-such-bucket/{prefix}: "
                                      "the bucket or container does not exist")  # fmt: skip

    out = tmp_path / "tune.jsonl"
    tuned = hpcio("tune", "-n", "2", "--target", targets, "--in-flight-range", "1..2",
                  "--transfer-range", "8MiB..8MiB", "--size-per-rank", "16MiB", "-o", out,
                  env=s3_server.environ())  # fmt: skip
    assert tuned.returncode == 0, tuned.stderr
    assert f"mfmw write on {targets}, 2 rank(s)" in tuned.stdout
    docs = _documents(out)
    assert docs and all(len(d["phases"][0]["targets"]) == 2 for d in docs)
    for bucket in (s3_server.bucket, other):
        assert _s3_keys(client, bucket, prefix) == []
