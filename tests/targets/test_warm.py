"""Set-up before the first phase: an object target, warmed, sends a request per request in
flight, each on a connection of its own, and so pays its client's one-time set-up (TLS, the
first connections) before any phase is timed: the first iteration pays no more than the
later ones (bench/first_iteration measures it)."""

import pytest
from hpcio import _engine

pytestmark = pytest.mark.mpi  # a real server


@pytest.mark.parametrize("in_flight", [1, 4])
def test_warm_sends_a_request_per_request_in_flight(s3_server, monkeypatch, in_flight):
    for name, value in s3_server.env.items():
        monkeypatch.setenv(name, value)
    target = _engine.Target(s3_server.url("warm"), in_flight=in_flight)
    assert target.warm(in_flight) == in_flight  # answered, if only "not found"
    assert target.list("") == []  # nothing written


def test_warm_is_best_effort(monkeypatch):
    # An endpoint nobody listens on: the phase will say so; warming only gets no answer.
    for name, value in {"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s",
                        "AWS_ENDPOINT": "http://127.0.0.1:9", "AWS_ALLOW_HTTP": "true",
                        "AWS_REGION": "us-east-1"}.items():  # fmt: skip
        monkeypatch.setenv(name, value)
    target = _engine.Target("s3://bucket/warm", options={"max_retries": "0"})
    assert target.warm(2) == 0


def test_warm_does_nothing_on_posix_and_memory(tmp_path):
    assert _engine.Target(f"file://{tmp_path}").warm(4) == 0
    assert _engine.Target("memory://").warm(4) == 0
    assert list(tmp_path.iterdir()) == []
