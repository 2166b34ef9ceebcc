"""Simulated hosts made of namespaces (hosts.py): `cluster`, two hosts of two slots each, and
`four_hosts`, four of one slot each; one of each for the session, made on first use."""

from __future__ import annotations

import hosts
import pytest


def _made(tmp_path_factory: pytest.TempPathFactory, count: int, slots: int):
    reason = hosts.missing()
    if reason:
        pytest.skip(reason)
    directory = tmp_path_factory.mktemp(f"hosts{count}")
    made = hosts.cluster(directory, count=count, slots=slots)
    try:
        the_cluster = made.__enter__()
    except RuntimeError as e:  # what it made is removed already
        pytest.skip(f"simulated hosts cannot be made here: {e}")
    try:
        yield the_cluster
    finally:
        made.__exit__(None, None, None)


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory):
    """node1 and node2, with 2 slots each in cluster.hostfile; skipped with the reason where
    they cannot be made (not root, no sshd, no namespaces)."""
    yield from _made(tmp_path_factory, 2, 2)


@pytest.fixture(scope="session")
def four_hosts(tmp_path_factory: pytest.TempPathFactory):
    """node1 to node4, with 1 slot each (a suite's layouts place more with --map-by ppr)."""
    yield from _made(tmp_path_factory, 4, 1)
