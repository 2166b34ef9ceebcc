"""The `cluster` fixture: two hosts of two ranks each, made of namespaces (hosts.py)."""

from __future__ import annotations

import hosts
import pytest


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory):
    """Two simulated hosts, node1 and node2, with 2 slots each in cluster.hostfile; skipped
    with the reason where they cannot be made (not root, no sshd, no namespaces)."""
    reason = hosts.missing()
    if reason:
        pytest.skip(reason)
    directory = tmp_path_factory.mktemp("hosts")
    try:
        made = hosts.cluster(directory, count=2, slots=2)
        the_cluster = made.__enter__()
    except RuntimeError as e:
        pytest.skip(f"simulated hosts cannot be made here: {e}")
    try:
        yield the_cluster
    finally:
        made.__exit__(None, None, None)
