"""listing: the metadata storm before a read. Every rank lists the target (and on POSIX stats
every file it lists) before reading its share of what it found, as a data loader does at
start-up; or rank 0 alone lists and broadcasts the listing (--lister rank0). MLPerf Storage's
submitters met 503 SlowDown from S3 with 512 ranks each listing one bucket."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hpcio.units import format_bytes
from hpcio.workloads.contract import (
    Body,
    Context,
    MemoryNeed,
    Phase,
    PlanBody,
    PythonBody,
    RankInfo,
    Workload,
    Written,
)
from hpcio.workloads.listing_params import ListingParams
from hpcio.workloads.native import _engine
from hpcio.workloads.plans import Op, PlanBuilder, Runs

if TYPE_CHECKING:
    from hpcio.spec.model import RunSpec

_PREFIX = "hpcio-list-"
_KEY = re.compile(r"hpcio-list-rank([0-9]{6,})-file[0-9]{6,}\.dat")
_NS = 1e9


def file_key(rank: int, index: int) -> str:
    return f"{_PREFIX}rank{rank:06d}-file{index:06d}.dat"


def writer_of(key: str) -> int:
    found = _KEY.fullmatch(key)
    assert found is not None, key
    return int(found.group(1))


class Listing(Workload):
    name = "listing"
    family = "metadata"
    params = ListingParams
    summary = "every rank (or rank 0) lists the target, or stats every file, then reads"
    lower = {"buffers": "--in-flight or --file-size",  # noqa: RUF012
             "data": "--file-size or --files-per-rank",
             "disk": "--file-size, --files-per-rank or -n"}  # fmt: skip

    def body(self, run: RunSpec, phase: Phase, who: RankInfo) -> Body:
        if phase is Phase.READ:
            return PythonBody(_list_then_read)
        p = run.params
        keys = [file_key(who.rank, f) for f in range(p.files_per_rank)]
        return PlanBody(_file_plan(run, Op.WRITE, keys), p.in_flight)

    def keys(self, run: RunSpec) -> list[str]:
        files = run.params.files_per_rank
        return [file_key(r, f) for r in range(run.ranks) for f in range(files)]

    def owns_key(self, name: str) -> bool:
        return _KEY.fullmatch(name) is not None

    def in_flight(self, run: RunSpec) -> int:
        return int(run.params.in_flight)

    def objects_written(self, run: RunSpec) -> list[Written]:
        size = run.params.file_size_bytes
        return [Written("each object", size, size, shared=False)]

    def stored_bytes(self, run: RunSpec) -> int:
        return run.ranks * run.params.files_per_rank * run.params.file_size_bytes

    def memory(self, run: RunSpec, ranks_per_node: int) -> MemoryNeed:
        p = run.params
        lanes = min(p.in_flight, p.files_per_rank)
        return MemoryNeed(
            ranks_per_node * lanes * p.file_size_bytes,
            f"{ranks_per_node} rank(s) x {lanes} in flight x {format_bytes(p.file_size_bytes)}",
            self.lower["buffers"],
        )

    def describe(self, run: RunSpec) -> str:
        p = run.params
        who = "every rank lists" if p.lister == "every" else "rank 0 lists and broadcasts"
        return (
            f"{p.files_per_rank} file(s) of {format_bytes(p.file_size_bytes)} per rank, "
            f"{who} before reading"
        )

    def disk_words(self, run: RunSpec) -> str:
        p = run.params
        return f"{run.ranks} rank(s) x {p.files_per_rank} x {format_bytes(p.file_size_bytes)}"

    def label(self, settings: dict[str, Any]) -> str:
        return f"{self.name} ({settings.get('lister', 'every')})"

    def reduce_metrics(self, per_rank: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """Counts summed; the listing's time the slowest rank's; list and stat latencies
        from every lister's histograms merged (never averaged percentiles)."""
        if not per_rank:
            return {}
        total: dict[str, Any] = {"lister": per_rank[0]["lister"]}
        for name in ("listers", "list_ops", "stat_ops", "list_requests", "list_throttled",
                     "list_retried"):  # fmt: skip
            total[name] = sum(int(m.get(name, 0)) for m in per_rank)
        total["listed_entries"] = max(int(m.get("listed_entries", 0)) for m in per_rank)
        total["listing_s"] = max(float(m["listing_s"]) for m in per_rank)
        for op in ("list", "stat"):
            parts = [m[f"{op}_hdr"] for m in per_rank if m.get(f"{op}_hdr")]
            if parts and total[f"{op}_ops"]:
                s = _engine.histogram_summary(_engine.histogram_merge(parts), [0.5, 0.99])
                p50, p99 = s["quantiles_ns"]
                total[f"{op}_p50_s"] = p50 / _NS
                total[f"{op}_p99_s"] = p99 / _NS
                total[f"{op}_max_s"] = s["max_ns"] / _NS
        return total

    def notes(self, phase: str, metrics: Sequence[dict[str, Any]]) -> list[str]:
        listed = [m for m in metrics if "listing_s" in m]
        if not listed:
            return []
        first = listed[0]
        who = "every rank listed" if first["lister"] == "every" else "rank 0 listed and broadcast"
        seconds = [m["listing_s"] for m in listed]
        line = (
            f"listing: {who} ({first['listed_entries']} entries); the slowest rank had it after "
            f"{sum(seconds) / len(seconds):.4f} s (mean; max {max(seconds):.4f})"
        )
        for op, unit, scale in (("list", "ms", 1e3), ("stat", "us", 1e6)):
            p99s = [m[f"{op}_p99_s"] for m in listed if f"{op}_p99_s" in m]
            if p99s:
                line += f"; {op} p99 up to {max(p99s) * scale:.1f} {unit}"
        throttled = sum(int(m.get("list_throttled", 0)) for m in listed)
        return [line + f"; {throttled} LIST response(s) throttled (429/503)"]


def _file_plan(run: RunSpec, op: Op, keys: Sequence[str]) -> Any:
    """Open every key, move each whole in one transfer, (fsync,) close each."""
    size = run.params.file_size_bytes
    builder = PlanBuilder()
    builder.controls(Op.OPEN_WRITE if op is Op.WRITE else Op.OPEN_READ, keys)
    for key in keys:
        builder.runs(op, key, Runs.of(0, 1, writer_of(key)), size)
    if op is Op.WRITE and run.fsync:
        builder.controls(Op.SYNC, keys)
    builder.controls(Op.CLOSE, keys)
    return builder.build()


def _list_then_read(context: Context) -> None:
    run, who = context.run, context.who
    lists = who.rank == 0 or run.params.lister == "every"
    # A histogram each for list and stat calls, kept apart from the reads' (the Recorder
    # counts them as zero-byte reads; only their latency histogram is used).
    timers = {"list": _engine.Recorder(), "stat": _engine.Recorder()}
    # Counts this rank's requests while it lists (nothing else runs then): LIST requests,
    # and responses 429/503 an object store throttled them with.
    counter = _engine.Executor(context.target, seed=run.seed)
    start = _engine.clock_ns()
    counter.start(start)
    listing: list[str] = []
    stats = 0
    if lists:
        t = _engine.clock_ns()
        listing = context.target.list(_PREFIX)
        timers["list"].record("read", t, _engine.clock_ns())
        if not run.target.is_object_store:
            # What a POSIX data loader does next: the size of every file it found.
            for key in listing:
                t = _engine.clock_ns()
                os.stat(context.path(key))
                timers["stat"].record("read", t, _engine.clock_ns())
                stats += 1
    if run.params.lister == "rank0":
        listing = context.communicator().bcast(listing, root=0)
    listed = _engine.clock_ns()
    context.finding(start, listed)
    during = counter.figures()
    context.metrics.update(
        lister=run.params.lister,
        listers=int(lists),
        list_ops=int(lists),
        stat_ops=stats,
        listed_entries=len(listing),
        listing_s=(listed - start) / _NS,
        list_requests=during.requests.get("list", 0),
        list_throttled=during.throttled,
        list_retried=during.retried,
        list_hdr=timers["list"].figures().latency_hdr if lists else b"",
        stat_hdr=timers["stat"].figures().latency_hdr if stats else b"",
    )
    expected = set(Listing().keys(run))
    found = sorted(k for k in listing if k in expected)
    if len(found) < len(expected):
        context.recorder.error(
            f"the listing of {run.target.url} holds {len(found)} of the run's "
            f"{len(expected)} files (run --phases write,read, or read with the -n and "
            "--files-per-rank of the run that wrote them)"
        )
        return
    mine = found[who.rank :: who.size]
    if mine:
        plan = _file_plan(run, Op.READ, mine)
        context.background(plan, run.params.in_flight).wait()
