"""The client's CPU arithmetic: CPU-seconds per GiB, the fraction of a core, the client-bound
threshold, and how they reach the phase figures, the summary and the warnings."""

import pytest
from hpcio import _engine
from hpcio.runner.aggregate import RankFigures, phase_figures, summarize
from hpcio.runner.cpu import (
    CLIENT_BOUND_FRACTION,
    CLIENT_BOUND_WARNING,
    CpuClock,
    RankCpu,
    client_bound,
    client_bound_warnings,
    phase_cpu,
)

GIB = 1 << 30


def figures(rank, nbytes, cpu, *, phase_ns=(0, 1_000_000_000)):
    return RankFigures(
        rank=rank,
        node=0,
        open_ns=None,
        transfer_ns=phase_ns,
        close_ns=None,
        bytes=nbytes,
        ops=1,
        errors=0,
        first_errors=(),
        latency_hdr=_engine.histogram_merge([]),
        timeline_width_ns=1_000_000_000,
        timeline_bytes=(nbytes,),
        cpu=cpu,
    )


def test_cpu_seconds_per_gib_add_every_ranks_user_and_system_time():
    ranks = [RankCpu(0.5, 0.25, 2.0), RankCpu(1.0, 0.25, 2.0)]
    cpu = phase_cpu(ranks, 2 * GIB)
    assert cpu.user_s == pytest.approx(1.5)
    assert cpu.system_s == pytest.approx(0.5)
    assert cpu.seconds_per_gib == pytest.approx(2.0 / 2)


def test_the_fraction_of_a_core_is_each_ranks_own_window_then_the_mean():
    # Rank 0 used 0.75 s of CPU in 1 s, rank 1 used 1.5 s in 3 s (it ran longer).
    ranks = [RankCpu(0.5, 0.25, 1.0), RankCpu(1.0, 0.5, 3.0)]
    cpu = phase_cpu(ranks, GIB)
    assert cpu.core_fraction_mean == pytest.approx((0.75 + 0.5) / 2)
    assert cpu.core_fraction_max == pytest.approx(0.75)


def test_a_rank_with_threads_can_keep_more_than_one_core_busy():
    assert RankCpu(3.0, 1.0, 2.0).core_fraction == pytest.approx(2.0)


def test_nothing_moved_has_no_cpu_per_gib_and_an_empty_window_no_fraction():
    assert phase_cpu([RankCpu(0.1, 0.0, 1.0)], 0).seconds_per_gib is None
    assert RankCpu(0.0, 0.0, 0.0).core_fraction == 0.0


@pytest.mark.parametrize(
    ("busy", "bound"),
    [(0.95, True), (0.91, True), (CLIENT_BOUND_FRACTION, False), (0.5, False), (0.0, False)],
)
def test_client_bound_above_ninety_percent_of_a_core(busy, bound):
    assert client_bound(busy) is bound
    assert phase_cpu([RankCpu(busy, 0.0, 1.0, waited_s=0.0)], GIB).client_bound is bound


def test_waiting_for_a_core_counts_as_demand_for_the_flag_not_as_cpu_time():
    # On a shared node the rank ran 40 % of its window and waited for a core 55 %: it was
    # never waiting for storage, so the figure measures the client.
    starved = RankCpu(0.3, 0.1, 1.0, waited_s=0.55)
    cpu = phase_cpu([starved], GIB)
    assert cpu.core_fraction_mean == pytest.approx(0.4)
    assert cpu.demand_fraction_mean == pytest.approx(0.95)
    assert cpu.waited_s == pytest.approx(0.55)
    assert cpu.seconds_per_gib == pytest.approx(0.4)
    assert cpu.client_bound


def test_the_flag_is_on_the_mean_over_ranks_not_the_busiest():
    ranks = [RankCpu(1.0, 0.0, 1.0, 0.0), RankCpu(0.2, 0.0, 1.0, 0.0)]
    assert not phase_cpu(ranks, GIB).client_bound


def test_without_schedstat_the_wait_is_unknown_and_cpu_time_alone_decides():
    cpu = phase_cpu([RankCpu(0.95, 0.0, 1.0, waited_s=None)], GIB)
    assert cpu.waited_s is None
    assert cpu.client_bound


def test_phase_figures_carry_the_ranks_cpu_and_the_summary_counts_flagged_iterations():
    busy = [figures(0, GIB, RankCpu(0.9, 0.1, 1.0, 0.0)), figures(1, GIB, RankCpu(1, 0, 1, 0))]
    idle = [figures(0, GIB, RankCpu(0.1, 0.0, 1.0, 0.0)), figures(1, GIB, RankCpu(0, 0, 1, 0))]
    first = phase_figures("write", 0, busy)
    second = phase_figures("write", 1, idle)
    assert first.cpu.client_bound and not second.cpu.client_bound
    assert first.cpu.seconds_per_gib == pytest.approx(1.0)
    assert first.per_rank[0].cpu_user_s == pytest.approx(0.9)
    assert first.per_rank[1].cpu_window_s == pytest.approx(1.0)
    summary = summarize([first, second])["write"]
    assert summary.client_bound_iterations == 1
    assert summary.cpu_seconds_per_gib.mean == pytest.approx((1.0 + 0.05) / 2)
    (warning,) = client_bound_warnings([first, second])
    assert warning.startswith(f"{CLIENT_BOUND_WARNING}: write in 1 of 2 iteration(s)")
    assert "measures the client's CPU, not the storage" in warning
    assert client_bound_warnings([second]) == ()


def test_a_phase_where_a_rank_did_not_measure_has_no_cpu_figures():
    ranks = [figures(0, GIB, RankCpu(1, 0, 1)), figures(1, GIB, None)]
    assert phase_figures("read", 0, ranks).cpu is None
    assert summarize([phase_figures("read", 0, ranks)])["read"].cpu_core_fraction is None


def test_the_clock_measures_this_process_cpu_over_its_window():
    clock = CpuClock()
    spin = _engine.clock_ns()
    while _engine.clock_ns() - spin < 50_000_000:
        pass
    measured = clock.stop()
    assert measured.window_s >= 0.05
    assert measured.user_s + measured.system_s > 0
    assert measured.demand_fraction >= measured.core_fraction
