import pytest
from hpcio import _engine
from hpcio.runner.aggregate import RankFigures, throughput_series

NS = 1_000_000_000
MiB = 1 << 20


def rank(number, width_ns, buckets):
    return RankFigures(rank=number, node=0, open_ns=None, transfer_ns=(0, len(buckets) * width_ns),
                       close_ns=None, bytes=sum(buckets), ops=len(buckets), errors=0,
                       first_errors=(), latency_hdr=_engine.histogram_merge([]),
                       timeline_width_ns=width_ns, timeline_bytes=tuple(buckets))  # fmt: skip


def test_long_phase_has_one_point_per_second_summed_over_ranks():
    a = rank(0, NS // 2, [MiB] * 40)  # 2 MiB/s for 20 s
    b = rank(1, NS // 2, [0] * 20 + [3 * MiB] * 20)  # silent for 10 s, then 6 MiB/s
    series = throughput_series([a, b], start_ns=0, phase_ns=20 * NS)
    assert series.interval_s == 1.0
    assert series.mib_s == pytest.approx([2.0] * 10 + [8.0] * 10)


def test_short_phase_has_ten_points_and_a_stall_shows():
    a = rank(0, NS // 100, [MiB] * 4 + [0] * 4 + [MiB] * 2)  # 0.1 s, stalled in the middle
    series = throughput_series([a], start_ns=0, phase_ns=NS // 10)
    assert series.interval_s == pytest.approx(0.01)
    assert series.mib_s == pytest.approx([100.0] * 4 + [0.0] * 4 + [100.0] * 2)


def test_interval_is_never_finer_than_the_coarsest_timeline():
    a = rank(0, 4 * NS, [4 * MiB] * 5)
    series = throughput_series([a], start_ns=0, phase_ns=20 * NS)
    assert series.interval_s == 4.0
    assert sum(m * series.interval_s for m in series.mib_s) == pytest.approx(20.0)
