"""--reorder across two simulated hosts: every rank reads data a rank on the other host wrote,
however the launcher placed the ranks, and the document says whose."""

from __future__ import annotations

import pytest
from test_hosts_patterns import hpcio_run, only_document

#: Open MPI's placements: fill a host's slots first (its default), or deal ranks round robin.
PLACEMENTS = {"by slot": (), "by node": ("--map-by", "node")}


@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("pattern", ["mfmw", "sfmw", "sfsw", "mfmr", "sfmr"])
def test_reorder_reads_the_other_hosts_data(cluster, tmp_path, pattern, placement):
    target, out = tmp_path / "target", tmp_path / "r.jsonl"
    target.mkdir()
    scope = ["--read-scope", "own"] if pattern == "sfmr" else []
    done = hpcio_run(cluster, "--pattern", pattern, "--target", f"file://{target}",
                     "--size-per-rank", "1MiB", "--transfer", "256KiB", "--reorder", "--verify",
                     *scope, "-o", out, mpiexec_options=PLACEMENTS[placement])  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = only_document(out)
    assert doc["hosts"] == ["node1", "node2"]
    if pattern != "sfsw":  # rank 0 reads the file for everyone and sends each its source's
        assert doc["cache"]["read_back_from"] == "data written by a rank on another node"
    (read,) = [p for p in doc["phases"] if p["phase"] == "read"]
    node_of = {r["rank"]: r["node"] for r in read["per_rank"]}
    assert sorted(node_of.values()) == [0, 0, 1, 1]
    for times in read["per_rank"]:
        assert times["read_from_node"] == node_of[times["read_from_rank"]]
        assert times["read_from_node"] != times["node"], times
    # Each rank's data is read exactly once.
    assert sorted(t["read_from_rank"] for t in read["per_rank"]) == [0, 1, 2, 3]
    (write,) = [p for p in doc["phases"] if p["phase"] == "write"] or [{"per_rank": []}]
    assert all("read_from_rank" not in t for t in write["per_rank"])
