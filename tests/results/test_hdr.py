"""The pure-Python HDR decoding against the engine's, on the histograms of real documents:
every figure the same, one histogram at a time and merged."""

import base64
import json
from pathlib import Path

import pytest
from hpcio import _engine
from hpcio.results import hdr, v1
from hpcio.results.stats import QUANTILES, latency_percentiles, merged_latency_percentiles

DATA = Path(__file__).parents[1] / "data"


def _histograms() -> dict[str, list[bytes]]:
    """Each recorded file's histograms, every phase of every iteration of every document."""
    found = {}
    for path in sorted(DATA.rglob("*.jsonl")):
        parts = []
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if record.get("schema_version") == 1:
                record = v1.upgrade(record)
            parts += [base64.b64decode(p["latency_hdr_b64"]) for p in record["phases"]]
        if parts:
            found[path.name] = parts
    return found


HISTOGRAMS = _histograms()


def _python_summary(histogram: hdr.Histogram) -> dict:
    empty = not histogram.count
    return {
        "count": histogram.count,
        "min_ns": histogram.min(),
        "max_ns": histogram.max(),
        "mean_ns": histogram.mean(),
        "quantiles_ns": [0 if empty else histogram.value_at_quantile(q) for q in QUANTILES],
    }


def test_the_recorded_documents_hold_histograms():
    assert len(HISTOGRAMS) >= 10
    assert sum(len(parts) for parts in HISTOGRAMS.values()) >= 50


@pytest.mark.parametrize("name", sorted(HISTOGRAMS))
def test_each_histogram_decodes_to_the_engines_figures(name):
    for encoded in HISTOGRAMS[name]:
        ours = _python_summary(hdr.decode(encoded))
        assert ours == _engine.histogram_summary(encoded, list(QUANTILES))


@pytest.mark.parametrize("name", sorted(HISTOGRAMS))
def test_merged_histograms_give_the_engines_merge(name):
    parts = HISTOGRAMS[name]
    merged_by_engine = _engine.histogram_merge(parts)
    ours = hdr.merge([hdr.decode(p) for p in parts])
    # The engine's merged bytes, read here, hold the same counts as the merge done here.
    from_engine = hdr.decode(merged_by_engine)
    assert from_engine.counts == ours.counts[: len(from_engine.counts)]
    assert not any(ours.counts[len(from_engine.counts) :])
    assert _python_summary(ours) == _engine.histogram_summary(merged_by_engine, list(QUANTILES))
    assert merged_latency_percentiles(parts) == latency_percentiles(merged_by_engine)
    curve = [i / 200 for i in range(201)]
    engine_curve = _engine.histogram_summary(merged_by_engine, curve)["quantiles_ns"]
    assert ours.values_at_quantiles(curve) == engine_curve


def test_a_known_distribution_has_its_percentiles():
    """1 us .. 100 ms, 1 us apart, recorded by the engine's Recorder: the q-quantile is
    q x 100 ms to the histogram's three significant digits, whatever either decoder does."""
    recorder = _engine.Recorder()
    recorder.start(0)
    for us in range(1, 100_001):
        recorder.record("write", 0, us * 1_000)
    got = latency_percentiles(recorder.figures().latency_hdr)
    assert got.count == 100_000
    for value, expected in ((got.p50_s, 0.05), (got.p90_s, 0.09), (got.p99_s, 0.099)):
        assert value == pytest.approx(expected, rel=1e-3)
    assert got.max_s == pytest.approx(0.1, rel=1e-3)


@pytest.mark.parametrize(
    "broken",
    [b"", b"not a histogram at all, but long enough for a header", b"\x1c\x84\x93\x13" + bytes(36)],
)
def test_bytes_that_are_no_histogram_are_refused(broken):
    with pytest.raises(ValueError, match="HDR histogram"):
        hdr.decode(broken)
