"""topology() from every rank's host name, in one pass over the world."""

import socket

from hpcio.runner.world import topology

NAMES = ["b", "b", "a", "c", "a", "b", "c"]


class Hosts:
    size = len(NAMES)

    def __init__(self, rank):
        self.rank = rank

    def allgather(self, obj):
        return list(NAMES)


def test_nodes_in_order_of_their_lowest_rank(monkeypatch):
    monkeypatch.setattr(socket, "gethostname", lambda: "a")
    topo = topology(Hosts(4))
    assert topo.hosts == ("b", "a", "c")
    assert (topo.node, topo.local_rank, topo.ranks_per_node) == (1, 1, 3)
