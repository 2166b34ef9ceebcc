"""The capped link of tests/servers.py: a veth pair into a namespace of its own with a tbf
qdisc on both ends, through which a proxied store answers, and which leaves nothing behind."""

import subprocess
import sys

import pytest
import servers

pytestmark = [pytest.mark.root, pytest.mark.servers]


@pytest.fixture
def link_allowed():
    missing = servers.link_missing() or servers.Toxiproxy.missing()
    if missing:
        pytest.skip(missing)


def _netns_names():
    done = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True)
    return {line.split()[0] for line in done.stdout.splitlines() if line.strip()}


def _qdiscs(command):
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


def _fetch(store, url):
    probe = (
        "import sys, urllib.request, urllib.error\n"
        "try: urllib.request.urlopen(sys.argv[1], timeout=5)\n"
        "except urllib.error.HTTPError as e: print(e.code)\n"
    )
    command = store.command([sys.executable, "-c", probe, url])
    return subprocess.run(command, capture_output=True, text=True, timeout=30, check=False)


def test_the_link_is_capped_both_ways_and_removed(link_allowed):
    with servers.capped_link(400) as link:
        assert link.netns in _netns_names()
        near = _qdiscs(["tc", "qdisc", "show", "dev", link.device])
        far = _qdiscs(["ip", "netns", "exec", link.netns, "tc", "qdisc", "show", "dev", "eth0"])
        assert "tbf" in near and "400Mbit" in near
        assert "tbf" in far and "400Mbit" in far
    assert link.netns not in _netns_names()
    gone = subprocess.run(["ip", "link", "show", link.device], capture_output=True, check=False)
    assert gone.returncode != 0


def test_a_store_answers_across_the_link_and_only_there(link_allowed, s3_server):
    with servers.proxied_store(s3_server, "same-region", link=True) as store:
        assert store.cap_mib_s == pytest.approx(10000e6 / 8 / 2**20)
        across = _fetch(store, store.endpoint)
        # versitygw answers an unsigned GET with 403: the request went through proxy and link.
        assert across.stdout.strip() == "403", across.stderr
        # The far side has its own loopback: the server itself is out of its reach.
        direct = _fetch(store, s3_server.endpoint)
        assert direct.returncode != 0
