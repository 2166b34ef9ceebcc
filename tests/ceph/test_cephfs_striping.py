"""--stripe-count and --stripe-size on CephFS (the ceph-fuse mount): each file the run creates
gets its layout (ceph.file.layout), read back and recorded as run.striping "cephfs-layout",
and the data pool holds as many objects as that layout makes; what CephFS cannot take is
refused in one line."""

import json
import os
import subprocess

import pytest

pytestmark = pytest.mark.mpi

MiB = 1 << 20


def data_objects(cluster, path):
    """The RADOS objects of a CephFS file: named by its inode number in hex."""
    prefix = f"{os.stat(path).st_ino:x}."
    listed = subprocess.run(["rados", "-c", str(cluster.conf), "-p", "cephfs_data", "ls"],
                            capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
    return sorted(n for n in listed.stdout.split() if n.startswith(prefix))


@pytest.mark.parametrize("api", ["posix", "mpiio"])
@pytest.mark.parametrize("count", [1, 4])
def test_a_shared_file_gets_its_layout(hpcio, ceph_cluster, cephfs_dir, tmp_path, api, count):
    out = tmp_path / "r.jsonl"
    done = hpcio("run", "--pattern", "sfmw", "-n", 2, "--size-per-rank", "4MiB",
                 "--transfer", "1MiB", "--api", api, "--stripe-count", count,
                 "--stripe-size", "1MiB", "--verify", "--keep", "-q", "-o", out,
                 "--target", f"file://{cephfs_dir}")  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    assert doc["run"]["striping"] == "cephfs-layout"
    assert doc["storage"]["file_system"] == "fuse.ceph-fuse"
    (shared,) = [p for p in cephfs_dir.iterdir() if p.suffix == ".dat"]
    layout = os.getxattr(shared, "ceph.file.layout").decode()
    assert f"stripe_unit={MiB} stripe_count={count} object_size={4 * MiB}" in layout
    # 8 MiB in 1 MiB units: over 4 objects of an object set, or 2 whole 4 MiB objects.
    os.sync()
    assert len(data_objects(ceph_cluster, shared)) == (4 if count == 4 else 2)


def test_a_stripe_unit_cephfs_cannot_take_is_refused(hpcio, cephfs_dir, error_line):
    done = hpcio("run", "--pattern", "sfmw", "-n", 2, "--size-per-rank", "4MiB",
                 "--stripe-size", "100KiB", "--target", f"file://{cephfs_dir}")  # fmt: skip
    assert done.returncode == 2
    assert error_line(done) == (
        "hpcio: error: --stripe-size: CephFS stripe units are multiples of 64 KiB, got 102400 bytes"
    )
