"""Per-rank figures -> phase figures (IOR's arithmetic) -> statistics over iterations."""

from __future__ import annotations

import base64
import builtins
import functools
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from hpcio import _engine
from hpcio.results.schema import (
    CpuFigures,
    Distribution,
    LatencyPercentiles,
    PhaseFigures,
    PhaseSummary,
    RankSpread,
    RankTimes,
    SideFigures,
    SideSummary,
    Stats,
    TargetFigures,
    TimeSeries,
)
from hpcio.results.stats import latency_percentiles, stats
from hpcio.runner.cpu import RankCpu, phase_cpu
from hpcio.workloads.contract import Phase, RankInfo

if TYPE_CHECKING:
    from hpcio.spec.model import RunSpec

_NS = 1e9
_KEPT_ERRORS = 5
#: Up to this many ranks a document keeps every rank's raw times (about 150 bytes of JSON
#: each: 0.6 MiB a phase at most); past it, their distribution and the slowest ranks. IOR's
#: largest runs (tens of thousands of tasks, tens of phases) would otherwise write documents
#: of hundreds of MiB that no report reads, and rewrite them after every iteration.
PER_RANK_KEPT = 4096
#: Ranks named in a summarized document: those that ended last.
SLOWEST_KEPT = 16


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


#: One side of a rank's or the phase's transfers: (bytes, operations, latency HDR or b"").
SideTotals = tuple[int, int, builtins.bytes]


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
    #: With --reorder, in a read phase: the rank whose data this rank read.
    read_from: int | None = None
    #: The rank's CPU over its phase window (runner/cpu.py).
    cpu: RankCpu | None = None
    store_failures: dict[str, int] = field(default_factory=dict)
    #: Object-store time to first byte of GETs and of PUTs/parts (V2 HDR histograms, b"" when
    #: none were taken), and the files or objects opened.
    ttfb_get_hdr: builtins.bytes = b""
    ttfb_put_hdr: builtins.bytes = b""
    opens: int = 0
    #: The reads and the writes among the transfers: (bytes, operations, latency HDR or b"").
    read_side: SideTotals = (0, 0, b"")
    write_side: SideTotals = (0, 0, b"")

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
            ttfb_get_hdr=figures.ttfb_get_hdr,
            ttfb_put_hdr=figures.ttfb_put_hdr,
            opens=figures.opens,
            read_side=figures.read_side,
            write_side=figures.write_side,
        )

    @property
    def start_ns(self) -> int | None:
        starts = [s[0] for s in (self.open_ns, self.transfer_ns, self.close_ns) if s]
        return min(starts) if starts else None

    @property
    def end_ns(self) -> int | None:
        ends = [s[1] for s in (self.open_ns, self.transfer_ns, self.close_ns) if s]
        return max(ends) if ends else None

    def bytes_done_by(self, at_ns: int) -> Fraction:
        """Bytes this rank had completed `at_ns` after t0: all of them if it had ended by then,
        else from its completion timeline, interpolated inside the bucket holding `at_ns`
        (exact, so ranks' figures add up to the same total in any order)."""
        if self.end_ns is not None and self.end_ns <= at_ns:
            return Fraction(self.bytes)
        width = self.timeline_width_ns
        full, part = divmod(at_ns, width)
        done = Fraction(sum(self.timeline_bytes[:full]))
        if full < len(self.timeline_bytes):
            done += Fraction(self.timeline_bytes[full] * part, width)
        return done


def _union(a: tuple[int, int] | None, b: tuple[int, int]) -> tuple[int, int]:
    return b if a is None else (min(a[0], b[0]), max(a[1], b[1]))


def _spread_s(spans: Sequence[tuple[int, int] | None]) -> float:
    """Latest end minus earliest start of one kind of operation across ranks."""
    present = [s for s in spans if s is not None]
    if not present:
        return 0.0
    return (max(e for _, e in present) - min(s for s, _ in present)) / _NS


@dataclass(frozen=True, slots=True)
class PhaseFrame:
    """What every rank needs from all of them before its share of a phase can be reduced:
    the earliest start, the latest and the first end (None: no rank did anything), and the
    coarsest bucket of any rank's timeline or latency series (ns since each rank's t0)."""

    start_ns: int | None
    end_ns: int | None
    first_end_ns: int | None
    coarsest_ns: int

    @classmethod
    def of(cls, rank: RankFigures) -> PhaseFrame:
        widths = (rank.timeline_width_ns, rank.latency_series_width_ns)
        return cls(rank.start_ns, rank.end_ns, rank.end_ns, max(widths))

    def merged(self, other: PhaseFrame) -> PhaseFrame:
        return PhaseFrame(
            _least(self.start_ns, other.start_ns),
            _most(self.end_ns, other.end_ns),
            _least(self.first_end_ns, other.first_end_ns),
            max(self.coarsest_ns, other.coarsest_ns),
        )

    @property
    def origin_ns(self) -> int:
        return self.start_ns or 0

    @property
    def phase_ns(self) -> int:
        return self.end_ns - self.origin_ns if self.end_ns is not None else 0

    def interval_ns(self) -> float:
        """The time series' interval: 1 s, or a tenth of a phase shorter than 10 s, and never
        finer than the coarsest rank's bucket."""
        phase_ns = self.phase_ns
        return max(_NS if phase_ns >= 10 * _NS else phase_ns / 10, self.coarsest_ns, 1)

    def slots(self) -> int:
        return max(1, math.ceil(self.phase_ns / self.interval_ns()))


def _least(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else min(a, b)


def _most(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else max(a, b)


def _span_union(a: tuple[int, int] | None, b: tuple[int, int] | None) -> tuple[int, int] | None:
    return a if b is None else _union(a, b)


@dataclass(frozen=True, slots=True)
class PhaseShare:
    """Ranks' figures of one phase reduced together: what a rank sends up the reduction tree
    instead of all its figures, so rank 0 merges log2(ranks) of these rather than receiving
    every rank's histogram, timeline and series. Merging is exact and order-free: sums of
    integers, minima and maxima, histograms whose counts add, and a Fraction for the
    stonewall bytes (interpolated inside a timeline bucket)."""

    open_ns: tuple[int, int] | None
    transfer_ns: tuple[int, int] | None
    close_ns: tuple[int, int] | None
    bytes: int
    ops: int
    errors: int
    #: (rank, index, message): the first few, in rank order and each rank's own order.
    first_errors: tuple[tuple[int, int, str], ...]
    latency_hdr: builtins.bytes
    requests: dict[str, int]
    throttled: int
    retried: int
    #: Failed store requests by cause (runner/cpu.py's sibling in the engine: HTTP status,
    #: timeout, reset).
    store_failures: dict[str, int]
    ttfb_get_hdr: builtins.bytes
    ttfb_put_hdr: builtins.bytes
    opens: int
    read_side: SideTotals
    write_side: SideTotals
    stonewall_bytes: Fraction
    #: Bytes completed in each interval of the time series.
    done: tuple[int, ...]
    #: (interval, latency bucket top in ns) -> operations completed in it.
    series: dict[tuple[int, int], int]

    @classmethod
    def of(cls, rank: RankFigures, frame: PhaseFrame) -> PhaseShare:
        """This rank's share, placed in the phase's frame (every rank's, reduced first)."""
        origin, interval, slots = frame.origin_ns, frame.interval_ns(), frame.slots()

        def slot_of(at_ns: float) -> int:
            return min(max(int((at_ns - origin) // interval), 0), slots - 1)

        done = [0] * slots
        for index, completed in enumerate(rank.timeline_bytes):
            if completed:
                done[slot_of(index * rank.timeline_width_ns)] += completed
        series: Counter[tuple[int, int]] = Counter()
        for index, bucket_ns, ops in rank.latency_series:
            series[(slot_of(index * rank.latency_series_width_ns), bucket_ns)] += ops
        return cls(
            open_ns=rank.open_ns,
            transfer_ns=rank.transfer_ns,
            close_ns=rank.close_ns,
            bytes=rank.bytes,
            ops=rank.ops,
            errors=rank.errors,
            first_errors=tuple(
                (rank.rank, i, m) for i, m in enumerate(rank.first_errors[:_KEPT_ERRORS])
            ),
            latency_hdr=rank.latency_hdr,
            requests=dict(rank.requests),
            throttled=rank.throttled,
            retried=rank.retried,
            store_failures=dict(rank.store_failures),
            ttfb_get_hdr=rank.ttfb_get_hdr,
            ttfb_put_hdr=rank.ttfb_put_hdr,
            opens=rank.opens,
            read_side=rank.read_side,
            write_side=rank.write_side,
            stonewall_bytes=rank.bytes_done_by(frame.first_end_ns or 0),
            done=tuple(done),
            series=dict(series),
        )

    def merged(self, other: PhaseShare) -> PhaseShare:
        requests = Counter(self.requests)
        requests.update(other.requests)
        series = Counter(self.series)
        series.update(other.series)
        return PhaseShare(
            open_ns=_span_union(self.open_ns, other.open_ns),
            transfer_ns=_span_union(self.transfer_ns, other.transfer_ns),
            close_ns=_span_union(self.close_ns, other.close_ns),
            bytes=self.bytes + other.bytes,
            ops=self.ops + other.ops,
            errors=self.errors + other.errors,
            first_errors=tuple(sorted(self.first_errors + other.first_errors))[:_KEPT_ERRORS],
            latency_hdr=_engine.histogram_merge([self.latency_hdr, other.latency_hdr]),
            requests=dict(requests),
            throttled=self.throttled + other.throttled,
            retried=self.retried + other.retried,
            store_failures=_added((self.store_failures, other.store_failures)),
            ttfb_get_hdr=_merged_hdr([self.ttfb_get_hdr, other.ttfb_get_hdr]),
            ttfb_put_hdr=_merged_hdr([self.ttfb_put_hdr, other.ttfb_put_hdr]),
            opens=self.opens + other.opens,
            read_side=_side_sum(self.read_side, other.read_side),
            write_side=_side_sum(self.write_side, other.write_side),
            stonewall_bytes=self.stonewall_bytes + other.stonewall_bytes,
            done=tuple(a + b for a, b in zip(self.done, other.done, strict=True)),
            series=dict(series),
        )


#: rank_row(): rank, node, start_s, end_s, open_s, transfer_s, close_s, bytes, the rank whose
#: data it read (--reorder) or None, and its CPU over the phase window or None.
RankRow = tuple[int, int, float, float, float, float, float, int, "int | None", "RankCpu | None"]


def rank_row(rank: RankFigures) -> RankRow:
    """A rank's raw times, as the fields of RankTimes: small, so gathering them stays cheap."""
    return (
        rank.rank,
        rank.node,
        (rank.start_ns or 0) / _NS,
        (rank.end_ns or 0) / _NS,
        _spread_s([rank.open_ns]),
        _spread_s([rank.transfer_ns]),
        _spread_s([rank.close_ns]),
        rank.bytes,
        rank.read_from,
        rank.cpu,
    )


def rank_times(row: RankRow, node_of: dict[int, int]) -> RankTimes:
    """A row as the document's RankTimes; `node_of` (rank -> node) names the node of the
    rank it read from."""
    read_from = row[8] if len(row) > 8 else None  # a document's row has it only where set
    node = None if read_from is None else node_of.get(read_from)
    cpu = row[9] if len(row) > 9 else None
    return RankTimes(
        *row[:8],
        read_from_rank=read_from,
        read_from_node=node,
        cpu_user_s=cpu.user_s if cpu else None,
        cpu_system_s=cpu.system_s if cpu else None,
        cpu_window_s=cpu.window_s if cpu else None,
        cpu_waited_s=cpu.waited_s if cpu else None,
    )


def time_series(ranks: Sequence[RankFigures], start_ns: int, phase_ns: int) -> TimeSeries:
    """The time series of `ranks` over the phase from `start_ns`, `phase_ns` long."""
    widths = [max(r.timeline_width_ns, r.latency_series_width_ns) for r in ranks]
    frame = PhaseFrame(start_ns, start_ns + phase_ns, None, max(widths, default=1))
    share = functools.reduce(PhaseShare.merged, (PhaseShare.of(r, frame) for r in ranks))
    return series_of(share, frame)


def series_of(share: PhaseShare, frame: PhaseFrame) -> TimeSeries:
    """Bytes completed per interval of the phase, as MiB/s, and the p99 latency of the
    operations completed in it, over all ranks, so stalls show.

    An engine bucket counts in the interval where it starts. The p99 comes from the ranks'
    per-interval bucket counts merged, never from averaging.
    """
    counts: list[Counter[int]] = [Counter() for _ in share.done]
    for (slot, bucket_ns), ops in share.series.items():
        counts[slot][bucket_ns] += ops
    interval_s = frame.interval_ns() / _NS
    return TimeSeries(
        interval_s=interval_s,
        mib_s=tuple(b / interval_s / (1 << 20) for b in share.done),
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
    """IOR's reduction of every rank's figures in one process: the runner reduces the same
    shares across ranks (runner/run.py), this does it for figures already in hand."""
    frame = functools.reduce(PhaseFrame.merged, (PhaseFrame.of(r) for r in ranks))
    share = functools.reduce(PhaseShare.merged, (PhaseShare.of(r, frame) for r in ranks))
    return reduced_figures(phase, iteration, frame, share, [rank_row(r) for r in ranks])


def target_figures(
    url: str, endpoint: str | None, frame: PhaseFrame, share: PhaseShare, rows: Sequence[RankRow]
) -> TargetFigures:
    """One target's figures: IOR's reduction over the ranks that used it alone."""
    whole = reduced_figures("", 0, frame, share, rows)
    return TargetFigures(
        url=url,
        endpoint=endpoint,
        ranks=whole.ranks,
        bytes_total=whole.bytes_total,
        ops_total=whole.ops_total,
        errors=whole.errors,
        phase_time_s=whole.phase_time_s,
        bandwidth_bytes_per_s=whole.bandwidth_bytes_per_s,
        latency=whole.latency,
        requests=whole.requests,
        requests_per_s=whole.requests_per_s,
        ttfb_get=whole.ttfb_get,
        ttfb_put=whole.ttfb_put,
        store_failures=whole.store_failures,
    )


_Keyed = TypeVar("_Keyed", "PhaseFrame", "PhaseShare")


def merged_by_target(a: dict[int, _Keyed], b: dict[int, _Keyed]) -> dict[int, _Keyed]:
    """Frames or shares keyed by target index, merged key by key (associative and
    commutative, as MPI's reduction needs)."""
    merged = dict(a)
    for index, value in b.items():
        merged[index] = merged[index].merged(value) if index in merged else value
    return merged


def reduced_figures(
    phase: str,
    iteration: int,
    frame: PhaseFrame,
    share: PhaseShare,
    rows: Sequence[RankRow],
) -> PhaseFigures:
    """IOR's reduction: phase time = latest end - earliest start over ranks; bandwidth = bytes
    completed / phase time. The stonewall figure stops the clock at the first rank's end.
    Past PER_RANK_KEPT ranks the raw times are summarized (results/schema.py RankSpread).

    Args:
        frame, share: every rank's, reduced.
        rows: every rank's rank_row(), in rank order.
    """
    start, phase_ns = frame.origin_ns, frame.phase_ns
    mixed = phase == Phase.MIXED
    stonewall_ns = (frame.first_end_ns or 0) - start
    stonewall_bytes = float(share.stonewall_bytes)
    node_of = {row[0]: row[1] for row in rows}
    per_rank = tuple(rank_times(row, node_of) for row in rows) if len(rows) <= PER_RANK_KEPT else ()
    return PhaseFigures(
        phase=phase,
        iteration=iteration,
        ranks=len(rows),
        nodes=len({row[1] for row in rows}),
        bytes_total=share.bytes,
        ops_total=share.ops,
        errors=share.errors,
        first_errors=tuple(f"rank {r}: {m}" for r, _, m in share.first_errors),
        phase_time_s=phase_ns / _NS,
        bandwidth_bytes_per_s=share.bytes * _NS / phase_ns if phase_ns else 0.0,
        stonewall_time_s=stonewall_ns / _NS,
        stonewall_bytes=int(stonewall_bytes),
        stonewall_bandwidth_bytes_per_s=stonewall_bytes * _NS / stonewall_ns
        if stonewall_ns
        else 0.0,
        open_time_s=_spread_s([share.open_ns]),
        transfer_time_s=_spread_s([share.transfer_ns]),
        close_time_s=_spread_s([share.close_ns]),
        latency=latency_percentiles(share.latency_hdr),
        latency_hdr_b64=base64.b64encode(share.latency_hdr).decode("ascii"),
        requests=dict(share.requests),
        series=series_of(share, frame),
        throttled=share.throttled,
        retried=share.retried,
        cpu=_cpu(rows, share.bytes),
        store_failures=dict(share.store_failures),
        ttfb_get=_percentiles_if_any(share.ttfb_get_hdr),
        ttfb_get_hdr_b64=_b64_if_any(share.ttfb_get_hdr),
        ttfb_put=_percentiles_if_any(share.ttfb_put_hdr),
        ttfb_put_hdr_b64=_b64_if_any(share.ttfb_put_hdr),
        requests_per_s=sum(share.requests.values()) * _NS / phase_ns if phase_ns else 0.0,
        objects_per_s=share.opens * _NS / phase_ns if phase_ns else 0.0,
        per_rank=per_rank,
        per_rank_spread=None if per_rank or not rows else rank_spread(rows),
        read_side=_side_figures(share.read_side, phase_ns) if mixed else None,
        write_side=_side_figures(share.write_side, phase_ns) if mixed else None,
    )


def _side_sum(a: SideTotals, b: SideTotals) -> SideTotals:
    return (a[0] + b[0], a[1] + b[1], _merged_hdr([a[2], b[2]]))


def _side_figures(side: SideTotals, phase_ns: int) -> SideFigures:
    """One side of a mixed phase: its bytes over the whole phase's time, as the totals."""
    bytes_, ops, hdr = side
    return SideFigures(
        bytes_total=bytes_,
        ops_total=ops,
        bandwidth_bytes_per_s=bytes_ * _NS / phase_ns if phase_ns else 0.0,
        latency=_percentiles_if_any(hdr),
        latency_hdr_b64=_b64_if_any(hdr),
    )


def _side_summary(sides: Sequence[SideFigures | None]) -> SideSummary | None:
    kept = [s for s in sides if s is not None]
    if not kept:
        return None
    mib = float(1 << 20)
    return SideSummary(
        bytes_total=kept[0].bytes_total,
        ops_total=kept[0].ops_total,
        bandwidth_mib_s=stats([s.bandwidth_bytes_per_s / mib for s in kept]),
        latency=_percentiles_if_any(_merged_hdr(s.latency_hdr_b64 for s in kept)),
    )


def rank_spread(
    rows: Sequence[RankRow],
) -> RankSpread:
    """The distribution of every raw time over ranks, and the ranks that ended last."""
    columns = np.array([row[2:8] for row in rows], dtype=np.float64)
    names = ("start_s", "end_s", "open_s", "transfer_s", "close_s", "bytes")
    spread = {name: _distribution(columns[:, i]) for i, name in enumerate(names)}
    latest = np.argsort(-columns[:, 1], kind="stable")[:SLOWEST_KEPT]
    return RankSpread(
        ranks=len(rows),
        kept_below=PER_RANK_KEPT + 1,
        times=spread,
        slowest=tuple(rank_times(rows[i], {row[0]: row[1] for row in rows}) for i in latest),
    )


def _distribution(values: np.ndarray) -> Distribution:
    """Percentiles by nearest rank (the smallest value with at least q of the ranks at or
    below it), so each is one rank's real figure."""
    ordered = np.sort(values)

    def at(q: float) -> float:
        return float(ordered[max(0, math.ceil(q * len(ordered)) - 1)])

    return Distribution(
        min=float(ordered[0]),
        max=float(ordered[-1]),
        mean=float(values.mean()),
        p50=at(0.5),
        p90=at(0.9),
        p99=at(0.99),
    )


def _cpu(rows: Sequence[RankRow], bytes_moved: int) -> CpuFigures | None:
    """The phase's CPU figures from every rank's; None unless every rank measured its own."""
    measured = [row[9] for row in rows if len(row) > 9 and row[9] is not None]
    if not measured or len(measured) < len(rows):
        return None
    return phase_cpu(measured, bytes_moved)


def _merged_hdr(parts: Iterable[builtins.bytes | str | None]) -> builtins.bytes:
    """The histograms given (raw, or base64 as documents hold them; b"" or None where a rank or
    iteration took none), merged; b"" when none was taken."""
    kept = [base64.b64decode(p) if isinstance(p, str) else p for p in parts if p]
    if len(kept) <= 1:
        return kept[0] if kept else b""
    return _engine.histogram_merge(kept)


def _percentiles_if_any(encoded: builtins.bytes) -> LatencyPercentiles | None:
    return latency_percentiles(encoded) if encoded else None


def _b64_if_any(encoded: builtins.bytes) -> str | None:
    return base64.b64encode(encoded).decode("ascii") if encoded else None


def _added(counts: Iterable[dict[str, int]]) -> dict[str, int]:
    return dict(sum((Counter(c) for c in counts), Counter()))


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
            ttfb_get=_percentiles_if_any(_merged_hdr(f.ttfb_get_hdr_b64 for f in mine)),
            ttfb_put=_percentiles_if_any(_merged_hdr(f.ttfb_put_hdr_b64 for f in mine)),
            requests_per_s=_stats_if_any([f.requests_per_s for f in mine]),
            objects_per_s=_stats_if_any([f.objects_per_s for f in mine]),
            read_side=_side_summary([f.read_side for f in mine]),
            write_side=_side_summary([f.write_side for f in mine]),
        )
    return summary


def _stats_if_any(values: Sequence[float | None]) -> Stats | None:
    measured = [v for v in values if v is not None]
    return stats(measured) if measured else None
