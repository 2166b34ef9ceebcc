"""The statistics a document holds and a report recomputes: over iterations (IOR's mean,
median, min, max, stddev) and over operations (per-op latency percentiles from the HDR
histograms). Pure Python, so documents are read and pooled without the native engine."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from hpcio.results import hdr
from hpcio.results.schema import LatencyPercentiles, ResultDocument, Stats

_NS = 1e9
_MIB = float(1 << 20)
#: The per-op latency percentiles a document reports (p50, p90, p99, p99.9).
QUANTILES = (0.5, 0.9, 0.99, 0.999)


def stats(values: Sequence[float]) -> Stats:
    """Mean, median, min, max and population stddev (as IOR reports them)."""
    return Stats(
        mean=statistics.fmean(values),
        median=statistics.median(values),
        min=min(values),
        max=max(values),
        stddev=statistics.pstdev(values) if len(values) > 1 else 0.0,
    )


def latency_percentiles(encoded: bytes) -> LatencyPercentiles:
    """Count, mean, percentiles and max of one V2 HDR histogram of nanoseconds, in seconds.

    Raises:
        ValueError: `encoded` is not a V2 HdrHistogram.
    """
    return _percentiles(hdr.decode(encoded))


def merged_latency_percentiles(parts: Sequence[bytes]) -> LatencyPercentiles:
    """The percentiles of several histograms merged: every operation of all of them (never
    averaged percentiles)."""
    return _percentiles(hdr.merge([hdr.decode(part) for part in parts]))


def _percentiles(histogram: hdr.Histogram) -> LatencyPercentiles:
    p50, p90, p99, p999 = (histogram.value_at_quantile(q) / _NS for q in QUANTILES)
    return LatencyPercentiles(
        count=histogram.count,
        mean_s=histogram.mean() / _NS,
        p50_s=p50,
        p90_s=p90,
        p99_s=p99,
        p999_s=p999,
        max_s=histogram.max() / _NS,
    )


def headline_bandwidth_mib_s(doc: ResultDocument, phase: str) -> float:
    """The headline bandwidth of `phase`, as the studies give it and every output shows it:
    bytes one iteration moved (mean over iterations, for a time-based phase) over the mean
    phase time. IOR's Mean, the mean of the iterations' bandwidths, stays
    `summary.bandwidth_mib_s.mean` and is shown as "mean of iterations"."""
    moved = [p.bytes_total for p in doc.phases if p.phase == phase]
    seconds = doc.summary[phase].seconds.mean
    if not moved or not seconds:
        return 0.0
    return statistics.fmean(moved) / _MIB / seconds
