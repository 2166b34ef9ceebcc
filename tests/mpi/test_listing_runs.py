"""The listing workload on real ranks and a real directory: every rank lists and stats, or
rank 0 alone does and broadcasts; either way every file is read once and verified."""

import json

import pytest

pytestmark = pytest.mark.mpi

FILES, SIZE = 64, 4 << 10


def listing_run(hpcio, file_url, target_dir, lister, *more):
    out = target_dir.parent / f"{lister}.jsonl"
    done = hpcio("run", "--workload", "listing", "--target", file_url(target_dir), "-n", 2,
                 "--lister", lister, "--files-per-rank", FILES, "--file-size", "4KiB",
                 "--verify", "-q", "-o", out, *more)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    who = "every rank listed" if lister == "every" else "rank 0 listed and broadcast"
    assert f"  listing: {who} ({2 * FILES} entries)" in done.stdout
    return json.loads(out.read_text().splitlines()[-1])


@pytest.mark.parametrize(("lister", "listers"), [("every", 2), ("rank0", 1)])
def test_each_lister_reads_every_file_once(hpcio, file_url, target_dir, lister, listers):
    doc = listing_run(hpcio, file_url, target_dir, lister)
    write, read = doc["phases"]
    assert write["bytes_total"] == read["bytes_total"] == 2 * FILES * SIZE
    assert read["requests"]["read"] == 2 * FILES and read["errors"] == 0
    m = read["metrics"]
    assert (m["lister"], m["listers"], m["list_ops"]) == (lister, listers, listers)
    assert m["listed_entries"] == 2 * FILES
    assert m["stat_ops"] == listers * 2 * FILES  # POSIX: each lister stats what it found
    assert 0 < m["list_p50_s"] <= m["list_p99_s"] <= m["list_max_s"]
    assert 0 < m["stat_p50_s"] <= m["stat_max_s"]
    # The listing is inside the phase (its open span), so the phase time covers it.
    assert 0 < m["listing_s"] <= read["open_time_s"] <= read["phase_time_s"]
    assert doc["run"]["params"]["lister"] == lister
    assert list(target_dir.iterdir()) == []  # removed after the iteration, as IOR does


def test_reading_what_is_not_there_fails_naming_the_listing(hpcio, file_url, target_dir):
    done = hpcio("run", "--workload", "listing", "--target", file_url(target_dir), "-n", 2,
                 "--phases", "read", "--files-per-rank", 2)  # fmt: skip
    assert done.returncode == 1
    assert "holds 0 of the run's 4 files" in done.stderr
    assert "Traceback" not in done.stderr
