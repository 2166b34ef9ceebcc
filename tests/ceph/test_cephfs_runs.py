"""hpcio on CephFS (the test cluster's ceph-fuse mount), small and few: the five patterns and the
MPI-IO, HDF5 and NetCDF APIs with --verify, the profiles, unet3d training, `hpcio env --target`
naming the file system and its layout, and the cache record saying what ceph-fuse's own
cache does to buffered reads and that --direct bypasses it."""

import json

import pytest

pytestmark = pytest.mark.mpi


def run(hpcio, directory, out, *more):
    done = hpcio("run", "-n", 2, "--size-per-rank", "4MiB", "--transfer", "1MiB", "--verify",
                 "-q", "-o", out, "--target", f"file://{directory}", *more)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text().splitlines()[-1])


@pytest.mark.parametrize("pattern", ["sfsw", "sfmw", "mfmw", "sfmr", "mfmr"])
def test_every_pattern_verifies(hpcio, cephfs_dir, tmp_path, pattern):
    doc = run(hpcio, cephfs_dir, tmp_path / "r.jsonl", "--pattern", pattern)
    assert doc["status"] == "complete"
    assert all(p["errors"] == 0 for p in doc["phases"])


@pytest.mark.parametrize("api", ["mpiio", "hdf5", "netcdf"])
def test_shared_file_through_a_library(hpcio, cephfs_dir, tmp_path, api):
    doc = run(hpcio, cephfs_dir, tmp_path / "r.jsonl", "--pattern", "sfmw", "--api", api)
    assert doc["run"]["params"]["api"] == api
    assert {p["phase"] for p in doc["phases"]} == {"write", "read"}


def test_the_profiles(hpcio, cephfs_dir, tmp_path):
    out = tmp_path / "p.jsonl"
    done = hpcio("profile", "all", "--target", f"file://{cephfs_dir}", "--size", "2MiB",
                 "--verify", "-o", out, "-n", 2, "-q")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert len(out.read_text().splitlines()) > 1


def test_unet3d_trains_on_cephfs(hpcio, cephfs_dir, tmp_path):
    url = f"file://{cephfs_dir}"
    made = hpcio("train", "datagen", "-n", 2, "--target", url, "--scale", "small",
                 "--samples", 4, "-q")  # fmt: skip
    assert made.returncode == 0, made.stderr
    out = tmp_path / "t.jsonl"
    done = hpcio("train", "unet3d", "-n", 2, "--target", url, "--scale", "small",
                 "--samples", 4, "--batch", 1, "--epochs", 1, "--compute-time", "0.01", "-q",
                 "-o", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (phase,) = json.loads(out.read_text())["phases"]
    assert phase["bytes_total"] > 0
    assert phase["errors"] == 0


def test_env_names_the_file_system_and_its_layout(hpcio, cephfs_dir):
    done = hpcio("env", "--target", f"file://{cephfs_dir}")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert any(line.split()[:3] == ["file", "system", "fuse.ceph-fuse"] for line in lines)
    (layout,) = [line for line in lines if line.strip().startswith("cephfs layout")]
    assert "stripe_unit=" in layout and "stripe_count=" in layout and "object_size=" in layout


def test_buffered_reads_say_ceph_fuses_cache_and_direct_bypasses_it(hpcio, cephfs_dir, tmp_path):
    buffered = run(hpcio, cephfs_dir, tmp_path / "b.jsonl", "--pattern", "mfmw")
    assert any(n.startswith("ceph-fuse's object cache") for n in buffered["cache"]["notes"])
    direct = run(hpcio, cephfs_dir, tmp_path / "d.jsonl", "--pattern", "mfmw", "--direct")
    assert direct["cache"]["reads_may_hit_page_cache"] is False
    assert not any("ceph-fuse" in n for n in direct["cache"]["notes"])
