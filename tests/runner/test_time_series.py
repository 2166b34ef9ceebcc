import pytest
from hpcio import _engine
from hpcio.runner.aggregate import RankFigures, time_series

NS = 1_000_000_000
MiB = 1 << 20


def rank(number, width_ns, buckets, latencies=(), latency_width_ns=10_000_000):
    return RankFigures(rank=number, node=0, open_ns=None, transfer_ns=(0, len(buckets) * width_ns),
                       close_ns=None, bytes=sum(buckets), ops=len(buckets), errors=0,
                       first_errors=(), latency_hdr=_engine.histogram_merge([]),
                       timeline_width_ns=width_ns, timeline_bytes=tuple(buckets),
                       latency_series_width_ns=latency_width_ns,
                       latency_series=tuple(latencies))  # fmt: skip


def test_long_phase_has_one_point_per_second_summed_over_ranks():
    a = rank(0, NS // 2, [MiB] * 40)  # 2 MiB/s for 20 s
    b = rank(1, NS // 2, [0] * 20 + [3 * MiB] * 20)  # silent for 10 s, then 6 MiB/s
    series = time_series([a, b], start_ns=0, phase_ns=20 * NS)
    assert series.interval_s == 1.0
    assert series.mib_s == pytest.approx([2.0] * 10 + [8.0] * 10)


def test_short_phase_has_ten_points_and_a_stall_shows():
    a = rank(0, NS // 100, [MiB] * 4 + [0] * 4 + [MiB] * 2)  # 0.1 s, stalled in the middle
    series = time_series([a], start_ns=0, phase_ns=NS // 10)
    assert series.interval_s == pytest.approx(0.01)
    assert series.mib_s == pytest.approx([100.0] * 4 + [0.0] * 4 + [100.0] * 2)


def test_interval_is_never_finer_than_the_coarsest_timeline():
    a = rank(0, 4 * NS, [4 * MiB] * 5)
    series = time_series([a], start_ns=0, phase_ns=20 * NS)
    assert series.interval_s == 4.0
    assert sum(m * series.interval_s for m in series.mib_s) == pytest.approx(20.0)


def test_p99_per_second_comes_from_the_merged_counts_of_all_ranks():
    # Second 0: rank 0 has 98 ops at 1 ms and rank 1 two at 50 ms; either rank's own p99
    # (1 ms, 50 ms) or their mean would be wrong: of the 100 ops, the 99th is 50 ms.
    # Second 1: nothing completes (a stall), so it has no p99.
    ms = 1_000_000
    a = rank(0, NS, [MiB, 0] + [MiB] * 8, latencies=[(0, ms, 98), (200, ms, 5)])
    b = rank(1, NS, [MiB, 0] + [MiB] * 8, latencies=[(50, 50 * ms, 2), (250, 3 * ms, 1)])
    series = time_series([a, b], start_ns=0, phase_ns=10 * NS)
    assert series.interval_s == 1.0
    assert len(series.p99_s) == 10
    assert series.p99_s[0] == pytest.approx(0.050)
    assert series.p99_s[1] is None
    assert series.p99_s[2] == pytest.approx(0.003)  # 5 at 1 ms + 1 at 3 ms: the top one
