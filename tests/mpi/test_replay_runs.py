"""hpcio replay on a directory with 2 real ranks: darshan's DXT sample (bytes per rank and
access sizes as pydarshan reads them from the log), its counters-only sample, a trace with
reads (--verify, the lay-out of what the reads need), and bad input in one line."""

import json
from collections import Counter

import numpy as np
import pytest
from hpcio.workloads.replay import counters
from replay_logs import MiB, app_trace, darshan_sample, dxt_segments

pytestmark = pytest.mark.mpi


def _last(path):
    return json.loads(path.read_text().splitlines()[-1])


def _buckets(lengths):
    return dict(zip(counters.BUCKETS, counters.histogram(np.array(lengths)).tolist(), strict=True))


def _replayed_buckets(phase):
    return {b: phase["metrics"][f"accesses_{b}"] for b in counters.BUCKETS}


def test_dxt_sample_replays_each_ranks_bytes_and_access_sizes(
    hpcio, target_dir, file_url, tmp_path
):
    log = darshan_sample("sample-dxt-simple.darshan")
    out = tmp_path / "r.jsonl"
    done = hpcio("replay", log, "--target", file_url(target_dir), "-n", 2, "--keep", "-o", out)
    assert done.returncode == 0, done.stderr
    doc = _last(out)
    (write,) = doc["phases"]
    segments = [s for s in dxt_segments(log) if s[1] == "write"]
    expected_per_rank = Counter()
    for app_rank, _, _, length in segments:
        expected_per_rank[app_rank % 2] += length
    assert [r["bytes"] for r in write["per_rank"]] == [expected_per_rank[0], expected_per_rank[1]]
    assert _replayed_buckets(write) == _buckets([s[3] for s in segments])
    assert write["metrics"]["replayed_from"] == "dxt"
    assert write["metrics"]["app_ranks"] == 16
    # The bytes are on the target: each file as long as the application's furthest write.
    sizes = sorted(p.stat().st_size for p in target_dir.iterdir())
    assert sizes == sorted(offset + length for _, _, offset, length in segments)


def test_counters_sample_replays_the_logs_bytes_shrunk(hpcio, target_dir, file_url, tmp_path):
    log = darshan_sample("sample.darshan")
    out = tmp_path / "r.jsonl"
    # 2 TiB written by 2048 ranks: every size / 2**20, 128 MiB writes become 128 bytes.
    done = hpcio("replay", log, "--target", file_url(target_dir), "-n", 2, "--shrink", 1 << 20,
                 "--gaps", "none", "-o", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (write,) = _last(out)["phases"]
    assert write["metrics"]["replayed_from"] == "counters"
    assert write["metrics"]["counters_exact"] is True
    # POSIX_BYTES_WRITTEN 2199023259968: 16384 x 128 MiB and 18 small writes (4416 bytes),
    # each at least 1 byte once shrunk: 16384 x 128 + 18.
    assert write["bytes_total"] == 16384 * 128 + 18
    assert write["metrics"]["operations"] == 16402  # POSIX_WRITES
    assert sum(r["bytes"] for r in write["per_rank"]) == write["bytes_total"]
    assert list(target_dir.iterdir()) == []  # removed after the iteration


def test_a_trace_with_reads_lays_out_what_they_need_and_verifies(
    hpcio, target_dir, file_url, tmp_path
):
    trace = app_trace(tmp_path / "trace")
    out = tmp_path / "r.jsonl"
    done = hpcio("replay", trace, "--target", file_url(target_dir), "-n", 2, "--verify",
                 "--gaps", "keep", "-i", 2, "-o", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = _last(out)
    write, read, *_ = doc["phases"]
    assert write["bytes_total"] == 20 * MiB + 350 + 300
    assert read["bytes_total"] == 4 * 4096
    assert read["metrics"]["laid_out_bytes"] == 12288 + (5 * MiB + 4096) + (5 * MiB + 2048)
    assert read["metrics"]["replayed_from"] == "hpcio-trace"
    # The trace waits 1 ms between rank 0's two checkpoint writes, and more for rank 1.
    assert write["metrics"]["waited_s"] > 0.001
    assert read["errors"] == 0 and len(doc["phases"]) == 4


def test_gaps_none_waits_for_nothing(hpcio, target_dir, file_url, tmp_path):
    out = tmp_path / "r.jsonl"
    done = hpcio("replay", app_trace(tmp_path / "trace"), "--target", file_url(target_dir),
                 "-n", 2, "--gaps", "none", "-o", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert all(p["metrics"]["waited_s"] == 0 for p in _last(out)["phases"])


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("/nonexistent/app.darshan",), "/nonexistent/app.darshan: no such file"),
        (("{bad}",), "bad.darshan: not a Darshan log or an hpcio trace (no Darshan header)"),
        (("{cut}",), "cut.darshan: the log is cut short (200 bytes; its header alone is"),
        (("{empty}",), "no trace files"),
        (("{noposix}",), "noposix.darshan: the log has neither DXT segments nor POSIX counters"),
        (("{dxt}", "-n", "17"), "-n 17: the application ran 16 rank(s); replay it with -n 16"),
        (("{dxt}", "--gaps", "some"), "argument --gaps: invalid choice"),
        (("{dxt}", "--shrink", "0"), "--shrink"),
        (("{dxt}", "--verify"), "--verify needs a read phase"),  # the log only writes
    ],
)
def test_bad_input_is_one_line(hpcio, target_dir, file_url, tmp_path, error_line, args, words):
    bad = tmp_path / "bad.darshan"
    bad.write_text("this is not a Darshan log\n")
    dxt = str(darshan_sample("sample-dxt-simple.darshan"))
    cut = tmp_path / "cut.darshan"  # a log's header, and nothing after it
    cut.write_bytes(darshan_sample("sample-dxt-simple.darshan").read_bytes()[:200])
    empty = tmp_path / "empty"
    empty.mkdir()
    noposix = darshan_sample("noposix.darshan")
    args = [a.format(bad=bad, dxt=dxt, cut=cut, empty=empty, noposix=noposix) for a in args]
    done = hpcio("replay", *args, "--target", file_url(target_dir))
    assert done.returncode == 2
    assert words in error_line(done)
    assert "Traceback" not in done.stderr


def test_a_replays_own_trace_replays_the_same(hpcio, target_dir, file_url, tmp_path):
    # The log -> a replay traced with --trace -> that trace replayed: the same bytes per rank
    # and the same access sizes, so hpcio's traces and Darshan's logs are one input.
    log = darshan_sample("sample-dxt-simple.darshan")
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    done = hpcio("replay", log, "--target", file_url(target_dir), "-n", 2, "--trace",
                 "-o", first)  # fmt: skip
    assert done.returncode == 0, done.stderr
    trace = _last(first)["trace"]["directory"]
    again = hpcio("replay", trace, "--target", file_url(target_dir), "-n", 2, "-o", second)
    assert again.returncode == 0, again.stderr
    (before,), (after,) = _last(first)["phases"], _last(second)["phases"]
    assert after["metrics"]["replayed_from"] == "hpcio-trace"
    assert [r["bytes"] for r in after["per_rank"]] == [r["bytes"] for r in before["per_rank"]]
    assert _replayed_buckets(after) == _replayed_buckets(before)
