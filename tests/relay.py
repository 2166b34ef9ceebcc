"""A relay on 127.0.0.1 in front of a local test server: forwards every request verbatim (Host
included, so signatures hold), after `before(handler, body)` had its say. `before` may wait
(a slow store) or answer itself and return True (a store that throttles)."""

from __future__ import annotations

import http.client
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Relay:
    """`with Relay(backend_port, before) as relay:` serves on 127.0.0.1:relay.port."""

    def __init__(
        self, backend_port: int, before: Callable[[BaseHTTPRequestHandler, bytes], bool]
    ) -> None:
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _relay(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if before(self, body):
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

    def __enter__(self) -> Relay:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def answer(handler: BaseHTTPRequestHandler, status: int, body: bytes) -> None:
    """Answer a request in the store's place: `status` and an XML error `body`, which a HEAD's
    answer announces but does not carry (HTTP): bytes after it would be read as the answer to
    the connection's next request, which then fails as the store never made it fail."""
    handler.send_response(status)
    handler.send_header("Content-Type", "application/xml")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    if handler.command != "HEAD":
        handler.wfile.write(body)
