"""The shipped node-scaling suite (suites/nodes.toml, its small scale: 4 ranks at 1, 2 and 4
per node) across four simulated hosts, placed by the launcher through HPCIO_MPIEXEC's {ppn}:
each layout is one launch, and each document records the layout the job really had."""

from __future__ import annotations

import json
import sys
from pathlib import Path

NODES_SUITE = Path(__file__).resolve().parents[2] / "suites" / "nodes.toml"


def test_nodes_suite_places_ranks_per_node_across_hosts(four_hosts, tmp_path):
    target, out = tmp_path / "target", tmp_path / "nodes.jsonl"
    target.mkdir()
    # One slot per host in the hostfile: 2 and 4 per node take more than a host's slots.
    launcher = four_hosts.launcher("--oversubscribe", "--map-by", "ppr:{ppn}:node")
    done = four_hosts.run(
        [sys.executable, "-m", "hpcio", "suite", "run", str(NODES_SUITE), "--scale", "small",
         "--target", f"file://{target}", "-o", str(out)],
        env={"HPCIO_MPIEXEC": launcher}, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "not enforced" not in done.stdout
    docs = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(docs) == 9  # sfmr, sfmw, mfmw at 1, 2 and 4 per node
    layouts = set()
    for doc in docs:
        per_node = doc["run"]["ranks_per_node"]
        nodes = 4 // per_node
        assert doc["status"] == "complete"
        assert (doc["ranks"], doc["ranks_per_node"], doc["nodes"]) == (4, per_node, nodes)
        assert doc["hosts"] == [f"node{i}" for i in range(1, nodes + 1)]
        (write_or_read, *_) = doc["phases"]
        assert [r["node"] for r in write_or_read["per_rank"]] == [r // per_node for r in range(4)]
        layouts.add((doc["run"]["workload"], per_node))
    assert layouts == {(p, n) for p in ("sfmr", "sfmw", "mfmw") for n in (1, 2, 4)}
    assert [p.name for p in target.iterdir() if p.name != "hpcio-run.lock"] == []
