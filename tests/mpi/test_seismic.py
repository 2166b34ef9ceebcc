"""The volume workload under real mpiexec, 4 ranks, every library with --verify; what it wrote
read back by the library opened fresh in this process and compared with the model; a changed
byte found by --verify."""

import json
import subprocess
import sys

import numpy as np
import pytest
from hpcio.workloads.seismic import velocity

pytestmark = pytest.mark.mpi

SHAPE = (50, 24, 40)  # 50 inlines: 13, 12, 13 and 12 per rank
VOLUME = "x".join(map(str, SHAPE))
LIBRARIES = [("segy",), ("hdf5",), ("hdf5", "--collective"), ("zarr", "--chunk", "5x12x40"),
             ("zarr", "--compression", "blosc", "--chunk", "5x24x20")]  # fmt: skip


def run(hpcio, file_url, target_dir, *more, ranks=4):
    workload = () if "--workload" in more else ("--workload", "volume")
    return hpcio("run", "-n", ranks, *workload, "--volume", VOLUME,
                 "--target", file_url(target_dir), "-q", *more)  # fmt: skip


def model(data="velocity", seed=1):
    return velocity.slab(data, seed, SHAPE, 0, SHAPE[0])


def read_back(library, target_dir):
    """The volume as the library itself reads it, opened fresh."""
    if library == "segy":
        import segyio

        with segyio.open(target_dir / "hpcio-volume.segy", ignore_geometry=True) as f:
            inlines = f.attributes(segyio.TraceField.INLINE_3D)[:]
            crosslines = f.attributes(segyio.TraceField.CROSSLINE_3D)[:]
            assert list(inlines[:: SHAPE[1]]) == list(range(1, SHAPE[0] + 1))
            assert list(crosslines[: SHAPE[1]]) == list(range(1, SHAPE[1] + 1))
            assert f.bin[segyio.BinField.Samples] == SHAPE[2]
            return f.trace.raw[:].reshape(SHAPE)
    if library == "hdf5":
        # In a child: this h5py is parallel, and importing it starts MPI in pytest's own
        # process, which then makes later tests' mpiexec fail.
        copy = target_dir.parent / "velocity.npy"
        script = ("import h5py, numpy, sys\n"
                  "with h5py.File(sys.argv[1], 'r') as f:\n"
                  "    numpy.save(sys.argv[2], f['velocity'][...])\n")  # fmt: skip
        subprocess.run([sys.executable, "-c", script, target_dir / "hpcio-volume.h5", copy],
                       check=True, timeout=120)  # fmt: skip
        return np.load(copy)
    import zarr

    return zarr.open_array(str(target_dir / "hpcio-volume.zarr"), mode="r")[...]


@pytest.mark.parametrize("library", LIBRARIES, ids=" ".join)
def test_every_library_writes_the_model(hpcio, file_url, target_dir, tmp_path, library):
    out = tmp_path / "r.jsonl"
    done = run(hpcio, file_url, target_dir, "--library", *library, "--verify", "--keep",
               "--seed", 3, "-o", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    np.testing.assert_array_equal(read_back(library[0], target_dir), model(seed=3))
    doc = json.loads(out.read_text())
    write, read = doc["phases"]
    raw = np.prod(SHAPE) * 4
    assert write["metrics"]["raw_bytes"] == read["metrics"]["raw_bytes"] == raw
    # Bandwidths count samples in every library (not SEG-Y's headers): they compare.
    assert write["bytes_total"] == read["bytes_total"] == raw
    assert write["errors"] == read["errors"] == 0
    assert {r["rank"] for r in write["per_rank"]} == {0, 1, 2, 3}
    stored = write["metrics"]["stored_bytes"]
    if library[0] == "zarr":
        chunks = 10 * 2  # 5x12x40 and 5x24x20 both cut the volume in 20
        assert write["metrics"]["chunks"] == read["metrics"]["chunks"] == chunks
        assert write["requests"]["write"] == chunks
        # On file:// the store's calls are file I/O, in the phase's own requests; no billing.
        assert not [name for name in write["metrics"] if name.startswith("requests_")]
        assert read["metrics"]["read_amplification"] > 0
    else:
        assert write["metrics"]["files"] == 1
        files = {"segy": "hpcio-volume.segy", "hdf5": "hpcio-volume.h5"}
        assert stored == (target_dir / files[library[0]]).stat().st_size
    if "blosc" in library:
        assert write["metrics"]["compression_ratio"] > 20  # the layered model compresses
    else:
        assert write["metrics"]["compression_ratio"] <= 1.0


def test_random_data_does_not_compress(hpcio, file_url, target_dir, tmp_path):
    out = tmp_path / "r.jsonl"
    done = run(hpcio, file_url, target_dir, "--library", "zarr", "--compression", "blosc",
               "--data", "random", "--verify", "--keep", "-o", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    np.testing.assert_array_equal(read_back("zarr", target_dir), model("random"))
    assert json.loads(out.read_text())["phases"][0]["metrics"]["compression_ratio"] < 1.5


def test_the_run_removes_all_it_wrote(hpcio, file_url, target_dir):
    for library in LIBRARIES:
        done = run(hpcio, file_url, target_dir, "--library", *library)
        assert done.returncode == 0, done.stderr
        assert list(target_dir.iterdir()) == [], library


def flip(path, offset):
    with open(path, "r+b") as f:
        f.seek(offset)
        byte = f.read(1)[0]
        f.seek(offset)
        f.write(bytes([byte ^ 0x5A]))


@pytest.mark.parametrize(
    ("library", "key", "offset", "rank", "message"),
    [
        # Sample 3 of trace 1 of inline 20 (rank 1's): after the 3600-byte file header.
        (("segy",), "hpcio-volume.segy", 3600 + (20 * 24 + 1) * 400 + 240 + 3 * 4 + 2, 1,
         "verify failed: hpcio-volume.segy at x=20, y=1, z=3: expected "),
        (("hdf5",), "hpcio-volume.h5", None, 3, "verify failed: hpcio-volume.h5 at x=4"),
        (("zarr", "--chunk", "5x12x40"), "hpcio-volume.zarr/c/9/1/0", 1000, 3,
         "verify failed: hpcio-volume.zarr at x=45, y=18, z=10: expected "),
        (("zarr", "--compression", "blosc"), "hpcio-volume.zarr/c/0/0/0", 200, 0,
         "hpcio-volume.zarr chunk at x=0, y=0, z=0: cannot decode"),
    ],
)  # fmt: skip
def test_a_changed_byte_is_found(hpcio, file_url, target_dir, library, key, offset, rank,
                                 message):  # fmt: skip
    done = run(hpcio, file_url, target_dir, "--library", *library, "--phases", "write", "--keep")
    assert done.returncode == 0, done.stderr
    if offset is None:  # the dataset's last bytes: the last sample of rank 3's last inline
        offset = (target_dir / key).stat().st_size - 2
        message = "verify failed: hpcio-volume.h5 at x=49, y=23, z=39: expected "
    flip(target_dir / key, offset)
    unchecked = run(hpcio, file_url, target_dir, "--library", *library, "--phases", "read")
    if "cannot decode" in message:  # no reader gets data out of a broken compressed chunk
        assert unchecked.returncode == 1
    else:  # without --verify nothing compares
        assert unchecked.returncode == 0, unchecked.stderr
    done = run(hpcio, file_url, target_dir, "--library", *library, "--phases", "read",
               "--verify")  # fmt: skip
    assert done.returncode == 1
    assert f"rank {rank}: {message}" in done.stderr
    assert "Traceback" not in done.stderr


def test_report_compares_the_libraries_in_one_table(hpcio, file_url, target_dir, tmp_path):
    out = tmp_path / "r.jsonl"
    for library in (("segy",), ("zarr", "--compression", "blosc", "--chunk", "5x24x40")):
        done = run(hpcio, file_url, target_dir, "--library", *library, "-o", out, ranks=2)
        assert done.returncode == 0, done.stderr
    report = hpcio("report", out)
    assert report.returncode == 0, report.stderr
    assert "### volume segy write" in report.stdout  # the study tables name the library
    table = report.stdout.split("### libraries: write phase (volume: the create) and read phase")[1]
    rows = [line.split(" | ") for line in table.splitlines() if line.startswith("| volume")]
    assert [r[0] for r in rows] == ["| volume segy", "| volume zarr(blosc)"]
    url = file_url(target_dir)
    segy = rows[0]
    assert segy[1:4] == [url, "2", VOLUME]
    raw_mib = np.prod(SHAPE) * 4 / 2**20
    assert float(segy[5]) == round(raw_mib, 2)
    assert float(segy[4]) == round((3600 + 50 * 24 * (240 + 160)) / 2**20, 2)
    assert float(rows[1][6]) > 20  # raw/stored: the model compressed


@pytest.mark.parametrize("library", ["segy", "hdf5", "zarr"])
def test_imaging_reads_its_slab_and_shot_then_writes_its_image(
    hpcio, file_url, target_dir, tmp_path, library
):
    out = tmp_path / "r.jsonl"
    done = run(hpcio, file_url, target_dir, "--workload", "imaging", "--library", library,
               "--shot-size", "100KiB", "--image-size", "300KiB", "--verify", "-i", 2,
               "-o", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    assert [p["phase"] for p in doc["phases"]] == ["read", "write"] * 2
    trace = SHAPE[2] * 4  # 160 bytes: files are whole traces
    shot, image = -(-100 * 1024 // trace) * trace, -(-300 * 1024 // trace) * trace
    for phase in doc["phases"]:
        raw = np.prod(SHAPE) * 4 + 4 * shot if phase["phase"] == "read" else 4 * image
        assert phase["metrics"]["raw_bytes"] == raw
        assert phase["errors"] == 0
    assert list(target_dir.iterdir()) == []  # volume, shots and images removed
    # The library table's Step I/O (s): one shot's read plus its write, mean over iterations.
    report = hpcio("report", out)
    assert report.returncode == 0, report.stderr
    table = report.stdout.split("### libraries: ")[1]
    header = next(line for line in table.splitlines() if line.startswith("| Library"))
    (row,) = [line for line in table.splitlines() if line.startswith("| imaging")]
    cells = dict(zip(header.strip("| ").split(" | "), row.strip("| ").split(" | "), strict=True))
    means = {p: np.mean([x["phase_time_s"] for x in doc["phases"] if x["phase"] == p])
             for p in ("read", "write")}  # fmt: skip
    assert float(cells["Step I/O (s)"]) == pytest.approx(means["read"] + means["write"], abs=2e-3)


def test_imaging_finds_a_changed_shot_file(hpcio, file_url, target_dir):
    args = ("--workload", "imaging", "--library", "hdf5", "--shot-size", "100KiB",
            "--image-size", "100KiB")  # fmt: skip
    done = run(hpcio, file_url, target_dir, *args, "--keep")
    assert done.returncode == 0, done.stderr
    flip(target_dir / "hpcio-shot-rank000002.h5", (target_dir / "hpcio-shot-rank000002.h5")
         .stat().st_size - 3)  # fmt: skip
    done = run(hpcio, file_url, target_dir, *args, "--phases", "read", "--verify")
    assert done.returncode == 1
    assert "rank 2: verify failed: hpcio-shot-rank000002.h5 at trace 639, sample 39" in done.stderr


def test_clean_removes_a_kept_zarr_array_and_nothing_else(hpcio, file_url, target_dir):
    done = run(hpcio, file_url, target_dir, "--library", "zarr", "--keep", ranks=2)
    assert done.returncode == 0, done.stderr
    (target_dir / "theirs.zarr").mkdir()
    (target_dir / "theirs.zarr" / "zarr.json").write_text("{}")
    cleaned = hpcio("clean", "--target", file_url(target_dir))
    assert cleaned.returncode == 0, cleaned.stderr
    assert "deleted hpcio-volume.zarr/zarr.json" in cleaned.stdout
    assert sorted(p.name for p in target_dir.iterdir()) == ["theirs.zarr"]
