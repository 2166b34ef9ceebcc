"""Buffered writes carry a page-cache warning as reads do: without --direct or --fsync a write
returns once its data is in RAM (profile max-latency's 4 KiB random writes, 0.004 ms)."""

from hpcio.runner.pagecache import WRITE_CACHE_WARNING


def warnings_of(hpcio, read_documents, target_dir, tmp_path, *more):
    out = tmp_path / "r.jsonl"
    done = hpcio("run", "--pattern", "mfmw", "--target", f"file://{target_dir}",
                 "--size-per-rank", "1MiB", "-o", out, "-q", *more)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (doc,) = read_documents(out)
    out.unlink()
    return [w for w in doc["warnings"] if w.startswith(WRITE_CACHE_WARNING)]


def test_buffered_writes_are_flagged_and_fsync_clears_it(hpcio, read_documents, target_dir,
                                                         tmp_path):  # fmt: skip
    (buffered,) = warnings_of(hpcio, read_documents, target_dir, tmp_path)
    assert "neither --direct nor --fsync made a write wait for the device" in buffered
    assert warnings_of(hpcio, read_documents, target_dir, tmp_path, "--fsync") == []


def test_an_object_store_write_is_not_flagged(hpcio, read_documents, tmp_path):
    out = tmp_path / "r.jsonl"
    done = hpcio("run", "--pattern", "mfmw", "--target", "memory://", "--size-per-rank", "1MiB",
                 "-o", out, "-q")  # fmt: skip
    assert done.returncode == 0, done.stderr
    (doc,) = read_documents(out)
    assert not any(w.startswith(WRITE_CACHE_WARNING) for w in doc["warnings"])
