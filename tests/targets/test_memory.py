"""memory:// runs every pattern through the engine's object-store path, in one process."""

import json

import pytest

MiB = 1 << 20


@pytest.mark.parametrize("pattern", ["sfsw", "sfmw", "mfmw", "sfmr", "mfmr"])
def test_patterns_verify_on_memory(hpcio, tmp_path, pattern):
    out = tmp_path / "r.jsonl"
    done = hpcio("run", "--pattern", pattern, "--target", "memory://run", "--size-per-rank",
                 "24MiB", "--part-size", "8MiB", "--concurrency", "3", "--verify", "-i", "2",
                 "-q", "-o", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    assert doc["run"]["target"] == {"url": "memory://run", "kind": "memory", "options": []}
    reads = [p for p in doc["phases"] if p["phase"] == "read"]
    assert [p["bytes_total"] for p in reads] == [24 * MiB, 24 * MiB]
    assert all(p["requests"] == {"get": 3} for p in reads)
    writes = [p for p in doc["phases"] if p["phase"] == "write"]
    for p in writes:
        assert p["requests"] == {"create_multipart": 1, "upload_part": 3, "complete_multipart": 1}
    assert doc["cache"]["reads_may_hit_page_cache"] is False


def test_object_that_fits_one_transfer_is_one_put(hpcio, tmp_path):
    out = tmp_path / "r.jsonl"
    done = hpcio("run", "--pattern", "mfmw", "--target", "memory://", "--size-per-rank", "4MiB",
                 "--transfer", "4MiB", "--verify", "-q", "-o", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    write = json.loads(out.read_text())["phases"][0]
    assert write["requests"] == {"put": 1}


def test_store_option_values_never_reach_output(hpcio, tmp_path):
    out = tmp_path / "r.jsonl"
    done = hpcio("run", "--pattern", "mfmw", "--target", "memory://", "--size-per-rank", "1MiB",
                 "--store-option", "secret_thing=hunter2-not-printed", "-o", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "hunter2" not in done.stdout + done.stderr + out.read_text()
    assert json.loads(out.read_text())["run"]["target"]["options"] == ["secret_thing"]
