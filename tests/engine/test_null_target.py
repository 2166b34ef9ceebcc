"""null:// (engine/src/target/null.rs): writes discarded, reads answered with the payload the
plan expects, an optional per-operation delay. A run on it needs no storage and no server."""

import json

import pytest
from hpcio import _engine
from hpcio.errors import SpecError
from hpcio.spec.target import TargetSpec

MiB = 1 << 20


def test_the_url_keeps_its_delay_and_refuses_anything_else():
    assert TargetSpec.from_url("null://").url == "null://"
    assert TargetSpec.from_url("null://?delay=2ms").url == "null://?delay=2ms"
    for bad in ("null://bucket", "null://?delay=2", "null://?speed=1ms"):
        with pytest.raises(SpecError, match="null:// takes only a per-operation delay"):
            TargetSpec.from_url(bad)


def test_the_engine_opens_it_with_no_part_limits():
    target = _engine.Target("null://?delay=1us")
    assert target.kind == "null"
    limits = target.limits()
    assert limits["multipart"] is True
    assert (limits["min_part_bytes"], limits["max_part_bytes"], limits["max_parts"]) == (0, 0, 0)
    assert target.list("") == []
    with pytest.raises(ValueError, match="delay 'soon'"):
        _engine.Target("null://?delay=soon")


@pytest.mark.parametrize(("pattern", "write_requests"), [
    ("mfmw", {"open": 1, "write": 8, "close": 1}),
    ("sfmw", {"create_multipart": 1, "write": 8, "complete_multipart": 1}),
])  # fmt: skip
def test_a_verified_run_passes_with_nothing_stored(hpcio, tmp_path, pattern, write_requests):
    out = tmp_path / "r.jsonl"
    done = hpcio("run", "--pattern", pattern, "--target", "null://", "-n", "1",
                 "--size-per-rank", "8MiB", "--transfer", "1MiB", "--verify", "-i", "2", "-q",
                 "-o", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    assert doc["run"]["target"] == {"url": "null://", "kind": "null", "options": []}
    assert "null:// keeps nothing" in doc["cache"]["notes"][0]
    phases = doc["phases"]
    assert [p["phase"] for p in phases] == ["write", "read"] * 2
    for p in phases:
        assert (p["bytes_total"], p["errors"]) == (8 * MiB, 0), p["phase"]
        if p["phase"] == "write":
            assert p["requests"] == write_requests
        else:
            assert p["requests"]["read"] == 8
    assert list(tmp_path.iterdir()) == [out]  # nothing written beside the results


def test_clean_finds_nothing_and_library_stores_are_refused(hpcio):
    done = hpcio("clean", "--target", "null://")
    assert done.returncode == 0, done.stderr
    assert "0 of hpcio's objects under null://" in done.stdout
    done = hpcio("run", "--workload", "volume", "--target", "null://")
    assert done.returncode == 2
    assert done.stderr.strip().endswith(
        "volume writes through a library's own store: null:// has none"
    )
