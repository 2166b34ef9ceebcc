"""The listing workload on object stores (versitygw for S3, Azurite): every rank lists the
prefix through the engine, or rank 0 does and broadcasts; a store that throttles LIST
requests with 503 SlowDown shows in the listing's own counts."""

import json
import threading

import pytest
from relay import Relay, answer
from test_throttling import SLOW_DOWN

pytestmark = pytest.mark.mpi

FILES = 4


@pytest.fixture(params=["s3", "azure"])
def server(request):
    return request.getfixturevalue(f"{request.param}_server")


def listing(hpcio, url, out, lister, env):
    done = hpcio("run", "-n", 2, "--workload", "listing", "--target", url, "--lister", lister,
                 "--files-per-rank", FILES, "--file-size", "32KiB", "--verify", "-q",
                 "--store-option", "backoff_initial_ms=5", "-o", out, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text().splitlines()[-1])


@pytest.mark.parametrize(("lister", "listers"), [("every", 2), ("rank0", 1)])
def test_every_object_is_listed_and_read(hpcio, server, tmp_path, lister, listers):
    doc = listing(hpcio, server.url(f"list-{lister}"), tmp_path / "r.jsonl", lister, server.env)
    write, read = doc["phases"]
    assert read["bytes_total"] == write["bytes_total"] == 2 * FILES * (32 << 10)
    m = read["metrics"]
    assert (m["listers"], m["list_ops"], m["stat_ops"]) == (listers, listers, 0)
    assert m["listed_entries"] == 2 * FILES
    assert m["list_requests"] == listers  # the engine's list calls, as billed kinds count
    assert read["requests"]["list"] == listers
    assert 0 < m["list_p50_s"] <= m["list_max_s"]


class ListThrottlingProxy(Relay):
    """Answers every other LIST request (S3's list-type=2) with 503 SlowDown."""

    def __init__(self, backend_port: int) -> None:
        self.lists = self.throttled = 0
        lock = threading.Lock()

        def throttle(handler, body):
            if handler.command != "GET" or "list-type=2" not in handler.path:
                return False
            with lock:
                self.lists += 1
                throttled = self.lists % 2 == 1
                self.throttled += throttled
            if throttled:
                answer(handler, 503, SLOW_DOWN)
            return throttled

        super().__init__(backend_port, throttle)


def test_throttled_listing_is_counted_as_the_listings(hpcio, s3_server, tmp_path):
    port = int(s3_server.endpoint.rsplit(":", 1)[1])
    with ListThrottlingProxy(port) as proxy:
        endpoint = f"http://127.0.0.1:{proxy.port}"
        env = {**s3_server.env, "AWS_ENDPOINT": endpoint, "AWS_ENDPOINT_URL": endpoint}
        doc = listing(hpcio, s3_server.url("list-slow"), tmp_path / "r.jsonl", "every", env)
    read = doc["phases"][1]
    m = read["metrics"]
    # Every other LIST is refused: each rank's listing met at least one 503 before its retry.
    assert m["list_throttled"] >= 2
    assert m["list_throttled"] <= proxy.throttled
    assert read["throttled"] >= m["list_throttled"]
    assert m["listed_entries"] == 2 * FILES and read["errors"] == 0
