"""`hpcio trace summary` names a trace's records by the kind of target its operations went to:
POSIX for a directory, S3 (AZURE, GCS, MEMORY) for an object store's requests, which Darshan's
POSIX module does not describe; a trace file written before files said their kind reads as
POSIX, as it always did."""

from __future__ import annotations

import json

import numpy as np
from hpcio.runner import tracing
from hpcio.spec.model import RunSpec
from hpcio.spec.target import TargetSpec
from hpcio.trace import operations, summary


def traced(hpcio, tmp_path, url):
    out = tmp_path / "r.jsonl"
    done = hpcio("run", "--pattern", "mfmw", "--target", url, "--size-per-rank", "1MiB",
                 "--trace", "-o", out, "-q")  # fmt: skip
    assert done.returncode == 0, done.stderr
    (run,) = (tmp_path / "r.trace").iterdir()
    return run


def modules(hpcio, path):
    done = hpcio("trace", "summary", path, "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert rows
    return {row["module"] for row in rows}, {k for row in rows for k in row["counters"]}


def test_an_object_store_s_trace_is_not_labelled_posix(hpcio, tmp_path):
    names, counters = modules(hpcio, traced(hpcio, tmp_path, "memory://"))
    assert names == {"MEMORY"}
    assert "MEMORY_WRITES" in counters and not any(c.startswith("POSIX_") for c in counters)


def test_a_directory_s_trace_is_posix(hpcio, tmp_path):
    target = tmp_path / "t"
    target.mkdir()
    names, counters = modules(hpcio, traced(hpcio, tmp_path, f"file://{target}"))
    assert names == {"POSIX"} and "POSIX_WRITES" in counters


def test_a_rank_s_trace_file_says_its_target_kind(tmp_path):
    run = RunSpec.build("mfmw", target=TargetSpec.from_url("s3://bucket-a/x"),
                        size_per_rank_bytes=8 << 20)  # fmt: skip
    tracer = tracing.Tracer(0, 0, str(tmp_path), run)
    tracer.write()
    assert operations.kind_of(tmp_path) == "s3"
    assert operations.kind_of(tracer.path) == "s3"
    assert summary.module_for("s3") == "S3"


def test_a_trace_without_its_kind_reads_as_posix(hpcio, tmp_path):
    ops = operations.build([0, 0], ["a", "a"], ["open", "write"], [-1, 0], [0, 10], [0, 1],
                           [1, 2])  # fmt: skip
    operations.write(tmp_path / operations.rank_file_name(0), ops)
    with np.load(tmp_path / operations.rank_file_name(0)) as archive:
        assert "target_kind" not in archive.files
    assert operations.kind_of(tmp_path) is None
    names, counters = modules(hpcio, tmp_path)
    assert names == {"POSIX"} and "POSIX_WRITES" in counters
