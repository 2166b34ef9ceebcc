"""The statistics a document holds and a report recomputes: over iterations (IOR's mean,
median, min, max, stddev) and over operations (per-op latency percentiles from the HDR
histograms). Pure Python, so documents are read and pooled without the native engine."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from hpcio.results import hdr
from hpcio.results.schema import LatencyPercentiles, Stats

_NS = 1e9
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
