"""The result document: one JSON object per run, self-describing, schema versioned.

docs/results.md describes every field. Keys are the snake_case field names with units.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from hpcio.results import v1

SCHEMA_VERSION = 3
#: Versions `ResultDocument.from_dict` reads (older ones are upgraded as they are read).
#: Version 3 added time to first byte and request and object rates, all optional: a version
#: 2 document reads as it is, without them.
READABLE_VERSIONS = (1, 2, 3)
#: Marks a JSON object as an hpcio result document.
KIND = "hpcio.result"
#: How a document's warning about a data set the page cache could hold begins (reports
#: group on it).
PAGE_CACHE_WARNING = "read figures may be RAM, not storage"


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
class CpuFigures:
    """The client's CPU in one phase (runner/cpu.py): user and system CPU-seconds of all ranks
    over their phase windows, per GiB moved (None when nothing moved), and the fraction of a
    core each rank kept busy, mean and largest over ranks. `waited_s`: the ranks' threads were
    runnable but waiting for a core (None without the kernel's schedstat); `demand_fraction_mean`
    adds that wait to the busy time. `client_bound` when that mean is above 0.9: the figure
    measures the client, not the storage."""

    user_s: float
    system_s: float
    seconds_per_gib: float | None
    core_fraction_mean: float
    core_fraction_max: float
    client_bound: bool
    waited_s: float | None = None
    demand_fraction_mean: float | None = None


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
    #: With --reorder, in a read phase: the rank whose data this rank read, and its node
    #: (None otherwise, and in documents written before these fields existed).
    read_from_rank: int | None = None
    read_from_node: int | None = None

    #: CPU-seconds of the rank's process over its phase window, and the window; None in
    #: documents written before they were recorded.
    cpu_user_s: float | None = None
    cpu_system_s: float | None = None
    cpu_window_s: float | None = None
    cpu_waited_s: float | None = None


@dataclass(frozen=True, slots=True)
class Distribution:
    """One raw time over ranks; percentiles by nearest rank (each is one rank's figure)."""

    min: float
    max: float
    mean: float
    p50: float
    p90: float
    p99: float


@dataclass(frozen=True, slots=True)
class RankSpread:
    """Every rank's raw times of a phase, summarized: a document of more than `kept_below - 1`
    ranks holds this instead of `per_rank`, which is then empty."""

    ranks: int
    #: Documents keep every rank's times up to kept_below - 1 ranks.
    kept_below: int
    #: start_s, end_s, open_s, transfer_s, close_s and bytes, each over all ranks.
    times: dict[str, Distribution]
    #: The ranks that ended last, latest first (the stragglers that set the phase time).
    slowest: tuple[RankTimes, ...]


@dataclass(frozen=True, slots=True)
class TimeSeries:
    """A phase second by second (or in tenths of a short phase), from its start, all ranks:
    MiB/s completed in each interval and the 99th percentile latency of the operations that
    completed in it (None where none did), from the ranks' merged per-interval counts."""

    interval_s: float
    mib_s: tuple[float, ...]
    p99_s: tuple[float | None, ...] = ()


@dataclass(frozen=True, slots=True)
class TargetFigures:
    """One phase's figures on one of a run's several targets, reduced over the ranks that used
    it (rank r uses target r mod K) as `PhaseFigures` are over all ranks: its own phase time
    (latest end - earliest start of those ranks) and bandwidth, percentiles merged over them."""

    #: The target as the run's `targets` record names it (URL; its endpoint where named).
    url: str
    endpoint: str | None
    ranks: int
    bytes_total: int
    ops_total: int
    errors: int
    phase_time_s: float
    bandwidth_bytes_per_s: float
    latency: LatencyPercentiles
    requests: dict[str, int]
    requests_per_s: float | None = None
    ttfb_get: LatencyPercentiles | None = None
    ttfb_put: LatencyPercentiles | None = None
    store_failures: dict[str, int] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SideFigures:
    """The reads or the writes of a mixed phase (--rwmix-read), all ranks: bandwidth is their
    bytes over the phase's time, as the phase's own; latency merged over ranks as `latency`."""

    bytes_total: int
    ops_total: int
    bandwidth_bytes_per_s: float
    #: None where the side made no transfer (a mix of 0 or 100 percent reads).
    latency: LatencyPercentiles | None
    latency_hdr_b64: str | None


@dataclass(frozen=True, slots=True)
class SideSummary:
    """One side of a mixed phase over all iterations."""

    bytes_total: int
    ops_total: int
    bandwidth_mib_s: Stats
    latency: LatencyPercentiles | None


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
    #: None in documents written before the client's CPU was recorded.
    cpu: CpuFigures | None = None
    #: Object-store requests that failed, by cause ("429", "500", "502", "503", "504",
    #: "other_5xx", "timeout", "connect", "connection_reset", "other_error"), non-zero ones,
    #: all ranks; each attempt counts, retried or not.
    store_failures: dict[str, int] = dataclasses.field(default_factory=dict)
    #: Figures only this workload has (accelerator utilization, samples/s, library calls),
    #: by name with their unit in it: "accelerator_utilization_percent".
    metrics: dict[str, Any] = dataclasses.field(default_factory=dict)
    #: Past 4096 ranks, `per_rank` is empty and this summarizes it; None in smaller runs and
    #: in documents written before it existed.
    per_rank_spread: RankSpread | None = None
    #: Time to first byte of object-store GETs (until the response's headers arrive, before
    #: its body) and of PUTs, parts and blocks (until the store answers the sent body), merged
    #: over ranks like `latency`, each attempt of a retried request counted; None where no
    #: such request went to a store (POSIX, null:// without transfers, schema version 2).
    ttfb_get: LatencyPercentiles | None = None
    ttfb_get_hdr_b64: str | None = None
    ttfb_put: LatencyPercentiles | None = None
    ttfb_put_hdr_b64: str | None = None
    #: Storage requests (every kind in `requests`) and objects or files opened (each rank's
    #: open of a shared one counts) per second of phase time; None in schema version 2.
    requests_per_s: float | None = None
    objects_per_s: float | None = None
    #: With several targets (run.targets), each one's figures, in the order given; empty with
    #: one target and in documents written before several were possible.
    targets: tuple[TargetFigures, ...] = ()
    #: A mixed phase's reads and writes apart; None in other phases and older documents.
    read_side: SideFigures | None = None
    write_side: SideFigures | None = None


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
    #: Over the iterations that recorded the client's CPU; None where none did.
    cpu_seconds_per_gib: Stats | None = None
    cpu_core_fraction: Stats | None = None
    cpu_demand_fraction: Stats | None = None
    client_bound_iterations: int = 0
    store_failures: dict[str, int] = dataclasses.field(default_factory=dict)
    #: From the histograms of every iteration, as `latency`; None where no iteration had one.
    ttfb_get: LatencyPercentiles | None = None
    ttfb_put: LatencyPercentiles | None = None
    #: Over the iterations that recorded them; None where none did.
    requests_per_s: Stats | None = None
    objects_per_s: Stats | None = None
    #: A mixed phase's reads and writes apart; None in other phases and older documents.
    read_side: SideSummary | None = None
    write_side: SideSummary | None = None


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
    #: With --drop-caches: how many times each host (by its name) dropped its page cache, one
    #: rank per host before each read phase; empty otherwise and in older documents.
    caches_dropped_by_host: dict[str, int] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Footprint:
    """What the run kept on its target, as its workload says: what `hpcio cost` prices beside
    the figures (storage held, and the objects and parts its requests made)."""

    #: Bytes the run keeps on its target at its peak, all ranks.
    stored_bytes: int
    #: The largest object (file) it writes, and the largest transfer that writes one (1 where
    #: it writes none).
    largest_object_bytes: int
    largest_part_bytes: int


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
    #: `format`, `files` (one per rank), `operations` (all ranks' rows kept); where ranks
    #: reached the limit, `operations_not_kept`, `limit_per_rank` and `ranks_at_limit`; None
    #: without --trace.
    trace: dict[str, Any] | None = None
    #: What the run kept on its target, for pricing; None in documents older than the field
    #: (`hpcio cost` then asks the run's workload).
    footprint: Footprint | None = None

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
        record = dataclasses.asdict(self)
        # Written only where set: per-rank entries are most of a large job's document.
        for phase in record["phases"]:
            for times in phase["per_rank"]:
                for name in _PER_RANK_WHEN_SET:
                    if times[name] is None:
                        del times[name]
        return record

    @classmethod
    def from_dict(cls, record: dict[str, Any]) -> ResultDocument:
        """A document as read from JSON; an older schema's is upgraded (results/v1.py)."""
        if record.get("schema_version") == 1:
            record = v1.upgrade(record)
        return _build(cls, record)


def _build(cls: Any, value: Any) -> Any:
    """Rebuild nested frozen dataclasses from the plain JSON a document was written as."""
    fields = dataclasses.fields(cls)
    kwargs: dict[str, Any] = {}
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


#: RankTimes fields a document holds only where they are not None.
_PER_RANK_WHEN_SET = ("read_from_rank", "read_from_node")

_NESTED: dict[tuple[str, str], type] = {
    ("ResultDocument", "cache"): CacheRecord,
    ("ResultDocument", "footprint"): Footprint,
    ("ResultDocument", "phases"): PhaseFigures,
    ("ResultDocument", "summary"): PhaseSummary,
    ("PhaseFigures", "latency"): LatencyPercentiles,
    ("PhaseFigures", "ttfb_get"): LatencyPercentiles,
    ("PhaseFigures", "ttfb_put"): LatencyPercentiles,
    ("PhaseSummary", "ttfb_get"): LatencyPercentiles,
    ("PhaseSummary", "ttfb_put"): LatencyPercentiles,
    ("PhaseFigures", "per_rank"): RankTimes,
    ("PhaseFigures", "targets"): TargetFigures,
    ("TargetFigures", "latency"): LatencyPercentiles,
    ("TargetFigures", "ttfb_get"): LatencyPercentiles,
    ("TargetFigures", "ttfb_put"): LatencyPercentiles,
    ("PhaseFigures", "series"): TimeSeries,
    ("PhaseFigures", "per_rank_spread"): RankSpread,
    ("RankSpread", "times"): Distribution,
    ("RankSpread", "slowest"): RankTimes,
    ("PhaseFigures", "cpu"): CpuFigures,
    ("PhaseSummary", "latency"): LatencyPercentiles,
    ("PhaseFigures", "read_side"): SideFigures,
    ("PhaseFigures", "write_side"): SideFigures,
    ("PhaseSummary", "read_side"): SideSummary,
    ("PhaseSummary", "write_side"): SideSummary,
    ("SideFigures", "latency"): LatencyPercentiles,
    ("SideSummary", "latency"): LatencyPercentiles,
    ("SideSummary", "bandwidth_mib_s"): Stats,
    **{
        ("PhaseSummary", n): Stats
        for n in (
            "bandwidth_mib_s",
            "stonewall_bandwidth_mib_s",
            "seconds",
            "open_seconds",
            "transfer_seconds",
            "close_seconds",
            "cpu_seconds_per_gib",
            "cpu_core_fraction",
            "cpu_demand_fraction",
            "requests_per_s",
            "objects_per_s",
        )
    },
}
