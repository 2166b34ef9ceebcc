"""Mixed phases (--rwmix-read) with real ranks: on file:// and on the S3 server, each side's
figures are there, the reads are the seeded draw's count (within the draw's spread of the
asked share), and nothing is left behind."""

import pytest
from hpcio.workloads.patterns.mix import draws

pytestmark = pytest.mark.mpi

KiB = 1 << 10
RANKS = 2


def expected_reads(doc, files, per_file):
    """The reads the seeded draw makes over every rank, from the document's own seed."""
    seed, pct = doc["run"]["seed"], doc["run"]["params"]["rwmix_read_pct"]
    return sum(int(draws(seed, rank, files, per_file, pct).sum()) for rank in range(RANKS))


def check_sides(doc, files, per_file, pct):
    total = RANKS * files * per_file
    reads = expected_reads(doc, files, per_file)
    # The draw is binomial: its count stays within 5 standard deviations of the asked share.
    assert abs(reads - total * pct / 100) <= 5 * (total * pct / 100 * (1 - pct / 100)) ** 0.5
    assert [p["phase"] for p in doc["phases"]] == ["mixed"] * doc["run"]["iterations"]
    for phase in doc["phases"]:
        read, write = phase["read_side"], phase["write_side"]
        assert phase["errors"] == 0, phase["first_errors"]
        assert (read["ops_total"], write["ops_total"]) == (reads, total - reads)
        assert read["bytes_total"] + write["bytes_total"] == phase["bytes_total"]
        assert read["latency"]["count"] == reads and write["latency"]["count"] == total - reads
        assert read["bandwidth_bytes_per_s"] > 0 and write["bandwidth_bytes_per_s"] > 0
    summary = doc["summary"]["mixed"]
    assert summary["read_side"]["ops_total"] == reads
    assert summary["write_side"]["bandwidth_mib_s"]["mean"] > 0


def test_a_mixed_phase_on_files_reports_each_side(hpcio, file_url, read_documents, target_dir):
    output = target_dir.parent / "r.jsonl"
    done = hpcio(
        "run", "-n", RANKS, "--pattern", "mfmw", "--target", file_url(target_dir),
        "--size-per-rank", "1MiB", "--transfer", "4KiB", "--files-per-rank", "2",
        "--rwmix-read", "70", "--in-flight", "4", "--verify", "-i", "2", "--seed", "11",
        "-o", output,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    (doc,) = read_documents(output)
    check_sides(doc, files=2, per_file=128, pct=70)
    assert "mixed  read " in done.stdout and "% reads)" in done.stdout
    assert list(target_dir.iterdir()) == []  # removed afterwards


def test_a_mixed_phase_on_s3_gets_and_puts_whole_objects(
    hpcio, s3_server, tmp_path, read_documents
):
    """warp's mixed: objects of one transfer each, a read a GET of one and a write a PUT that
    replaces it whole; afterwards the prefix is empty."""
    output = tmp_path / "r.jsonl"
    prefix = "mixed-run"
    done = hpcio(
        "run", "-n", RANKS, "--pattern", "mfmw", "--target", s3_server.url(prefix),
        "--size-per-rank", "256KiB", "--transfer", "16KiB", "--files-per-rank", "16",
        "--rwmix-read", "60", "--in-flight", "4", "--verify", "-o", output, env=s3_server.env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (doc,) = read_documents(output)
    check_sides(doc, files=16, per_file=1, pct=60)
    (phase,) = doc["phases"]
    assert phase["requests"]["get"] == phase["read_side"]["ops_total"]
    assert phase["requests"]["put"] == phase["write_side"]["ops_total"]
    listed = s3_server.client().list_objects_v2(Bucket="hpcio-test", Prefix=prefix)
    assert listed.get("Contents", []) == []


def test_a_profile_mixes_too(hpcio, file_url, read_documents, target_dir):
    output = target_dir.parent / "r.jsonl"
    done = hpcio(
        "profile", "random-throughput", "--target", file_url(target_dir), "--size", "2MiB",
        "-n", RANKS, "--rwmix-read", "70", "--verify", "-o", output,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (doc,) = read_documents(output)
    params = doc["run"]["params"]
    files = params["files_per_rank"]
    check_sides(
        doc, files=files, per_file=params["size_per_rank_bytes"] // files // (4 * KiB), pct=70
    )
    assert "Mixed reads:" in done.stdout
    assert list(target_dir.iterdir()) == []
