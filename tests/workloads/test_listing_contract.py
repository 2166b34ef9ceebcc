"""The listing workload's contract: its files, its write plan, and its metrics reduced from
every rank's (latencies from merged histograms, the listing's time the slowest rank's)."""

import numpy as np
from hpcio import _engine
from hpcio.spec.model import RunSpec
from hpcio.spec.target import TargetSpec
from hpcio.workloads import registry
from hpcio.workloads.contract import Phase, PlanBody, PythonBody, RankInfo
from hpcio.workloads.listing import file_key

WORKLOAD = registry.get("listing")


def spec(**params):
    return RunSpec.build("listing", target=TargetSpec.from_url("file:///tmp/x"), ranks=3, **params)


def recorded(latencies_ns):
    recorder = _engine.Recorder()
    recorder.start(0)
    ends = np.cumsum(latencies_ns).astype(np.uint64)
    starts = (ends - np.asarray(latencies_ns, np.uint64)).astype(np.uint64)
    n = len(ends)
    recorder.record_many(np.full(n, 3, np.uint8), starts, ends, np.zeros(n, np.uint64))
    return recorder.figures().latency_hdr


def test_every_rank_writes_its_files_in_one_transfer_each_then_lists_and_reads():
    run = spec(files_per_rank=2, file_size_bytes=8192)
    write = WORKLOAD.body(run, Phase.WRITE, RankInfo(1, 3))
    assert isinstance(write, PlanBody)
    assert write.plan.keys == (file_key(1, 0), file_key(1, 1))
    moving = write.plan.lengths > 0
    assert write.plan.lengths[moving].tolist() == [8192, 8192]
    assert write.plan.writers[moving].tolist() == [1, 1]
    assert isinstance(WORKLOAD.body(run, Phase.READ, RankInfo(1, 3)), PythonBody)
    assert len(WORKLOAD.keys(run)) == 6
    assert all(WORKLOAD.owns_key(k) for k in WORKLOAD.keys(run))
    assert not WORKLOAD.owns_key("hpcio-rank000001.dat")
    assert WORKLOAD.stored_bytes(run) == 6 * 8192


def test_latencies_come_from_every_listers_histograms_merged():
    a, b = [1000, 2000, 3000], [50_000, 60_000]
    ranks = [
        {"lister": "every", "listers": 1, "list_ops": 1, "stat_ops": 3, "listed_entries": 6,
         "listing_s": 0.5, "list_requests": 2, "list_throttled": 1, "list_retried": 0,
         "list_hdr": recorded([7_000]), "stat_hdr": recorded(a)},
        {"lister": "every", "listers": 1, "list_ops": 1, "stat_ops": 2, "listed_entries": 6,
         "listing_s": 2.0, "list_requests": 3, "list_throttled": 2, "list_retried": 1,
         "list_hdr": recorded([9_000_000]), "stat_hdr": recorded(b)},
    ]  # fmt: skip
    m = WORKLOAD.reduce_metrics(ranks)
    assert (m["listers"], m["list_ops"], m["stat_ops"]) == (2, 2, 5)
    assert (m["list_requests"], m["list_throttled"], m["list_retried"]) == (5, 3, 1)
    assert m["listing_s"] == 2.0
    assert m["listed_entries"] == 6
    everyone = _engine.histogram_summary(recorded(a + b), [0.5, 0.99])
    assert m["stat_p50_s"] == everyone["quantiles_ns"][0] / 1e9
    assert m["stat_p99_s"] == everyone["quantiles_ns"][1] / 1e9
    assert m["list_max_s"] == _engine.histogram_summary(recorded([9_000_000]), [])["max_ns"] / 1e9
    assert not any(isinstance(v, bytes) for v in m.values())  # no raw histogram in documents


def test_rank0_lists_alone():
    m = WORKLOAD.reduce_metrics(
        [{"lister": "rank0", "listers": 1, "list_ops": 1, "stat_ops": 0, "listed_entries": 4,
          "listing_s": 0.1, "list_hdr": recorded([5000]), "stat_hdr": b""},
         {"lister": "rank0", "listers": 0, "list_ops": 0, "stat_ops": 0, "listed_entries": 4,
          "listing_s": 0.2, "list_hdr": b"", "stat_hdr": b""}]
    )  # fmt: skip
    assert (m["lister"], m["listers"], m["list_ops"]) == ("rank0", 1, 1)
    assert "stat_p50_s" not in m
    assert m["list_p50_s"] > 0
