"""The mdtest workload on real ranks and a real directory: every phase's items and rates in
the document, the tree on disk while it runs as mdtest lays it out, nothing left after."""

import os

import pytest

pytestmark = pytest.mark.mpi


def mdtest_run(hpcio, file_url, target_dir, *more):
    out = target_dir.parent / "md.jsonl"
    done = hpcio("run", "--workload", "mdtest", "--target", file_url(target_dir), "-n", 2,
                 "-o", out, *more)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return done, out


@pytest.mark.parametrize("dir_per_rank", [False, True])
def test_every_phase_makes_every_item_of_every_rank(
    hpcio, file_url, target_dir, read_documents, dir_per_rank
):
    more = ["--dir-per-rank"] if dir_per_rank else []
    done, out = mdtest_run(hpcio, file_url, target_dir, "--items", 70, "--depth", 2,
                           "--branch", 2, "--write-bytes", "100", "--read-bytes", "100",
                           "-i", 2, *more)  # fmt: skip
    (doc,) = read_documents(out)
    assert [p["phase"] for p in doc["phases"]] == ["write", "write"]
    for phase in doc["phases"]:
        m = phase["metrics"]
        assert phase["errors"] == 0 and m["failed_calls"] == 0
        # 70 items per rank: 10 in each of the tree's 7 directories.
        for key in ("dir_create", "dir_stat", "dir_remove", "file_create", "file_stat",
                    "file_read", "file_remove"):  # fmt: skip
            assert m[f"{key}_items"] == 2 * 70, key
            assert m[f"{key}_ops_per_s"] > 0
            # mdtest's rate: items over the slowest rank's time, barriers included.
            assert m[f"{key}_ops_per_s"] >= m[f"{key}_items"] / m[f"{key}_s"] * 0.999
        assert m["tree_create_items"] == m["tree_remove_items"] == 7
        assert phase["phase_time_s"] >= m["file_create_s"]
    # Its own iteration lines and table: rates of calls, no bandwidth of bytes it never counts.
    assert done.stdout.count("ops/s: tree create") == 2
    assert "  File creation" in done.stdout
    assert "MiB/s" not in done.stdout
    # Its files hold --write-bytes, written without fsync: the page-cache warning says so.
    assert "write figures may be RAM" in done.stdout
    assert list(target_dir.iterdir()) == []


def test_stonewall_stops_creation_and_every_rank_catches_up(
    hpcio, file_url, target_dir, read_documents
):
    # A stonewall of 1 ms ends creation early on a loaded machine or not at all: either way
    # every rank makes the same count, and the later phases take exactly that count.
    _, out = mdtest_run(hpcio, file_url, target_dir, "--items", 3000, "--items-kind", "files",
                        "--stonewall", "0.001")  # fmt: skip
    (doc,) = read_documents(out)
    m = doc["phases"][0]["metrics"]
    assert m["file_create_items"] % 2 == 0
    assert 0 < m["file_create_items"] <= 2 * 3000
    assert m["file_stat_items"] == m["file_remove_items"] == m["file_create_items"]
    assert "dir_create_items" not in m
    assert list(target_dir.iterdir()) == []


def test_a_failed_call_is_an_error_of_the_phase_and_nothing_stays(hpcio, file_url, target_dir):
    # A file where rank 1's tree root must go: its every mkdir and create fails, rank 0's
    # work goes on, every rank meets every barrier, and the run fails naming the path.
    (target_dir / "hpcio-mdtest").mkdir()
    (target_dir / "hpcio-mdtest" / "mdtest_tree.1.0").write_bytes(b"x")
    done = hpcio("run", "--workload", "mdtest", "--target", file_url(target_dir), "-n", 2,
                 "--items", 10, "--dir-per-rank", "-q")  # fmt: skip
    assert done.returncode == 1
    assert "tree_create: " in done.stderr and "mdtest_tree.1.0" in done.stderr
    assert "Traceback" not in done.stderr
    assert not os.path.exists(target_dir / "hpcio-mdtest")
