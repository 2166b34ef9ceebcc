"""Runs across two simulated hosts of two ranks each, launched the cluster way: the user's own
`mpiexec --hostfile ... python -m hpcio run ...` on the first host, ranks started on both by
ssh. The documents must name both hosts and their ranks per node."""

from __future__ import annotations

import json
import sys

import pytest
from hpcio.runner.lock import LOCK_KEY

PATTERNS = ("sfsw", "sfmw", "mfmw", "sfmr", "mfmr")


def hpcio_run(cluster, *args, ranks=4, mpiexec_options=()):
    """`mpiexec -n ranks --hostfile ... python -m hpcio run args` on the first host."""
    command = [*cluster.mpiexec(*mpiexec_options), "-n", str(ranks),
               sys.executable, "-m", "hpcio", "run", *map(str, args)]  # fmt: skip
    return cluster.run(command)


def only_document(path):
    (doc,) = [json.loads(line) for line in path.read_text().splitlines()]
    return doc


def data_files(directory):
    return sorted(p.name for p in directory.iterdir() if p.name != LOCK_KEY)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_every_pattern_records_both_hosts(cluster, tmp_path, pattern):
    target, out = tmp_path / "target", tmp_path / "r.jsonl"
    target.mkdir()
    done = hpcio_run(cluster, "--pattern", pattern, "--target", f"file://{target}",
                     "--size-per-rank", "1MiB", "--transfer", "256KiB", "--verify",
                     "-o", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    doc = only_document(out)
    assert doc["hosts"] == ["node1", "node2"]
    assert (doc["nodes"], doc["ranks"], doc["ranks_per_node"]) == (2, 4, 2)
    for phase in doc["phases"]:
        assert phase["nodes"] == 2
        placed = [(r["rank"], r["node"]) for r in phase["per_rank"]]
        assert placed == [(0, 0), (1, 0), (2, 1), (3, 1)]
    assert data_files(target) == []


def test_self_launch_from_a_host_outside_the_hostfile(cluster, tmp_path):
    """`hpcio run -n 2` on node1 (a login node) with HPCIO_MPIEXEC naming node2 only: rank 0
    runs on node2, where it must get what the launching hpcio hands its ranks (the target lock's
    token among them), or it finds the target held by its own launcher."""
    import dataclasses

    target, out = tmp_path / "target", tmp_path / "r.jsonl"
    target.mkdir()
    compute = tmp_path / "compute-nodes"
    compute.write_text(f"{cluster.hosts[1].address} slots=2\n")
    launcher = dataclasses.replace(cluster, hostfile=compute).launcher()
    done = cluster.run(
        [sys.executable, "-m", "hpcio", "run", "--pattern", "sfmw", "-n", "2", "--target",
         f"file://{target}", "--size-per-rank", "1MiB", "--verify", "-o", str(out)],
        env={"HPCIO_MPIEXEC": launcher},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = only_document(out)
    assert (doc["hosts"], doc["ranks_per_node"]) == (["node2"], 2)
    assert data_files(target) == []
