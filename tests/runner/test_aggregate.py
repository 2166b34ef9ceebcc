import base64
import math

import pytest
from hpcio import _engine
from hpcio.runner.aggregate import RankFigures, phase_figures, stats, summarize

EMPTY_HDR = _engine.histogram_merge([])
NS = 1e9


def rank(
    rank,
    open_ns,
    transfer_ns,
    close_ns,
    nbytes,
    *,
    node=0,
    width=100,
    buckets=(),
    errors=0,
    first_errors=(),
    ops=None,
    hdr=EMPTY_HDR,
):
    return RankFigures(
        rank=rank,
        node=node,
        open_ns=open_ns,
        transfer_ns=transfer_ns,
        close_ns=close_ns,
        bytes=nbytes,
        ops=4 if ops is None else ops,
        errors=errors,
        first_errors=tuple(first_errors),
        latency_hdr=hdr,
        timeline_width_ns=width,
        timeline_bytes=tuple(buckets),
    )


# Rank 0 finishes first, at 1150 ns; its four 250-byte transfers completed at 400..1000 ns.
R0 = rank(
    0,
    (100, 200),
    (200, 1100),
    (1100, 1150),
    1000,
    width=100,
    buckets=(0, 0, 0, 0, 250, 0, 250, 0, 250, 0, 250),
)
# Rank 1 (another node) moved 500 bytes in [1000, 1200) and 500 in [1800, 2000).
R1 = rank(
    1,
    (300, 350),
    (350, 1950),
    (1950, 2100),
    1000,
    node=1,
    width=200,
    buckets=(0, 0, 0, 0, 0, 500, 0, 0, 0, 500),
)


def test_phase_time_and_bandwidth():
    f = phase_figures("write", 0, [R0, R1])
    assert f.phase_time_s == pytest.approx((2100 - 100) / NS)
    assert f.bandwidth_bytes_per_s == pytest.approx(2000 / ((2100 - 100) / NS))
    assert f.bytes_total == 2000
    assert (f.phase, f.iteration, f.ranks, f.nodes, f.ops_total) == ("write", 0, 2, 2, 8)


def test_open_transfer_close_spreads():
    f = phase_figures("write", 0, [R0, R1])
    assert f.open_time_s == pytest.approx((350 - 100) / NS)
    assert f.transfer_time_s == pytest.approx((1950 - 200) / NS)
    assert f.close_time_s == pytest.approx((2100 - 1100) / NS)


def test_stonewall_interpolates_at_first_rank_end():
    f = phase_figures("write", 0, [R0, R1])
    # At 1150 ns rank 0 has all 1000 bytes; rank 1 has 150/200 of its [1000, 1200) bucket.
    assert f.stonewall_bytes == 1000 + 375
    assert f.stonewall_time_s == pytest.approx((1150 - 100) / NS)
    assert f.stonewall_bandwidth_bytes_per_s == pytest.approx(1375 / ((1150 - 100) / NS))


def test_stonewall_of_one_rank_is_all_its_bytes():
    # The last transfer completes at 250 ns, inside the bucket [200, 300) that also holds the
    # rank's end (260 ns): when the only rank has finished, every one of its bytes is done.
    alone = rank(0, (0, 50), (100, 250), (250, 260), 1000, width=100, buckets=(0, 500, 500))
    f = phase_figures("read", 0, [alone])
    assert f.stonewall_bytes == 1000
    assert f.stonewall_bandwidth_bytes_per_s == pytest.approx(f.bandwidth_bytes_per_s)


def test_per_rank_times():
    f = phase_figures("write", 0, [R0, R1])
    r0, r1 = f.per_rank
    assert (r0.rank, r0.node, r0.bytes, r1.rank, r1.node) == (0, 0, 1000, 1, 1)
    assert (r0.start_s, r0.end_s) == pytest.approx((100 / NS, 1150 / NS))
    assert (r1.start_s, r1.end_s) == pytest.approx((300 / NS, 2100 / NS))
    assert (r1.open_s, r1.transfer_s, r1.close_s) == pytest.approx((50 / NS, 1600 / NS, 150 / NS))


def test_rank_without_io_is_left_out_of_the_times():
    idle = rank(2, None, None, None, 0, ops=0)
    f = phase_figures("write", 0, [R0, R1, idle])
    assert f.phase_time_s == pytest.approx(2000 / NS)
    assert f.stonewall_time_s == pytest.approx(1050 / NS)
    assert f.ranks == 3
    assert f.per_rank[2].start_s == 0.0


def test_errors_are_summed_and_named_by_rank():
    bad = rank(1, (0, 10), (10, 20), (20, 30), 0, errors=3, first_errors=["read x offset 0: eof"])
    f = phase_figures("read", 1, [R0, bad])
    assert f.errors == 3
    assert f.first_errors == ("rank 1: read x offset 0: eof",)


def test_empty_histograms_give_zero_latency():
    f = phase_figures("write", 0, [R0, R1])
    assert f.latency.count == 0
    assert f.latency.max_s == 0.0
    assert _engine.histogram_summary(base64.b64decode(f.latency_hdr_b64), [0.5])["count"] == 0


def test_stats_on_a_known_list():
    s = stats([1.0, 2.0, 3.0, 4.0, 10.0])
    assert (s.mean, s.median, s.min, s.max) == (4.0, 3.0, 1.0, 10.0)
    assert s.stddev == pytest.approx(math.sqrt((9 + 4 + 1 + 0 + 36) / 5))  # population


def test_stats_even_count_and_single_value():
    assert stats([1.0, 2.0, 3.0, 4.0]).median == 2.5
    one = stats([7.0])
    assert (one.mean, one.median, one.min, one.max, one.stddev) == (7.0, 7.0, 7.0, 7.0, 0.0)


def test_summarize_two_iterations():
    fast = phase_figures("write", 0, [rank(0, (0, 100), (100, 900), (900, 1000), 2 << 20)])
    slow = phase_figures("write", 1, [rank(0, (0, 100), (100, 2900), (2900, 3000), 2 << 20)])
    reads = phase_figures("read", 0, [rank(0, (0, 10), (10, 490), (490, 500), 2 << 20)])
    summary = summarize([fast, reads, slow])
    assert list(summary) == ["write", "read"]
    write = summary["write"]
    assert (write.iterations, write.bytes_total, write.errors) == (2, 2 << 20, 0)
    mib_s = [2 / (1000 / NS), 2 / (3000 / NS)]
    assert write.bandwidth_mib_s.mean == pytest.approx(sum(mib_s) / 2)
    assert write.bandwidth_mib_s.min == pytest.approx(min(mib_s))
    assert write.bandwidth_mib_s.max == pytest.approx(max(mib_s))
    assert write.bandwidth_mib_s.stddev == pytest.approx(abs(mib_s[0] - mib_s[1]) / 2)
    assert write.seconds.mean == pytest.approx(2000 / NS)
    assert write.seconds.median == pytest.approx(2000 / NS)
    assert write.seconds.stddev == pytest.approx(1000 / NS)
    assert write.transfer_seconds.max == pytest.approx(2800 / NS)
    assert write.close_seconds.mean == pytest.approx(100 / NS)
    assert summary["read"].iterations == 1
    assert summary["read"].seconds.mean == pytest.approx(500 / NS)


def test_summarize_merges_latency_of_all_iterations(engine_run):
    from hpcio.workloads.contract import Phase
    from specs import plan_of, run_spec

    run = run_spec("mfmw", size_per_rank_bytes=256 << 10, transfer_bytes=64 << 10)
    plan = plan_of(run, Phase.WRITE)
    hdrs = [engine_run(plan).latency_hdr for _ in range(2)]
    figures = [
        phase_figures("write", i, [rank(0, (0, 1), (1, 2), (2, 3), 256 << 10, hdr=h)])
        for i, h in enumerate(hdrs)
    ]
    assert [f.latency.count for f in figures] == [4, 4]
    summary = summarize(figures)["write"]
    assert summary.latency.count == 8
    assert summary.latency.max_s == max(f.latency.max_s for f in figures)


def test_per_target_frames_merge_key_by_key():
    from hpcio.runner.aggregate import PhaseFrame, merged_by_target

    a, b = PhaseFrame.of(R0), PhaseFrame.of(R1)
    merged = merged_by_target({0: a}, merged_by_target({1: b}, {0: b}))
    assert set(merged) == {0, 1}
    assert merged[0] == a.merged(b) and merged[1] == b


def test_each_targets_figures_add_up_to_the_totals():
    from hpcio.runner.aggregate import PhaseFrame, PhaseShare, rank_row, target_figures

    total = phase_figures("write", 0, [R0, R1])
    parts = []
    for r in (R0, R1):
        frame = PhaseFrame.of(r)
        parts.append(target_figures(f"null://?delay={r.rank}ms", None, frame,
                                    PhaseShare.of(r, frame), [rank_row(r)]))  # fmt: skip
    assert sum(p.bytes_total for p in parts) == total.bytes_total
    assert sum(p.ops_total for p in parts) == total.ops_total
    assert sum(p.ranks for p in parts) == total.ranks
    assert max(p.phase_time_s for p in parts) <= total.phase_time_s
