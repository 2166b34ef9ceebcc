"""A store that throttles: a proxy on 127.0.0.1 in front of versitygw answers every third
request with 503 SlowDown. hpcio retries, moves and verifies every byte, and each phase says
how many requests the store throttled."""

import json
import socket
import struct
import threading

import pytest
from relay import Relay, answer

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
                answer(handler, 503, SLOW_DOWN)
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


RESET = "connection_reset"
#: What the failing store does to the first attempt of each part upload and ranged GET, in turn.
CAUSES = ("503", "429", "500", RESET)
ERRORS = {
    "503": (503, SLOW_DOWN),
    "429": (429, b"<Error><Code>TooManyRequests</Code><Message>Slow down.</Message></Error>"),
    "500": (500, b"<Error><Code>InternalError</Code><Message>Try again.</Message></Error>"),
}


class FailingStore(Relay):
    """Relays requests to `backend`, except the first attempt of each part upload (PUT
    ...partNumber=) and each ranged GET of the run's data files: those get, in turn, 503
    SlowDown, 429, 500, or a connection reset (RST, no answer). Every retry goes through.
    `failed` counts what it did, by cause and by the request's method."""

    def __init__(self, backend_port: int) -> None:
        self.failed: dict[tuple[str, str], int] = {}
        seen: set[tuple[str, str, str]] = set()
        lock = threading.Lock()

        def fail_once(handler, body):
            is_part = handler.command == "PUT" and "partNumber=" in handler.path
            is_range = handler.command == "GET" and handler.headers.get("Range")
            if not (is_part or is_range) or ".dat" not in handler.path:  # the run's data only
                return False
            request = (handler.command, handler.path, handler.headers.get("Range") or "")
            with lock:
                if request in seen:
                    return False
                seen.add(request)
                cause = CAUSES[len(seen) % len(CAUSES)]
                key = (handler.command, cause)
                self.failed[key] = self.failed.get(key, 0) + 1
            if cause == RESET:
                # SO_LINGER 0: close() sends RST, as a store's overloaded front end may.
                handler.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
                handler.close_connection = True
                handler.rfile.close()
                handler.connection.close()
                return True
            status, error = ERRORS[cause]
            answer(handler, status, error)
            return True

        super().__init__(backend_port, fail_once)


def test_failed_requests_are_counted_by_status_and_retries_give_correct_data(
    hpcio, s3_server, tmp_path
):
    backend_port = int(s3_server.endpoint.rsplit(":", 1)[1])
    out = tmp_path / "r.jsonl"
    with FailingStore(backend_port) as store:
        endpoint = f"http://127.0.0.1:{store.port}"
        env = {**s3_server.env, "AWS_ENDPOINT": endpoint, "AWS_ENDPOINT_URL": endpoint}
        done = hpcio("run", "-n", 2, "--pattern", "mfmw", "--target", s3_server.url("failing"),
                     "--size-per-rank", "20MiB", "--part-size", "5MiB", "--verify",
                     "--store-option", "backoff_initial_ms=5", "-o", out, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    write, read = doc["phases"]
    assert all(p["bytes_total"] == 40 << 20 and p["errors"] == 0 for p in doc["phases"])
    # 8 part uploads, then 8 ranged GETs: each first attempt failed, the causes in turn.
    by_method = {"write": "PUT", "read": "GET"}
    for phase in (write, read):
        method = by_method[phase["phase"]]
        expected = {cause: n for (m, cause), n in store.failed.items() if m == method}
        assert sum(expected.values()) == 8
        assert phase["store_failures"] == expected
        assert phase["throttled"] == expected.get("503", 0) + expected.get("429", 0)
    summary = doc["summary"]["write"]["store_failures"]
    assert summary == write["store_failures"]
    assert "the store pushed back: write:" in done.stdout
    assert "connection_reset: 2" in done.stdout
