"""A store that throttles: a proxy on 127.0.0.1 in front of versitygw answers every third
request with 503 SlowDown. hpcio retries, moves and verifies every byte, and each phase says
how many requests the store throttled."""

import http.client
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

pytestmark = pytest.mark.mpi

SLOW_DOWN = (
    b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code>'
    b"<Message>Please reduce your request rate.</Message></Error>"
)


class ThrottlingProxy:
    """Forwards requests verbatim (Host included, so signatures hold) to `backend`, except
    every `every`-th one, which gets 503 SlowDown."""

    def __init__(self, backend_port: int, every: int = 3) -> None:
        self.throttled = 0
        count = [0]
        lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _relay(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with lock:
                    count[0] += 1
                    throttle = count[0] % every == 0
                    proxy.throttled += throttle
                if throttle:
                    self.send_response(503)
                    self.send_header("Content-Type", "application/xml")
                    self.send_header("Content-Length", str(len(SLOW_DOWN)))
                    self.end_headers()
                    self.wfile.write(SLOW_DOWN)
                    return
                upstream = http.client.HTTPConnection("127.0.0.1", backend_port, timeout=60)
                upstream.request(self.command, self.path, body=body, headers=dict(self.headers))
                answer = upstream.getresponse()
                data = answer.read()
                self.send_response(answer.status)
                for name, value in answer.getheaders():
                    if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                upstream.close()

            # http.server dispatches on these names.
            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _relay  # noqa: N815

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


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
