"""The most a POSIX target's device or link can carry, so a read faster than that is flagged.

Read from sysfs, never measured: the PCIe link of an NVMe drive, the SATA/SAS link of a
disk, the summed speed of the network interfaces under a network file system. A read phase
above that ceiling cannot have come from the device; it came from a cache. Where the ceiling
is unknown (virtio disks, loop devices) no such check is made, and the result says so.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

#: Usable bytes/s per PCIe lane by link rate in GT/s (8b/10b up to 5 GT/s, then 128b/130b).
_PCIE_LANE_BYTES = {2.5: 250e6, 5.0: 500e6, 8.0: 984.6e6, 16.0: 1969e6, 32.0: 3938e6, 64.0: 7877e6}
_NETWORK_FS = ("nfs", "nfs4", "cifs", "smb3", "lustre", "beegfs", "gpfs", "ceph", "glusterfs")
_RAM_FS = ("tmpfs", "ramfs")


@dataclass(frozen=True, slots=True)
class Ceiling:
    """At most `bytes_per_s` per node can reach the target, because of `what`."""

    bytes_per_s: float | None
    what: str
    #: The target is a RAM file system: every figure measures memory.
    in_ram: bool = False


def ceiling(path: str, sys_root: str = "/sys", mountinfo: str = "/proc/self/mountinfo") -> Ceiling:
    """What limits reads of `path` on this node (bytes_per_s None when nothing known does)."""
    mount = mount_of(path, mountinfo)
    fs_type, source = mount.fs_type, mount.source
    if fs_type in _RAM_FS:
        return Ceiling(None, f"the target is on {fs_type}, in RAM", in_ram=True)
    if fs_type in _NETWORK_FS or (fs_type.startswith("fuse.") and ":" in source):
        return _network(Path(sys_root), fs_type)
    try:
        device = os.stat(path).st_dev
    except OSError:
        return Ceiling(None, "device unknown")
    block = Path(sys_root) / "dev" / "block" / f"{os.major(device)}:{os.minor(device)}"
    return _block(Path(sys_root), block)


def file_system_type(path: str, mountinfo: str = "/proc/self/mountinfo") -> str:
    """The type of the file system holding `path` ("ext4", "proc"), or "" if unknown."""
    return mount_of(path, mountinfo).fs_type


@dataclass(frozen=True, slots=True)
class Mount:
    """The mount holding a path, as /proc/self/mountinfo says ("" where unknown)."""

    point: str = ""
    fs_type: str = ""
    source: str = ""
    #: The mount's own options and the file system's ("rw,relatime" + "rw,stripe=4").
    options: str = ""


def mount_of(path: str, mountinfo: str = "/proc/self/mountinfo") -> Mount:
    """The mount holding `path`: the longest matching mount point."""
    found = Mount()
    real = os.path.realpath(path)
    try:
        with open(mountinfo, encoding="utf-8") as lines:
            for line in lines:
                left, _, right = line.partition(" - ")
                fields = left.split()
                point = fields[4].replace("\\040", " ")
                fs_type, source, super_options = [*right.split(), "", "", ""][:3]
                inside = real == point or real.startswith(point.rstrip("/") + "/")
                if inside and len(point) >= len(found.point):
                    options = ",".join(o for o in (fields[5], super_options) if o)
                    found = Mount(point, fs_type, source, options)
    except OSError:
        pass
    return found


def _block(sys_root: Path, block: Path) -> Ceiling:
    try:
        device = block.resolve(strict=True)
    except OSError:
        return Ceiling(None, "device unknown")
    if (device / "partition").exists():
        device = device.parent
    name = device.name
    slaves = sorted((device / "slaves").glob("*")) if (device / "slaves").is_dir() else []
    if slaves:  # device mapper or md: at most the sum of what is under it
        parts = [_block(sys_root, s) for s in slaves]
        if any(p.bytes_per_s is None for p in parts):
            return Ceiling(None, f"{name}: a device under it has no known link speed")
        total = sum(p.bytes_per_s or 0 for p in parts)
        return Ceiling(total, f"{name} over " + " + ".join(p.what for p in parts))
    if name.startswith("nvme"):
        return _nvme(device, name)
    sata = _sata(sys_root, device, name)
    if sata is not None:
        return sata
    return Ceiling(None, f"{name}: no known link speed (virtual or unrecognised device)")


def _nvme(device: Path, name: str) -> Ceiling:
    pci = (device / "device" / "device").resolve()
    speed, width = _read(pci / "current_link_speed"), _read(pci / "current_link_width")
    rate = re.match(r"([\d.]+) GT/s", speed)
    if rate is None or not width.isdigit() or float(rate.group(1)) not in _PCIE_LANE_BYTES:
        return Ceiling(None, f"{name}: PCIe link speed unknown")
    lanes = int(width)
    per_s = _PCIE_LANE_BYTES[float(rate.group(1))] * lanes
    return Ceiling(per_s, f"{name} on PCIe {rate.group(1)} GT/s x{lanes}")


def _sata(sys_root: Path, device: Path, name: str) -> Ceiling | None:
    ata = re.search(r"/(ata\d+)/", str(device.resolve()))
    if ata is None:
        return None
    port = f"link{ata.group(1)[3:]}"
    links = sorted((sys_root / "class" / "ata_link").glob(f"{port}*"))
    for link in (k for k in links if k.name == port or k.name.startswith(port + ".")):
        gbps = re.match(r"([\d.]+) Gbps", _read(link / "sata_spd"))
        if gbps:  # 8b/10b: 10 bits on the wire per byte
            per_s = float(gbps.group(1)) * 1e8
            return Ceiling(per_s, f"{name} on a {gbps.group(1)} Gb/s SATA link")
    return None


def _network(sys_root: Path, fs_type: str) -> Ceiling:
    total = 0.0
    names = []
    for interface in sorted((sys_root / "class" / "net").glob("*")):
        if interface.name == "lo" or not (interface / "device").exists():
            continue  # loopback and virtual interfaces carry nothing off the node
        if _read(interface / "operstate") != "up":
            continue
        speed = _read(interface / "speed")
        if speed.lstrip("-").isdigit() and int(speed) > 0:
            total += int(speed) * 1e6 / 8
            names.append(f"{interface.name} {int(speed) / 1000:g} Gb/s")
    if not total:
        return Ceiling(None, f"{fs_type}: the network interfaces' speed is unknown")
    return Ceiling(total, f"{fs_type} over " + " + ".join(names))


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return ""
