"""The read ceiling from a fake sysfs and mount table: links parsed, stacks summed."""

import os
from pathlib import Path

import pytest
from hpcio.results.schema import CacheRecord
from hpcio.runner.ceiling import ceiling
from hpcio.runner.pagecache import read_warnings

GB = 1e9


def link(path: Path, to: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(to)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


@pytest.fixture
def world(tmp_path):
    """A target directory, a fake /sys and a mount table naming the target's own device."""
    sys_root, target = tmp_path / "sys", tmp_path / "target"
    target.mkdir()
    dev = os.stat(target).st_dev
    number = f"{os.major(dev)}:{os.minor(dev)}"
    mountinfo = tmp_path / "mountinfo"

    def mount(fs_type, source="/dev/x"):
        mountinfo.write_text(f"36 1 {number} / {target} rw - {fs_type} {source} rw\n")

    mount("ext4")
    return sys_root, target, number, mountinfo, mount


def nvme(sys_root, name, pci, speed, width):
    device = sys_root / "devices" / "pci0000:00" / pci
    write(device / "current_link_speed", speed)
    write(device / "current_link_width", width)
    block = sys_root / "devices" / "pci0000:00" / pci / "nvme" / name[:5] / name
    block.mkdir(parents=True)
    link(block / "device", block.parent)
    link(block.parent / "device", device)
    return block


def test_nvme_partition_is_limited_by_its_pcie_link(world):
    sys_root, target, number, mountinfo, _ = world
    block = nvme(sys_root, "nvme0n1", "0000:01:00.0", "16.0 GT/s PCIe", "4")
    (block / "nvme0n1p1").mkdir()
    write(block / "nvme0n1p1" / "partition", "1")
    link(sys_root / "dev" / "block" / number, block / "nvme0n1p1")
    found = ceiling(str(target), str(sys_root), str(mountinfo))
    assert found.bytes_per_s == pytest.approx(4 * 1.969 * GB)
    assert found.what == "nvme0n1 on PCIe 16.0 GT/s x4"


def test_sata_disk_is_limited_by_its_link(world):
    sys_root, target, number, mountinfo, _ = world
    block = sys_root / "devices" / "pci0000:00" / "ata3" / "host2" / "target2:0:0" / "sda"
    block.mkdir(parents=True)
    write(sys_root / "class" / "ata_link" / "link3" / "sata_spd", "6.0 Gbps")
    write(sys_root / "class" / "ata_link" / "link31" / "sata_spd", "1.5 Gbps")  # not ata3's
    link(sys_root / "dev" / "block" / number, block)
    found = ceiling(str(target), str(sys_root), str(mountinfo))
    assert (found.bytes_per_s, found.what) == (600e6, "sda on a 6.0 Gb/s SATA link")


def test_device_mapper_over_two_drives_sums_them(world):
    sys_root, target, number, mountinfo, _ = world
    a = nvme(sys_root, "nvme0n1", "0000:01:00.0", "8.0 GT/s PCIe", "4")
    b = nvme(sys_root, "nvme1n1", "0000:02:00.0", "8.0 GT/s PCIe", "2")
    dm = sys_root / "devices" / "virtual" / "block" / "dm-0"
    link(dm / "slaves" / "nvme0n1", a)
    link(dm / "slaves" / "nvme1n1", b)
    link(sys_root / "dev" / "block" / number, dm)
    found = ceiling(str(target), str(sys_root), str(mountinfo))
    assert found.bytes_per_s == pytest.approx(6 * 984.6e6)
    assert found.what.startswith("dm-0 over nvme0n1 on PCIe 8.0 GT/s x4 + nvme1n1")


def test_virtual_disk_has_no_known_ceiling(world):
    sys_root, target, number, mountinfo, _ = world
    block = sys_root / "devices" / "pci0000:00" / "0000:00:04.0" / "virtio1" / "block" / "vda"
    block.mkdir(parents=True)
    link(sys_root / "dev" / "block" / number, block)
    found = ceiling(str(target), str(sys_root), str(mountinfo))
    assert found.bytes_per_s is None
    assert "vda: no known link speed" in found.what


def test_network_file_system_is_limited_by_the_interfaces_that_are_up(world):
    sys_root, target, _, mountinfo, mount = world
    mount("nfs4", "server:/export")
    for name, speed, state in (("eth0", "25000", "up"), ("eth1", "10000", "down")):
        write(sys_root / "class" / "net" / name / "speed", speed)
        write(sys_root / "class" / "net" / name / "operstate", state)
        (sys_root / "class" / "net" / name / "device").mkdir()
    write(sys_root / "class" / "net" / "lo" / "speed", "-1")
    found = ceiling(str(target), str(sys_root), str(mountinfo))
    assert (found.bytes_per_s, found.what) == (25e9 / 8, "nfs4 over eth0 25 Gb/s")


def test_tmpfs_is_ram(world):
    sys_root, target, _, mountinfo, mount = world
    mount("tmpfs", "tmpfs")
    found = ceiling(str(target), str(sys_root), str(mountinfo))
    assert found.in_ram and found.bytes_per_s is None


def cache(ceiling_bytes, may_hit=False):
    return CacheRecord(direct_io=True, fsync_in_write_phase=True, caches_dropped=False,
                       read_back_from="", data_set_bytes=1 << 30, data_per_node_bytes=1 << 30,
                       node_ram_bytes=8 << 30, reads_may_hit_page_cache=may_hit, notes=(),
                       read_ceiling="sda on a 6.0 Gb/s SATA link",
                       read_ceiling_bytes_per_s=ceiling_bytes)  # fmt: skip


class Phase:
    def __init__(self, phase, bandwidth):
        self.phase, self.bandwidth_bytes_per_s = phase, bandwidth


def test_a_read_faster_than_the_link_is_flagged_and_a_write_is_not():
    phases = [Phase("write", 5 * GB), Phase("read", 0.5 * GB), Phase("read", 2.0 * GB)]
    (warning,) = read_warnings(cache(600e6), phases, nodes=1)  # type: ignore[arg-type]
    assert warning.startswith("1 read phase(s) ran faster (1,907 MiB/s) than sda on a 6.0 Gb/s")
    assert "served from a cache, not the device" in warning
    # Two nodes, each with its own disk: 1.2 GB/s in all is still possible.
    assert read_warnings(cache(600e6), [*phases[:2], Phase("read", 1.1 * GB)], nodes=2) == ()


def test_page_cache_warning_without_a_known_ceiling():
    (warning,) = read_warnings(cache(None, may_hit=True), [Phase("read", 9 * GB)], nodes=1)
    assert warning.startswith("read figures may be RAM, not storage: 1 GiB per node fits")
