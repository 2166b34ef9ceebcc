"""One point measured by several documents (the same run repeated): its figures pooled over
every iteration of every document, so that no run silently replaces another. A point of one
document keeps the figures of its own summary, unchanged."""

from __future__ import annotations

import base64
import statistics
from collections.abc import Sequence

from hpcio.results.schema import LatencyPercentiles, PhaseFigures, ResultDocument, Stats
from hpcio.results.stats import merged_latency_percentiles, stats

_MIB = float(1 << 20)

#: The summary statistics that can be pooled, and each one's per-iteration value.
_PER_ITERATION = {
    "bandwidth_mib_s": lambda p: p.bandwidth_bytes_per_s / _MIB,
    "seconds": lambda p: p.phase_time_s,
    "au_percent": lambda p: (p.metrics or {}).get("au_percent"),
    # A mixed phase's sides (--rwmix-read): each side's bytes over the phase time.
    "read_bandwidth_mib_s": lambda p: p.read_side and p.read_side.bandwidth_bytes_per_s / _MIB,
    "write_bandwidth_mib_s": lambda p: p.write_side and p.write_side.bandwidth_bytes_per_s / _MIB,
}
#: Statistics of the phases' metrics (a workload's own figures) or sides, not of their summary.
_OF_METRICS = ("au_percent", "read_bandwidth_mib_s", "write_bandwidth_mib_s")


def has_statistic(doc: ResultDocument, phase: str, statistic: str) -> bool:
    """Whether every iteration of `phase` in `doc` has `statistic` (a metric some workloads
    alone report, such as AU)."""
    if statistic not in _OF_METRICS:
        return True
    found = iterations_of([doc], phase)
    return bool(found) and all(_PER_ITERATION[statistic](p) is not None for p in found)


def iterations_of(docs: Sequence[ResultDocument], phase: str) -> list[PhaseFigures]:
    """Every iteration's figures of `phase`, document after document."""
    return [p for doc in docs for p in doc.phases if p.phase == phase]


def iteration_count(docs: Sequence[ResultDocument], phase: str) -> int:
    return sum(doc.summary[phase].iterations for doc in docs)


def pooled_stats(docs: Sequence[ResultDocument], phase: str, statistic: str) -> Stats:
    """`statistic` ("bandwidth_mib_s" or "seconds") of `phase` over all iterations of `docs`:
    one document's own summary, or the statistics of every iteration of several."""
    if len(docs) == 1 and statistic not in _OF_METRICS:
        summary_stats: Stats = getattr(docs[0].summary[phase], statistic)
        return summary_stats
    value = _PER_ITERATION[statistic]
    return stats([value(p) for p in iterations_of(docs, phase)])


def pooled_latency(docs: Sequence[ResultDocument], phase: str) -> LatencyPercentiles:
    """Per-op latency of `phase` over every operation of `docs`: one document's own summary,
    or the percentiles of all their histograms merged (never averaged percentiles)."""
    if len(docs) == 1:
        return docs[0].summary[phase].latency
    parts = [base64.b64decode(p.latency_hdr_b64) for p in iterations_of(docs, phase)]
    return merged_latency_percentiles(parts)


def mean_seconds(docs: Sequence[ResultDocument], phase: str) -> float:
    """The studies' Latency: the mean phase time over every iteration of `docs`."""
    return pooled_stats(docs, phase, "seconds").mean


def mean_bytes_moved(docs: Sequence[ResultDocument], phase: str) -> float:
    """Bytes the phase moved in one iteration, all ranks, mean over every iteration of `docs`
    (a time-based phase moves as much as it can in its time, different in each iteration)."""
    return statistics.fmean(p.bytes_total for p in iterations_of(docs, phase))


def is_time_based(run: dict[str, object]) -> bool:
    """True for runs whose phases repeated their transfers for a time (`--duration`)."""
    params = run.get("params")
    return isinstance(params, dict) and params.get("duration_s") is not None


def headline_bandwidth_mib_s(docs: Sequence[ResultDocument], phase: str) -> float:
    """The headline bandwidth of a point, as the report tables give it: bytes one iteration
    moved over the mean phase time, over every iteration of `docs` (for one document, the
    same figure as `hpcio.results.stats.headline_bandwidth_mib_s`)."""
    seconds = mean_seconds(docs, phase)
    return mean_bytes_moved(docs, phase) / _MIB / seconds if seconds else 0.0
