"""A store that throttles: a proxy on 127.0.0.1 in front of versitygw answers every third
request with 503 SlowDown. hpcio retries, moves and verifies every byte, and each phase says
how many requests the store throttled."""

import json
import threading

import pytest
from relay import Relay

pytestmark = pytest.mark.mpi

SLOW_DOWN = (
    b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code>'
    b"<Message>Please reduce your request rate.</Message></Error>"
)


class ThrottlingProxy(Relay):
    """Relays requests to `backend`, except every `every`-th one, which gets 503 SlowDown."""

    def __init__(self, backend_port: int, every: int = 3) -> None:
        self.throttled = 0
        count = [0]
        lock = threading.Lock()

        def throttle(handler, body):
            with lock:
                count[0] += 1
                throttled = count[0] % every == 0
                self.throttled += throttled
            if throttled:
                handler.send_response(503)
                handler.send_header("Content-Type", "application/xml")
                handler.send_header("Content-Length", str(len(SLOW_DOWN)))
                handler.end_headers()
                handler.wfile.write(SLOW_DOWN)
            return throttled

        super().__init__(backend_port, throttle)


def test_throttled_requests_are_retried_and_counted(hpcio, s3_server, tmp_path):
    backend_port = int(s3_server.endpoint.rsplit(":", 1)[1])
    out = tmp_path / "r.jsonl"
    with ThrottlingProxy(backend_port) as proxy:
        endpoint = f"http://127.0.0.1:{proxy.port}"
        env = {**s3_server.env, "AWS_ENDPOINT": endpoint, "AWS_ENDPOINT_URL": endpoint}
        done = hpcio("run", "-n", 2, "--pattern", "sfmw", "--target", s3_server.url("slow"),
                     "--size-per-rank", "10MiB", "--part-size", "5MiB", "--verify",
                     "--store-option", "backoff_initial_ms=5", "-o", out, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    counted = sum(p["throttled"] for p in doc["phases"])
    assert counted > 0
    assert counted <= proxy.throttled  # the probe and the deletes were throttled too
    assert all(p["bytes_total"] == 20 << 20 and p["errors"] == 0 for p in doc["phases"])
    assert doc["summary"]["write"]["throttled"] + doc["summary"]["read"]["throttled"] == counted
    assert "the store pushed back:" in done.stdout
