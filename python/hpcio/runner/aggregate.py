"""Per-rank figures -> phase figures (IOR's arithmetic) -> statistics over iterations."""

from __future__ import annotations

import base64
import builtins
import math
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hpcio import _engine
from hpcio.results.schema import (
    CpuFigures,
    LatencyPercentiles,
    PhaseFigures,
    PhaseSummary,
    RankTimes,
    Stats,
    TimeSeries,
)
from hpcio.runner.cpu import RankCpu, phase_cpu
from hpcio.spec.model import RunSpec
from hpcio.workloads.contract import RankInfo

_NS = 1e9
_QUANTILES = (0.5, 0.9, 0.99, 0.999)
_KEPT_ERRORS = 5


@dataclass(slots=True)
class Contribution:
    """What a rank did outside the engine in a collective phase (sending, receiving, checking)."""

    start_ns: int | None = None
    end_ns: int | None = None
    errors: int = 0
    first_errors: list[str] = field(default_factory=list)

    def check(self, run: RunSpec, key: str, data: np.ndarray, writer: int, offset: int) -> None:
        """With --verify, compare received bytes with `writer`'s payload of `key` at `offset`."""
        if not run.verify:
            return
        mismatch = _engine.payload_check(data, run.seed, writer, key, offset)
        if mismatch is not None:
            at, expected, found = mismatch
            self.errors += 1
            if len(self.first_errors) < _KEPT_ERRORS:
                self.first_errors.append(
                    f"verify failed: {key} offset {at}: expected 0x{expected:02x}, "
                    f"found 0x{found:02x} (data of rank {writer})"
                )


@dataclass(frozen=True, slots=True)
class RankFigures:
    """One rank's figures for one phase; times in ns since that rank's own t0."""

    rank: int
    node: int
    open_ns: tuple[int, int] | None
    transfer_ns: tuple[int, int] | None
    close_ns: tuple[int, int] | None
    bytes: int
    ops: int
    errors: int
    first_errors: tuple[str, ...]
    latency_hdr: builtins.bytes  # the builtin: `bytes` above is a field
    timeline_width_ns: int
    timeline_bytes: tuple[int, ...]
    #: (interval, latency bucket top in ns, operations), intervals of `latency_series_width_ns`.
    latency_series_width_ns: int = 1
    latency_series: tuple[tuple[int, int, int], ...] = ()
    requests: dict[str, int] = field(default_factory=dict)
    throttled: int = 0
    retried: int = 0
    #: Figures only the workload has (a Python body's context.metrics), reduced by it.
    metrics: dict[str, Any] = field(default_factory=dict)
    #: The rank's CPU over its phase window (runner/cpu.py).
    cpu: RankCpu | None = None
    store_failures: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_engine(
        cls,
        who: RankInfo,
        figures: _engine.Figures,
        extra: Contribution | None = None,
        metrics: dict[str, Any] | None = None,
        cpu: RankCpu | None = None,
    ) -> RankFigures:
        """From an Executor's or a Recorder's figures (the same fields), with what the rank
        did outside the engine in a collective phase."""
        transfer = figures.transfer_ns
        errors, first = figures.errors, figures.first_errors
        if extra is not None:
            if extra.start_ns is not None and extra.end_ns is not None:
                transfer = _union(transfer, (extra.start_ns, extra.end_ns))
            errors += extra.errors
            first = (first + extra.first_errors)[:_KEPT_ERRORS]
        return cls(
            rank=who.rank,
            node=who.node,
            open_ns=figures.open_ns,
            transfer_ns=transfer,
            close_ns=figures.close_ns,
            bytes=figures.bytes,
            ops=figures.ops,
            errors=errors,
            first_errors=tuple(first),
            latency_hdr=figures.latency_hdr,
            timeline_width_ns=figures.timeline_width_ns,
            timeline_bytes=tuple(figures.timeline_bytes),
            latency_series_width_ns=figures.latency_series_width_ns,
            latency_series=tuple(figures.latency_series),
            requests=figures.requests,
            throttled=figures.throttled,
            retried=figures.retried,
            metrics=dict(metrics or {}),
            cpu=cpu,
            store_failures=figures.store_failures,
        )

    @property
    def start_ns(self) -> int | None:
        starts = [s[0] for s in (self.open_ns, self.transfer_ns, self.close_ns) if s]
        return min(starts) if starts else None

    @property
    def end_ns(self) -> int | None:
        ends = [s[1] for s in (self.open_ns, self.transfer_ns, self.close_ns) if s]
        return max(ends) if ends else None

    def bytes_done_by(self, at_ns: int) -> float:
        """Bytes this rank had completed `at_ns` after t0: all of them if it had ended by then,
        else from its completion timeline, interpolated inside the bucket holding `at_ns`."""
        if self.end_ns is not None and self.end_ns <= at_ns:
            return float(self.bytes)
        width = self.timeline_width_ns
        full, part = divmod(at_ns, width)
        done = float(sum(self.timeline_bytes[:full]))
        if full < len(self.timeline_bytes):
            done += self.timeline_bytes[full] * part / width
        return done


def _union(a: tuple[int, int] | None, b: tuple[int, int]) -> tuple[int, int]:
    return b if a is None else (min(a[0], b[0]), max(a[1], b[1]))


def _spread_s(spans: Sequence[tuple[int, int] | None]) -> float:
    """Latest end minus earliest start of one kind of operation across ranks."""
    present = [s for s in spans if s is not None]
    if not present:
        return 0.0
    return (max(e for _, e in present) - min(s for s, _ in present)) / _NS


def latency_percentiles(encoded: bytes) -> LatencyPercentiles:
    s = _engine.histogram_summary(encoded, list(_QUANTILES))
    p50, p90, p99, p999 = (v / _NS for v in s["quantiles_ns"])
    return LatencyPercentiles(
        count=s["count"],
        mean_s=s["mean_ns"] / _NS,
        p50_s=p50,
        p90_s=p90,
        p99_s=p99,
        p999_s=p999,
        max_s=s["max_ns"] / _NS,
    )


def time_series(ranks: Sequence[RankFigures], start_ns: int, phase_ns: int) -> TimeSeries:
    """Bytes completed per interval of the phase, as MiB/s, and the p99 latency of the
    operations completed in it, over all ranks, so stalls show.

    The interval is 1 s, or a tenth of a phase shorter than 10 s, and never finer than the
    coarsest rank's timeline bucket. An engine bucket counts in the interval where it starts.
    The p99 comes from the ranks' per-interval bucket counts merged, never from averaging.
    """
    coarsest = max(
        (w for r in ranks for w in (r.timeline_width_ns, r.latency_series_width_ns)), default=1
    )
    interval_ns = max(_NS if phase_ns >= 10 * _NS else phase_ns / 10, coarsest, 1)
    slots = max(1, math.ceil(phase_ns / interval_ns))

    def slot_of(at_ns: float) -> int:
        return min(max(int((at_ns - start_ns) // interval_ns), 0), slots - 1)

    done = [0.0] * slots
    counts: list[Counter[int]] = [Counter() for _ in range(slots)]
    for rank in ranks:
        for index, completed in enumerate(rank.timeline_bytes):
            done[slot_of(index * rank.timeline_width_ns)] += completed
        for index, bucket_ns, ops in rank.latency_series:
            counts[slot_of(index * rank.latency_series_width_ns)][bucket_ns] += ops
    interval_s = interval_ns / _NS
    return TimeSeries(
        interval_s=interval_s,
        mib_s=tuple(b / interval_s / (1 << 20) for b in done),
        p99_s=tuple(_quantile(c, 0.99) for c in counts),
    )


def _quantile(counts: Counter[int], q: float) -> float | None:
    """In seconds, the top of the smallest bucket whose cumulative count reaches q x total
    (a percentile reports the top of its bucket, as HDR histograms do)."""
    total = sum(counts.values())
    if total == 0:
        return None
    needed, seen = max(1, math.ceil(q * total)), 0
    for bucket_ns in sorted(counts):
        seen += counts[bucket_ns]
        if seen >= needed:
            return bucket_ns / _NS
    raise AssertionError("unreachable: the cumulative count reaches the total")


def phase_figures(phase: str, iteration: int, ranks: Sequence[RankFigures]) -> PhaseFigures:
    """IOR's reduction: phase time = latest end - earliest start over ranks; bandwidth = bytes
    completed / phase time. The stonewall figure stops the clock at the first rank's end."""
    starts = [r.start_ns for r in ranks if r.start_ns is not None]
    ends = [r.end_ns for r in ranks if r.end_ns is not None]
    start = min(starts) if starts else 0
    phase_ns = (max(ends) - start) if ends else 0
    total = sum(r.bytes for r in ranks)
    first_end = min(ends) if ends else 0
    stonewall_bytes = sum(r.bytes_done_by(first_end) for r in ranks)
    stonewall_ns = first_end - start
    merged = _engine.histogram_merge([r.latency_hdr for r in ranks])
    first_errors = tuple(f"rank {r.rank}: {m}" for r in ranks for m in r.first_errors)
    return PhaseFigures(
        phase=phase,
        iteration=iteration,
        ranks=len(ranks),
        nodes=len({r.node for r in ranks}),
        bytes_total=total,
        ops_total=sum(r.ops for r in ranks),
        errors=sum(r.errors for r in ranks),
        first_errors=first_errors[:_KEPT_ERRORS],
        phase_time_s=phase_ns / _NS,
        bandwidth_bytes_per_s=total * _NS / phase_ns if phase_ns else 0.0,
        stonewall_time_s=stonewall_ns / _NS,
        stonewall_bytes=int(stonewall_bytes),
        stonewall_bandwidth_bytes_per_s=stonewall_bytes * _NS / stonewall_ns
        if stonewall_ns
        else 0.0,
        open_time_s=_spread_s([r.open_ns for r in ranks]),
        transfer_time_s=_spread_s([r.transfer_ns for r in ranks]),
        close_time_s=_spread_s([r.close_ns for r in ranks]),
        latency=latency_percentiles(merged),
        latency_hdr_b64=base64.b64encode(merged).decode("ascii"),
        requests=dict(sum((Counter(r.requests) for r in ranks), Counter())),
        series=time_series(ranks, start, phase_ns),
        throttled=sum(r.throttled for r in ranks),
        retried=sum(r.retried for r in ranks),
        cpu=_cpu(ranks, total),
        store_failures=_added(r.store_failures for r in ranks),
        per_rank=tuple(
            RankTimes(
                rank=r.rank,
                node=r.node,
                start_s=(r.start_ns or 0) / _NS,
                end_s=(r.end_ns or 0) / _NS,
                open_s=_spread_s([r.open_ns]),
                transfer_s=_spread_s([r.transfer_ns]),
                close_s=_spread_s([r.close_ns]),
                bytes=r.bytes,
                cpu_user_s=r.cpu.user_s if r.cpu else None,
                cpu_system_s=r.cpu.system_s if r.cpu else None,
                cpu_window_s=r.cpu.window_s if r.cpu else None,
                cpu_waited_s=r.cpu.waited_s if r.cpu else None,
            )
            for r in ranks
        ),
    )


def _cpu(ranks: Sequence[RankFigures], bytes_moved: int) -> CpuFigures | None:
    measured = [r.cpu for r in ranks if r.cpu is not None]
    if not measured or len(measured) < len(ranks):
        return None
    return phase_cpu(measured, bytes_moved)


def _added(counts: Iterable[dict[str, int]]) -> dict[str, int]:
    return dict(sum((Counter(c) for c in counts), Counter()))


def stats(values: Sequence[float]) -> Stats:
    """Mean, median, min, max and population stddev (as IOR reports them)."""
    return Stats(
        mean=statistics.fmean(values),
        median=statistics.median(values),
        min=min(values),
        max=max(values),
        stddev=statistics.pstdev(values) if len(values) > 1 else 0.0,
    )


def summarize(figures: Sequence[PhaseFigures]) -> dict[str, PhaseSummary]:
    """Statistics over iterations, keyed by phase; latency from the histograms of all of them."""
    summary = {}
    for phase in dict.fromkeys(f.phase for f in figures):
        mine = [f for f in figures if f.phase == phase]
        mib = float(1 << 20)
        merged = _engine.histogram_merge([base64.b64decode(f.latency_hdr_b64) for f in mine])
        measured = [f.cpu for f in mine if f.cpu is not None]
        per_gib = [c.seconds_per_gib for c in measured if c.seconds_per_gib is not None]
        demand = [c.demand_fraction_mean for c in measured if c.demand_fraction_mean is not None]
        summary[phase] = PhaseSummary(
            iterations=len(mine),
            bytes_total=mine[0].bytes_total,
            bandwidth_mib_s=stats([f.bandwidth_bytes_per_s / mib for f in mine]),
            stonewall_bandwidth_mib_s=stats(
                [f.stonewall_bandwidth_bytes_per_s / mib for f in mine]
            ),
            seconds=stats([f.phase_time_s for f in mine]),
            open_seconds=stats([f.open_time_s for f in mine]),
            transfer_seconds=stats([f.transfer_time_s for f in mine]),
            close_seconds=stats([f.close_time_s for f in mine]),
            latency=latency_percentiles(merged),
            errors=sum(f.errors for f in mine),
            throttled=sum(f.throttled for f in mine),
            retried=sum(f.retried for f in mine),
            cpu_seconds_per_gib=stats(per_gib) if per_gib else None,
            cpu_core_fraction=stats([c.core_fraction_mean for c in measured]) if measured else None,
            cpu_demand_fraction=stats(demand) if demand else None,
            client_bound_iterations=sum(c.client_bound for c in measured),
            store_failures=_added(f.store_failures for f in mine),
        )
    return summary
