"""A directory with the traces of two runs is refused by `trace summary` and `replay`, with the
runs named and how to pick one; one run's directory reads as before (issue 25)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def traced_twice(hpcio, tmp_path_factory):
    """Two runs traced into one directory, made once for this module: the tests only read it
    (`trace summary`, `replay --dry-run`)."""
    tmp_path = tmp_path_factory.mktemp("two-runs")
    out = tmp_path / "r.jsonl"
    for pattern in ("mfmw", "sfmw"):
        done = hpcio("run", "--pattern", pattern, "--target", "memory://", "--size-per-rank",
                     "1MiB", "--trace", "-o", out, "-q")  # fmt: skip
        assert done.returncode == 0, done.stderr
    traces = tmp_path / "r.trace"
    runs = sorted(path.name for path in traces.iterdir())
    assert len(runs) == 2
    return traces, runs


def test_two_runs_are_refused_and_named(hpcio_process, hpcio, traced_twice, tmp_path, error_line):
    traces, runs = traced_twice
    expected = (
        f"hpcio: error: {traces} holds the traces of 2 runs ({runs[0]}, {runs[1]}): give one "
        f"run's directory, e.g. {traces / runs[0]}"
    )
    done = hpcio_process("trace", "summary", traces)
    assert done.returncode == 2
    assert error_line(done) == expected
    done = hpcio("replay", traces, "--target", f"file://{tmp_path}", "--dry-run")
    assert done.returncode == 2
    assert error_line(done) == expected


def test_one_runs_directory_still_reads(hpcio, traced_twice):
    traces, runs = traced_twice
    done = hpcio("trace", "summary", traces / runs[0], "--json")
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
