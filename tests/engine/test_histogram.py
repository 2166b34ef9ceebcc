import pytest
from hpcio import _engine
from hpcio.workloads.contract import Phase
from specs import plan_of, run_spec

QUANTILES = [0.5, 0.9, 0.99, 1.0]


def summary(hdr):
    return _engine.histogram_summary(hdr, QUANTILES)


def mfmw(size=1 << 20, transfer=64 << 10, ranks=1):
    return run_spec("mfmw", ranks=ranks, size_per_rank_bytes=size, transfer_bytes=transfer)


def test_empty_histogram():
    s = summary(_engine.histogram_merge([]))
    assert s == {"count": 0, "min_ns": 0, "max_ns": 0, "mean_ns": 0.0, "quantiles_ns": [0] * 4}


def test_garbage_is_not_a_histogram():
    with pytest.raises(ValueError, match="not an HDR histogram"):
        _engine.histogram_merge([b"not a histogram"])


@pytest.mark.parametrize("in_flight", [1, 4])
def test_one_latency_per_transfer(engine_run, in_flight):
    plan = plan_of(mfmw(), Phase.WRITE, 0)
    figures = engine_run(plan, in_flight=in_flight)
    s = summary(figures.latency_hdr)
    assert s["count"] == 16
    assert (figures.bytes, figures.ops, figures.errors) == (1 << 20, 16, 0)
    assert sum(figures.timeline_bytes) == 1 << 20
    assert 0 < s["min_ns"] <= s["quantiles_ns"][0] <= s["quantiles_ns"][-1]
    assert s["quantiles_ns"][-1] == pytest.approx(s["max_ns"], rel=1e-3)


def test_read_back_with_verify_counts_reads(engine_run):
    run = mfmw(transfer=128 << 10)
    engine_run(plan_of(run, Phase.WRITE, 0))
    figures = engine_run(plan_of(run, Phase.READ, 0), verify=True)
    assert (figures.errors, figures.first_errors) == (0, [])
    assert summary(figures.latency_hdr)["count"] == 8


def test_merging_two_executors(engine_run):
    run = mfmw(ranks=2)
    a = engine_run(plan_of(run, Phase.WRITE, 0)).latency_hdr
    b = engine_run(plan_of(mfmw(transfer=256 << 10, ranks=2), Phase.WRITE, 1)).latency_hdr
    sa, sb = summary(a), summary(b)
    merged = summary(_engine.histogram_merge([a, b]))
    assert (sa["count"], sb["count"]) == (16, 4)
    assert merged["count"] == 20
    assert merged["max_ns"] == max(sa["max_ns"], sb["max_ns"])
    assert merged["min_ns"] == min(sa["min_ns"], sb["min_ns"])
    assert merged["mean_ns"] == pytest.approx(
        (16 * sa["mean_ns"] + 4 * sb["mean_ns"]) / 20, rel=1e-3
    )


def test_merging_with_empty_changes_nothing(engine_run):
    plan = plan_of(mfmw(), Phase.WRITE, 0)
    hdr = engine_run(plan).latency_hdr
    assert summary(_engine.histogram_merge([hdr, _engine.histogram_merge([])])) == summary(hdr)
