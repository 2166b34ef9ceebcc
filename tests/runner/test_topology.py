"""topology() from every rank's host name, in one pass over the world."""

import socket

from hpcio.runner import interrupts
from hpcio.runner.world import topology

NAMES = ["b", "b", "a", "c", "a", "b", "c"]


class Hosts:
    size = len(NAMES)

    def __init__(self, rank):
        self.rank = rank

    def allgather(self, obj):
        host, _pid = obj
        assert host == socket.gethostname()
        return [(name, 100 + rank) for rank, name in enumerate(NAMES)]


def test_nodes_in_order_of_their_lowest_rank(monkeypatch):
    monkeypatch.setattr(socket, "gethostname", lambda: "a")
    monkeypatch.setattr(interrupts, "_rank0", None)
    topo = topology(Hosts(4))
    assert topo.hosts == ("b", "a", "c")
    assert (topo.node, topo.local_rank, topo.ranks_per_node) == (1, 1, 3)
    assert interrupts._rank0 == ("b", 100)  # an interrupted rank on host b waits for pid 100
