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


def stored_objects(server, prefix):
    if hasattr(server, "client"):
        listed = server.client().list_objects_v2(Bucket="hpcio-test", Prefix=prefix)
        return [o["Key"] for o in listed.get("Contents", [])]
    return list(server.container_client().list_blob_names(name_starts_with=prefix))


@pytest.mark.parametrize(
    ("server_name", "files", "transfers"),
    [("s3_server", 16, 1), ("azure_server", 16, 1), ("azure_server", 4, 4)],
)
def test_a_mixed_phase_on_object_stores(
    hpcio, request, tmp_path, read_documents, server_name, files, transfers
):
    """Objects of one transfer: a read is a GET of one, a write a PUT that replaces it whole
    (warp's mixed). Objects of several: the writes' blocks are committed at the close, the
    reads meanwhile find the laid-out object, checked byte for byte. The prefix is empty
    afterwards."""
    server = request.getfixturevalue(server_name)
    output = tmp_path / "r.jsonl"
    prefix = f"mixed-{files}"
    done = hpcio(
        "run", "-n", RANKS, "--pattern", "mfmw", "--target", server.url(prefix),
        "--size-per-rank", "256KiB", "--transfer", f"{256 // files // transfers}KiB",
        "--files-per-rank", files, "--rwmix-read", "60", "--in-flight", "4", "--verify",
        "-o", output, env=server.env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (doc,) = read_documents(output)
    check_sides(doc, files=files, per_file=transfers, pct=60)
    (phase,) = doc["phases"]
    reads = phase["read_side"]["ops_total"]
    assert phase["requests"]["get"] == reads
    if transfers == 1:
        assert phase["requests"]["put"] == phase["write_side"]["ops_total"]
    assert stored_objects(server, prefix) == []


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
