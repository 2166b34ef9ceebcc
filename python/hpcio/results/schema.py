"""The result document: one JSON object per run, self-describing, schema versioned.

docs/results.md describes every field. Keys are the snake_case field names with units.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from hpcio.results import v1

SCHEMA_VERSION = 2
#: Versions `ResultDocument.from_dict` reads (older ones are upgraded as they are read).
READABLE_VERSIONS = (1, 2)
#: Marks a JSON object as an hpcio result document.
KIND = "hpcio.result"


@dataclass(frozen=True, slots=True)
class LatencyPercentiles:
    """Per-op latency of the storage call, from HDR histograms merged across ranks."""

    count: int
    mean_s: float
    p50_s: float
    p90_s: float
    p99_s: float
    p999_s: float
    max_s: float


@dataclass(frozen=True, slots=True)
class RankTimes:
    """One rank's raw times in one phase, seconds since its own post-barrier t0."""

    rank: int
    node: int
    start_s: float
    end_s: float
    open_s: float
    transfer_s: float
    close_s: float
    bytes: int


@dataclass(frozen=True, slots=True)
class TimeSeries:
    """A phase second by second (or in tenths of a short phase), from its start, all ranks:
    MiB/s completed in each interval and the 99th percentile latency of the operations that
    completed in it (None where none did), from the ranks' merged per-interval counts."""

    interval_s: float
    mib_s: tuple[float, ...]
    p99_s: tuple[float | None, ...] = ()


@dataclass(frozen=True, slots=True)
class PhaseFigures:
    """One phase of one iteration, reduced across ranks as IOR does."""

    phase: str
    iteration: int
    ranks: int
    nodes: int
    bytes_total: int
    ops_total: int
    errors: int
    first_errors: tuple[str, ...]
    phase_time_s: float
    bandwidth_bytes_per_s: float
    stonewall_time_s: float
    stonewall_bytes: int
    stonewall_bandwidth_bytes_per_s: float
    open_time_s: float
    transfer_time_s: float
    close_time_s: float
    latency: LatencyPercentiles
    latency_hdr_b64: str
    #: Storage requests by kind, all ranks ("open", "write", "read", "fsync", "close"; object
    #: stores: "put", "get", "upload_part", ...), as a provider would bill them.
    requests: dict[str, int]
    per_rank: tuple[RankTimes, ...]
    #: Responses 429/503 (the store throttled) and other retryable failures (5xx, connection
    #: errors, timeouts), all ranks; each was retried, up to the retry limits.
    throttled: int = 0
    retried: int = 0
    series: TimeSeries | None = None
    #: Figures only this workload has (accelerator utilization, samples/s, library calls),
    #: by name with their unit in it: "accelerator_utilization_percent".
    metrics: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Stats:
    mean: float
    median: float
    min: float
    max: float
    stddev: float


@dataclass(frozen=True, slots=True)
class PhaseSummary:
    """One phase over all iterations."""

    iterations: int
    bytes_total: int
    bandwidth_mib_s: Stats
    stonewall_bandwidth_mib_s: Stats
    seconds: Stats
    open_seconds: Stats
    transfer_seconds: Stats
    close_seconds: Stats
    latency: LatencyPercentiles
    errors: int
    throttled: int = 0
    retried: int = 0


@dataclass(frozen=True, slots=True)
class CacheRecord:
    """What the figures did and did not bypass, so nobody mistakes RAM for storage."""

    direct_io: bool
    fsync_in_write_phase: bool
    caches_dropped: bool
    read_back_from: str
    data_set_bytes: int
    data_per_node_bytes: int
    node_ram_bytes: int
    reads_may_hit_page_cache: bool
    notes: tuple[str, ...]
    #: What limits reads of the target on one node (a device's link, network interfaces; see
    #: runner/ceiling.py) and that limit in bytes/s, None where it is unknown.
    read_ceiling: str = ""
    read_ceiling_bytes_per_s: float | None = None


@dataclass(frozen=True, slots=True)
class ResultDocument:
    schema_version: int
    kind: str
    hpcio_version: str
    started_at_utc: str
    finished_at_utc: str
    hosts: tuple[str, ...]
    ranks: int
    nodes: int
    ranks_per_node: int
    run: dict[str, Any]
    cache: CacheRecord
    phases: tuple[PhaseFigures, ...]
    summary: dict[str, PhaseSummary]
    engine: dict[str, Any]
    #: "complete", or "interrupted" when the run stopped early: `phases` and `summary` then
    #: hold the iterations that finished. A resumed sweep runs interrupted points again.
    status: str = "complete"
    #: Reasons to doubt the read figures, found when the run ended: a data set the page cache
    #: could hold, a read faster than the target's device or link can carry, a target in RAM.
    warnings: tuple[str, ...] = ()
    #: The fewest cores any node's ranks could run on between them (the union of their
    #: affinity masks: Open MPI binds each of 2 ranks to a core of its own); None where
    #: unknown, as in documents written before the field existed. Ranks per node above it
    #: share cores, which slows what the figures measure.
    cores_per_node: int | None = None
    #: What measured: hpcio (version, git commit), its engine build, Python, the MPI library
    #: and the I/O libraries' versions (runner/machine.py); None in older documents.
    software: dict[str, Any] | None = None
    #: The command that made the run, --store-option values hidden; None in older documents.
    command_line: tuple[str, ...] | None = None
    #: The storage under the target as `hpcio env --target` describes it (file system, mount
    #: options, O_DIRECT, free space, read ceiling; an object store's endpoint and credential
    #: source, never a credential); None in older documents.
    storage: dict[str, Any] | None = None
    #: Where --trace put the run's per-rank operation files (runner/tracing.py): `directory`,
    #: `format`, `files` (one per rank), `operations` (all ranks); None without --trace.
    trace: dict[str, Any] | None = None

    @property
    def workload(self) -> str:
        """The registered workload the run measured: a pattern, profile, library, ..."""
        return str(self.run["workload"])

    @property
    def params(self) -> dict[str, Any]:
        """The workload's own parameters, as recorded."""
        return dict(self.run["params"])

    @property
    def settings(self) -> dict[str, Any]:
        """Every setting of the run in one flat dict: the common ones, the workload's name and
        its params (for telling configurations apart)."""
        flat = {k: v for k, v in self.run.items() if k != "params"}
        return {**flat, **self.run["params"]}

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, record: dict[str, Any]) -> ResultDocument:
        """A document as read from JSON; an older schema's is upgraded (results/v1.py)."""
        if record.get("schema_version") == 1:
            record = v1.upgrade(record)
        return _build(cls, record)


def _build(cls: Any, value: Any) -> Any:
    """Rebuild nested frozen dataclasses from the plain JSON a document was written as."""
    fields = dataclasses.fields(cls)
    kwargs = {}
    for field in fields:
        name, hint = field.name, field.type
        has_default = (
            field.default is not dataclasses.MISSING
            or field.default_factory is not dataclasses.MISSING
        )
        if name not in value and has_default:
            continue  # written before the field existed: keep its default
        item = value[name]
        nested = _NESTED.get((cls.__name__, name))
        if item is None:
            kwargs[name] = None
        elif nested is None:
            kwargs[name] = tuple(item) if isinstance(item, list) and "tuple" in str(hint) else item
        elif isinstance(item, list):
            kwargs[name] = tuple(_build(nested, x) for x in item)
        elif isinstance(item, dict) and "dict" in str(hint):
            kwargs[name] = {k: _build(nested, v) for k, v in item.items()}
        else:
            kwargs[name] = _build(nested, item)
    return cls(**kwargs)


_NESTED: dict[tuple[str, str], type] = {
    ("ResultDocument", "cache"): CacheRecord,
    ("ResultDocument", "phases"): PhaseFigures,
    ("ResultDocument", "summary"): PhaseSummary,
    ("PhaseFigures", "latency"): LatencyPercentiles,
    ("PhaseFigures", "per_rank"): RankTimes,
    ("PhaseFigures", "series"): TimeSeries,
    ("PhaseSummary", "latency"): LatencyPercentiles,
    **{
        ("PhaseSummary", n): Stats
        for n in (
            "bandwidth_mib_s",
            "stonewall_bandwidth_mib_s",
            "seconds",
            "open_seconds",
            "transfer_seconds",
            "close_seconds",
        )
    },
}
