"""Time to first byte through a real HTTP path: a relay on 127.0.0.1 holds every request to
versitygw 20 ms before passing it on, so every GET's and PUT's first byte comes at least that
late; the engine's HTTP client times each one (engine/src/target/http.rs)."""

import json
import time

from relay import Relay

DELAY_S = 0.02
#: HDR histograms keep 3 significant digits: a value may read as low as this much under it.
HDR_SLACK = 1e-3


def test_every_get_and_put_shows_the_relay_s_delay(hpcio, s3_server, tmp_path):
    backend_port = int(s3_server.endpoint.rsplit(":", 1)[1])
    out = tmp_path / "r.jsonl"

    def hold(handler, body):
        time.sleep(DELAY_S)
        return False

    with Relay(backend_port, hold) as relay:
        endpoint = f"http://127.0.0.1:{relay.port}"
        env = {**s3_server.env, "AWS_ENDPOINT": endpoint, "AWS_ENDPOINT_URL": endpoint}
        done = hpcio("run", "-n", 1, "--pattern", "mfmw", "--target", s3_server.url("ttfb"),
                     "--size-per-rank", "10MiB", "--part-size", "5MiB", "--in-flight", "2",
                     "--verify", "-o", out, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    write, read = doc["phases"]
    assert write["requests"] == {"create_multipart": 1, "upload_part": 2, "complete_multipart": 1}
    assert write["ttfb_put"]["count"] == 2 and write["ttfb_get"] is None  # the parts alone
    assert read["requests"] == {"get": 2}
    assert read["ttfb_get"]["count"] == 2 and read["ttfb_put"] is None
    for ttfb in (write["ttfb_put"], read["ttfb_get"]):
        # A lower bound only: the relay and the store add their own time, never less.
        assert ttfb["p50_s"] >= DELAY_S * (1 - HDR_SLACK)
    # The first byte of a GET comes before its last: TTFB is part of the request's latency.
    assert read["ttfb_get"]["max_s"] <= read["latency"]["max_s"] * (1 + HDR_SLACK)
    assert "TTFB get p50 " in done.stdout
