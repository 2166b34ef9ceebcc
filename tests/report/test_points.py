"""What makes two runs the same point: settings that mean the same on every target."""

from hpcio.report.points import point_key, spec_fields


def run(url, kind, fsync):
    return {
        "workload": "mfmw",
        "params": {"size_per_rank_bytes": 8 << 20, "transfer_bytes": 8 << 20},
        "target": {"url": url, "kind": kind, "options": []},
        "ranks": 2,
        "fsync": fsync,
    }


def test_an_object_store_write_is_durable_at_commit():
    """A POSIX run with --fsync and a Blob run without it made their data equally durable:
    they are one configuration, in one table, the target apart."""
    posix, blob = run("file:///scratch", "posix", True), run("az://c/p", "azure", False)
    assert spec_fields(blob)["fsync"] is True
    assert point_key(posix, without=("target",)) == point_key(blob, without=("target",))


def test_fsync_still_tells_posix_runs_apart():
    synced, buffered = run("file:///a", "posix", True), run("file:///a", "posix", False)
    assert point_key(synced) != point_key(buffered)
    assert spec_fields(run("memory://", "memory", False))["fsync"] is False
