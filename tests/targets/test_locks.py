"""Two runs on one prefix: the second is refused, naming the first, instead of both reporting
"verify failed" over each other's objects."""

import socket

import pytest

pytestmark = pytest.mark.mpi

LOCK = "hpcio-run.lock"


@pytest.fixture(params=["s3", "azure"])
def server(request):
    return request.getfixturevalue(f"{request.param}_server")


def put(server, key, text):
    body = text.ljust(256).encode()
    if server.url().startswith("s3://"):
        server.client().put_object(Bucket=server.bucket, Key=key, Body=body)
    else:
        server.container_client().upload_blob(key, body, overwrite=True)


def names(server, prefix):
    if server.url().startswith("s3://"):
        listed = server.client().list_objects_v2(Bucket=server.bucket, Prefix=f"{prefix}/")
        return [o["Key"] for o in listed.get("Contents", [])]
    return [b.name for b in server.container_client().list_blobs(name_starts_with=f"{prefix}/")]


def run(hpcio, server, prefix, ranks):
    return hpcio("run", "-n", ranks, "--pattern", "mfmw", "--target", server.url(prefix),
                 "--size-per-rank", "1MiB", "--verify", "-q", env=server.env)  # fmt: skip


@pytest.mark.parametrize("ranks", [1, 2])
def test_prefix_in_use_by_a_live_run(hpcio, server, error_line, ranks):
    prefix = f"lock-live-{ranks}"
    put(server, f"{prefix}/{LOCK}", "node7 4242 2026-01-02T03:04:05+00:00 their-token")
    done = run(hpcio, server, prefix, ranks)
    assert done.returncode == 2, done.stderr
    url = server.url(prefix)
    assert error_line(done) == (
        f"hpcio: error: target {url} is in use by another hpcio run (host node7, pid 4242, "
        f"started 2026-01-02T03:04:05+00:00); wait for it to end or use another prefix (if "
        f"that run is gone, `hpcio clean --target {url}` removes its lock)"
    )
    assert names(server, prefix) == [f"{prefix}/{LOCK}"]  # theirs, untouched


def test_lock_of_a_dead_run_on_this_host_does_not_block(hpcio, server):
    prefix = "lock-dead"
    dead = 999_999_999  # above any pid_max
    put(server, f"{prefix}/{LOCK}", f"{socket.gethostname()} {dead} 2026-01-02T03:04:05+00:00 x")
    done = run(hpcio, server, prefix, 2)
    assert (done.returncode, done.stderr) == (0, "")
    assert names(server, prefix) == []  # the run's objects and its lock are gone


def test_clean_removes_a_stale_lock(hpcio, server):
    prefix = "lock-clean"
    put(server, f"{prefix}/{LOCK}", "node7 4242 2026-01-02T03:04:05+00:00 their-token")
    done = hpcio("clean", "--target", server.url(prefix), env=server.env)
    assert done.returncode == 0, done.stderr
    assert names(server, prefix) == []
    assert run(hpcio, server, prefix, 1).returncode == 0
