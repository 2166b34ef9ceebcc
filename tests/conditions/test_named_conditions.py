"""The named conditions shipped with the package, and the toxics they turn into."""

import pytest
from hpcio import conditions
from hpcio.errors import HpcioError


def test_the_issue_s_three_conditions_are_shipped():
    assert {"same-region", "cross-region", "lossy"} <= set(conditions.names())


def test_cross_region_is_far_capped_and_capped_per_connection():
    far = conditions.condition("cross-region")
    kinds = {(t["type"], t["stream"]) for t in far.toxics()}
    assert {("latency", "upstream"), ("latency", "downstream")} <= kinds
    assert ("bandwidth", "upstream") in kinds and ("bandwidth", "downstream") in kinds
    # A connection alone cannot fill the link: the per-connection cap is below it.
    assert 0 < far.connection_mbit < far.link_mbit
    # Mbit/s are 10^6 bit/s; hpcio reports MiB/s.
    assert far.link_mib_s == pytest.approx(far.link_mbit * 1e6 / 8 / 2**20)


def test_lossy_has_every_fault_kind_on_a_share_of_connections():
    toxics = {t["type"]: t for t in conditions.condition("lossy").toxics()}
    for kind in ("reset_peer", "limit_data", "timeout"):
        assert 0 < toxics[kind]["toxicity"] < 1, kind
    assert toxics["slow_close"]["attributes"]["delay"] > 0
    # The stall ends by a close after a while: a client whose timeout is longer waits it out.
    assert toxics["timeout"]["attributes"]["timeout"] > 0


def test_an_unknown_condition_names_the_known_ones():
    with pytest.raises(HpcioError, match="cross-region"):
        conditions.condition("moon")
