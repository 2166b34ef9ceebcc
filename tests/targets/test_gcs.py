"""gs:// against fake-gcs-server: it serves object_store's reads but refuses every write
(HTTP 400 "invalid uploadType"; see tests/servers.py), so data is uploaded through its JSON
API and hpcio reads and verifies it. Writes are tested for a clear one-line failure."""

import json

import numpy as np
import pytest
from hpcio import _engine

pytestmark = pytest.mark.mpi

MiB = 1 << 20


def payload(seed, writer, key, length):
    buf = np.empty(length, np.uint8)
    _engine.payload_fill(buf, seed, writer, key, 0)
    return buf.tobytes()


def test_reads_and_verifies_objects_on_gcs(hpcio, gcs_server, tmp_path):
    for rank in range(2):
        key = f"hpcio-rank{rank:06d}.dat"
        gcs_server.upload(f"reads/{key}", payload(1, rank, key, 8 * MiB))
    out = tmp_path / "r.jsonl"
    done = hpcio("run", "-n", 2, "--pattern", "mfmr", "--target", gcs_server.url("reads"),
                 "--size-per-rank", "8MiB", "--transfer", "2MiB", "--concurrency", "2",
                 "--phases", "read", "--keep", "--verify", "-q", "-o", out,
                 env=gcs_server.env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    read = json.loads(out.read_text())["phases"][0]
    assert (read["bytes_total"], read["requests"]) == (16 * MiB, {"get": 8})


def test_wrong_data_on_gcs_fails_verification(hpcio, gcs_server, error_line):
    key = "hpcio-rank000000.dat"
    data = bytearray(payload(1, 0, key, 4 * MiB))
    data[3 * MiB + 5] ^= 0xFF
    gcs_server.upload(f"bad/{key}", bytes(data))
    done = hpcio("run", "--pattern", "mfmr", "--target", gcs_server.url("bad"),
                 "--size-per-rank", "4MiB", "--transfer", "1MiB", "--phases", "read",
                 "--keep", "--verify", "-q", env=gcs_server.env)  # fmt: skip
    assert done.returncode == 1
    assert f"verify failed: {key} offset {3 * MiB + 5}:" in error_line(done)


def test_writes_the_emulator_refuses_fail_in_one_line(hpcio, gcs_server, error_line):
    done = hpcio("run", "--pattern", "mfmw", "--target", gcs_server.url("w"),
                 "--size-per-rank", "1MiB", env=gcs_server.env)  # fmt: skip
    assert done.returncode == 2
    assert error_line(done).startswith(f"hpcio: error: target {gcs_server.url('w')}: ")
