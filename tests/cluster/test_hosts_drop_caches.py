"""--drop-caches across two simulated hosts: one rank on each host drops its page cache before
each read phase (not every rank), and the document says which hosts did. The hosts share one
kernel, so each drop empties this whole machine's page cache: the test runs only where the
suite may do that (HPCIO_TEST_DROP_CACHES=1, as CI sets)."""

from __future__ import annotations

from test_hosts_patterns import hpcio_run, only_document


def test_every_host_drops_its_page_cache_once_per_read(cluster, drops_page_cache, tmp_path):
    target, out = tmp_path / "target", tmp_path / "r.jsonl"
    target.mkdir()
    done = hpcio_run(cluster, "--pattern", "mfmw", "--target", f"file://{target}",
                     "--size-per-rank", "1MiB", "--drop-caches", "-i", 2, "-o", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = only_document(out)
    assert doc["hosts"] == ["node1", "node2"]
    assert doc["cache"]["caches_dropped"] is True
    assert doc["cache"]["caches_dropped_by_host"] == {"node1": 2, "node2": 2}
