"""--drop-caches and the warnings a result carries when its reads cannot be the storage's."""

import os

import pytest

pytestmark = pytest.mark.mpi  # every run here has 2 ranks

MiB = 1 << 20


def run_doc(hpcio, read_documents, target, tmp_path, *more):
    output = tmp_path / "r.jsonl"
    done = hpcio("run", "--pattern", "mfmw", "--target", target, "--size-per-rank", "4MiB",
                 "-n", "2", "-o", output, *more)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (doc,) = read_documents(output)
    return done, doc


def test_drop_caches_is_recorded_and_clears_the_page_cache_warning(
    hpcio, read_documents, file_url, target_dir, tmp_path, drops_page_cache
):
    _, plain = run_doc(hpcio, read_documents, file_url(target_dir), tmp_path)
    assert plain["cache"]["caches_dropped"] is False
    assert "caches not dropped between write and read" in plain["cache"]["notes"]
    assert plain["cache"]["reads_may_hit_page_cache"] is True
    assert any(w.startswith("read figures may be RAM") for w in plain["warnings"])

    (tmp_path / "r.jsonl").unlink()
    done, dropped = run_doc(hpcio, read_documents, file_url(target_dir), tmp_path, "--drop-caches")
    assert dropped["run"]["drop_caches"] is True
    assert dropped["cache"]["caches_dropped"] is True
    assert dropped["cache"]["reads_may_hit_page_cache"] is False
    assert not any(w.startswith("read figures may be RAM") for w in dropped["warnings"])
    assert "dropped on every node before each read phase" in done.stdout


def test_a_target_in_ram_is_flagged(hpcio, read_documents, tmp_path):
    shm = "/dev/shm"
    if not os.path.isdir(shm) or not os.access(shm, os.W_OK):
        pytest.skip("no writable /dev/shm")
    target = tmp_path.name + "-shm"
    os.makedirs(f"{shm}/{target}")
    try:
        done, doc = run_doc(hpcio, read_documents, f"file://{shm}/{target}", tmp_path)
    finally:
        os.rmdir(f"{shm}/{target}")
    assert doc["cache"]["read_ceiling"] == "the target is on tmpfs, in RAM"
    assert "warning: reads and writes measure memory: the target is on tmpfs" in done.stdout
    assert any("measure memory" in w for w in doc["warnings"])
