"""On a ceph-fuse mount, reads the page cache no longer holds come from ceph-fuse's own object
cache, which --drop-caches does not empty: the cache record and the warnings say so, and
--direct bypasses both (measured on the test cluster: docs/ceph.md)."""

import pytest
from hpcio.runner import ceiling, pagecache
from specs import run_spec

MiB, GiB = 1 << 20, 1 << 30


@pytest.fixture
def on_ceph_fuse(monkeypatch):
    fuse = ceiling.Mount("/mnt/cephfs", "fuse.ceph-fuse", "ceph-fuse", "rw")
    monkeypatch.setattr(pagecache, "mount_of", lambda path: fuse)


def record(per_rank, **changes):
    run = run_spec("mfmw", "file:///mnt/cephfs/run", ranks=2, size_per_rank_bytes=per_rank,
                   transfer_bytes=MiB, **changes)  # fmt: skip
    return pagecache.cache_record(run, run.workload, 1, 16 * GiB, True)


def test_dropped_caches_still_leave_ceph_fuses_own(on_ceph_fuse):
    cache = record(32 * MiB, drop_caches=True)
    assert cache.reads_may_hit_page_cache is True
    (warning,) = pagecache.read_warnings(cache, [], 1)
    assert warning.startswith("read figures may be ceph-fuse's object cache may serve the reads")
    assert "--direct or a fresh mount bypasses it" in warning


def test_more_than_ceph_fuse_holds_after_a_drop_is_storage(on_ceph_fuse):
    cache = record(512 * MiB, drop_caches=True)
    assert cache.reads_may_hit_page_cache is False
    assert pagecache.read_warnings(cache, [], 1) == ()
    assert any(n.startswith("ceph-fuse's object cache (client_oc_size") for n in cache.notes)


def test_direct_bypasses_ceph_fuses_cache(on_ceph_fuse):
    cache = record(32 * MiB, direct=True)
    assert cache.reads_may_hit_page_cache is False
    assert not any("ceph-fuse" in n for n in cache.notes)


def test_other_file_systems_get_no_ceph_fuse_note():
    run = run_spec("mfmw", "file:///tmp/x", ranks=2, size_per_rank_bytes=MiB, drop_caches=True)
    cache = pagecache.cache_record(run, run.workload, 1, 16 * GiB, True)
    assert cache.reads_may_hit_page_cache is False
    assert not any("ceph-fuse" in n for n in cache.notes)
