"""The phase figures the runner reduces up a tree (PhaseFrame, PhaseShare) are exactly the
figures of every rank's, whatever the tree's shape; past PER_RANK_KEPT ranks the raw times
are summarized, and such a document reads, reports and compares."""

import base64
import dataclasses
import functools
import json
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hpcio import _engine
from hpcio.results.schema import ResultDocument
from hpcio.runner import aggregate
from hpcio.runner.aggregate import (
    PhaseFrame,
    PhaseShare,
    RankFigures,
    phase_figures,
    rank_row,
    reduced_figures,
)

DATA = Path(__file__).resolve().parent.parent / "data" / "v1"
NS = 10**9


def histogram(latencies_ns):
    recorder = _engine.Recorder()
    recorder.start(0)
    ends = np.cumsum(latencies_ns).astype(np.uint64)
    starts = (ends - np.asarray(latencies_ns, np.uint64)).astype(np.uint64)
    ops = np.full(len(ends), 3, np.uint8)
    recorder.record_many(ops, starts, ends, np.full(len(ends), 4096, np.uint64))
    return recorder.figures().latency_hdr


def synthetic(ranks=7, seed=3):
    """Ranks that differ in every figure: spans, histograms, timeline widths, series,
    errors (several on one rank), requests, throttling; one did nothing at all."""
    rng = random.Random(seed)
    made = []
    for r in range(ranks):
        if r == 4:  # a rank with nothing to do (sfsw's contributors reading nothing)
            made.append(
                RankFigures(r, r // 2, None, None, None, 0, 0, 0, (), histogram([]), 100_000, ())
            )
            continue
        start = rng.randrange(0, 5_000_000)
        end = start + rng.randrange(2 * NS, 12 * NS)
        width = 100_000 * 2 ** rng.randrange(5, 9)
        buckets = tuple(rng.randrange(0, 1 << 22) for _ in range(end // width))
        series_width = 10_000_000 * 2 ** rng.randrange(0, 3)
        series = tuple(
            (i, rng.choice((1 << 20, (1 << 20) + 8192, 3 << 20)), rng.randrange(1, 9))
            for i in range(end // series_width)
        )
        errors = tuple(f"error {k} of rank {r}" for k in range(3 if r in (2, 5) else 0))
        made.append(
            RankFigures(
                rank=r,
                node=r // 2,
                open_ns=(start, start + 40_000),
                transfer_ns=(start + 40_000, end - 90_000),
                close_ns=(end - 90_000, end),
                bytes=sum(buckets),
                ops=len(buckets),
                errors=len(errors),
                first_errors=errors,
                latency_hdr=histogram([rng.randrange(10_000, 9_000_000) for _ in range(200)]),
                timeline_width_ns=width,
                timeline_bytes=buckets,
                latency_series_width_ns=series_width,
                latency_series=series,
                requests={"open": 1, "read": len(buckets), "close": 1 + r % 2},
                throttled=r % 3,
                retried=r % 2,
            )
        )
    return made


def in_a_tree(shares, rng):
    """Merge in a random tree: random neighbours, random order, as ranks pair up."""
    level = list(shares)
    rng.shuffle(level)
    while len(level) > 1:
        i = rng.randrange(len(level) - 1)
        level[i : i + 2] = [level[i].merged(level[i + 1])]
    return level[0]


def test_a_reduced_phase_equals_the_figures_of_every_rank_in_any_tree():
    ranks = synthetic()
    frame = functools.reduce(PhaseFrame.merged, (PhaseFrame.of(r) for r in ranks))
    rows = [rank_row(r) for r in ranks]
    expected = phase_figures("read", 2, ranks)
    rng = random.Random(11)
    for _ in range(20):
        shares = [PhaseShare.of(r, frame) for r in ranks]
        got = reduced_figures("read", 2, frame, in_a_tree(shares, rng), rows)
        assert got == expected


def test_reduced_figures_are_the_sums_minima_maxima_and_merged_histogram():
    ranks = synthetic()
    f = phase_figures("write", 0, ranks)
    busy = [r for r in ranks if r.start_ns is not None]
    assert f.bytes_total == sum(r.bytes for r in ranks)
    assert f.ops_total == sum(r.ops for r in ranks)
    assert f.errors == 6
    assert f.throttled == sum(r.throttled for r in ranks)
    assert f.retried == sum(r.retried for r in ranks)
    assert f.requests == dict(sum((Counter(r.requests) for r in ranks), Counter()))
    start = min(r.start_ns for r in busy)
    assert f.phase_time_s == (max(r.end_ns for r in busy) - start) / NS
    assert f.open_time_s == (max(r.open_ns[1] for r in busy) - start) / NS
    assert f.stonewall_time_s == (min(r.end_ns for r in busy) - start) / NS
    # Counts add exactly: the histogram of the tree is the histogram of all ranks at once.
    everyone = _engine.histogram_merge([r.latency_hdr for r in ranks])
    assert base64.b64decode(f.latency_hdr_b64) == everyone
    # Rank order, then each rank's own order, as before: the first five of all of them.
    assert f.first_errors == (
        "rank 2: error 0 of rank 2",
        "rank 2: error 1 of rank 2",
        "rank 2: error 2 of rank 2",
        "rank 5: error 0 of rank 5",
        "rank 5: error 1 of rank 5",
    )
    # The time series counts every byte once.
    interval = f.series.interval_s
    assert round(sum(m * interval * (1 << 20) for m in f.series.mib_s)) == f.bytes_total
    assert [r.rank for r in f.per_rank] == list(range(7))
    assert f.per_rank_spread is None


def test_past_the_kept_ranks_raw_times_are_summarized(monkeypatch):
    monkeypatch.setattr(aggregate, "PER_RANK_KEPT", 4)
    monkeypatch.setattr(aggregate, "SLOWEST_KEPT", 2)
    ranks = synthetic()
    f = phase_figures("write", 0, ranks)
    assert f.per_rank == ()
    spread = f.per_rank_spread
    assert (spread.ranks, spread.kept_below) == (7, 5)
    ends = sorted(((r.end_ns or 0) / NS, r.rank) for r in ranks)
    assert [s.rank for s in spread.slowest] == [ends[-1][1], ends[-2][1]]
    end = spread.times["end_s"]
    assert (end.min, end.max) == (ends[0][0], ends[-1][0])
    assert end.p50 == ends[3][0]  # nearest rank: the 4th of 7
    assert spread.times["bytes"].mean == pytest.approx(sum(r.bytes for r in ranks) / 7)


def summarized_copy(source: Path, out: Path) -> Path:
    """Real documents with their phases' raw times summarized, as a large run writes them."""
    lines = []
    for line in source.read_text().splitlines():
        record = json.loads(line)
        for phase in record["phases"]:
            rows = [tuple(r.values()) for r in phase["per_rank"]]
            spread = aggregate.rank_spread(rows)
            phase["per_rank"] = []
            phase["per_rank_spread"] = dataclasses.asdict(spread)
        lines.append(json.dumps(record))
    out.write_text("\n".join(lines) + "\n")
    return out


def test_a_summarized_document_reads_reports_and_compares(hpcio, tmp_path):
    source = DATA / "file-2ranks.jsonl"
    summarized = summarized_copy(source, tmp_path / "large.jsonl")
    (first, *_) = [
        ResultDocument.from_dict(json.loads(line)) for line in summarized.read_text().splitlines()
    ]
    assert first.phases[0].per_rank == ()
    assert first.phases[0].per_rank_spread.ranks == 2
    report = hpcio("report", summarized)
    assert (report.returncode, report.stderr) == (0, "")
    assert report.stdout == hpcio("report", source).stdout
    compared = hpcio("compare", source, summarized)
    assert (compared.returncode, compared.stderr) == (0, "")
