"""Set-up before the first phase: an object target, warmed, opens a connection per request in
flight and pays its client's one-time set-up (TLS) before any phase is timed, so the first
iteration does not pay what the later ones skip."""

import pytest
from hpcio import _engine

pytestmark = pytest.mark.mpi  # a real server


def server_side_connections(port):
    """TCP connections the server on 127.0.0.1:`port` has or had lately (any state but
    LISTEN, TIME_WAIT included: a server that closes idle connections leaves those)."""
    count = 0
    with open("/proc/net/tcp", encoding="ascii") as table:
        for line in table.readlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            if state != "0A" and int(local.split(":")[1], 16) == port:
                count += 1
    return count


@pytest.mark.parametrize("in_flight", [1, 4])
def test_warm_opens_one_connection_per_request_in_flight(s3_server, monkeypatch, in_flight):
    for name, value in s3_server.env.items():
        monkeypatch.setenv(name, value)
    target = _engine.Target(s3_server.url("warm"), in_flight=in_flight)
    before = server_side_connections(s3_server.port)
    target.warm(in_flight)
    assert server_side_connections(s3_server.port) - before == in_flight
    assert target.list("") == []  # nothing written


def test_warm_does_nothing_on_posix_and_memory(tmp_path):
    _engine.Target(f"file://{tmp_path}").warm(4)
    _engine.Target("memory://").warm(4)
    assert list(tmp_path.iterdir()) == []
